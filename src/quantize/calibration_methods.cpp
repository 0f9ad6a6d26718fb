// The calibration methods (calibration.h): the registry, and minmax, percentile and entropy.
// Course module 7.
//
// The map is a function-local static, built on first use, so that a registration object
// in any file may add to it during static initialisation, whatever order the files start
// in. The three built-in methods are put in when the map is built, not by registration
// objects: nothing refers to a symbol of this file's registrations, and the linker would
// be free to drop them from the static library.
//
// Chapter: docs/module7-quantisation.md#4-quantising-a-float-model-minic-quantize
#include "minic/quantize/calibration.h"

#include "minic/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

namespace minic {

double entropy_threshold(std::span<const float> samples, int levels) {
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

namespace {

// The extremes: nothing is clipped, and one outlier widens every step.
std::pair<double, double> minmax_range(const ObservedValues& values, const QuantizeOptions&) {
  return {values.min, values.max};
}

// The values at `options.percentile` from each end of the sample: a few outliers no
// longer stretch the range that every other value loses resolution to.
std::pair<double, double> percentile_range(const ObservedValues& values,
                                           const QuantizeOptions& options) {
  std::vector<float> sorted(values.samples.begin(), values.samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double last = static_cast<double>(sorted.size() - 1);
  auto at = [&](double fraction) {
    return static_cast<double>(sorted[static_cast<size_t>(std::lround(fraction * last))]);
  };
  return {at(1.0 - options.percentile / 100.0), at(options.percentile / 100.0)};
}

// The extremes clipped to the entropy threshold on each side. Exact zeros are left out of
// the histogram: every range holds 0 exactly (uint8_parameters), so they lose nothing
// whatever the threshold, and a ReLU's half of zeros, all in the first bin, would make
// the first level's spreading the whole divergence and push the threshold down.
std::pair<double, double> entropy_range(const ObservedValues& values, const QuantizeOptions&) {
  std::vector<float> nonzero;
  std::copy_if(values.samples.begin(), values.samples.end(), std::back_inserter(nonzero),
               [](float x) { return x != 0.0f; });
  if (nonzero.empty()) return {values.min, values.max};
  // uint8 covers [0, t] in 256 levels, [-t, t] in 128 a side.
  const double threshold = entropy_threshold(nonzero, values.min >= 0 ? 256 : 128);
  return {std::max(values.min, -threshold), std::min(values.max, threshold)};
}

std::map<std::string, CalibrationInfo, std::less<>>& registry() {
  static std::map<std::string, CalibrationInfo, std::less<>> methods = {
      {"minmax", {"minmax", "the values' extremes, the default", minmax_range}},
      {"percentile",
       {"percentile", "--percentile of the values from each end", percentile_range}},
      {"entropy",
       {"entropy", "the clipping threshold of least KL divergence, as TensorRT's",
        entropy_range}}};
  return methods;
}

}  // namespace

void CalibrationRegistry::add(std::string name, CalibrationFn choose, std::string summary) {
  MINIC_CHECK(!registry().count(name));
  std::string key = name;
  registry().emplace(std::move(key),
                     CalibrationInfo{std::move(name), std::move(summary), std::move(choose)});
}

const CalibrationInfo* CalibrationRegistry::find(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<const CalibrationInfo*> CalibrationRegistry::all() {
  std::vector<const CalibrationInfo*> methods;
  for (const auto& [name, info] : registry()) methods.push_back(&info);
  return methods;
}

void check_calibration_method(std::string_view name) {
  if (CalibrationRegistry::find(name)) return;
  std::vector<std::string> names;
  for (const CalibrationInfo* known : CalibrationRegistry::all()) names.push_back(known->name);
  fail("no calibration method '{}' (there are: {})", name, fmt::join(names, ", "));
}

RegisterCalibration::RegisterCalibration(const char* name, CalibrationFn choose,
                                         const char* summary) {
  CalibrationRegistry::add(name, std::move(choose), summary);
}

}  // namespace minic
