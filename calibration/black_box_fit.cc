// File: calibration/black_box_fit.cc

#include "calibration/black_box_fit.h"

#include <cmath>

namespace zx::calibration {
namespace {

// The golden section's ratio, (sqrt(5) - 1) / 2 = 0.618...
double golden_ratio() { return (std::sqrt(5.0) - 1) / 2; }

}  // namespace

double golden_minimum(const std::function<double(double)>& f, double lo, double hi, int iterations) {
  const double g = golden_ratio();
  double a = lo;
  double b = hi;
  double c = b - g * (b - a);
  double d = a + g * (b - a);
  double fc = f(c);
  double fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

double bracket_after(double width, int iterations) { return std::pow(golden_ratio(), iterations) * width; }

double FitParameter::coordinate(double value) const { return log_scale ? std::log(value) : value; }

double FitParameter::value_at(double coordinate) const { return log_scale ? std::exp(coordinate) : coordinate; }

DescentResult coordinate_descent(const std::vector<FitParameter>& params, std::vector<double> start,
                                 const DescentObjective& objective, const DescentOptions& options,
                                 const std::function<void(const DescentStep&)>& after_step) {
  DescentResult result{.values = std::move(start), .evaluations = 0};
  std::vector<double>& values = result.values;
  for (int round = 0; round < options.rounds && !params.empty(); ++round) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const FitParameter& p = params[i];
      const auto along = [&](double x) {
        std::vector<double> v = values;
        v[i] = p.value_at(x);
        ++result.evaluations;
        return objective(i, v);
      };
      const double best = golden_minimum(along, p.coordinate(p.lo), p.coordinate(p.hi), options.golden_steps);
      values[i] = p.value_at(best);
      if (after_step) after_step(DescentStep{round, i, values, result.evaluations});
    }
  }
  return result;
}

bool at_bound(const FitParameter& p, double value, int golden_steps) {
  // Within the search's final bracket, with a margin.
  const double tolerance = 4 * bracket_after(p.coordinate(p.hi) - p.coordinate(p.lo), golden_steps);
  return (!p.lo_is_answer && p.coordinate(value) - p.coordinate(p.lo) <= tolerance) ||
         (!p.hi_is_answer && p.coordinate(p.hi) - p.coordinate(value) <= tolerance);
}

}  // namespace zx::calibration
