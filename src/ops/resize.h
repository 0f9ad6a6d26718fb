// Resize's attributes and its one-axis sampling rule, shared by resize.cpp (the op),
// resize_coordinates.cpp (where each output position samples the input) and
// resize_compute.cpp (the same as a compute rule).
//
// Course module 2. Resize is separable: resizing an N-d tensor is a 1-d resampling along
// each resized axis in turn. Along one axis, output position x maps back to a real input
// coordinate x_original (the coordinate transformation mode), and the output is a
// weighted sum of a few input elements near it (the mode: nearest, linear or cubic).
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#pragma once

#include "minic/ops/compute.h"
#include "minic/ops/op.h"

#include <functional>
#include <vector>

namespace minic {

enum class ResizeMode { nearest, linear, cubic };

enum class NearestMode { round_prefer_floor, round_prefer_ceil, floor, ceil, simple };

enum class CoordinateMode {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize,
};

enum class AspectRatioPolicy { stretch, not_larger, not_smaller };

struct ResizeAttributes {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateMode coordinates = CoordinateMode::half_pixel;
  NearestMode nearest = NearestMode::round_prefer_floor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  bool antialias = false;
  AspectRatioPolicy aspect_ratio = AspectRatioPolicy::stretch;
  Shape axes;  // the resized axes, in order, normalised into [0, rank)

  // Reads Resize's (or Upsample's) attributes for an input of rank `rank`, with the
  // defaults of the node's opset. Errors name the node.
  static ResizeAttributes read(const NodeContext& ctx, int64_t rank);
};

// The per-axis outcome of reading scales or sizes: every axis of the input has an entry
// (scale 1 and the whole of [0, 1] as crop where not resized).
struct ResizePlan {
  Shape output;
  std::vector<double> scales;
  std::vector<double> roi_start;
  std::vector<double> roi_end;
};

// The value of the node's input `index` (roi, scales or sizes).
using ResizeInputValue = std::function<const Tensor&(size_t index)>;

// The output size, scales and crop of a Resize or Upsample node on an input of shape
// `input`; value_of is asked only for inputs that are present. Errors name the node.
ResizePlan plan_resize(const NodeContext& ctx, const ResizeAttributes& a, const Shape& input,
                       const ResizeInputValue& value_of);

// False for an axis that keeps its size at scale 1 (and, for tf_crop_and_resize, its whole
// extent as crop): the kernel copies it unchanged instead of resampling it.
bool resamples_axis(const ResizeAttributes& a, const ResizePlan& plan, const Shape& input,
                    int64_t axis);

// How one axis is resampled: output position j is
//   sum over t < taps of weight[j * taps + t] * input[index[j * taps + t]],
// or extrapolation_value where extrapolated[j] (tf_crop_and_resize outside the crop).
struct AxisSampling {
  int64_t taps = 1;
  std::vector<int64_t> index;  // clamped into [0, input)
  std::vector<double> weight;
  std::vector<bool> extrapolated;
};

// The sampling of an axis of extent `input` resized to `output` by `scale`; roi_start and
// roi_end are the crop, in input coordinates normalised to [0, 1], that
// tf_crop_and_resize reads.
AxisSampling sample_axis(const ResizeAttributes& a, int64_t input, int64_t output, double scale,
                         double roi_start, double roi_end);

// The compute rule of Resize and Upsample (resize_compute.cpp).
std::vector<ComputeTensor> resize_compute(const ComputeContext& ctx);

}  // namespace minic
