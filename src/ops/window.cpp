// Sliding-window geometry for Conv and the pools: pads, auto_pad and output extents.
// Course module 2. See window.h for the formulas.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "window.h"

#include <algorithm>

namespace minic {

Shape read_spatial_ints(const NodeContext& ctx, std::string_view name, int64_t count,
                        int64_t fallback, int64_t minimum) {
  Shape values = ctx.get_ints(name, Shape(count, fallback));
  if (static_cast<int64_t>(values.size()) != count) {
    ctx.fail("attribute '{}' has {} entries; {} are expected here", name, values.size(), count);
  }
  for (int64_t value : values) {
    if (value < minimum) {
      ctx.fail("attribute '{}' has the entry {} (at least {})", name, value, minimum);
    }
    // Larger values could only describe tensors minic refuses anyway, and would overflow
    // the extent arithmetic.
    if (value > kMaxTensorBytes) ctx.fail("attribute '{}' has the absurd entry {}", name, value);
  }
  return values;
}

WindowGeometry read_window(const NodeContext& ctx, const Shape& input_spatial,
                           const Shape& kernel, bool ceil_mode) {
  const int64_t rank = static_cast<int64_t>(input_spatial.size());
  WindowGeometry g;
  g.input = input_spatial;
  g.kernel = kernel;
  g.strides = read_spatial_ints(ctx, "strides", rank, 1, 1);
  g.dilations = read_spatial_ints(ctx, "dilations", rank, 1, 1);
  g.pads_begin.assign(rank, 0);
  g.pads_end.assign(rank, 0);
  g.output.assign(rank, 0);
  for (int64_t k : kernel) {
    if (k < 1) ctx.fail("kernel extent {} is not positive", k);
  }

  const std::string auto_pad = ctx.get_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int64_t i = 0; i < rank; ++i) {
      g.output[i] = ceil_div(g.input[i], g.strides[i]);
      int64_t total = (g.output[i] - 1) * g.strides[i] + g.dilated_kernel(i) - g.input[i];
      total = std::max<int64_t>(total, 0);
      int64_t smaller = total / 2;
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? smaller : total - smaller;
      g.pads_end[i] = total - g.pads_begin[i];
    }
    return g;
  }
  if (auto_pad == "NOTSET") {
    Shape pads = read_spatial_ints(ctx, "pads", 2 * rank, 0, 0);
    g.pads_begin.assign(pads.begin(), pads.begin() + rank);
    g.pads_end.assign(pads.begin() + rank, pads.end());
  } else if (auto_pad != "VALID") {
    ctx.fail("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad);
  }

  for (int64_t i = 0; i < rank; ++i) {
    int64_t padded = g.input[i] + g.pads_begin[i] + g.pads_end[i];
    int64_t span = padded - g.dilated_kernel(i);
    if (span < 0) {
      ctx.fail("on spatial axis {} the window (extent {} with dilation {}) is larger than the "
               "padded input (extent {})",
               i, g.kernel[i], g.dilations[i], padded);
    }
    if (!ceil_mode) {
      g.output[i] = span / g.strides[i] + 1;
      continue;
    }
    g.output[i] = ceil_div(span, g.strides[i]) + 1;
    // The last window must start inside the input or its beginning pad; one that would
    // start in the end pad (or beyond) is dropped.
    if ((g.output[i] - 1) * g.strides[i] >= g.input[i] + g.pads_begin[i]) --g.output[i];
  }
  return g;
}

}  // namespace minic
