// File: experiments/trace_run_report.h
//
// zionsim run's report: for one run, its iteration, a row per rank (busy,
// idle, exposed and overlapped communication), the critical path and the
// hottest links; with --vary, a row per variant. Each row's columns are
// listed once (result_schema.h) and the table, CSV and JSON written from
// them.

#ifndef ZIONSIM_EXPERIMENTS_TRACE_RUN_REPORT_H_
#define ZIONSIM_EXPERIMENTS_TRACE_RUN_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "experiments/trace_run.h"

namespace zx::experiments {

/// Writes `report` in `format` ("table", "csv" or "json"); `vary` are the
/// --vary texts the JSON of a sweep records.
void write_trace_run_report(const TraceRunReport& report, const std::string& format,
                            const std::vector<std::string>& vary, std::ostream& out);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_TRACE_RUN_REPORT_H_
