// The `cancel-qdq` pass: data movement on the bytes of a QDQ model, and a QuantizeLinear
// of a DequantizeLinear with the same scale and zero point removed.
//
// Course module 7. ONNX Runtime's quantiser quantises every op's result, data movement
// included. A BERT encoder splits each projection into heads as
//
//   %d = DQ(%q, s, z)   %r = Reshape(%d)   %rq = Q(%r, s, z)   %t = Transpose(DQ(%rq, s, z))
//   %tq = Q(%t, s, z)
//
// which, run as written, moves floats (four bytes a value) and rounds twice for nothing.
// Two rewrites make it Transpose(Reshape(%q)) on the bytes:
//   1. a per-tensor DequantizeLinear moves past a Reshape, Transpose, Squeeze, Unsqueeze or
//      Flatten: M(DQ(q)) = DQ(M(q)), since moving elements and scaling each one commute;
//   2. Q(DQ(q, s, z), s, z) = q, where the QuantizeLinear's type is q's: DQ gives
//      (q - z) s rounded to float32, within a relative 2^-24 of the real value, and
//      dividing by s and rounding to the nearest integer gives q - z back (|q - z| is at
//      most 255, so the error stays far below one half).
// Both hold exactly, so the graph computes the same values to the bit. Only per-tensor
// parameters are taken (one scale, one zero point, constants; a scale that is a normal
// float, so that neither (q - z) s nor its quotient by s overflows): a per-axis scale
// would follow its axis through the move.
//
// Chapter: docs/module7-quantisation.md#data-movement-on-bytes-the-cancel-qdq-pass
#include "minic/passes/graph/cancel_qdq.h"
#include "minic/passes/pass_registry.h"

#include "graph_edit.h"

#include <cmath>
#include <set>

namespace minic {

namespace {

// True for a DequantizeLinear of 8-bit integers with one constant scale (a normal float)
// and one constant zero point, or none.
bool is_per_tensor_dequantize(const Node& node) {
  if (node.op != "DequantizeLinear") return false;
  const DType dtype = node.input(0)->type.dtype;
  const Value* scale = node.input(1);
  const Value* zero = node.input(2);
  if ((dtype != DType::u8 && dtype != DType::i8) || !edit::is_scalar_constant(scale) ||
      (zero && !edit::is_scalar_constant(zero))) {
    return false;
  }
  const double s = scale->constant->as_double(0);
  return std::isnormal(s) && s > 0 && s < 1e30;
}

// True if the two values hold the same one number of the same type (or both are absent).
bool same_parameter(const Value* a, const Value* b) {
  if (!a || !b) return a == b;
  return a == b || (a->type == b->type && edit::splat_value(a) == edit::splat_value(b));
}

bool moves_data(const Node& node) {
  static const std::set<std::string, std::less<>> ops = {"Reshape", "Transpose", "Squeeze",
                                                         "Unsqueeze", "Flatten"};
  return ops.count(node.op) > 0 && node.outputs().size() == 1;
}

// Rewrite 1: `node` (moves data) reads a per-tensor DQ: it moves the integers instead, and a
// new DQ after it gives its result.
bool move_past(Graph& graph, Node* node) {
  const Node* dequantize = node->input(0) ? node->input(0)->producer() : nullptr;
  if (!moves_data(*node) || !dequantize || !is_per_tensor_dequantize(*dequantize)) return false;
  Value* result = node->output(0);
  Value* integers = dequantize->input(0);
  std::vector<Value*> inputs = node->inputs();
  inputs[0] = integers;
  Value* moved = edit::add_node_of_type(graph, node->op, std::move(inputs),
                                        result->name() + "_q", {integers->type.dtype,
                                                                result->type.shape},
                                        node->attributes);
  std::vector<Value*> parameters = dequantize->inputs();
  parameters[0] = moved;
  Value* dequantized = edit::add_node_of_type(graph, dequantize->op, std::move(parameters),
                                              result->name() + "_dq", result->type,
                                              dequantize->attributes);
  edit::replace_node(graph, node, result, dequantized, /*take_name=*/true);
  return true;
}

// Rewrite 2: `node` is Q(DQ(q)) with the DQ's parameters and q's type: q itself.
bool cancel(Graph& graph, Node* node) {
  if (node->op != "QuantizeLinear" || !node->input(0)->producer()) return false;
  const Node* dequantize = node->input(0)->producer();
  if (!is_per_tensor_dequantize(*dequantize)) return false;
  Value* integers = dequantize->input(0);
  const bool same = node->input(0)->type.dtype == DType::f32 &&
                    node->output(0)->type == integers->type &&
                    same_parameter(node->input(1), dequantize->input(1)) &&
                    same_parameter(node->input(2), dequantize->input(2));
  if (!same || node->attributes.count("precision") || node->attributes.count("saturate")) {
    return false;
  }
  edit::replace_node(graph, node, node->output(0), integers);
  return true;
}

}  // namespace

void cancel_qdq(Graph& graph) {
  for (bool changed = true; changed;) {
    changed = false;
    for (Node* node : graph.nodes()) {
      if (move_past(graph, node) || cancel(graph, node)) {
        changed = true;
        break;  // the node list changed
      }
    }
    graph.sort_topologically();
  }
  graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("cancel-qdq", cancel_qdq,
                          "per-tensor DequantizeLinear moved past Reshape/Transpose/...; "
                          "Q(DQ(q)) with the same scale and zero point → q");

}  // namespace minic
