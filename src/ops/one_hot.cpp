// OneHot and EyeLike: tensors of "off" values with "on" values at chosen positions.
// Course module 2.
//
// OneHot(axis) turns each index into a row of `depth` classes, inserted as a new dimension
// at `axis` (default -1, the last; accepted range [-r-1, r] for indices of rank r):
//   out[a..., c, b...] = (indices[a..., b...] == c) ? on_value : off_value
// where `values` = [off_value, on_value] gives the output's element type and `depth` (a
// one-element input) the new dimension's size, so the output shape needs depth's value.
// Indices that are not integers are truncated to integers first. From opset 11 a negative
// index counts from the end (-1 is class depth - 1). As the ONNX spec says, an index
// outside the classes -- [0, depth), or [-depth, depth) from opset 11 -- makes a row of
// off values, not an error.
//
// EyeLike(dtype, k) makes a matrix of the input's shape with ones on diagonal k and zeros
// elsewhere:
//   out[i][j] = (j - i == k) ? 1 : 0
// in the element type `dtype` names (an ONNX TensorProto.DataType number), else the input's.
// Only the input's type is read, never its values.
//
// Fusion kind: opaque, both. OneHot's output depends on the values of its indices; EyeLike
// reads no input element at all.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/op.h"
#include "movement.h"
#include "minic/ops/onnx_data_type.h"

#include <optional>

namespace minic {

namespace {

// --- OneHot -----------------------------------------------------------------------------------

// The number of classes: depth's single element, truncated to an integer.
int64_t read_depth(const NodeContext& ctx, const Tensor& depth) {
  if (depth.num_elements() != 1 || depth.rank() > 1) {
    ctx.fail("depth must be one value (a scalar or a 1-element tensor), not {}",
             type_string(depth.type()));
  }
  const int64_t classes = depth.as_int64(0);
  if (classes < 1) ctx.fail("depth is {}; it must be 1 or more", classes);
  return classes;
}

std::vector<TensorType> one_hot_shape(const ShapeContext& ctx) {
  const TensorType& indices = ctx.input_type(0);
  const TensorType& depth = ctx.input_type(1);
  const TensorType& values = ctx.input_type(2);
  for (const TensorType* type : {&indices, &depth}) {
    if (!is_int(type->dtype) && !is_float(type->dtype)) {
      ctx.fail("indices and depth must be numbers, not {}", type_string(*type));
    }
  }
  if (values.shape != Shape{2}) {
    ctx.fail("values must be a 1-D tensor [off_value, on_value], not {}", type_string(values));
  }
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", -1), indices.rank() + 1);
  Shape shape = indices.shape;
  shape.insert(shape.begin() + axis, read_depth(ctx, ctx.input_value(1)));
  return {{values.dtype, shape}};
}

std::vector<Tensor> one_hot_kernel(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& values = ctx.input(2);
  const int64_t depth = read_depth(ctx, ctx.input(1));
  const int64_t axis = ctx.normalize_axis(ctx.get_int("axis", -1), indices.rank() + 1);
  // indices read as [outer, inner]: the dimensions before `axis` and from `axis` on; the
  // output is [outer, depth, inner].
  const int64_t inner = num_elements(Shape(indices.shape().begin() + axis, indices.shape().end()));
  const bool negative_counts_back = ctx.opset() >= 11;
  Tensor output = ctx.make_output(0);
  for (int64_t flat = 0; flat < output.num_elements(); ++flat) {
    copy_element(values, 0, output, flat);  // off_value
  }
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    int64_t c = indices.as_int64(i);
    if (c < 0 && negative_counts_back) c += depth;
    if (c < 0 || c >= depth) continue;  // no class: the row stays off
    const int64_t outer = i / inner;
    const int64_t position = i % inner;
    copy_element(values, 1, output, (outer * depth + c) * inner + position);  // on_value
  }
  return single_output(std::move(output));
}

// --- EyeLike ----------------------------------------------------------------------------------

// The element type EyeLike's `dtype` attribute names: an ONNX TensorProto.DataType number of
// one of the types the op allows (the numbers and bool, not the storage-only types).
std::optional<DType> eye_like_dtype(int64_t onnx_type) {
  std::optional<DType> dtype = dtype_of_onnx_code(onnx_type);
  if (dtype && is_storage_only(*dtype)) return std::nullopt;
  return dtype;
}

DType eye_like_output_dtype(const NodeContext& ctx, DType input) {
  if (!ctx.has_attr("dtype")) return input;
  const int64_t code = ctx.get_int("dtype");
  std::optional<DType> dtype = eye_like_dtype(code);
  if (!dtype) {
    ctx.fail("dtype {} is not a number or bool type EyeLike can produce", code);
  }
  return *dtype;
}

std::vector<TensorType> eye_like_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  if (input.rank() != 2) ctx.fail("input must be a matrix (rank 2), not {}", type_string(input));
  if (is_storage_only(input.dtype)) {
    ctx.fail("input is {}; EyeLike takes numbers and bool", type_string(input));
  }
  return {{eye_like_output_dtype(ctx, input.dtype), input.shape}};
}

std::vector<Tensor> eye_like_kernel(const KernelContext& ctx) {
  const int64_t k = ctx.get_int("k", 0);
  Tensor output = ctx.make_output(0);  // zeros: all-zero bytes in every element type
  const Tensor one = Tensor::scalar(1.0).cast(output.dtype());
  const int64_t rows = output.shape()[0];
  const int64_t columns = output.shape()[1];
  if (k <= -rows || k >= columns) return single_output(std::move(output));  // no diagonal
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < columns) copy_element(one, 0, output, i * columns + j);
  }
  return single_output(std::move(output));
}

}  // namespace

void register_one_hot_ops(OpRegistry& registry) {
  registry.add({.name = "OneHot",
                .min_opset = 9,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::opaque,
                .shape_rule = one_hot_shape,
                .kernel = one_hot_kernel});
  registry.add({.name = "EyeLike",
                .min_opset = 9,
                .fusion = FusionKind::opaque,
                .shape_rule = eye_like_shape,
                .kernel = eye_like_kernel});
}

}  // namespace minic
