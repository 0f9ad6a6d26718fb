// The ranges of activations over calibration runs, and the parameters chosen from them and
// from the weights (calibrate.h). Course module 7.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "calibrate.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

double entropy_threshold(const std::vector<float>& samples, int levels) {
  double largest = 0;
  for (float x : samples) largest = std::max(largest, std::fabs(static_cast<double>(x)));
  if (largest == 0) return 0;
  const double width = largest / kEntropyBins;
  std::vector<double> histogram(kEntropyBins, 0.0);
  for (float x : samples) {
    int bin = static_cast<int>(std::fabs(static_cast<double>(x)) / width);
    histogram[std::min(bin, kEntropyBins - 1)] += 1;
  }
  double best_divergence = std::numeric_limits<double>::infinity();
  int best = kEntropyBins;
  for (int end = levels; end <= kEntropyBins; ++end) {
    // P: the bins below `end`, the ones above folded into the last.
    std::vector<double> p(histogram.begin(), histogram.begin() + end);
    for (int k = end; k < kEntropyBins; ++k) p[end - 1] += histogram[k];
    // Q: the bins below `end` squeezed into `levels` levels and spread back.
    std::vector<double> q(static_cast<size_t>(end), 0.0);
    const double per_level = static_cast<double>(end) / levels;
    for (int level = 0; level < levels; ++level) {
      const int first = static_cast<int>(level * per_level);
      const int last = level + 1 == levels ? end : static_cast<int>((level + 1) * per_level);
      double total = 0;
      int nonzero = 0;
      for (int k = first; k < last; ++k) {
        total += histogram[k];
        nonzero += histogram[k] > 0 ? 1 : 0;
      }
      for (int k = first; k < last; ++k) q[k] = histogram[k] > 0 ? total / nonzero : 0;
    }
    double p_total = 0, q_total = 0;
    for (int k = 0; k < end; ++k) {
      p_total += p[k];
      q_total += q[k];
    }
    double divergence = 0;
    for (int k = 0; k < end; ++k) {
      if (p[k] == 0) continue;
      // A bin Q has no mass in (the folded outliers) costs as if it had a tiny share.
      const double q_k = q[k] > 0 ? q[k] / q_total : 1e-12;
      divergence += p[k] / p_total * std::log(p[k] / p_total / q_k);
    }
    if (divergence < best_divergence) {
      best_divergence = divergence;
      best = end;
    }
  }
  return best * width;
}

std::pair<double, double> RangeObserver::range(CalibrationMethod method,
                                               double percentile) const {
  if (method == CalibrationMethod::minmax || samples_.empty()) return {min_, max_};
  if (method == CalibrationMethod::entropy) {
    // uint8 covers [0, t] in 256 levels, [-t, t] in 128 a side.
    const double threshold = entropy_threshold(samples_, min_ >= 0 ? 256 : 128);
    return {std::max(min_, -threshold), std::min(max_, threshold)};
  }
  std::vector<float> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const double last = static_cast<double>(sorted.size() - 1);
  auto at = [&](double fraction) {
    return static_cast<double>(sorted[static_cast<size_t>(std::lround(fraction * last))]);
  };
  return {at(1.0 - percentile / 100.0), at(percentile / 100.0)};
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
