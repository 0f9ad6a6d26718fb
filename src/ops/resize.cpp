// Resize (and its predecessor Upsample): resample a tensor to a new size.
//
// Course module 2. The output size comes from the inputs, so a static-shape compiler needs
// their values before running:
//   - `scales`: output = floor(input * scale) along each axis;
//   - or `sizes`: the output size itself, the scale being sizes / input. Opset 18's
//     keep_aspect_ratio_policy can replace the per-axis scales with their minimum
//     (not_larger) or maximum (not_smaller), the size then being round(input * scale).
// Opset 18's `axes` restricts both to the listed axes (the others keep their size), and
// `roi` gives the crop that tf_crop_and_resize reads.
//
// Inputs by version: Resize-10 (X, scales); Resize-11 and later (X, roi, scales, sizes),
// an empty tensor standing for an omitted one; Upsample-7 (X, scales as an attribute);
// Upsample-9 (X, scales).
//
// The kernel resizes one axis at a time (resampling is separable), in double, skipping
// axes that keep their size at scale 1; resize_coordinates.cpp says where each output
// position samples. Integer outputs are rounded half to even and saturated.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "resize.h"

#include "float_compute.h"

#include <cmath>
#include <limits>

namespace minic {

namespace {

}  // namespace

ResizeAttributes ResizeAttributes::read(const NodeContext& ctx, int64_t rank) {
  ResizeAttributes a;
  a.mode = read_choice<ResizeMode>(ctx, "mode", "nearest",
                                   {{"nearest", ResizeMode::nearest},
                                    {"linear", ResizeMode::linear},
                                    {"bilinear", ResizeMode::linear},
                                    {"cubic", ResizeMode::cubic}});
  const bool legacy = ctx.node().op == "Upsample" || ctx.opset() < 11;
  if (legacy) {
    // Upsample and Resize-10 sample at x / scale; their nearest rounding is ONNX Runtime's.
    if (a.mode == ResizeMode::cubic) ctx.fail("mode 'cubic' needs Resize from opset 11");
    a.coordinates = CoordinateMode::asymmetric;
    a.nearest = NearestMode::simple;
  } else {
    a.coordinates = read_choice<CoordinateMode>(
        ctx, "coordinate_transformation_mode", "half_pixel",
        {{"half_pixel", CoordinateMode::half_pixel},
         {"half_pixel_symmetric", CoordinateMode::half_pixel_symmetric},
         {"pytorch_half_pixel", CoordinateMode::pytorch_half_pixel},
         {"align_corners", CoordinateMode::align_corners},
         {"asymmetric", CoordinateMode::asymmetric},
         {"tf_half_pixel_for_nn", CoordinateMode::tf_half_pixel_for_nn},
         {"tf_crop_and_resize", CoordinateMode::tf_crop_and_resize}});
    a.nearest = read_choice<NearestMode>(ctx, "nearest_mode", "round_prefer_floor",
                                         {{"round_prefer_floor", NearestMode::round_prefer_floor},
                                          {"round_prefer_ceil", NearestMode::round_prefer_ceil},
                                          {"floor", NearestMode::floor},
                                          {"ceil", NearestMode::ceil}});
    a.cubic_coeff_a = ctx.get_float("cubic_coeff_a", -0.75f);
    a.exclude_outside = ctx.get_int("exclude_outside", 0) != 0;
    a.extrapolation_value = ctx.get_float("extrapolation_value", 0.0f);
    a.antialias = ctx.get_int("antialias", 0) != 0;
    a.aspect_ratio = read_choice<AspectRatioPolicy>(
        ctx, "keep_aspect_ratio_policy", "stretch",
        {{"stretch", AspectRatioPolicy::stretch},
         {"not_larger", AspectRatioPolicy::not_larger},
         {"not_smaller", AspectRatioPolicy::not_smaller}});
  }
  if (a.antialias && a.mode == ResizeMode::nearest) {
    ctx.fail("antialias = 1 is not supported with mode 'nearest' (only linear and cubic)");
  }
  if (ctx.has_attr("axes")) {
    for (int64_t axis : ctx.get_ints("axes")) {
      axis = ctx.normalize_axis(axis, rank);
      if (std::find(a.axes.begin(), a.axes.end(), axis) != a.axes.end()) {
        ctx.fail("attribute axes lists axis {} twice", axis);
      }
      a.axes.push_back(axis);
    }
  } else {
    for (int64_t axis = 0; axis < rank; ++axis) a.axes.push_back(axis);
  }
  return a;
}

namespace {

// The inputs that fix the output size, each null when omitted or empty.
struct ResizeInputs {
  const Tensor* roi = nullptr;
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  Tensor attribute_scales;  // Upsample-7's `scales` attribute
};

// Collects the inputs; value_of(index) gives input `index`'s value (omitted inputs are
// not asked for).
ResizeInputs gather_inputs(const NodeContext& ctx, const ResizeAttributes& a,
                           const ResizeInputValue& value_of) {
  ResizeInputs inputs;
  auto present = [&](size_t index) -> const Tensor* {
    if (!ctx.has_input(index)) return nullptr;
    const Tensor& value = value_of(index);
    return value.num_elements() == 0 ? nullptr : &value;
  };
  if (ctx.node().op == "Upsample" && ctx.opset() < 9) {
    if (!ctx.has_attr("scales")) ctx.fail("missing required attribute 'scales'");
    std::vector<float> scales = ctx.get_floats("scales", {});
    inputs.attribute_scales = Tensor::from_vector<float>({static_cast<int64_t>(scales.size())},
                                                         scales);
    inputs.scales = &inputs.attribute_scales;
  } else if (ctx.node().op == "Upsample" || ctx.opset() < 11) {
    inputs.scales = present(1);
  } else {
    inputs.scales = present(2);
    inputs.sizes = present(3);
    // roi matters only to tf_crop_and_resize; the shape rule does not need its value.
    if (a.coordinates == CoordinateMode::tf_crop_and_resize) inputs.roi = present(1);
  }
  return inputs;
}

ResizePlan plan_from_inputs(const NodeContext& ctx, const ResizeAttributes& a,
                            const Shape& input, const ResizeInputs& inputs) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const size_t count = a.axes.size();
  ResizePlan plan;
  plan.output = input;
  plan.scales.assign(rank, 1.0);
  plan.roi_start.assign(rank, 0.0);
  plan.roi_end.assign(rank, 1.0);
  if (inputs.scales && inputs.sizes) ctx.fail("both scales and sizes are given; give only one");
  if (!inputs.scales && !inputs.sizes) ctx.fail("neither scales nor sizes is given");

  if (inputs.scales) {
    std::vector<double> scales = inputs.scales->to_double_vector();
    if (scales.size() != count) {
      ctx.fail("scales has {} entries; it needs one per resized axis ({})", scales.size(), count);
    }
    for (size_t i = 0; i < count; ++i) {
      const int64_t axis = a.axes[i];
      if (!(scales[i] > 0) || !std::isfinite(scales[i])) {
        ctx.fail("scale {} for axis {} is not a positive number", scales[i], axis);
      }
      plan.scales[axis] = scales[i];
      double size = static_cast<double>(input[axis]) * scales[i];
      if (size > static_cast<double>(kMaxTensorBytes)) {
        ctx.fail("scale {} makes axis {} absurdly large", scales[i], axis);
      }
      plan.output[axis] = static_cast<int64_t>(std::floor(size));
    }
  } else {
    std::vector<int64_t> sizes = inputs.sizes->to_int64_vector();
    if (sizes.size() != count) {
      ctx.fail("sizes has {} entries; it needs one per resized axis ({})", sizes.size(), count);
    }
    for (size_t i = 0; i < count; ++i) {
      const int64_t axis = a.axes[i];
      if (sizes[i] < 0 || sizes[i] > kMaxTensorBytes) {
        ctx.fail("sizes has the entry {}, which is not a possible size", sizes[i]);
      }
      if (input[axis] == 0) ctx.fail("axis {} of the input is empty and cannot be resized", axis);
      plan.scales[axis] = static_cast<double>(sizes[i]) / static_cast<double>(input[axis]);
      plan.output[axis] = sizes[i];
    }
    if (a.aspect_ratio != AspectRatioPolicy::stretch) {
      const bool smallest = a.aspect_ratio == AspectRatioPolicy::not_larger;
      double scale = plan.scales[a.axes[0]];
      for (int64_t axis : a.axes) {
        scale = smallest ? std::min(scale, plan.scales[axis]) : std::max(scale, plan.scales[axis]);
      }
      for (int64_t axis : a.axes) {
        plan.scales[axis] = scale;
        plan.output[axis] = static_cast<int64_t>(scale * static_cast<double>(input[axis]) + 0.5);
      }
    }
  }

  if (inputs.roi) {
    std::vector<double> roi = inputs.roi->to_double_vector();
    if (roi.size() != 2 * count) {
      ctx.fail("roi has {} entries; it needs a start and an end per resized axis ({})",
               roi.size(), 2 * count);
    }
    for (size_t i = 0; i < count; ++i) {
      plan.roi_start[a.axes[i]] = roi[i];
      plan.roi_end[a.axes[i]] = roi[count + i];
    }
  }
  return plan;
}

}  // namespace

ResizePlan plan_resize(const NodeContext& ctx, const ResizeAttributes& a, const Shape& input,
                       const ResizeInputValue& value_of) {
  return plan_from_inputs(ctx, a, input, gather_inputs(ctx, a, value_of));
}

bool resamples_axis(const ResizeAttributes& a, const ResizePlan& plan, const Shape& input,
                    int64_t axis) {
  const bool whole_roi = plan.roi_start[axis] == 0.0 && plan.roi_end[axis] == 1.0;
  const bool same = plan.output[axis] == input[axis] && std::abs(plan.scales[axis] - 1) <= 1e-9;
  return !same || (!whole_roi && a.coordinates == CoordinateMode::tf_crop_and_resize);
}

namespace {

void check_resize_dtype(const NodeContext& ctx, DType dtype) {
  if (dtype == DType::boolean) ctx.fail("input X is bool; {} takes numeric tensors", ctx.node().op);
}

std::vector<TensorType> resize_shape(const ShapeContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  check_resize_dtype(ctx, x.dtype);
  ResizeAttributes a = ResizeAttributes::read(ctx, x.rank());
  ResizePlan plan =
      plan_resize(ctx, a, x.shape, [&](size_t i) -> const Tensor& { return ctx.input_value(i); });
  return {{x.dtype, plan.output}};
}

// Resamples `data` (of `shape`) along `axis` as `s` says; returns the new data and updates
// `shape`.
std::vector<double> resample_axis(const std::vector<double>& data, Shape& shape, int64_t axis,
                                  int64_t output, const AxisSampling& s, double extrapolation) {
  const int64_t input = shape[axis];
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  std::vector<double> result(outer * output * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < output; ++j) {
      double* dst = result.data() + (o * output + j) * inner;
      if (s.extrapolated[j]) {
        std::fill(dst, dst + inner, extrapolation);
        continue;
      }
      for (int64_t t = 0; t < s.taps; ++t) {
        const double weight = s.weight[j * s.taps + t];
        const double* src = data.data() + (o * input + s.index[j * s.taps + t]) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] += weight * src[i];
      }
    }
  }
  shape[axis] = output;
  return result;
}

// Stores doubles into a tensor of element type T: floats convert, integers round half to
// even and saturate.
template <typename T>
void store_resized(const std::vector<double>& values, Tensor& out) {
  auto dst = out.values<T>();
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (is_float_v<T>) {
      dst[i] = static_cast<T>(values[i]);
    } else {
      double v = std::nearbyint(values[i]);
      v = std::clamp(v, static_cast<double>(std::numeric_limits<T>::lowest()),
                     static_cast<double>(std::numeric_limits<T>::max()));
      dst[i] = static_cast<T>(v);
    }
  }
}

std::vector<Tensor> resize_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  check_resize_dtype(ctx, x.dtype());
  ResizeAttributes a = ResizeAttributes::read(ctx, x.rank());
  ResizePlan plan =
      plan_resize(ctx, a, x.shape(), [&](size_t i) -> const Tensor& { return ctx.input(i); });

  std::vector<double> data = x.to_double_vector();
  Shape shape = x.shape();
  for (int64_t axis : a.axes) {
    if (!resamples_axis(a, plan, shape, axis)) continue;
    AxisSampling s = sample_axis(a, shape[axis], plan.output[axis], plan.scales[axis],
                                 plan.roi_start[axis], plan.roi_end[axis]);
    data = resample_axis(data, shape, axis, plan.output[axis], s, a.extrapolation_value);
  }
  Tensor y = ctx.make_output(0);
  visit_dtype(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) store_resized<T>(data, y);
  });
  return {std::move(y)};
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  // Resize gathers from data-dependent positions; it fuses with nothing.
  registry.add({.name = "Resize",
                .min_opset = 10,
                .max_inputs = 4,
                .fusion = FusionKind::opaque,
                .shape_rule = resize_shape,
                .kernel = resize_kernel,
                .compute = resize_compute});
  registry.add({.name = "Upsample",
                .min_opset = 7,
                .max_opset = 9,
                .max_inputs = 2,
                .fusion = FusionKind::opaque,
                .shape_rule = resize_shape,
                .kernel = resize_kernel,
                .compute = resize_compute});
}

}  // namespace minic
