// Conv's compute rules: the convolution as loop IR stages. Course module 3.
//
// Four forms, the first that applies:
//   - pointwise (1x1, stride 1, unpadded) over whole vectors of positions (the target's
//     f32 lanes: 16 with AVX-512), or four vectors or more (long_enough): a GEMM over the
//     flattened spatial positions, one per group;
//   - 2-d 1x1 with strides and one group: the strided input elements picked into a
//     buffer, then the form above or the next one on it;
//   - 2-d without dilation: the same on rows of a padded width, strided convolutions
//     through phases of the input, grouped and depthwise ones reading their group's
//     channels (padded_rows_conv_compute below);
//   - the general form (dilated, 1-d or 3-d): a zero-bordered copy of the input where
//     there is padding, then one reduction over (input channel in the group, kernel taps)
//     per output element, with no bounds test in it.
// In each, the bias is an elementwise stage after the reduction, which a fused consumer
// (Relu) inlines.
// All accumulate in f32 for f16 and bf16.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "conv.h"

#include "minic/ir/loop/analysis.h"

#include "compute_window.h"
#include "float_compute.h"

#include <algorithm>

namespace minic {
namespace {

// True if every entry of `values` is `value` (at least `value`).
bool all_equal(const Shape& values, int64_t value) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == value; });
}
bool all_at_least(const Shape& values, int64_t value) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v >= value; });
}

// e * s, e / s and e % s (floor division) for a stride s, written plainly when s is 1, so
// that a unit-stride kernel reads as simply as it is.
loop::Expr scaled(const loop::Expr& e, int64_t s) { return s == 1 ? e : e * s; }
loop::Expr divided(const loop::Expr& e, int64_t s) {
  return s == 1 ? e : loop::FloorDiv::make(e, index(s));
}
loop::Expr remainder(const loop::Expr& e, int64_t s) {
  return s == 1 ? index(0) : loop::FloorMod::make(e, index(s));
}
// a + b, leaving out a term that is the immediate 0.
loop::Expr plus(const loop::Expr& a, const loop::Expr& b) {
  if (loop::as_const_int(a) == 0) return b;
  if (loop::as_const_int(b) == 0) return a;
  return a + b;
}

// The input channel that output channel m reads as the c-th of its group: c with one
// group; group(m) * group_in + c with several (m itself in a depthwise convolution).
loop::Expr input_channel(const ConvAttributes& a, const ComputeTensor& w, const loop::Expr& m,
                         const loop::Expr& c) {
  if (a.group == 1) return c;
  const int64_t group_out = w.dim(0) / a.group;
  return plus(scaled(divided(m, group_out), w.dim(1)), c);
}

// True for a pointwise convolution: 1x1 kernel, stride 1, no dilation, no padding. It is
// a matrix product over flattened spatial positions (with groups, one per group: output
// channel m reads the input channels of its group only).
bool is_pointwise(const ConvAttributes& a) {
  const WindowGeometry& g = a.window;
  return all_equal(g.kernel, 1) && all_equal(g.strides, 1) && all_equal(g.dilations, 1) &&
         all_equal(g.pads_begin, 0) && all_equal(g.pads_end, 0);
}

// A pointwise convolution as the GEMM it is: sum[n, m, p] = sum over c of X[n, c, p] *
// W[m, c], p running over the flattened spatial positions, so that its innermost loop
// runs over all of them (H * W, a multiple of 16 far more often than W alone). X is read
// at (p / W, p % W), which flatten-buffers and simplify turn back into the offset p.
std::vector<ComputeTensor> pointwise_conv_compute(const ComputeContext& ctx,
                                                  const ConvAttributes& a,
                                                  const ComputeTensor& x,
                                                  const ConvOperands& operands) {
  const ComputeTensor& w = operands.w;
  const TensorType& type = operands.output;
  const DType acc = operands.acc;
  const Shape& spatial = a.window.output;
  const int64_t positions = num_elements(spatial);
  // The spatial indices of flat position p, outermost first.
  auto unflatten = [&](const loop::Expr& p) {
    Indices at(spatial.size());
    loop::Expr rest = p;
    for (size_t axis = spatial.size(); axis-- > 0;) {
      at[axis] = axis == 0 ? rest : loop::FloorMod::make(rest, index(spatial[axis]));
      rest = loop::FloorDiv::make(rest, index(spatial[axis]));
    }
    return at;
  };
  ComputeTensor sum = ctx.reduce(
      "conv", {acc, {type.shape[0], type.shape[1], positions}}, {w.dim(1)}, Reducer::sum,
      [&](const Indices& i, const Indices& r) {
        Indices at_x = {i[0], input_channel(a, w, i[1], r[0])};
        Indices at_w = {i[1], r[0]};
        for (const loop::Expr& position : unflatten(i[2])) at_x.push_back(position);
        for (size_t axis = 0; axis < spatial.size(); ++axis) at_w.push_back(index(0));
        return operands.multiply(x(at_x), w(at_w));
      });
  return {ctx.compute("conv_bias", type, [&](const Indices& i) {
    loop::Expr position = i[2];
    for (size_t axis = 1; axis < spatial.size(); ++axis) {
      position = position * spatial[axis] + i[2 + axis];
    }
    return operands.finish_sum(sum({i[0], i[1], position}), i);
  })};
}

// True for a 2-d 1x1 convolution with strides (a ResNet projection): unpadded, undilated,
// one group. It reads every stride-th input element only.
bool is_strided_pointwise(const ConvAttributes& a) {
  const WindowGeometry& g = a.window;
  return a.group == 1 && g.rank() == 2 && all_equal(g.kernel, 1) && all_equal(g.dilations, 1) &&
         all_equal(g.pads_begin, 0) && all_equal(g.pads_end, 0) && !all_equal(g.strides, 1);
}

// The flattened position count that column tiles divide: one vector of the target's f32
// lanes (16 with AVX-512, 8 with AVX2), as the schedule rules count them. A GPU's rules
// spread positions over threads, with a guard for the last block: no padding (1).
int64_t position_multiple(const ComputeContext& ctx) {
  if (ctx.target().is_cuda()) return 1;
  return ctx.target().vector_lanes(DType::f32);
}

// True if `positions` output positions need no rounding up for the GEMM rule's column
// tiles: whole vectors (position_multiple), or four vectors or more, which tiles of two or
// four vectors cover with a last tile of under one (196: 64, 64, 64 and 4). Fewer (a 7 x 7
// output) are rounded up: 49 positions computed as one tile of 64 run faster than three
// of 16 and one of 1.
bool long_enough(const ComputeContext& ctx, const Shape& positions) {
  const int64_t count = num_elements(positions);
  const int64_t multiple = position_multiple(ctx);
  return count % multiple == 0 || count >= 4 * multiple;
}

// True for a 2-d convolution without dilation or cropping: the form computed on padded rows
// below (any groups: a depthwise convolution too).
bool has_unit_dilations(const ConvAttributes& a) {
  const WindowGeometry& g = a.window;
  return g.rank() == 2 && all_equal(g.dilations, 1) && all_at_least(g.pads_begin, 0) &&
         all_at_least(g.pads_end, 0);
}

// A 2-d convolution computed on rows of a padded width, so that it too is a GEMM over
// flattened positions (an "implicit GEMM").
//
// With unit strides: the input is copied into a zero-bordered buffer whose rows are
// `width` wide, flattened: X sits at (r + pad_top, c + pad_left). Output position
// (oh, ow) is flat position p = oh * width + ow, and tap (kh, kw) reads the copy at
// p + kh * width + kw: an offset that moves one element per position, so the positions
// vectorise. The columns ow >= W_out of each row (`width` is W_out + KW - 1) are computed
// and thrown away, and so are the positions after the last row up to a multiple of a
// vector (position_multiple), which is what the GEMM rule's column tiles need: a 7 x 7
// output is 49 positions computed as 64 (the pointwise form's positions are rounded up
// only when they are fewer than four vectors: long_enough).
//
//   pad[n, c, q]       = X[n, c, q / width - pad_top, q % width - pad_left], 0 outside
//   sum[n, m, p]       = sum over c, kh, kw of pad[n, c, p + kh * width + kw] * W[m, c, kh, kw]
//   Y[n, m, oh, ow]    = sum[n, m, oh * width + ow] + B[m]
//
// With strides (sh, sw), the padded input is first split into sh * sw phases, phase
// (a, b) holding the elements at rows a, a + sh, ... and columns b, b + sw, ...; tap
// (kh, kw) of output (oh, ow) is element (oh + kh / sh, ow + kw / sw) of phase
// (kh % sh, kw % sw), so each phase is read as in the unit-stride case:
//
//   pad[n, c, a * sw + b, q] = X[n, c, sh * (q / width) + a - pad_top,
//                                      sw * (q % width) + b - pad_left], 0 outside
//   sum[n, m, p] = sum over c, kh, kw of
//                  pad[n, c, (kh % sh) * sw + kw % sw, p + (kh / sh) * width + kw / sw] * W[..]
std::vector<ComputeTensor> padded_rows_conv_compute(const ComputeContext& ctx,
                                                    const ConvAttributes& a,
                                                    const ComputeTensor& x,
                                                    const ConvOperands& operands) {
  const ComputeTensor& w = operands.w;
  const WindowGeometry& g = a.window;
  const TensorType& type = operands.output;
  const DType acc = operands.acc;
  const int64_t sh = g.strides[0];
  const int64_t sw = g.strides[1];
  const int64_t out_rows = g.output[0];
  const int64_t width = g.output[1] + (g.kernel[1] - 1) / sw;
  // Whole vectors: the GEMM rule's column tiles of two or four vectors end in a shorter
  // tile of one or two (gemm_tile), and every position rounded up is work thrown away (a
  // 28 x 28 output is 784 positions, 800 in pairs of vectors).
  const int64_t multiple = position_multiple(ctx);
  const int64_t positions = (out_rows * width + multiple - 1) / multiple * multiple;
  // The thrown-away positions past the last row, and the last row's thrown-away columns,
  // read up to ((kernel[0] - 1) / sh) * width + (kernel[1] - 1) / sw elements past the
  // last position; the copy is zero there.
  const int64_t length = positions + (g.kernel[0] - 1) / sh * width + (g.kernel[1] - 1) / sw;

  ComputeTensor padded = ctx.keep(ctx.compute(
      "pad", {x.dtype(), {x.dim(0), x.dim(1), sh * sw, length}}, [&](const Indices& i) {
        // Phase i[2] is (a, b) = (i[2] / sw, i[2] % sw).
        loop::Expr row = plus(scaled(loop::FloorDiv::make(i[3], index(width)), sh),
                              sh == 1 ? index(0) : divided(i[2], sw)) - g.pads_begin[0];
        loop::Expr column = plus(scaled(loop::FloorMod::make(i[3], index(width)), sw),
                                 remainder(i[2], sw)) - g.pads_begin[1];
        loop::Expr inside =
            loop::And::make(in_range(row, g.input[0]), in_range(column, g.input[1]));
        return select(inside, x({i[0], i[1], row, column}), operands.border_value());
      }));
  ComputeTensor sum = ctx.reduce(
      "conv", {acc, {type.shape[0], type.shape[1], positions}},
      {w.dim(1), g.kernel[0], g.kernel[1]}, Reducer::sum, [&](const Indices& i, const Indices& r) {
        loop::Expr phase = plus(scaled(remainder(r[1], sh), sw), remainder(r[2], sw));
        loop::Expr offset = i[2] + divided(r[1], sh) * width + divided(r[2], sw);
        return operands.multiply(padded({i[0], input_channel(a, w, i[1], r[0]), phase, offset}),
                                 w({i[1], r[0], r[1], r[2]}));
      });
  return {ctx.compute("conv_bias", type, [&](const Indices& i) {
    return operands.finish_sum(sum({i[0], i[1], i[2] * width + i[3]}), i);
  })};
}

// The general form's input: where there is padding, a zero-bordered copy of X of its own,
// so that the reduction reads every tap without a bounds test (a test on the output
// position would keep the reduction's inner loop from being vectorised); `read` becomes
// the geometry of the copy. X itself, with `read` unchanged, where nothing is padded or
// the padding crops.
ComputeTensor zero_bordered_input(const ComputeContext& ctx, const WindowGeometry& g,
                                  const ComputeTensor& x, const ConvOperands& operands,
                                  WindowGeometry& read) {
  auto positive = [](int64_t p) { return p > 0; };
  auto negative = [](int64_t p) { return p < 0; };
  bool pads = std::any_of(g.pads_begin.begin(), g.pads_begin.end(), positive) ||
              std::any_of(g.pads_end.begin(), g.pads_end.end(), positive);
  bool cropped = std::any_of(g.pads_begin.begin(), g.pads_begin.end(), negative) ||
                 std::any_of(g.pads_end.begin(), g.pads_end.end(), negative);
  if (!pads || cropped) return x;
  Shape padded = x.type().shape;
  for (size_t axis = 0; axis < g.input.size(); ++axis) {
    padded[2 + axis] = g.input[axis] + g.pads_begin[axis] + g.pads_end[axis];
  }
  auto element = [&](const Indices& i) {
    Indices at = {i[0], i[1]};
    loop::Expr inside;
    for (size_t axis = 0; axis < g.input.size(); ++axis) {
      loop::Expr position = i[2 + axis] - g.pads_begin[axis];
      loop::Expr test = in_range(position, g.input[axis]);
      inside = inside ? loop::And::make(inside, test) : test;
      at.push_back(position);
    }
    return select(inside, x(at), operands.border_value());
  };
  ComputeTensor source = ctx.keep(ctx.compute("pad", {x.type().dtype, padded}, element));
  read.input.assign(padded.begin() + 2, padded.end());
  read.pads_begin.assign(g.pads_begin.size(), 0);
  read.pads_end.assign(g.pads_end.size(), 0);
  return source;
}

// The general form (dilated, 1-d or 3-d convolutions): one reduction over (input channel
// in the group, kernel taps) per output element, on the zero-bordered input.
std::vector<ComputeTensor> general_conv_compute(const ComputeContext& ctx,
                                                const ConvAttributes& a,
                                                const ComputeTensor& x,
                                                const ConvOperands& operands) {
  const ComputeTensor& w = operands.w;
  const WindowGeometry& g = a.window;
  const TensorType& type = operands.output;
  const DType acc = operands.acc;
  Shape reduce_extents = {w.dim(1)};  // the input channels of a group
  reduce_extents.insert(reduce_extents.end(), g.kernel.begin(), g.kernel.end());
  WindowGeometry read = g;
  ComputeTensor source = zero_bordered_input(ctx, g, x, operands, read);

  // sum[n, m, o] = sum over c, k of X[n, group(m) * group_in + c, position(o, k)] * W[m, c, k]
  ComputeTensor sum = ctx.reduce("conv", {acc, type.shape}, reduce_extents, Reducer::sum,
                                 [&](const Indices& i, const Indices& r) {
    Indices at_x = {i[0], input_channel(a, w, i[1], r[0])};
    Indices at_w = {i[1], r[0]};
    Indices o(i.begin() + 2, i.end());
    Indices k(r.begin() + 1, r.end());
    for (size_t axis = 0; axis < o.size(); ++axis) {
      at_x.push_back(window_position(read, axis, o[axis], k[axis]));
      at_w.push_back(k[axis]);
    }
    loop::Expr product = operands.multiply(source(at_x), w(at_w));
    loop::Expr inside = window_inside(read, o, k);
    return inside ? select(inside, product, constant(acc, 0)) : product;
  });
  if (!operands.bias && !operands.finish && acc == type.dtype) return {sum};
  return {ctx.compute("conv_bias", type,
                      [&](const Indices& i) { return operands.finish_sum(sum(i), i); })};
}

}  // namespace

loop::Expr ConvOperands::multiply(const loop::Expr& x_value, const loop::Expr& w_value) const {
  if (product) return product(x_value, w_value);
  return cast(acc, x_value) * cast(acc, w_value);
}

loop::Expr ConvOperands::border_value() const {
  return border ? *border : constant(x.dtype(), 0);
}

loop::Expr ConvOperands::finish_sum(const loop::Expr& sum, const Indices& i) const {
  loop::Expr value = bias ? sum + cast(acc, (*bias)({i[1]})) : sum;
  return finish ? finish(value, i) : cast(output.dtype, value);
}

std::vector<ComputeTensor> conv_compute_of(const ComputeContext& ctx, const ConvAttributes& a,
                                           const ConvOperands& operands) {
  const ComputeTensor& x = operands.x;
  const Shape& out = a.window.output;
  if (is_pointwise(a) && long_enough(ctx, out)) {
    return pointwise_conv_compute(ctx, a, x, operands);
  }
  if (is_strided_pointwise(a)) {
    // Every stride-th input element, kept: then a pointwise convolution of that.
    ComputeTensor picked = ctx.keep(ctx.compute(
        "subsample", {x.dtype(), {x.dim(0), x.dim(1), out[0], out[1]}}, [&](const Indices& i) {
          return x({i[0], i[1], i[2] * a.window.strides[0], i[3] * a.window.strides[1]});
        }));
    ConvAttributes unit = a;
    unit.window.input = out;
    unit.window.strides.assign(2, 1);
    if (long_enough(ctx, out)) return pointwise_conv_compute(ctx, unit, picked, operands);
    return padded_rows_conv_compute(ctx, unit, picked, operands);
  }
  if (has_unit_dilations(a)) return padded_rows_conv_compute(ctx, a, x, operands);
  return general_conv_compute(ctx, a, x, operands);
}

std::vector<ComputeTensor> conv_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& w = ctx.input(1);
  const ComputeTensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  ConvAttributes a = ConvAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  const TensorType& type = ctx.output_type(0);
  ConvOperands operands{.x = x,
                        .w = w,
                        .bias = bias ? std::optional(*bias) : std::nullopt,
                        .acc = accumulation_dtype(type.dtype),
                        .output = type};
  return conv_compute_of(ctx, a, operands);
}

}  // namespace minic
