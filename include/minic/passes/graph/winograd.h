// The `winograd` pass: 3x3 convolutions of stride 1 computed with Winograd's minimal
// filtering, F(4x4, 3x3) or F(2x2, 3x3), where that takes less time than the direct
// convolution.
//
// Course module 4 (algorithmic rewrites). include/minic/ops/winograd.h has the maths. The
// pass runs after blocked-layout and rewrites a minic.NchwcConv into the input transform,
// a batched MatMul against the weights carried to transform space (a constant, computed
// here), and the output transform, which takes the bias and, once fused, the activation
// and residual Add that followed the convolution:
//
//   %y = minic.NchwcConv(%x, %w, %b) {pads = [1, 1, 1, 1]}      : f32[1,4,56,56,16]
// →
//   %y_winograd_v = minic.WinogradInput(%x, %winograd_bt4) {pads = [1, 1], tiles = [14, 14]}
//                                                                : f32[36,196,64]
//   %y_winograd_m = MatMul(%y_winograd_v, %w_winograd)            : f32[36,196,64]
//   %y = minic.WinogradOutput(%y_winograd_m, %winograd_at4, %b) {block = 16,
//                                      output_shape = [1, 56, 56]} : f32[1,4,56,56,16]
//
// Chapter: docs/module4-schedules.md#8-winograd-convolution
#pragma once

#include "minic/ir/graph/graph.h"
#include "minic/target/target.h"

namespace minic {

void winograd(Graph& graph, const Target& target);

}  // namespace minic
