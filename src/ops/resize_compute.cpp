// The compute rule of Resize and Upsample: the sampling of resize_coordinates.cpp written as
// loop IR expressions of the output position.
//
// Course module 3. The reference kernel (resize.cpp) tabulates, for each resized axis, the
// input elements and weights that each output position samples. A compute rule has no
// tables: it computes them from the output index, in f64 as the kernel does.
//   1. x_original is the coordinate transformation of the output index j, the f64 formula
//      of resize_coordinates.cpp with the scale and crop as constants.
//   2. nearest: the input index is x_original rounded as nearest_mode says, clamped into
//      the input. The stage is a plain gather, exact for every element type.
//   3. linear and cubic: one reduction over the taps t of every resized axis. With
//      base = ceil(x_original) - 1 and ratio = x_original - base, tap t reads input
//      clamp(base + first_tap + t) with weight kernel((first_tap + t - ratio) * stretch).
//      The weights of each axis are a table [output, taps] kept in a buffer; where
//      exclude_outside or antialias rescale them to sum to 1, a reduction per axis sums
//      them first. The f64 sum is converted to the output type after.
//   4. tf_crop_and_resize gives extrapolation_value where a resized axis samples outside
//      the input.
// Axes that the kernel copies unchanged (resamples_axis) read the output's own index.
// The invariant: the same sampling positions and weights as sample_axis, up to the order
// in which the f64 products are summed.
//
// Upsample by 2 along the last two axes (nearest, asymmetric) is one gather:
//   y[v0, v1, v2, v3] = x[v0, v1, min(max(cast<i64>(floor(cast<f64>(v2) / 2.0f64)), 0), 2),
//                                 min(max(cast<i64>(floor(cast<f64>(v3) / 2.0f64)), 0), 2)]
//
// Chapter: docs/module3-loop-ir.md#5-lowering-compute-rules
#include "resize.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace minic {

namespace {

loop::Expr f64(double value) { return constant(DType::f64, value); }

loop::Expr divide(const loop::Expr& a, double b) { return loop::Div::make(a, f64(b)); }

loop::Expr clamp_index(const loop::Expr& value, int64_t extent) {
  return loop::min(loop::max(value, index(0)), index(extent - 1));
}

// One axis that the rule resamples, with its plan.
struct ResampledAxis {
  int64_t axis = 0;
  int64_t input = 0;
  int64_t output = 0;
  double scale = 1;
  double roi_start = 0;
  double roi_end = 1;
};

// x_original for output index j: original_coordinate of resize_coordinates.cpp, each
// operation in the same order so that the f64 results agree.
loop::Expr original_coordinate(const ResizeAttributes& a, const ResampledAxis& r,
                               const loop::Expr& j) {
  const double in = static_cast<double>(r.input);
  const double out = in * r.scale;
  loop::Expr x = cast(DType::f64, j);
  switch (a.coordinates) {
    case CoordinateMode::half_pixel:
      return divide(x + f64(0.5), r.scale) - f64(0.5);
    case CoordinateMode::half_pixel_symmetric: {
      double adjustment = static_cast<double>(r.output) / out;
      double offset = in / 2 * (1 - adjustment);
      return (f64(offset) + divide(x + f64(0.5), r.scale)) - f64(0.5);
    }
    case CoordinateMode::pytorch_half_pixel:
      if (r.output > 1) return divide(x + f64(0.5), r.scale) - f64(0.5);
      return f64(-0.5);
    case CoordinateMode::align_corners:
      if (out == 1) return f64(0.0);
      return divide(x * f64(in - 1), out - 1);
    case CoordinateMode::asymmetric:
      return divide(x, r.scale);
    case CoordinateMode::tf_half_pixel_for_nn:
      return divide(x + f64(0.5), r.scale);
    case CoordinateMode::tf_crop_and_resize: {
      double crop = (r.roi_end - r.roi_start) * (in - 1);
      double start = r.roi_start * (in - 1);
      if (out == 1) return f64(start + crop / 2);
      return f64(start) + divide(x * f64(crop), out - 1);
    }
  }
  return x;
}

// The input index nearest to x (before clamping), as nearest_index rounds it.
loop::Expr nearest_index(const ResizeAttributes& a, const ResampledAxis& r, const loop::Expr& x) {
  loop::Expr below = call("floor", {x});
  loop::Expr fraction = x - below;
  loop::Expr rounded;
  switch (a.nearest) {
    case NearestMode::round_prefer_floor:
      rounded = select(loop::LE::make(fraction, f64(0.5)), below, below + f64(1));
      break;
    case NearestMode::round_prefer_ceil:
      rounded = select(loop::LT::make(fraction, f64(0.5)), below, below + f64(1));
      break;
    case NearestMode::floor:
      rounded = below;
      break;
    case NearestMode::ceil:
      rounded = call("ceil", {x});
      break;
    case NearestMode::simple:
      rounded = r.scale < 1 ? call("ceil", {x}) : below;
      break;
  }
  return cast(DType::i64, rounded);
}

// The interpolation kernel at distance d: kernel_weight of resize_coordinates.cpp.
loop::Expr kernel_weight(const ResizeAttributes& a, const loop::Expr& distance) {
  loop::Expr d = call("fabs", {distance});
  if (a.mode == ResizeMode::linear) return loop::max(f64(0), f64(1) - d);
  const double c = a.cubic_coeff_a;
  loop::Expr near = ((f64(c + 2) * d - f64(c + 3)) * d) * d + f64(1);
  loop::Expr far = ((f64(c) * d - f64(5 * c)) * d + f64(8 * c)) * d - f64(4 * c);
  return select(loop::LE::make(d, f64(1)), near,
                select(loop::LT::make(d, f64(2)), far, f64(0)));
}

// The taps of linear and cubic sampling along one axis: how many, from which offset, and
// by how much the kernel is stretched (antialias).
struct Taps {
  int64_t count = 1;
  int64_t first = 0;
  double stretch = 1;

  static Taps of(const ResizeAttributes& a, double scale) {
    Taps taps;
    taps.stretch = a.antialias ? std::min(scale, 1.0) : 1.0;
    const double reach = a.mode == ResizeMode::cubic ? 2.0 : 1.0;
    taps.first = static_cast<int64_t>(std::floor(-reach / taps.stretch)) + 1;
    taps.count = 2 - 2 * taps.first;
    return taps;
  }
};

// Tap t of output position j along one axis: the input index it reads (clamped) and its
// weight before any rescaling.
struct Tap {
  loop::Expr position;
  loop::Expr weight;
};

Tap sample_tap(const ResizeAttributes& a, const ResampledAxis& r, const loop::Expr& j,
               const loop::Expr& t) {
  const Taps taps = Taps::of(a, r.scale);
  loop::Expr x = original_coordinate(a, r, j);
  loop::Expr base = call("ceil", {x}) - f64(1);
  loop::Expr ratio = x - base;
  loop::Expr offset = affine(t, 1, taps.first);
  loop::Expr unclamped = cast(DType::i64, base) + offset;
  loop::Expr distance = cast(DType::f64, offset) - ratio;
  if (taps.stretch != 1) distance = distance * f64(taps.stretch);
  loop::Expr weight = kernel_weight(a, distance);
  if (a.exclude_outside) weight = select(in_range(unclamped, r.input), weight, f64(0));
  return {clamp_index(unclamped, r.input), weight};
}

// The test that output position j lies outside the crop along some resampled axis (null
// unless tf_crop_and_resize).
loop::Expr extrapolated(const ResizeAttributes& a, const std::vector<ResampledAxis>& axes,
                        const Indices& i) {
  if (a.coordinates != CoordinateMode::tf_crop_and_resize) return {};
  loop::Expr outside;
  for (const ResampledAxis& r : axes) {
    loop::Expr x = original_coordinate(a, r, i[r.axis]);
    loop::Expr test = loop::Or::make(loop::LT::make(x, f64(0)),
                                     loop::GT::make(x, f64(static_cast<double>(r.input - 1))));
    outside = outside ? loop::Or::make(outside, test) : test;
  }
  return outside;
}

// The axes the rule resamples; the rest read the output's own index.
std::vector<ResampledAxis> resampled_axes(const ResizeAttributes& a, const ResizePlan& plan,
                                          const ComputeTensor& x) {
  std::vector<ResampledAxis> axes;
  for (int64_t axis : a.axes) {
    if (!resamples_axis(a, plan, x.shape(), axis)) continue;
    axes.push_back({axis, x.dim(axis), plan.output[axis], plan.scales[axis],
                    plan.roi_start[axis], plan.roi_end[axis]});
  }
  return axes;
}

// `value` at output position i, or extrapolation_value where i lies outside the crop.
loop::Expr or_extrapolated(const ResizeAttributes& a, const std::vector<ResampledAxis>& axes,
                           DType dtype, const Indices& i, loop::Expr value) {
  loop::Expr outside = extrapolated(a, axes, i);
  if (!outside) return value;
  return select(outside, constant(dtype, a.extrapolation_value), value);
}

// Step 2: nearest (or no axis resampled): one gather.
ComputeTensor nearest_gather(const ComputeContext& ctx, const std::string& name,
                             const ResizeAttributes& a, const std::vector<ResampledAxis>& axes) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  return ctx.compute(name, type, [&](const Indices& i) {
    Indices at = i;
    for (const ResampledAxis& r : axes) {
      at[r.axis] = clamp_index(nearest_index(a, r, original_coordinate(a, r, i[r.axis])),
                               r.input);
    }
    return or_extrapolated(a, axes, type.dtype, i, x(at));
  });
}

// The weight of each tap of each output position, per axis, in a buffer of its own: the
// interpolating reduction reads it for every element. Where the weights are rescaled,
// their sum per output position is a reduction first.
std::vector<ComputeTensor> tap_weights(const ComputeContext& ctx, const std::string& name,
                                       const ResizeAttributes& a,
                                       const std::vector<ResampledAxis>& axes) {
  std::vector<ComputeTensor> weights;
  for (const ResampledAxis& r : axes) {
    const int64_t count = Taps::of(a, r.scale).count;
    const TensorType table = {DType::f64, {r.output, count}};
    ComputeTensor raw = ctx.compute(name + "_weights", table, [&](const Indices& i) {
      return sample_tap(a, r, i[0], i[1]).weight;
    });
    if (a.antialias || a.exclude_outside) {
      ComputeTensor total = ctx.reduce(name + "_total", {DType::f64, {r.output}}, {count},
                                       Reducer::sum, [&](const Indices& i, const Indices& t) {
        return raw({i[0], t[0]});
      });
      raw = ctx.compute(name + "_weights", table, [&](const Indices& i) {
        loop::Expr sum = total({i[0]});
        return select(loop::NE::make(sum, f64(0)), loop::Div::make(raw(i), sum), raw(i));
      });
    }
    weights.push_back(ctx.keep(raw));
  }
  return weights;
}

// Step 3: linear and cubic: a weighted sum over the taps of every resampled axis, in f64,
// converted to the output type after.
ComputeTensor interpolation(const ComputeContext& ctx, const std::string& name,
                            const ResizeAttributes& a, const std::vector<ResampledAxis>& axes) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  std::vector<ComputeTensor> weights = tap_weights(ctx, name, a, axes);
  Shape tap_extents;
  for (const ResampledAxis& r : axes) tap_extents.push_back(Taps::of(a, r.scale).count);

  // sum[i] = sum over taps t of (product over axes of weight(i, t)) * X[position(i, t)]
  ComputeTensor sum = ctx.reduce(name, {DType::f64, type.shape}, tap_extents, Reducer::sum,
                                 [&](const Indices& i, const Indices& t) {
    Indices at = i;
    loop::Expr product;
    for (size_t n = 0; n < axes.size(); ++n) {
      const int64_t axis = axes[n].axis;
      at[axis] = sample_tap(a, axes[n], i[axis], t[n]).position;
      loop::Expr weight = weights[n]({i[axis], t[n]});
      product = product ? weight * product : weight;
    }
    return product * cast(DType::f64, x(at));
  });
  return ctx.compute(name + "_output", type, [&](const Indices& i) {
    return or_extrapolated(a, axes, type.dtype, i, cast(type.dtype, sum(i)));
  });
}

}  // namespace

std::vector<ComputeTensor> resize_compute(const ComputeContext& ctx) {
  const ComputeTensor& x = ctx.input(0);
  const TensorType& type = ctx.output_type(0);
  ResizeAttributes a = ResizeAttributes::read(ctx, x.rank());
  ResizePlan plan = plan_resize(ctx, a, x.shape(), [&](size_t input) -> const Tensor& {
    return ctx.constant_input(input);
  });
  std::vector<ResampledAxis> axes = resampled_axes(a, plan, x);
  const std::string name = stage_name(ctx);
  const bool floating = is_float(type.dtype);
  if (a.coordinates == CoordinateMode::tf_crop_and_resize && !floating) {
    ctx.no_rule("extrapolation_value is rounded into an integer output only by the kernel");
  }
  const bool gather = a.mode == ResizeMode::nearest || axes.empty();
  if (!gather && !floating) {
    ctx.no_rule("interpolating an integer tensor rounds half to even, which only the kernel "
                "does");
  }
  if (gather) return {nearest_gather(ctx, name, a, axes)};
  return {interpolation(ctx, name, a, axes)};
}

}  // namespace minic
