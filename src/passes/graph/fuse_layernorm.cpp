// The `fuse-layernorm` pass: replace layer normalisation written out op by op with one
// LayerNormalization node.
//
// Course module 2 (graph rewriting by patterns). Models exported before opset 17, and
// exporters that write the formula rather than the op, spell layer normalisation as seven
// to nine nodes:
//
//   mean = ReduceMean(x, axes)            d = x - mean
//   var  = ReduceMean(d^2, axes)          (d^2 as Pow(d, 2) or Mul(d, d))
//   y    = d / Sqrt(var + eps)  [* gamma]  [+ beta]
//
// One LayerNormalization(x, gamma, beta) {axis, epsilon} computes the same thing in one
// kernel that reads each row once. The reduced axes must be the trailing axes of x (a
// suffix of its dimensions, which is what LayerNormalization normalises: axis = -(count)),
// the same for both ReduceMeans, with keepdims = 1. They are read from the `axes`
// attribute (before opset 18) or from a constant axes input (opset 18 on). gamma and beta
// must be constants that broadcast over the normalised axes only; without them the node
// gets a Scale of ones and no B (LayerNormalization's B is optional).
//
// Precondition: the graph verifies and its values have types. LayerNormalization joined
// the ONNX op set in opset 17; minic lets passes create it in a graph of any opset, as its
// meaning does not depend on the opset.
// Invariant: the graph computes the same outputs up to float rounding (the fused kernel
// accumulates in double); the formula's last value keeps its name; a formula whose
// intermediate values are used elsewhere is left alone. Once d / Sqrt(...) with
// d = x - ReduceMean(x) is found, `minic explain` says why a formula stays.
//
// Algorithm, with every Div node tried as the centre of a formula:
//   1. Match d / Sqrt(var + eps) upwards: d = x - ReduceMean(x), var = ReduceMean(d^2).
//   2. Check the two ReduceMeans: same axes, trailing, keepdims = 1.
//   3. Extend downwards: a Mul by a constant gamma, then an Add of a constant beta, each
//      the only user of the value before it.
//   4. The last matched node becomes LayerNormalization; the others are erased
//      (pattern::rewrite_matches).
//
// Before:
//   %mean = ReduceMean(%x) {axes=[-1]}
//   %d    = Sub(%x, %mean)
//   %sq   = Pow(%d, %two)
//   %var  = ReduceMean(%sq) {axes=[-1]}
//   %ve   = Add(%var, %eps)             // %eps = const f32[] dense<[1e-05]>
//   %std  = Sqrt(%ve)
//   %n    = Div(%d, %std)
//   %s    = Mul(%n, %gamma)
//   %y    = Add(%s, %beta)
// After:
//   %y = LayerNormalization(%x, %gamma, %beta) {axis=-1, epsilon=1e-05}
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/passes/graph/fuse_layernorm.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/op.h"
#include "minic/support/explain.h"
#include "pattern.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

namespace minic {

namespace {

using pattern::both_orders;
using pattern::splat_value;
using pattern::is_constant_near;
using pattern::match_op;
using pattern::sole_user;

// --- step 2: the reduced axes ----------------------------------------------------------------

// The axes a ReduceMean reduces, in [0, rank) and sorted, if it keeps the reduced axes and
// they are known: from the `axes` attribute before opset 18, from the optional axes input,
// a constant, from opset 18 on (as src/ops/reduce.cpp reads them). nullopt otherwise
// (keepdims = 0, axes computed at run time, the identity form).
std::optional<std::vector<int64_t>> kept_reduced_axes(const Node& reduce, int opset,
                                                      int64_t rank) {
  NodeContext ctx(reduce, opset);
  if (ctx.get_int("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (opset < 18) {
    axes = ctx.get_ints("axes", {});
  } else if (reduce.has_input(1)) {
    const Value* input = reduce.input(1);
    if (!input->is_constant() || input->type.rank() > 1) return std::nullopt;
    axes = input->constant->to_int64_vector();
  }
  if (axes.empty()) {
    if (ctx.get_int("noop_with_empty_axes", 0) != 0) return std::nullopt;
    axes.resize(static_cast<size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    if (axis < 0) axis += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// True if `axes` (sorted) are the last axes.size() axes of a rank-`rank` tensor.
bool are_trailing(const std::vector<int64_t>& axes, int64_t rank) {
  int64_t first = rank - static_cast<int64_t>(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != first + static_cast<int64_t>(i)) return false;
  }
  return !axes.empty();
}

// --- step 3: gamma and beta ------------------------------------------------------------------

// `value` as a LayerNormalization parameter (Scale or B) for normalised axes of shape
// `normalized`: a constant of x's element type whose shape, without leading 1s, broadcasts
// to `normalized`. Returns the constant, reshaped to drop those leading 1s if it had more
// axes than `normalized`; null if `value` does not fit.
Value* as_parameter(Graph& graph, Value* value, const TensorType& x, const Shape& normalized) {
  if (!value->is_constant() || value->type.dtype != x.dtype) return nullptr;
  Shape shape = value->type.shape;
  while (shape.size() > normalized.size() && shape.front() == 1) shape.erase(shape.begin());
  if (shape.size() > normalized.size()) return nullptr;
  for (size_t i = 1; i <= shape.size(); ++i) {
    int64_t dim = shape[shape.size() - i];
    if (dim != 1 && dim != normalized[normalized.size() - i]) return nullptr;
  }
  if (shape == value->type.shape) return value;
  return graph.add_constant(graph.unique_name(value->name()), value->constant->reshaped(shape));
}

// The Mul or Add that is the only user of `value` and combines it with a constant that fits
// as a parameter; sets `parameter`. Null if there is none.
Node* affine_step(Graph& graph, const Value* value, std::string_view op, const TensorType& x,
                  const Shape& normalized, Value*& parameter) {
  Node* step = sole_user(graph, value, op);
  if (!step || step->output(0)->type != x) return nullptr;
  for (auto [operand, other] : both_orders(*step)) {
    if (operand != value) continue;
    parameter = as_parameter(graph, other, x, normalized);
    if (parameter) return step;
    explain::note("{} %{} stays after the LayerNormalization: %{} ({}) is not a constant "
                  "over the normalised axes {}", op, step->output(0)->name(), other->name(),
                  type_string(other->type), shape_string(normalized));
  }
  return nullptr;
}

// --- the matcher -----------------------------------------------------------------------------

// `value` = d^2: Pow(d, 2) or Mul(d, d).
Node* square_of(const Value* value, const Value* d) {
  if (Node* pow = match_op(value, "Pow")) {
    return pow->input(0) == d && is_constant_near(pow->input(1), 2.0) ? pow : nullptr;
  }
  Node* mul = match_op(value, "Mul");
  return mul && mul->input(0) == d && mul->input(1) == d ? mul : nullptr;
}

// Says why the formula at `div`, d / Sqrt(...) with d = x - ReduceMean(x), stays unfused.
std::nullopt_t refuse(const Node& div, const std::string& why) {
  explain::note("%{} stays, not LayerNormalization: {}", div.output(0)->name(), why);
  return std::nullopt;
}

// Step 2: how many trailing axes of x the two ReduceMeans `mean` and `variance` both
// reduce and keep; nullopt (and why, for `minic explain`) if they do not.
std::optional<int64_t> trailing_axes(const Graph& graph, const Node& div, const Node& mean,
                                     const Node& variance, const Value& x) {
  const int64_t rank = x.type.rank();
  std::optional<std::vector<int64_t>> axes = kept_reduced_axes(mean, graph.opset, rank);
  if (!axes) {
    return refuse(div, fmt::format("the axes ReduceMean %{} reduces are not known constants "
                                   "kept in the result (keepdims=1)", mean.output(0)->name()));
  }
  if (!are_trailing(*axes, rank)) {
    return refuse(div, fmt::format("%{} reduces axes [{}] of the {}-d %{}, not its last axes",
                                   mean.output(0)->name(), fmt::join(*axes, ", "), rank,
                                   x.name()));
  }
  if (kept_reduced_axes(variance, graph.opset, rank) != axes) {
    return refuse(div, fmt::format("%{} and %{} reduce different axes", mean.output(0)->name(),
                                   variance.output(0)->name()));
  }
  return static_cast<int64_t>(axes->size());
}

std::optional<pattern::Replacement> match_layernorm(Graph& graph, Node& div) {
  // Step 1: d / Sqrt(var + eps), d = x - ReduceMean(x), var = ReduceMean(d^2).
  if (div.op != "Div" || div.inputs().size() != 2) return std::nullopt;
  Value* d = div.input(0);
  Node* sub = match_op(d, "Sub");
  Node* sqrt = match_op(div.input(1), "Sqrt");
  if (!sub || !sqrt) return std::nullopt;
  Value* x = sub->input(0);
  Node* mean = match_op(sub->input(1), "ReduceMean");
  if (!mean || mean->input(0) != x) return std::nullopt;
  // From here on the formula is recognisable, and `minic explain` says why it stays.
  Node* add_eps = match_op(sqrt->input(0), "Add");
  Node* variance = nullptr;
  std::optional<double> epsilon;
  if (add_eps) {
    for (auto [var, eps] : both_orders(*add_eps)) {
      variance = match_op(var, "ReduceMean");
      epsilon = splat_value(eps);
      if (variance && epsilon) break;
    }
  }
  if (!variance || !epsilon) {
    return refuse(div, fmt::format("the Sqrt's argument %{} is not a ReduceMean plus a "
                                   "constant epsilon", sqrt->input(0)->name()));
  }
  Node* square = square_of(variance->input(0), d);
  if (!square) {
    return refuse(div, fmt::format("%{} is the mean of %{}, which is not %{} squared",
                                   variance->output(0)->name(), variance->input(0)->name(),
                                   d->name()));
  }
  const TensorType& type = x->type;
  if (!is_float(type.dtype) || d->type != type || div.output(0)->type != type) {
    return refuse(div, fmt::format("%{} ({}) is not a float tensor of the result's type {}",
                                   x->name(), type_string(type),
                                   type_string(div.output(0)->type)));
  }

  // Step 2: both ReduceMeans reduce the same trailing axes and keep them.
  std::optional<int64_t> trailing = trailing_axes(graph, div, *mean, *variance, *x);
  if (!trailing) return std::nullopt;
  const int64_t count = *trailing;
  const Shape normalized(type.shape.end() - count, type.shape.end());

  // Step 3: the optional * gamma and + beta after it. (Constants are added to the graph only
  // once the match is known to be safe.)
  std::vector<Node*> nodes = {mean, sub, square, variance, add_eps, sqrt, &div};
  if (const Value* escaping = pattern::escaping_value(graph, nodes)) {
    pattern::note_escaping(div, "LayerNormalization", *escaping);
    return std::nullopt;
  }
  Value* scale = nullptr;
  Value* bias = nullptr;
  if (Node* mul = affine_step(graph, nodes.back()->output(0), "Mul", type, normalized, scale)) {
    nodes.push_back(mul);
  }
  if (Node* add = affine_step(graph, nodes.back()->output(0), "Add", type, normalized, bias)) {
    nodes.push_back(add);
  }
  if (!scale) {
    Tensor ones = Tensor::from_vector(normalized, std::vector<float>(num_elements(normalized), 1));
    scale = graph.add_constant(graph.unique_name(x->name() + "_scale"), ones.cast(type.dtype));
  }

  std::vector<Value*> inputs = {x, scale};
  if (bias) inputs.push_back(bias);
  Attributes attributes;
  attributes["axis"] = -count;
  attributes["epsilon"] = static_cast<float>(*epsilon);
  return pattern::Replacement{std::move(nodes), "LayerNormalization", std::move(inputs),
                              std::move(attributes)};
}

}  // namespace

void fuse_layernorm(Graph& graph) { pattern::rewrite_matches(graph, match_layernorm); }

MINIC_REGISTER_GRAPH_PASS("fuse-layernorm", fuse_layernorm,
                          "replace ReduceMean/Sub/Pow/Sqrt/Div chains by one LayerNormalization");

}  // namespace minic
