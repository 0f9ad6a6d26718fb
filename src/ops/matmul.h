// What MatMul shares with the integer matrix products (quantized_linear.cpp): the shapes of
// numpy.matmul and the reference product. Course modules 2 and 7.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/op.h"

namespace minic {

// The shapes of a MatMul: A's and B's batch dimensions, the broadcast batch shape, the
// matrix sizes after 1-D promotion, and the output shape.
struct MatMulShapes {
  Shape a_batch, b_batch, batch;
  int64_t m = 1, k = 1, n = 1;
  Shape output;
};

// The shapes of A x B; an error naming the node where they do not multiply.
MatMulShapes matmul_shapes(const NodeContext& ctx, const Shape& a, const Shape& b);

// The elements of A and B that output element `i` of A x B multiplies at reduction index
// `k`, for compute rules: the batch indices broadcast, then the row and column (a 1-D
// operand has none in the output).
struct MatMulOperandIndices {
  Indices a;
  Indices b;
};
MatMulOperandIndices matmul_operand_indices(const MatMulShapes& s, int64_t a_rank,
                                            int64_t b_rank, const Indices& i,
                                            const loop::Expr& k);

// `sum` (a product's sums, in the accumulation type) converted to the node's output type,
// if they differ: the last stage of a compute rule.
ComputeTensor to_output_type(const ComputeContext& ctx, const ComputeTensor& sum);

// numpy.matmul(a, b) in a's element type (b's must be the same), products added in the
// order k = 0, 1, ...; integers wrap (matmul.cpp's file comment).
Tensor matmul_reference(const NodeContext& ctx, const Tensor& a, const Tensor& b);

}  // namespace minic
