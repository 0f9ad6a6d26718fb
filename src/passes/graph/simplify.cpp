// The `simplify` pass: algebraic simplification by a table of rewrite rules.
//
// Course module 2. Exporters leave behind nodes that compute nothing: Identity, Dropout at
// inference, a Reshape to the shape a tensor already has, x * 1 written out by a framework
// that scaled by a hyperparameter that happened to be 1. Each rule of kRules below removes
// or shortens one such pattern and reads like the algebra it applies: `x * 1 → x`.
//
// Precondition: every value has its type (shape inference has run), as the pass manager
// guarantees. The rules read shapes from types and an op's arguments the way its op does
// (Reshape's target is an attribute before opset 5 and an input after, Pad's pads one
// before opset 11 and an input after), through NodeContext.
//
// Invariant: the graph computes exactly what it computed before, bit for bit (`x + 0 → x`
// aside, which turns -0 + 0 = +0 into -0). A rule whose result would differ in type or
// shape from the value it replaces does not fire: x * [1, 1, 1] broadcasts an x of shape
// [3, 1] to [3, 3], so it is not x (`minic explain` says so for each such node).
//
// Algorithm:
//   1. Walk the nodes in order. For each, try the rules for its op in table order; the first
//      that matches rewrites the graph: "→ x" rules forward the node's input (the node and
//      any producer left unused are erased), the others rewire the node to skip a producer.
//   2. Repeat the walk until one changes nothing (a fixed point): a rewrite can leave its
//      node open to another rule -- Reshape(Reshape(x, s1), s2) becomes Reshape(x, s2),
//      which is x itself when s2 is x's shape.
//   3. Drop the values the rewrites left unused (shape constants of erased Reshapes, ...).
//
// Before:                                        After:
//   %0 = Identity(%x) : f32[2,3]                    %4 = Transpose(%x) {perm=[1,0]} : f32[3,2]
//   %1 = Mul(%0, %one) : f32[2,3]                   %y = Relu(%4) : f32[3,2]
//   %2 = Transpose(%1) {perm=[1,0]} : f32[3,2]
//   %3 = Transpose(%2) {perm=[1,0]} : f32[2,3]
//   %4 = Transpose(%3) {perm=[1,0]} : f32[3,2]
//   %y = Relu(%4) : f32[3,2]
// (%one is a splat of 1.) The Identity and the Mul forward %x; %3 undoes %2, so both go.
//
// Chapter: docs/module2-graph-passes.md#2-cleaning-up-simplify-fold-constants-dce-cse
#include "minic/passes/graph/simplify.h"
#include "minic/passes/pass_registry.h"

#include "graph_edit.h"
#include "minic/ops/op.h"
#include "minic/support/explain.h"

#include <algorithm>
#include <numeric>
#include <string_view>

namespace minic {

namespace {

using edit::constant_ints;
using edit::splat_value;

// --- what the rules look at ------------------------------------------------------------------

// True if input `constant` of binary `node` is a constant whose elements all equal `value`,
// and the node's result has exactly the type of its other input (no broadcasting that
// enlarges it).
bool is_neutral(const Node& node, size_t constant, double value) {
  if (node.inputs().size() != 2 || !node.input(0) || !node.input(1)) return false;
  std::optional<double> splat = splat_value(node.input(constant));
  const Value* other = node.input(1 - constant);
  return splat && *splat == value && node.output(0)->type == other->type;
}

// True if the node's result has exactly its first input's type.
bool same_type_as_input(const Node& node) {
  return node.input(0) && node.output(0)->type == node.input(0)->type;
}

// The node producing `node`'s first input, if its op is `op`.
const Node* producer_of_first_input(const Node& node, std::string_view op) {
  const Value* input = node.input(0);
  if (!input || !input->producer() || input->producer()->op != op) return nullptr;
  return input->producer();
}

// Reshape, Flatten, Squeeze and Unsqueeze only regroup dimensions: their result holds the
// input's elements in the same row-major order, so a chain of them is one Reshape, and a
// chain whose result has its input's shape computes nothing.
bool is_view(const Node* node) {
  if (!node) return false;
  const std::string& op = node->op;
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}

// A Transpose's permutation: the attribute, or the reversed axes when it is absent.
std::vector<int64_t> perm_of(const Graph& graph, const Node& transpose) {
  std::vector<int64_t> reversed(static_cast<size_t>(transpose.input(0)->type.rank()));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return NodeContext(transpose, graph.opset).get_ints("perm", reversed);
}

bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Transpose(Transpose(x, p), q) = Transpose(x, p∘q): output axis i of the outer Transpose
// is its input's axis q[i], which is x's axis p[q[i]].
std::vector<int64_t> compose_perms(const std::vector<int64_t>& p, const std::vector<int64_t>& q) {
  std::vector<int64_t> composed;
  for (int64_t axis : q) composed.push_back(p.at(static_cast<size_t>(axis)));
  return composed;
}

// --- matches ---------------------------------------------------------------------------------

bool always(const Graph&, const Node&) { return true; }

bool x_times_one(const Graph&, const Node& node) { return is_neutral(node, 1, 1.0); }
bool one_times_x(const Graph&, const Node& node) { return is_neutral(node, 0, 1.0); }
bool x_plus_zero(const Graph&, const Node& node) { return is_neutral(node, 1, 0.0); }
bool zero_plus_x(const Graph&, const Node& node) { return is_neutral(node, 0, 0.0); }
bool x_minus_zero(const Graph&, const Node& node) { return is_neutral(node, 1, 0.0); }
bool x_over_one(const Graph&, const Node& node) { return is_neutral(node, 1, 1.0); }

bool keeps_type(const Graph&, const Node& node) { return same_type_as_input(node); }

bool one_input(const Graph&, const Node& node) {
  return node.inputs().size() == 1 && same_type_as_input(node);
}

// Dropout passes its input through unless training_mode is true (and the ratio above 0):
// the test its op makes. Its mask output, if read, keeps the node.
bool drops_nothing(const Graph& graph, const Node& node) {
  if (node.outputs().size() > 1 && !edit::is_unused(graph, node.output(1))) return false;
  NodeContext ctx(node, graph.opset);
  if (graph.opset < 12) {
    return ctx.get_int("is_test", 1) != 0 || ctx.get_float("ratio", 0.5f) == 0.0f;
  }
  if (!node.has_input(2)) return true;
  std::optional<double> training = splat_value(node.input(2));
  if (training && *training == 0.0) return true;
  std::optional<double> ratio = node.has_input(1) ? splat_value(node.input(1)) : std::nullopt;
  return training && ratio && *ratio == 0.0;
}

// Pad whose pads are all 0 (the mode and the fill value then do not matter). The pads are
// an attribute before opset 11 ("paddings" in opset 1) and an input from 11 on.
bool zero_pads(const Graph& graph, const Node& node) {
  NodeContext ctx(node, graph.opset);
  std::optional<std::vector<int64_t>> pads;
  const char* attribute = graph.opset < 2 ? "paddings" : "pads";
  if (graph.opset < 11) {
    if (ctx.has_attr(attribute)) pads = ctx.get_ints(attribute);
  } else if (node.has_input(1)) {
    pads = constant_ints(node.input(1));
  }
  return pads && same_type_as_input(node) &&
         std::all_of(pads->begin(), pads->end(), [](int64_t pad) { return pad == 0; });
}

// A Slice that keeps every element in order: the same shape, and every step forward. (With
// a forward step and as many elements as the axis holds, the slice starts at 0 and steps
// by 1; a backward step would reverse the axis.) Steps are an input from opset 10 on.
bool whole_slice(const Graph& graph, const Node& node) {
  if (!same_type_as_input(node)) return false;
  if (graph.opset < 10 || !node.has_input(4)) return true;  // every step is 1
  std::optional<std::vector<int64_t>> steps = constant_ints(node.input(4));
  return steps && std::all_of(steps->begin(), steps->end(), [](int64_t step) { return step > 0; });
}

// view(view(x)) whose result has x's type: the pair cancels (Squeeze undoes Unsqueeze, or
// the reverse). Comparing types rather than axes lists covers every opset form of the axes
// and every way of naming them (negative axes, Squeeze without axes).
bool undoes_view(const Node& node, std::string_view inner_op) {
  const Node* inner = producer_of_first_input(node, inner_op);
  return inner && inner->input(0)->type == node.output(0)->type;
}
bool undoes_unsqueeze(const Graph&, const Node& node) { return undoes_view(node, "Unsqueeze"); }
bool undoes_squeeze(const Graph&, const Node& node) { return undoes_view(node, "Squeeze"); }

bool of_view(const Graph&, const Node& node) { return is_view(node.input(0)->producer()); }

bool identity_perm(const Graph& graph, const Node& node) {
  return is_identity_perm(perm_of(graph, node));
}

bool undoes_transpose(const Graph& graph, const Node& node) {
  const Node* inner = producer_of_first_input(node, "Transpose");
  return inner && is_identity_perm(compose_perms(perm_of(graph, *inner), perm_of(graph, node)));
}

bool of_transpose(const Graph&, const Node& node) {
  return producer_of_first_input(node, "Transpose") != nullptr;
}

// --- rewrites --------------------------------------------------------------------------------

// → input `index`: the node's result is replaced by that input.
template <size_t index>
void forward(Graph& graph, Node& node) {
  edit::replace_node(graph, &node, node.output(0), node.input(index));
}

// → x, where x is the first input of the node's producer: Squeeze(Unsqueeze(x)) → x.
void forward_inner(Graph& graph, Node& node) {
  edit::replace_node(graph, &node, node.output(0), node.input(0)->producer()->input(0));
}

// Makes `node` read its producer's first input, then erases the producer if now unused.
void skip_producer(Graph& graph, Node& node) {
  Node* inner = node.input(0)->producer();
  graph.set_input(&node, 0, inner->input(0));
  edit::erase_if_dead(graph, inner);
}

// Reshape(view(x), s) → Reshape(x, s). A 0 in s copies a dimension of the input, which is now
// x instead of view(x): then the target becomes the result's shape, spelled out.
void reshape_x(Graph& graph, Node& node) {
  const Shape& shape = node.output(0)->type.shape;
  skip_producer(graph, node);
  if (graph.opset < 5) {
    node.attributes["shape"] = std::vector<int64_t>(shape.begin(), shape.end());
    return;
  }
  std::optional<std::vector<int64_t>> target = constant_ints(node.input(1));
  const bool allow_zero = NodeContext(node, graph.opset).get_int("allowzero", 0) != 0;
  if (target && (allow_zero || std::find(target->begin(), target->end(), 0) == target->end())) {
    return;
  }
  Tensor spelled_out = Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size())}, shape);
  Value* constant = graph.add_constant(graph.unique_name(node.output(0)->name() + "_shape"),
                                       std::move(spelled_out));
  Value* old_target = node.input(1);
  graph.set_input(&node, 1, constant);
  if (old_target->producer()) edit::erase_if_dead(graph, old_target->producer());
}

// Transpose(Transpose(x, p), q) → Transpose(x, p∘q).
void compose(Graph& graph, Node& node) {
  const Node& inner = *node.input(0)->producer();
  node.attributes["perm"] = compose_perms(perm_of(graph, inner), perm_of(graph, node));
  skip_producer(graph, node);
}

// --- the rules -------------------------------------------------------------------------------

using Match = bool (*)(const Graph&, const Node&);
using Rewrite = void (*)(Graph&, Node&);

struct Rule {
  std::string_view name;  // how the rule reads
  std::string_view op;    // the op of the node it applies to
  Match match;
  Rewrite rewrite;
};

// For each op the rules are tried in this order; the first that matches applies. "view" is
// any of Reshape, Flatten, Squeeze, Unsqueeze.
const Rule kRules[] = {
    {"Identity(x) → x",                           "Identity",  always,            forward<0>},
    {"Dropout(x) → x (inference, mask unread)",   "Dropout",   drops_nothing,     forward<0>},
    {"x * 1 → x",                                 "Mul",       x_times_one,       forward<0>},
    {"1 * x → x",                                 "Mul",       one_times_x,       forward<1>},
    {"x + 0 → x",                                 "Add",       x_plus_zero,       forward<0>},
    {"0 + x → x",                                 "Add",       zero_plus_x,       forward<1>},
    {"x - 0 → x",                                 "Sub",       x_minus_zero,      forward<0>},
    {"x / 1 → x",                                 "Div",       x_over_one,        forward<0>},
    {"Cast(x) to x's type → x",                   "Cast",      keeps_type,        forward<0>},
    {"CastLike(x, y) to x's type → x",            "CastLike",  keeps_type,        forward<0>},
    {"Expand(x) to x's shape → x",                "Expand",    keeps_type,        forward<0>},
    {"Concat(x) → x",                             "Concat",    one_input,         forward<0>},
    {"Pad(x) by zeros → x",                       "Pad",       zero_pads,         forward<0>},
    {"Slice(x) of all of x → x",                  "Slice",     whole_slice,       forward<0>},
    {"Reshape(x) to x's shape → x",               "Reshape",   keeps_type,        forward<0>},
    {"Flatten(x) of a matrix → x",                "Flatten",   keeps_type,        forward<0>},
    {"Squeeze(x) with no size-1 axis → x",        "Squeeze",   keeps_type,        forward<0>},
    {"Unsqueeze(x) of no axes → x",               "Unsqueeze", keeps_type,        forward<0>},
    {"Squeeze(Unsqueeze(x, a), a) → x",           "Squeeze",   undoes_unsqueeze,  forward_inner},
    {"Unsqueeze(Squeeze(x, a), a) → x",           "Unsqueeze", undoes_squeeze,    forward_inner},
    {"Reshape(view(x), s) → Reshape(x, s)",       "Reshape",   of_view,           reshape_x},
    {"Transpose(x, identity) → x",                "Transpose", identity_perm,     forward<0>},
    {"Transpose(Transpose(x, p), p⁻¹) → x",       "Transpose", undoes_transpose,  forward_inner},
    {"Transpose(Transpose(x, p), q) → Transpose(x, p∘q)",
                                                  "Transpose", of_transpose,      compose},
};

// Applies the first rule that matches `node`; returns whether one did.
bool apply_first_rule(Graph& graph, Node& node) {
  for (const Rule& rule : kRules) {
    if (rule.op != node.op || node.inputs().empty() || !node.input(0)) continue;
    if (rule.match(graph, node)) {
      rule.rewrite(graph, node);
      return true;
    }
  }
  return false;
}

// For `minic explain`: the identity elements the rules leave because they broadcast x to
// a larger shape (x * 1 with a 1 of more axes is not x). The rules' own test is is_neutral;
// this lists the same six forms to say which one almost applied.
void note_broadcasting_neutrals(const Graph& graph) {
  if (!explain::recording()) return;
  struct Neutral {
    std::string_view op;
    size_t constant;  // which input is the constant
    double value;
    std::string_view rule;
  };
  static constexpr Neutral kNeutrals[] = {{"Mul", 1, 1.0, "x * 1"}, {"Mul", 0, 1.0, "1 * x"},
                                          {"Add", 1, 0.0, "x + 0"}, {"Add", 0, 0.0, "0 + x"},
                                          {"Sub", 1, 0.0, "x - 0"}, {"Div", 1, 1.0, "x / 1"}};
  for (const Node* node : graph.nodes()) {
    for (const Neutral& neutral : kNeutrals) {
      if (node->op != neutral.op || node->inputs().size() != 2) continue;
      const Value* constant = node->input(neutral.constant);
      const Value* x = node->input(1 - neutral.constant);
      std::optional<double> splat = constant ? splat_value(constant) : std::nullopt;
      if (!x || !splat || *splat != neutral.value || node->output(0)->type == x->type) continue;
      explain::note("{} %{} stays: {} would be %{}, but %{} ({}) broadcasts it from {} to {}",
                    node->op, node->output(0)->name(), neutral.rule, x->name(),
                    constant->name(), type_string(constant->type), shape_string(x->type.shape),
                    shape_string(node->output(0)->type.shape));
    }
  }
}

}  // namespace

void simplify(Graph& graph) {
  bool changed = false;
  for (bool walk_changed = true; walk_changed;) {
    walk_changed = false;
    // A rewrite erases only the node it is applied to and producers before it, so the nodes
    // still ahead in this list stay valid.
    for (Node* node : graph.nodes()) {
      if (apply_first_rule(graph, *node)) walk_changed = true;
    }
    changed = changed || walk_changed;
  }
  if (changed) graph.remove_unused_values();
  note_broadcasting_neutrals(graph);
}

MINIC_REGISTER_GRAPH_PASS("simplify", simplify,
                          "algebraic simplification by a table of rewrite rules (x*1 → x, ...)");

}  // namespace minic
