// Calibration methods by name, for `minic quantize --method NAME`. Course module 7.
//
// A calibration method chooses the range an activation is quantised to from the values it
// took on the calibration runs: their extremes and a sample of them (ObservedValues). The
// range becomes uint8 parameters (scale = range / 255, the range widened to hold 0), so
// every value outside it is clipped to its ends and every value inside is rounded to one of
// 256 steps: a wider range clips less and rounds more coarsely.
//
// Three are built in (src/quantize/calibration_methods.cpp): "minmax", "percentile" and
// "entropy". Another registers itself with one line at the end of its own file:
//
//   MINIC_REGISTER_CALIBRATION("mse", choose_mse_range,
//                              "the clipping range of least squared error");
//
// where choose_mse_range has the type CalibrationFn. The exercises' code (exercises/) is
// linked into minic whole, so the registration is kept.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#pragma once

#include "minic/quantize/quantize.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minic {

// What one activation took over the calibration runs: its smallest and largest value, and
// a sample of its values (every k-th of each run, at most RangeObserver::kSamplesPerRun a
// run; never empty).
struct ObservedValues {
  double min = 0;
  double max = 0;
  std::span<const float> samples;
};

// The uint8 parameters of the range [low, high], as quantize_graph makes them: the range
// widened to hold 0 (so that 0, the padding and ReLU's zeros, is exact), scale = range /
// 255, zero point = round(-low / scale).
struct ActivationParameters {
  double scale = 1;
  int64_t zero_point = 0;
};
ActivationParameters uint8_parameters(double low, double high);

// The range [low, high] to quantise to, low <= high, both finite.
using CalibrationFn =
    std::function<std::pair<double, double>(const ObservedValues& values,
                                            const QuantizeOptions& options)>;

struct CalibrationInfo {
  std::string name;
  std::string summary;  // one line, shown by `minic quantize --help`
  CalibrationFn choose;
};

class CalibrationRegistry {
 public:
  // Registers a method; a name used twice is an internal error.
  static void add(std::string name, CalibrationFn choose, std::string summary);
  // The method named `name`, or null.
  static const CalibrationInfo* find(std::string_view name);
  // Every method, sorted by name.
  static std::vector<const CalibrationInfo*> all();
};

// Throws Error naming the methods there are when none is called `name`.
void check_calibration_method(std::string_view name);

// What MINIC_REGISTER_CALIBRATION makes: an object that registers a method when it is built.
struct RegisterCalibration {
  RegisterCalibration(const char* name, CalibrationFn choose, const char* summary);
};

// The entropy method's threshold for values `samples` whose magnitudes quantise to
// `levels` levels: a histogram of |x| in kEntropyBins bins; for each candidate threshold
// (a bin edge from `levels` bins on), P is the histogram below it with the bins above
// folded into its last, Q the same bins squeezed into `levels` levels and spread back (a
// level's count shared by the nonzero bins it covers); the threshold whose KL divergence
// sum P log(P / Q) is least wins.
inline constexpr int kEntropyBins = 2048;
double entropy_threshold(std::span<const float> samples, int levels);

}  // namespace minic

#define MINIC_CALIBRATION_CONCAT_INNER(a, b) a##b
#define MINIC_CALIBRATION_CONCAT(a, b) MINIC_CALIBRATION_CONCAT_INNER(a, b)

// Registers the calibration method `choose` (a CalibrationFn) under `name`.
#define MINIC_REGISTER_CALIBRATION(name, choose, summary)                        \
  static const ::minic::RegisterCalibration MINIC_CALIBRATION_CONCAT(            \
      minic_calibration_, __LINE__)(name, choose, summary)
