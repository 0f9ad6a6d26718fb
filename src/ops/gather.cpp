// Gather and GatherElements: read elements at positions given by an index tensor.
// Course module 2.
//
// Gather(axis) picks whole slices of `data` along `axis`:
//   out[a..., j..., b...] = data[a..., indices[j...], b...]
// so the output shape is data's with dimension `axis` replaced by the indices' shape.
// GatherElements(axis) picks single elements; its output has the indices' shape:
//   out[i] = data[i with coordinate `axis` replaced by indices[i]]
// Indices may be negative (counting from the end); an index outside [-n, n) is an error
// naming the node, never an out-of-bounds read. The kernels copy bytes, so they serve
// every element type.
//
// Fusion kind: opaque. Where an output element comes from depends on the *values* of the
// indices, not only on its position, so a fused loop nest could not compute the read
// address from its loop variables alone.
//
// Compute rules (course module 3): the same formulas with the index loaded from the
// indices tensor (a constant scalar index is folded in), a negative index moved up by n.
// The loop interpreter reports an index out of range as an out-of-bounds load.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <cstring>

namespace minic {

namespace {

// --- Gather -----------------------------------------------------------------------------------

std::vector<TensorType> gather_shape(const ShapeContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  check_indices_type(ctx, indices);
  if (data.rank() == 0) ctx.fail("cannot gather from a scalar");
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  return {{data.dtype, shape}};
}

std::vector<Tensor> gather_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  const int64_t n = data.shape()[axis];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
  int64_t block = dtype_size(data.dtype());  // bytes of one slice data[a..., k, :]
  for (int64_t d = axis + 1; d < data.rank(); ++d) block *= data.shape()[d];

  Tensor output = ctx.make_output(0);
  if (output.num_elements() == 0) return single_output(std::move(output));
  std::byte* out = output.bytes().data();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < indices.num_elements(); ++j) {
      const int64_t k = checked_index(ctx, indices, j, axis, n);
      std::memcpy(out, data.bytes().data() + (o * n + k) * block, static_cast<size_t>(block));
      out += block;
    }
  }
  return single_output(std::move(output));
}

// --- GatherElements ---------------------------------------------------------------------------

std::vector<TensorType> gather_elements_shape(const ShapeContext& ctx) {
  const TensorType& data = ctx.input_type(0);
  const TensorType& indices = ctx.input_type(1);
  check_indices_type(ctx, indices);
  if (data.rank() == 0) ctx.fail("cannot gather from a scalar");
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  check_indices_fit(ctx, data, indices, axis);
  return {{data.dtype, indices.shape}};
}

std::vector<Tensor> gather_elements_kernel(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  const Shape strides = row_major_strides(data.shape());
  Tensor output = ctx.make_output(0);
  int64_t flat = 0;
  for_each_index(indices.shape(), [&](const Shape& index) {
    Shape source = index;
    source[axis] = checked_index(ctx, indices, flat, axis, data.shape()[axis]);
    copy_element(data, offset_of(source, strides), output, flat);
    ++flat;
  });
  return single_output(std::move(output));
}

// --- compute rules ----------------------------------------------------------------------------

// The index read at `at` of `indices`, as i64 and non-negative for a dimension of size n.
loop::Expr read_index(const ComputeContext& ctx, const Indices& at, int64_t n) {
  const Tensor* known = ctx.known_input(1);
  if (known && known->num_elements() == 1) {
    int64_t value = known->as_int64(0);
    if (value < -n || value >= n) ctx.fail("index {} is out of range for a size of {}", value, n);
    return index(value < 0 ? value + n : value);
  }
  loop::Expr value = cast(DType::i64, ctx.input(1)(at));
  return select(loop::LT::make(value, index(0)), value + n, value);
}

std::vector<ComputeTensor> gather_compute(const ComputeContext& ctx) {
  const ComputeTensor& data = ctx.input(0);
  const ComputeTensor& indices = ctx.input(1);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  return {ctx.compute("gather", ctx.output_type(0), [&](const Indices& i) {
    // Output axes: data's before `axis`, the indices' axes, data's after `axis`.
    Indices at(i.begin() + axis, i.begin() + axis + indices.rank());
    Indices source(i.begin(), i.begin() + axis);
    source.push_back(read_index(ctx, at, data.dim(axis)));
    source.insert(source.end(), i.begin() + axis + indices.rank(), i.end());
    return data(source);
  })};
}

std::vector<ComputeTensor> gather_elements_compute(const ComputeContext& ctx) {
  const ComputeTensor& data = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", 0), data.rank());
  return {ctx.compute("gather_elements", ctx.output_type(0), [&](const Indices& i) {
    Indices source = i;
    source[axis] = read_index(ctx, i, data.dim(axis));
    return data(source);
  })};
}

}  // namespace

void register_gather_ops(OpRegistry& registry) {
  registry.add({.name = "Gather",
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = gather_shape,
                .kernel = gather_kernel,
                .compute = gather_compute});
  registry.add({.name = "GatherElements",
                .min_opset = 11,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = gather_elements_shape,
                .kernel = gather_elements_kernel,
                .compute = gather_elements_compute});
}

}  // namespace minic
