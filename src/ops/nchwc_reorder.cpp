// minic.ToNchwc and minic.FromNchwc: a tensor into the blocked channel layout and back.
//
// Course module 4 (data-layout transformation). The blocked layout NCHWc
// (include/minic/ops/nchwc.h) keeps channels in blocks of b, innermost:
//
//   ToNchwc {block = b}:    Y[n, c / b, d..., c % b] = X[n, c, d...]   [N, ceil(C / b), D..., b]
//   FromNchwc {channels}:   Y[n, c, d...] = X[n, c / b, d..., c % b]   [N, channels, D...]
//
// ToNchwc fills the channels of the last block past C with zeros; FromNchwc drops them
// (`channels` says how many are real). The `blocked-layout` pass puts a ToNchwc where a
// chain of blocked ops begins on a plain tensor and a FromNchwc where a plain op reads a
// blocked one. Both move elements only: any element type, and an injective compute rule
// that fuses with its neighbours.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#include "minic/ops/compute.h"
#include "minic/ops/nchwc.h"
#include "minic/ops/op.h"

#include <cstring>

namespace minic {
namespace {

// The block of ToNchwc: a positive attribute.
int64_t read_block(const NodeContext& ctx) {
  int64_t block = ctx.get_int("block");
  if (block < 1) ctx.fail("attribute block is {}; it must be positive", block);
  return block;
}

std::vector<TensorType> to_nchwc_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 3) ctx.fail("input X is {}; it must be N x C x D1 x ...", type_string(x));
  const int64_t block = read_block(ctx);
  Shape shape = x.shape;
  shape[1] = channel_blocks(x.shape[1], block);
  shape.push_back(block);
  return {{x.dtype, shape}};
}

// The number of real channels of FromNchwc: at least one, and within the last block.
int64_t read_channels(const NodeContext& ctx, const TensorType& x) {
  int64_t channels = ctx.get_int("channels");
  const int64_t blocks = x.shape[1];
  const int64_t block = x.shape.back();
  if (channels < 1 || channel_blocks(channels, block) != blocks) {
    ctx.fail("attribute channels is {}; X {} holds {} blocks of {}", channels, type_string(x),
             blocks, block);
  }
  return channels;
}

std::vector<TensorType> from_nchwc_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  if (x.rank() < 4) ctx.fail("input X is {}; it must be N x C/b x D1 x ... x b", type_string(x));
  Shape shape(x.shape.begin(), x.shape.end() - 1);
  shape[1] = read_channels(ctx, x);
  return {{x.dtype, shape}};
}

// Copies every real channel between the layouts (element bytes, any type): `plain` is
// [N, C, D...] and `blocked` [N, ceil(C / b), D..., b]; the blocked tensor's padding
// channels are left as they are (zeros in a new tensor).
void copy_channels(const Tensor& from, Tensor& to, const Shape& plain_shape, int64_t block,
                   bool to_blocked) {
  const int64_t batch = plain_shape[0];
  const int64_t channels = plain_shape[1];
  const int64_t blocks = channel_blocks(channels, block);
  int64_t spatial = 1;
  for (size_t axis = 2; axis < plain_shape.size(); ++axis) spatial *= plain_shape[axis];
  const size_t size = static_cast<size_t>(dtype_size(to.dtype()));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t d = 0; d < spatial; ++d) {
        const int64_t plain = (n * channels + c) * spatial + d;
        const int64_t blocked = ((n * blocks + c / block) * spatial + d) * block + c % block;
        std::memcpy(to.bytes().data() + (to_blocked ? blocked : plain) * size,
                    from.bytes().data() + (to_blocked ? plain : blocked) * size, size);
      }
    }
  }
}

}  // namespace

Tensor to_nchwc(const Tensor& plain, int64_t block) {
  MINIC_CHECK(plain.rank() >= 3 && block > 0);
  Shape shape = plain.shape();
  shape[1] = channel_blocks(plain.shape()[1], block);
  shape.push_back(block);
  Tensor result(plain.dtype(), shape);
  copy_channels(plain, result, plain.shape(), block, /*to_blocked=*/true);
  return result;
}

Tensor from_nchwc(const Tensor& blocked, int64_t channels) {
  MINIC_CHECK(blocked.rank() >= 4 &&
              channel_blocks(channels, blocked.shape().back()) == blocked.shape()[1]);
  Shape shape(blocked.shape().begin(), blocked.shape().end() - 1);
  shape[1] = channels;
  Tensor result(blocked.dtype(), shape);
  copy_channels(blocked, result, shape, blocked.shape().back(), /*to_blocked=*/false);
  return result;
}

namespace {

std::vector<Tensor> to_nchwc_kernel(const KernelContext& ctx) {
  return single_output(to_nchwc(ctx.input(0), read_block(ctx)));
}

std::vector<Tensor> from_nchwc_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return single_output(from_nchwc(x, read_channels(ctx, x.type())));
}

// Y[n, cb, d..., j] = X[n, cb * b + j, d...] for a real channel, else 0.
std::vector<ComputeTensor> to_nchwc_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t block = read_block(ctx);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("to_nchwc", type, [&](const Indices& i) {
    loop::Expr channel = affine(i[1], block, 0) + i.back();
    Indices at(i.begin(), i.end() - 1);
    at[1] = channel;
    loop::Expr value = x(at);
    if (x.dim(1) % block == 0) return value;
    return select(loop::LT::make(channel, index(x.dim(1))), value, constant(x.dtype(), 0));
  })};
}

// Y[n, c, d...] = X[n, c / b, d..., c % b].
std::vector<ComputeTensor> from_nchwc_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const int64_t block = x.shape().back();
  return {ctx.compute("from_nchwc", ctx.output_type(0), [&](const Indices& i) {
    Indices at = i;
    at[1] = loop::FloorDiv::make(i[1], index(block));
    at.push_back(loop::FloorMod::make(i[1], index(block)));
    return x(at);
  })};
}

}  // namespace

void register_nchwc_reorder_ops(OpRegistry& registry) {
  registry.add({.name = kToNchwcOp,
                .fusion = FusionKind::injective,
                .shape_rule = to_nchwc_shape,
                .kernel = to_nchwc_kernel,
                .compute = to_nchwc_compute});
  registry.add({.name = kFromNchwcOp,
                .fusion = FusionKind::injective,
                .shape_rule = from_nchwc_shape,
                .kernel = from_nchwc_kernel,
                .compute = from_nchwc_compute});
}

}  // namespace minic
