// DepthToSpace and SpaceToDepth: move blocks of b x b pixels between the channel axis and
// the two spatial axes of an [N, C, H, W] tensor (b = blocksize). Course module 2.
//
//   DepthToSpace  [N, C, H, W] -> [N, C / b^2, H * b, W * b]
//     y[n, c, h, w] = x[n, channel, h / b, w / b], with the offsets bh = h % b, bw = w % b
//     inside the block and, by `mode`,
//       DCR (default; the only form before opset 11)  channel = (bh * b + bw) * (C / b^2) + c
//       CRD                                           channel = c * b^2 + bh * b + bw
//   SpaceToDepth  [N, C, H, W] -> [N, C * b^2, H / b, W / b], the inverse of DCR:
//     y[n, (bh * b + bw) * C + c, h, w] = x[n, c, h * b + bh, w * b + bw]
//
// Data movement only: the kernels copy elements as bytes (see movement.h), so every
// element type works. Fusion kind: injective, each output element reads one input element.
//
// Compute rules (course module 3): the same index formulas as loop IR expressions, with
// FloorDiv and FloorMod by the block size for h / b and h % b.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "movement.h"

namespace minic {

namespace {

// The largest blocksize accepted: it keeps blocksize^2 and H * blocksize far from
// overflowing for any tensor that fits in memory.
constexpr int64_t kMaxBlocksize = 65536;

// The blocksize, checked, for X of rank 4.
int64_t blocksize(const NodeContext& ctx, const TensorType& x) {
  if (x.rank() != 4) {
    ctx.fail("input is {}; {} takes N x C x H x W", type_string(x), ctx.node().op);
  }
  int64_t b = ctx.get_int("blocksize");
  if (b <= 0 || b > kMaxBlocksize) {
    ctx.fail("blocksize is {}; it must be between 1 and {}", b, kMaxBlocksize);
  }
  return b;
}

// True for mode CRD, false for DCR; anything else is an error.
bool crd_mode(const NodeContext& ctx) {
  std::string mode = ctx.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    ctx.fail("mode is '{}'; DepthToSpace takes 'DCR' or 'CRD'", mode);
  }
  return mode == "CRD";
}

std::vector<TensorType> depth_to_space_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const int64_t b = blocksize(ctx, x);
  crd_mode(ctx);
  const Shape& s = x.shape;
  if (s[1] % (b * b) != 0) {
    ctx.fail("{} channels do not divide into blocks of blocksize^2 = {}", s[1], b * b);
  }
  return {{x.dtype, {s[0], s[1] / (b * b), s[2] * b, s[3] * b}}};
}

std::vector<Tensor> depth_to_space_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = blocksize(ctx, x.type());
  const bool crd = crd_mode(ctx);
  Tensor y = ctx.make_output(0);
  const Shape in_strides = row_major_strides(x.shape());
  const int64_t channels = y.shape()[1];
  int64_t flat = 0;
  for_each_index(y.shape(), [&](const Shape& i) {
    const int64_t bh = i[2] % b;
    const int64_t bw = i[3] % b;
    const int64_t channel = crd ? i[1] * b * b + bh * b + bw : (bh * b + bw) * channels + i[1];
    const Shape from = {i[0], channel, i[2] / b, i[3] / b};
    copy_element(x, offset_of(from, in_strides), y, flat++);
  });
  return single_output(std::move(y));
}

std::vector<TensorType> space_to_depth_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  const int64_t b = blocksize(ctx, x);
  const Shape& s = x.shape;
  if (s[2] % b != 0 || s[3] % b != 0) {
    ctx.fail("spatial shape {} x {} does not divide into blocks of blocksize {}", s[2], s[3], b);
  }
  return {{x.dtype, {s[0], s[1] * b * b, s[2] / b, s[3] / b}}};
}

std::vector<Tensor> space_to_depth_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = blocksize(ctx, x.type());
  Tensor y = ctx.make_output(0);
  const Shape in_strides = row_major_strides(x.shape());
  const int64_t channels = x.shape()[1];
  int64_t flat = 0;
  for_each_index(y.shape(), [&](const Shape& i) {
    const int64_t block = i[1] / channels;  // bh * b + bw
    const Shape from = {i[0], i[1] % channels, i[2] * b + block / b, i[3] * b + block % b};
    copy_element(x, offset_of(from, in_strides), y, flat++);
  });
  return single_output(std::move(y));
}

// --- compute rules ----------------------------------------------------------------------------

using loop::Expr;

Expr floor_div(const Expr& x, int64_t b) { return loop::FloorDiv::make(x, index(b)); }
Expr floor_mod(const Expr& x, int64_t b) { return loop::FloorMod::make(x, index(b)); }

std::vector<ComputeTensor> depth_to_space_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t b = blocksize(ctx, x.type());
  const bool crd = crd_mode(ctx);
  const TensorType& type = ctx.output_type(0);
  const int64_t channels = type.shape[1];
  return {ctx.compute("depthtospace", type, [&](const Indices& i) {
    Expr bh = floor_mod(i[2], b);
    Expr bw = floor_mod(i[3], b);
    Expr block = affine(bh, b, 0) + bw;
    Expr channel = crd ? affine(i[1], b * b, 0) + block : affine(block, channels, 0) + i[1];
    return x({i[0], channel, floor_div(i[2], b), floor_div(i[3], b)});
  })};
}

std::vector<ComputeTensor> space_to_depth_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t b = blocksize(ctx, x.type());
  const int64_t channels = x.dim(1);
  return {ctx.compute("spacetodepth", ctx.output_type(0), [&](const Indices& i) {
    Expr block = floor_div(i[1], channels);  // bh * b + bw
    Expr h = affine(i[2], b, 0) + floor_div(block, b);
    Expr w = affine(i[3], b, 0) + floor_mod(block, b);
    return x({i[0], floor_mod(i[1], channels), h, w});
  })};
}

}  // namespace

void register_depth_space_ops(OpRegistry& registry) {
  // Opset 11 added DepthToSpace's mode; 13 widened both ops' element types.
  registry.add({.name = "DepthToSpace",
                .min_opset = 1,
                .fusion = FusionKind::injective,
                .shape_rule = depth_to_space_shape,
                .kernel = depth_to_space_kernel,
                .compute = depth_to_space_compute});
  registry.add({.name = "SpaceToDepth",
                .min_opset = 1,
                .fusion = FusionKind::injective,
                .shape_rule = space_to_depth_shape,
                .kernel = space_to_depth_kernel,
                .compute = space_to_depth_compute});
}

}  // namespace minic
