// The `fold-batchnorm` pass: fold inference BatchNormalization into the Conv, Gemm or
// MatMul before it.
//
// Course module 2. At inference a BatchNormalization is a per-channel affine map,
//
//   y = (x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + B[c] = x * s[c] + t[c]
//   with s = scale / sqrt(var + epsilon) and t = B - mean * s,
//
// along axis 1. When x is a Conv's result, output channel c of the Conv is a dot product
// with the weights W[c] plus the bias b[c], so scaling those weights and bias gives the
// normalised result directly: W'[c] = W[c] * s[c] and b'[c] = b[c] * s[c] + t[c]. The same
// holds for a Gemm (per column n of its [M, N] result: the columns of B, or the rows when
// transB = 1, and the bias C) and for a MatMul by a [K, N] matrix, optionally followed by
// the Add of a bias, whose [M, N] result's axis 1 is its last axis.
//
// Precondition: types are known. The fold fires only when the BatchNormalization is in
// inference form and every parameter (scale, B, mean, var) is a constant; the weights and
// bias folded into must be constants, and the Conv's (Gemm's, MatMul's, Add's) result must
// be read by the BatchNormalization alone -- another reader needs the unnormalised value.
//
// Invariant: the graph computes the same function up to float rounding: the new weights
// and bias are computed in double and rounded once to the weights' element type.
//
// A BatchNormalization with constant parameters that cannot fold (after a pool or a Concat,
// or after a Conv whose result has another reader) is written in its inference form
// instead, x * s + t: a Mul and an Add by per-channel constants of shape [C, 1, ..., 1], which
// fold-conv-affine, constant folding and fusion handle like any other arithmetic. After
// this pass no inference BatchNormalization with constant parameters remains.
//
// Algorithm: for each BatchNormalization in node order, compute s and t; try the Conv fold,
// the Gemm fold, the MatMul fold; if none applies, write x * s + t (and say why for
// `minic explain`, as for a BatchNormalization that stays). Then restore the
// topological order if nodes were added, and drop the replaced constants.
//
// Before:
//   %c = Conv(%x, %w) : f32[1,8,4,4]
//   %y = BatchNormalization(%c, %scale, %b, %mean, %var) : f32[1,8,4,4]
// After (%w_bn is %w scaled by s per output channel, %w_bias_bn is t):
//   %y = Conv(%x, %w_bn, %w_bias_bn) : f32[1,8,4,4]
//
// Chapter: docs/module2-graph-passes.md#3-folding-arithmetic-into-weights-fold-batchnorm-fold-conv-affine
#include "minic/passes/graph/fold_batchnorm.h"
#include "minic/passes/pass_registry.h"

#include "graph_edit.h"
#include "minic/ops/op.h"
#include "minic/support/explain.h"

#include <cmath>

namespace minic {

namespace {

// y = x * scale[c] + shift[c] along axis 1: what an inference BatchNormalization computes.
struct ChannelAffine {
  std::vector<double> scale;
  std::vector<double> shift;
};

// The affine map of `bn`, or nullopt if it is not in inference form or a parameter is not a
// constant with one entry per channel. Reads the attributes as the op does.
std::optional<ChannelAffine> read_batchnorm(const Graph& graph, const Node& bn) {
  NodeContext ctx(bn, graph.opset);
  if (bn.inputs().size() != 5 || bn.outputs().size() != 1 || !bn.input(0)) return std::nullopt;
  if (graph.opset < 7 && ctx.get_int("is_test", 0) == 0) return std::nullopt;
  if (graph.opset >= 14 && ctx.get_int("training_mode", 0) != 0) return std::nullopt;
  if (ctx.get_int("spatial", 1) != 1) return std::nullopt;
  const TensorType& x = bn.input(0)->type;
  if (x.rank() < 2 || !is_float(x.dtype)) return std::nullopt;
  const int64_t channels = x.shape[1];
  std::vector<std::vector<double>> params;  // scale, B, mean, var
  for (size_t i = 1; i < 5; ++i) {
    const Value* param = bn.input(i);
    if (!param || !param->is_constant() || param->type.shape != Shape{channels}) {
      return std::nullopt;
    }
    params.push_back(param->constant->to_double_vector());
  }
  const double epsilon = ctx.get_float("epsilon", 1e-5f);
  ChannelAffine affine;
  for (int64_t c = 0; c < channels; ++c) {
    const double s = params[0][c] / std::sqrt(params[3][c] + epsilon);
    affine.scale.push_back(s);
    affine.shift.push_back(params[1][c] - params[2][c] * s);
  }
  return affine;
}

// The producer of `value` if its op is `op` and `value` is read by `reader` alone.
Node* sole_producer(const Graph& graph, const Value* value, std::string_view op,
                    const Node* reader) {
  Node* producer = value->producer();
  if (!producer || producer->op != op || !edit::used_only_by(graph, value, reader)) return nullptr;
  return producer;
}

// The bias that turns (product + factor * bias) into (product * scale + shift) over an
// [M, N] result, column n scaled by scale[n]: factor * bias * scale[n] + shift[n]. `bias`
// (optional) broadcasts to [M, N]; the result is [N], or [M, N] when `bias` varies along
// the rows.
std::pair<Shape, std::vector<double>> scaled_bias(const Tensor* bias, double factor, int64_t rows,
                                                  const ChannelAffine& affine) {
  const int64_t columns = static_cast<int64_t>(affine.scale.size());
  const bool per_row = bias && bias->rank() == 2 && bias->shape()[0] != 1;
  const int64_t bias_columns = bias && bias->rank() > 0 ? bias->shape().back() : 1;
  Shape shape = per_row ? Shape{rows, columns} : Shape{columns};
  std::vector<double> values;
  for (int64_t i = 0; i < (per_row ? rows : 1); ++i) {
    for (int64_t j = 0; j < columns; ++j) {
      double b = 0.0;
      if (bias) b = bias->as_double(i * bias_columns + (bias_columns == 1 ? 0 : j));
      values.push_back(factor * b * affine.scale[j] + affine.shift[j]);
    }
  }
  return {shape, values};
}

// Conv(x, W, b) → BatchNormalization  ⇒  Conv(x, W * s, b * s + t).
bool fold_into_conv(Graph& graph, Node& bn, const ChannelAffine& affine) {
  Value* result = bn.input(0);
  Node* conv = sole_producer(graph, result, "Conv", &bn);
  if (!conv) return false;
  const Value* weight = conv->input(1);
  const Value* bias = conv->input(2);
  const int64_t channels = static_cast<int64_t>(affine.scale.size());
  if (!weight || !weight->is_constant() || weight->type.rank() < 1 ||
      weight->type.shape[0] != channels || (bias && !bias->is_constant())) {
    return false;
  }
  std::vector<double> new_bias(affine.shift);
  if (bias) {
    std::vector<double> old_bias = bias->constant->to_double_vector();
    if (static_cast<int64_t>(old_bias.size()) != channels) return false;
    for (int64_t c = 0; c < channels; ++c) new_bias[c] += old_bias[c] * affine.scale[c];
  }
  const DType dtype = weight->type.dtype;
  graph.set_input(conv, 1,
                  edit::add_constant_from_doubles(
                      graph, weight->name() + "_bn", dtype, weight->type.shape,
                      edit::scale_along_axis(*weight->constant, 0, affine.scale)));
  const std::string bias_hint = bias ? bias->name() + "_bn" : weight->name() + "_bias_bn";
  graph.set_input(conv, 2,
                  edit::add_constant_from_doubles(graph, bias_hint, dtype, {channels}, new_bias));
  edit::replace_node(graph, &bn, bn.output(0), result);
  return true;
}

// Gemm(A, B, C) → BatchNormalization over its N columns  ⇒  Gemm(A, B', C') with B's columns
// (its rows when transB = 1) scaled by s, C' = beta * C * s + t and beta = 1.
bool fold_into_gemm(Graph& graph, Node& bn, const ChannelAffine& affine) {
  Value* result = bn.input(0);
  Node* gemm = sole_producer(graph, result, "Gemm", &bn);
  if (!gemm) return false;
  const Value* weight = gemm->input(1);
  const Value* bias = gemm->input(2);
  if (!weight || !weight->is_constant() || weight->type.rank() != 2 ||
      (bias && !bias->is_constant())) {
    return false;
  }
  NodeContext ctx(*gemm, graph.opset);
  const int64_t column_axis = ctx.get_int("transB", 0) != 0 ? 0 : 1;
  const double beta = ctx.get_float("beta", 1.0f);
  const DType dtype = weight->type.dtype;
  graph.set_input(gemm, 1,
                  edit::add_constant_from_doubles(
                      graph, weight->name() + "_bn", dtype, weight->type.shape,
                      edit::scale_along_axis(*weight->constant, column_axis, affine.scale)));
  auto [shape, values] = scaled_bias(bias ? bias->constant.get() : nullptr, beta,
                                     result->type.shape[0], affine);
  const std::string bias_hint = bias ? bias->name() + "_bn" : weight->name() + "_bias_bn";
  graph.set_input(gemm, 2,
                  edit::add_constant_from_doubles(graph, bias_hint, dtype, shape, values));
  gemm->attributes.erase("beta");  // 1, the default
  edit::replace_node(graph, &bn, bn.output(0), result);
  return true;
}

// MatMul(x, W) [→ Add(·, bias)] → BatchNormalization, W a [K, N] constant and the result
// [M, N]  ⇒  MatMul(x, W') → Add(·, bias'), with W's columns scaled by s and
// bias' = bias * s + t. Without an Add, one is created (`added` is then set).
bool fold_into_matmul(Graph& graph, Node& bn, const ChannelAffine& affine, bool& added) {
  Value* result = bn.input(0);
  if (result->type.rank() != 2 || !result->producer()) return false;
  Node* add = sole_producer(graph, result, "Add", &bn);
  Value* product = result;
  Value* bias = nullptr;
  size_t bias_slot = 1;
  if (add) {
    for (size_t slot : {size_t{0}, size_t{1}}) {
      Value* candidate = add->input(1 - slot);
      if (add->input(slot)->is_constant() && add->input(slot)->type.rank() <= 2 &&
          candidate->type == result->type && sole_producer(graph, candidate, "MatMul", add)) {
        bias = add->input(slot);
        bias_slot = slot;
        product = candidate;
        break;
      }
    }
    if (!bias) return false;
  }
  Node* matmul = sole_producer(graph, product, "MatMul", add ? add : &bn);
  if (!matmul) return false;
  const Value* weight = matmul->input(1);
  if (!weight->is_constant() || weight->type.rank() != 2) return false;
  const DType dtype = weight->type.dtype;
  graph.set_input(matmul, 1,
                  edit::add_constant_from_doubles(
                      graph, weight->name() + "_bn", dtype, weight->type.shape,
                      edit::scale_along_axis(*weight->constant, 1, affine.scale)));
  auto [shape, values] = scaled_bias(bias ? bias->constant.get() : nullptr, 1.0,
                                     result->type.shape[0], affine);
  const std::string bias_hint = bias ? bias->name() + "_bn" : weight->name() + "_bias_bn";
  Value* new_bias = edit::add_constant_from_doubles(graph, bias_hint, dtype, shape, values);
  const bool create_add = add == nullptr;
  if (add) {
    graph.set_input(add, bias_slot, new_bias);
  } else {
    add = graph.add_node("Add", {product, new_bias},
                         {graph.unique_name(product->name() + "_bias")});
    add->output(0)->type = product->type;
    add->output(0)->has_type = true;
    added = true;
  }
  edit::replace_node(graph, &bn, bn.output(0), add->output(0), /*take_name=*/create_add);
  return true;
}

// BatchNormalization(x) → x * s + t, with s and t constants of shape [C, 1, ..., 1].
void write_as_affine(Graph& graph, Node& bn, const ChannelAffine& affine) {
  Value* x = bn.input(0);
  Value* y = bn.output(0);
  Shape shape(static_cast<size_t>(x->type.rank() - 1), 1);
  shape[0] = static_cast<int64_t>(affine.scale.size());
  const DType dtype = x->type.dtype;
  Value* scale = edit::add_constant_from_doubles(graph, y->name() + "_scale", dtype, shape,
                                                 affine.scale);
  Value* shift = edit::add_constant_from_doubles(graph, y->name() + "_shift", dtype, shape,
                                                 affine.shift);
  Node* mul = graph.add_node("Mul", {x, scale}, {graph.unique_name(y->name() + "_scaled")});
  Node* add = graph.add_node("Add", {mul->output(0), shift},
                             {graph.unique_name(y->name() + "_shifted")});
  for (Node* node : {mul, add}) {
    node->output(0)->type = x->type;
    node->output(0)->has_type = true;
  }
  edit::replace_node(graph, &bn, y, add->output(0), /*take_name=*/true);
}

// Why `bn` (with constant parameters) did not fold into the node before it, for `minic
// explain`: it is then written as x * s + t.
std::string no_fold_reason(const Graph& graph, const Node& bn) {
  const Value* x = bn.input(0);
  const Node* producer = x->producer();
  if (!producer) return fmt::format("its input %{} is a graph input", x->name());
  if (!edit::used_only_by(graph, x, &bn)) {
    return fmt::format("%{} has another reader, which needs the value before normalisation",
                       x->name());
  }
  const std::string_view op = producer->op;
  if (op == "Conv" || op == "Gemm" || op == "MatMul" || op == "Add") {
    return fmt::format("{} %{} does not take it: its weights or bias are not constants of "
                       "the shape the fold needs", producer->op, x->name());
  }
  return fmt::format("it follows {} %{}, which has no weights to scale", producer->op,
                     x->name());
}

}  // namespace

void fold_batchnorm(Graph& graph) {
  bool changed = false;
  bool added = false;
  // A fold erases only the BatchNormalization it handles, so the nodes ahead stay valid;
  // the nodes it adds are appended, after the end of this list.
  for (Node* node : graph.nodes()) {
    if (node->op != "BatchNormalization") continue;
    std::optional<ChannelAffine> affine = read_batchnorm(graph, *node);
    if (!affine) {
      explain::note("BatchNormalization %{} stays: it is not in inference form with a "
                    "constant scale, bias, mean and variance of one entry per channel",
                    node->output(0)->name());
      continue;
    }
    if (!fold_into_conv(graph, *node, *affine) && !fold_into_gemm(graph, *node, *affine) &&
        !fold_into_matmul(graph, *node, *affine, added)) {
      explain::note("BatchNormalization %{} is written as x * s + t: {}",
                    node->output(0)->name(), no_fold_reason(graph, *node));
      write_as_affine(graph, *node, *affine);
      added = true;
    }
    changed = true;
  }
  if (added) graph.sort_topologically();
  if (changed) graph.remove_unused_values();
}

MINIC_REGISTER_GRAPH_PASS("fold-batchnorm", fold_batchnorm,
                          "fold inference BatchNormalization into the Conv or Gemm before it");

}  // namespace minic
