// Resize along one axis: where each output position samples the input, and with what
// weights. Course module 2.
//
// 1. The coordinate transformation maps output index x to a real input coordinate
//    x_original; with scale = output/input as a real number (the `scales` input, or the
//    requested size divided by the input size):
//      half_pixel            (x + 0.5) / scale - 0.5
//      half_pixel_symmetric  the same, shifted so the centres of input and output align
//                            when the output size was rounded
//      pytorch_half_pixel    half_pixel, but 0 -> -0.5 when the output has one element
//      align_corners         x * (input - 1) / (input * scale - 1): first and last align
//      asymmetric            x / scale
//      tf_half_pixel_for_nn  (x + 0.5) / scale
//      tf_crop_and_resize    spreads the output over the crop [roi_start, roi_end] of the
//                            input; positions outside the input give extrapolation_value
// 2. The mode picks the input elements and weights:
//      nearest  the element x_original rounds to (nearest_mode says how halves round)
//      linear   the two elements around x_original, weighted by closeness
//      cubic    the four elements around it, weighted by Keys' cubic kernel with
//               coefficient A = cubic_coeff_a
//    Indices past either end repeat the edge element, unless exclude_outside = 1, which
//    gives them weight 0 and rescales the other weights to sum to 1. With antialias = 1, a
//    downsampling linear or cubic kernel is stretched by 1/scale so that it averages over
//    every input element the output covers.
//
// The formulas follow ONNX's reference implementation (onnx/reference/ops/op_resize.py),
// including its use of input * scale, not the rounded output size, in align_corners and
// tf_crop_and_resize.
//
// Chapter: docs/module2-graph-ir.md#4-ops-one-file-per-family-in-srcops
#include "resize.h"

#include <algorithm>
#include <cmath>

namespace minic {

namespace {

double original_coordinate(const ResizeAttributes& a, double x, int64_t input, int64_t output,
                           double scale, double roi_start, double roi_end) {
  const double in = static_cast<double>(input);
  const double out = in * scale;  // the real output length, before rounding
  switch (a.coordinates) {
    case CoordinateMode::half_pixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateMode::half_pixel_symmetric: {
      double adjustment = static_cast<double>(output) / out;
      double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case CoordinateMode::pytorch_half_pixel:
      return output > 1 ? (x + 0.5) / scale - 0.5 : -0.5;
    case CoordinateMode::align_corners:
      return out == 1 ? 0.0 : x * (in - 1) / (out - 1);
    case CoordinateMode::asymmetric:
      return x / scale;
    case CoordinateMode::tf_half_pixel_for_nn:
      return (x + 0.5) / scale;
    case CoordinateMode::tf_crop_and_resize: {
      double crop = (roi_end - roi_start) * (in - 1);
      double start = roi_start * (in - 1);
      return out == 1 ? start + crop / 2 : start + x * crop / (out - 1);
    }
  }
  return x;
}

// The input index nearest to x_original.
int64_t nearest_index(NearestMode mode, double x, double scale) {
  double below = std::floor(x);
  double fraction = x - below;
  switch (mode) {
    case NearestMode::round_prefer_floor:
      return static_cast<int64_t>(fraction <= 0.5 ? below : below + 1);
    case NearestMode::round_prefer_ceil:
      return static_cast<int64_t>(fraction < 0.5 ? below : below + 1);
    case NearestMode::floor:
      return static_cast<int64_t>(below);
    case NearestMode::ceil:
      return static_cast<int64_t>(std::ceil(x));
    case NearestMode::simple:
      // Resize-10 and Upsample, as ONNX Runtime reads them: floor when upsampling, ceil when
      // downsampling.
      return static_cast<int64_t>(scale < 1 ? std::ceil(x) : below);
  }
  return static_cast<int64_t>(below);
}

// The interpolation kernel at distance d (in input elements, already scaled for antialias).
double kernel_weight(ResizeMode mode, double d, double a) {
  d = std::abs(d);
  if (mode == ResizeMode::linear) return std::max(0.0, 1.0 - d);
  // Keys' cubic convolution kernel.
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0.0;
}

}  // namespace

AxisSampling sample_axis(const ResizeAttributes& a, int64_t input, int64_t output, double scale,
                         double roi_start, double roi_end) {
  AxisSampling s;
  s.extrapolated.assign(output, false);

  // Linear and cubic taps: the kernel spans 2 (linear) or 4 (cubic) input elements,
  // stretched by 1/scale when antialiasing a downsampling.
  const double stretch = a.antialias ? std::min(scale, 1.0) : 1.0;
  const double reach = a.mode == ResizeMode::cubic ? 2.0 : 1.0;
  const int64_t first_tap = static_cast<int64_t>(std::floor(-reach / stretch)) + 1;
  s.taps = a.mode == ResizeMode::nearest ? 1 : 2 - 2 * first_tap;

  for (int64_t j = 0; j < output; ++j) {
    double x = original_coordinate(a, static_cast<double>(j), input, output, scale, roi_start,
                                   roi_end);
    if (a.coordinates == CoordinateMode::tf_crop_and_resize &&
        (x < 0 || x > static_cast<double>(input - 1))) {
      s.extrapolated[j] = true;
    }
    if (a.mode == ResizeMode::nearest) {
      int64_t index = nearest_index(a.nearest, x, scale);
      s.index.push_back(std::clamp<int64_t>(index, 0, input - 1));
      s.weight.push_back(1.0);
      continue;
    }
    // x = base + ratio with ratio in (0, 1]: an x on an integer takes ratio 1, which puts
    // all the weight on the element the taps below call base + 1.
    const double base = std::ceil(x) - 1;
    const double ratio = x - base;
    std::vector<double> weights;
    std::vector<int64_t> indices;
    double total = 0;
    for (int64_t t = first_tap; t < first_tap + s.taps; ++t) {
      int64_t index = static_cast<int64_t>(base) + t;
      double weight = kernel_weight(a.mode, (static_cast<double>(t) - ratio) * stretch,
                                    a.cubic_coeff_a);
      if (a.exclude_outside && (index < 0 || index >= input)) weight = 0;
      indices.push_back(std::clamp<int64_t>(index, 0, input - 1));
      weights.push_back(weight);
      total += weight;
    }
    if ((a.antialias || a.exclude_outside) && total != 0) {
      for (double& weight : weights) weight /= total;
    }
    s.index.insert(s.index.end(), indices.begin(), indices.end());
    s.weight.insert(s.weight.end(), weights.begin(), weights.end());
  }
  return s;
}

}  // namespace minic
