// `minic bench MODEL`: how long a model takes to run, measured many times. Course module 1.
//
// Steps: import the model (or parse and type a .mgraph file), run the graph passes and (for
// the llvm backend) compile it, with the --records schedules if given, timing both (the
// compile time); fill the inputs
// not given with random numbers; run it --warmup times untimed, then --repeat times,
// timing each run alone with a monotonic clock; print the median, mean, min, p90 and p99
// latency, the configuration and the process's peak resident memory, and with --json write
// all of it, every sample included, to a file.
//
// The timing and the statistics are include/minic/runtime/latency.h's, which says why
// these statistics.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "backend.h"
#include "commands.h"
#include "common_options.h"
#include "graph_input.h"
#include "run_inputs.h"

#include "minic/driver/compile.h"
#include "minic/frontend/onnx.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/latency.h"
#include "minic/runtime/tensor_io.h"
#include "minic/support/error.h"
#include "minic/support/file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

namespace minic::cli {
namespace {

struct BenchOptions {
  std::string model;
  std::string backend = "llvm";
  CommonOptions common;             // --passes, --threads, --records, --input-shape, --target
  std::vector<std::string> inputs;  // "NAME=PATH" or "PATH"
  int warmup = 2;
  int repeat = 10;
  uint64_t seed = 0;
  std::string json_file;
};

using runtime::LatencyStats;

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  auto now = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(now - start).count();
}

// The number of threads the backend runs on, and a note for the configuration table.
int threads_used(const BenchOptions& options) {
  if (options.backend == "interp") return 1;
  return options.common.threads > 0 ? options.common.threads
                                    : static_cast<int>(std::thread::hardware_concurrency());
}

std::string threads_note(const BenchOptions& options) {
  if (options.backend == "interp") return "1 (the interpreter is single-threaded)";
  return fmt::format("{}{}", threads_used(options),
                     options.common.threads == 0 ? " (every core)" : "");
}

void check_options(const BenchOptions& options) {
  if (std::find(kBackends.begin(), kBackends.end(), options.backend) == kBackends.end()) {
    fail("unknown backend '{}' (available: {})", options.backend, fmt::join(kBackends, ", "));
  }
  if (std::filesystem::is_directory(options.model) && !is_compiled_model_dir(options.model)) {
    fail("{} is a directory but not one `minic compile` wrote (it has no minic_model.json)",
         options.model);
  }
  if (options.warmup < 0) fail("--warmup {}: must be 0 or more", options.warmup);
  if (options.repeat < 1) fail("--repeat {}: must be 1 or more", options.repeat);
  if (options.common.threads < 0) {
    fail("--threads {}: must be 0 (every core) or more", options.common.threads);
  }
  if (is_compiled_model_dir(options.model)) {
    check_no_records_for_compiled_dir(options.common.records, options.model);
  }
}

nlohmann::ordered_json bench_json(const BenchOptions& options, const PreparedModel& model,
                                  double import_ms, double passes_ms,
                                  const std::vector<double>& samples, const LatencyStats& stats,
                                  double rss_mb) {
  nlohmann::ordered_json json;
  json["model"] = options.model;
  json["backend"] = options.backend;
  json["passes"] = options.common.passes;
  json["threads"] = threads_used(options);
  json["warmup"] = options.warmup;
  json["repeat"] = options.repeat;
  json["seed"] = options.seed;
  if (model.compiled()) json["target"] = model.compiled()->target().str();
  if (!options.common.records.empty()) json["records"] = options.common.records;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const Value* input : model.graph().inputs()) {
    inputs.push_back({{"name", input->name()}, {"type", type_string(input->type)}});
  }
  json["inputs"] = inputs;
  json["compile_ms"] = import_ms + passes_ms;
  json["import_ms"] = import_ms;
  json["passes_ms"] = passes_ms;
  json["median_ms"] = stats.median;
  json["mean_ms"] = stats.mean;
  json["min_ms"] = stats.min;
  json["max_ms"] = stats.max;
  json["p90_ms"] = stats.p90;
  json["p99_ms"] = stats.p99;
  json["peak_rss_mb"] = rss_mb;
  json["samples_ms"] = samples;
  return json;
}

// The model compiled (or loaded), with the inputs given by --input, and the time each part
// of compiling took.
struct BenchModel {
  std::unique_ptr<PreparedModel> model;
  std::map<std::string, Tensor> given_inputs;
  size_t num_passes = 0;
  double import_ms = 0;
  double passes_ms = 0;  // passes and code generation (or loading a compiled directory)
};

// Import (with the given inputs and shapes), or for a .mgraph file parsing and typing, then
// graph passes, and for llvm compiling. Reading the --input files is not compiling, so its
// time is left out.
BenchModel prepare_bench_model(const BenchOptions& options) {
  BenchModel bench;
  std::vector<std::string> passes = parse_pass_list(options.common.passes);
  bench.num_passes = passes.size();
  const BackendOptions backend{options.backend,         passes,
                               options.common.threads, options.common.records,
                               options.common.parsed_target(), options.common.emulate,
                               options.common.backend_list()};
  auto import_start = std::chrono::steady_clock::now();
  if (options.model.ends_with(".mgraph")) {
    check_no_input_shapes_for_graph_text(options.model, options.common.input_shapes);
    Graph graph = read_graph_file(options.model, {});
    bench.import_ms = milliseconds_since(import_start);
    bench.given_inputs = read_input_files(options.inputs, graph_input_infos(graph));
    auto prepare_start = std::chrono::steady_clock::now();
    bench.model = std::make_unique<PreparedModel>(std::move(graph), backend);
    bench.passes_ms = milliseconds_since(prepare_start);
    return bench;
  }
  const bool compiled_dir = is_compiled_model_dir(options.model);
  const std::string onnx_file = compiled_dir ? options.model + "/model.onnx" : options.model;
  OnnxModelSummary summary = summarize_onnx(onnx_file);
  OnnxImportOptions import_options;
  auto read_start = std::chrono::steady_clock::now();
  import_options.known_inputs = read_input_files(options.inputs, summary.inputs);
  double read_ms = milliseconds_since(read_start);
  import_options.input_shapes = parse_input_shapes(options.common.input_shapes, summary.inputs);
  check_inputs_are_sized(onnx_file, summary.inputs, import_options.known_inputs,
                         import_options.input_shapes);
  if (compiled_dir) {
    // Loading the compiled kernels; the import and passes inside count as compile time.
    bench.model = std::make_unique<PreparedModel>(options.model, options.common.threads);
    bench.passes_ms = bench.model->compile_ms();
    bench.given_inputs = std::move(import_options.known_inputs);
    return bench;
  }
  Graph graph = import_onnx(onnx_file, import_options);
  bench.import_ms = milliseconds_since(import_start) - read_ms;
  bench.given_inputs = std::move(import_options.known_inputs);
  auto prepare_start = std::chrono::steady_clock::now();
  bench.model = std::make_unique<PreparedModel>(std::move(graph), backend);
  bench.passes_ms = milliseconds_since(prepare_start);
  return bench;
}

// The model's inputs: the given ones, and random numbers for the others.
std::vector<Tensor> bench_inputs(const BenchModel& bench, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<Tensor> inputs;
  for (const Value* input : bench.model->graph().inputs()) {
    auto given = bench.given_inputs.find(input->name());
    inputs.push_back(given != bench.given_inputs.end()
                         ? given->second
                         : fill_tensor(input->type, Fill::random, random));
  }
  return inputs;
}

void print_bench(const BenchOptions& options, const BenchModel& bench,
                 const LatencyStats& stats, double rss_mb) {
  const PreparedModel& model = *bench.model;
  fmt::print("bench {}\n", options.model);
  fmt::print("  backend  {}\n", model.describe());
  if (!model.describe_records().empty()) fmt::print("  {}\n", model.describe_records());
  fmt::print("  passes   {} ({} passes)\n", options.common.passes, bench.num_passes);
  fmt::print("  threads  {}\n", threads_note(options));
  if (model.compiled()) fmt::print("  target   {}\n", model.compiled()->target().str());
  fmt::print("  warmup   {}\n  repeat   {}\n  seed     {}\n", options.warmup, options.repeat,
             options.seed);
  for (const Value* input : model.graph().inputs()) {
    bool given = bench.given_inputs.count(input->name()) != 0;
    fmt::print("  input    {}: {} ({})\n", input->name(), type_string(input->type),
               given ? "given" : "random");
  }
  fmt::print("compile    {:.3f} ms (import {:.3f} ms, passes and code generation {:.3f} ms)\n",
             bench.import_ms + bench.passes_ms, bench.import_ms, bench.passes_ms);
  fmt::print("latency ms {:>10} {:>10} {:>10} {:>10} {:>10}\n", "median", "mean", "min", "p90",
             "p99");
  fmt::print("           {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", stats.median,
             stats.mean, stats.min, stats.p90, stats.p99);
  fmt::print("peak RSS   {:.1f} MB\n", rss_mb);
}

int bench_model(const BenchOptions& options) {
  check_options(options);
  BenchModel bench = prepare_bench_model(options);
  std::vector<Tensor> inputs = bench_inputs(bench, options.seed);
  std::vector<double> samples = runtime::time_runs(
      [&] { bench.model->run(inputs); }, options.warmup, options.repeat);
  LatencyStats stats = runtime::summarize_latencies(samples);
  double rss_mb = runtime::peak_rss_mb();
  print_bench(options, bench, stats, rss_mb);
  if (!options.json_file.empty()) {
    nlohmann::ordered_json json = bench_json(options, *bench.model, bench.import_ms,
                                             bench.passes_ms, samples, stats, rss_mb);
    write_file(options.json_file, json.dump(2) + "\n");
    fmt::print("wrote {}\n", options.json_file);
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* command = app.add_subcommand(
      "bench", "Time a model: median, mean, min, p90 and p99 latency over repeated runs");
  command
      ->add_option("model", options->model,
                   "The ONNX model file, a graph in the text form (.mgraph), or a directory "
                   "written by minic compile")
      ->required();
  command
      ->add_option("--backend", options->backend,
                   "How to run it: llvm (compiled to native code) or interp (the reference "
                   "interpreter)")
      ->capture_default_str()
      ->check(CLI::IsMember(kBackends));
  command->add_option("--warmup", options->warmup, "Untimed runs before the timed ones")
      ->capture_default_str();
  command->add_option("--repeat", options->repeat, "Timed runs")->capture_default_str();
  command
      ->add_option("--input", options->inputs,
                   "An input from a .npy or TensorProto .pb file: NAME=PATH, or PATH for the "
                   "next input not named (repeatable); the others are random")
      ->allow_extra_args(false);
  add_common_options(command, options->common,
                     {CommonOption::passes, CommonOption::threads, CommonOption::records,
                      CommonOption::input_shape, CommonOption::target, CommonOption::emulate,
                      CommonOption::custom_ops, CommonOption::backends});
  command->add_option("--seed", options->seed, "Seed for the random inputs")
      ->capture_default_str()
      ->check(non_negative());
  command->add_option("--json", options->json_file,
                      "Write the results (configuration, statistics, every sample) to FILE");
  return {command, [options] { return bench_model(*options); }};
}

}  // namespace minic::cli
