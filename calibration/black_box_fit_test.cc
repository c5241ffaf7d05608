// Tests of calibration/black_box_fit.h on closed forms whose minima are
// known: golden section lands within its final bracket, coordinate descent
// recovers the parameters of a separable quadratic, log-scale parameters
// are searched (and resolved) in log, and no value outside a parameter's
// range is ever tried or returned.

#include "calibration/black_box_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace zx::calibration {
namespace {

TEST(GoldenMinimumTest, FindsTheMinimumOfAConvexFunctionWithinItsBracket) {
  for (const int steps : {10, 24, 40}) {
    int calls = 0;
    const auto parabola = [&](double x) {
      ++calls;
      return (x - 1.3) * (x - 1.3) + 2;
    };
    const double x = golden_minimum(parabola, -5, 5, steps);
    EXPECT_LE(std::abs(x - 1.3), bracket_after(10, steps)) << steps;
    EXPECT_EQ(calls, steps + 2) << "one new point per step after the first two";
  }
  // Not symmetric about its minimum: e^x - 2x is smallest at ln 2.
  const double x = golden_minimum([](double v) { return std::exp(v) - 2 * v; }, 0, 3, kGoldenSteps);
  EXPECT_LE(std::abs(x - std::log(2.0)), bracket_after(3, kGoldenSteps));
  EXPECT_LT(bracket_after(3, kGoldenSteps), 3 * 1.1e-5) << "0.618^24 is about 1e-5";
}

TEST(GoldenMinimumTest, AMonotoneFunctionEndsAtTheEndOfTheBracket) {
  std::vector<double> tried;
  const double x = golden_minimum(
      [&](double v) {
        tried.push_back(v);
        return v;
      },
      2, 7, kGoldenSteps);
  EXPECT_LE(x - 2, bracket_after(5, kGoldenSteps));
  for (const double v : tried) {
    EXPECT_GE(v, 2);
    EXPECT_LE(v, 7);
  }
}

TEST(CoordinateDescentTest, RecoversTheParametersOfASeparableQuadratic) {
  const std::vector<FitParameter> params = {{.name = "a", .lo = -10, .hi = 10},
                                            {.name = "b", .lo = 0, .hi = 100},
                                            {.name = "c", .lo = -1, .hi = 1}};
  const std::vector<double> truth = {3.25, 42.0, -0.4};
  const auto objective = [&](std::size_t, const std::vector<double>& v) {
    return (v[0] - truth[0]) * (v[0] - truth[0]) + 4 * (v[1] - truth[1]) * (v[1] - truth[1]) +
           0.5 * (v[2] - truth[2]) * (v[2] - truth[2]);
  };
  std::vector<int> rounds;
  std::vector<std::size_t> moved;
  const DescentOptions options{.rounds = 2, .golden_steps = kGoldenSteps};
  const DescentResult r = coordinate_descent(params, {0, 50, 0}, objective, options, [&](const DescentStep& step) {
    rounds.push_back(step.round);
    moved.push_back(step.moved);
  });
  ASSERT_EQ(r.values.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(r.values[i], truth[i], bracket_after(params[i].hi - params[i].lo, kGoldenSteps)) << params[i].name;
    EXPECT_FALSE(at_bound(params[i], r.values[i])) << params[i].name;
  }
  EXPECT_EQ(r.evaluations, 2 * 3 * (kGoldenSteps + 2));
  EXPECT_EQ(rounds, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(moved, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2}));
}

TEST(CoordinateDescentTest, TheObjectiveSeesWhichParameterMovesAndTheOthersHeld) {
  const std::vector<FitParameter> params = {{.name = "a", .lo = 0, .hi = 1}, {.name = "b", .lo = 0, .hi = 1}};
  std::vector<double> held;  // b while a moves in the first round
  const auto objective = [&](std::size_t i, const std::vector<double>& v) {
    if (i == 0 && held.size() < static_cast<std::size_t>(kGoldenSteps + 2)) held.push_back(v[1]);
    return (v[0] - 0.25) * (v[0] - 0.25) + (v[1] - 0.75) * (v[1] - 0.75);
  };
  coordinate_descent(params, {0.5, 0.125}, objective, {.rounds = 1});
  ASSERT_EQ(held.size(), static_cast<std::size_t>(kGoldenSteps + 2));
  for (const double b : held) EXPECT_EQ(b, 0.125);
}

TEST(CoordinateDescentTest, LogScaleParametersAreSearchedInLog) {
  // A minimum at 1e-4 in [1e-6, 1]: in log the final bracket is
  // ln(1e6) x 0.618^24 = 1.3e-4 wide, a factor of 1.00013 about the value;
  // a linear search's is 9.7e-6 wide, a tenth of the value.
  const double truth = 1e-4;
  const FitParameter log_p{.name = "x", .lo = 1e-6, .hi = 1, .log_scale = true};
  const FitParameter lin_p{.name = "x", .lo = 1e-6, .hi = 1};
  std::vector<double> tried;
  const auto objective = [&](std::size_t, const std::vector<double>& v) {
    tried.push_back(v[0]);
    const double r = std::log(v[0] / truth);
    return r * r;
  };
  const DescentResult in_log = coordinate_descent({log_p}, {0.5}, objective, {.rounds = 1});
  EXPECT_NEAR(in_log.values[0], truth, truth * 1.4e-4);
  // The objective is given values, not their logs, and every one in range.
  for (const double v : tried) {
    EXPECT_GE(v, log_p.lo);
    EXPECT_LE(v, log_p.hi);
  }
  // The first point golden section tries is 0.382 of the way in log: 10^-3.7.
  EXPECT_NEAR(std::log10(tried.front()), -6 + 6 * (1 - (std::sqrt(5.0) - 1) / 2), 1e-9);
  const DescentResult linear = coordinate_descent({lin_p}, {0.5}, objective, {.rounds = 1});
  EXPECT_GT(std::abs(linear.values[0] - truth), truth * 1e-3) << "a linear search cannot resolve it";
  // coordinate() and value_at() are inverse.
  EXPECT_DOUBLE_EQ(log_p.coordinate(0.01), std::log(0.01));
  EXPECT_DOUBLE_EQ(log_p.value_at(log_p.coordinate(0.37)), 0.37);
  EXPECT_EQ(lin_p.coordinate(0.37), 0.37);
}

TEST(CoordinateDescentTest, BoundsAreRespected) {
  // Minima outside the ranges: above one, below the other.
  const std::vector<FitParameter> params = {{.name = "up", .lo = 0, .hi = 10},
                                            {.name = "down", .lo = 0.02, .hi = 1, .log_scale = true}};
  std::vector<std::vector<double>> tried;
  const auto objective = [&](std::size_t, const std::vector<double>& v) {
    tried.push_back(v);
    return (v[0] - 50) * (v[0] - 50) + (v[1] - 0.001) * (v[1] - 0.001);
  };
  const DescentResult r = coordinate_descent(params, {5, 0.5}, objective);
  for (const std::vector<double>& v : tried) {
    EXPECT_GE(v[0], 0);
    EXPECT_LE(v[0], 10);
    EXPECT_GE(v[1], 0.02);
    EXPECT_LE(v[1], 1);
  }
  EXPECT_LE(r.values[0], 10);
  EXPECT_GE(r.values[1], 0.02);
  EXPECT_NEAR(r.values[0], 10, bracket_after(10, kGoldenSteps));
  EXPECT_NEAR(std::log(r.values[1]), std::log(0.02), bracket_after(std::log(1 / 0.02), kGoldenSteps));
  // Both ended at an end of their range: flagged, unless that end is an answer.
  EXPECT_TRUE(at_bound(params[0], r.values[0]));
  EXPECT_TRUE(at_bound(params[1], r.values[1]));
  FitParameter floor_is_answer = params[1];
  floor_is_answer.lo_is_answer = true;
  EXPECT_FALSE(at_bound(floor_is_answer, r.values[1]));
  FitParameter ceiling_is_answer = params[0];
  ceiling_is_answer.hi_is_answer = true;
  EXPECT_FALSE(at_bound(ceiling_is_answer, r.values[0]));
  // Within 4 final brackets of an end is at it; further is not.
  const double bracket = bracket_after(10, kGoldenSteps);
  EXPECT_TRUE(at_bound(params[0], 10 - 3.9 * bracket));
  EXPECT_FALSE(at_bound(params[0], 10 - 4.1 * bracket));
  EXPECT_TRUE(at_bound(params[0], 3.9 * bracket));
  EXPECT_FALSE(at_bound(params[0], 5));
}

TEST(CoordinateDescentTest, NoParametersNoEvaluations) {
  int calls = 0;
  const DescentResult r = coordinate_descent({}, {}, [&](std::size_t, const std::vector<double>&) {
    ++calls;
    return 0.0;
  });
  EXPECT_TRUE(r.values.empty());
  EXPECT_EQ(r.evaluations, 0);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace zx::calibration
