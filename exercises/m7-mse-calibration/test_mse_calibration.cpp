// The Catch2 tests of exercise m7-mse-calibration (test.test runs them with lit, the seed of
// the hidden data given by --rng-seed).
//
// Samples like a calibration run's, drawn from the seed: a normal distribution, a ReLU's
// output (half of it zeros, the rest the positive half of a heavy-tailed distribution), a
// uniform one and a constant one. The method made by name ("mse") must give a range of
// finite ends, low <= high, no wider than the extremes (with 0), whose uint8 quantisation
// has a mean squared error no larger than the least of the 100 shrunk ranges the README
// names, as the test computes it; on the normal distribution that is below minmax's.
#include "minic/quantize/calibration.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace minic;

namespace {

double mean_squared_error(const std::vector<float>& samples, std::pair<double, double> range) {
  const ActivationParameters p = uint8_parameters(range.first, range.second);
  const double zero = static_cast<double>(p.zero_point);
  double sum = 0;
  for (float x : samples) {
    const double q = std::clamp(std::nearbyint(x / p.scale) + zero, 0.0, 255.0);
    const double d = (q - zero) * p.scale - x;
    sum += d * d;
  }
  return sum / static_cast<double>(samples.size());
}

// The least error of the README's candidates: [f min, f max], f = 1/100 ... 1.
double best_shrunk_error(const std::vector<float>& samples, double low, double high) {
  double best = std::numeric_limits<double>::infinity();
  for (int step = 1; step <= 100; ++step) {
    const double f = step / 100.0;
    best = std::min(best, mean_squared_error(samples, {f * low, f * high}));
  }
  return best;
}

std::pair<double, double> choose(const std::vector<float>& samples) {
  const CalibrationInfo* method = CalibrationRegistry::find("mse");
  REQUIRE(method != nullptr);
  auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  ObservedValues values{*low, *high, samples};
  return method->choose(values, QuantizeOptions{});
}

// Checks the range chosen for `samples` and returns its error over minmax's.
double check_range(const std::vector<float>& samples) {
  auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  const std::pair<double, double> range = choose(samples);
  INFO("chosen [" << range.first << ", " << range.second << "] of extremes [" << *low
                  << ", " << *high << "]");
  REQUIRE(std::isfinite(range.first));
  REQUIRE(std::isfinite(range.second));
  REQUIRE(range.first <= range.second);
  CHECK(range.first >= std::min<double>(*low, 0));
  CHECK(range.second <= std::max<double>(*high, 0));
  const double error = mean_squared_error(samples, range);
  const double best = best_shrunk_error(samples, *low, *high);
  INFO("its mean squared error " << error << ", the best shrunk range's " << best);
  CHECK(error <= best * (1 + 1e-9));
  return error / mean_squared_error(samples, {*low, *high});
}

}  // namespace

TEST_CASE("mse clips the tails of a normal distribution", "[m7-mse-calibration]") {
  std::mt19937_64 rng(Catch::rngSeed());
  const float mean = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
  const float deviation = std::uniform_real_distribution<float>(0.5f, 2)(rng);
  std::normal_distribution<float> normal(mean, deviation);
  std::vector<float> samples(20000);
  for (float& x : samples) x = normal(rng);
  // The few values beyond about 4 deviations cost less clipped than the finer steps gain.
  CHECK(check_range(samples) < 0.99);
}

TEST_CASE("mse keeps ReLU's zeros exact", "[m7-mse-calibration]") {
  std::mt19937_64 rng(Catch::rngSeed() + 1);
  std::student_t_distribution<float> heavy(3.0f);
  std::vector<float> samples(20000);
  for (float& x : samples) x = std::max(0.0f, heavy(rng));
  const std::pair<double, double> range = choose(samples);
  CHECK(range.first == 0.0);
  check_range(samples);
}

TEST_CASE("mse keeps nearly all of a uniform distribution", "[m7-mse-calibration]") {
  std::mt19937_64 rng(Catch::rngSeed() + 2);
  const float width = std::uniform_real_distribution<float>(0.1f, 10)(rng);
  std::uniform_real_distribution<float> uniform(-width, 2 * width);
  std::vector<float> samples(20000);
  for (float& x : samples) x = uniform(rng);
  check_range(samples);
  const std::pair<double, double> range = choose(samples);
  CHECK(range.second - range.first > 0.9 * 3 * width);
}

TEST_CASE("mse gives a constant its value", "[m7-mse-calibration]") {
  std::vector<float> samples(100, 2.5f);
  check_range(samples);
}
