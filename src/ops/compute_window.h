// Window arithmetic for the compute rules of Conv and the pools: where a kernel tap reads,
// whether that lies inside the input, and how many taps of a window do.
//
// Course module 3. Along spatial axis a, output position o and kernel tap k read input
// position o * strides[a] + k * dilations[a] - pads_begin[a] (window.h). These helpers
// write that as a loop IR expression and test it only along the axes where some window
// reaches into the padding, so an unpadded convolution has no test at all:
//
//   window_position(g, 0, v2, r1)  =  v2 * 2 + r1 - 1
//   window_inside(g, {v2, v3}, {r1, r2})  =  0 <= v2 * 2 + r1 - 1 && v2 * 2 + r1 - 1 < 8
//                                           && ... (or null: always inside)
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#pragma once

#include "minic/ops/compute.h"
#include "window.h"

namespace minic {

// The input position along spatial axis `axis` read by output position `o` and tap `k`.
loop::Expr window_position(const WindowGeometry& g, size_t axis, const loop::Expr& o,
                           const loop::Expr& k);
// True if some output position and tap read outside [0, input) along `axis`.
bool window_leaves_input(const WindowGeometry& g, size_t axis);
// The test that output `o` and taps `k` (one per spatial axis) read inside the input, or
// a null Expr where they always do.
loop::Expr window_inside(const WindowGeometry& g, const Indices& o, const Indices& k);
// How many taps of output position `o`'s window along `axis` read inside [lo, hi) (as an
// i64 expression): the divisor of AveragePool.
loop::Expr window_count(const WindowGeometry& g, size_t axis, const loop::Expr& o, int64_t lo,
                        int64_t hi);

}  // namespace minic
