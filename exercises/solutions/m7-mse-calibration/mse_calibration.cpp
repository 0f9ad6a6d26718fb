// Exercise m7-mse-calibration, solved: the calibration method "mse", the clipping range of
// least squared error (README.md in exercises/m7-mse-calibration says what it must do).
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "minic/quantize/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace minic {
namespace {

constexpr int kSteps = 100;

// The mean of (dequantise(quantise(x)) - x)^2 over the samples, uint8 with the parameters
// of [low, high].
double mean_squared_error(std::span<const float> samples, double low, double high) {
  const ActivationParameters p = uint8_parameters(low, high);
  const double zero = static_cast<double>(p.zero_point);
  double sum = 0;
  for (float x : samples) {
    const double q = std::clamp(std::nearbyint(x / p.scale) + zero, 0.0, 255.0);
    const double d = (q - zero) * p.scale - x;
    sum += d * d;
  }
  return sum / static_cast<double>(samples.size());
}

// Of [f min, f max] for f = 1/100 ... 100/100, the range of least error; the widest of
// equals. Narrower ranges round more finely and clip more: the error first falls as f
// falls from 1 (the outliers' clipping costs little while they are few), then rises.
std::pair<double, double> choose_mse_range(const ObservedValues& values,
                                           const QuantizeOptions&) {
  std::pair<double, double> best = {values.min, values.max};
  double best_error = std::numeric_limits<double>::infinity();
  for (int step = kSteps; step >= 1; --step) {
    const double f = static_cast<double>(step) / kSteps;
    const double error = mean_squared_error(values.samples, f * values.min, f * values.max);
    if (error < best_error) {
      best_error = error;
      best = {f * values.min, f * values.max};
    }
  }
  return best;
}

}  // namespace

MINIC_REGISTER_CALIBRATION("mse", choose_mse_range,
                           "the clipping range of least squared error, exercise "
                           "m7-mse-calibration");

}  // namespace minic
