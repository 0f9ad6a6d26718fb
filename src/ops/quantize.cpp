// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: between real numbers and
// their quantised integers (or float8 / float4 codes). Course module 7.
//
//   QuantizeLinear     y = saturate(round(x / y_scale) + y_zero_point)
//   DequantizeLinear   y = (x - x_zero_point) * x_scale
//   DynamicQuantizeLinear  picks the uint8 scale and zero point of x from its range, then
//                      quantises it: scale = (max(x, 0) - min(x, 0)) / 255,
//                      zero_point = round(saturate(0 - min(x, 0) / scale))
//
// quantize.h says how the scale's shape chooses per-tensor, per-axis or blocked
// quantisation. The precision of the arithmetic follows ONNX's reference (numpy):
//   - QuantizeLinear divides in the type the `precision` attribute names, else in x's and
//     the scale's common type (float16 / float16 divides in float16; float32 with
//     anything in float32; an int32 x in double). Integer outputs round halves to even
//     and saturate to the type's range; float8 outputs convert the quotient (saturating
//     unless `saturate` is 0) and float4 saturates always, as Cast does.
//   - DequantizeLinear subtracts and multiplies in float32 and converts the product to the
//     output type (`output_dtype`, else the scale's type).
//
// Compute rules (course module 3): QuantizeLinear and DequantizeLinear as one elementwise
// expression over x, the scale and the zero point read at the indices the granularity
// gives, for the 8- to 32-bit integer types; the storage-only types (float8, int4, ...)
// run on the reference kernels. DynamicQuantizeLinear as two reductions to x's extremes,
// two one-element stages for the scale and zero point, and the elementwise quantisation.
//
// Chapter: docs/module7-quantisation.md#1-affine-quantisation-and-the-onnx-ops
#include "quantize.h"

#include "broadcast.h"
#include "minic/ops/onnx_data_type.h"
#include "minic/tensor/low_precision.h"

#include <algorithm>
#include <optional>

namespace minic {

QuantRange quant_range(DType type) {
  switch (type) {
    case DType::i8: return {-128, 127};
    case DType::u8: return {0, 255};
    case DType::i16: return {-32768, 32767};
    case DType::u16: return {0, 65535};
    case DType::i4: return {-8, 7};
    case DType::u4: return {0, 15};
    case DType::i2: return {-2, 1};
    case DType::u2: return {0, 3};
    default:
      internal_fail("quant_range of {}, which quantisation does not produce", dtype_name(type));
  }
}

bool is_quant_int(DType type) {
  switch (type) {
    case DType::i8: case DType::u8: case DType::i16: case DType::u16:
    case DType::i4: case DType::u4: case DType::i2: case DType::u2:
      return true;
    default:
      return false;
  }
}

loop::Expr saturate_to(DType type, const loop::Expr& value) {
  const QuantRange range = quant_range(type);
  const DType wide = value.type().dtype;
  // A cast of a float to an 8- or 16-bit integer saturates to the type's range and sends
  // NaN to 0 itself, which is what the clamp would do (min and max pass NaN on): where the
  // range is the type's, the cast alone says it.
  const bool whole_type = dtype_size(type) < 4 && (type == DType::u8 || type == DType::i8 ||
                                                   type == DType::u16 || type == DType::i16);
  if (is_float(wide) && whole_type) return cast(type, value);
  return cast(type, loop::min(loop::max(value, constant(wide, static_cast<double>(range.min))),
                              constant(wide, static_cast<double>(range.max))));
}

double round_to_precision(double value, DType type) {
  switch (type) {
    case DType::f32: return static_cast<float>(value);
    // numpy computes the 16-bit floats through float32, then rounds to them.
    case DType::f16: return static_cast<float>(Half(static_cast<float>(value)));
    case DType::bf16: return static_cast<float>(BFloat16(static_cast<float>(value)));
    default: return value;
  }
}

QuantGranularity QuantGranularity::read(const NodeContext& ctx, const Shape& x,
                                        const TensorType& scale, const TensorType* zero_point) {
  // (A one-element zero point goes with a one-element scale of any rank: ONNX's own tests
  // pair a scalar scale with a zero point of shape [1].)
  if (zero_point && zero_point->shape != scale.shape &&
      (scale.num_elements() != 1 || zero_point->num_elements() != 1)) {
    ctx.fail("the zero point is {} but the scale is {}; they must have the same shape",
             type_string(*zero_point), type_string(scale));
  }
  QuantGranularity g;
  g.scale_shape_ = scale.shape;
  g.block_size_ = ctx.get_int("block_size", 0);
  if (g.block_size_ < 0) ctx.fail("attribute block_size is {}; it must be >= 0", g.block_size_);
  bool one_scale = scale.rank() == 0 || (scale.rank() == 1 && scale.shape[0] == 1);
  if (one_scale && g.block_size_ == 0) return g;  // per tensor
  const auto rank = static_cast<int64_t>(x.size());
  if (rank == 0) ctx.fail("the scale {} of a scalar x must be a scalar", type_string(scale));
  g.axis_ = ctx.normalize_axis(ctx.get_int("axis", 1), rank);
  const int64_t extent = x[g.axis_];
  if (g.block_size_ == 0) {
    if (scale.rank() != 1 || scale.shape[0] != extent) {
      ctx.fail("the scale is {}; per-axis quantisation along axis {} of x {} needs a vector "
               "of {} (or a scalar for one scale, or block_size for blocks)",
               type_string(scale), g.axis_, shape_string(x), extent);
    }
    g.kind_ = Kind::per_axis;
    return g;
  }
  Shape expected = x;
  expected[g.axis_] = (extent + g.block_size_ - 1) / g.block_size_;
  if (scale.shape != expected) {
    ctx.fail("the scale is {}; blocks of {} along axis {} of x {} need a scale of shape {}",
             type_string(scale), g.block_size_, g.axis_, shape_string(x),
             shape_string(expected));
  }
  g.kind_ = Kind::blocked;
  return g;
}

int64_t QuantGranularity::parameter_offset(const Shape& index) const {
  switch (kind_) {
    case Kind::per_tensor: return 0;
    case Kind::per_axis: return index[axis_];
    case Kind::blocked: {
      int64_t offset = 0;
      for (size_t d = 0; d < index.size(); ++d) {
        int64_t i = static_cast<int64_t>(d) == axis_ ? index[d] / block_size_ : index[d];
        offset = offset * scale_shape_[d] + i;
      }
      return offset;
    }
  }
  internal_fail("a quantisation granularity without a case");
}

Indices QuantGranularity::parameter_indices(const Indices& indices) const {
  switch (kind_) {
    case Kind::per_tensor: return Indices(scale_shape_.size(), index(0));
    case Kind::per_axis: return {indices[axis_]};
    case Kind::blocked: {
      Indices scale_indices = indices;
      scale_indices[axis_] = loop::FloorDiv::make(indices[axis_], index(block_size_));
      return scale_indices;
    }
  }
  internal_fail("a quantisation granularity without a case");
}

namespace {

bool is_float8(DType type) {
  return type == DType::f8e4m3fn || type == DType::f8e4m3fnuz || type == DType::f8e5m2 ||
         type == DType::f8e5m2fnuz;
}

// The element type an ONNX data type attribute names; `name` says which, for the error.
DType attribute_dtype(const NodeContext& ctx, std::string_view name) {
  int64_t code = ctx.get_int(name);
  std::optional<DType> type = dtype_of_onnx_code(code);
  if (!type) ctx.fail("attribute {} is {}, which is not an element type minic has", name, code);
  return *type;
}

// --- QuantizeLinear -----------------------------------------------------------------------

// The types of a QuantizeLinear node, checked: the output's and the division's.
struct QuantizeTypes {
  DType output = DType::u8;
  DType division = DType::f32;
};

QuantizeTypes quantize_types(const NodeContext& ctx, DType x, DType scale,
                             std::optional<DType> zero_point) {
  if (x != DType::f32 && x != DType::f16 && x != DType::bf16 && x != DType::i32) {
    ctx.fail("x is {}; it must be float, float16, bfloat16 or int32", dtype_name(x));
  }
  if (scale != DType::f32 && scale != DType::f16 && scale != DType::bf16 && scale != DType::i32 &&
      scale != DType::f8e8m0) {
    ctx.fail("y_scale is {}; it must be float, float16, bfloat16, int32 or float8e8m0",
             dtype_name(scale));
  }
  QuantizeTypes types;
  std::optional<DType> declared;
  if (ctx.has_attr("output_dtype") && ctx.get_int("output_dtype") != 0) {
    declared = attribute_dtype(ctx, "output_dtype");
  }
  if (zero_point) {
    types.output = *zero_point;
    if (declared && *declared != types.output) {
      ctx.fail("output_dtype is {} but y_zero_point is {}; they must agree",
               dtype_name(*declared), dtype_name(types.output));
    }
  } else if (declared) {
    types.output = *declared;
  }
  if (!is_quant_int(types.output) && !is_float8(types.output) && types.output != DType::f4e2m1) {
    ctx.fail("quantises to {}; the output must be an 8- or 16-bit integer, int4, uint4, int2, "
             "uint2, float8 or float4e2m1", dtype_name(types.output));
  }
  if (ctx.has_attr("precision") && ctx.get_int("precision") != 0) {
    types.division = attribute_dtype(ctx, "precision");
    if (!is_float(types.division)) {
      ctx.fail("attribute precision is {}; it must be a floating-point type",
               dtype_name(types.division));
    }
  } else if (x == DType::i32 || scale == DType::i32) {
    types.division = DType::f64;  // numpy divides int32 by a float in double
  } else if (x == scale) {
    types.division = x;
  }
  return types;
}

std::vector<TensorType> quantize_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  std::optional<DType> zero_point;
  if (ctx.has_input(2)) zero_point = ctx.input_type(2).dtype;
  QuantizeTypes types = quantize_types(ctx, x.dtype, ctx.input_type(1).dtype, zero_point);
  QuantGranularity::read(ctx, x.shape, ctx.input_type(1),
                         ctx.has_input(2) ? &ctx.input_type(2) : nullptr);
  return {{types.output, x.shape}};
}

std::vector<Tensor> quantize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zero_point = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const QuantizeTypes types = quantize_types(
      ctx, x.dtype(), scale.dtype(),
      zero_point ? std::optional(zero_point->dtype()) : std::nullopt);
  const QuantGranularity g = QuantGranularity::read(ctx, x.shape(), scale.type(),
                                                    zero_point ? &zero_point->type() : nullptr);
  const bool integer = is_quant_int(types.output);
  const QuantRange range = integer ? quant_range(types.output) : QuantRange{};
  // The quantised values, exact in double, converted to the output type at the end.
  Tensor values(DType::f64, x.shape());
  auto out = values.values<double>();
  int64_t i = 0;
  for_each_index(x.shape(), [&](const Shape& index) {
    int64_t p = g.parameter_offset(index);
    double zero = zero_point ? zero_point->as_double(p) : 0.0;
    double q = round_to_precision(x.as_double(i) / scale.as_double(p), types.division);
    out[i] = integer ? static_cast<double>(round_and_saturate(std::nearbyint(q) + zero, range))
                     : q + zero;
    ++i;
  });
  CastOptions options;
  options.saturate = ctx.get_int("saturate", 1) != 0;
  return single_output(values.cast(types.output, options));
}

std::vector<ComputeTensor> quantize_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& scale = ctx.input(1);
  const TensorType& type = ctx.output_type(0);
  if (!is_quant_int(type.dtype) || is_storage_only(type.dtype) ||
      is_storage_only(scale.dtype())) {
    ctx.no_rule(fmt::format("quantisation from {} to {} with a {} scale: loop IR does not "
                            "compute in storage-only types", dtype_name(x.dtype()),
                            dtype_name(type.dtype), dtype_name(scale.dtype())));
  }
  const QuantizeTypes types = quantize_types(
      ctx, x.dtype(), scale.dtype(),
      ctx.has_input(2) ? std::optional(ctx.input(2).dtype()) : std::nullopt);
  const QuantGranularity g = QuantGranularity::read(
      ctx, x.shape(), scale.type(), ctx.has_input(2) ? &ctx.input(2).type() : nullptr);
  // The rounding and saturation are done in the division's type, widened to f32 from the
  // 16-bit floats (whose integers run out at 2048).
  const DType wide = types.division == DType::f64 ? DType::f64 : DType::f32;
  return {ctx.compute("quantize", type, [&](const Indices& i) {
    Indices p = g.parameter_indices(i);
    loop::Expr quotient =
        loop::Div::make(cast(types.division, x(i)), cast(types.division, scale(p)));
    loop::Expr q = cast(wide, quotient);
    loop::Expr value = call("round", {q});
    if (ctx.has_input(2)) value = value + cast(wide, ctx.input(2)(p));
    return saturate_to(type.dtype, value);
  })};
}

// --- DequantizeLinear ---------------------------------------------------------------------

DType dequantize_output(const NodeContext& ctx, DType x, DType scale,
                        std::optional<DType> zero_point) {
  if (!is_quant_int(x) && x != DType::i32 && !is_float8(x) && x != DType::f4e2m1) {
    ctx.fail("x is {}; it must be an 8-, 16- or 32-bit integer, int4, uint4, int2, uint2, "
             "float8 or float4e2m1", dtype_name(x));
  }
  if (zero_point && *zero_point != x) {
    ctx.fail("x_zero_point is {} but x is {}; they must have the same type",
             dtype_name(*zero_point), dtype_name(x));
  }
  DType output = scale;
  if (ctx.has_attr("output_dtype") && ctx.get_int("output_dtype") != 0) {
    output = attribute_dtype(ctx, "output_dtype");
  }
  if (output != DType::f32 && output != DType::f16 && output != DType::bf16) {
    ctx.fail("the output would be {} (output_dtype, else x_scale's type); it must be float, "
             "float16 or bfloat16", dtype_name(output));
  }
  if (scale != DType::f32 && scale != DType::f16 && scale != DType::bf16 &&
      scale != DType::f8e8m0) {
    ctx.fail("x_scale is {}; it must be float, float16, bfloat16 or float8e8m0",
             dtype_name(scale));
  }
  return output;
}

std::vector<TensorType> dequantize_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType* zero_point = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  DType output = dequantize_output(ctx, x.dtype, ctx.input_type(1).dtype,
                                   zero_point ? std::optional(zero_point->dtype) : std::nullopt);
  QuantGranularity::read(ctx, x.shape, ctx.input_type(1), zero_point);
  return {{output, x.shape}};
}

std::vector<Tensor> dequantize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zero_point = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  const QuantGranularity g = QuantGranularity::read(ctx, x.shape(), scale.type(),
                                                    zero_point ? &zero_point->type() : nullptr);
  Tensor values(DType::f32, x.shape());
  auto out = values.values<float>();
  int64_t i = 0;
  for_each_index(x.shape(), [&](const Shape& index) {
    int64_t p = g.parameter_offset(index);
    float zero = zero_point ? static_cast<float>(zero_point->as_double(p)) : 0.0f;
    out[i] = (static_cast<float>(x.as_double(i)) - zero) * static_cast<float>(scale.as_double(p));
    ++i;
  });
  return single_output(values.cast(ctx.output_type(0).dtype));
}

std::vector<ComputeTensor> dequantize_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& scale = ctx.input(1);
  const TensorType& type = ctx.output_type(0);
  if (is_storage_only(x.dtype()) || is_storage_only(scale.dtype())) {
    ctx.no_rule(fmt::format("dequantisation of {} with a {} scale: loop IR does not compute in "
                            "storage-only types", dtype_name(x.dtype()),
                            dtype_name(scale.dtype())));
  }
  const QuantGranularity g = QuantGranularity::read(
      ctx, x.shape(), scale.type(), ctx.has_input(2) ? &ctx.input(2).type() : nullptr);
  return {ctx.compute("dequantize", type, [&](const Indices& i) {
    Indices p = g.parameter_indices(i);
    loop::Expr value = cast(DType::f32, x(i));
    if (ctx.has_input(2)) value = value - cast(DType::f32, ctx.input(2)(p));
    return cast(type.dtype, value * cast(DType::f32, scale(p)));
  })};
}

// --- DynamicQuantizeLinear ----------------------------------------------------------------

std::vector<TensorType> dynamic_quantize_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::f32) ctx.fail("x is {}; it must be float", dtype_name(x.dtype));
  return {{DType::u8, x.shape}, {DType::f32, {}}, {DType::u8, {}}};
}

std::vector<Tensor> dynamic_quantize_kernel(const KernelContext& ctx) {
  auto x = ctx.input(0).values<float>();
  const QuantRange range = quant_range(DType::u8);
  // The range of x widened to hold 0, so that 0 is exactly representable.
  float high = 0.0f;
  float low = 0.0f;
  for (float v : x) {
    high = std::max(high, v);
    low = std::min(low, v);
  }
  const float scale =
      (high == low ? 1.0f : high - low) / static_cast<float>(range.max - range.min);
  const float zero = static_cast<float>(round_and_saturate(
      std::clamp(static_cast<float>(range.min) - low / scale, static_cast<float>(range.min),
                 static_cast<float>(range.max)),
      range));
  Tensor y(DType::u8, ctx.input(0).shape());
  auto out = y.values<uint8_t>();
  for (size_t i = 0; i < x.size(); ++i) {
    float q = std::nearbyint(x[i] / scale) + zero;
    out[i] = static_cast<uint8_t>(round_and_saturate(q, range));
  }
  std::vector<Tensor> outputs;
  outputs.push_back(std::move(y));
  outputs.push_back(Tensor::scalar(scale));
  outputs.push_back(Tensor::scalar(static_cast<uint8_t>(zero)));
  return outputs;
}

// The kernel's steps as stages: x's extremes in two reductions to one value each, the
// scale and zero point from them as one-element stages, then x quantised elementwise, in
// the same float32 arithmetic. (A NaN in x makes the extremes NaN here, where the kernel
// passes over it; ONNX leaves the case open.)
std::vector<ComputeTensor> dynamic_quantize_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  auto extreme = [&](const char* name, Reducer reducer) {
    return ctx.reduce(name, {DType::f32, {}}, x.shape(), reducer,
                      [&](const Indices&, const Indices& r) { return x(r); });
  };
  const ComputeTensor largest = extreme("x_max", Reducer::max);
  const ComputeTensor smallest = extreme("x_min", Reducer::min);
  const loop::Expr zero = constant(DType::f32, 0);
  // The range widened to hold 0.
  auto high = [&] { return loop::max(largest({}), zero); };
  auto low = [&] { return loop::min(smallest({}), zero); };
  // Both kept, so that the elementwise stage reads them rather than computing them again.
  const ComputeTensor scale = ctx.keep(ctx.compute("y_scale", ctx.output_type(1),
                                                   [&](const Indices&) {
    loop::Expr range = select(loop::EQ::make(high(), low()), constant(DType::f32, 1),
                              high() - low());
    return loop::Div::make(range, constant(DType::f32, 255));
  }));
  const ComputeTensor zero_point = ctx.keep(ctx.compute("y_zero_point", ctx.output_type(2),
                                                        [&](const Indices&) {
    loop::Expr shifted = zero - loop::Div::make(low(), scale({}));
    loop::Expr clamped = loop::min(loop::max(shifted, zero), constant(DType::f32, 255));
    return saturate_to(DType::u8, call("round", {clamped}));
  }));
  const ComputeTensor y = ctx.compute("y", ctx.output_type(0), [&](const Indices& i) {
    loop::Expr q = call("round", {loop::Div::make(x(i), scale({}))});
    return saturate_to(DType::u8, q + cast(DType::f32, zero_point({})));
  });
  return {y, scale, zero_point};
}

}  // namespace

void register_quantize_ops(OpRegistry& registry) {
  // Opset 10 quantises per tensor; 13 adds `axis`, 19 float8 and `saturate`, 21 blocks,
  // int4 and `output_dtype`, 23 float4 and `precision`, 24 float8e8m0 scales, 25 int2:
  // each version only widens what the previous one accepts.
  registry.add({.name = "QuantizeLinear",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::broadcast,
                .shape_rule = quantize_shape,
                .kernel = quantize_kernel,
                .compute = quantize_compute});
  registry.add({.name = "DequantizeLinear",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::broadcast,
                .shape_rule = dequantize_shape,
                .kernel = dequantize_kernel,
                .compute = dequantize_compute});
  registry.add({.name = "DynamicQuantizeLinear",
                .min_opset = 11,
                .min_outputs = 3,
                .max_outputs = 3,
                .shape_rule = dynamic_quantize_shape,
                .kernel = dynamic_quantize_kernel,
                .compute = dynamic_quantize_compute});
}

}  // namespace minic
