// `minic run MODEL`: runs a model on given or generated inputs, prints, saves and checks
// its outputs. Course module 1.
//
// Steps: summarise the model to learn its inputs; read the --input files and bind them by
// name or position; import the model with those tensors as known inputs (an input that
// decides a shape is frozen into the graph) and the --input-shape sizes, or parse and type a
// .mgraph file (the graph in the text form, module 2); fill the inputs
// still open; prepare the chosen backend (with --records, kernels that have a tuning record
// get its schedule); run it, timing it; print each output; write them with --output-dir;
// compare them with --compare. Exit 1 if a comparison fails.
//
// Chapter: docs/module1-overview.md#the-driver-and-the-minic-tool
#include "commands.h"
#include "backend.h"
#include "common_options.h"
#include "graph_input.h"
#include "run_inputs.h"

#include "minic/driver/compile.h"
#include "minic/frontend/onnx.h"
#include "minic/passes/pass_manager.h"
#include "minic/runtime/compare.h"
#include "minic/runtime/interpreter.h"
#include "minic/runtime/tensor_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

namespace minic::cli {
namespace {

struct RunOptions {
  std::string model;
  std::string backend = "llvm";
  // --passes (empty: the backend's choice, passes_for), --threads, --records (llvm),
  // --input-shape, --target.
  CommonOptions common;
  bool profile = false;
  int warmup = 0;                         // untimed runs before the one timed and shown
  std::vector<std::string> inputs;        // "NAME=PATH" or "PATH"
  std::string fill = "random";            // "random", "zeros" or "ones"
  uint64_t seed = 0;
  std::string output_dir;
  std::vector<std::string> compare;       // a directory, or one file per output
  Tolerance tolerance{1e-3, 1e-5};
};

constexpr int kValuesShown = 6;

// The graph passes a backend runs when --passes is not given: the compiler needs the
// default pipeline (its fusion decides the kernels); the interpreter runs the model as
// imported.
std::vector<std::string> passes_for(const RunOptions& options) {
  if (!options.common.passes.empty()) return parse_pass_list(options.common.passes);
  return parse_pass_list(options.backend == "interp" ? "none" : "default");
}

// Prints the time of every step, slowest first, and the totals per op.
void print_profile(const std::vector<runtime::StepProfile>& profile) {
  std::vector<runtime::StepProfile> steps = profile;
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.milliseconds > b.milliseconds; });
  double total = 0;
  for (const auto& step : steps) total += step.milliseconds;
  fmt::print("profile: {} steps, {:.3f} ms in kernels\n", steps.size(), total);
  fmt::print("  {:>9} {:>6}  {:<9} {:<10} {}\n", "ms", "%", "how", "op", "kernel");
  for (const auto& step : steps) {
    const std::string how = !step.backend.empty() ? step.backend
                            : step.compiled       ? "compiled"
                                                  : "reference";
    fmt::print("  {:>9.3f} {:>5.1f}%  {:<9} {:<10} {}\n", step.milliseconds,
               total > 0 ? 100 * step.milliseconds / total : 0.0, how, step.op, step.kernel);
  }
}

// Prints one line per output and a summary; returns true if every output matches.
bool compare_outputs(const Graph& graph, const std::vector<Tensor>& outputs,
                     const std::vector<std::string>& expected_files, const Tolerance& tolerance) {
  int failures = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor expected = read_tensor_file(expected_files[k]);
    TensorComparison comparison = compare_tensors(outputs[k], expected, tolerance);
    if (!comparison.ok()) ++failures;
    fmt::print("compare {} with {}: {} ({})\n", graph.outputs()[k]->name(), expected_files[k],
               comparison.ok() ? "ok" : "MISMATCH", describe(comparison));
  }
  if (failures == 0) {
    fmt::print("all {} outputs match (rtol {}, atol {})\n", outputs.size(), tolerance.rtol,
               tolerance.atol);
  } else {
    fmt::print("{} of {} outputs differ (rtol {}, atol {})\n", failures, outputs.size(),
               tolerance.rtol, tolerance.atol);
  }
  return failures == 0;
}

// "llvm", "interp", or a CUDA target ("cuda -arch=sm_90 (emulated)").
std::string ran_with(const PreparedModel& model, const RunOptions& options) {
  const CompiledModel* compiled = model.compiled();
  if (!compiled || !compiled->target().is_cuda()) return options.backend;
  return compiled->target().str() + (options.common.emulate ? " (emulated)" : "");
}

// The model ready to run, and in `given` the --input tensors by input name. MODEL is a
// directory written by `minic compile` (the model and its compiled kernels), a .mgraph file
// (the graph in the text form, whose inputs' shapes are written in it), or an ONNX model,
// imported with the given tensors as known inputs and the --input-shape sizes.
std::unique_ptr<PreparedModel> prepare_model(const RunOptions& options,
                                             std::map<std::string, Tensor>& given) {
  const BackendOptions backend{options.backend,         passes_for(options),
                               options.common.threads, options.common.records,
                               options.common.parsed_target(), options.common.emulate,
                               options.common.backend_list()};
  if (options.model.ends_with(".mgraph")) {
    check_no_input_shapes_for_graph_text(options.model, options.common.input_shapes);
    Graph graph = read_graph_file(options.model, {});
    given = read_input_files(options.inputs, graph_input_infos(graph));
    return std::make_unique<PreparedModel>(std::move(graph), backend);
  }
  const bool compiled_dir = is_compiled_model_dir(options.model);
  const std::string onnx_file = compiled_dir ? options.model + "/model.onnx" : options.model;
  OnnxModelSummary summary = summarize_onnx(onnx_file);
  OnnxImportOptions import_options;
  import_options.known_inputs = read_input_files(options.inputs, summary.inputs);
  import_options.input_shapes = parse_input_shapes(options.common.input_shapes, summary.inputs);
  check_inputs_are_sized(onnx_file, summary.inputs, import_options.known_inputs,
                         import_options.input_shapes);
  given = import_options.known_inputs;
  if (compiled_dir) {
    check_no_records_for_compiled_dir(options.common.records, options.model);
    return std::make_unique<PreparedModel>(options.model, options.common.threads);
  }
  return std::make_unique<PreparedModel>(import_onnx(onnx_file, import_options), backend);
}

int run_model(const RunOptions& options) {
  if (std::find(kBackends.begin(), kBackends.end(), options.backend) == kBackends.end()) {
    fail("unknown backend '{}' (available: {})", options.backend, fmt::join(kBackends, ", "));
  }
  std::map<std::string, Tensor> given_inputs;
  std::unique_ptr<PreparedModel> prepared = prepare_model(options, given_inputs);
  PreparedModel& model = *prepared;
  const Graph& graph = model.graph();
  fmt::print("prepared {} in {:.1f} ms; {}\n", options.model, model.compile_ms(), model.describe());
  if (!model.describe_records().empty()) fmt::print("{}\n", model.describe_records());

  // Inputs frozen into constants are no longer graph inputs; the rest are given or filled.
  const Fill fill = options.fill == "zeros" ? Fill::zeros
                    : options.fill == "ones"  ? Fill::ones
                                              : Fill::random;
  std::mt19937_64 random(options.seed);
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    auto given = given_inputs.find(input->name());
    if (given != given_inputs.end()) {
      inputs.push_back(given->second);
    } else {
      inputs.push_back(fill_tensor(input->type, fill, random));
    }
  }

  // Untimed runs first: the timed one then finds its memory touched and its caches warm,
  // as in `minic bench`, so that a profile shows each kernel's steady time.
  for (int i = 0; i < options.warmup; ++i) model.run(inputs, nullptr);
  std::vector<runtime::StepProfile> profile;
  auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> outputs = model.run(inputs, options.profile ? &profile : nullptr);
  double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  fmt::print("ran {} with {} in {:.3f} ms{}\n", options.model, ran_with(model, options),
             milliseconds,
             options.warmup > 0 ? fmt::format(" (after {} untimed run{})", options.warmup,
                                              options.warmup == 1 ? "" : "s")
                                : "");
  if (options.profile) {
    if (model.compiled()) {
      print_profile(profile);
      for (const std::string& report : model.compiled()->backend_reports()) {
        fmt::print("{}\n", report);
      }
    } else {
      fmt::print("profile: the interpreter has no per-kernel profile; use --backend llvm\n");
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    fmt::print("{}: {} = {}\n", graph.outputs()[k]->name(), type_string(outputs[k].type()),
               preview_values(outputs[k], kValuesShown));
  }

  if (!options.output_dir.empty()) {
    std::filesystem::create_directories(options.output_dir);
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::string path =
          (std::filesystem::path(options.output_dir) / fmt::format("output_{}.npy", k)).string();
      write_npy(path, outputs[k]);
      fmt::print("wrote {}\n", path);
    }
  }

  if (options.compare.empty()) return 0;
  std::vector<std::string> expected_files = expected_output_files(options.compare, outputs.size());
  return compare_outputs(graph, outputs, expected_files, options.tolerance) ? 0 : 1;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a model on given or random inputs; print, save or check its outputs");
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
  command->add_flag("--profile", options->profile,
                    "Print the time of every kernel of the run (llvm)");
  command
      ->add_option("--warmup", options->warmup,
                   "Untimed runs before the one timed (and profiled): a first run also pays "
                   "for touching its memory")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command
      ->add_option("--input", options->inputs,
                   "An input from a .npy or TensorProto .pb file: NAME=PATH, or PATH for the "
                   "next input not named (repeatable)")
      ->allow_extra_args(false);
  options->common.passes = "";  // the backend's choice
  add_common_options(command, options->common,
                     {CommonOption::passes, CommonOption::threads, CommonOption::records,
                      CommonOption::input_shape, CommonOption::target, CommonOption::emulate,
                      CommonOption::custom_ops, CommonOption::backends});
  command
      ->add_option("--fill", options->fill,
                   "How to fill inputs not given: random (uniform in [-1,1) for floats, 0..2 "
                   "for integers, false/true for bool), zeros or ones")
      ->capture_default_str()
      ->check(CLI::IsMember({"random", "zeros", "ones"}));
  command->add_option("--seed", options->seed, "Seed for --fill random")->capture_default_str()
      ->check(non_negative());
  command->add_option("--output-dir", options->output_dir,
                      "Write the outputs to DIR/output_K.npy, in graph-output order");
  command->add_option("--compare", options->compare,
                      "Check the outputs against a directory of output_K.pb or output_K.npy "
                      "files, or against one file per output in order; exit 1 on a mismatch");
  command->add_option("--rtol", options->tolerance.rtol, "Relative tolerance for --compare")
      ->capture_default_str()
      ->check(non_negative());
  command->add_option("--atol", options->tolerance.atol, "Absolute tolerance for --compare")
      ->capture_default_str()
      ->check(non_negative());
  return {command, [options] { return run_model(*options); }};
}

}  // namespace minic::cli
