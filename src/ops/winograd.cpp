// minic.WinogradInput and minic.WinogradOutput: the two transforms of a Winograd
// convolution F(m x m, 3 x 3), on tensors in the blocked layout NCHWc.
//
// Course module 4. include/minic/ops/winograd.h has the maths and the ops' signatures. With
// a = m + 2, c a channel, t = (n * TH + ty) * TW + tx a tile, and the point (xi, nu) of
// transform space stored at e = xi * a + nu:
//
//   WinogradInput:  V[e, t, c] = sum over p, q of BT[xi, p] * BT[nu, q]
//                                  * X(n, c, ty * m - top + p, tx * m - left + q)
//   WinogradOutput: Y[n, kb, oh, ow, j] = B[kb, j] + sum over xi, nu of
//                       AT[oh % m, xi] * AT[ow % m, nu] * M[xi * a + nu, t, kb * b + j]
//                   with t the tile holding (oh, ow): ty = oh / m, tx = ow / m
//
// where X(n, c, h, w) reads X[n, c / b, h, w, c % b], 0 outside the image. The reference
// kernels compute these sums as written. The compute rules do each transform as two
// one-dimensional ones, rows then columns (the matrices are separable): a sums over p
// then q instead of a^2 terms per element of V, for F(4x4, 3x3) 12 multiply-adds per
// element instead of 36. Both keep the channels innermost, where they are one vector in
// X, V, M and Y alike. WinogradOutput's sum is followed by the bias as an elementwise
// stage, into which fused consumers (Relu, a residual Add) inline, as a convolution's do.
//
// Chapter: docs/module4-schedules.md#8-winograd-convolution
#include "minic/ops/winograd.h"

#include "minic/ops/compute.h"
#include "minic/ops/op.h"

namespace minic {

WinogradMatrices winograd_matrices(int64_t m) {
  MINIC_CHECK(m == 2 || m == 4);
  if (m == 2) {  // the points 0, 1, -1 and infinity
    return {Tensor::from_vector<float>({4, 4}, {1, 0, -1, 0,   //
                                                0, 1, 1, 0,    //
                                                0, -1, 1, 0,   //
                                                0, 1, 0, -1}),
            Tensor::from_vector<float>({4, 3}, {1, 0, 0,          //
                                                0.5, 0.5, 0.5,    //
                                                0.5, -0.5, 0.5,   //
                                                0, 0, 1}),
            Tensor::from_vector<float>({2, 4}, {1, 1, 1, 0,  //
                                                0, 1, -1, -1})};
  }
  // The points 0, 1, -1, 2, -2 and infinity.
  return {Tensor::from_vector<float>({6, 6}, {4, 0, -5, 0, 1, 0,    //
                                              0, -4, -4, 1, 1, 0,   //
                                              0, 4, -4, -1, 1, 0,   //
                                              0, -2, -1, 2, 1, 0,   //
                                              0, 2, -1, -2, 1, 0,   //
                                              0, 4, 0, -5, 0, 1}),
          Tensor::from_vector<float>({6, 3}, {1.0f / 4, 0, 0,                   //
                                              -1.0f / 6, -1.0f / 6, -1.0f / 6,  //
                                              -1.0f / 6, 1.0f / 6, -1.0f / 6,   //
                                              1.0f / 24, 1.0f / 12, 1.0f / 6,   //
                                              1.0f / 24, -1.0f / 12, 1.0f / 6,  //
                                              0, 0, 1}),
          Tensor::from_vector<float>({4, 6}, {1, 1, 1, 1, 1, 0,    //
                                              0, 1, -1, 2, -2, 0,  //
                                              0, 1, 1, 4, 4, 0,    //
                                              0, 1, -1, 8, -8, 1})};
}

Tensor winograd_weights(const Tensor& w, const WinogradMatrices& matrices) {
  MINIC_CHECK(w.rank() == 4 && w.shape()[2] == 3 && w.shape()[3] == 3);
  const int64_t outputs = w.shape()[0];
  const int64_t inputs = w.shape()[1];
  const int64_t a = matrices.g.shape()[0];
  const std::vector<double> g = matrices.g.to_double_vector();
  const std::vector<double> weights = w.to_double_vector();
  std::vector<float> u(static_cast<size_t>(a * a * inputs * outputs));
  for (int64_t k = 0; k < outputs; ++k) {
    for (int64_t c = 0; c < inputs; ++c) {
      const double* filter = &weights[static_cast<size_t>((k * inputs + c) * 9)];
      for (int64_t xi = 0; xi < a; ++xi) {
        for (int64_t nu = 0; nu < a; ++nu) {
          double sum = 0;  // (G filter G^T)[xi, nu]
          for (int64_t p = 0; p < 3; ++p) {
            for (int64_t q = 0; q < 3; ++q) {
              sum += g[xi * 3 + p] * filter[p * 3 + q] * g[nu * 3 + q];
            }
          }
          const int64_t at = ((xi * a + nu) * inputs + c) * outputs + k;
          u[static_cast<size_t>(at)] = static_cast<float>(sum);
        }
      }
    }
  }
  return Tensor::from_vector<float>({a * a, inputs, outputs}, u);
}

namespace {

// The checked geometry of a WinogradInput node.
struct InputGeometry {
  int64_t a = 0;            // transform points per axis: m + 2
  int64_t m = 0;            // outputs per tile and axis
  int64_t block = 0;        // b
  Shape tiles;              // [N, TH, TW]
  std::vector<int64_t> pads;  // [top, left]

  static InputGeometry read(const NodeContext& ctx, const TensorType& x, const TensorType& bt) {
    InputGeometry g;
    if (x.rank() != 5 || x.dtype != DType::f32 || x.shape[4] < 1) {
      ctx.fail("input X is {}; it must be f32[N, C / b, H, W, b]", type_string(x));
    }
    if (bt.rank() != 2 || bt.shape[0] != bt.shape[1] || bt.shape[0] < 3 || bt.dtype != x.dtype) {
      ctx.fail("input BT is {}; it must be f32[a, a] with a >= 3", type_string(bt));
    }
    g.a = bt.shape[0];
    g.m = g.a - 2;
    g.block = x.shape[4];
    g.pads = ctx.get_ints("pads");
    const std::vector<int64_t> tiles = ctx.get_ints("tiles");
    if (g.pads.size() != 2 || g.pads[0] < 0 || g.pads[1] < 0 || tiles.size() != 2 ||
        tiles[0] < 1 || tiles[1] < 1) {
      ctx.fail("attributes pads and tiles must be [top, left] >= 0 and [TH, TW] >= 1");
    }
    g.tiles = {x.shape[0], tiles[0], tiles[1]};
    return g;
  }
};

std::vector<TensorType> winograd_input_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  InputGeometry g = InputGeometry::read(ctx, x, ctx.input_type(1));
  return {{x.dtype, {g.a * g.a, num_elements(g.tiles), x.shape[1] * g.block}}};
}

std::vector<Tensor> winograd_input_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& bt_tensor = ctx.input(1);
  InputGeometry g = InputGeometry::read(ctx, x.type(), bt_tensor.type());
  const Shape& xs = x.shape();
  const int64_t channels = xs[1] * g.block;
  const int64_t tiles = num_elements(g.tiles);
  const std::vector<double> bt = bt_tensor.to_double_vector();
  std::span<const float> in = x.values<float>();
  Tensor result(DType::f32, {g.a * g.a, tiles, channels});
  std::span<float> v = result.values<float>();
  // X(n, c, h, w), 0 outside the image.
  auto read = [&](int64_t n, int64_t c, int64_t h, int64_t w) -> double {
    if (h < 0 || h >= xs[2] || w < 0 || w >= xs[3]) return 0;
    return in[static_cast<size_t>((((n * xs[1] + c / g.block) * xs[2] + h) * xs[3] + w) * g.block +
                                  c % g.block)];
  };
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t n = t / (g.tiles[1] * g.tiles[2]);
    const int64_t top = (t / g.tiles[2]) % g.tiles[1] * g.m - g.pads[0];
    const int64_t left = t % g.tiles[2] * g.m - g.pads[1];
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t xi = 0; xi < g.a; ++xi) {
        for (int64_t nu = 0; nu < g.a; ++nu) {
          double sum = 0;
          for (int64_t p = 0; p < g.a; ++p) {
            for (int64_t q = 0; q < g.a; ++q) {
              sum += bt[xi * g.a + p] * bt[nu * g.a + q] * read(n, c, top + p, left + q);
            }
          }
          const int64_t at = ((xi * g.a + nu) * tiles + t) * channels + c;
          v[static_cast<size_t>(at)] = static_cast<float>(sum);
        }
      }
    }
  }
  return single_output(std::move(result));
}

// Rows, then columns (the rows tile first, so that the loop over tiles, outermost, is the
// one the threads share):
//   rows[t, xi, q, c] = sum over p of BT[xi, p] * X(n, c, ty * m - top + p, tx * m - left + q)
//   V[e, t, c]        = sum over q of BT[e % a, q] * rows[t, e / a, q, c]
std::vector<ComputeTensor> winograd_input_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const ComputeTensor& bt = ctx.input(1);
  InputGeometry g = InputGeometry::read(ctx, x.type(), bt.type());
  const TensorType& type = ctx.output_type(0);
  const TensorType rows_type = {type.dtype, {type.shape[1], g.a, g.a, type.shape[2]}};
  const Shape spatial = {x.dim(2), x.dim(3)};
  ComputeTensor rows = ctx.reduce("winograd_rows", rows_type, {g.a}, Reducer::sum,
                                  [&](const Indices& i, const Indices& r) {
    const Indices tile = unflatten(i[0], g.tiles);  // n, ty, tx
    const loop::Expr h = affine(tile[1], g.m, -g.pads[0]) + r[0];
    const loop::Expr w = affine(tile[2], g.m, -g.pads[1]) + i[2];
    const loop::Expr block = index(g.block);
    const loop::Expr value = x({tile[0], loop::FloorDiv::make(i[3], block), h, w,
                                loop::FloorMod::make(i[3], block)});
    const loop::Expr inside = loop::And::make(in_range(h, spatial[0]), in_range(w, spatial[1]));
    return bt({i[1], r[0]}) * select(inside, value, constant(x.dtype(), 0));
  });
  const loop::Expr a = index(g.a);
  return {ctx.reduce("winograd_input", type, {g.a}, Reducer::sum,
                     [&](const Indices& i, const Indices& r) {
    return bt({loop::FloorMod::make(i[0], a), r[0]}) *
           rows({i[1], loop::FloorDiv::make(i[0], a), r[0], i[2]});
  })};
}

// The checked geometry of a WinogradOutput node.
struct OutputGeometry {
  int64_t a = 0;
  int64_t m = 0;
  int64_t block = 0;
  Shape output;  // [N, OH, OW]
  Shape tiles;   // [N, TH, TW]

  static OutputGeometry read(const NodeContext& ctx, const TensorType& mt, const TensorType& at,
                             const TensorType* bias) {
    OutputGeometry g;
    if (at.rank() != 2 || at.dtype != DType::f32 || at.shape[0] < 1 ||
        at.shape[1] != at.shape[0] + 2) {
      ctx.fail("input AT is {}; it must be f32[m, m + 2]", type_string(at));
    }
    g.m = at.shape[0];
    g.a = at.shape[1];
    if (mt.rank() != 3 || mt.dtype != at.dtype || mt.shape[0] != g.a * g.a) {
      ctx.fail("input M is {}; AT {} needs f32[{}, T, K]", type_string(mt), type_string(at),
               g.a * g.a);
    }
    g.output = ctx.get_ints("output_shape");
    if (g.output.size() != 3 || g.output[0] < 1 || g.output[1] < 1 || g.output[2] < 1) {
      ctx.fail("attribute output_shape must be [N, OH, OW], each positive");
    }
    g.tiles = {g.output[0], (g.output[1] + g.m - 1) / g.m, (g.output[2] + g.m - 1) / g.m};
    if (mt.shape[1] != num_elements(g.tiles)) {
      ctx.fail("input M {} holds {} tiles; output_shape [{}, {}, {}] has {}", type_string(mt),
               mt.shape[1], g.output[0], g.output[1], g.output[2], num_elements(g.tiles));
    }
    g.block = ctx.get_int("block");
    if (g.block < 1 || mt.shape[2] % g.block != 0) {
      ctx.fail("attribute block is {}; it must divide M's {} channels", g.block, mt.shape[2]);
    }
    if (bias && (bias->dtype != mt.dtype || bias->shape != Shape{mt.shape[2] / g.block, g.block})) {
      ctx.fail("bias B is {}; it must be f32[{},{}]", type_string(*bias), mt.shape[2] / g.block,
               g.block);
    }
    return g;
  }
};

std::vector<TensorType> winograd_output_shape(const ShapeContext& ctx) {
  const TensorType& mt = ctx.input_type(0);
  const TensorType* bias = ctx.has_input(2) ? &ctx.input_type(2) : nullptr;
  OutputGeometry g = OutputGeometry::read(ctx, mt, ctx.input_type(1), bias);
  return {{mt.dtype, {g.output[0], mt.shape[2] / g.block, g.output[1], g.output[2], g.block}}};
}

std::vector<Tensor> winograd_output_kernel(const KernelContext& ctx) {
  const Tensor& mt = ctx.input(0);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  OutputGeometry g = OutputGeometry::read(ctx, mt.type(), ctx.input(1).type(),
                                          bias ? &bias->type() : nullptr);
  const std::vector<double> at = ctx.input(1).to_double_vector();
  const int64_t tiles = mt.shape()[1];
  const int64_t channels = mt.shape()[2];
  std::span<const float> in = mt.values<float>();
  Tensor result(DType::f32, {g.output[0], channels / g.block, g.output[1], g.output[2], g.block});
  std::span<float> y = result.values<float>();
  size_t at_y = 0;  // row-major position in Y
  for (int64_t n = 0; n < g.output[0]; ++n) {
    for (int64_t k = 0; k < channels; k += g.block) {
      for (int64_t oh = 0; oh < g.output[1]; ++oh) {
        for (int64_t ow = 0; ow < g.output[2]; ++ow) {
          const int64_t t = (n * g.tiles[1] + oh / g.m) * g.tiles[2] + ow / g.m;
          for (int64_t j = 0; j < g.block; ++j, ++at_y) {
            double sum = bias ? bias->as_double(k + j) : 0.0;
            for (int64_t xi = 0; xi < g.a; ++xi) {
              for (int64_t nu = 0; nu < g.a; ++nu) {
                sum += at[oh % g.m * g.a + xi] * at[ow % g.m * g.a + nu] *
                       in[static_cast<size_t>(((xi * g.a + nu) * tiles + t) * channels + k + j)];
              }
            }
            y[at_y] = static_cast<float>(sum);
          }
        }
      }
    }
  }
  return single_output(std::move(result));
}

// Rows, then columns, then the bias (the rows tile first, as in the input transform):
//   rows[t, i, nu, k] = sum over xi of AT[i, xi] * M[xi * a + nu, t, k]          (i < m)
//   sum[n, kb, oh, ow, j] = sum over nu of AT[ow % m, nu] * rows[t, oh % m, nu, kb * b + j]
std::vector<ComputeTensor> winograd_output_compute(const ComputeContext& ctx) {
  const ComputeTensor& mt = ctx.input(0);
  const ComputeTensor& at = ctx.input(1);
  const ComputeTensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  OutputGeometry g =
      OutputGeometry::read(ctx, mt.type(), at.type(), bias ? &bias->type() : nullptr);
  const TensorType& type = ctx.output_type(0);
  const TensorType rows_type = {mt.dtype(), {mt.dim(1), g.m, g.a, mt.dim(2)}};
  ComputeTensor rows = ctx.reduce("winograd_rows", rows_type, {g.a}, Reducer::sum,
                                  [&](const Indices& i, const Indices& r) {
    return at({i[1], r[0]}) * mt({affine(r[0], g.a, 0) + i[2], i[0], i[3]});
  });
  const loop::Expr m = index(g.m);
  ComputeTensor sum = ctx.reduce("winograd_output", type, {g.a}, Reducer::sum,
                                 [&](const Indices& i, const Indices& r) {
    const loop::Expr t = flat_offset(
        {i[0], loop::FloorDiv::make(i[2], m), loop::FloorDiv::make(i[3], m)}, g.tiles);
    const loop::Expr k = affine(i[1], g.block, 0) + i[4];
    return at({loop::FloorMod::make(i[3], m), r[0]}) *
           rows({t, loop::FloorMod::make(i[2], m), r[0], k});
  });
  if (!bias) return {sum};
  return {ctx.compute("winograd_bias", type, [&](const Indices& i) {
    return sum(i) + (*bias)({i[1], i[4]});
  })};
}

}  // namespace

void register_winograd_ops(OpRegistry& registry) {
  registry.add({.name = kWinogradInputOp,
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = winograd_input_shape,
                .kernel = winograd_input_kernel,
                .compute = winograd_input_compute});
  registry.add({.name = kWinogradOutputOp,
                .min_opset = 1,
                .min_inputs = 2,
                .max_inputs = 3,
                .fusion = FusionKind::out_fusable,
                .shape_rule = winograd_output_shape,
                .kernel = winograd_output_kernel,
                .compute = winograd_output_compute});
}

}  // namespace minic
