// Internal to src/quantize: the ranges of activations over calibration runs, and the
// parameters chosen from them and from the weights. Course module 7.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#pragma once

#include "minic/quantize/calibration.h"
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
  // What was observed, for a calibration method.
  ObservedValues values() const { return {min_, max_, samples_}; }
  // The range to quantise to: what options.method (calibration.h) chooses from values(),
  // or [min, max] when nothing was observed. Throws Error for a method that does not
  // exist or gives no range.
  std::pair<double, double> range(const QuantizeOptions& options) const;
  // RMS(dequantise(quantise(x)) - x) / RMS(x) over the samples, for uint8 with `scale`
  // and `zero_point`.
  double relative_error(double scale, int64_t zero_point) const;

 private:
  double min_ = 0;
  double max_ = 0;
  bool seen_ = false;
  std::vector<float> samples_;
};

// int8 weights, symmetric: scale = max |w| / 127 for each index along `axis` (-1: one
// for the whole tensor), values round(w / scale) in [-127, 127].
struct QuantizedWeights {
  Tensor values;               // i8, w's shape
  std::vector<double> scales;  // one, or w.shape()[axis]
  double relative_error = 0;   // RMS(dequantised - w) / RMS(w)
};
QuantizedWeights quantize_weights(const Tensor& weights, int64_t axis);

}  // namespace minic
