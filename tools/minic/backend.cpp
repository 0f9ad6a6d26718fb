// Preparing a model for the chosen backend. Course module 1.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "backend.h"

#include "minic/passes/pass_manager.h"
#include "minic/runtime/interpreter.h"
#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace minic::cli {

const std::vector<std::string> kBackends = {"llvm", "interp"};

namespace {

// "512 B", "3.5 KiB", "6.9 MiB".
std::string human_bytes(int64_t bytes) {
  constexpr double kKiB = 1024.0;
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / kKiB);
  return fmt::format("{:.1f} MiB", bytes / (kKiB * kKiB));
}

}  // namespace

std::string records_summary(const CompileStats& stats) {
  if (stats.records.empty()) return "";
  std::string line = fmt::format("records: {} of {} kernels tuned ({})", stats.tuned_kernels,
                                 stats.compiled_kernels, stats.records);
  if (stats.failed_records > 0) {
    line += fmt::format("; {} {} not replay (default schedule instead)", stats.failed_records,
                        stats.failed_records == 1 ? "record did" : "records did");
  }
  return line;
}

void check_no_records_for_compiled_dir(const std::string& records, const std::string& dir) {
  if (records.empty()) return;
  fail("--records {}: {} is compiled already; give the records to `minic compile` instead",
       records, dir);
}

PreparedModel::PreparedModel(Graph graph, const BackendOptions& options) : options_(options) {
  if (std::find(kBackends.begin(), kBackends.end(), options.backend) == kBackends.end()) {
    fail("unknown backend '{}' (available: {})", options.backend, fmt::join(kBackends, ", "));
  }
  if (options.backend == "interp" && !options.backends.empty()) {
    fail("--backends {}: external back ends compile parts of a model beside minic's kernels; "
         "the interpreter compiles nothing (use --backend llvm)",
         fmt::join(options.backends, ","));
  }
  if (options.backend == "interp" && !options.records.empty()) {
    fail("--records {}: tuning records schedule compiled kernels; the interpreter has none "
         "(use --backend llvm)",
         options.records);
  }
  auto start = std::chrono::steady_clock::now();
  if (options.backend == "interp") {
    run_passes(graph, options.passes, options.target);
    graph_ = std::move(graph);
  } else {
    CompileOptions compile_options;
    compile_options.target = options.target;
    compile_options.graph_passes = options.passes;
    compile_options.threads = options.threads;
    compile_options.records = options.records;
    compile_options.emulate = options.emulate;
    compile_options.backends = options.backends;
    compiled_ = compile_model(std::move(graph), compile_options);
  }
  compile_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

PreparedModel::PreparedModel(const std::string& compiled_dir, int threads) {
  options_.threads = threads;
  auto start = std::chrono::steady_clock::now();
  compiled_ = load_compiled_model(compiled_dir, threads);
  compile_ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

const Graph& PreparedModel::graph() const { return compiled_ ? compiled_->graph() : graph_; }

std::vector<Tensor> PreparedModel::run(const std::vector<Tensor>& inputs,
                                       std::vector<runtime::StepProfile>* profile) {
  if (compiled_) return compiled_->run(inputs, profile);
  return interpret(graph_, inputs);
}

std::string PreparedModel::describe_records() const {
  return compiled_ ? records_summary(compiled_->stats()) : "";
}

std::string PreparedModel::describe() const {
  if (!compiled_) return "interp: the reference interpreter, one thread";
  const CompileStats& stats = compiled_->stats();
  const Target& target = compiled_->target();
  std::string what = target.is_cuda() ? target.str() + (options_.emulate ? " (emulated)" : "")
                                       : "llvm";
  std::string line = fmt::format("{}: {} kernels ({} compiled", what, stats.kernels,
                                 stats.compiled_kernels);
  if (stats.functions < stats.compiled_kernels) {
    line += fmt::format(" as {} function{}", stats.functions, stats.functions == 1 ? "" : "s");
  }
  int reference = stats.kernels - stats.compiled_kernels;
  for (const auto& [backend, count] : stats.backend_kernels) {
    line += fmt::format(", {} by {}", count, backend);
    reference -= count;
  }
  if (reference > 0) {
    line += fmt::format(", {} reference: {}", reference, fmt::join(stats.reference_ops, ", "));
  }
  const MemoryPlan& memory = compiled_->plan().memory;
  return line + fmt::format("); intermediates in a {} arena ({} without reuse)",
                            human_bytes(memory.arena_bytes), human_bytes(memory.unshared_bytes));
}

}  // namespace minic::cli
