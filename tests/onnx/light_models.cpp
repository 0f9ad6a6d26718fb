// minic-conformance light-models: the nine light CNNs on arange inputs. See conformance.h.
#include "conformance.h"

#include <algorithm>
#include <map>

namespace conformance {
namespace {

// The light models' input: arange(n) / n in float32, as ONNX computed their outputs.
Tensor arange_input(const OnnxValueInfo& input) {
  if (input.dtype != "f32") fail("input '{}' is {}, not f32", input.name, input.dtype);
  Shape shape;
  for (const std::string& dim : input.dims) {
    if (dim.empty() ||
        !std::all_of(dim.begin(), dim.end(), [](unsigned char c) { return std::isdigit(c); })) {
      fail("input '{}' has a symbolic dimension '{}'", input.name, dim);
    }
    shape.push_back(std::stoll(dim));
  }
  Tensor tensor(DType::f32, shape);
  std::span<float> values = tensor.values<float>();
  const double n = static_cast<double>(values.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i / n);
  return tensor;
}

// How many nodes of each op a graph holds, counting the nodes inside fused bodies (a fused
// node itself is not counted: its body's nodes are), and how many fused nodes it has.
struct OpHistogram {
  std::map<std::string, int> ops;
  int fused_groups = 0;

  int num_nodes() const {
    int total = 0;
    for (const auto& [op, count] : ops) total += count;
    return total;
  }
  int count(const std::string& op) const {
    auto it = ops.find(op);
    return it == ops.end() ? 0 : it->second;
  }
};

void add_to_histogram(const Graph& graph, OpHistogram& histogram) {
  for (const Node* node : graph.nodes()) {
    if (node->is_fused()) {
      ++histogram.fused_groups;
      add_to_histogram(*node->body, histogram);
    } else {
      ++histogram.ops[node->op];
    }
  }
}

OpHistogram op_histogram(const Graph& graph) {
  OpHistogram histogram;
  add_to_histogram(graph, histogram);
  return histogram;
}

struct LightModelResult : CaseResult {
  bool ran_passes = false;
  OpHistogram before;  // as imported
  OpHistogram after;   // after the passes
};

// "nodes 105 → 40 (26 fused groups); ConstantOfShape 39 → 0, Dropout 1 → 0": the change
// in size, and each op the default pipeline removes that was there before or after.
std::string histogram_change(const LightModelResult& result) {
  std::string line = fmt::format("nodes {} → {} ({} fused groups)", result.before.num_nodes(),
                                 result.after.num_nodes(), result.after.fused_groups);
  std::vector<std::string> changes;
  for (const std::string& op : kOpsRemovedByDefaultPipeline) {
    int before = result.before.count(op);
    int after = result.after.count(op);
    if (before > 0 || after > 0) changes.push_back(fmt::format("{} {} → {}", op, before, after));
  }
  if (!changes.empty()) line += fmt::format("; {}", fmt::join(changes, ", "));
  return line;
}

// The ops of kOpsRemovedByDefaultPipeline left in the graph ("left after the default
// pipeline: BatchNormalization 53, Identity 2"), or "" if none is left.
std::string remaining_removable_ops(const OpHistogram& histogram) {
  std::vector<std::string> remaining;
  for (const std::string& op : kOpsRemovedByDefaultPipeline) {
    if (int count = histogram.count(op); count > 0) {
      remaining.push_back(fmt::format("{} {}", op, count));
    }
  }
  if (remaining.empty()) return "";
  return fmt::format("left after the default pipeline: {}", fmt::join(remaining, ", "));
}

void run_light_model_unguarded(const fs::path& model, const PassSelection& selection,
                               const std::string& backend, const Target& target,
                               LightModelResult& result) {
  OnnxModelSummary summary = summarize_onnx(model.string());
  if (summary.inputs.size() != 1) {
    fail("expected one graph input, the model has {}", summary.inputs.size());
  }
  Graph graph = import_onnx(model.string());
  result.before = op_histogram(graph);
  run_passes(graph, selection.passes, target);
  result.after = op_histogram(graph);
  result.ran_passes = true;

  std::optional<std::vector<Tensor>> outputs =
      run_on_backend(std::move(graph), {arange_input(summary.inputs[0])}, backend, target);
  if (outputs) {
    fs::path expected_file = model.parent_path() / (model.stem().string() + "_output_0.pb");
    outputs->resize(std::min<size_t>(outputs->size(), 1));  // output 0 has an expected file
    compare_all(*outputs, {read_tensor_proto(expected_file.string())}, kLightModelTolerance,
                result);
  } else {
    result.passed = true;  // compiled only (nvrtc)
  }

  if (!selection.is_default_pipeline) return;
  std::string remaining = remaining_removable_ops(result.after);
  if (remaining.empty()) return;
  result.reason = result.passed ? remaining : result.reason + "; " + remaining;
  result.passed = false;
}

}  // namespace

int run_light_models(const std::string& dir, const std::string& passes,
                     const std::string& backend, const Target& target) {
  std::vector<fs::path> models;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with("light_") && name.ends_with(".onnx")) models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  if (models.empty()) fail("no light_*.onnx models in '{}'", dir);
  const PassSelection selection = parse_pass_selection(passes);
  const bool report_passes = !selection.passes.empty();

  int passed = 0;
  for (const fs::path& model : models) {
    LightModelResult result;
    result.name = model.stem().string();
    auto start = std::chrono::steady_clock::now();
    try {
      run_light_model_unguarded(model, selection, backend, target, result);
    } catch (const std::exception& e) {
      result.passed = false;
      result.reason = e.what();
    }
    double ms = elapsed_ms(start);
    if (result.passed) {
      fmt::print("PASS {} ({:.0f} ms)\n", result.name, ms);
    } else {
      fmt::print("FAIL {}: {} ({:.0f} ms)\n", result.name, result.reason, ms);
    }
    if (report_passes && result.ran_passes) fmt::print("    {}\n", histogram_change(result));
    std::fflush(stdout);
    passed += result.passed;
  }
  if (backend != "interp") fmt::print("target: {}\n", target.str());
  fmt::print("\n{} passed, {} failed\n", passed, models.size() - passed);
  return passed == static_cast<int>(models.size()) ? 0 : 1;
}


}  // namespace conformance
