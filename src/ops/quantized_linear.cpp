// The integer matrix products and convolutions: MatMulInteger, ConvInteger, QLinearMatMul
// and QLinearConv, and minic.MatMulIntegerWords and minic.ConvIntegerWords, MatMulInteger
// and ConvInteger on weights packed at compile time (include/minic/ops/int8_words.h).
// Course module 7.
//
// Their operands are 8-bit integers with zero points. Each is the float op on
// (q - zero_point), which is exact in int32, summed in int32 (wrapping on overflow, as ONNX
// allows):
//   MatMulInteger   Y (int32) = (A - a_zero_point) x (B - b_zero_point)
//   ConvInteger     Y (int32) = Conv(X - x_zero_point, W - w_zero_point)
// The QLinear ops then requantise that sum to the output's scale and zero point:
//   QLinearMatMul   y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point)
//   QLinearConv     the same, with acc = Conv(...) + B (B is int32 at scale x_scale * w_scale)
// since a real product is (a_scale * A') x (b_scale * B') = a_scale * b_scale * acc.
//
// Granularity: A's zero point and scale are per tensor or per row of A (a vector of M, or
// [..., M, 1]); B's per tensor or per column (a vector of N, or [..., 1, N]); W's per tensor
// or per output channel (a vector of M). The output's are per tensor.
//
// Precision follows ONNX's reference: the multiplier a_scale * b_scale / y_scale is
// computed in the scales' type, rounded after each operation, and acc * multiplier +
// y_zero_point in double; halves round to even.
//
// Chapter: docs/module7-quantisation.md#1-affine-quantisation-and-the-onnx-ops
#include "broadcast.h"
#include "conv.h"
#include "matmul.h"
#include "quantize.h"
#include "quantized_linear.h"

#include "minic/ops/int8_words.h"

#include <functional>
#include <optional>

namespace minic {

namespace {

// Input `index`, checked: an int8 or uint8 operand whose zero point (input `zero_index`,
// where present) has its type; `name` and `zero_name` name the two in errors.
const TensorType& quantized_operand(const ShapeContext& ctx, size_t index, size_t zero_index,
                                    std::string_view name, std::string_view zero_name) {
  const TensorType& operand = ctx.input_type(index);
  if (operand.dtype != DType::i8 && operand.dtype != DType::u8) {
    ctx.fail("{} is {}; it must be int8 or uint8", name, type_string(operand));
  }
  if (ctx.has_input(zero_index) && ctx.input_type(zero_index).dtype != operand.dtype) {
    ctx.fail("{} is {} but its operand is {}; they must have the same type", zero_name,
             dtype_name(ctx.input_type(zero_index).dtype), dtype_name(operand.dtype));
  }
  return operand;
}


// The shape `parameter` is read as against an operand of `operand` shape; an error if it
// does not broadcast to it.
Shape parameter_shape(const NodeContext& ctx, const Shape& parameter, const Shape& operand,
                      ParameterAxis axis, std::string_view what) {
  Shape shape = parameter;
  const auto rank = static_cast<int64_t>(operand.size());
  if (parameter.size() == 1 && parameter[0] != 1) {
    if (axis == ParameterAxis::row && rank >= 2) shape = {parameter[0], 1};
    if (axis == ParameterAxis::first) {
      shape.assign(operand.size(), 1);
      shape[0] = parameter[0];
    }
  }
  bool fits = static_cast<int64_t>(shape.size()) <= rank;
  for (size_t i = 0; fits && i < shape.size(); ++i) {
    int64_t dim = shape[shape.size() - 1 - i];
    fits = dim == 1 || dim == operand[operand.size() - 1 - i];
  }
  if (!fits) {
    ctx.fail("{} has shape {}, which does not fit its operand of shape {}", what,
             shape_string(parameter), shape_string(operand));
  }
  return shape;
}

// The operand q widened to int32 minus its zero point (null: 0), read as `axis` says.
Tensor subtract_zero_point(const NodeContext& ctx, const Tensor& q, const Tensor* zero_point,
                           ParameterAxis axis, std::string_view what) {
  Tensor wide = q.cast(DType::i32);
  if (!zero_point) return wide;
  Shape shape = parameter_shape(ctx, zero_point->shape(), q.shape(), axis, what);
  Shape strides = broadcast_strides(shape, q.shape());
  auto values = wide.values<int32_t>();
  int64_t i = 0;
  for_each_index(q.shape(), [&](const Shape& index) {
    values[i++] -= static_cast<int32_t>(zero_point->as_int64(offset_of(index, strides)));
  });
  return wide;
}

// One scale or zero point of the requantisation, read at an output element.
struct OutputParameter {
  const Tensor* tensor = nullptr;
  Shape strides;  // broadcast strides against the output
};

OutputParameter output_parameter(const NodeContext& ctx, const Tensor& tensor,
                                 const Shape& operand, const Shape& output, ParameterAxis axis,
                                 std::string_view what) {
  Shape shape = parameter_shape(ctx, tensor.shape(), operand, axis, what);
  if (shape.size() > output.size()) shape.erase(shape.begin());  // a 1-D A's row axis
  return {&tensor, broadcast_strides(shape, output)};
}

// acc requantised into the output type: for each element,
//   saturate(round(acc * (scale_a * scale_b / y_scale)) + y_zero_point)
// with the multiplier in the scales' type (see the file comment).
Tensor requantize(const Tensor& acc, const OutputParameter& scale_a,
                  const OutputParameter& scale_b, const OutputParameter& y_scale,
                  const OutputParameter* y_zero_point, DType output) {
  const DType scale_type = scale_a.tensor->dtype();
  const QuantRange range = quant_range(output);
  auto sums = acc.values<int32_t>();
  Tensor values(DType::f64, acc.shape());
  auto out = values.values<double>();
  int64_t i = 0;
  auto at = [](const OutputParameter& p, const Shape& index) {
    return p.tensor->as_double(offset_of(index, p.strides));
  };
  for_each_index(acc.shape(), [&](const Shape& index) {
    double multiplier = round_to_precision(at(scale_a, index) * at(scale_b, index), scale_type);
    multiplier = round_to_precision(multiplier / at(y_scale, index), scale_type);
    double value = static_cast<double>(sums[i]) * multiplier;
    if (y_zero_point) value += at(*y_zero_point, index);
    out[i] = static_cast<double>(round_and_saturate(value, range));
    ++i;
  });
  return values.cast(output);
}

// --- MatMulInteger ------------------------------------------------------------------------

std::vector<TensorType> matmul_integer_shape(const ShapeContext& ctx) {
  const TensorType& a = quantized_operand(ctx, 0, 2, "A", "a_zero_point");
  const TensorType& b = quantized_operand(ctx, 1, 3, "B", "b_zero_point");
  MatMulShapes s = matmul_shapes(ctx, a.shape, b.shape);
  if (ctx.has_input(2)) {
    parameter_shape(ctx, ctx.input_type(2).shape, a.shape, ParameterAxis::row, "a_zero_point");
  }
  if (ctx.has_input(3)) {
    parameter_shape(ctx, ctx.input_type(3).shape, b.shape, ParameterAxis::any, "b_zero_point");
  }
  return {{DType::i32, s.output}};
}

std::vector<Tensor> matmul_integer_kernel(const KernelContext& ctx) {
  Tensor a = subtract_zero_point(ctx, ctx.input(0), ctx.has_input(2) ? &ctx.input(2) : nullptr,
                                 ParameterAxis::row, "a_zero_point");
  Tensor b = subtract_zero_point(ctx, ctx.input(1), ctx.has_input(3) ? &ctx.input(3) : nullptr,
                                 ParameterAxis::any, "b_zero_point");
  return single_output(matmul_reference(ctx, a, b));
}

// --- minic.MatMulIntegerWords (include/minic/ops/int8_words.h) ------------------------------

// Inputs: A, B_words, B_column_sums, a_zero_point.
std::vector<TensorType> matmul_integer_words_shape(const ShapeContext& ctx) {
  const TensorType& a = quantized_operand(ctx, 0, 3, "A", "a_zero_point");
  const TensorType& words = ctx.input_type(1);
  const TensorType& sums = ctx.input_type(2);
  if (a.rank() < 2) ctx.fail("A is {}; it must have rows and columns", type_string(a));
  const int64_t k = a.shape.back();
  if (words.dtype != DType::i32 || words.rank() != 2 || words.shape[0] != (k + 3) / 4) {
    ctx.fail("B_words is {}; for A {} it must be int32 [{}, N]", type_string(words),
             type_string(a), (k + 3) / 4);
  }
  if (sums.dtype != DType::i32 || sums.shape != Shape{words.shape[1]}) {
    ctx.fail("B_column_sums is {}; it must be int32 [{}]", type_string(sums), words.shape[1]);
  }
  if (ctx.has_input(3)) {
    parameter_shape(ctx, ctx.input_type(3).shape, a.shape, ParameterAxis::row, "a_zero_point");
  }
  Shape output = a.shape;
  output.back() = words.shape[1];
  return {{DType::i32, output}};
}

// MatMulInteger's reference on B unpacked from its words; B_column_sums must be B's.
std::vector<Tensor> matmul_integer_words_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor b = unpack_words(ctx.input(1), 0, a.shape().back(), DType::i8);
  if (column_sums(b).to_int64_vector() != ctx.input(2).to_int64_vector()) {
    ctx.fail("B_column_sums are not the column sums of the int8 B that B_words holds");
  }
  Tensor shifted = subtract_zero_point(ctx, a, ctx.has_input(3) ? &ctx.input(3) : nullptr,
                                       ParameterAxis::row, "a_zero_point");
  return single_output(matmul_reference(ctx, shifted, b.cast(DType::i32)));
}

// The checks QLinearMatMul and QLinearConv share: inputs 0 and 3 (named `first` and
// `second`) are 8-bit integers with zero points (inputs 2 and 5) of their types; returns
// the output's type, y_zero_point's (input 7), int8 or uint8.
DType check_qlinear_operands(const ShapeContext& ctx, std::string_view first,
                             std::string_view second) {
  quantized_operand(ctx, 0, 2, first, fmt::format("{}_zero_point", first));
  quantized_operand(ctx, 3, 5, second, fmt::format("{}_zero_point", second));
  const DType output = ctx.input_type(7).dtype;
  if (output != DType::i8 && output != DType::u8) {
    ctx.fail("y_zero_point is {}; it must be int8 or uint8", dtype_name(output));
  }
  return output;
}

// --- QLinearMatMul --------------------------------------------------------------------------

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
std::vector<TensorType> qlinear_matmul_shape(const ShapeContext& ctx) {
  const TensorType& a = ctx.input_type(0);
  const TensorType& b = ctx.input_type(3);
  const DType output = check_qlinear_operands(ctx, "a", "b");
  const DType scale = ctx.input_type(1).dtype;
  if (scale != DType::f32 && scale != DType::f16 && scale != DType::bf16) {
    ctx.fail("a_scale is {}; it must be float, float16 or bfloat16", dtype_name(scale));
  }
  for (size_t index : {4, 6}) {
    if (ctx.input_type(index).dtype != scale) {
      ctx.fail("input {} is {} but a_scale is {}; the scales must have one type", index,
               dtype_name(ctx.input_type(index).dtype), dtype_name(scale));
    }
  }
  MatMulShapes s = matmul_shapes(ctx, a.shape, b.shape);
  for (size_t index : {1, 2}) {
    parameter_shape(ctx, ctx.input_type(index).shape, a.shape, ParameterAxis::row, "a's scale");
  }
  for (size_t index : {4, 5}) {
    parameter_shape(ctx, ctx.input_type(index).shape, b.shape, ParameterAxis::any, "b's scale");
  }
  for (size_t index : {6, 7}) {
    parameter_shape(ctx, ctx.input_type(index).shape, s.output, ParameterAxis::any, "y's scale");
  }
  return {{output, s.output}};
}

std::vector<Tensor> qlinear_matmul_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  Tensor acc = matmul_reference(
      ctx, subtract_zero_point(ctx, a, &ctx.input(2), ParameterAxis::row, "a_zero_point"),
      subtract_zero_point(ctx, b, &ctx.input(5), ParameterAxis::any, "b_zero_point"));
  const Shape& out = acc.shape();
  OutputParameter y_zero_point =
      output_parameter(ctx, ctx.input(7), out, out, ParameterAxis::any, "y_zero_point");
  return single_output(requantize(
      acc, output_parameter(ctx, ctx.input(1), a.shape(), out, ParameterAxis::row, "a_scale"),
      output_parameter(ctx, ctx.input(4), b.shape(), out, ParameterAxis::any, "b_scale"),
      output_parameter(ctx, ctx.input(6), out, out, ParameterAxis::any, "y_scale"),
      &y_zero_point, ctx.output_type(0).dtype));
}

// --- ConvInteger and QLinearConv ----------------------------------------------------------

// The output shape of the convolution of x by w, checked as Conv checks it.
Shape integer_conv_shape(const NodeContext& ctx, const TensorType& x, const TensorType& w,
                         const TensorType* bias) {
  TensorType wide_x{DType::i32, x.shape};
  TensorType wide_w{DType::i32, w.shape};
  ConvAttributes a = ConvAttributes::read(ctx, wide_x, wide_w, bias);
  Shape shape = {x.shape[0], w.shape[0]};
  shape.insert(shape.end(), a.window.output.begin(), a.window.output.end());
  return shape;
}

void require_per_tensor(const NodeContext& ctx, const TensorType& type, std::string_view what) {
  if (num_elements(type.shape) != 1) {
    ctx.fail("{} is {}; it must be one value (per-tensor)", what, type_string(type));
  }
}

std::vector<TensorType> conv_integer_shape(const ShapeContext& ctx) {
  const TensorType& x = quantized_operand(ctx, 0, 2, "x", "x_zero_point");
  const TensorType& w = quantized_operand(ctx, 1, 3, "w", "w_zero_point");
  if (ctx.has_input(2)) require_per_tensor(ctx, ctx.input_type(2), "x_zero_point");
  if (ctx.has_input(3)) {
    parameter_shape(ctx, ctx.input_type(3).shape, w.shape, ParameterAxis::first,
                    "w_zero_point");
  }
  return {{DType::i32, integer_conv_shape(ctx, x, w, nullptr)}};
}

std::vector<Tensor> conv_integer_kernel(const KernelContext& ctx) {
  Tensor x = subtract_zero_point(ctx, ctx.input(0), ctx.has_input(2) ? &ctx.input(2) : nullptr,
                                 ParameterAxis::any, "x_zero_point");
  Tensor w = subtract_zero_point(ctx, ctx.input(1), ctx.has_input(3) ? &ctx.input(3) : nullptr,
                                 ParameterAxis::first, "w_zero_point");
  return single_output(conv_integer_reference(ctx, x, w, nullptr));
}

// --- minic.ConvIntegerWords (include/minic/ops/int8_words.h) --------------------------------

// Inputs: X, W_words, W_sums, x_zero_point. W's type as ConvInteger would have it: int8
// [M, C, KH, KW], C from X.
TensorType unpacked_conv_weights(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& words = ctx.input_type(1);
  if (x.rank() != 4) ctx.fail("X is {}; it must be N x C x H x W", type_string(x));
  if (words.dtype != DType::i32 || words.rank() != 4 || words.shape[1] != (x.shape[1] + 3) / 4) {
    ctx.fail("W_words is {}; for X {} it must be int32 [M, {}, KH, KW]", type_string(words),
             type_string(x), (x.shape[1] + 3) / 4);
  }
  if (ctx.get_int("group", 1) != 1) ctx.fail("group is {}; it must be 1", ctx.get_int("group", 1));
  Shape shape = words.shape;
  shape[1] = x.shape[1];
  return {DType::i8, shape};
}

std::vector<TensorType> conv_integer_words_shape(const ShapeContext& ctx) {
  const TensorType& x = quantized_operand(ctx, 0, 3, "X", "x_zero_point");
  const TensorType w = unpacked_conv_weights(ctx);
  const TensorType& sums = ctx.input_type(2);
  if (sums.dtype != DType::i32 || sums.shape != Shape{w.shape[0]}) {
    ctx.fail("W_sums is {}; it must be int32 [{}]", type_string(sums), w.shape[0]);
  }
  if (ctx.has_input(3)) require_per_tensor(ctx, ctx.input_type(3), "x_zero_point");
  return {{DType::i32, integer_conv_shape(ctx, x, w, nullptr)}};
}

// ConvInteger's reference on W unpacked from its words; W_sums must be W's.
std::vector<Tensor> conv_integer_words_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor w = unpack_words(ctx.input(1), 1, x.shape()[1], DType::i8);
  if (weight_sums(w).to_int64_vector() != ctx.input(2).to_int64_vector()) {
    ctx.fail("W_sums are not the sums of the int8 W that W_words holds");
  }
  Tensor shifted = subtract_zero_point(ctx, x, ctx.has_input(3) ? &ctx.input(3) : nullptr,
                                       ParameterAxis::any, "x_zero_point");
  return single_output(conv_integer_reference(ctx, shifted, w.cast(DType::i32), nullptr));
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
std::vector<TensorType> qlinear_conv_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(3);
  const DType output = check_qlinear_operands(ctx, "x", "w");
  for (size_t index : {1, 4, 6}) {
    if (ctx.input_type(index).dtype != DType::f32) {
      ctx.fail("input {} (a scale) is {}; it must be float", index,
               dtype_name(ctx.input_type(index).dtype));
    }
  }
  for (size_t index : {1, 2, 6, 7}) {
    require_per_tensor(ctx, ctx.input_type(index), "x's and y's scales and zero points");
  }
  for (size_t index : {4, 5}) {
    parameter_shape(ctx, ctx.input_type(index).shape, w.shape, ParameterAxis::first,
                    "w's scale or zero point");
  }
  const TensorType* bias = ctx.has_input(8) ? &ctx.input_type(8) : nullptr;
  if (bias && bias->dtype != DType::i32) {
    ctx.fail("B is {}; it must be int32 (quantised at x_scale * w_scale)", type_string(*bias));
  }
  TensorType wide_bias = bias ? TensorType{DType::i32, bias->shape} : TensorType{};
  return {{output, integer_conv_shape(ctx, x, w, bias ? &wide_bias : nullptr)}};
}

std::vector<Tensor> qlinear_conv_kernel(const KernelContext& ctx) {
  const Tensor& w = ctx.input(3);
  Tensor x = subtract_zero_point(ctx, ctx.input(0), &ctx.input(2), ParameterAxis::any,
                                 "x_zero_point");
  Tensor acc = conv_integer_reference(
      ctx, x, subtract_zero_point(ctx, w, &ctx.input(5), ParameterAxis::first, "w_zero_point"),
      ctx.has_input(8) ? &ctx.input(8) : nullptr);
  // The output's channel axis is W's axis 0: W's per-channel scale reads as [M, 1, ...].
  const Shape& out = acc.shape();
  Shape channel_operand = out;
  channel_operand.erase(channel_operand.begin());
  OutputParameter y_zero_point =
      output_parameter(ctx, ctx.input(7), out, out, ParameterAxis::any, "y_zero_point");
  return single_output(requantize(
      acc, output_parameter(ctx, ctx.input(1), out, out, ParameterAxis::any, "x_scale"),
      output_parameter(ctx, ctx.input(4), channel_operand, out, ParameterAxis::first, "w_scale"),
      output_parameter(ctx, ctx.input(6), out, out, ParameterAxis::any, "y_scale"),
      &y_zero_point, ctx.output_type(0).dtype));
}

}  // namespace

void register_quantized_linear_ops(OpRegistry& registry) {
  registry.add({.name = "MatMulInteger",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 4,
                .fusion = FusionKind::out_fusable,
                .shape_rule = matmul_integer_shape,
                .kernel = matmul_integer_kernel,
                .compute = matmul_integer_compute});
  registry.add({.name = kMatMulIntegerWordsOp,
                .min_inputs = 3,
                .max_inputs = 4,
                .fusion = FusionKind::out_fusable,
                .shape_rule = matmul_integer_words_shape,
                .kernel = matmul_integer_words_kernel,
                .compute = matmul_integer_words_compute});
  registry.add({.name = "ConvInteger",
                .min_opset = 10,
                .min_inputs = 2,
                .max_inputs = 4,
                .fusion = FusionKind::out_fusable,
                .shape_rule = conv_integer_shape,
                .kernel = conv_integer_kernel,
                .compute = conv_integer_compute});
  registry.add({.name = kConvIntegerWordsOp,
                .min_inputs = 3,
                .max_inputs = 4,
                .fusion = FusionKind::out_fusable,
                .shape_rule = conv_integer_words_shape,
                .kernel = conv_integer_words_kernel,
                .compute = conv_integer_words_compute});
  // Opset 21 adds float8 operands and 16-bit float scales to QLinearMatMul; minic takes the
  // 16-bit scales (and 8-bit integer operands only).
  registry.add({.name = "QLinearMatMul",
                .min_opset = 10,
                .min_inputs = 8,
                .max_inputs = 8,
                .fusion = FusionKind::out_fusable,
                .shape_rule = qlinear_matmul_shape,
                .kernel = qlinear_matmul_kernel,
                .compute = qlinear_matmul_compute});
  registry.add({.name = "QLinearConv",
                .min_opset = 10,
                .min_inputs = 8,
                .max_inputs = 9,
                .fusion = FusionKind::out_fusable,
                .shape_rule = qlinear_conv_shape,
                .kernel = qlinear_conv_kernel,
                .compute = qlinear_conv_compute});
}

}  // namespace minic
