// Pad: grows (or, with negative pads, crops) a tensor at the ends of its dimensions.
// Course module 2.
//
// pads lists the amount added before each padded axis, then the amount added after each:
// [x1_begin, x2_begin, ..., x1_end, x2_end]. They are the `pads` attribute before opset 11
// and an input from 11 on (whose value must be known before running), where an optional
// `axes` input (opset 18) says which axes they are for. Negative pads first crop the
// input (as ONNX Runtime does); what is left of an axis is a window of n elements, and
// output element i, with `before` elements of padding in front, reads window coordinate
// c = i - before. Where c falls outside [0, n) the mode decides:
//   constant  the value (attribute `value` before opset 11, optional input 2 after; 0)
//   edge      the nearest edge element: clamp(c, 0, n - 1)
//   reflect   the mirror image without repeating the edge: ... 2 1 | 0 1 2 3 | 2 1 ...
//   wrap      the other end, periodically: c mod n
// (reflect and wrap repeat periodically when the padding is longer than the window, as
// numpy's pad does).
// The kernel maps each axis once into a table of input coordinates and then copies bytes,
// so it serves every element type. Fusion kind: injective (each output element reads at
// most one input element).
//
// Compute rule (course module 3): the same coordinates as expressions of the output
// index -- clamped (edge), floormod (wrap), floormod and mirrored (reflect) -- and, in
// constant mode, a select between the input and the value, taken where every padded
// coordinate lies inside its window.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "minic/ops/compute.h"
#include "minic/ops/op.h"
#include "movement.h"

#include <algorithm>

namespace minic {

namespace {

enum class PadMode { constant, edge, reflect, wrap };

PadMode pad_mode(const NodeContext& ctx) {
  const std::string mode = ctx.get_string("mode", "constant");
  if (mode == "constant") return PadMode::constant;
  if (mode == "edge") return PadMode::edge;
  if (mode == "reflect") return PadMode::reflect;
  if (mode == "wrap") return PadMode::wrap;
  ctx.fail("unknown mode '{}' (minic knows constant, edge, reflect and wrap)", mode);
}

struct Padding {
  Shape begin;  // per input dimension
  Shape end;
};

// The padding of every dimension of an input of rank `rank`; value_of(i) gives the value of
// input i (opset >= 11).
template <typename ValueOf>
Padding read_padding(const NodeContext& ctx, int64_t rank, ValueOf value_of) {
  std::vector<int64_t> pads;
  if (ctx.opset() < 2) {
    pads = ctx.get_ints("paddings");
  } else if (ctx.opset() < 11) {
    pads = ctx.get_ints("pads");
  } else {
    pads = int_list(ctx, value_of(1), "pads");
  }
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) axes[d] = d;
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    axes = normalize_axes(ctx, int_list(ctx, value_of(3), "axes"), rank);
  }
  if (pads.size() != 2 * axes.size()) {
    ctx.fail("pads has {} entries; it needs 2 for each of the {} padded axes", pads.size(),
             axes.size());
  }
  for (int64_t pad : pads) {
    if (pad > kMaxTensorBytes || pad < -kMaxTensorBytes) ctx.fail("pad {} is absurd", pad);
  }
  Padding padding{Shape(rank, 0), Shape(rank, 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    padding.begin[axes[i]] = pads[i];
    padding.end[axes[i]] = pads[i + axes.size()];
  }
  return padding;
}

// What one axis of the output reads: the input window [first, first + size) that negative
// pads leave, with `before` elements of padding in front of it.
struct AxisWindow {
  int64_t first;
  int64_t size;  // negative if the pads crop more than the axis holds
  int64_t before;
};

AxisWindow axis_window(int64_t n, int64_t begin, int64_t end) {
  const int64_t first = std::max<int64_t>(-begin, 0);
  return {first, n - first - std::max<int64_t>(-end, 0), std::max<int64_t>(begin, 0)};
}

std::vector<TensorType> pad_shape(const ShapeContext& ctx) {
  const TensorType& input = ctx.input_type(0);
  const Padding padding = read_padding(
      ctx, input.rank(), [&](size_t i) -> const Tensor& { return ctx.input_value(i); });
  const PadMode mode = pad_mode(ctx);
  Shape shape = input.shape;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const AxisWindow window = axis_window(input.shape[d], padding.begin[d], padding.end[d]);
    if (window.size < 0) {
      ctx.fail("pads crop more than axis {} of {} holds", d, type_string(input));
    }
    shape[d] += padding.begin[d] + padding.end[d];
    if (mode != PadMode::constant && window.size == 0 && shape[d] > 0) {
      ctx.fail("cannot pad the empty axis {} of {} in mode '{}'", d, type_string(input),
               ctx.get_string("mode", "constant"));
    }
  }
  return {{input.dtype, shape}};
}

// The coordinate within the window that output coordinate `i` reads, or -1 for the
// constant.
int64_t window_coordinate(PadMode mode, int64_t i, const AxisWindow& window) {
  const int64_t n = window.size;
  const int64_t c = i - window.before;
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case PadMode::constant:
      return -1;
    case PadMode::edge:
      return c < 0 ? 0 : n - 1;
    case PadMode::reflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      const int64_t m = (c % period + period) % period;
      return m < n ? m : period - m;
    }
    case PadMode::wrap:
      return (c % n + n) % n;
  }
  return -1;
}

// The padding value as one element of `dtype`.
Tensor pad_value(const KernelContext& ctx, DType dtype) {
  if (ctx.opset() < 11) return Tensor::scalar<float>(ctx.get_float("value", 0.0f)).cast(dtype);
  if (ctx.has_input(2) && ctx.input(2).num_elements() > 0) {
    return ctx.input(2).reshaped({ctx.input(2).num_elements()}).cast(dtype);
  }
  return Tensor(dtype, {1});
}

std::vector<Tensor> pad_kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Padding padding =
      read_padding(ctx, input.rank(), [&](size_t i) -> const Tensor& { return ctx.input(i); });
  const PadMode mode = pad_mode(ctx);
  Tensor output = ctx.make_output(0);
  if (output.num_elements() == 0) return single_output(std::move(output));

  // sources[d][i]: the input coordinate output coordinate i reads along dimension d.
  std::vector<std::vector<int64_t>> sources(static_cast<size_t>(input.rank()));
  for (int64_t d = 0; d < input.rank(); ++d) {
    const AxisWindow window = axis_window(input.shape()[d], padding.begin[d], padding.end[d]);
    for (int64_t i = 0; i < output.shape()[d]; ++i) {
      const int64_t c = window_coordinate(mode, i, window);
      sources[d].push_back(c < 0 ? -1 : window.first + c);
    }
  }

  const Tensor value = pad_value(ctx, input.dtype());
  const Shape strides = row_major_strides(input.shape());
  int64_t flat = 0;
  for_each_index(output.shape(), [&](const Shape& index) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size() && offset >= 0; ++d) {
      const int64_t c = sources[d][index[d]];
      offset = c < 0 ? -1 : offset + c * strides[d];
    }
    if (offset < 0) {
      copy_element(value, 0, output, flat++);
    } else {
      copy_element(input, offset, output, flat++);
    }
  });
  return single_output(std::move(output));
}

// The window coordinate output index `i` reads along one axis, as window_coordinate()
// computes it (constant mode: c itself, tested by the caller).
loop::Expr window_coordinate_expr(PadMode mode, const loop::Expr& i, const AxisWindow& window) {
  const int64_t n = window.size;
  loop::Expr c = affine(i, 1, -window.before);
  switch (mode) {
    case PadMode::constant:
      return c;
    case PadMode::edge:
      return loop::min(loop::max(c, index(0)), index(n - 1));
    case PadMode::reflect: {
      if (n == 1) return index(0);
      const int64_t period = 2 * (n - 1);
      loop::Expr m = loop::FloorMod::make(c, index(period));
      return select(loop::LT::make(m, index(n)), m, index(period) - m);
    }
    case PadMode::wrap:
      return loop::FloorMod::make(c, index(n));
  }
  return c;
}

std::vector<ComputeTensor> pad_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const Padding padding = read_padding(
      ctx, x.rank(), [&](size_t i) -> const Tensor& { return ctx.constant_input(i); });
  const PadMode mode = pad_mode(ctx);
  const TensorType& type = ctx.output_type(0);
  return {ctx.compute("pad", type, [&](const Indices& i) {
    Indices source;
    loop::Expr inside;
    for (size_t d = 0; d < i.size(); ++d) {
      const AxisWindow window = axis_window(x.dim(d), padding.begin[d], padding.end[d]);
      if (padding.begin[d] == 0 && padding.end[d] == 0) {
        source.push_back(i[d]);
        continue;
      }
      loop::Expr c = window_coordinate_expr(mode, i[d], window);
      if (mode == PadMode::constant && (padding.begin[d] > 0 || padding.end[d] > 0)) {
        loop::Expr test = in_range(c, window.size);
        inside = inside ? loop::And::make(inside, test) : test;
      }
      source.push_back(affine(c, 1, window.first));
    }
    if (!inside) return x(source);
    loop::Expr value = constant(type.dtype, 0);
    if (ctx.opset() < 11) {
      value = constant(type.dtype, ctx.get_float("value", 0.0f));
    } else if (ctx.has_input(2) && ctx.input(2).type().num_elements() > 0) {
      const ComputeTensor& given = ctx.input(2);
      value = cast(type.dtype, given(Indices(given.rank(), index(0))));
    }
    return select(inside, x(source), value);
  })};
}

}  // namespace

void register_pad_ops(OpRegistry& registry) {
  registry.add({.name = "Pad",
                .min_opset = 1,
                .max_inputs = 4,
                .fusion = FusionKind::injective,
                .shape_rule = pad_shape,
                .kernel = pad_kernel,
                .compute = pad_compute});
}

}  // namespace minic
