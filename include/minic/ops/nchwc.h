// The blocked channel layout NCHWc, and what the layout pass needs to move a convolution
// into it: the op's name and the weights and per-channel constants rearranged in blocks.
//
// Course module 4 (data-layout transformation). A CPU computes a convolution fastest
// with one vector register holding b neighbouring output channels (b = the target's f32
// lanes: 16 with AVX-512, 8 with AVX2): each input value is broadcast and multiplied by a
// vector of b weights, so no spatial extent needs to fill a vector. The tensors then keep
// their channels in blocks of b, innermost:
//
//   plain    X[n, c, h, w]                  [N, C, H, W]
//   blocked  X[n, c / b, h, w, c % b]       [N, ceil(C / b), H, W, b]
//
// The last block of a channel count that b does not divide is padded with channels that
// hold zeros. The op `minic.NchwcConv` (src/ops/conv_nchwc.cpp) is Conv on such tensors;
// the `blocked-layout` graph pass (src/passes/graph/blocked_layout.cpp) rewrites chains of
// convolutions into it.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#pragma once

#include "minic/tensor/tensor.h"

#include <cstdint>

namespace minic {

// The ops of the blocked layout, by their names in the graph (the `minic` domain): Conv
// on blocked tensors (src/ops/conv_nchwc.cpp), and a tensor into the layout and back
// (src/ops/nchwc_reorder.cpp).
inline constexpr const char* kNchwcConvOp = "minic.NchwcConv";
inline constexpr const char* kToNchwcOp = "minic.ToNchwc";
inline constexpr const char* kFromNchwcOp = "minic.FromNchwc";

// The number of blocks of `block` channels that hold `channels`: ceil(channels / block).
inline int64_t channel_blocks(int64_t channels, int64_t block) {
  return (channels + block - 1) / block;
}

// Conv's weights W [M, Cg, KH, KW] (M output channels, Cg input channels per group) in
// the layout minic.NchwcConv reads: [ceil(M / b), ceil(Cg / bi), KH, KW, bi, b], with
//
//   W'[mb, cb, kh, kw, i, j] = W[mb * b + j, cb * bi + i, kh, kw]   (0 past M or Cg)
//
// so that the b output channels of a block are one vector and the input channels are
// read in blocks of `input_block` (bi): b for a blocked input, Cg for a plain one, 1 for
// a depthwise convolution. Any element type: bytes are moved, not converted.
Tensor nchwc_conv_weights(const Tensor& w, int64_t block, int64_t input_block);

// The inverse: blocked weights [Mb, CB, KH, KW, bi, b] as Conv's [Mb * b, CB * bi, KH, KW]
// (padding channels included, as zeros).
Tensor plain_conv_weights(const Tensor& blocked);

// A vector of per-channel values [C] (a bias, a BatchNormalization's scale) in blocks:
// [ceil(C / b), b], zero past C.
Tensor nchwc_channels(const Tensor& values, int64_t block);

// A tensor [N, C, D...] in blocks of b: [N, ceil(C / b), D..., b], zero past C (what
// minic.ToNchwc computes); and back: the first `channels` channels of a blocked tensor
// (minic.FromNchwc). Any element type.
Tensor to_nchwc(const Tensor& plain, int64_t block);
Tensor from_nchwc(const Tensor& blocked, int64_t channels);

}  // namespace minic
