// Shape, Size, ConstantOfShape, Range: ops that make tensors from shapes and scalars.
// Course module 2.
//
// Shape and Size read only their input's *type*, so under static shapes their results are
// known at compile time: the shape rules record them (ShapeContext::set_output_value),
// which lets shape arithmetic downstream -- the Shape -> Gather -> Concat -> Reshape
// chains exporters emit -- be computed during shape inference. ConstantOfShape and Range
// make new tensors whose shapes come from their inputs' values, which must be known.
// (Constant is not an op here: the ONNX importer turns Constant nodes into constants.)
//
// Fusion kinds: Shape and Size are opaque -- they compute nothing from data, and constant
// folding replaces them before fusion. ConstantOfShape and Range are injective: output
// element i is a function of i alone (a constant; start + i * delta), so a consumer can
// compute it inline instead of reading it from memory.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace minic {

namespace {

// --- Shape and Size ---------------------------------------------------------------------------

// The dimensions [start, end) of `shape` (opset 15's attributes; each counts from the end
// when negative and is clamped into [0, rank]) as an i64 tensor.
Tensor shape_value(const NodeContext& ctx, const Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  auto clamp_dim = [&](int64_t dim) {
    return std::clamp<int64_t>(dim < 0 ? dim + rank : dim, 0, rank);
  };
  const int64_t start = clamp_dim(ctx.get_int("start", 0));
  const int64_t end = clamp_dim(ctx.get_int("end", rank));
  std::vector<int64_t> dims;
  if (start < end) dims.assign(shape.begin() + start, shape.begin() + end);
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
}

std::vector<TensorType> shape_shape(const ShapeContext& ctx) {
  Tensor value = shape_value(ctx, ctx.input_type(0).shape);
  TensorType type = value.type();
  ctx.set_output_value(0, std::move(value));
  return {type};
}

std::vector<Tensor> shape_kernel(const KernelContext& ctx) {
  return {shape_value(ctx, ctx.input(0).shape())};
}

std::vector<TensorType> size_shape(const ShapeContext& ctx) {
  ctx.set_output_value(0, Tensor::scalar<int64_t>(ctx.input_type(0).num_elements()));
  return {{DType::i64, {}}};
}

std::vector<Tensor> size_kernel(const KernelContext& ctx) {
  return {Tensor::scalar<int64_t>(ctx.input(0).num_elements())};
}

// --- ConstantOfShape --------------------------------------------------------------------------

// The one-element `value` attribute; a float 0 by default.
Tensor fill_value(const NodeContext& ctx) {
  if (!ctx.has_attr("value")) return Tensor::scalar<float>(0.0f);
  const Tensor& value = ctx.get_tensor("value");
  if (value.num_elements() != 1) {
    ctx.fail("attribute 'value' must hold one element, not {}", type_string(value.type()));
  }
  return value;
}

std::vector<TensorType> constant_of_shape_shape(const ShapeContext& ctx) {
  Shape shape = int_list(ctx, ctx.input_value(0), "the shape");
  for (int64_t dim : shape) {
    if (dim < 0) ctx.fail("shape {} has a negative dimension", shape_string(shape));
  }
  return {{fill_value(ctx).dtype(), shape}};
}

std::vector<Tensor> constant_of_shape_kernel(const KernelContext& ctx) {
  const Tensor value = fill_value(ctx);
  Tensor output = ctx.make_output(0);
  // Every element is the value's bytes: write the first, then double the filled prefix
  // (the light models build 400 MB weights this way, so a per-element loop shows).
  std::span<std::byte> bytes = output.bytes();
  std::span<const std::byte> pattern = value.bytes();
  if (bytes.empty()) return single_output(std::move(output));
  std::copy(pattern.begin(), pattern.end(), bytes.begin());
  for (size_t filled = pattern.size(); filled < bytes.size(); filled *= 2) {
    size_t count = std::min(filled, bytes.size() - filled);
    std::copy_n(bytes.begin(), count, bytes.begin() + static_cast<ptrdiff_t>(filled));
  }
  return single_output(std::move(output));
}

// --- Range ------------------------------------------------------------------------------------

// The number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0).
int64_t range_count(const NodeContext& ctx, const Tensor& start, const Tensor& limit,
                    const Tensor& delta) {
  if (is_int(start.dtype())) {
    // Exact integer arithmetic, with limit - start checked for overflow.
    const int64_t first = start.as_int64(0);
    const int64_t last = limit.as_int64(0);
    const int64_t step = delta.as_int64(0);
    if (step == 0) ctx.fail("delta is 0");
    int64_t span = 0;
    if (__builtin_sub_overflow(last, first, &span)) ctx.fail("the range is too long");
    if (step > 0) return span > 0 ? (span - 1) / step + 1 : 0;
    return span < 0 ? (span + 1) / step + 1 : 0;
  }
  const double step = delta.as_double(0);
  if (step == 0) ctx.fail("delta is 0");
  const double count = std::ceil((limit.as_double(0) - start.as_double(0)) / step);
  if (count <= 0) return 0;
  if (!(count < static_cast<double>(kMaxTensorBytes))) {  // also catches NaN
    ctx.fail("range from {} to {} by {} is too long or not a number", start.as_double(0),
             limit.as_double(0), step);
  }
  return static_cast<int64_t>(count);
}

void check_range_inputs(const ShapeContext& ctx) {
  const TensorType& start = ctx.input_type(0);
  for (size_t i = 0; i < 3; ++i) {
    const TensorType& type = ctx.input_type(i);
    if (type.num_elements() != 1 || type.rank() > 1) {
      ctx.fail("input {} must be a scalar, not {}", i, type_string(type));
    }
    if (type.dtype != start.dtype) {
      ctx.fail("inputs must have one element type; input {} is {}, input 0 is {}", i,
               type_string(type), type_string(start));
    }
  }
  if (start.dtype == DType::boolean) ctx.fail("inputs must be numbers, not bool");
}

std::vector<TensorType> range_shape(const ShapeContext& ctx) {
  check_range_inputs(ctx);
  const int64_t count =
      range_count(ctx, ctx.input_value(0), ctx.input_value(1), ctx.input_value(2));
  return {{ctx.input_type(0).dtype, {count}}};
}

// out[i] = start + i * delta, computed in int64 or double and converted to the element type.
std::vector<Tensor> range_kernel(const KernelContext& ctx) {
  const Tensor& start = ctx.input(0);
  const Tensor& delta = ctx.input(2);
  Tensor output = ctx.make_output(0);
  visit_dtype(output.dtype(), [&]<typename T>() {
    auto out = output.values<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        out[i] = static_cast<T>(start.as_int64(0) + static_cast<int64_t>(i) * delta.as_int64(0));
      } else {
        const double value = start.as_double(0) + static_cast<double>(i) * delta.as_double(0);
        out[i] = static_cast<T>(static_cast<compute_t<T>>(value));
      }
    }
  });
  return single_output(std::move(output));
}

// --- compute rules ------------------------------------------------------------------------------
//
// Course module 3. Every element is known from the position alone: Shape and Size are
// constants (a chain of selects on the index for Shape), ConstantOfShape the value,
// Range start + i * delta (in i64 or f64, as the kernel).

std::vector<ComputeTensor> shape_compute(const ComputeContext& ctx) {
  Tensor value = shape_value(ctx, ctx.input(0).shape());
  return {ctx.compute("shape", ctx.output_type(0), [&](const Indices& i) {
    loop::Expr result = constant(DType::i64, 0);
    for (int64_t d = value.num_elements(); d-- > 0;) {
      result = select(loop::EQ::make(i[0], index(d)), element_constant(value, d), result);
    }
    return result;
  })};
}

std::vector<ComputeTensor> size_compute(const ComputeContext& ctx) {
  const int64_t size = ctx.input(0).type().num_elements();
  return {ctx.compute("size", ctx.output_type(0), [&](const Indices&) { return index(size); })};
}

std::vector<ComputeTensor> constant_of_shape_compute(const ComputeContext& ctx) {
  const Tensor value = fill_value(ctx);
  if (is_storage_only(value.dtype())) {
    ctx.no_rule(fmt::format("a fill value of the storage-only type {}",
                            dtype_name(value.dtype())));
  }
  return {ctx.compute("constant_of_shape", ctx.output_type(0),
                      [&](const Indices&) { return element_constant(value, 0); })};
}

std::vector<ComputeTensor> range_compute(const ComputeContext& ctx) {
  const Tensor& start = ctx.constant_input(0);
  const Tensor& delta = ctx.constant_input(2);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("range", type, [&](const Indices& i) {
    if (is_int(type.dtype)) {
      return cast(type.dtype, i[0] * delta.as_int64(0) + start.as_int64(0));
    }
    loop::Expr step = constant(DType::f64, delta.as_double(0));
    loop::Expr first = constant(DType::f64, start.as_double(0));
    return cast(type.dtype, cast(DType::f64, i[0]) * step + first);
  })};
}

}  // namespace

void register_shape_ops(OpRegistry& registry) {
  registry.add({.name = "Shape",
                .min_opset = 1,
                .fusion = FusionKind::opaque,
                .shape_rule = shape_shape,
                .kernel = shape_kernel,
                .compute = shape_compute});
  registry.add({.name = "Size",
                .min_opset = 1,
                .fusion = FusionKind::opaque,
                .shape_rule = size_shape,
                .kernel = size_kernel,
                .compute = size_compute});
  registry.add({.name = "ConstantOfShape",
                .min_opset = 9,
                .fusion = FusionKind::injective,
                .shape_rule = constant_of_shape_shape,
                .kernel = constant_of_shape_kernel,
                .compute = constant_of_shape_compute});
  registry.add({.name = "Range",
                .min_opset = 11,
                .min_inputs = 3,
                .max_inputs = 3,
                .fusion = FusionKind::injective,
                .shape_rule = range_shape,
                .kernel = range_kernel,
                .compute = range_compute});
}

}  // namespace minic
