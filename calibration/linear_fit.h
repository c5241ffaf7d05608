// File: calibration/linear_fit.h
//
// Least-squares line fits with their quality, the one solver every
// calibration family reduces to (STYLE 10.9: the model is separate from the
// data and the solver, and the result is a report). Eigen stays in the .cc.
//
// Fits minimise relative residuals when asked (each row weighted by 1/y):
// measured times span five decades, and what calibration promises is a
// percentage error, so a 1 us kernel matters as much as a 100 ms one.

#ifndef ZIONSIM_CALIBRATION_LINEAR_FIT_H_
#define ZIONSIM_CALIBRATION_LINEAR_FIT_H_

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace zx::calibration {

enum class Weighting { kAbsolute, kRelative };

struct LinearFit {
  double intercept = 0;
  double slope = 0;
  /// 1 - SS_res / SS_tot on the unweighted y.
  double r_squared = 0;
  /// Root mean square of (predicted - y) / y, and its largest magnitude.
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  std::size_t num_samples = 0;
  /// (predicted - y) / y per sample, in input order.
  std::vector<double> relative_residuals;

  double predict(double x) const { return intercept + slope * x; }
};

/// Least-squares fit of y = intercept + slope * x (Eigen's column-pivoting
/// Householder QR). `what` names the fit in errors. Throws zx::InputError
/// (source "calibration", location `what`) when there are fewer than
/// `min_points` samples, fewer than two distinct x, a non-finite value, a
/// non-positive y under relative weighting, or a rank-deficient system;
/// never returns NaN.
LinearFit fit_linear(std::span<const double> x, std::span<const double> y, const std::string& what,
                     std::size_t min_points = 3, Weighting weighting = Weighting::kRelative);

/// As fit_linear with explicit positive row weights (minimising
/// sum (w_i (y_i - f(x_i)))^2): for fits whose y is a part of a measured time
/// but whose error should be relative to the whole time.
LinearFit fit_linear_weighted(std::span<const double> x, std::span<const double> y,
                              std::span<const double> weights, const std::string& what,
                              std::size_t min_points = 3);

/// As fit_linear with the intercept fixed at 0: y = slope * x.
LinearFit fit_proportional(std::span<const double> x, std::span<const double> y,
                           const std::string& what, std::size_t min_points = 3,
                           Weighting weighting = Weighting::kRelative);

/// A least-squares fit of y = intercept + sum_j coefficients[j] x_j.
struct MultiLinearFit {
  double intercept = 0;
  std::vector<double> coefficients;
  /// As LinearFit's, on the unweighted y.
  double r_squared = 0;
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  std::size_t num_samples = 0;

  /// `x` holds one value per coefficient.
  double predict(std::span<const double> x) const;
};

/// Weighted least squares of y on the `columns` (each one regressor, as
/// long as y) plus an intercept, minimising sum (w_i (y_i - f(x_i)))^2.
/// Throws zx::InputError as fit_linear does: fewer than max(min_points,
/// columns + 1) points, a non-finite value or weight, or a rank-deficient
/// design (a regressor constant or a combination of the others).
MultiLinearFit fit_multilinear_weighted(std::span<const std::vector<double>> columns,
                                        std::span<const double> y, std::span<const double> weights,
                                        const std::string& what, std::size_t min_points = 3);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_LINEAR_FIT_H_
