// The `fuse-attention` pass. Course module 4; see the header for what and why.
//
// Transformer exporters write attention head by head as five ops. Each of them is a kernel
// of its own after fuse-ops (the first product with its scale and mask, the Softmax, the
// second product), and each pass over the scores -- S x T per head, larger than the
// queries, keys and values together when S = T = 128 and D = 64 -- goes through memory.
// As one op, one kernel computes a few rows of scores at a time and keeps them in L1
// (src/schedule/rules/cpu_attention.cpp).
//
// Algorithm, with every MatMul tried as the root (the product with V):
//   1. its first input is a Softmax along the last axis;
//   2. the Softmax's input is, optionally, x + mask (either order), and x, optionally,
//      s / c or s * c (either order) with c a scalar constant;
//   3. s is a MatMul(Q, K_t), each operand optionally times a scalar constant (PyTorch's
//      scaled_dot_product_attention exports Q * sqrt(scale) and K_t * sqrt(scale)), whose
//      operands, and V, have the types the op takes (float32, one rank, the same leading
//      dimensions), and the mask broadcasts to the scores' shape;
//   4. the root becomes minic.FusedAttention(Q, K_t, V[, mask]) {scale}, the other nodes
//      are erased (pattern::rewrite_matches, which keeps a match only if no intermediate
//      value is used elsewhere).
//
// Before:                                     After:
//   %s = MatMul(%q, %k_t)                       %y = minic.FusedAttention(%q, %k_t, %v,
//   %x = Div(%s, %eight)   // const f32[] 8.0          %mask) {scale=0.125}
//   %a = Add(%x, %mask)
//   %p = Softmax(%a) {axis=-1}
//   %y = MatMul(%p, %v)
//
// Chapter: docs/module4-schedules.md#9-fused-attention
#include "minic/passes/graph/fuse_attention.h"
#include "minic/passes/pass_registry.h"

#include "minic/ops/fused_attention.h"
#include "minic/support/explain.h"
#include "pattern.h"

#include <algorithm>

namespace minic {
namespace {

using pattern::both_orders;
using pattern::match_op;
using pattern::splat_value;

// True if the Softmax normalises along its input's last axis (in every opset: before 13,
// axis = rank - 1 makes each group the last axis alone).
bool softmax_along_last_axis(const Node& softmax, int opset) {
  const int64_t rank = softmax.input(0)->type.rank();
  int64_t axis = edit::int_attribute(softmax, "axis", opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

// Why Q, K_t, V and the mask cannot be the op's inputs; empty if they can.
std::string unfit_operands(const Value* q, const Value* k, const Value* v, const Value* mask,
                           const Value* scores) {
  for (const Value* value : {q, k, v, mask}) {
    if (value && value->type.dtype != DType::f32) {
      return fmt::format("%{} is {}, not float32", value->name(), type_string(value->type));
    }
  }
  const Shape& qs = q->type.shape;
  const int64_t rank = static_cast<int64_t>(qs.size());
  if (rank < 2 || k->type.rank() != rank || v->type.rank() != rank) {
    return "the products' operands have different ranks";
  }
  auto leading = [&](const Value* value) {
    return std::equal(qs.begin(), qs.end() - 2, value->type.shape.begin());
  };
  if (!leading(k) || !leading(v)) return "the products' operands broadcast their leading axes";
  if (mask && !broadcasts_to(mask->type.shape, scores->type.shape)) {
    return fmt::format("the mask %{} broadcasts the scores", mask->name());
  }
  return "";
}

// `value` = u * c (either order) with c a scalar constant, read by `product` alone:
// returns u, multiplies `scale` by c and appends the Mul; `value` itself otherwise.
Value* unscaled(const Graph& graph, Value* value, const Node& product, double& scale,
                std::vector<Node*>& nodes) {
  if (Node* mul = match_op(value, "Mul"); mul && pattern::used_only_by(graph, value, &product)) {
    for (auto [u, c] : both_orders(*mul)) {
      if (std::optional<double> factor = splat_value(c); factor && !splat_value(u)) {
        scale *= *factor;
        nodes.push_back(mul);
        return u;
      }
    }
  }
  return value;
}

std::optional<pattern::Replacement> match_attention(Graph& graph, Node& root) {
  if (root.op != "MatMul" || root.inputs().size() != 2) return std::nullopt;
  // 1. The product with V of a Softmax along the last axis.
  Node* softmax = match_op(root.input(0), "Softmax");
  if (!softmax || !softmax_along_last_axis(*softmax, graph.opset)) return std::nullopt;
  std::vector<Node*> nodes = {softmax};
  // 2. An optional mask, then an optional scale.
  Value* x = softmax->input(0);
  Value* mask = nullptr;
  if (Node* add = match_op(x, "Add")) {
    for (auto [a, b] : both_orders(*add)) {
      if (match_op(a, "MatMul") || match_op(a, "Div") || match_op(a, "Mul")) {
        x = a;
        mask = b;
        nodes.push_back(add);
        break;
      }
    }
  }
  double scale = 1.0;
  if (Node* div = match_op(x, "Div")) {
    std::optional<double> c = splat_value(div->input(1));
    if (c && *c != 0) {
      scale = 1.0 / *c;
      x = div->input(0);
      nodes.push_back(div);
    }
  } else if (Node* mul = match_op(x, "Mul")) {
    for (auto [a, b] : both_orders(*mul)) {
      if (std::optional<double> c = splat_value(b)) {
        scale = *c;
        x = a;
        nodes.push_back(mul);
        break;
      }
    }
  }
  // 3. The scores' product, each operand optionally scaled (PyTorch's exporter multiplies
  //    Q and K_t by sqrt(scale) each), and operands the op takes.
  Node* scores = match_op(x, "MatMul");
  if (!scores) return std::nullopt;
  nodes.push_back(scores);
  Value* q = unscaled(graph, scores->input(0), *scores, scale, nodes);
  Value* k = unscaled(graph, scores->input(1), *scores, scale, nodes);
  Value* v = root.input(1);
  const std::string why = unfit_operands(q, k, v, mask, scores->output(0));
  if (!why.empty()) {
    explain::note("%{} stays, not minic.FusedAttention: {}", root.output(0)->name(), why);
    return std::nullopt;
  }
  nodes.push_back(&root);
  std::vector<Value*> inputs = {q, k, v};
  if (mask) inputs.push_back(mask);
  return pattern::Replacement{std::move(nodes), kFusedAttentionOp, std::move(inputs),
                              {{"scale", static_cast<float>(scale)}}};
}

}  // namespace

void fuse_attention(Graph& graph, const Target& target) {
  if (!target.is_cpu()) return;
  pattern::rewrite_matches(graph, match_attention);
}

MINIC_REGISTER_GRAPH_PASS("fuse-attention", fuse_attention,
                          "CPU: MatMul, scale, mask, Softmax and MatMul (scaled dot-product "
                          "attention) replaced by one minic.FusedAttention");

}  // namespace minic
