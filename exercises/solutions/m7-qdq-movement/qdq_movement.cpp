// Exercise m7-qdq-movement, a reference solution: the graph pass `qdq-movement`. Course
// module 7.
//
// For each QuantizeLinear, walk up: a movement op, then a DequantizeLinear; check that
// the two quantisations are the same and that nothing else reads the values in between;
// then rewire the movement op to the integers and let it take the QuantizeLinear's place.
//
// Chapter: docs/module7-quantisation.md#2-running-qdq-models-the-qdq-to-integer-pass
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

#include <optional>
#include <string>

namespace minic {
namespace {

// True for the ops whose every output element is one of their input's elements.
bool moves_data(const Node& node) {
  return node.op == "Reshape" || node.op == "Transpose" || node.op == "Flatten" ||
         node.op == "Squeeze" || node.op == "Unsqueeze";
}

// The one number of a per-tensor constant parameter, or nullopt.
std::optional<double> one_number(const Value* value) {
  if (!value || !value->is_constant() || value->constant->num_elements() != 1) {
    return std::nullopt;
  }
  return value->constant->as_double(0);
}

// Input `index` of `node`, or null where it is absent.
const Value* optional_input(const Node& node, size_t index) {
  return node.inputs().size() > index ? node.input(index) : nullptr;
}

// True if the DequantizeLinear and the QuantizeLinear use the same scale and zero point.
bool same_quantisation(const Node& dq, const Node& q) {
  std::optional<double> dq_scale = one_number(dq.input(1));
  std::optional<double> q_scale = one_number(q.input(1));
  if (!dq_scale || !q_scale || *dq_scale != *q_scale) return false;
  const Value* dq_zero = optional_input(dq, 2);
  const Value* q_zero = optional_input(q, 2);
  if (!dq_zero || !q_zero) return !dq_zero && !q_zero;
  std::optional<double> a = one_number(dq_zero);
  std::optional<double> b = one_number(q_zero);
  return a && b && *a == *b && dq_zero->type.dtype == q_zero->type.dtype;
}

// True if `value` is read by `user` alone and is not a graph output.
bool read_only_by(const Graph& graph, const Value* value, const Node* user) {
  if (graph.is_graph_output(value)) return false;
  for (const Node* reader : value->users()) {
    if (reader != user) return false;
  }
  return true;
}

void move_integers(Graph& graph) {
  bool changed = false;
  for (Node* q : graph.nodes()) {
    if (q->op != "QuantizeLinear") continue;
    Node* move = q->input(0)->producer();
    if (!move || !moves_data(*move)) continue;
    Node* dq = move->input(0)->producer();
    if (!dq || dq->op != "DequantizeLinear" || !same_quantisation(*dq, *q)) continue;
    if (!read_only_by(graph, dq->output(0), move) || !read_only_by(graph, q->input(0), q)) {
      continue;
    }
    // The movement op on the integers, in the QuantizeLinear's place and name.
    Value* moved = move->output(0);
    Value* result = q->output(0);
    const std::string name = result->name();
    graph.set_input(move, 0, dq->input(0));
    moved->type.dtype = result->type.dtype;
    graph.replace_all_uses_with(result, moved);
    graph.erase_node(q);
    graph.erase_node(dq);
    graph.remove_unused_values();
    graph.rename_value(moved, name);
    changed = true;
  }
  if (changed) graph.remove_unused_values();
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("qdq-movement", move_integers,
                          "exercise m7-qdq-movement: DQ -> Reshape/Transpose/... -> Q with "
                          "the same scale -> the movement op on the integers");

}  // namespace minic
