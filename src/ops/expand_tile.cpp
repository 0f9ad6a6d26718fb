// Expand and Tile: make a tensor larger by repeating its elements. Course module 2.
//
// Expand broadcasts its input against a shape given as its second input (numpy rules in
// both directions: a 1 in either stretches to the other's size, so the output may be
// larger than the requested shape). The kernel is a strided view (movement.h) whose
// broadcast dimensions have stride 0.
// Tile repeats the whole input `repeats[d]` times along each dimension d:
//   out[i...] = in[i[d] mod n[d] ...]
// Both output shapes depend on the value of the second input, which must be known before
// running. Fusion kind: injective (each output element reads one input element).
//
// Compute rules (course module 3): Expand reads at the broadcast indices, Tile at
// i[d] mod n[d] (floormod; no wrap needed where n[d] is 1 or repeats[d] is 1).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

namespace minic {

namespace {

// --- Expand -----------------------------------------------------------------------------------

std::vector<TensorType> expand_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  Shape target = int_list(ctx, ctx.input_value(1), "the target shape");
  for (int64_t dim : target) {
    if (dim < 0) ctx.fail("target shape {} has a negative dimension", shape_string(target));
  }
  return {{input.dtype, broadcast_shapes(ctx, {input.shape, target})}};
}

std::vector<Tensor> expand_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor output = ctx.make_output(0);
  copy_strided(input, 0, broadcast_strides(input.shape(), output.shape()), output);
  return single_output(std::move(output));
}

// --- Tile -------------------------------------------------------------------------------------

std::vector<TensorType> tile_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  const std::vector<int64_t> repeats = int_list(ctx, ctx.input_value(1), "repeats");
  if (static_cast<int64_t>(repeats.size()) != input.rank()) {
    ctx.fail("repeats has {} entries but the input has rank {}", repeats.size(), input.rank());
  }
  Shape shape = input.shape;
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) ctx.fail("repeats [{}] has a negative entry", fmt::join(repeats, ","));
    // Keeping each product below kMaxTensorBytes rules out overflow; shape inference then
    // checks the size of the whole shape.
    if (shape[d] != 0 && repeats[d] > kMaxTensorBytes / shape[d]) {
      ctx.fail("repeats [{}] make {} absurdly large", fmt::join(repeats, ","), type_string(input));
    }
    shape[d] *= repeats[d];
  }
  return {{input.dtype, shape}};
}

std::vector<Tensor> tile_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Shape& dims = input.shape();
  const Shape strides = row_major_strides(dims);
  Tensor output = ctx.make_output(0);
  int64_t flat = 0;
  for_each_index(output.shape(), [&](const Shape& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += (index[d] % dims[d]) * strides[d];
    copy_element(input, offset, output, flat++);
  });
  return single_output(std::move(output));
}

std::vector<ComputeTensor> expand_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  return {ctx.compute("expand", ctx.output_type(0), [&](const Indices& i) {
    return x(broadcast_indices(i, x.shape(), ctx.output_type(0).shape));
  })};
}

std::vector<ComputeTensor> tile_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("tile", type, [&](const Indices& i) {
    Indices source;
    for (size_t d = 0; d < i.size(); ++d) {
      bool wraps = x.dim(d) != 1 && type.shape[d] != x.dim(d);
      source.push_back(x.dim(d) == 1 ? index(0)
                       : wraps       ? loop::FloorMod::make(i[d], index(x.dim(d)))
                                     : i[d]);
    }
    return x(source);
  })};
}

}  // namespace

void register_expand_tile_ops(OpRegistry& registry) {
  registry.add({.name = "Expand",
                .min_opset = 8,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::injective,
                .shape_rule = expand_shape,
                .kernel = expand_kernel,
                .compute = expand_compute});
  registry.add({.name = "Tile",
                .min_opset = 6,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::injective,
                .shape_rule = tile_shape,
                .kernel = tile_kernel,
                .compute = tile_compute});
}

}  // namespace minic
