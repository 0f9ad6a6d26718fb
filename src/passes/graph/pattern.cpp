// Pattern-matching helpers shared by the fusion passes (fuse-gelu, fuse-layernorm,
// fuse-matmul-bias). Course module 2.
//
// rewrite_matches works in two phases so that no rewrite disturbs a match still to be
// found: first every node is tried as a root and the accepted matches are collected
// (disjoint, each self-contained), then each is applied. Applying one match touches only its
// own nodes -- its root is rewritten in place and keeps its output values, so a later match
// that reads the root's result still sees the same Value -- hence matches stay valid.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "pattern.h"

#include "minic/support/explain.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace minic::pattern {

Node* match_op(const Value* value, std::string_view op) {
  if (value == nullptr || value->producer() == nullptr) return nullptr;
  return value->producer()->op == op ? value->producer() : nullptr;
}

bool is_near(double number, double expected) {
  return std::abs(number - expected) <= kConstantTolerance * std::abs(expected);
}

bool is_constant_near(const Value* value, double expected) {
  std::optional<double> number = edit::splat_value(value);
  return number && is_near(*number, expected);
}

std::array<std::pair<Value*, Value*>, 2> both_orders(const Node& node) {
  if (node.inputs().size() != 2) return {};
  Value* a = node.input(0);
  Value* b = node.input(1);
  return {std::pair{a, b}, std::pair{b, a}};
}

Node* sole_user(const Graph& graph, const Value* value, std::string_view op) {
  if (value->users().size() != 1 || graph.is_graph_output(value)) return nullptr;
  Node* user = value->users()[0];
  return user->op == op ? user : nullptr;
}

const Value* escaping_value(const Graph& graph, const std::vector<Node*>& nodes) {
  std::unordered_set<const Node*> members(nodes.begin(), nodes.end());
  for (const Node* node : nodes) {
    if (node == nodes.back()) continue;
    for (const Value* output : node->outputs()) {
      if (graph.is_graph_output(output)) return output;
      for (const Node* user : output->users()) {
        if (!members.count(user)) return output;
      }
    }
  }
  return nullptr;
}

bool is_self_contained(const Graph& graph, const std::vector<Node*>& nodes) {
  if (nodes.empty()) return false;
  std::unordered_set<const Node*> members(nodes.begin(), nodes.end());
  return members.size() == nodes.size() && escaping_value(graph, nodes) == nullptr;
}

void note_escaping(const Node& root, std::string_view op, const Value& escaping) {
  explain::note("%{} stays, not {}: %{} of its formula is also read outside it",
                root.output(0)->name(), op, escaping.name());
}

namespace {

// Makes `node` compute op(inputs) {attributes}, keeping its output values
// (Graph::set_inputs keeps the users lists of the old and new inputs right).
void rewrite_node(Graph& graph, Node& node, const Replacement& replacement) {
  node.op = replacement.op;
  graph.set_inputs(&node, replacement.inputs);
  node.attributes = replacement.attributes;
}

// Erases `nodes`, all of whose results are used only among themselves: a node whose results
// have no users left goes first, until none remain.
void erase_dead(Graph& graph, std::vector<Node*> nodes) {
  while (!nodes.empty()) {
    auto dead = std::find_if(nodes.begin(), nodes.end(), [](const Node* node) {
      return std::all_of(node->outputs().begin(), node->outputs().end(),
                         [](const Value* output) { return output->users().empty(); });
    });
    MINIC_CHECK(dead != nodes.end());
    graph.erase_node(*dead);
    nodes.erase(dead);
  }
}

}  // namespace

int rewrite_matches(Graph& graph, const Matcher& matcher) {
  // Phase 1: find the matches, each node in at most one.
  std::vector<Replacement> found;
  std::unordered_set<const Node*> claimed;
  for (Node* node : graph.nodes()) {
    if (claimed.count(node)) continue;
    std::optional<Replacement> replacement = matcher(graph, *node);
    if (!replacement) continue;
    if (!is_self_contained(graph, replacement->nodes)) {
      const Value* escaping = escaping_value(graph, replacement->nodes);
      if (escaping) note_escaping(*replacement->nodes.back(), replacement->op, *escaping);
      continue;
    }
    const std::vector<Node*>& nodes = replacement->nodes;
    bool overlaps = std::any_of(nodes.begin(), nodes.end(),
                                [&](const Node* member) { return claimed.count(member) > 0; });
    if (overlaps) continue;
    claimed.insert(nodes.begin(), nodes.end());
    found.push_back(std::move(*replacement));
  }

  // Phase 2: rewrite each root in place and erase the rest of its match.
  for (const Replacement& replacement : found) {
    Node* root = replacement.nodes.back();
    rewrite_node(graph, *root, replacement);
    erase_dead(graph, std::vector<Node*>(replacement.nodes.begin(), replacement.nodes.end() - 1));
  }
  if (!found.empty()) graph.remove_unused_values();
  return static_cast<int>(found.size());
}

}  // namespace minic::pattern
