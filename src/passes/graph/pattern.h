// Small helpers for pattern-fusion passes: match a subgraph by its formula, then replace it
// by one node.
//
// Course module 2. A fusion pass such as fuse-gelu recognises a formula that an exporter
// wrote out op by op -- x * 0.5 * (1 + Erf(x / sqrt(2))) -- and replaces those nodes by the
// one op that computes it (Gelu). Matching walks from the last node of the formula, the
// root, up through the producers of its inputs:
//
//   Node* erf = match_op(add->input(0), "Erf");            // is this input an Erf's result?
//   if (!erf || !is_constant_near(add->input(1), 1.0)) return std::nullopt;
//
// so that each pass reads like the formula it recognises. A pass's matcher returns a
// Replacement (the matched nodes and the one node that takes their place), and
// rewrite_matches applies them, checking once, for every pass, that the replacement is
// safe: only the root's result may be used outside the pattern.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#pragma once

#include "graph_edit.h"

#include "minic/ir/graph/graph.h"

#include <array>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace minic::pattern {

// The relative tolerance within which a constant in the graph matches a formula's constant
// (an exporter may write sqrt(2) as 1.4142135 or 1.41421).
inline constexpr double kConstantTolerance = 1e-4;

// --- matching values -------------------------------------------------------------------------

// The node that produces `value` if its op is `op`; null for anything else (a graph input,
// a constant, an omitted optional input, another op).
Node* match_op(const Value* value, std::string_view op);

// The one number a constant holds (edit::splat_value) and whether a value is read by one
// node only (edit::used_only_by) come from graph_edit.h, shared with the folding passes.
using edit::splat_value;
using edit::used_only_by;

// True if `number` is within kConstantTolerance (relative) of `expected`.
bool is_near(double number, double expected);

// True if `value` is a constant whose one number is near `expected` (is_near).
bool is_constant_near(const Value* value, double expected);

// The two inputs of a binary node in both orders, for matching commutative ops (Add, Mul):
//   for (auto [x, c] : both_orders(*mul)) if (is_constant_near(c, 0.5)) ...
// Empty pairs (nullptr) when the node does not have exactly two inputs.
std::array<std::pair<Value*, Value*>, 2> both_orders(const Node& node);

// The one node that uses `value`, if it uses it once, its op is `op`, and `value` is not a
// graph output; else null. For extending a match downwards, to an optional last step.
Node* sole_user(const Graph& graph, const Value* value, std::string_view op);

// --- rewriting -------------------------------------------------------------------------------

// What a matcher found: the matched nodes, the root last, and the one node that replaces
// them. The replacement takes over the root's output values (names, types and users), so it
// must compute exactly the root's results; its inputs must be defined before the root.
struct Replacement {
  std::vector<Node*> nodes;  // every matched node; the root is nodes.back()
  std::string op;
  std::vector<Value*> inputs;
  Attributes attributes;
};

// True if the nodes are distinct and no result of a node other than the root (the last) is
// used outside them or is a graph output: replacing them by one node that takes over the
// root's results loses nothing. rewrite_matches checks this for every match; a matcher that
// adds constants to the graph checks it first, so that it adds none for a match that fails.
bool is_self_contained(const Graph& graph, const std::vector<Node*>& nodes);

// The first result of a node other than the root (the last) that is used outside `nodes`
// or is a graph output: what keeps a match from being self-contained. Null if there is none.
const Value* escaping_value(const Graph& graph, const std::vector<Node*>& nodes);

// The explain note for a match that `escaping` keeps from being replaced by `op`.
void note_escaping(const Node& root, std::string_view op, const Value& escaping);

using Matcher = std::function<std::optional<Replacement>(Graph&, Node& root)>;

// Runs `matcher` at every node in order, and applies the replacements it finds:
//   1. A match is kept only if the results of its non-root nodes are used inside the
//      match alone (no other user, no graph output; `minic explain` says which value is
//      not), and if it shares no node with a match kept before it.
//   2. Each kept match's root becomes the replacement node (it keeps its place and outputs);
//      the other matched nodes, now unused, are erased.
//   3. If anything changed, values left unused (the formula's constants) are removed.
// Returns the number of replacements made.
int rewrite_matches(Graph& graph, const Matcher& matcher);

}  // namespace minic::pattern
