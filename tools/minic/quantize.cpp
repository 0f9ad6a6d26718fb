// `minic quantize MODEL.onnx -o OUT.onnx`: post-training quantisation into a QDQ model.
// Course module 7.
//
// Calibration inputs come from a folder (--calibrate DIR: one subfolder per input set,
// holding input_K.pb / input_K.npy files in graph-input order, or NAME.npy) or are random
// (--calibrate-random N). quantize_graph (include/minic/quantize/quantize.h) chooses the
// parameters, with the model compiled to run the calibration; the QDQ graph is written
// with the ONNX exporter. Then the report: per quantised tensor its range, scale, zero
// point and the error it introduces, and at the end the accuracy of the written model
// against the float one on held-out random inputs (max abs error, cosine similarity, and
// for a classifier how often the top class is the same).
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "commands.h"
#include "run_inputs.h"

#include "minic/driver/compile.h"
#include "minic/frontend/onnx.h"
#include "minic/passes/pass_manager.h"
#include "minic/quantize/calibration.h"
#include "minic/quantize/quantize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <random>

namespace minic::cli {
namespace {

namespace fs = std::filesystem;

struct QuantizeCommandOptions {
  std::string model;
  std::string output;
  std::string calibrate;
  int calibrate_random = 16;
  int held_out = 8;
  std::string method = "minmax";
  double percentile = 99.99;
  bool per_channel = false;
  std::vector<std::string> exclude;
  int threads = 0;
  uint64_t seed = 0;
};

// One random input set for `graph` (uniform in [-1, 1) for floats, 0..2 for integers).
std::vector<Tensor> random_inputs(const Graph& graph, std::mt19937_64& random) {
  std::vector<Tensor> inputs;
  for (const Value* input : graph.inputs()) {
    inputs.push_back(fill_tensor(input->type, Fill::random, random));
  }
  return inputs;
}

// The input sets of --calibrate DIR: one per subfolder, in name order.
std::vector<std::vector<Tensor>> folder_inputs(const std::string& folder, const Graph& graph,
                                               const std::vector<OnnxValueInfo>& infos) {
  if (!fs::is_directory(folder)) fail("--calibrate: '{}' is not a folder", folder);
  std::vector<fs::path> sets;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    if (entry.is_directory()) sets.push_back(entry.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) fail("--calibrate: '{}' has no subfolder of inputs", folder);
  std::vector<std::vector<Tensor>> inputs;
  for (const fs::path& set : sets) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(set)) {
      std::string extension = entry.path().extension().string();
      if (extension == ".pb" || extension == ".npy") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> arguments;
    for (const fs::path& file : files) {
      std::string stem = file.stem().string();
      arguments.push_back(stem.rfind("input_", 0) == 0 ? file.string()
                                                        : stem + "=" + file.string());
    }
    std::map<std::string, Tensor> bound = read_input_files(arguments, infos);
    std::vector<Tensor> one;
    for (const Value* input : graph.inputs()) {
      auto it = bound.find(input->name());
      if (it == bound.end()) fail("--calibrate: {} has no file for input '{}'", set.string(),
                                  input->name());
      one.push_back(it->second);
    }
    inputs.push_back(std::move(one));
  }
  return inputs;
}

// How close the quantised model's outputs are to the float model's, over `sets`.
void print_accuracy(const Graph& float_graph, const std::string& quantized_path,
                    const std::vector<std::vector<Tensor>>& sets, int threads) {
  CompileOptions options;
  options.threads = threads;
  std::unique_ptr<CompiledModel> reference = compile_model(std::move(*float_graph.clone()),
                                                           options);
  std::unique_ptr<CompiledModel> quantized = compile_model(import_onnx(quantized_path), options);
  double worst = 0, dot = 0, norm_a = 0, norm_b = 0;
  int64_t rows = 0, same_class = 0;
  for (const std::vector<Tensor>& inputs : sets) {
    std::vector<Tensor> a = reference->run(inputs);
    std::vector<Tensor> b = quantized->run(inputs);
    for (size_t k = 0; k < a.size(); ++k) {
      std::vector<double> x = a[k].to_double_vector();
      std::vector<double> y = b[k].to_double_vector();
      for (size_t i = 0; i < x.size(); ++i) {
        worst = std::max(worst, std::fabs(x[i] - y[i]));
        dot += x[i] * y[i];
        norm_a += x[i] * x[i];
        norm_b += y[i] * y[i];
      }
    }
    // A classifier: output 0 is [N, classes]; compare each row's largest.
    const Shape& shape = a[0].shape();
    if (shape.size() == 2 && shape[1] > 1) {
      std::vector<double> x = a[0].to_double_vector();
      std::vector<double> y = b[0].to_double_vector();
      for (int64_t r = 0; r < shape[0]; ++r) {
        auto row = [&](const std::vector<double>& v) {
          auto begin = v.begin() + r * shape[1];
          return std::max_element(begin, begin + shape[1]) - begin;
        };
        same_class += row(x) == row(y) ? 1 : 0;
        ++rows;
      }
    }
  }
  double cosine = norm_a > 0 && norm_b > 0 ? dot / std::sqrt(norm_a * norm_b) : 1.0;
  fmt::print("accuracy on {} held-out random input{}: max abs error {:.4g}, cosine "
             "similarity {:.6f}",
             sets.size(), sets.size() == 1 ? "" : "s", worst, cosine);
  if (rows > 0) fmt::print(", top-1 agreement {}/{}", same_class, rows);
  fmt::print("\n");
}

int run_quantize(const QuantizeCommandOptions& options) {
  // QuantizeLinear begins at opset 10 and per-axis DequantizeLinear at 13: an older model
  // is converted by ONNX's version converter first. Weights that nodes compute (the light
  // models' ConstantOfShape) are folded into constants, so that they are quantised as
  // weights.
  check_calibration_method(options.method);
  OnnxModelSummary summary = summarize_onnx(options.model);
  OnnxImportOptions import;
  import.minimum_opset = options.per_channel ? 13 : 10;
  Graph graph = import_onnx(options.model, import);
  run_passes(graph, {"fold-constants"}, codegen::host_target());
  QuantizeOptions quantize;
  quantize.method = options.method;
  quantize.percentile = options.percentile;
  quantize.per_channel = options.per_channel;
  quantize.exclude = options.exclude;

  std::mt19937_64 random(options.seed);
  std::vector<std::vector<Tensor>> calibration;
  if (!options.calibrate.empty()) {
    calibration = folder_inputs(options.calibrate, graph, summary.inputs);
  } else {
    for (int i = 0; i < options.calibrate_random; ++i) {
      calibration.push_back(random_inputs(graph, random));
    }
  }
  // The calibration runs compiled: the runner gets the same graph for every input set, so
  // it compiles it once and keeps it.
  struct Compiled {
    const Graph* graph = nullptr;
    std::unique_ptr<CompiledModel> model;
  };
  auto compiled = std::make_shared<Compiled>();
  CompileOptions compile;
  compile.threads = options.threads;
  GraphRunner run = [compiled, compile](const Graph& g, const std::vector<Tensor>& inputs) {
    if (compiled->graph != &g) {
      compiled->model = compile_model(std::move(*g.clone()), compile);
      compiled->graph = &g;
    }
    return compiled->model->run(inputs);
  };
  QuantizeResult result = quantize_graph(graph, calibration, quantize, run);
  export_onnx(*result.graph, options.output);

  fmt::print("quantised {} ops of {} ({} calibration input{}, {}{}{}):\n", result.quantized_ops,
             options.model, calibration.size(), calibration.size() == 1 ? "" : "s",
             options.method,
             options.method == "percentile" ? fmt::format(" {}", options.percentile) : "",
             options.per_channel ? ", weights per channel" : "");
  if (graph.opset != summary.opset) {
    fmt::print("  note: the model's opset {} converted to {} (ONNX's version converter)\n",
               summary.opset, graph.opset);
  }
  for (const std::string& note : result.notes) fmt::print("  note: {}\n", note);
  fmt::print("  {:<44} {:<10} {:>22} {:>12} {:>5} {:>10}\n", "tensor", "kind", "range",
             "scale", "zero", "rel. error");
  for (const QuantizedTensor& t : result.tensors) {
    auto [low, high] = std::minmax_element(t.scales.begin(), t.scales.end());
    std::string scale = t.scales.size() == 1 ? fmt::format("{:.4g}", t.scales[0])
                                             : fmt::format("{:.2g}..{:.2g}", *low, *high);
    fmt::print("  {:<44} {:<10} {:>22} {:>12} {:>5} {:>10.4f}\n", t.name,
               t.weight ? "weight" : "activation", fmt::format("[{:.4g}, {:.4g}]", t.low, t.high),
               scale, t.zero_point, t.relative_error);
  }
  fmt::print("wrote {}\n", options.output);
  std::mt19937_64 held_out(options.seed + 1000);
  std::vector<std::vector<Tensor>> sets;
  for (int i = 0; i < options.held_out; ++i) sets.push_back(random_inputs(graph, held_out));
  if (!sets.empty()) print_accuracy(graph, options.output, sets, options.threads);
  return 0;
}

}  // namespace

Command add_quantize_command(CLI::App& app) {
  auto options = std::make_shared<QuantizeCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "quantize", "Quantise a float model to int8 (QDQ format) from calibration runs");
  sub->add_option("model", options->model, "The float ONNX model")->required();
  sub->add_option("-o,--output", options->output, "The QDQ ONNX model to write")->required();
  sub->add_option("--calibrate", options->calibrate,
                  "A folder with one subfolder per calibration input set (input_K.pb or "
                  "input_K.npy files in graph-input order, or NAME.npy)");
  sub->add_option("--calibrate-random", options->calibrate_random,
                  "Without --calibrate: this many random input sets")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  std::string methods;
  for (const CalibrationInfo* method : CalibrationRegistry::all()) {
    methods += fmt::format("{}{}: {}", methods.empty() ? "" : "; ", method->name,
                           method->summary);
  }
  sub->add_option("--method", options->method,
                  "How a range is taken from the calibration values: " + methods)
      ->capture_default_str();
  sub->add_option("--percentile", options->percentile, "The percentile method's percentile")
      ->check(CLI::Range(50.0, 100.0))
      ->capture_default_str();
  sub->add_flag("--per-channel", options->per_channel,
                "Weights with one scale per output channel (opset 13 or later)");
  sub->add_option("--exclude", options->exclude, "Ops to leave in float: Conv, MatMul, Gemm")
      ->delimiter(',');
  sub->add_option("--held-out", options->held_out,
                  "Random inputs the accuracy against the float model is measured on")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  sub->add_option("--threads", options->threads, "Threads of the compiled runs; 0: every core")
      ->capture_default_str();
  sub->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  return {sub, [options] { return run_quantize(*options); }};
}

}  // namespace minic::cli
