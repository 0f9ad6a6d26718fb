// Conv and ConvTranspose: N-d convolution with groups, strides, dilations and padding.
//
// Course module 2 (the op and its shape rule), module 3 (the loop order of the kernels).
//
// Conv. X is [N, C, D1..Dk], W is [M, C/group, K1..Kk], the optional bias B is [M]; the
// channels split into `group` independent groups, output channel m seeing only the input
// channels of its group g = m / (M/group):
//
//   Y[n, m, o] = B[m] + sum over c < C/group, k < K of
//                X[n, g*C/group + c, o*strides - pads_begin + k*dilations] * W[m, c, k]
//
// with X read as 0 outside the input (the padding). window.h gives the output extent.
//
// ConvTranspose is the adjoint: each input element scatters a weighted copy of the kernel
// into the output. W is [C, M/group, K1..Kk] and
//
//   Y[n, g*M/group + m, i*strides - pads_begin + k*dilations] += X[n, c, i] * W[c, m, k]
//
// for c in group g. Its output extent per spatial axis is
//   strides*(D-1) + output_padding + (K-1)*dilations + 1 - pads_begin - pads_end,
// or the `output_shape` attribute, from which the pads then follow.
//
// Both reference kernels are these formulas as plain loops, in the compute type (float
// for f16 and bf16). Conv computes each output element on its own: its bias, then every
// tap of every input channel of its group that lands inside the input, in the order of
// the formula (c, then k row-major); which taps land inside depends only on the output
// position, so it is found once per position (taps_inside). ConvTranspose scatters each
// input element through every tap that lands inside the output. Fast kernels are the
// compiler's business: the compute rules below and in conv_compute.cpp.
//
// Conv's compute rules (course module 3) are in conv_compute.cpp: the formula above as a
// GEMM over flattened positions where the strides allow it, else as one reduction over
// (c, k1..kk) per output element.
//
// Compute rule for ConvTranspose: a rule says how ONE output element is computed, so the
// scatter above is turned around into a gather. Output position o receives tap k of input
// position i where o = i*strides - pads_begin + k*dilations, that is where
//   i = (o + pads_begin - k*dilations) / strides
// is a whole number inside the input. The rule is one reduction over (c, k1..kk) in c's
// group, a tap without such an i contributing 0 through a select:
//
//   Y[n, m, o] = B[m] + sum over c < C/group, k < K of
//                (o + pads_begin - k*dilations) % strides == 0 && 0 <= i < D
//                  ? X[n, g*C/group + c, i] * W[g*C/group + c, m % (M/group), k] : 0
//
// For strides 2, pads 1, kernel 3 on a 1-d input of 4 (output 7) it reads
//   block conv_transpose(v0 = spatial(1) .., v1 = spatial(1) .., v2 = spatial(7) ..,
//                        r0 = reduce(1) .., r1 = reduce(3) ..) {
//     Y[v0, v1, v2] = Y[v0, v1, v2] + select((v2 + 1 - r1) floormod 2 == 0
//         && 0 <= (v2 + 1 - r1) floordiv 2 && (v2 + 1 - r1) floordiv 2 < 4,
//         X[v0, r0, (v2 + 1 - r1) floordiv 2] * W[r0, v1, r1], 0.0)
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "conv.h"

#include "broadcast.h"
#include "compute_window.h"
#include "float_compute.h"
#include "window.h"

#include <algorithm>

namespace minic {

namespace {

// A kernel tap at one output position: the offset it reads in a channel of X, and its
// index in a channel of W.
struct Tap {
  int64_t input;
  int64_t weight;
};

// The taps (every multi-index of `g.kernel`, row-major) that read inside the input at
// output position `o`, into `taps`: tap k reads input position o * strides - pads_begin +
// k * dilations on each axis, and one that lies outside reads the padding, which is 0.
void taps_inside(const WindowGeometry& g, const std::vector<Shape>& kernel_taps,
                 const Shape& in_strides, const Shape& o, std::vector<Tap>& taps) {
  taps.clear();
  for (size_t t = 0; t < kernel_taps.size(); ++t) {
    const Shape& k = kernel_taps[t];
    int64_t input = 0;
    bool inside = true;
    for (int64_t i = 0; i < g.rank() && inside; ++i) {
      int64_t p = o[i] * g.strides[i] - g.pads_begin[i] + k[i] * g.dilations[i];
      inside = p >= 0 && p < g.input[i];
      input += p * in_strides[i];
    }
    if (inside) taps.push_back({input, static_cast<int64_t>(t)});
  }
}

// Every multi-index of `shape`, row-major.
std::vector<Shape> all_indices(const Shape& shape) {
  std::vector<Shape> indices;
  for_each_index(shape, [&](const Shape& index) { indices.push_back(index); });
  return indices;
}

// Conv in the compute type C, element by element. x: [N, C, in...], w: [M, C/group,
// kernel...], bias: [M] or null, y: [N, M, out...].
//   Y[n, m, o] = B[m] + sum over c < C/group, k < K of
//                X[n, group(m) * C/group + c, o * strides - pads_begin + k * dilations] *
//                W[m, c, k]
template <typename C>
void conv_forward(const ConvAttributes& a, const Shape& x_shape, const C* x, const C* w,
                  const C* bias, const Shape& y_shape, C* y) {
  const WindowGeometry& g = a.window;
  const int64_t batch = x_shape[0];
  const int64_t in_channels = x_shape[1];
  const int64_t out_channels = y_shape[1];
  const int64_t group_in = in_channels / a.group;
  const int64_t group_out = out_channels / a.group;
  const int64_t in_size = num_elements(g.input);
  const int64_t out_size = num_elements(g.output);
  const int64_t kernel_size = num_elements(g.kernel);
  const Shape in_strides = row_major_strides(g.input);
  const std::vector<Shape> kernel_taps = all_indices(g.kernel);
  const std::vector<Shape> positions = all_indices(g.output);
  std::vector<Tap> taps;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out_size; ++o) {
      taps_inside(g, kernel_taps, in_strides, positions[o], taps);
      for (int64_t m = 0; m < out_channels; ++m) {
        const int64_t group = m / group_out;
        C sum = bias ? bias[m] : C(0);
        for (int64_t c = 0; c < group_in; ++c) {
          const C* in = x + (n * in_channels + group * group_in + c) * in_size;
          const C* kernel = w + (m * group_in + c) * kernel_size;
          for (const Tap& tap : taps) sum += kernel[tap.weight] * in[tap.input];
        }
        y[(n * out_channels + m) * out_size + o] = sum;
      }
    }
  }
}

std::vector<TensorType> conv_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  const TensorType* bias = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  ConvAttributes a = ConvAttributes::read(ctx, x, w, bias);
  Shape shape = {x.shape[0], w.shape[0]};
  shape.insert(shape.end(), a.window.output.begin(), a.window.output.end());
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  return {{x.dtype, shape}};
}

std::vector<Tensor> conv_kernel(const KernelContext& ctx) {
  return single_output(conv_reference(ctx, ctx.input(0), ctx.input(1),
                                      ctx.has_input(2) ? &ctx.input(2) : nullptr));
}

// --- ConvTranspose ------------------------------------------------------------------------------

struct ConvTransposeAttributes {
  int64_t group = 1;
  int64_t out_channels = 0;
  // `window.input` is X's spatial extent and `window.output` Y's: the roles of Conv's
  // window, with the data flowing the other way.
  WindowGeometry window;

  static ConvTransposeAttributes read(const NodeContext& ctx, const TensorType& x,
                                      const TensorType& w, const TensorType* bias) {
    const int64_t rank = check_conv_inputs(ctx, x, w, bias);
    ConvTransposeAttributes a;
    a.group = ctx.get_int("group", 1);
    if (a.group < 1) ctx.fail("attribute group is {}; it must be positive", a.group);
    const int64_t in_channels = x.shape[1];
    if (w.shape[0] != in_channels || in_channels % a.group != 0) {
      ctx.fail("weight W {} needs one row per input channel of X {}, split into {} groups",
               type_string(w), type_string(x), a.group);
    }
    a.out_channels = w.shape[1] * a.group;
    if (bias && bias->shape[0] != a.out_channels) {
      ctx.fail("bias B {} should have one entry per output channel ({})", type_string(*bias),
               a.out_channels);
    }

    WindowGeometry& g = a.window;
    g.input.assign(x.shape.begin() + 2, x.shape.end());
    g.kernel = read_kernel_shape(ctx, w);
    g.strides = read_spatial_ints(ctx, "strides", rank, 1, 1);
    g.dilations = read_spatial_ints(ctx, "dilations", rank, 1, 1);
    Shape output_padding = read_spatial_ints(ctx, "output_padding", rank, 0, 0);
    // The extent the output would have with no padding at all.
    Shape full(rank);
    for (int64_t i = 0; i < rank; ++i) {
      full[i] = g.strides[i] * (g.input[i] - 1) + output_padding[i] + g.dilated_kernel(i);
    }

    const std::string auto_pad = ctx.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
        auto_pad != "VALID") {
      ctx.fail("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
    }
    g.output.assign(rank, 0);
    g.pads_begin.assign(rank, 0);
    g.pads_end.assign(rank, 0);
    if (ctx.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // The output extent is given (or is input * strides for SAME); the pads that produce
      // it are split in half, the odd one at the beginning unless SAME_UPPER.
      if (ctx.has_attr("output_shape")) {
        Shape given = ctx.get_ints("output_shape");
        // Some exporters include the N and C dimensions.
        if (static_cast<int64_t>(given.size()) == rank + 2) {
          given.erase(given.begin(), given.begin() + 2);
        }
        if (static_cast<int64_t>(given.size()) != rank) {
          ctx.fail("attribute output_shape {} does not have one entry per spatial axis ({})",
                   shape_string(given), rank);
        }
        g.output = given;
      } else {
        for (int64_t i = 0; i < rank; ++i) g.output[i] = g.input[i] * g.strides[i];
      }
      for (int64_t i = 0; i < rank; ++i) {
        if (g.output[i] < 1) ctx.fail("output_shape {} is not positive", shape_string(g.output));
        // total is negative when the output is larger than the unpadded one.
        int64_t total = full[i] - g.output[i];
        int64_t half = floor_div(total, 2);
        g.pads_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
        g.pads_end[i] = total - g.pads_begin[i];
      }
      return a;
    }
    if (auto_pad == "NOTSET") {
      Shape pads = read_spatial_ints(ctx, "pads", 2 * rank, 0, 0);
      g.pads_begin.assign(pads.begin(), pads.begin() + rank);
      g.pads_end.assign(pads.begin() + rank, pads.end());
    }
    for (int64_t i = 0; i < rank; ++i) {
      g.output[i] = full[i] - g.pads_begin[i] - g.pads_end[i];
      if (g.output[i] < 1) {
        ctx.fail("the pads leave no output on spatial axis {} (extent {} before padding)", i,
                 full[i]);
      }
    }
    return a;
  }
};

// ConvTranspose in the compute type C, a scatter of every input element. x: [N, C, in...],
// w: [C, M/group, kernel...], bias: [M] or null, y: [N, M, out...].
//   Y[n, group(c) * M/group + m, i * strides - pads_begin + k * dilations] +=
//       X[n, c, i] * W[c, m, k]
// over the positions that land inside the output, Y starting at the bias.
template <typename C>
void conv_transpose_forward(const ConvTransposeAttributes& a, const Shape& x_shape, const C* x,
                            const C* w, const C* bias, C* y) {
  const WindowGeometry& g = a.window;
  const int64_t batch = x_shape[0];
  const int64_t in_channels = x_shape[1];
  const int64_t group_in = in_channels / a.group;
  const int64_t group_out = a.out_channels / a.group;
  const int64_t in_size = num_elements(g.input);
  const int64_t out_size = num_elements(g.output);
  const int64_t kernel_size = num_elements(g.kernel);
  const Shape out_strides = row_major_strides(g.output);
  const std::vector<Shape> kernel_taps = all_indices(g.kernel);
  const std::vector<Shape> positions = all_indices(g.input);
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < a.out_channels; ++m) {
      C* out = y + (n * a.out_channels + m) * out_size;
      std::fill(out, out + out_size, bias ? bias[m] : C(0));
    }
    for (int64_t c = 0; c < in_channels; ++c) {
      const int64_t group = c / group_in;
      const C* in = x + (n * in_channels + c) * in_size;
      for (int64_t i = 0; i < in_size; ++i) {
        for (size_t t = 0; t < kernel_taps.size(); ++t) {
          // The output position tap t of input position i writes, unless it lies outside.
          int64_t offset = 0;
          bool inside = true;
          for (int64_t axis = 0; axis < g.rank() && inside; ++axis) {
            int64_t p = positions[i][axis] * g.strides[axis] - g.pads_begin[axis] +
                        kernel_taps[t][axis] * g.dilations[axis];
            inside = p >= 0 && p < g.output[axis];
            offset += p * out_strides[axis];
          }
          if (!inside) continue;
          for (int64_t m = 0; m < group_out; ++m) {
            C* out = y + (n * a.out_channels + group * group_out + m) * out_size;
            out[offset] += in[i] * w[(c * group_out + m) * kernel_size + t];
          }
        }
      }
    }
  }
}

std::vector<TensorType> conv_transpose_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const TensorType* bias = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  ConvTransposeAttributes a = ConvTransposeAttributes::read(ctx, x, ctx.input_type(1), bias);
  Shape shape = {x.shape[0], a.out_channels};
  shape.insert(shape.end(), a.window.output.begin(), a.window.output.end());
  visit_float_dtype(ctx, x.dtype, "input X", []<typename T>() {});
  return {{x.dtype, shape}};
}

std::vector<Tensor> conv_transpose_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  ConvTransposeAttributes a =
      ConvTransposeAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  return single_output(run_conv_reference(
      ctx, x, w, bias, ctx.output_type(0),
      [&]<typename C>(const C* xs, const C* ws, const C* bs, C* ys) {
        conv_transpose_forward<C>(a, x.shape(), xs, ws, bs, ys);
      }));
}

// --- compute rule (ConvTranspose; Conv's is in conv_compute.cpp) ---------------------------

// The input position along spatial axis `axis` from which tap `k` of a transposed
// convolution reaches output position `o`, and the test that there is one (null where every
// output position and tap have one).
struct TransposedTap {
  loop::Expr position;
  loop::Expr inside;
};

TransposedTap transposed_tap(const WindowGeometry& g, size_t axis, const loop::Expr& o,
                             const loop::Expr& k) {
  const int64_t stride = g.strides[axis];
  // shifted = o + pads_begin - k * dilations = i * strides.
  loop::Expr shifted = affine(o, 1, g.pads_begin[axis]);
  if (g.kernel[axis] > 1) shifted = shifted - affine(k, g.dilations[axis], 0);
  const int64_t lowest = g.pads_begin[axis] - (g.kernel[axis] - 1) * g.dilations[axis];
  const int64_t highest = g.output[axis] - 1 + g.pads_begin[axis];

  TransposedTap tap;
  tap.position = stride == 1 ? shifted : loop::FloorDiv::make(shifted, index(stride));
  if (stride > 1) {
    tap.inside = loop::EQ::make(loop::FloorMod::make(shifted, index(stride)), index(0));
  }
  // The range test only where some (o, k) falls outside the input.
  if (lowest < 0 || floor_div(highest, stride) >= g.input[axis]) {
    loop::Expr test = in_range(tap.position, g.input[axis]);
    tap.inside = tap.inside ? loop::And::make(tap.inside, test) : test;
  }
  return tap;
}

std::vector<ComputeTensor> conv_transpose_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& w = ctx.input(1);
  const ComputeTensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  ConvTransposeAttributes a =
      ConvTransposeAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  const WindowGeometry& g = a.window;
  const TensorType& type = ctx.output_type(0);
  const DType acc = accumulation_dtype(type.dtype);
  const int64_t group_in = x.dim(1) / a.group;
  const int64_t group_out = a.out_channels / a.group;
  Shape reduce_extents = {group_in};
  reduce_extents.insert(reduce_extents.end(), g.kernel.begin(), g.kernel.end());

  // sum[n, m, o] = sum over c, k of X[n, channel, i(o, k)] * W[channel, m % group_out, k]
  // with channel = group(m) * group_in + c, over the taps k that reach o.
  ComputeTensor sum = ctx.reduce("conv_transpose", {acc, type.shape}, reduce_extents,
                                 Reducer::sum, [&](const Indices& i, const Indices& r) {
    loop::Expr channel = r[0];
    loop::Expr out_channel = i[1];
    if (a.group > 1 && group_out == 1) {
      channel = affine(i[1], group_in, 0) + r[0];
      out_channel = index(0);
    } else if (a.group > 1) {
      channel = loop::FloorDiv::make(i[1], index(group_out)) * group_in + r[0];
      out_channel = loop::FloorMod::make(i[1], index(group_out));
    }
    Indices at_x = {i[0], channel};
    Indices at_w = {channel, out_channel};
    loop::Expr inside;
    for (size_t axis = 0; axis < g.input.size(); ++axis) {
      TransposedTap tap = transposed_tap(g, axis, i[2 + axis], r[1 + axis]);
      at_x.push_back(tap.position);
      at_w.push_back(r[1 + axis]);
      if (tap.inside) inside = inside ? loop::And::make(inside, tap.inside) : tap.inside;
    }
    loop::Expr product = cast(acc, x(at_x)) * cast(acc, w(at_w));
    return inside ? select(inside, product, constant(acc, 0)) : product;
  });
  if (!bias && acc == type.dtype) return {sum};
  return {ctx.compute("conv_transpose_bias", type, [&](const Indices& i) {
    loop::Expr value = sum(i);
    if (bias) value = value + cast(acc, (*bias)({i[1]}));
    return cast(type.dtype, value);
  })};
}

}  // namespace

Tensor conv_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias) {
  ConvAttributes a = ConvAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  Shape y_shape = {x.shape()[0], w.shape()[0]};
  y_shape.insert(y_shape.end(), a.window.output.begin(), a.window.output.end());
  return run_conv_reference(ctx, x, w, bias, {x.dtype(), y_shape},
                            [&]<typename C>(const C* xs, const C* ws, const C* bs, C* ys) {
                              conv_forward<C>(a, x.shape(), xs, ws, bs, y_shape, ys);
                            });
}

Tensor conv_integer_reference(const NodeContext& ctx, const Tensor& x, const Tensor& w,
                              const Tensor* bias) {
  MINIC_CHECK(x.dtype() == DType::i32 && w.dtype() == DType::i32);
  ConvAttributes a = ConvAttributes::read(ctx, x.type(), w.type(), bias ? &bias->type() : nullptr);
  Shape y_shape = {x.shape()[0], w.shape()[0]};
  y_shape.insert(y_shape.end(), a.window.output.begin(), a.window.output.end());
  // Summed in int64, which cannot overflow for any model's sizes, then wrapped to int32.
  std::vector<int64_t> xs = to_compute<int32_t, int64_t>(x);
  std::vector<int64_t> ws = to_compute<int32_t, int64_t>(w);
  std::vector<int64_t> bs = bias ? to_compute<int32_t, int64_t>(*bias) : std::vector<int64_t>();
  std::vector<int64_t> ys(static_cast<size_t>(num_elements(y_shape)));
  conv_forward<int64_t>(a, x.shape(), xs.data(), ws.data(), bias ? bs.data() : nullptr, y_shape,
                        ys.data());
  Tensor y(DType::i32, y_shape);
  store_computed<int32_t>(ys, y);
  return y;
}

void register_conv_ops(OpRegistry& registry) {
  registry.add({.name = "Conv",
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::out_fusable,
                .shape_rule = conv_shape,
                .kernel = conv_kernel,
                .compute = conv_compute});
  registry.add({.name = "ConvTranspose",
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::out_fusable,
                .shape_rule = conv_transpose_shape,
                .kernel = conv_transpose_kernel,
                .compute = conv_transpose_compute});
}

}  // namespace minic
