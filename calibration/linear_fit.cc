// File: calibration/linear_fit.cc
//
// Weighted linear least squares with Eigen's colPivHouseholderQr (rank
// revealing, so a degenerate design is detected rather than solved into
// NaNs). See linear_fit.h.

#include "calibration/linear_fit.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "base/error.h"

namespace zx::calibration {
namespace {

[[noreturn]] void fail(const std::string& what, std::string message) {
  throw InputError(Diagnostic{"calibration", what, std::move(message)});
}

LinearFit fit(std::span<const double> x, std::span<const double> y, std::span<const double> weights,
              const std::string& what, std::size_t min_points, Weighting weighting,
              bool with_intercept) {
  if (!weights.empty() && weights.size() != x.size()) {
    fail(what, fmt::format("{} x values but {} weights", x.size(), weights.size()));
  }
  if (x.size() != y.size())
    fail(what, fmt::format("{} x values but {} y values", x.size(), y.size()));
  const std::size_t n = x.size();
  const std::size_t need = std::max<std::size_t>(min_points, with_intercept ? 2 : 1);
  if (n < need) {
    fail(what, fmt::format("expected at least {} points to fit, got {}", need, n));
  }
  std::set<double> distinct;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      fail(what,
           fmt::format("expected finite values, got x = {}, y = {} at point {}", x[i], y[i], i));
    }
    if (weights.empty() && weighting == Weighting::kRelative && !(y[i] > 0)) {
      fail(what,
           fmt::format("expected positive y for a relative fit, got {} at point {}", y[i], i));
    }
    if (!weights.empty() && !(weights[i] > 0 && std::isfinite(weights[i]))) {
      fail(what,
           fmt::format("expected positive finite weights, got {} at point {}", weights[i], i));
    }
    distinct.insert(x[i]);
  }
  if (with_intercept && distinct.size() < 2) {
    fail(what, fmt::format("expected at least 2 distinct x values, got {} (all x = {})",
                           distinct.size(), x[0]));
  }
  if (!with_intercept && distinct.size() == 1 && x[0] == 0) {
    fail(what, "expected a nonzero x value, got only x = 0");
  }
  const Eigen::Index rows = static_cast<Eigen::Index>(n);
  const Eigen::Index cols = with_intercept ? 2 : 1;
  Eigen::MatrixXd a(rows, cols);
  Eigen::VectorXd b(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const double w = !weights.empty()                    ? weights[i]
                     : weighting == Weighting::kRelative ? 1.0 / y[i]
                                                         : 1.0;
    a(i, 0) = w * x[i];
    if (with_intercept) a(i, 1) = w;
    b(i) = w * y[i];
  }
  const auto qr = a.colPivHouseholderQr();
  if (qr.rank() < cols)
    fail(what, fmt::format("the design is rank-deficient (rank {} of {})", qr.rank(), cols));
  const Eigen::VectorXd solution = qr.solve(b);
  LinearFit result;
  result.slope = solution(0);
  result.intercept = with_intercept ? solution(1) : 0.0;
  if (!std::isfinite(result.slope) || !std::isfinite(result.intercept)) {
    fail(what, "the least-squares solution is not finite");
  }
  result.num_samples = n;
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += y[i];
  mean /= static_cast<double>(n);
  double ss_res = 0, ss_tot = 0, sum_sq_rel = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double predicted = result.predict(x[i]);
    ss_res += (predicted - y[i]) * (predicted - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    const double rel = y[i] != 0 ? (predicted - y[i]) / y[i] : predicted - y[i];
    result.relative_residuals.push_back(rel);
    sum_sq_rel += rel * rel;
    result.max_relative_residual = std::max(result.max_relative_residual, std::abs(rel));
  }
  // All-equal y with a perfect fit explains everything there was to explain.
  result.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  result.rms_relative_residual = std::sqrt(sum_sq_rel / static_cast<double>(n));
  return result;
}

}  // namespace

LinearFit fit_linear(std::span<const double> x, std::span<const double> y, const std::string& what,
                     std::size_t min_points, Weighting weighting) {
  return fit(x, y, {}, what, min_points, weighting, /*with_intercept=*/true);
}

LinearFit fit_linear_weighted(std::span<const double> x, std::span<const double> y,
                              std::span<const double> weights, const std::string& what,
                              std::size_t min_points) {
  if (weights.size() != x.size()) {
    fail(what, fmt::format("{} x values but {} weights", x.size(), weights.size()));
  }
  return fit(x, y, weights, what, min_points, Weighting::kAbsolute, /*with_intercept=*/true);
}

double MultiLinearFit::predict(std::span<const double> x) const {
  double y = intercept;
  for (std::size_t j = 0; j < coefficients.size() && j < x.size(); ++j) y += coefficients[j] * x[j];
  return y;
}

MultiLinearFit fit_multilinear_weighted(std::span<const std::vector<double>> columns,
                                        std::span<const double> y, std::span<const double> weights,
                                        const std::string& what, std::size_t min_points) {
  const std::size_t n = y.size();
  if (weights.size() != n) fail(what, fmt::format("{} y values but {} weights", n, weights.size()));
  for (const std::vector<double>& c : columns) {
    if (c.size() != n) fail(what, fmt::format("{} x values but {} y values", c.size(), n));
  }
  const std::size_t cols = columns.size() + 1;
  const std::size_t need = std::max(min_points, cols);
  if (n < need) fail(what, fmt::format("expected at least {} points to fit, got {}", need, n));
  for (std::size_t i = 0; i < n; ++i) {
    bool finite = std::isfinite(y[i]);
    for (const std::vector<double>& c : columns) finite = finite && std::isfinite(c[i]);
    if (!finite) fail(what, fmt::format("expected finite values, got a non-finite one at point {}", i));
    if (!(weights[i] > 0 && std::isfinite(weights[i]))) {
      fail(what, fmt::format("expected positive finite weights, got {} at point {}", weights[i], i));
    }
  }
  const Eigen::Index rows = static_cast<Eigen::Index>(n);
  Eigen::MatrixXd a(rows, static_cast<Eigen::Index>(cols));
  Eigen::VectorXd b(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const auto row = static_cast<std::size_t>(i);
    for (std::size_t j = 0; j < columns.size(); ++j) {
      a(i, static_cast<Eigen::Index>(j)) = weights[row] * columns[j][row];
    }
    a(i, static_cast<Eigen::Index>(columns.size())) = weights[row];
    b(i) = weights[row] * y[row];
  }
  // Each column scaled to unit norm first: regressors of very different
  // magnitudes (row accesses ~1e6, bytes ~1e9, an indicator 1) would
  // otherwise make the rank test and the solution depend on units.
  Eigen::VectorXd scale = a.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < scale.size(); ++j) {
    if (scale(j) == 0) fail(what, fmt::format("the design is rank-deficient (regressor {} is all zeros)", j));
    a.col(j) /= scale(j);
  }
  const auto qr = a.colPivHouseholderQr();
  if (qr.rank() < static_cast<Eigen::Index>(cols)) {
    fail(what, fmt::format("the design is rank-deficient (rank {} of {})", qr.rank(), cols));
  }
  const Eigen::VectorXd solution = qr.solve(b).cwiseQuotient(scale);
  MultiLinearFit result;
  for (std::size_t j = 0; j < columns.size(); ++j) {
    result.coefficients.push_back(solution(static_cast<Eigen::Index>(j)));
  }
  result.intercept = solution(static_cast<Eigen::Index>(columns.size()));
  for (double v : solution) {
    if (!std::isfinite(v)) fail(what, "the least-squares solution is not finite");
  }
  result.num_samples = n;
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  double ss_res = 0, ss_tot = 0, sum_sq_rel = 0;
  std::vector<double> x(columns.size());
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < columns.size(); ++j) x[j] = columns[j][i];
    const double predicted = result.predict(x);
    ss_res += (predicted - y[i]) * (predicted - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    const double rel = y[i] != 0 ? (predicted - y[i]) / y[i] : predicted - y[i];
    sum_sq_rel += rel * rel;
    result.max_relative_residual = std::max(result.max_relative_residual, std::abs(rel));
  }
  result.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  result.rms_relative_residual = std::sqrt(sum_sq_rel / static_cast<double>(n));
  return result;
}

LinearFit fit_proportional(std::span<const double> x, std::span<const double> y,
                           const std::string& what, std::size_t min_points, Weighting weighting) {
  return fit(x, y, {}, what, min_points, weighting, /*with_intercept=*/false);
}

}  // namespace zx::calibration
