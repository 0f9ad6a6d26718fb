// The `blocked-layout` pass: convolutions, and the ops between them, compute on tensors
// in the blocked channel layout NCHWc; the plain layout comes back only where an op
// needs it.
//
// Course module 4 (data-layout transformation). On a CPU with b-lane vectors (16 f32
// lanes with AVX-512, 8 with AVX2), a convolution is fastest with one vector register
// holding b neighbouring output channels: each input value is broadcast and multiplied by
// b weights at once, whatever the image's width. For that the channels must be the
// innermost axis, in blocks of b (include/minic/ops/nchwc.h):
//
//   plain [N, C, H, W]   →   blocked [N, ceil(C / b), H, W, b]
//
// Changing layout costs a pass over the tensor, so it is done once for a whole chain of
// convolutions, activations, residual additions, pools and channel concatenations, which
// all compute in blocks; only where the chain ends (a Flatten, a Reshape, a graph output)
// does the tensor go back:
//
//   %y = Conv(%x, %w1, %b1) {pads = [1, 1, 1, 1]}         : f32[1,32,56,56]
//   %r = Relu(%y)                                           : f32[1,32,56,56]
//   %z = Conv(%r, %w2, %b2)                                 : f32[1,64,56,56]
//   %f = Flatten(%z)                                        : f32[1,200704]
// →
//   %x_nchwc = minic.ToNchwc(%x) {block = 16}               : f32[1,2,56,56,16]
//   %y_nchwc = minic.NchwcConv(%x_nchwc, %w1_nchwc, %b1_nchwc) {pads = [1, 1, 1, 1]}
//                                                           : f32[1,2,56,56,16]
//   %r_nchwc = Relu(%y_nchwc)                               : f32[1,2,56,56,16]
//   %z_nchwc = minic.NchwcConv(%r_nchwc, %w2_nchwc, %b2_nchwc) : f32[1,4,56,56,16]
//   %z = minic.FromNchwc(%z_nchwc) {channels = 64}          : f32[1,64,56,56]
//   %f = Flatten(%z)                                        : f32[1,200704]
//
// For a GPU target the pass changes nothing: its rules compute convolutions on the plain
// layout.
//
// Chapter: docs/module4-schedules.md#7-blocked-layouts-nchwc
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/target/target.h"

namespace minic {

void blocked_layout(Graph& graph, const Target& target);

}  // namespace minic
