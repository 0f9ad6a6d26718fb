// A Gaussian process: the surrogate of the Bayesian search (bayesian_search.h).
//
// Course module 5. A cost model gives each candidate one number, its predicted speed. A
// Gaussian process gives two: a mean and a variance, how sure it is. Near points it has
// measured the variance is small; far from them it is large. An acquisition function
// (here expected improvement) uses both, and so measures next either where the mean is
// high (exploitation) or where little is known (exploration).
//
// The model is the textbook one (Rasmussen and Williams, "Gaussian Processes for Machine
// Learning", algorithm 2.1):
//   - values y are standardised (mean 0, standard deviation 1), so that the prior's
//     variance can be 1;
//   - the covariance of two points is the squared-exponential (RBF) kernel
//     k(a, b) = exp(-|a - b|^2 / (2 l^2)), plus a noise variance on the diagonal (timings
//     are noisy, and a little noise keeps the matrix well conditioned);
//   - fitting solves K = L L^T (Cholesky) and alpha = K^-1 y once; a prediction at x is
//     then mean = k(x)^T alpha and variance = 1 - |L^-1 k(x)|^2;
//   - the length scale l is the one of a few candidates with the highest marginal
//     likelihood log p(y | X, l) = -y^T alpha / 2 - sum(log L_ii) - n log(2 pi) / 2.
//
//   GaussianProcess gp;
//   gp.fit({{0.0}, {0.5}, {1.0}}, {1.0, 3.0, 2.0});
//   GpPrediction p = gp.predict({0.25});      // p.mean between 1 and 3, p.variance > 0
//   double ei = expected_improvement(p, 3.0);
//
// Chapter: docs/module5-autotuning.md#bayesian-search
#pragma once

#include <optional>
#include <vector>

namespace minic::autotune {

struct GpPrediction {
  double mean = 0;      // in the units of the fitted y
  double variance = 0;  // of the function's value (the noise not included)
};

class GaussianProcess {
 public:
  // Fits the points `x` (rows of one length, at least one row) with values `y`. Without
  // `length_scale`, the one with the highest marginal likelihood among a few multiples of
  // the dimension's square root is chosen; with it, that one is used.
  void fit(std::vector<std::vector<double>> x, std::vector<double> y,
           std::optional<double> length_scale = std::nullopt);

  // The prediction at `x` (fit first).
  GpPrediction predict(const std::vector<double>& x) const;

  double length_scale() const { return length_scale_; }
  // The noise variance on the diagonal, in standardised units.
  static constexpr double kNoise = 1e-2;

 private:
  std::vector<std::vector<double>> x_;
  double y_mean_ = 0;
  double y_scale_ = 1;
  double length_scale_ = 1;
  std::vector<std::vector<double>> chol_;  // L, lower triangular
  std::vector<double> alpha_;              // K^-1 (standardised y)
};

// The expected improvement of `prediction` over `best` (higher values are better):
// E[max(f - best, 0)] for f ~ N(mean, variance), which is
// (mean - best) Phi(z) + sigma phi(z) with z = (mean - best) / sigma.
double expected_improvement(const GpPrediction& prediction, double best);

}  // namespace minic::autotune
