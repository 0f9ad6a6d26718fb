// compile_model: the pipeline from an imported graph to a runnable model, as one list of
// calls (the steps of include/minic/driver/compile.h). Course module 8.
#include "minic/driver/compile.h"

#include "execution_plan.h"
#include "shared_library.h"
#include "minic/autotune/database.h"
#include "minic/autotune/task.h"
#include "minic/codegen/llvm.h"
#include "minic/ops/lower.h"
#include "minic/passes/loop/registry.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/thread_pool.h"
#include "minic/schedule/rules.h"
#include "minic/schedule/schedule.h"
#include "minic/schedule/trace.h"
#include "minic/support/error.h"

#include <chrono>
#include <optional>
#include <set>

namespace minic {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Step 3 for one kernel: the schedule of the fastest record of its workload for `target`
// when there is one, else the default rules. A record whose trace does not replay (written
// by another version of minic, or edited by hand) is counted and passed over, so that a
// stale database never stops a model from compiling.
loop::PrimFunc schedule_kernel(loop::PrimFunc func, const autotune::Database* records,
                               const Target& target, CompileStats& stats) {
  if (records) {
    std::optional<autotune::TuningRecord> best =
        records->best(autotune::workload_key(func), target);
    if (best) {
      try {
        schedule::Schedule schedule(func);
        schedule.replay(schedule::parse_trace(best->trace, "the record of " + func.name));
        ++stats.tuned_kernels;
        return schedule.func();
      } catch (const Error&) {
        ++stats.failed_records;
      }
    }
  }
  return schedule::default_cpu_schedule(std::move(func), target);
}

}  // namespace

CompiledModel::CompiledModel(Graph graph, loop::LoopModule kernels,
                             std::unique_ptr<codegen::CompiledModule> code,
                             runtime::ExecutionPlan plan, CompileStats stats, Target target)
    : graph_(std::move(graph)),
      kernels_(std::move(kernels)),
      code_(std::move(code)),
      executor_(std::move(plan)),
      stats_(std::move(stats)),
      target_(std::move(target)) {}

CompiledModel::~CompiledModel() = default;

std::vector<Tensor> CompiledModel::run(const std::vector<Tensor>& inputs,
                                       std::vector<runtime::StepProfile>* profile) {
  if (!checked_target_) {
    codegen::check_runs_here(target_);
    checked_target_ = true;
  }
  return executor_.run(inputs, profile);
}

std::unique_ptr<CompiledModel> compile_model(Graph graph, const CompileOptions& options) {
  auto start = Clock::now();
  if (options.target.is_cuda()) {
    fail("target {}: the CUDA back end is not built yet", options.target.str());
  }
  CompileStats stats;
  runtime::set_global_thread_count(options.threads);

  // 1. Graph passes.
  run_passes(graph, options.graph_passes);

  // The tuning records, if any, read once for every kernel.
  std::optional<autotune::Database> records;
  if (!options.records.empty()) records = autotune::Database::load(options.records);
  stats.records = options.records;

  // 2-4. Lower, schedule and simplify every kernel that has compute rules.
  loop::LoopModule kernels;
  std::map<const Node*, std::string> kernel_of;
  std::set<std::string> names;
  std::set<std::string> reference_ops;
  for (const Node* node : graph.nodes()) {
    std::optional<loop::PrimFunc> lowered;
    if (can_lower(*node)) {
      try {
        lowered = lower_node(*node, graph.opset, options.target);
      } catch (const Error&) {
        // A form of the op its rule does not cover (MaxPool's Indices output, a
        // storage-only type): the reference kernel runs it.
      }
    }
    if (!lowered) {
      reference_ops.insert(node->op);
      continue;
    }
    loop::PrimFunc func = std::move(*lowered);
    // Two nodes may give the same name: make it unique.
    std::string name = func.name;
    for (int suffix = 1; names.count(name); ++suffix) name = fmt::format("{}_{}", func.name, suffix);
    func.name = name;
    names.insert(name);
    if (options.schedule) {
      func = schedule_kernel(std::move(func), records ? &*records : nullptr, options.target,
                             stats);
    }
    kernel_of[node] = name;
    kernels.functions.push_back(std::move(func));
  }
  loop::run_loop_passes(kernels, loop::default_loop_pipeline());

  // 5. Code generation.
  auto codegen_start = Clock::now();
  codegen::LlvmOptions llvm_options;
  llvm_options.target = options.target;
  llvm_options.opt_level = options.opt_level;
  llvm_options.fast_math = options.fast_math;
  // Only the arena is 64-byte aligned; inputs, outputs and constants are Tensors, whose
  // storage has the allocator's alignment. So the code may assume one element's alignment.
  llvm_options.param_alignment = 0;
  std::unique_ptr<codegen::CompiledModule> code;
  if (options.kernel_library.empty()) {
    code = codegen::compile_llvm(kernels, llvm_options);
  } else {
    std::vector<std::string> kernel_names;
    for (const loop::PrimFunc& func : kernels.functions) kernel_names.push_back(func.name);
    code = load_kernel_library(options.kernel_library, kernel_names);
  }
  stats.codegen_ms = ms_since(codegen_start);

  // 6. The execution plan.
  std::map<const Node*, runtime::PlanStep> steps;
  for (const Node* node : graph.nodes()) {
    runtime::PlanStep step;
    step.op = node->op;
    auto it = kernel_of.find(node);
    if (it != kernel_of.end()) {
      step.kernel = it->second;
      step.call = code->find(it->second);
      ++stats.compiled_kernels;
    } else {
      step.kernel = kernel_name(*node);
      step.compiled = false;
      step.call = reference_kernel_call(*node, graph.opset);
    }
    steps[node] = std::move(step);
  }
  runtime::ExecutionPlan plan = build_execution_plan(graph, steps);
  stats.kernels = static_cast<int>(plan.steps.size());
  stats.reference_ops.assign(reference_ops.begin(), reference_ops.end());
  stats.compile_ms = ms_since(start);
  return std::make_unique<CompiledModel>(std::move(graph), std::move(kernels), std::move(code),
                                         std::move(plan), std::move(stats), options.target);
}

}  // namespace minic
