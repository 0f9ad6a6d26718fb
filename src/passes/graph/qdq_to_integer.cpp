// The `qdq-to-integer` pass: run the Conv, MatMul and Gemm of a QDQ model on integers.
//
// Course module 7. A QDQ model (the format ONNX Runtime's quantiser writes, and
// `minic quantize`) stores int8 weights and brackets each float op with
// DequantizeLinear (DQ) on its inputs and QuantizeLinear (Q) on its output:
//
//   %x = DQ(%xq, sx, zx)    %w = DQ(%wq, sw, zw)    %y = Conv(%x, %w, %b)    Q(%y, sy, zy)
//
// Run as written, that dequantises every weight and computes in float. But a convolution
// is linear in each operand, so with x = sx * (xq - zx) and w[m] = sw[m] * (wq[m] - zw[m])
// (one weight scale per output channel m, or one for all):
//
//   Conv(x, w)[n, m, ...] = sx * sw[m] * ConvInteger(xq, wq, zx, zw)[n, m, ...]
//
// where ConvInteger sums the exact products of 8-bit differences in int32. The pass
// rewrites the op that way:
//
//   %acc = ConvInteger(%xq, %wq, zx, zw) : i32        %y = DQ(%acc, sx * sw, axis=1) + %b
//
// and the same for MatMul (MatMulInteger; the weight scale per column of B) and Gemm
// (alpha folded into the scale, C added after; a transposed constant B transposed here).
// Operator fusion then makes one kernel of the integer op, the DQ, the bias, an activation
// and the Q that follows: the int8 kernel with its requantisation as the epilogue.
//
// A grouped convolution (a depthwise one above all) is left in float: the integer
// convolution's fast form packs words of four input channels of one group, which a
// depthwise convolution does not have, and its other form, an int32 product per tap, ran
// MobileNetV2's int8 model at 1.7x the time of the float convolutions on the dequantised
// values (whose weights fold-constants dequantises once). The float convolution computes
// what the QDQ model says.
//
// Precondition: types are known; it runs before fold-constants, which would fold the DQ of
// a constant weight into float weights. The rewrite fires when:
//   - input 0 is a DQ of int8 or uint8 with one constant scale and zero point (per tensor);
//   - the weight is a DQ of int8 or uint8 with constant scales and zero points, per tensor
//     or per output channel (Conv: axis 0; MatMul: the last axis of a 2-D B; Gemm: the
//     axis of B that indexes N);
//   - the op computes in float32 and its result is float32;
//   - a Conv has one group.
// Invariant: the graph computes the same function up to float rounding (the int32 sums
// are exact where the float ones rounded; a Q after them sees at most one step of
// difference).
//
// Chapter: docs/module7-quantisation.md#2-running-qdq-models-the-qdq-to-integer-pass
#include "minic/passes/graph/qdq_to_integer.h"
#include "minic/passes/pass_registry.h"

#include "minic/support/explain.h"

#include "graph_edit.h"

#include <algorithm>
#include <optional>

namespace minic {

namespace {

// A DequantizeLinear the pass can move past a linear op: its integer input, zero point
// (null: none) and constant scales, one per tensor or one per index along `axis`.
struct Dequantized {
  Value* q = nullptr;
  Value* zero_point = nullptr;
  std::vector<double> scales;
  int64_t axis = -1;  // -1: per tensor
};

// `value` as the result of such a DequantizeLinear, or nullopt.
std::optional<Dequantized> dequantized(const Value* value) {
  const Node* dq = value ? value->producer() : nullptr;
  if (!dq || dq->op != "DequantizeLinear") return std::nullopt;
  Value* q = dq->input(0);
  const Value* scale = dq->input(1);
  Value* zero_point = dq->inputs().size() > 2 ? dq->input(2) : nullptr;
  if (q->type.dtype != DType::i8 && q->type.dtype != DType::u8) return std::nullopt;
  if (!scale->is_constant() || scale->type.dtype != DType::f32) return std::nullopt;
  if (zero_point && !zero_point->is_constant()) return std::nullopt;
  if (edit::int_attribute(*dq, "block_size", 0) != 0) return std::nullopt;
  Dequantized d{q, zero_point, scale->constant->to_double_vector()};
  if (d.scales.size() > 1) {
    int64_t axis = edit::int_attribute(*dq, "axis", 1);
    d.axis = axis < 0 ? axis + q->type.rank() : axis;
  }
  return d;
}

// Input `index` of `node` if a DQ per tensor, or per index along `axis` where `axis` is
// not -1; else nullopt.
std::optional<Dequantized> operand(const Node& node, size_t index, int64_t axis) {
  std::optional<Dequantized> d = dequantized(node.input(index));
  if (!d || (d->axis != -1 && d->axis != axis)) return std::nullopt;
  return d;
}

// Rewrites `node` (Conv, MatMul or Gemm) if its operands allow (see the file comment);
// returns whether it did.
bool rewrite(Graph& graph, Node& node) {
  const bool conv = node.op == "Conv";
  const bool gemm = node.op == "Gemm";
  Value* result = node.output(0);
  if (result->type.dtype != DType::f32 || node.input(0)->type.dtype != DType::f32) return false;
  if (gemm && edit::int_attribute(node, "transA", 0) != 0) return false;
  // A product that reads no dequantised value is a float model's: nothing to explain.
  const bool reads_dequantized = std::any_of(
      node.inputs().begin(), node.inputs().end(), [](const Value* input) {
        return input && input->producer() && input->producer()->op == "DequantizeLinear";
      });
  if (!reads_dequantized) return false;
  if (conv && edit::int_attribute(node, "group", 1) != 1) {
    explain::note("Conv %{} stays in float: a grouped convolution has no int8 word form, and "
                  "minic's float kernels for it are the faster", result->name());
    return false;
  }
  const bool trans_b = gemm && edit::int_attribute(node, "transB", 0) != 0;
  const int64_t w_rank = node.input(1)->type.rank();
  // The weight's axis that indexes the output channels (Conv) or columns (MatMul, Gemm).
  const int64_t channel_axis = conv ? 0 : trans_b ? 0 : (w_rank == 2 ? 1 : -1);
  std::optional<Dequantized> x = operand(node, 0, -1);
  std::optional<Dequantized> w = operand(node, 1, channel_axis);
  if (!x || !w) {
    explain::note("{} %{} stays in float: {} is not dequantised from 8-bit integers with "
                  "constant scales that the integer op can take", node.op, result->name(),
                  !x ? "input 0" : "the weight");
    return false;
  }
  Value* wq = w->q;
  if (trans_b) {
    if (!wq->is_constant()) return false;
    wq = graph.add_constant(graph.unique_name(wq->name() + "_t"),
                            edit::transposed(*wq->constant));
  }
  // The output's scale: x's times the weight's, per output channel or for all.
  const double alpha = gemm ? edit::float_attribute(node, "alpha", 1.0) : 1.0;
  std::vector<double> scales;
  for (double s : w->scales) {
    scales.push_back(static_cast<float>(static_cast<float>(x->scales[0] * s) * alpha));
  }
  const int64_t out_rank = result->type.rank();
  std::vector<Value*> inputs = {x->q, wq, x->zero_point, w->zero_point};
  while (!inputs.back()) inputs.pop_back();  // zero points left out from the end
  Value* acc = edit::add_node_of_type(graph, conv ? "ConvInteger" : "MatMulInteger", inputs,
                                      result->name() + "_int", {DType::i32, result->type.shape},
                                      conv ? node.attributes : Attributes{});
  Value* scale = edit::add_constant_from_doubles(graph, result->name() + "_scale", DType::f32,
                                                 scales.size() == 1 ? Shape{} : Shape{
                                                     static_cast<int64_t>(scales.size())},
                                                 scales);
  Attributes dq_attributes;
  if (scales.size() > 1) dq_attributes["axis"] = int64_t{conv ? 1 : out_rank - 1};
  Value* y = edit::add_node_of_type(graph, "DequantizeLinear", {acc, scale},
                                    result->name() + "_dq", result->type, dq_attributes);
  // The bias, added after: Conv's B per channel (as [M, 1, ...]); Gemm's C as it broadcasts.
  if (node.inputs().size() > 2 && node.input(2)) {
    Value* bias = node.input(2);
    if (conv) {
      Shape shape(static_cast<size_t>(out_rank - 1), 1);
      shape[0] = bias->type.shape[0];
      Value* dims = graph.add_constant(graph.unique_name(bias->name() + "_shape"),
                                       Tensor::from_vector<int64_t>({out_rank - 1}, shape));
      bias = edit::add_node_of_type(graph, "Reshape", {bias, dims}, bias->name() + "_channels",
                                    {DType::f32, shape}, {});
    }
    y = edit::add_node_of_type(graph, "Add", {y, bias}, result->name() + "_bias",
                               result->type, {});
  }
  edit::replace_node(graph, &node, result, y, /*take_name=*/true);
  return true;
}

}  // namespace

void qdq_to_integer(Graph& graph) {
  bool changed = false;
  for (Node* node : graph.nodes()) {
    if (node->op != "Conv" && node->op != "MatMul" && node->op != "Gemm") continue;
    // Gemm's beta scales C: only beta = 1 is rewritten.
    if (node->op == "Gemm" && edit::float_attribute(*node, "beta", 1.0) != 1.0) continue;
    changed = rewrite(graph, *node) || changed;
  }
  if (!changed) return;
  graph.sort_topologically();
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("qdq-to-integer", qdq_to_integer,
                          "Conv/MatMul/Gemm on dequantised int8 operands -> the integer op, "
                          "then DequantizeLinear");

}  // namespace minic
