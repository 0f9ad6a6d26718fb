// Transpose: permutes the dimensions of a tensor. Course module 2.
//
// Output dimension d is input dimension perm[d] (perm defaults to the reversed order).
// The kernel is a strided view of the input (see movement.h): walking output dimension d
// moves through the input with the stride of input dimension perm[d]. Its fusion kind is
// injective: each output element reads one input element.
//
// Compute rule (course module 3): out[i] = x[j] with j[perm[d]] = i[d].
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <numeric>

namespace minic {

namespace {

// The permutation of this node, checked to be one for an input of rank `rank`.
std::vector<int64_t> permutation(const NodeContext& ctx, int64_t rank) {
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::vector<int64_t> perm = ctx.get_ints("perm", reversed);
  if (static_cast<int64_t>(perm.size()) != rank) {
    ctx.fail("perm has {} entries but the input has rank {}", perm.size(), rank);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= rank || seen[axis]) {
      ctx.fail("perm [{}] is not a permutation of 0..{}", fmt::join(perm, ","), rank - 1);
    }
    seen[axis] = true;
  }
  return perm;
}

std::vector<TensorType> transpose_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  Shape shape;
  for (int64_t axis : permutation(ctx, input.rank())) shape.push_back(input.shape[axis]);
  return {{input.dtype, shape}};
}

std::vector<Tensor> transpose_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Shape input_strides = row_major_strides(input.shape());
  Shape strides;
  for (int64_t axis : permutation(ctx, input.rank())) strides.push_back(input_strides[axis]);
  Tensor output = ctx.make_output(0);
  copy_strided(input, 0, strides, output);
  return single_output(std::move(output));
}

std::vector<ComputeTensor> transpose_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  std::vector<int64_t> perm = permutation(ctx, x.rank());
  return {ctx.compute("transpose", ctx.output_type(0), [&](const Indices& i) {
    Indices source(i.size());
    for (size_t d = 0; d < perm.size(); ++d) source[perm[d]] = i[d];
    return x(source);
  })};
}

}  // namespace

void register_transpose_ops(OpRegistry& registry) {
  registry.add({.name = "Transpose",
                .min_opset = 1,
                .fusion = FusionKind::injective,
                .shape_rule = transpose_shape,
                .kernel = transpose_kernel,
                .compute = transpose_compute});
}

}  // namespace minic
