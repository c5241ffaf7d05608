// File: calibration/linear_fit_test.cc
//
// Least-squares fits: exact data is recovered exactly; noisy data (y = 3 +
// 2x times exp(0.01 z), z from std::mt19937_64(7) via Box-Muller) within a
// few standard errors; degenerate inputs (one point, all-equal x, NaN,
// non-positive y under relative weighting) are errors naming the fit, never
// NaN parameters.

#include "calibration/linear_fit.h"

#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zx::calibration {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LinearFit, ExactLineIsRecovered) {
  const std::vector<double> x = {1, 2, 4, 8};
  const std::vector<double> y = {5, 7, 11, 19};  // 3 + 2x
  for (Weighting w : {Weighting::kAbsolute, Weighting::kRelative}) {
    const LinearFit f = fit_linear(x, y, "line", 3, w);
    EXPECT_NEAR(f.intercept, 3, 1e-12);
    EXPECT_NEAR(f.slope, 2, 1e-12);
    EXPECT_NEAR(f.r_squared, 1, 1e-12);
    EXPECT_LT(f.max_relative_residual, 1e-12);
    EXPECT_EQ(f.num_samples, 4u);
    EXPECT_EQ(f.relative_residuals.size(), 4u);
  }
  const LinearFit p = fit_proportional(x, std::vector<double>{2, 4, 8, 16}, "proportional");
  EXPECT_NEAR(p.slope, 2, 1e-12);
  EXPECT_EQ(p.intercept, 0);
}

// 1% log-normal noise on 200 points spread over x in [1, 1000]: the relative
// fit recovers intercept and slope within 1% and reports rms residual ~1%.
TEST(LinearFit, NoisyLineWithinTolerance) {
  std::mt19937_64 engine(7);
  std::vector<double> x, y;
  for (int i = 0; i < 200; ++i) {
    const double u1 = (static_cast<double>(engine() >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(engine() >> 11) * 0x1.0p-53;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    const double xi = std::pow(10.0, 3.0 * i / 199.0);
    x.push_back(xi);
    y.push_back((3 + 2 * xi) * std::exp(0.01 * z));
  }
  const LinearFit f = fit_linear(x, y, "noisy");
  EXPECT_NEAR(f.intercept, 3, 0.03);
  EXPECT_NEAR(f.slope, 2, 0.02);
  EXPECT_NEAR(f.rms_relative_residual, 0.01, 0.003);
  EXPECT_GT(f.r_squared, 0.999);
}

TEST(LinearFit, WeightedFitUsesGivenWeights) {
  // y = 1 + x exactly except a far outlier with a tiny weight.
  const std::vector<double> x = {1, 2, 3, 4};
  const std::vector<double> y = {2, 3, 4, 50};
  const LinearFit f = fit_linear_weighted(x, y, std::vector<double>{1, 1, 1, 1e-9}, "weighted");
  EXPECT_NEAR(f.slope, 1, 1e-6);
  EXPECT_NEAR(f.intercept, 1, 1e-6);
}

TEST(LinearFit, DegenerateInputsAreErrors) {
  EXPECT_EQ(
      error_of([] { fit_linear(std::vector<double>{1}, std::vector<double>{2}, "gemm bf16"); }),
      "calibration: gemm bf16: expected at least 3 points to fit, got 1");
  EXPECT_EQ(error_of([] {
              fit_linear(std::vector<double>{4, 4, 4}, std::vector<double>{1, 2, 3}, "copy h2d");
            }),
            "calibration: copy h2d: expected at least 2 distinct x values, got 1 (all x = 4)");
  EXPECT_EQ(error_of([] {
              fit_linear(std::vector<double>{1, 2, 3}, std::vector<double>{1, NAN, 3}, "launch");
            }),
            "calibration: launch: expected finite values, got x = 2, y = nan at point 1");
  EXPECT_EQ(error_of([] {
              fit_linear(std::vector<double>{1, 2, 3}, std::vector<double>{1, 0, 3}, "streaming");
            }),
            "calibration: streaming: expected positive y for a relative fit, got 0 at point 1");
  EXPECT_EQ(error_of([] {
              fit_proportional(std::vector<double>{0, 0, 0}, std::vector<double>{1, 2, 3}, "p");
            }),
            "calibration: p: expected a nonzero x value, got only x = 0");
  EXPECT_EQ(error_of([] {
              fit_linear_weighted(std::vector<double>{1, 2, 3}, std::vector<double>{1, 2, 3},
                                  std::vector<double>{1, -1, 1}, "w");
            }),
            "calibration: w: expected positive finite weights, got -1 at point 1");
}

// Two regressors: exact data is recovered exactly, whatever the weights;
// a regressor that is a multiple of another, or too few points, is an error.
TEST(LinearFit, MultilinearRecoversTwoRegressorsAndRefusesDegenerateDesigns) {
  const std::vector<std::vector<double>> x = {{1, 2, 3, 4, 5, 6}, {10, 5, 40, 20, 70, 1}};
  std::vector<double> y, w;
  for (std::size_t i = 0; i < 6; ++i) {
    y.push_back(7 + 0.5 * x[0][i] + 3 * x[1][i]);
    w.push_back(1.0 / y.back());
  }
  const MultiLinearFit f = fit_multilinear_weighted(x, y, w, "two");
  EXPECT_NEAR(f.intercept, 7, 1e-9);
  ASSERT_EQ(f.coefficients.size(), 2u);
  EXPECT_NEAR(f.coefficients[0], 0.5, 1e-9);
  EXPECT_NEAR(f.coefficients[1], 3, 1e-9);
  EXPECT_NEAR(f.r_squared, 1, 1e-12);
  EXPECT_LT(f.max_relative_residual, 1e-12);
  const std::vector<double> at = {2, 5};
  EXPECT_NEAR(f.predict(at), 7 + 1 + 15, 1e-9);

  const std::vector<std::vector<double>> collinear = {x[0], {2, 4, 6, 8, 10, 12}};
  EXPECT_EQ(error_of([&] { fit_multilinear_weighted(collinear, y, w, "collinear"); }),
            "calibration: collinear: the design is rank-deficient (rank 2 of 3)");
  const std::vector<std::vector<double>> two_points = {{1, 2}, {3, 5}};
  const std::vector<double> y2 = {1, 2}, w2 = {1, 1};
  EXPECT_EQ(error_of([&] { fit_multilinear_weighted(two_points, y2, w2, "short"); }),
            "calibration: short: expected at least 3 points to fit, got 2");
  // Regressors twelve decades apart (bytes and an indicator, say): each
  // recovered to its own precision.
  const std::vector<std::vector<double>> scales = {{0, 1, 0, 1, 1, 0}, {1e9, 3e9, 7e9, 2e9, 5e8, 4e9}};
  std::vector<double> ys, ws;
  for (std::size_t i = 0; i < 6; ++i) {
    ys.push_back(2500 + 14000 * scales[0][i] + 2.5e-4 * scales[1][i]);
    ws.push_back(1.0 / ys.back());
  }
  const MultiLinearFit sf = fit_multilinear_weighted(scales, ys, ws, "scales");
  EXPECT_NEAR(sf.intercept, 2500, 1e-6);
  EXPECT_NEAR(sf.coefficients[0], 14000, 1e-6);
  EXPECT_NEAR(sf.coefficients[1], 2.5e-4, 1e-15);
  const std::vector<std::vector<double>> zero = {x[0], {0, 0, 0, 0, 0, 0}};
  EXPECT_EQ(error_of([&] { fit_multilinear_weighted(zero, y, w, "zero"); }),
            "calibration: zero: the design is rank-deficient (regressor 1 is all zeros)");
  std::vector<double> bad = y;
  bad[3] = std::nan("");
  EXPECT_EQ(error_of([&] { fit_multilinear_weighted(x, bad, w, "nan"); }),
            "calibration: nan: expected finite values, got a non-finite one at point 3");
}

}  // namespace
}  // namespace zx::calibration
