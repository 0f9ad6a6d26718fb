// Window arithmetic for compute rules (see compute_window.h). Course module 3.
//
// The count of taps inside [lo, hi) has a closed form: with start = o * s - pads_begin,
// tap k is inside when lo <= start + k * d < hi, that is for k from ceil((lo - start) / d)
// up to (excluding) ceil((hi - start) / d), clipped to [0, K). Where every window lies
// inside, the count is the constant K.
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "compute_window.h"

namespace minic {

namespace {

// ceil(x / d) for an i64 expression x and d > 0.
loop::Expr ceil_div_expr(const loop::Expr& x, int64_t d) {
  if (d == 1) return x;
  return loop::FloorDiv::make(x + (d - 1), index(d));
}

// The smallest and largest input positions along `axis` any window reads.
std::pair<int64_t, int64_t> position_range(const WindowGeometry& g, size_t axis) {
  int64_t lowest = -g.pads_begin[axis];
  int64_t highest = (g.output[axis] - 1) * g.strides[axis] +
                    (g.kernel[axis] - 1) * g.dilations[axis] - g.pads_begin[axis];
  return {lowest, highest};
}

}  // namespace

loop::Expr window_position(const WindowGeometry& g, size_t axis, const loop::Expr& o,
                           const loop::Expr& k) {
  loop::Expr position = affine(o, g.strides[axis], 0);
  if (g.kernel[axis] > 1) position = position + affine(k, g.dilations[axis], 0);
  return affine(position, 1, -g.pads_begin[axis]);
}

bool window_leaves_input(const WindowGeometry& g, size_t axis) {
  auto [lowest, highest] = position_range(g, axis);
  return lowest < 0 || highest >= g.input[axis];
}

loop::Expr window_inside(const WindowGeometry& g, const Indices& o, const Indices& k) {
  loop::Expr inside;
  for (size_t axis = 0; axis < o.size(); ++axis) {
    if (!window_leaves_input(g, axis)) continue;
    loop::Expr test = in_range(window_position(g, axis, o[axis], k[axis]), g.input[axis]);
    inside = inside ? loop::And::make(inside, test) : test;
  }
  return inside;
}

loop::Expr window_count(const WindowGeometry& g, size_t axis, const loop::Expr& o, int64_t lo,
                        int64_t hi) {
  auto [lowest, highest] = position_range(g, axis);
  if (lowest >= lo && highest < hi) return index(g.kernel[axis]);
  const int64_t d = g.dilations[axis];
  loop::Expr start = affine(o, g.strides[axis], -g.pads_begin[axis]);
  loop::Expr first = loop::max(ceil_div_expr(index(lo) - start, d), index(0));
  loop::Expr end = loop::min(ceil_div_expr(index(hi) - start, d), index(g.kernel[axis]));
  return loop::max(end - first, index(0));
}

}  // namespace minic
