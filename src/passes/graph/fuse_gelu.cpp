// The `fuse-gelu` pass: replace GELU written out op by op with one Gelu node.
//
// Course module 2 (graph rewriting by patterns). Exporters write GELU as the formula it
// is, five or more small elementwise nodes; one Gelu node is one kernel, reads x once, and
// tells later stages what the subgraph means. Two formulas are recognised:
//
//   erf:  x * 0.5 * (1 + Erf(x / sqrt(2)))                          → Gelu(x)
//   tanh: x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   → Gelu(x) {approximate="tanh"}
//
// in the forms exporters emit: x / sqrt(2) or x * (1/sqrt(2)); x^3 as Pow(x, 3), x * x * x
// or x * (x * x); operands of Add and Mul in either order; and the product of x, 0.5 and
// (1 + ...) in any association -- (x * 0.5) * (1 + e), (x * (1 + e)) * 0.5,
// x * (0.5 * (1 + e)), 0.5 * x * (1 + e), (x * (1 + e)) / 2. Constants match within a
// relative 1e-4 (pattern::kConstantTolerance).
//
// Precondition: the graph verifies and its values have types. Gelu joined the ONNX op set
// in opset 20; minic lets passes create it in a graph of any opset, as its meaning does not
// depend on the opset.
// Invariant: the graph computes the same outputs (Gelu evaluates the same formula); every
// value outside a matched formula is untouched, and the formula's last value keeps its
// name. A formula whose intermediate values are used elsewhere is left alone. `minic
// explain` says why a product that looks like a GELU (one factor 1 + Erf or 1 + Tanh) stays.
//
// Algorithm, with every node tried as the root (the last Mul or Div) of a formula:
//   1. Read the root as a product: open Mul nodes (and Div by a constant) used only inside
//      it, one level down, multiplying constants into one scale. A GELU gives two
//      non-constant terms and a scale of 0.5.
//   2. One term must be x and the other 1 + Erf(...) or 1 + Tanh(...) of that same x.
//   3. The root becomes Gelu(x); the other nodes of the formula are erased
//      (pattern::rewrite_matches).
//
// Before:
//   %d = Div(%x, %sqrt2)          // %sqrt2 = const f32[] dense<[1.4142135]>
//   %e = Erf(%d)
//   %p = Add(%e, %one)
//   %m = Mul(%x, %p)
//   %y = Mul(%m, %half)
// After:
//   %y = Gelu(%x)
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/passes/graph/fuse_gelu.h"
#include "minic/passes/pass_registry.h"

#include "minic/support/explain.h"
#include "pattern.h"

#include <cmath>
#include <numbers>

namespace minic {

namespace {

using pattern::both_orders;
using pattern::splat_value;
using pattern::is_constant_near;
using pattern::match_op;
using pattern::used_only_by;

// --- step 1: the root as a product -----------------------------------------------------------

// Factors read from a small tree of Mul (and Div by a constant) nodes.
struct Product {
  double scale = 1.0;         // the constant factors multiplied together
  std::vector<Value*> terms;  // the other factors, in the order met
  std::vector<Node*> nodes;   // the Mul and Div nodes read below the root
};

// True if `node` multiplies: a Mul, or a Div by a nonzero constant.
bool is_product_step(const Node& node) {
  if (node.inputs().size() != 2 || node.outputs().size() != 1) return false;
  if (node.op == "Mul") return true;
  if (node.op != "Div") return false;
  std::optional<double> divisor = splat_value(node.input(1));
  return divisor && *divisor != 0;
}

void add_factors_of(const Graph& graph, const Node& step, int depth, Product& product);

// Adds `value`, an operand of `step`, to the product: a constant goes into the scale; a
// product step whose result only `step` uses is opened (while `depth` allows); anything else
// is a term.
void add_factor(const Graph& graph, Value* value, const Node& step, int depth,
                Product& product) {
  if (std::optional<double> number = splat_value(value)) {
    product.scale *= *number;
    return;
  }
  Node* producer = value ? value->producer() : nullptr;
  if (depth > 0 && producer && is_product_step(*producer) &&
      used_only_by(graph, value, &step)) {
    product.nodes.push_back(producer);
    add_factors_of(graph, *producer, depth - 1, product);
    return;
  }
  product.terms.push_back(value);
}

void add_factors_of(const Graph& graph, const Node& step, int depth, Product& product) {
  if (step.op == "Div") {
    product.scale /= *splat_value(step.input(1));
    add_factor(graph, step.input(0), step, depth, product);
    return;
  }
  for (Value* operand : step.inputs()) add_factor(graph, operand, step, depth, product);
}

// --- step 2: the two inner formulas ----------------------------------------------------------

// `value` = v * factor (either order) or v / (1 / factor): returns v and appends the node;
// null otherwise.
Value* unscale(const Value* value, double factor, std::vector<Node*>& nodes) {
  if (Node* mul = match_op(value, "Mul")) {
    for (auto [v, c] : both_orders(*mul)) {
      if (is_constant_near(c, factor)) {
        nodes.push_back(mul);
        return v;
      }
    }
  }
  if (Node* div = match_op(value, "Div"); div && is_constant_near(div->input(1), 1 / factor)) {
    nodes.push_back(div);
    return div->input(0);
  }
  return nullptr;
}

// `value` = x^3: Pow(x, 3), (x * x) * x or x * (x * x).
bool is_cube_of(const Value* value, const Value* x, std::vector<Node*>& nodes) {
  if (Node* pow = match_op(value, "Pow")) {
    if (pow->input(0) != x || !is_constant_near(pow->input(1), 3.0)) return false;
    nodes.push_back(pow);
    return true;
  }
  Node* outer = match_op(value, "Mul");
  if (!outer) return false;
  for (auto [a, b] : both_orders(*outer)) {
    Node* square = match_op(b, "Mul");
    if (a == x && square && square->input(0) == x && square->input(1) == x) {
      nodes.push_back(outer);
      nodes.push_back(square);
      return true;
    }
  }
  return false;
}

// `value` = 1 + f(...) with f an Erf or Tanh node: returns f and appends the Add.
Node* one_plus(const Value* value, std::string_view f, std::vector<Node*>& nodes) {
  Node* add = match_op(value, "Add");
  if (!add) return nullptr;
  for (auto [inner, one] : both_orders(*add)) {
    Node* node = match_op(inner, f);
    if (node && is_constant_near(one, 1.0)) {
      nodes.push_back(add);
      nodes.push_back(node);
      return node;
    }
  }
  return nullptr;
}

// `value` = 1 + Erf(x / sqrt(2)).
bool is_erf_term(const Value* value, const Value* x, std::vector<Node*>& nodes) {
  Node* erf = one_plus(value, "Erf", nodes);
  return erf && unscale(erf->input(0), 1 / std::numbers::sqrt2, nodes) == x;
}

// `value` = 1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)).
bool is_tanh_term(const Value* value, const Value* x, std::vector<Node*>& nodes) {
  Node* tanh = one_plus(value, "Tanh", nodes);
  if (!tanh) return false;
  const double sqrt_2_over_pi = std::sqrt(2 / std::numbers::pi);
  Node* sum = match_op(unscale(tanh->input(0), sqrt_2_over_pi, nodes), "Add");
  if (!sum) return false;
  for (auto [a, b] : both_orders(*sum)) {
    if (a != x) continue;
    std::vector<Node*> cube_nodes;
    const Value* cube = unscale(b, 0.044715, cube_nodes);
    if (cube && is_cube_of(cube, x, cube_nodes)) {
      nodes.push_back(sum);
      nodes.insert(nodes.end(), cube_nodes.begin(), cube_nodes.end());
      return true;
    }
  }
  return false;
}

// --- the matcher -----------------------------------------------------------------------------

// The Gelu `approximate` attribute for `term` = 1 + Erf(...) or 1 + Tanh(...) of x ("none" or
// "tanh"), appending the term's nodes; nullopt if it is neither.
std::optional<std::string> match_gelu_term(const Value* term, const Value* x,
                                           std::vector<Node*>& nodes) {
  std::vector<Node*> erf_nodes;
  if (is_erf_term(term, x, erf_nodes)) {
    nodes.insert(nodes.end(), erf_nodes.begin(), erf_nodes.end());
    return "none";
  }
  std::vector<Node*> tanh_nodes;
  if (is_tanh_term(term, x, tanh_nodes)) {
    nodes.insert(nodes.end(), tanh_nodes.begin(), tanh_nodes.end());
    return "tanh";
  }
  return std::nullopt;
}

// Says why `root`, a product of two terms, stays unfused when one term is 1 + Erf(...) or
// 1 + Tanh(...), which makes it look like a GELU: a constant factor other than 0.5, a
// result that broadcasts x, or an inner argument that is not GELU's.
void note_refusal(const Graph& graph, const Node& root, const Product& product) {
  if (!explain::recording()) return;
  // A product read only by another product step is part of a larger one, tried there.
  const Value* result = root.output(0);
  if (result->users().size() == 1 && !graph.is_graph_output(result) &&
      is_product_step(*result->users()[0])) {
    return;
  }
  for (auto [x, term] : {std::pair{product.terms[0], product.terms[1]},
                         std::pair{product.terms[1], product.terms[0]}}) {
    std::vector<Node*> unused;
    Node* inner = one_plus(term, "Erf", unused);
    if (!inner) inner = one_plus(term, "Tanh", unused);
    if (!inner || !x || !x->has_type) continue;
    std::string why;
    if (!pattern::is_near(product.scale, 0.5)) {
      why = fmt::format("its constant factor is {:g}, GELU's is 0.5", product.scale);
    } else if (result->type != x->type) {
      why = fmt::format("the result ({}) broadcasts %{} ({})", type_string(result->type),
                        x->name(), type_string(x->type));
    } else if (inner->op == "Erf") {
      why = fmt::format("Erf %{}'s argument is not %{} / sqrt(2)", inner->output(0)->name(),
                        x->name());
    } else {
      why = fmt::format("Tanh %{}'s argument is not sqrt(2/pi) * (%{} + 0.044715 * %{}^3)",
                        inner->output(0)->name(), x->name(), x->name());
    }
    explain::note("%{} stays, not Gelu: {}", result->name(), why);
    return;
  }
}

// Step 2 for a product of two terms scaled by 0.5: one term is x, the other 1 + f(x).
std::optional<pattern::Replacement> gelu_of(Node& root, const Product& product) {
  for (auto [x, term] : {std::pair{product.terms[0], product.terms[1]},
                         std::pair{product.terms[1], product.terms[0]}}) {
    if (!x || !x->has_type || !is_float(x->type.dtype)) continue;
    // A constant of more axes than x would have broadcast the result; Gelu(x) would not.
    if (root.output(0)->type != x->type) continue;
    std::vector<Node*> nodes = product.nodes;
    std::optional<std::string> approximate = match_gelu_term(term, x, nodes);
    if (!approximate) continue;
    nodes.push_back(&root);
    Attributes attributes;
    if (*approximate != "none") attributes["approximate"] = *approximate;
    return pattern::Replacement{std::move(nodes), "Gelu", {x}, std::move(attributes)};
  }
  return std::nullopt;
}

std::optional<pattern::Replacement> match_gelu(Graph& graph, Node& root) {
  // Step 1: x * 0.5 * (1 + f(x)) is a product of two terms scaled by 0.5.
  if (!is_product_step(root)) return std::nullopt;
  Product product;
  add_factors_of(graph, root, 1, product);
  if (product.terms.size() != 2) return std::nullopt;
  // Step 2: one term is x, the other 1 + f(x).
  if (pattern::is_near(product.scale, 0.5)) {
    if (std::optional<pattern::Replacement> gelu = gelu_of(root, product)) return gelu;
  }
  note_refusal(graph, root, product);
  return std::nullopt;
}

}  // namespace

void fuse_gelu(Graph& graph) { pattern::rewrite_matches(graph, match_gelu); }

MINIC_REGISTER_GRAPH_PASS("fuse-gelu", fuse_gelu,
                          "replace the Erf- and Tanh-based GELU subgraphs by one Gelu");

}  // namespace minic
