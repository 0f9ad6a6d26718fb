// minic.NchwcConv: Conv on tensors in the blocked channel layout NCHWc.
//
// Course module 4. The layout (include/minic/ops/nchwc.h) keeps channels in blocks
// of b, innermost. The op is Conv with every tensor in blocks:
//
//   X  [N, Cb, H, W, b] blocked, or [N, C, H, W] plain: a network's first convolution,
//      whose few input channels do not fill a block, reads its input as it is
//   W  [Mb, Cg / bi, KH, KW, bi, b]   (nchwc_conv_weights: output channels in blocks of b,
//                                      input channels of a group in blocks of bi)
//   B  [Mb, b] (optional)
//   Y  [N, Mb, OH, OW, b]
//
//   Y[n, mb, oh, ow, j] = B[mb, j] + sum over cb, kh, kw, i of
//       X(n, g(m) * Cg + cb * bi + i, oh * sh - pt + kh * dh, ow * sw - pl + kw * dw)
//         * W[mb, cb, kh, kw, i, j]
//
// where m = mb * b + j is the output channel, Cg and Mg the input and output channels of
// a group (C / group and Mb * b / group, C counting a blocked input's padding channels),
// g(m) = m / Mg its group, and X(n, c, h, w) reads X[n, c / b, h, w, c % b] (blocked) or
// X[n, c, h, w] (plain), 0 outside the input. The attributes are Conv's: group, strides,
// pads or auto_pad, dilations (`group` counts a blocked input's padding channels).
//
// Three forms, the ones whose lanes read one vector of the input or a broadcast value:
//   - one group (bi = b for a blocked input, bi = C for a plain one);
//   - depthwise: one channel per group (Cg = Mg = 1, bi = 1), a blocked input: lane j
//     reads lane j of the same block;
//   - grouped: blocked input, Cg and Mg multiples of b (bi = b): a block lies in one group.
//
// The reference kernel is Conv's (conv.cpp) on the tensors unblocked, its result put into
// blocks. The compute rule (below) is the formula with X read from a zero-bordered copy where
// there is padding, the reduction over (cb, kh, kw, i) -- the input channels of a block
// innermost, which sit next to each other in memory -- and the bias as an elementwise
// stage after it, which fused consumers (Relu, a residual Add) inline. The CPU rule that
// tiles it is in src/schedule/rules/cpu_conv.cpp.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#include "minic/ops/nchwc.h"

#include "compute_window.h"
#include "conv.h"

#include <cstring>
#include <optional>

namespace minic {

namespace {

// Copies the elements of Conv's weights [M, Cg, KH, KW] to or from their blocked places
// [Mb, CB, KH, KW, bi, b] (bytes, any element type); `plain` has M <= Mb * b output and
// Cg <= CB * bi input channels, and the blocked places of the others are left as they are.
void copy_weights(const Tensor& from, Tensor& to, const Shape& plain, const Shape& blocked,
                  bool to_blocked) {
  const int64_t block = blocked[5];
  const int64_t input_block = blocked[4];
  const size_t size = static_cast<size_t>(dtype_size(to.dtype()));
  int64_t at = 0;  // row-major position in the blocked tensor
  for (int64_t mb = 0; mb < blocked[0]; ++mb) {
    for (int64_t cb = 0; cb < blocked[1]; ++cb) {
      for (int64_t y = 0; y < blocked[2]; ++y) {
        for (int64_t x = 0; x < blocked[3]; ++x) {
          for (int64_t i = 0; i < input_block; ++i) {
            for (int64_t j = 0; j < block; ++j, ++at) {
              const int64_t m = mb * block + j;
              const int64_t c = cb * input_block + i;
              if (m >= plain[0] || c >= plain[1]) continue;  // padding
              const int64_t place = ((m * plain[1] + c) * plain[2] + y) * plain[3] + x;
              std::memcpy(to.bytes().data() + (to_blocked ? at : place) * size,
                          from.bytes().data() + (to_blocked ? place : at) * size, size);
            }
          }
        }
      }
    }
  }
}

}  // namespace

Tensor nchwc_conv_weights(const Tensor& w, int64_t block, int64_t input_block) {
  MINIC_CHECK(w.rank() == 4 && block > 0 && input_block > 0);
  const Shape& plain = w.shape();
  Tensor result(w.dtype(), {channel_blocks(plain[0], block), channel_blocks(plain[1], input_block),
                            plain[2], plain[3], input_block, block});
  copy_weights(w, result, plain, result.shape(), /*to_blocked=*/true);
  return result;
}

Tensor plain_conv_weights(const Tensor& blocked) {
  MINIC_CHECK(blocked.rank() == 6);
  const Shape& b = blocked.shape();
  Tensor result(blocked.dtype(), {b[0] * b[5], b[1] * b[4], b[2], b[3]});
  copy_weights(blocked, result, result.shape(), b, /*to_blocked=*/false);
  return result;
}

Tensor nchwc_channels(const Tensor& values, int64_t block) {
  MINIC_CHECK(values.rank() == 1 && block > 0);
  const int64_t channels = values.shape()[0];
  Tensor result(values.dtype(), {channel_blocks(channels, block), block});
  const size_t size = static_cast<size_t>(dtype_size(values.dtype()));
  std::memcpy(result.bytes().data(), values.bytes().data(), static_cast<size_t>(channels) * size);
  return result;
}

namespace {

// The three forms of the op (see the top of this file).
enum class NchwcForm { one_group, depthwise, grouped };

// The attributes and the geometry of a node, read and checked once.
struct NchwcConvAttributes {
  int64_t block = 0;        // b: lanes of a block
  bool blocked_input = false;
  int64_t in_channels = 0;  // C, counting a blocked input's padding channels
  int64_t out_blocks = 0;   // Mb
  int64_t group = 1;
  int64_t group_in = 0;     // Cg
  int64_t group_out = 0;    // Mg
  int64_t input_block = 0;  // bi
  NchwcForm form = NchwcForm::one_group;
  WindowGeometry window;

  static NchwcConvAttributes read(const NodeContext& ctx, const TensorType& x,
                                  const TensorType& w, const TensorType* bias) {
    NchwcConvAttributes a;
    if (w.rank() != 6) {
      ctx.fail("weight W is {}; it must be [Mb, Cg / bi, KH, KW, bi, b]", type_string(w));
    }
    a.block = w.shape[5];
    a.blocked_input = x.rank() == 5;
    if (x.rank() != 4 && x.rank() != 5) {
      ctx.fail("input X is {}; it must be [N, C / b, H, W, b] or [N, C, H, W]", type_string(x));
    }
    if (a.blocked_input && x.shape[4] != a.block) {
      ctx.fail("input X {} has blocks of {} channels but W {} blocks of {}", type_string(x),
               x.shape[4], type_string(w), a.block);
    }
    if (w.dtype != x.dtype) {
      ctx.fail("weight W is {} but X is {}", dtype_name(w.dtype), dtype_name(x.dtype));
    }
    a.in_channels = a.blocked_input ? x.shape[1] * a.block : x.shape[1];
    a.out_blocks = w.shape[0];
    a.input_block = w.shape[4];
    a.group = ctx.get_int("group", 1);
    const int64_t out_channels = a.out_blocks * a.block;
    if (a.group < 1 || a.in_channels % a.group != 0 || out_channels % a.group != 0) {
      ctx.fail("group {} does not divide the {} input and {} output channels", a.group,
               a.in_channels, out_channels);
    }
    a.group_in = a.in_channels / a.group;
    a.group_out = out_channels / a.group;
    if (w.shape[1] * a.input_block != a.group_in) {
      ctx.fail("weight W {} holds {} input channels per group; X {} with group {} has {}",
               type_string(w), w.shape[1] * a.input_block, type_string(x), a.group, a.group_in);
    }
    if (a.group == 1) {
      a.form = NchwcForm::one_group;
      if (a.blocked_input && a.input_block != a.block) {
        ctx.fail("weight W {} reads input channels in blocks of {}; a blocked X has {}",
                 type_string(w), a.input_block, a.block);
      }
    } else if (a.group_in == 1 && a.group_out == 1 && a.blocked_input) {
      a.form = NchwcForm::depthwise;
    } else if (a.blocked_input && a.group_in % a.block == 0 && a.group_out % a.block == 0 &&
               a.input_block == a.block) {
      a.form = NchwcForm::grouped;
    } else {
      ctx.fail("group {} with {} input and {} output channels per group is not a form of "
               "the op (one group; depthwise; or groups of whole blocks of a blocked X)",
               a.group, a.group_in, a.group_out);
    }
    if (bias && (bias->dtype != x.dtype || bias->shape != Shape{a.out_blocks, a.block})) {
      ctx.fail("bias B is {}; it must be {}[{},{}]", type_string(*bias), dtype_name(x.dtype),
               a.out_blocks, a.block);
    }
    const Shape spatial = {x.shape[2], x.shape[3]};
    a.window = read_window(ctx, spatial, {w.shape[2], w.shape[3]}, /*ceil_mode=*/false);
    return a;
  }
};

std::vector<TensorType> nchwc_conv_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  const TensorType* bias = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  NchwcConvAttributes a = NchwcConvAttributes::read(ctx, x, w, bias);
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  return {{x.dtype, {x.shape[0], a.out_blocks, a.window.output[0], a.window.output[1], a.block}}};
}

// The reference kernel is Conv's on the tensors unblocked (padding channels included, as
// zeros), its result put into blocks: the op is Conv, in another layout.
std::vector<Tensor> nchwc_conv_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  NchwcConvAttributes a =
      NchwcConvAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  const Tensor plain_x = a.blocked_input ? from_nchwc(x, a.in_channels) : x;
  std::optional<Tensor> plain_bias;
  if (bias) plain_bias = bias->reshaped({a.out_blocks * a.block});
  Tensor y = conv_reference(ctx, plain_x, plain_conv_weights(w), bias ? &*plain_bias : nullptr);
  return single_output(to_nchwc(y, a.block));
}

// --- compute rule ------------------------------------------------------------------------------

// X with a zero border of the pads around its rows and columns, kept in a buffer of its
// own, so that the reduction reads every tap without a bounds test; `read` becomes the
// geometry of the copy. X itself, and `read` unchanged, where nothing is padded.
ComputeTensor padded_input(const ComputeContext& ctx, const NchwcConvAttributes& a,
                           const ComputeTensor& x, WindowGeometry& read) {
  const WindowGeometry& g = a.window;
  if (!window_leaves_input(g, 0) && !window_leaves_input(g, 1)) return x;
  Shape shape = x.shape();
  for (size_t axis = 0; axis < 2; ++axis) {
    shape[2 + axis] = g.input[axis] + g.pads_begin[axis] + g.pads_end[axis];
  }
  ComputeTensor padded = ctx.keep(ctx.compute("pad", {x.dtype(), shape}, [&](const Indices& i) {
    Indices at = i;
    loop::Expr inside;
    for (size_t axis = 0; axis < 2; ++axis) {
      at[2 + axis] = affine(i[2 + axis], 1, -g.pads_begin[axis]);
      loop::Expr test = in_range(at[2 + axis], g.input[axis]);
      inside = inside ? loop::And::make(inside, test) : test;
    }
    return select(inside, x(at), constant(x.dtype(), 0));
  }));
  read.input = {shape[2], shape[3]};
  read.pads_begin = {0, 0};
  read.pads_end = {0, 0};
  return padded;
}

std::vector<ComputeTensor> nchwc_conv_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& w = ctx.input(1);
  const ComputeTensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  NchwcConvAttributes a =
      NchwcConvAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  WindowGeometry read = a.window;
  const ComputeTensor source = padded_input(ctx, a, x, read);
  const Shape& kernel = a.window.kernel;

  // Y[n, mb, oh, ow, j]: i = (n, mb, oh, ow, j); the reduction r = (cb, kh, kw, i), or
  // (kh, kw) for a depthwise convolution, whose one input channel is its own.
  const bool depthwise = a.form == NchwcForm::depthwise;
  const Shape reduce_extents =
      depthwise ? Shape{kernel[0], kernel[1]}
                : Shape{a.group_in / a.input_block, kernel[0], kernel[1], a.input_block};
  ComputeTensor sum = ctx.reduce("conv", {acc, type.shape}, reduce_extents, Reducer::sum,
                                 [&](const Indices& i, const Indices& r) {
    const loop::Expr kh = depthwise ? r[0] : r[1];
    const loop::Expr kw = depthwise ? r[1] : r[2];
    const loop::Expr row = window_position(read, 0, i[2], kh);
    const loop::Expr column = window_position(read, 1, i[3], kw);
    Indices at_x;
    switch (a.form) {
      case NchwcForm::one_group:
        at_x = a.blocked_input ? Indices{i[0], r[0], row, column, r[3]}
                               : Indices{i[0], affine(r[0], a.input_block, 0) + r[3], row, column};
        break;
      case NchwcForm::depthwise:
        at_x = {i[0], i[1], row, column, i[4]};
        break;
      case NchwcForm::grouped: {
        // Block mb lies in group mb / (Mg / b), whose input blocks start at group * Cg / b.
        loop::Expr group = loop::FloorDiv::make(i[1], index(a.group_out / a.block));
        at_x = {i[0], affine(group, a.group_in / a.block, 0) + r[0], row, column, r[3]};
        break;
      }
    }
    Indices at_w = depthwise ? Indices{i[1], index(0), kh, kw, index(0), i[4]}
                             : Indices{i[1], r[0], kh, kw, r[3], i[4]};
    return cast(acc, source(at_x)) * cast(acc, w(at_w));
  });
  if (!bias && acc == type.dtype) return {sum};
  return {ctx.compute("conv_bias", type, [&](const Indices& i) {
    loop::Expr value = sum(i);
    if (bias) value = value + cast(acc, (*bias)({i[1], i[4]}));
    return cast(type.dtype, value);
  })};
}

}  // namespace

void register_conv_nchwc_ops(OpRegistry& registry) {
  registry.add({.name = kNchwcConvOp,
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::out_fusable,
                .shape_rule = nchwc_conv_shape,
                .kernel = nchwc_conv_kernel,
                .compute = nchwc_conv_compute});
}

}  // namespace minic
