// Gaussian process regression with an RBF kernel (include/minic/autotune/gaussian_process.h).
// Course module 5.
//
// The linear algebra is a dense Cholesky factorisation and two triangular solves: the
// Bayesian search fits a few hundred points at most, so O(n^3) is milliseconds and no
// library is needed.
//
// Chapter: docs/module5-autotuning.md#bayesian-search
#include "minic/autotune/gaussian_process.h"

#include "minic/support/error.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

namespace minic::autotune {
namespace {

using Matrix = std::vector<std::vector<double>>;

// The length scales tried by fit(), as multiples of sqrt(dimension): a unit cube's
// points are about sqrt(dimension / 6) apart, so these run from "only close neighbours
// are alike" to "the function is smooth over the whole space".
constexpr double kScaleMultiples[] = {0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0};

double squared_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sum;
}

double rbf(const std::vector<double>& a, const std::vector<double>& b, double length_scale) {
  return std::exp(-squared_distance(a, b) / (2 * length_scale * length_scale));
}

// L with L L^T = `matrix` (symmetric positive definite; the noise on the diagonal keeps
// it so).
Matrix cholesky(const Matrix& matrix) {
  size_t n = matrix.size();
  Matrix lower(n, std::vector<double>(n, 0));
  for (size_t j = 0; j < n; ++j) {
    double diagonal = matrix[j][j];
    for (size_t k = 0; k < j; ++k) diagonal -= lower[j][k] * lower[j][k];
    MINIC_CHECK(diagonal > 0);
    lower[j][j] = std::sqrt(diagonal);
    for (size_t i = j + 1; i < n; ++i) {
      double sum = matrix[i][j];
      for (size_t k = 0; k < j; ++k) sum -= lower[i][k] * lower[j][k];
      lower[i][j] = sum / lower[j][j];
    }
  }
  return lower;
}

// v with L v = b.
std::vector<double> solve_lower(const Matrix& lower, std::vector<double> b) {
  for (size_t i = 0; i < b.size(); ++i) {
    for (size_t k = 0; k < i; ++k) b[i] -= lower[i][k] * b[k];
    b[i] /= lower[i][i];
  }
  return b;
}

// v with L^T v = b.
std::vector<double> solve_upper(const Matrix& lower, std::vector<double> b) {
  for (size_t i = b.size(); i-- > 0;) {
    for (size_t k = i + 1; k < b.size(); ++k) b[i] -= lower[k][i] * b[k];
    b[i] /= lower[i][i];
  }
  return b;
}

struct Fit {
  Matrix chol;
  std::vector<double> alpha;
  double log_likelihood = 0;
};

// Algorithm 2.1 of Rasmussen and Williams for one length scale.
Fit fit_with(const Matrix& x, const std::vector<double>& y, double length_scale) {
  size_t n = x.size();
  Matrix covariance(n, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      covariance[i][j] = covariance[j][i] = rbf(x[i], x[j], length_scale);
    }
    covariance[i][i] += GaussianProcess::kNoise;
  }
  Fit fit;
  fit.chol = cholesky(covariance);
  fit.alpha = solve_upper(fit.chol, solve_lower(fit.chol, y));
  double log_determinant_half = 0;
  for (size_t i = 0; i < n; ++i) log_determinant_half += std::log(fit.chol[i][i]);
  fit.log_likelihood = -0.5 * std::inner_product(y.begin(), y.end(), fit.alpha.begin(), 0.0) -
                       log_determinant_half -
                       0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
  return fit;
}

}  // namespace

void GaussianProcess::fit(std::vector<std::vector<double>> x, std::vector<double> y,
                          std::optional<double> length_scale) {
  MINIC_CHECK(!x.empty() && x.size() == y.size());
  for (const std::vector<double>& row : x) MINIC_CHECK(row.size() == x[0].size());

  // Standardise y: the prior's mean 0 and variance 1 then fit any range of values.
  double n = static_cast<double>(y.size());
  y_mean_ = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double variance = 0;
  for (double value : y) variance += (value - y_mean_) * (value - y_mean_);
  y_scale_ = variance > 0 ? std::sqrt(variance / n) : 1;
  for (double& value : y) value = (value - y_mean_) / y_scale_;

  Fit best;
  if (length_scale) {
    length_scale_ = *length_scale;
    best = fit_with(x, y, length_scale_);
  } else {
    best.log_likelihood = -std::numeric_limits<double>::infinity();
    double unit = std::sqrt(static_cast<double>(std::max<size_t>(x[0].size(), 1)));
    for (double multiple : kScaleMultiples) {
      Fit candidate = fit_with(x, y, multiple * unit);
      if (candidate.log_likelihood > best.log_likelihood) {
        best = std::move(candidate);
        length_scale_ = multiple * unit;
      }
    }
  }
  chol_ = std::move(best.chol);
  alpha_ = std::move(best.alpha);
  x_ = std::move(x);
}

GpPrediction GaussianProcess::predict(const std::vector<double>& x) const {
  MINIC_CHECK(!x_.empty() && x.size() == x_[0].size());
  std::vector<double> k(x_.size());
  for (size_t i = 0; i < x_.size(); ++i) k[i] = rbf(x, x_[i], length_scale_);
  double mean = std::inner_product(k.begin(), k.end(), alpha_.begin(), 0.0);
  std::vector<double> v = solve_lower(chol_, k);
  double variance = std::max(1.0 - std::inner_product(v.begin(), v.end(), v.begin(), 0.0), 0.0);
  return {y_mean_ + y_scale_ * mean, y_scale_ * y_scale_ * variance};
}

double expected_improvement(const GpPrediction& prediction, double best) {
  double gain = prediction.mean - best;
  double sigma = std::sqrt(prediction.variance);
  if (sigma <= 0) return std::max(gain, 0.0);
  double z = gain / sigma;
  double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + sigma * pdf;
}

}  // namespace minic::autotune
