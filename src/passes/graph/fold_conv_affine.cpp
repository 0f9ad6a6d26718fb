// The `fold-conv-affine` pass: fold a Mul or Add by a per-channel constant into the Conv
// before it.
//
// Course module 2. Output channel c of a Conv is sum(W[c] * window) + b[c]. Multiplying
// that channel by a constant s[c] is the same as multiplying its weights and bias, and
// adding t[c] the same as adding to its bias:
//
//   Conv(x, W, b) * s   =  Conv(x, W * s, b * s)        (W[c] * s[c], b[c] * s[c])
//   Conv(x, W, b) + t   =  Conv(x, W, b + t)            (a zero bias when b is absent)
//   Conv(x, W, b) - t   =  Conv(x, W, b - t)
//
// Caffe-style exporters write a BatchNormalization's learned scale and shift as such a Mul
// and Add after it (densenet121, inception_v2), and fold-batchnorm writes one it cannot
// fold the same way.
//
// Precondition: types are known. The fold fires only in the exact case: the constant is
// per output channel -- a scalar, or aligned at the end to the Conv's result [N, C, D1..Dk]
// it has size 1 everywhere except the channel axis, where it has size 1 or C ([C,1,1] and
// [1,C,1,1] for a 2-D Conv) -- so the Mul or Add has exactly the Conv result's type (no
// broadcast that enlarges it); the Conv's weights and bias are constants; and the Conv's
// result is read by the Mul or Add alone.
//
// Invariant: the graph computes the same function up to float rounding (the new weights and
// bias are computed in double and rounded once to the weights' element type).
//
// Algorithm: walk the nodes in order; for each Mul, Add or Sub that matches, replace the
// Conv's weight and bias by new constants and forward the Conv's result past the node. A
// chain Conv → Mul → Add folds in one walk: once the Mul is gone, the Add reads the Conv.
//
// Before:
//   %s = const f32[8,1,1] dense<[...]>
//   %c = Conv(%x, %w, %b) : f32[1,8,4,4]
//   %y = Mul(%c, %s) : f32[1,8,4,4]
// After (%w_scaled and %b_scaled are %w and %b scaled by %s per output channel):
//   %y = Conv(%x, %w_scaled, %b_scaled) : f32[1,8,4,4]
//
// Chapter: docs/module2-graph-passes.md#3-folding-arithmetic-into-weights-fold-batchnorm-fold-conv-affine
#include "minic/passes/graph/fold_conv_affine.h"
#include "minic/passes/pass_registry.h"

#include "minic/support/explain.h"

#include "graph_edit.h"

namespace minic {

namespace {

// The per-channel values of `constant` for a Conv result of type `result` with C channels
// (C entries, a scalar repeated), or nullopt if the constant is not per channel.
std::optional<std::vector<double>> per_channel(const Value* constant, const TensorType& result) {
  if (!constant->is_constant() || constant->type.dtype != result.dtype) return std::nullopt;
  const Shape& shape = constant->type.shape;
  const int64_t offset = result.rank() - static_cast<int64_t>(shape.size());
  if (offset < 0 || result.rank() < 2) return std::nullopt;
  const int64_t channels = result.shape[1];
  bool varies = false;  // along the channel axis
  for (size_t j = 0; j < shape.size(); ++j) {
    const int64_t axis = offset + static_cast<int64_t>(j);
    if (shape[j] == 1) continue;
    if (axis != 1 || shape[j] != channels) return std::nullopt;
    varies = true;
  }
  const Tensor& data = *constant->constant;
  std::vector<double> values;
  for (int64_t c = 0; c < channels; ++c) values.push_back(data.as_double(varies ? c : 0));
  return values;
}

// Why the Conv `conv` producing `node`'s input `conv_slot` cannot take `node` (Mul, Add or
// Sub), with `values` the constant's per-channel values (nullopt: not per channel); empty
// if it can.
std::string no_fold_reason(const Graph& graph, const Node& node, const Node& conv,
                           size_t conv_slot, const std::optional<std::vector<double>>& values) {
  const Value* result = node.input(conv_slot);
  const int64_t channels = result->type.shape[1];
  const Value* weight = conv.input(1);
  const Value* bias = conv.input(2);
  if (!edit::used_only_by(graph, result, &node)) {
    return fmt::format("%{} has another reader, which needs the value before the {}",
                       result->name(), node.op);
  }
  if (node.output(0)->type != result->type) {
    return fmt::format("its broadcast makes {} of the Conv's {}",
                       type_string(node.output(0)->type), type_string(result->type));
  }
  if (!values) {
    return fmt::format("%{} is not one value per output channel",
                       node.input(1 - conv_slot)->name());
  }
  if (!weight || !weight->is_constant() || weight->type.rank() < 1 ||
      weight->type.shape[0] != channels || (bias && !bias->is_constant())) {
    return fmt::format("the weights or bias of Conv %{} are not constants", result->name());
  }
  return {};
}

// Folds `node` (Mul, Add or Sub) into the Conv producing its input `conv_slot`, reading
// the constant at the other input; returns whether it did. Where the input is a Conv's
// that cannot take it, says why (minic explain).
bool fold(Graph& graph, Node& node, size_t conv_slot) {
  Value* result = node.input(conv_slot);
  Node* conv = result->producer();
  if (!conv || conv->op != "Conv") return false;
  std::optional<std::vector<double>> values = per_channel(node.input(1 - conv_slot), result->type);
  if (std::string why = no_fold_reason(graph, node, *conv, conv_slot, values); !why.empty()) {
    explain::note("{} %{} stays: {}", node.op, node.output(0)->name(), why);
    return false;
  }
  const Value* weight = conv->input(1);
  const Value* bias = conv->input(2);
  const int64_t channels = result->type.shape[1];
  std::vector<double> new_bias(static_cast<size_t>(channels), 0.0);
  if (bias) new_bias = bias->constant->to_double_vector();
  if (static_cast<int64_t>(new_bias.size()) != channels) return false;

  const DType dtype = weight->type.dtype;
  const std::string bias_hint = bias ? bias->name() : weight->name() + "_bias";
  if (node.op == "Mul") {
    for (int64_t c = 0; c < channels; ++c) new_bias[c] *= (*values)[c];
    graph.set_input(conv, 1,
                    edit::add_constant_from_doubles(
                        graph, weight->name() + "_scaled", dtype, weight->type.shape,
                        edit::scale_along_axis(*weight->constant, 0, *values)));
    if (bias) {
      graph.set_input(conv, 2, edit::add_constant_from_doubles(graph, bias_hint + "_scaled",
                                                                dtype, {channels}, new_bias));
    }
  } else {
    const double sign = node.op == "Sub" ? -1.0 : 1.0;
    for (int64_t c = 0; c < channels; ++c) new_bias[c] += sign * (*values)[c];
    graph.set_input(conv, 2, edit::add_constant_from_doubles(graph, bias_hint + "_shifted",
                                                              dtype, {channels}, new_bias));
  }
  edit::replace_node(graph, &node, node.output(0), result);
  return true;
}

}  // namespace

void fold_conv_affine(Graph& graph) {
  bool changed = false;
  // A fold erases only the node it folds, so the nodes ahead in this list stay valid.
  for (Node* node : graph.nodes()) {
    if (node->inputs().size() != 2 || !node->input(0) || !node->input(1)) continue;
    bool folded = false;
    if (node->op == "Mul" || node->op == "Add") {
      folded = fold(graph, *node, 0) || fold(graph, *node, 1);
    } else if (node->op == "Sub") {
      folded = fold(graph, *node, 0);  // Conv - t; t - Conv would negate the weights
    }
    changed = changed || folded;
  }
  if (changed) graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("fold-conv-affine", fold_conv_affine,
                          "fold a Mul or Add by a per-channel constant into the Conv before it");

}  // namespace minic
