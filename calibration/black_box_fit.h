// File: calibration/black_box_fit.h
//
// A minimiser for objectives that are only known by evaluating them (a
// simulation of measured rows under trial parameter values): golden-section
// search along one parameter, and coordinate descent over bounded
// parameters, each searched on a linear or a log scale. Pure: the objective
// is a function the caller gives, so nothing here runs the simulator.
//
// The stopping rule is fixed, not adaptive: a number of rounds over the
// parameters and a number of golden-section steps per parameter and round
// (DescentOptions). A value within the search's final bracket of an end of
// its range is at that end (at_bound): the objective wanted to go further.

#ifndef ZIONSIM_CALIBRATION_BLACK_BOX_FIT_H_
#define ZIONSIM_CALIBRATION_BLACK_BOX_FIT_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace zx::calibration {

/// Golden-section steps per parameter and round: the bracket shrinks by
/// 0.618^24 (about 1e-5 of the range).
inline constexpr int kGoldenSteps = 24;

/// Golden-section search for the minimum of f on [lo, hi], `iterations`
/// steps after the first two evaluations (f is called iterations + 2
/// times). For f unimodal on [lo, hi] the result is within the final
/// bracket, bracket_after(hi - lo, iterations), of the minimum.
double golden_minimum(const std::function<double(double)>& f, double lo, double hi, int iterations);

/// The width of golden-section search's bracket after `iterations` steps
/// from one of `width`: width x 0.618^iterations.
double bracket_after(double width, int iterations);

/// One parameter the descent may move: its name (for the caller), its
/// range, whether it is searched on a log scale (log(value) from log(lo) to
/// log(hi); lo must then be positive), and whether an end of its range is a
/// real answer rather than a bound the fit hit (an efficiency of 1 is no
/// loss; a gap of 0, none).
struct FitParameter {
  std::string name;
  double lo = 0;
  double hi = 0;
  bool log_scale = false;
  bool lo_is_answer = false;
  bool hi_is_answer = false;

  /// Where the search moves: log(value) on a log scale, else the value.
  double coordinate(double value) const;
  /// The value at a coordinate of the search.
  double value_at(double coordinate) const;
};

/// The stopping rule: rounds over all parameters, and golden-section steps
/// per parameter and round.
struct DescentOptions {
  int rounds = 3;
  int golden_steps = kGoldenSteps;
};

/// The objective at `values` (one per parameter), `moved` the index of the
/// parameter being searched (a caller may look only at what that parameter
/// determines).
using DescentObjective = std::function<double(std::size_t moved, const std::vector<double>& values)>;

/// Where the descent is after it has placed one parameter.
struct DescentStep {
  int round = 0;            ///< from 0
  std::size_t moved = 0;    ///< the parameter just placed
  const std::vector<double>& values;
  int evaluations = 0;      ///< of the objective so far
};

struct DescentResult {
  std::vector<double> values;
  int evaluations = 0;
};

/// Coordinate descent from `start` (one value per parameter): each round
/// places every parameter in turn at the minimum golden-section search
/// finds over its whole range with the others held. `after_step` (if
/// given) is called after each placement. No parameters: `start` back,
/// no evaluation.
DescentResult coordinate_descent(const std::vector<FitParameter>& params, std::vector<double> start,
                                 const DescentObjective& objective, const DescentOptions& options = {},
                                 const std::function<void(const DescentStep&)>& after_step = {});

/// Whether `value` of `p` is at an end of its range that is not an answer:
/// within 4 final brackets of it (after `golden_steps` steps), measured on
/// the scale the search used.
bool at_bound(const FitParameter& p, double value, int golden_steps = kGoldenSteps);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_BLACK_BOX_FIT_H_
