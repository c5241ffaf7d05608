// File: experiments/collective_report.h
//
// zionsim collective's report: the nccl-tests table (a column group per
// algorithm, with its footnotes: the variants, what NCCL's model and the
// tuner ran, NCCL's graphs, the definitions, the latencies, the channels),
// its CSV and JSON, and its plot.

#ifndef ZIONSIM_EXPERIMENTS_COLLECTIVE_REPORT_H_
#define ZIONSIM_EXPERIMENTS_COLLECTIVE_REPORT_H_

#include <ostream>
#include <string>

#include "experiments/collective_sweep.h"

namespace zx::experiments {

/// Writes the sweep `report` of `request` in `format` ("table", "csv" or
/// "json").
void write_collective_report(std::ostream& out, const std::string& format, const CollectiveSweepRequest& request,
                             const CollectiveSweepReport& report);

/// Time and bus bandwidth against size as SVG, a curve per column (every
/// algorithm of every variant).
void write_collective_plot(std::ostream& file, const CollectiveSweepRequest& request,
                           const CollectiveSweepReport& report);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_COLLECTIVE_REPORT_H_
