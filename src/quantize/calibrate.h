// Internal to src/quantize: the ranges of activations over calibration runs, and the
// parameters chosen from them and from the weights. Course module 7.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#pragma once

#include "minic/quantize/quantize.h"
#include "minic/tensor/tensor.h"

#include <utility>
#include <vector>

namespace minic {

// What one activation took over the calibration runs: its smallest and largest value, and
// a sample of its values (every k-th, at most kSamplesPerRun a run) for the percentile
// method and for measuring the error of the parameters chosen.
class RangeObserver {
 public:
  static constexpr int64_t kSamplesPerRun = 1 << 16;

  void observe(const Tensor& values);
  // The range to quantise: [min, max], the `percentile` of the samples from each end, or
  // [min, max] clipped to the entropy threshold on each side (entropy_threshold).
  std::pair<double, double> range(CalibrationMethod method, double percentile) const;
  // RMS(dequantise(quantise(x)) - x) / RMS(x) over the samples, for uint8 with `scale`
  // and `zero_point`.
  double relative_error(double scale, int64_t zero_point) const;

 private:
  double min_ = 0;
  double max_ = 0;
  bool seen_ = false;
  std::vector<float> samples_;
};

// The entropy method's threshold for values `samples` whose magnitudes quantise to
// `levels` levels: a histogram of |x| in kEntropyBins bins; for each candidate threshold
// (a bin edge from `levels` bins on), P is the histogram below it with the bins above
// folded into its last, Q the same bins squeezed into `levels` levels and spread back (a
// level's count shared by the nonzero bins it covers); the threshold whose KL divergence
// sum P log(P / Q) is least wins.
inline constexpr int kEntropyBins = 2048;
double entropy_threshold(const std::vector<float>& samples, int levels);

// uint8 parameters for values in [low, high]: the range widened to hold 0 (so that 0, the
// padding and ReLU's zeros, is exact), scale = range / 255, zero point = round(-low / scale).
struct ActivationParameters {
  double scale = 1;
  int64_t zero_point = 0;
};
ActivationParameters uint8_parameters(double low, double high);

// int8 weights, symmetric: scale = max |w| / 127 for each index along `axis` (-1: one
// for the whole tensor), values round(w / scale) in [-127, 127].
struct QuantizedWeights {
  Tensor values;               // i8, w's shape
  std::vector<double> scales;  // one, or w.shape()[axis]
  double relative_error = 0;   // RMS(dequantised - w) / RMS(w)
};
QuantizedWeights quantize_weights(const Tensor& weights, int64_t axis);

}  // namespace minic
