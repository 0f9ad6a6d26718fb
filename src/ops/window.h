// Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops.
//
// Course module 2. A window op slides a kernel over the spatial axes of an N x C x D1 x ...
// x Dk tensor. Along each spatial axis i, output position o reads the input positions
//
//   o * strides[i] - pads_begin[i] + k * dilations[i]      for k in [0, kernel[i])
//
// and positions that fall outside [0, input[i]) are padding. The number of outputs follows
// from the padded input length and the dilated kernel (k - 1) * d + 1:
//
//   output = floor((input + pads_begin + pads_end - dilated_kernel) / stride) + 1
//
// (ceil instead of floor in the pools' ceil_mode). ONNX's auto_pad chooses the pads
// instead: SAME_UPPER and SAME_LOWER give ceil(input / stride) outputs, padding as little
// as needed and putting the odd extra pad at the end (UPPER) or the beginning (LOWER);
// VALID pads nothing.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/op.h"

#include <string>

namespace minic {

struct WindowGeometry {
  Shape input;       // spatial extent of the input
  Shape kernel;      // kernel extent, undilated
  Shape strides;
  Shape dilations;
  Shape pads_begin;  // may be negative only for ConvTranspose with an explicit output_shape
  Shape pads_end;
  Shape output;      // spatial extent of the output

  int64_t rank() const { return static_cast<int64_t>(input.size()); }
  int64_t dilated_kernel(int64_t axis) const {
    return (kernel[axis] - 1) * dilations[axis] + 1;
  }
};

// Reads `strides`, `dilations`, `pads` and `auto_pad` (each defaulting to ONNX's default)
// for a window op with the given input spatial extent and kernel, checks them, and
// computes the pads and the output extent. `ceil_mode` is the pools' attribute: round the
// output count up, as long as the last window still starts inside the input or its
// beginning pad. Errors name the node.
WindowGeometry read_window(const NodeContext& ctx, const Shape& input_spatial,
                           const Shape& kernel, bool ceil_mode);

// Reads an ints attribute with `count` entries (one per spatial axis, or two for pads),
// defaulting to `fallback` repeated; checks its length and that every entry is at least
// `minimum` and not absurdly large.
Shape read_spatial_ints(const NodeContext& ctx, std::string_view name, int64_t count,
                        int64_t fallback, int64_t minimum);

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace minic
