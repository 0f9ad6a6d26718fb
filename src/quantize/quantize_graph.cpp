// quantize_graph: a float graph rewritten in the QDQ format (include/minic/quantize/
// quantize.h gives the steps). Course module 7.
//
// Before (a Conv of an activation by float weights):
//   %y = Conv(%x, %w, %b) : f32[1,16,32,32]
// After (x through a quantisation and back, the weights int8 and dequantised):
//   %x_quantized = QuantizeLinear(%x, %x_scale, %x_zero_point) : u8[1,3,32,32]
//   %x_dequantized = DequantizeLinear(%x_quantized, %x_scale, %x_zero_point) : f32[...]
//   %w_dequantized = DequantizeLinear(%w_quantized, %w_scale) {axis=0} : f32[16,3,3,3]
//   %y = Conv(%x_dequantized, %w_dequantized, %b) : f32[1,16,32,32]
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "minic/quantize/quantize.h"

#include "calibrate.h"

#include "minic/ops/op.h"
#include "minic/ops/shape_inference.h"

#include <algorithm>
#include <map>

namespace minic {

namespace {

// An op to quantise, and which of its inputs are activations.
struct Target {
  Node* node = nullptr;
  std::vector<size_t> activations;  // input 0; a MatMul's B when it is not a constant
  int64_t weight_axis = -1;         // the weight's output-channel axis (-1: none)
};

bool excluded(const QuantizeOptions& options, const std::string& op) {
  return std::find(options.exclude.begin(), options.exclude.end(), op) != options.exclude.end();
}

// Step 1: the Conv, MatMul and Gemm nodes to quantise.
std::vector<Target> targets(Graph& graph, const QuantizeOptions& options) {
  std::vector<Target> found;
  for (Node* node : graph.nodes()) {
    const bool conv = node->op == "Conv";
    const bool gemm = node->op == "Gemm";
    if ((!conv && !gemm && node->op != "MatMul") || excluded(options, node->op)) continue;
    if (node->input(0)->type.dtype != DType::f32) continue;
    const NodeContext attributes(*node, graph.opset);
    if (gemm && attributes.get_int("transA", 0) != 0) continue;
    Target target{node, {0}};
    const Value* weight = node->input(1);
    if (!weight->is_constant()) {
      target.activations.push_back(1);
    } else if (conv) {
      target.weight_axis = 0;
    } else if (gemm) {
      target.weight_axis = attributes.get_int("transB", 0) != 0 ? 0 : 1;
    } else if (weight->type.rank() == 2) {
      target.weight_axis = 1;  // a MatMul's B [K, N]: a scale per column
    }
    found.push_back(target);
  }
  return found;
}

// Step 2: every value in `names` observed over the calibration runs, through a copy of the
// graph with them as outputs.
std::map<std::string, RangeObserver> observe(const Graph& graph,
                                             const std::vector<std::string>& names,
                                             const std::vector<std::vector<Tensor>>& calibration,
                                             const GraphRunner& run) {
  std::unique_ptr<Graph> probe = graph.clone();
  const size_t first = probe->outputs().size();
  for (const std::string& name : names) probe->add_output(probe->find_value(name));
  std::map<std::string, RangeObserver> observers;
  for (const std::vector<Tensor>& inputs : calibration) {
    std::vector<Tensor> outputs = run(*probe, inputs);
    for (size_t k = 0; k < names.size(); ++k) observers[names[k]].observe(outputs[first + k]);
  }
  return observers;
}

// A new constant named from `hint`.
Value* add_constant(Graph& graph, const std::string& hint, Tensor data) {
  return graph.add_constant(graph.unique_name(hint), std::move(data));
}

// Step 4 for an activation: x -> QuantizeLinear -> DequantizeLinear, read by `readers`
// (node, input index) instead of x.
void quantize_activation(Graph& graph, Value* x, const ActivationParameters& p,
                         const std::vector<std::pair<Node*, size_t>>& readers) {
  const std::string& name = x->name();
  Value* scale = add_constant(graph, name + "_scale",
                              Tensor::scalar(static_cast<float>(p.scale)));
  Value* zero = add_constant(graph, name + "_zero_point",
                             Tensor::scalar(static_cast<uint8_t>(p.zero_point)));
  Node* q = graph.add_node("QuantizeLinear", {x, scale, zero},
                           {graph.unique_name(name + "_quantized")});
  Node* dq = graph.add_node("DequantizeLinear", {q->output(0), scale, zero},
                            {graph.unique_name(name + "_dequantized")});
  for (auto [reader, index] : readers) graph.set_input(reader, index, dq->output(0));
}

// Step 4 for a weight: an int8 constant and its DequantizeLinear, read by `reader`.
QuantizedTensor quantize_weight(Graph& graph, Node* reader, int64_t axis) {
  const Value* weight = reader->input(1);
  QuantizedWeights q = quantize_weights(*weight->constant, axis);
  const std::string& name = weight->name();
  Value* values = add_constant(graph, name + "_quantized", q.values);
  std::vector<double> scales = q.scales;
  Tensor scale_tensor =
      axis < 0 ? Tensor::scalar(static_cast<float>(scales[0]))
               : Tensor::from_vector<double>({static_cast<int64_t>(scales.size())}, scales)
                     .cast(DType::f32);
  Value* scale = add_constant(graph, name + "_scale", std::move(scale_tensor));
  Attributes attributes;
  if (axis >= 0) attributes["axis"] = axis;
  Node* dq = graph.add_node("DequantizeLinear", {values, scale},
                            {graph.unique_name(name + "_dequantized")}, attributes);
  graph.set_input(reader, 1, dq->output(0));
  auto [low, high] = std::minmax_element(scales.begin(), scales.end());
  return {name, true, -*high * 127, *high * 127, scales, 0, q.relative_error};
}

}  // namespace

QuantizeResult quantize_graph(const Graph& graph,
                              const std::vector<std::vector<Tensor>>& calibration,
                              const QuantizeOptions& options, const GraphRunner& run) {
  if (graph.opset < 10) {
    throw Error(fmt::format("the model's opset is {}; QuantizeLinear and DequantizeLinear "
                            "start at opset 10 (convert the model to a newer opset first)",
                            graph.opset));
  }
  if (calibration.empty()) throw Error("quantisation needs at least one calibration input");
  check_calibration_method(options.method);
  QuantizeResult result;
  result.graph = graph.clone();
  Graph& g = *result.graph;
  QuantizeOptions used = options;
  if (used.per_channel && g.opset < 13) {
    used.per_channel = false;
    result.notes.push_back(fmt::format("weights per tensor: the model's opset {} has no "
                                       "per-axis DequantizeLinear (opset 13 has)", g.opset));
  }
  std::vector<Target> found = targets(g, used);
  result.quantized_ops = static_cast<int>(found.size());

  // Steps 2 and 3: the activations, their readers, their ranges and parameters.
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::pair<Node*, size_t>>> readers;
  for (const Target& target : found) {
    for (size_t index : target.activations) {
      const std::string& name = target.node->input(index)->name();
      if (!readers.count(name)) names.push_back(name);
      readers[name].push_back({target.node, index});
    }
  }
  std::map<std::string, RangeObserver> observers = observe(graph, names, calibration, run);
  for (const std::string& name : names) {
    const RangeObserver& observer = observers.at(name);
    auto [low, high] = observer.range(used);
    ActivationParameters p = uint8_parameters(low, high);
    quantize_activation(g, g.find_value(name), p, readers.at(name));
    result.tensors.push_back({name, false, low, high, {p.scale}, p.zero_point,
                              observer.relative_error(p.scale, p.zero_point)});
  }
  // Step 4 for the weights.
  for (const Target& target : found) {
    if (!target.node->input(1)->is_constant()) continue;
    result.tensors.push_back(
        quantize_weight(g, target.node, used.per_channel ? target.weight_axis : -1));
  }
  g.sort_topologically();
  g.remove_unused_values();
  infer_shapes(g);
  return result;
}

}  // namespace minic
