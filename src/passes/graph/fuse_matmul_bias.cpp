// The `fuse-matmul-bias` pass: merge a MatMul by a weight matrix and the Add of a bias
// after it into one Gemm.
//
// Course module 2 (graph rewriting by patterns). Exporters write a fully connected layer on
// a 2-D input either as Gemm or as MatMul followed by Add; Gemm(A, B, C) computes
// A * B + C in one node, so the bias is added as each output element is produced instead
// of in a second pass over the result:
//
//   Add(MatMul(A, B), bias)  →  Gemm(A, B, bias)
//
// when A is 2-D [M,K], B a constant 2-D weight [K,N], bias a constant that Gemm's C accepts
// (it broadcasts to [M,N] one way: [N], [1,N], [M,1], [M,N] or a scalar) and the Add's result
// has the MatMul's shape, with a floating-point element type. The MatMul's result must have
// no other user.
//
// What this pass leaves alone, and why: a MatMul whose A has leading axes, such as BERT's
// [1,128,256] activations times a [256,1024] weight. It could become
// Reshape(A, [128,256]) → Gemm → Reshape back to [1,128,1024], and ONNX Runtime's
// MatMulAddFusion does that for its CPU kernels, whose MatMul and Add are two separate
// passes over memory. minic does not need it: operator fusion (fuse-ops) already puts a
// MatMul (out-fusable) and the broadcast Add after it in one kernel, and a MatMul by a 2-D
// weight is the same [M,K] x [K,N] product with the leading axes folded into M, so its
// kernel loses nothing by staying a MatMul. The two Reshapes would only add nodes, and the
// one after the Gemm would sit between it and the elementwise ops (a Gelu, a residual Add)
// that fusion should pull into the same kernel. So leading axes stay as they are, as in
// onnx-mlir's MatMul+Add → Gemm rule, which also requires 2-D operands.
//
// Precondition: the graph verifies and its values have types.
// Invariant: the graph computes the same outputs (Gemm with alpha = beta = 1 is
// A * B + C); the Add's result keeps its name.
//
// Algorithm, with every Add node tried as the root:
//   1. One operand is a MatMul's result used by this Add alone; the other is the bias.
//   2. Check the shapes and constants above.
//   3. The Add becomes Gemm(A, B, bias); the MatMul is erased (pattern::rewrite_matches).
//
// Before:
//   %0 = MatMul(%x, %w) : f32[1,128]      // %w = const f32[784,128]
//   %y = Add(%0, %b) : f32[1,128]         // %b = const f32[128]
// After:
//   %y = Gemm(%x, %w, %b) : f32[1,128]
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#include "minic/passes/graph/fuse_matmul_bias.h"
#include "minic/passes/pass_registry.h"

#include "minic/support/explain.h"

#include "pattern.h"

namespace minic {

namespace {

using pattern::both_orders;
using pattern::match_op;
using pattern::used_only_by;

// True if Gemm accepts `bias` as its C for an [M,N] result: at most 2-D, and each of its
// dimensions (aligned to the right) 1 or equal to the result's.
bool is_gemm_bias(const Value* bias, const Shape& result) {
  const Shape& shape = bias->type.shape;
  if (shape.size() > 2) return false;
  for (size_t i = 1; i <= shape.size(); ++i) {
    int64_t dim = shape[shape.size() - i];
    if (dim != 1 && dim != result[result.size() - i]) return false;
  }
  return true;
}

// Why MatMul(A, B) + bias, the MatMul's result `product` read by `add`, is not a Gemm;
// empty if it is one (step 2).
std::string no_gemm_reason(Graph& graph, const Node& add, const Value* product,
                           const Value* bias) {
  const Node* matmul = product->producer();
  const Value* a = matmul->input(0);
  const Value* b = matmul->input(1);
  if (!used_only_by(graph, product, &add)) {
    return fmt::format("%{} has another reader, which needs it without the bias",
                       product->name());
  }
  if (a->type.rank() != 2) {
    return fmt::format("A %{} is {}-d; Gemm is 2-d, and fuse-ops keeps the Add in the "
                       "MatMul's kernel", a->name(), a->type.rank());
  }
  if (b->type.rank() != 2 || !b->is_constant()) {
    return fmt::format("the weight %{} is not a constant matrix", b->name());
  }
  if (!bias->is_constant() || !is_float(a->type.dtype)) {
    return fmt::format("the bias %{} is not a constant", bias->name());
  }
  if (add.output(0)->type != product->type || !is_gemm_bias(bias, product->type.shape)) {
    return fmt::format("the bias %{} ({}) is not one Gemm broadcasts to {}", bias->name(),
                       type_string(bias->type), type_string(product->type));
  }
  return {};
}

std::optional<pattern::Replacement> match_matmul_bias(Graph& graph, Node& add) {
  if (add.op != "Add" || add.inputs().size() != 2) return std::nullopt;
  // Step 1: MatMul(A, B) + bias, in either order.
  for (auto [product, bias] : both_orders(add)) {
    Node* matmul = match_op(product, "MatMul");
    if (!matmul) continue;
    // Step 2: the MatMul's result read here alone, a 2-D A, a constant 2-D weight, a
    // constant bias Gemm broadcasts itself.
    if (std::string why = no_gemm_reason(graph, add, product, bias); !why.empty()) {
      explain::note("Add %{} stays after MatMul %{}: {}", add.output(0)->name(),
                    product->name(), why);
      continue;
    }
    // Step 3: the Add becomes the Gemm.
    return pattern::Replacement{
        {matmul, &add}, "Gemm", {matmul->input(0), matmul->input(1), bias}, {}};
  }
  return std::nullopt;
}

}  // namespace

void fuse_matmul_bias(Graph& graph) { pattern::rewrite_matches(graph, match_matmul_bias); }

MINIC_REGISTER_GRAPH_PASS("fuse-matmul-bias", fuse_matmul_bias,
                          "merge MatMul followed by Add of a bias into one Gemm");

}  // namespace minic
