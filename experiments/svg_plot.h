// File: experiments/svg_plot.h
//
// The what-if sweep as a self-contained SVG: the scaling curve (samples/s
// against GPUs, with ideal linear scaling from the smallest size) and the
// stacked breakdown of each size's iteration time; with --vary, one curve
// and one bar per variant at each size, and a legend. Written by hand so
// that --plot works without gnuplot or any other program.

#ifndef ZIONSIM_EXPERIMENTS_SVG_PLOT_H_
#define ZIONSIM_EXPERIMENTS_SVG_PLOT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "experiments/whatif.h"

namespace zx::experiments {

/// One curve: a variant's points and its legend label (empty: no legend).
struct PlotSeries {
  std::string label;
  std::vector<WhatIfPoint> points;
};

void write_whatif_svg(std::ostream& out, const std::vector<PlotSeries>& series, const std::string& title);

/// One unlabelled series.
void write_whatif_svg(std::ostream& out, const std::vector<WhatIfPoint>& points, const std::string& title);

/// One column of a collective sweep: per message size, time and bus bandwidth.
struct CollectiveSeries {
  std::string label;  ///< "ring", or "ring nic-gbit=400" with --vary
  std::vector<double> size_bytes;
  std::vector<double> time_us;
  std::vector<double> busbw_gbyte_per_s;
};

/// The collective sweep as two panels over message size (log scale): time
/// (log scale) and bus bandwidth, a curve per series, and a legend. Sizes of
/// zero bytes are left out (no place on a log axis).
void write_collective_svg(std::ostream& out, const std::vector<CollectiveSeries>& series, const std::string& title);

/// One validation case: its figure as measured and as simulated.
struct ValidationPoint {
  std::string id;
  std::string family;
  std::string unit;
  double measured = 0;
  double simulated = 0;
};

/// Simulated against measured on log-log axes with the y = x line (and
/// +/-10% and +/-50% lines), a colour per family and a legend; each point
/// carries its case id as a tooltip. Points at or below 0 are left out.
void write_validation_svg(std::ostream& out, const std::vector<ValidationPoint>& points, const std::string& title);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SVG_PLOT_H_
