// The compute rules of the integer matrix products and convolutions: MatMulInteger,
// QLinearMatMul, ConvInteger and QLinearConv. Course module 7 (and 3 for compute rules).
//
// Each sums the products of its operands minus their zero points in int32: MatMul's
// textbook reduction, and Conv's own rule (conv_compute.cpp) on int32 stages of X and W.
// The QLinear ops add a stage that requantises each sum as the reference kernel does
// (quantized_linear.cpp).
//
// On a CPU, an int8 matrix product of uint8 (or int8) A and int8 B whose zero point is 0
// takes a second form, the one VNNI computes in: four products at a time. Both operands are
// packed into int32 words of four consecutive bytes along k,
//   a_words[i, k4] = bytes A[i, 4 k4 .. 4 k4 + 3]      b_words[k4, j] = bytes B[4 k4 .. 4 k4 + 3, j]
// (zero bytes past K), and the reduction runs over the words:
//   sum[i, j] = sum over k4 of dot4_u8i8(a_words[i, k4], b_words[k4, j])
// dot4_u8i8 (include/minic/ir/loop/expr.h) reads a's bytes unsigned and b's signed, which
// is vpdpbusd's arithmetic: the GEMM rule vectorises j, and code generation turns
// `sum + dot4_u8i8(...)` over 16 lanes into one vpdpbusd, 64 multiply-adds. A's zero point
// comes out as a correction, since sum (a - za) b = sum a b - za sum b:
//   matmul[i, j] = sum[i, j] - za[i] * column_sum[j]          column_sum[j] = sum over k of B[k, j]
// An int8 A is read as uint8 by adding 128 to every byte and to its zero point. Where B is
// a constant, the `pack-int8-weights` pass packs its words and column sums at compile time
// and minic.MatMulIntegerWords takes them as inputs (matmul_integer_words_compute); the
// same for a convolution's weights, packed along the input channels
// (minic.ConvIntegerWords).
//
// Chapter: docs/module7-quantisation.md#3-int8-kernels-on-vnni
#include "conv.h"
#include "matmul.h"
#include "quantize.h"
#include "quantized_linear.h"

#include <functional>
#include <optional>

namespace minic {

namespace {

// As requantize (quantized_linear.cpp): the int32 `sum` times `multiplier` (computed in the
// scales' type) in double, rounded, plus the output's zero point, saturated to `type`.
loop::Expr requantized(DType type, const loop::Expr& sum, const loop::Expr& multiplier,
                       const loop::Expr& zero_point) {
  loop::Expr value = call("round", {cast(DType::f64, sum) * cast(DType::f64, multiplier)});
  return saturate_to(type, value + cast(DType::f64, zero_point));
}

// The indices into a parameter (zero point or scale) of `shape` for element `at` of its
// operand (or of the output, for the output's own parameters), read as `axis` says.
Indices parameter_indices(const Shape& shape, const Indices& at, ParameterAxis axis) {
  if (shape.size() == 1 && shape[0] != 1) {
    if (axis == ParameterAxis::row && at.size() >= 2) return {at[at.size() - 2]};
    if (axis == ParameterAxis::first) return {at[0]};
  }
  return broadcast_indices(at, shape);
}

// True if input `index` is absent or a constant of zeros.
bool is_zero(const ComputeContext& ctx, size_t index) {
  if (!ctx.has_input(index)) return true;
  const Tensor* value = ctx.known_input(index);
  if (!value) return false;
  for (int64_t i = 0; i < value->num_elements(); ++i) {
    if (value->as_int64(i) != 0) return false;
  }
  return true;
}

// q widened to int32 minus its zero point (input `zero_index`, left out where it is
// absent or 0), at `at`.
loop::Expr widened(const ComputeContext& ctx, const ComputeTensor& q, size_t zero_index,
                   ParameterAxis axis, const Indices& at, DType type = DType::i32) {
  loop::Expr value = cast(type, q(at));
  if (is_zero(ctx, zero_index)) return value;
  const ComputeTensor& zero = ctx.input(zero_index);
  return value - cast(type, zero(parameter_indices(zero.shape(), at, axis)));
}

// The int32 word of four bytes, the first in the lowest bits; `byte(t)` gives byte t as a
// u32 expression of a value in [0, 255].
loop::Expr word(const std::function<loop::Expr(int64_t t)>& byte) {
  loop::Expr sum = byte(0);
  for (int64_t t = 1; t < 4; ++t) {
    sum = sum + byte(t) * constant(DType::u32, static_cast<double>(int64_t{1} << (8 * t)));
  }
  return cast(DType::i32, sum);
}

// Element `at` of the uint8 or int8 operand `q` as a byte in [0, 255], 0 where `inside` is
// false: an int8 value plus 128 (the shift that makes A unsigned).
loop::Expr unsigned_byte(const ComputeTensor& q, const Indices& at, const loop::Expr& inside) {
  loop::Expr value = q.dtype() == DType::u8 ? cast(DType::i32, q(at))
                                             : cast(DType::i32, q(at)) + int64_t{128};
  return cast(DType::u32, select(inside, value, constant(DType::i32, 0)));
}

// The zero point of the uint8 or int8 operand `q` as dot4_u8i8 reads q (an int8 q is read
// plus 128, so its zero point is too): input `zero_index` for q's element `at`, read as
// `axis` says; null where it is 0.
loop::Expr word_zero_point(const ComputeContext& ctx, const ComputeTensor& q, size_t zero_index,
                           const Indices& at, ParameterAxis axis) {
  loop::Expr zero;
  if (!is_zero(ctx, zero_index)) {
    const ComputeTensor& zero_point = ctx.input(zero_index);
    zero = cast(DType::i32, zero_point(parameter_indices(zero_point.shape(), at, axis)));
  }
  if (q.dtype() == DType::i8) zero = zero ? zero + int64_t{128} : constant(DType::i32, 128);
  return zero;
}

// Element `at` of the int8 operand `q` as its byte (two's complement), 0 where `inside` is
// false.
loop::Expr signed_byte(const ComputeTensor& q, const Indices& at, const loop::Expr& inside) {
  return cast(DType::u32, select(inside, cast(DType::u8, q(at)), constant(DType::u8, 0)));
}

// `q` packed into int32 words of four consecutive elements along `axis` (zero bytes past
// its end), kept in a buffer: A or x's bytes read unsigned, B or W's (`is_signed`) signed.
ComputeTensor packed_words(const ComputeContext& ctx, const std::string& name,
                           const ComputeTensor& q, int64_t axis, bool is_signed) {
  const int64_t length = q.dim(axis);
  Shape shape = q.shape();
  shape[axis] = (length + 3) / 4;
  return ctx.keep(ctx.compute(name, {DType::i32, shape}, [&](const Indices& i) {
    return word([&](int64_t t) {
      Indices at = i;
      at[axis] = i[axis] * 4 + t;
      loop::Expr inside = loop::LT::make(at[axis], index(length));
      return is_signed ? signed_byte(q, at, inside) : unsigned_byte(q, at, inside);
    });
  }));
}

// The int32 product of A (input `a_index`, its zero point input `za_index`) and B in VNNI's
// form, B given as its words `b_words` [..., ceil(K / 4), N] (B itself is `b_shape`): the
// sum of dot4_u8i8 over the words, less A's zero point (plus 128 for an int8 A) times B's
// column sums, which `column_sums` makes where that correction is needed.
ComputeTensor word_product(const ComputeContext& ctx, size_t a_index, size_t za_index,
                           const ComputeTensor& b_words, const Shape& b_shape,
                           const std::function<ComputeTensor()>& column_sums) {
  const ComputeTensor& a = ctx.input(a_index);
  MatMulShapes s = matmul_shapes(ctx, a.shape(), b_shape);
  const auto b_rank = static_cast<int64_t>(b_shape.size());
  ComputeTensor a_words = packed_words(ctx, "a_words", a, a.rank() - 1, false);
  ComputeTensor sum = ctx.reduce(stage_name(ctx) + "_sum", {DType::i32, s.output},
                                 {b_words.dim(b_rank - 2)}, Reducer::sum,
                                 [&](const Indices& i, const Indices& k) {
    MatMulOperandIndices at = matmul_operand_indices(s, a.rank(), b_rank, i, k[0]);
    return call("dot4_u8i8", {a_words(at.a), b_words(at.b)});
  });
  if (is_zero(ctx, za_index) && a.dtype() != DType::i8) return sum;
  ComputeTensor column_sum = column_sums();
  return ctx.compute(stage_name(ctx) + "_corrected", {DType::i32, s.output},
                     [&](const Indices& i) {
    Indices row(i.begin(), i.end() - 1);
    row.push_back(index(0));  // A's element [..., i, 0]: its row's zero point
    loop::Expr zero = word_zero_point(ctx, a, za_index, row, ParameterAxis::row);
    Indices column(i.begin(), i.end() - 2);
    column.push_back(i.back());
    return sum(i) - zero * column_sum(broadcast_indices(column, column_sum.shape()));
  });
}

// The sum of MatMulInteger or QLinearMatMul in VNNI's form (the file comment), or nullopt
// where it does not apply: a GPU target, operands of rank 1 or of other types, B's zero
// point not 0.
std::optional<ComputeTensor> word_matmul_sum(const ComputeContext& ctx, size_t a_index,
                                             size_t b_index, size_t za_index, size_t zb_index) {
  const ComputeTensor& a = ctx.input(a_index);
  const ComputeTensor& b = ctx.input(b_index);
  if (ctx.target().is_cuda() || a.rank() < 2 || b.rank() < 2 || b.dtype() != DType::i8 ||
      !is_zero(ctx, zb_index)) {
    return std::nullopt;
  }
  const int64_t k_axis_b = b.rank() - 2;
  ComputeTensor b_words = packed_words(ctx, "b_words", b, k_axis_b, true);
  return word_product(ctx, a_index, za_index, b_words, b.shape(), [&] {
    Shape column_shape = b.shape();
    column_shape.erase(column_shape.begin() + k_axis_b);
    return ctx.reduce("column_sum", {DType::i32, column_shape}, {b.dim(k_axis_b)},
                      Reducer::sum, [&](const Indices& i, const Indices& k) {
      Indices at = i;
      at.insert(at.begin() + k_axis_b, k[0]);
      return cast(DType::i32, b(at));
    });
  });
}

// The int32 sum of MatMulInteger and QLinearMatMul: A, B and their zero points are inputs
// a, b, za and zb. In VNNI's form where it applies, else the textbook reduction: in int32,
// or, where K is at most kExactFloatK, in float32 and then converted. Each product of two
// 8-bit values less their zero points is at most 255 * 255 in magnitude, so every partial
// sum of at most 258 of them is an integer below 2^24, which float32 holds exactly: the
// float sum is the int32 one, to the bit, and a CPU multiplies and adds floats (FMA) at
// several times the rate of 32-bit integers (an attention's Q K^T, two activations, K the
// head size 64).
constexpr int64_t kExactFloatK = (int64_t{1} << 24) / (255 * 255);

ComputeTensor integer_matmul_sum(const ComputeContext& ctx, size_t a_index, size_t b_index,
                                 size_t za_index, size_t zb_index) {
  if (std::optional<ComputeTensor> words = word_matmul_sum(ctx, a_index, b_index, za_index,
                                                           zb_index)) {
    return *words;
  }
  const ComputeTensor& a = ctx.input(a_index);
  const ComputeTensor& b = ctx.input(b_index);
  MatMulShapes s = matmul_shapes(ctx, a.shape(), b.shape());
  if (s.k > kExactFloatK) {
    return ctx.reduce(stage_name(ctx) + "_sum", {DType::i32, s.output}, {s.k}, Reducer::sum,
                      [&](const Indices& i, const Indices& k) {
      MatMulOperandIndices at = matmul_operand_indices(s, a.rank(), b.rank(), i, k[0]);
      return widened(ctx, a, za_index, ParameterAxis::row, at.a) *
             widened(ctx, b, zb_index, ParameterAxis::any, at.b);
    });
  }
  // The operands less their zero points as floats, each kept in a buffer: converted once,
  // not once for every product they take part in.
  auto as_float = [&](const ComputeTensor& q, size_t zero, ParameterAxis axis,
                      const std::string& name) {
    return ctx.keep(ctx.compute(name, {DType::f32, q.shape()}, [&](const Indices& i) {
      return widened(ctx, q, zero, axis, i, DType::f32);
    }));
  };
  ComputeTensor a_real = as_float(a, za_index, ParameterAxis::row, "a_real");
  ComputeTensor b_real = as_float(b, zb_index, ParameterAxis::any, "b_real");
  ComputeTensor sum = ctx.reduce(stage_name(ctx) + "_sum", {DType::f32, s.output}, {s.k},
                                 Reducer::sum, [&](const Indices& i, const Indices& k) {
    MatMulOperandIndices at = matmul_operand_indices(s, a.rank(), b.rank(), i, k[0]);
    return a_real(at.a) * b_real(at.b);
  });
  return ctx.compute(stage_name(ctx) + "_exact", {DType::i32, s.output},
                     [&](const Indices& i) { return cast(DType::i32, sum(i)); });
}

// Conv's rule in VNNI's form on X (input `x_index`, its zero point input `zx_index`) and W
// given as its words `w_words` [M, ceil(C / 4), KH, KW]: a tap's term is
// dot4_u8i8(x_word, w_word), four input channels at a time. X's zero point comes out as
// A's does in the matrix product: the padding reads X's zero point (the real 0) instead of
// 0, so that every tap reads x = (x - zx) + zx, and sum (x - zx) w = sum x w - zx sum w,
// where sum w is the sum of output channel m's weights (`w_sums` makes them where needed),
// subtracted with the bias.
std::vector<ComputeTensor> word_conv_product(
    const ComputeContext& ctx, size_t x_index, size_t zx_index, const ComputeTensor& w_words,
    const std::function<ComputeTensor()>& w_sums, const std::optional<ComputeTensor>& bias,
    const std::function<loop::Expr(const loop::Expr&, const Indices&)>& finish) {
  const ComputeTensor& x = ctx.input(x_index);
  ComputeTensor x_words = packed_words(ctx, "x_words", x, 1, false);
  // X's zero point as dot4_u8i8 reads X (one value: per tensor).
  const loop::Expr zero = word_zero_point(ctx, x, zx_index, Indices(4, index(0)),
                                          ParameterAxis::any);
  std::optional<ComputeTensor> corrected = bias;
  if (zero) {
    ComputeTensor w_sum = w_sums();
    corrected = ctx.compute("bias_corrected", {DType::i32, {w_words.dim(0)}},
                            [&](const Indices& i) {
      return (bias ? (*bias)(i) : constant(DType::i32, 0)) - zero * w_sum(i);
    });
  }
  loop::Expr border = constant(DType::i32, 0);
  if (zero) {
    border = cast(DType::i32, cast(DType::u32, zero) * constant(DType::u32, 0x01010101));
  }
  ConvAttributes a = ConvAttributes::read(ctx, x_words.type(), w_words.type(),
                                          corrected ? &corrected->type() : nullptr);
  ConvOperands operands{
      .x = x_words,
      .w = w_words,
      .bias = corrected,
      .acc = DType::i32,
      .output = ctx.output_type(0),
      .finish = finish,
      .product = [](const loop::Expr& x_word,
                    const loop::Expr& w_word) { return call("dot4_u8i8", {x_word, w_word}); },
      .border = border};
  return conv_compute_of(ctx, a, operands);
}

// Conv's rule in VNNI's form (word_conv_product) with W packed here, or nullopt where it
// does not apply: a GPU target, groups, an input of other than 8 bits, W not int8 or with a
// zero point.
std::optional<std::vector<ComputeTensor>> word_conv_compute(
    const ComputeContext& ctx, size_t x_index, size_t w_index, size_t zx_index, size_t zw_index,
    const std::optional<ComputeTensor>& bias,
    const std::function<loop::Expr(const loop::Expr&, const Indices&)>& finish) {
  const ComputeTensor& x = ctx.input(x_index);
  const ComputeTensor& w = ctx.input(w_index);
  if (ctx.target().is_cuda() || ctx.get_int("group", 1) != 1 || w.dtype() != DType::i8 ||
      !is_zero(ctx, zw_index) || x.rank() != 4) {
    return std::nullopt;
  }
  ComputeTensor w_words = packed_words(ctx, "w_words", w, 1, true);
  return word_conv_product(ctx, x_index, zx_index, w_words, [&] {
    Shape taps(w.shape().begin() + 1, w.shape().end());
    return ctx.reduce("w_sum", {DType::i32, {w.dim(0)}}, taps, Reducer::sum,
                      [&](const Indices& i, const Indices& r) {
      Indices at = {i[0]};
      at.insert(at.end(), r.begin(), r.end());
      return cast(DType::i32, w(at));
    });
  }, bias, finish);
}

// Conv's compute rule (conv_compute.cpp) on X and W widened to int32 minus their zero
// points, summing in int32; input `bias` (if present) is the int32 bias. In VNNI's form
// where it applies.
std::vector<ComputeTensor> integer_conv_compute(
    const ComputeContext& ctx, size_t x_index, size_t w_index, size_t zx_index, size_t zw_index,
    std::optional<size_t> bias_index,
    std::function<loop::Expr(const loop::Expr&, const Indices&)> finish) {
  std::optional<ComputeTensor> bias;
  if (bias_index && ctx.has_input(*bias_index)) bias = ctx.input(*bias_index);
  if (std::optional<std::vector<ComputeTensor>> words =
          word_conv_compute(ctx, x_index, w_index, zx_index, zw_index, bias, finish)) {
    return *words;
  }
  const ComputeTensor& x = ctx.input(x_index);
  const ComputeTensor& w = ctx.input(w_index);
  ComputeTensor wide_x = ctx.compute("x_shifted", {DType::i32, x.shape()}, [&](const Indices& i) {
    return widened(ctx, x, zx_index, ParameterAxis::any, i);
  });
  ComputeTensor wide_w = ctx.compute("w_shifted", {DType::i32, w.shape()}, [&](const Indices& i) {
    return widened(ctx, w, zw_index, ParameterAxis::first, i);
  });
  ConvAttributes a = ConvAttributes::read(ctx, wide_x.type(), wide_w.type(),
                                          bias ? &bias->type() : nullptr);
  ConvOperands operands{.x = wide_x,
                        .w = wide_w,
                        .bias = bias,
                        .acc = DType::i32,
                        .output = ctx.output_type(0),
                        .finish = std::move(finish)};
  return conv_compute_of(ctx, a, operands);
}

}  // namespace

std::vector<ComputeTensor> matmul_integer_compute(const ComputeContext& ctx) {
  return {integer_matmul_sum(ctx, 0, 1, 2, 3)};
}

// Inputs A, B_words, B_column_sums, a_zero_point: the word form with B's words and column
// sums as they come (include/minic/ops/int8_words.h).
std::vector<ComputeTensor> matmul_integer_words_compute(const ComputeContext& ctx) {
  const ComputeTensor& a = ctx.input(0);
  const ComputeTensor& b_words = ctx.input(1);
  const Shape b_shape = {a.dim(a.rank() - 1), b_words.dim(1)};
  return {word_product(ctx, 0, 3, b_words, b_shape, [&] { return ctx.input(2); })};
}

std::vector<ComputeTensor> qlinear_matmul_compute(const ComputeContext& ctx) {
  if (ctx.input(0).rank() < 2 || ctx.input(3).rank() < 2) {
    ctx.no_rule("a 1-D operand (its scale has no row or column to follow)");
  }
  ComputeTensor sum = integer_matmul_sum(ctx, 0, 3, 2, 5);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute(stage_name(ctx), type, [&](const Indices& i) {
    auto at = [&](size_t index, ParameterAxis axis) {
      const ComputeTensor& p = ctx.input(index);
      return p(parameter_indices(p.shape(), i, axis));
    };
    loop::Expr multiplier = loop::Div::make(
        at(1, ParameterAxis::row) * at(4, ParameterAxis::any), at(6, ParameterAxis::any));
    return requantized(type.dtype, sum(i), multiplier, at(7, ParameterAxis::any));
  })};
}

// --- convolutions ----------------------------------------------------------------------------

std::vector<ComputeTensor> conv_integer_compute(const ComputeContext& ctx) {
  return integer_conv_compute(ctx, 0, 1, 2, 3, std::nullopt, {});
}

// Inputs X, W_words, W_sums, x_zero_point: the word form with W's words and sums as they
// come (include/minic/ops/int8_words.h).
std::vector<ComputeTensor> conv_integer_words_compute(const ComputeContext& ctx) {
  return word_conv_product(ctx, 0, 3, ctx.input(1), [&] { return ctx.input(2); },
                           std::nullopt, {});
}

// Requantised with the multiplier x_scale * w_scale[m] / y_scale.
std::vector<ComputeTensor> qlinear_conv_compute(const ComputeContext& ctx) {
  const DType type = ctx.output_type(0).dtype;
  auto finish = [&](const loop::Expr& sum, const Indices& i) {
    auto one = [&](size_t input) {
      const ComputeTensor& p = ctx.input(input);
      return p(Indices(p.shape().size(), index(0)));
    };
    const ComputeTensor& w_scale = ctx.input(4);
    loop::Expr per_channel =
        w_scale(parameter_indices(w_scale.shape(), {i[1]}, ParameterAxis::first));
    loop::Expr multiplier = loop::Div::make(one(1) * per_channel, one(6));
    return requantized(type, sum, multiplier, one(7));
  };
  return integer_conv_compute(ctx, 0, 3, 2, 5, 8, finish);
}

}  // namespace minic
