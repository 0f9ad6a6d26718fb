// Exercise m2-fuse-hardswish, solved: the graph pass `fuse-hardswish`, which finds
// HardSwish written out op by op and makes it one HardSwish node. Course module 2.
//
// Each node is tried as the root of a formula, the last Mul or Div, read downwards:
//   (a) x * Clip(x + 3, 0, 6) / 6, the division also as a product with 1/6, and every Add
//       and Mul with its operands in either order;
//   (b) x * HardSigmoid(x) with alpha 1/6 and beta 0.5, in either order.
// A node inside the formula must be used by the formula alone (else its value is needed
// anyway, and nothing is saved), and its value must not be a graph output. The root then
// becomes HardSwish(x) in place, keeping its output's name, and the other nodes of the
// formula, now unused, are erased. Constants are scalars (or one-element tensors) of f32
// and match within a relative 1e-4: exporters write 1/6 as 0.16666667.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/ir/graph/graph.h"
#include "minic/passes/pass_registry.h"

#include <cmath>
#include <optional>
#include <utility>

namespace minic {
namespace {

// True if `value` is an f32 constant of one element whose value is near `expected`.
bool is_constant_near(const Value* value, double expected) {
  if (!value || !value->is_constant()) return false;
  const Tensor& data = *value->constant;
  if (data.dtype() != DType::f32 || data.num_elements() != 1) return false;
  double found = data.values<float>()[0];
  return std::fabs(found - expected) <= 1e-4 * std::max(1.0, std::fabs(expected));
}

// The node that defines `value` if it is an `op` node read only by `user`, and `value`
// is not a graph output; else null.
Node* inner_node(const Graph& graph, const Value* value, const char* op, const Node* user) {
  Node* producer = value ? value->producer() : nullptr;
  if (!producer || producer->op != op || graph.is_graph_output(value)) return nullptr;
  for (const Node* reader : value->users()) {
    if (reader != user) return nullptr;
  }
  return producer;
}

// The operands of a two-input node in both orders.
std::pair<Value*, Value*> operands(const Node& node, bool swapped) {
  return swapped ? std::pair{node.input(1), node.input(0)} : std::pair{node.input(0), node.input(1)};
}

float float_attribute(const Node& node, const char* name, float otherwise) {
  auto found = node.attributes.find(name);
  return found == node.attributes.end() ? otherwise : std::get<float>(found->second);
}

struct Formula {
  Value* x = nullptr;
  std::vector<Node*> inner;  // the nodes to erase, the root's inputs' producers first
};

// (b) x * HardSigmoid(x) {alpha = 1/6, beta = 0.5}.
std::optional<Formula> match_hard_sigmoid_form(const Graph& graph, Node& root) {
  if (root.op != "Mul" || root.inputs().size() != 2) return std::nullopt;
  for (bool swapped : {false, true}) {
    auto [x, s] = operands(root, swapped);
    Node* sigmoid = inner_node(graph, s, "HardSigmoid", &root);
    if (!sigmoid || sigmoid->input(0) != x) continue;
    if (std::fabs(float_attribute(*sigmoid, "alpha", 0.2f) - 1.0 / 6) > 1e-4 ||
        std::fabs(float_attribute(*sigmoid, "beta", 0.5f) - 0.5) > 1e-4) {
      continue;
    }
    return Formula{x, {sigmoid}};
  }
  return std::nullopt;
}

// Below the division: m = x * Clip(x + 3, 0, 6), read only by `root`.
std::optional<Formula> match_product(const Graph& graph, const Value* m, const Node& root) {
  Node* mul = inner_node(graph, m, "Mul", &root);
  if (!mul || mul->inputs().size() != 2) return std::nullopt;
  for (bool swapped : {false, true}) {
    auto [x, c] = operands(*mul, swapped);
    Node* clip = inner_node(graph, c, "Clip", mul);
    if (!clip || clip->inputs().size() != 3 || !is_constant_near(clip->input(1), 0) ||
        !is_constant_near(clip->input(2), 6)) {
      continue;
    }
    Node* add = inner_node(graph, clip->input(0), "Add", clip);
    if (!add || add->inputs().size() != 2) continue;
    for (bool add_swapped : {false, true}) {
      auto [added_x, three] = operands(*add, add_swapped);
      if (added_x == x && is_constant_near(three, 3)) return Formula{x, {mul, clip, add}};
    }
  }
  return std::nullopt;
}

// (a) x * Clip(x + 3, 0, 6) / 6, or the product times 1/6.
std::optional<Formula> match_clip_form(const Graph& graph, Node& root) {
  if (root.inputs().size() != 2) return std::nullopt;
  if (root.op == "Div" && is_constant_near(root.input(1), 6)) {
    return match_product(graph, root.input(0), root);
  }
  if (root.op != "Mul") return std::nullopt;
  for (bool swapped : {false, true}) {
    auto [m, sixth] = operands(root, swapped);
    if (!is_constant_near(sixth, 1.0 / 6)) continue;
    if (std::optional<Formula> formula = match_product(graph, m, root)) return formula;
  }
  return std::nullopt;
}

void fuse_hardswish(Graph& graph) {
  for (Node* root : graph.nodes()) {
    std::optional<Formula> formula = match_clip_form(graph, *root);
    if (!formula) formula = match_hard_sigmoid_form(graph, *root);
    if (!formula) continue;
    root->op = "HardSwish";
    root->attributes.clear();
    graph.set_inputs(root, {formula->x});
    for (Node* node : formula->inner) graph.erase_node(node);
  }
  graph.remove_unused_values();
}

}  // namespace

MINIC_REGISTER_GRAPH_PASS("fuse-hardswish", fuse_hardswish,
                          "exercise m2-fuse-hardswish: x * Clip(x + 3, 0, 6) / 6 -> HardSwish(x)");

}  // namespace minic
