// The ranges of activations over calibration runs, and the parameters chosen from them and
// from the weights (calibrate.h). Course module 7.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "calibrate.h"

#include "minic/support/error.h"

#include <algorithm>
#include <cmath>

namespace minic {

namespace {

// round(value / scale) + zero, clamped to [low, high], then dequantised.
double round_trip(double value, double scale, int64_t zero, int64_t low, int64_t high) {
  double q = std::nearbyint(value / scale) + static_cast<double>(zero);
  q = std::clamp(q, static_cast<double>(low), static_cast<double>(high));
  return (q - static_cast<double>(zero)) * scale;
}

// sqrt(sum of squared differences / sum of squares), 0 for an all-zero reference.
double relative_rms(double squared_error, double squared_values) {
  return squared_values > 0 ? std::sqrt(squared_error / squared_values) : 0.0;
}

}  // namespace

void RangeObserver::observe(const Tensor& values) {
  // float32 as it is (an activation of the calibration run); anything else converted.
  Tensor converted;
  if (values.dtype() != DType::f32) converted = values.cast(DType::f32);
  auto data = (values.dtype() == DType::f32 ? values : converted).values<float>();
  if (data.empty()) return;
  auto [low, high] = std::minmax_element(data.begin(), data.end());
  min_ = seen_ ? std::min(min_, static_cast<double>(*low)) : *low;
  max_ = seen_ ? std::max(max_, static_cast<double>(*high)) : *high;
  seen_ = true;
  const size_t stride = std::max<size_t>(1, data.size() / kSamplesPerRun);
  for (size_t i = 0; i < data.size(); i += stride) samples_.push_back(data[i]);
}

std::pair<double, double> RangeObserver::range(const QuantizeOptions& options) const {
  if (samples_.empty()) return {min_, max_};
  check_calibration_method(options.method);
  auto [low, high] = CalibrationRegistry::find(options.method)->choose(values(), options);
  if (!std::isfinite(low) || !std::isfinite(high) || low > high) {
    fail("calibration method '{}' chose the range [{}, {}] for values in [{}, {}]; a range "
         "is two finite numbers, low <= high", options.method, low, high, min_, max_);
  }
  return {low, high};
}

double RangeObserver::relative_error(double scale, int64_t zero_point) const {
  double error = 0;
  double total = 0;
  for (float x : samples_) {
    double d = round_trip(x, scale, zero_point, 0, 255) - x;
    error += d * d;
    total += static_cast<double>(x) * x;
  }
  return relative_rms(error, total);
}

ActivationParameters uint8_parameters(double low, double high) {
  low = std::min(low, 0.0);
  high = std::max(high, 0.0);
  ActivationParameters p;
  // float32, as the model stores it: the zero point is chosen for the stored scale.
  p.scale = static_cast<float>(high > low ? (high - low) / 255.0 : 1.0);
  p.zero_point = std::clamp<int64_t>(std::llround(-low / p.scale), 0, 255);
  return p;
}

QuantizedWeights quantize_weights(const Tensor& weights, int64_t axis) {
  const Shape& shape = weights.shape();
  const int64_t channels = axis < 0 ? 1 : shape[axis];
  // Elements come in runs of `inner` sharing a channel; the channels repeat.
  const int64_t inner = axis < 0 ? weights.num_elements()
                                 : num_elements(Shape(shape.begin() + axis + 1, shape.end()));
  auto channel_of = [&](int64_t i) { return axis < 0 ? 0 : (i / inner) % channels; };
  std::vector<double> values = weights.to_double_vector();
  QuantizedWeights q;
  q.scales.assign(static_cast<size_t>(channels), 0.0);
  for (size_t i = 0; i < values.size(); ++i) {
    double& scale = q.scales[channel_of(static_cast<int64_t>(i))];
    scale = std::max(scale, std::fabs(values[i]));
  }
  for (double& scale : q.scales) scale = static_cast<float>(scale > 0 ? scale / 127.0 : 1.0);
  std::vector<double> integers(values.size());
  double error = 0;
  double total = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const double scale = q.scales[channel_of(static_cast<int64_t>(i))];
    integers[i] = std::clamp(std::nearbyint(values[i] / scale), -127.0, 127.0);
    const double d = integers[i] * scale - values[i];
    error += d * d;
    total += values[i] * values[i];
  }
  q.values = Tensor::from_vector<double>(shape, integers).cast(DType::i8);
  q.relative_error = relative_rms(error, total);
  return q;
}

}  // namespace minic
