// The `pretranspose-weights` pass: a Gemm with transB = 1 and a constant B gets B
// transposed once, at compile time, and transB = 0.
//
// Course module 2 (layout transformations at graph level). A linear layer exported from
// PyTorch is Gemm(x, W, b) with transB = 1: W is stored [N, K], so the kernel reads it
// column by column, N * 4 bytes apart. Stored [K, N] instead, consecutive outputs read
// consecutive weights, which the vectorised loops of the code generator need. The data
// of a constant can be laid out freely before the model runs, so the pass does it:
//
//   %y = Gemm(%x, %w, %b) {transB = 1}     %w: f32[10,64]
//   →  %y = Gemm(%x, %w_t, %b)             %w_t = const f32[64,10], the transpose of %w
//
// Invariant: the graph computes exactly the same function (the same products and sums in
// the same order). The original constant is left for dce when nothing else reads it.
//
// Chapter: docs/module2-graph-passes.md#4-recognising-decomposed-ops-fuse-gelu-fuse-layernorm-fuse-matmul-bias
#pragma once

#include "minic/ir/graph/graph.h"

namespace minic {

void pretranspose_weights(Graph& graph);

}  // namespace minic
