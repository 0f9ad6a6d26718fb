// Tests of the Bayesian search's parts (course module 5): the Gaussian process interpolates
// what it was fitted to, is unsure far from it, and prefers a long length scale for a
// smooth function and a short one for a rough one; expected improvement agrees with the
// integral it stands for, computed numerically; points are encoded in the unit cube, a
// knob's coordinates moving only when the knob does; and on a made-up objective the
// Bayesian search finds better points than random ones in the same number of trials.
#include "minic/autotune/bayesian_search.h"

#include "minic/autotune/search_registry.h"
#include "schedule_blocks_util.h"
#include "schedule_kernels.h"
#include "target_test_util.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

using namespace minic;
using namespace minic::autotune;

namespace {

SearchSpace gemm_space() {
  return SearchSpace(schedule::test::parse_func(schedule::test::kGemm64Kernel),
                     testing::avx512());
}

// E[max(f - best, 0)] for f ~ N(mean, sigma^2), by the trapezoid rule over +-10 sigma.
double improvement_integral(double mean, double sigma, double best) {
  constexpr int kSteps = 200000;
  double low = mean - 10 * sigma, step = 20 * sigma / kSteps, sum = 0;
  for (int i = 0; i <= kSteps; ++i) {
    double f = low + i * step;
    double density = std::exp(-0.5 * (f - mean) * (f - mean) / (sigma * sigma)) /
                     (sigma * std::sqrt(2 * std::numbers::pi));
    double weight = (i == 0 || i == kSteps) ? 0.5 : 1.0;
    sum += weight * std::max(f - best, 0.0) * density * step;
  }
  return sum;
}

// The best score found by `search` in `rounds` rounds of `count` proposals, each scored by
// `objective` (the default point measured first, as the tuner does).
template <typename Objective>
double best_found(Search& search, const SearchSpace& space, int rounds, int count,
                  Objective objective) {
  std::unique_ptr<CostModel> model = make_cost_model("random", /*seed=*/5);
  double best = objective(space.default_point());
  search.add_measured(space.default_point(),
                      evaluate_point(space, space.default_point()).trace_text, best);
  for (int round = 0; round < rounds; ++round) {
    for (const Proposal& proposal : search.propose(*model, count)) {
      double score = objective(proposal.decisions);
      best = std::max(best, score);
      search.add_measured(proposal.decisions, proposal.trace_text, score);
    }
  }
  return best;
}

}  // namespace

TEST_CASE("the Gaussian process interpolates its points and is unsure away from them") {
  std::vector<std::vector<double>> x = {{0.0}, {0.25}, {0.5}, {0.75}, {1.0}};
  std::vector<double> y = {2.0, 3.0, 5.0, 4.0, 1.0};
  GaussianProcess process;
  process.fit(x, y);
  for (size_t i = 0; i < x.size(); ++i) {
    GpPrediction at_point = process.predict(x[i]);
    CHECK(at_point.mean == Approx(y[i]).margin(0.15));
    CHECK(at_point.variance < 0.05);
  }
  // Far from every point: the prior, the values' mean and variance.
  GpPrediction far = process.predict({50.0});
  CHECK(far.mean == Approx(3.0).margin(1e-6));
  CHECK(far.variance == Approx(2.0).margin(1e-6));  // the population variance of y
  // Between points the variance is above the points' own.
  CHECK(process.predict({0.125}).variance > process.predict({0.0}).variance);
}

TEST_CASE("the Gaussian process chooses a long length scale for smooth data") {
  std::vector<std::vector<double>> x;
  std::vector<double> smooth, rough;
  for (int i = 0; i <= 20; ++i) {
    double t = i / 20.0;
    x.push_back({t});
    smooth.push_back(std::sin(2 * t));
    rough.push_back(i % 2 == 0 ? 1.0 : -1.0);
  }
  GaussianProcess smooth_fit, rough_fit;
  smooth_fit.fit(x, smooth);
  rough_fit.fit(x, rough);
  CHECK(smooth_fit.length_scale() > 4 * rough_fit.length_scale());
  // A given length scale is used as it is.
  GaussianProcess fixed;
  fixed.fit(x, smooth, 0.3);
  CHECK(fixed.length_scale() == 0.3);
}

TEST_CASE("expected improvement is the integral it stands for") {
  for (auto [mean, variance, best] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{0.0, 0.25, 1.0},
                                      std::tuple{2.0, 4.0, 0.5}, std::tuple{-3.0, 0.01, -2.0}}) {
    INFO("mean " << mean << " variance " << variance << " best " << best);
    CHECK(expected_improvement({mean, variance}, best) ==
          Approx(improvement_integral(mean, std::sqrt(variance), best))
              .epsilon(1e-6)
              .margin(1e-12));
  }
  // Certain predictions: the gain itself, or nothing.
  CHECK(expected_improvement({3.0, 0.0}, 1.0) == 2.0);
  CHECK(expected_improvement({0.0, 0.0}, 1.0) == 0.0);
}

TEST_CASE("points are encoded in the unit cube, a knob moving only its coordinates") {
  SearchSpace space = gemm_space();
  PointEncoder encode(space);
  REQUIRE(encode.dimension() > 3);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    std::vector<double> x = encode(space.sample(rng));
    REQUIRE(x.size() == encode.dimension());
    for (double coordinate : x) CHECK((coordinate >= 0 && coordinate <= 1));
  }
  // The default point and the same point packing otherwise differ in one coordinate by 1.
  Decisions packed = space.default_point();
  REQUIRE(packed.count("C.pack"));
  packed["C.pack"] = {1 - packed["C.pack"][0]};
  if (space.contains(packed)) {
    std::vector<double> a = encode(space.default_point()), b = encode(packed);
    int differing = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) {
        ++differing;
        CHECK(std::abs(a[i] - b[i]) == 1.0);
      }
    }
    CHECK(differing == 1);
  }
}

TEST_CASE("on a smooth objective the Bayesian search beats random points at equal trials") {
  SearchSpace space = gemm_space();
  PointEncoder encode(space);
  // The score falls with the distance from a hidden point of the space.
  std::mt19937_64 rng(23);
  std::vector<double> target = encode(space.sample(rng));
  auto objective = [&](const Decisions& point) {
    std::vector<double> x = encode(point);
    double distance = 0;
    for (size_t i = 0; i < x.size(); ++i) distance += (x[i] - target[i]) * (x[i] - target[i]);
    return std::exp(-distance);
  };
  for (uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    std::unique_ptr<Search> bayesian = make_search("bayesian", space, seed);
    double found = best_found(*bayesian, space, 6, 4, objective);
    // Random points: the first 24 unmeasured ones of a random walk through the space.
    std::mt19937_64 draws(seed);
    double random_best = objective(space.default_point());
    for (int i = 0; i < 24; ++i) {
      random_best = std::max(random_best, objective(space.sample(draws)));
    }
    CHECK(found > random_best);
  }
}
