// File: models/execution/timeline.h
//
// A simulated run as a Chrome trace event file (JSON), which
// ui.perfetto.dev and chrome://tracing open: one process per GPU rank, one
// thread per stream, one complete ("X") slice per op from when it became
// ready to when it ended (a collective's wait for its peers shows as the
// start of its slice), and flow arrows along the critical path. Times are
// microseconds with picosecond precision, converted only here.

#ifndef ZIONSIM_MODELS_EXECUTION_TIMELINE_H_
#define ZIONSIM_MODELS_EXECUTION_TIMELINE_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "models/execution/executor.h"
#include "models/execution/op_graph.h"

namespace zx::models {

/// A value over time shown as a counter track (e.g. a link's utilisation).
struct CounterSeries {
  std::string name;
  std::vector<std::pair<std::int64_t, double>> samples;  ///< (time in ps, value)
};

/// Writes the trace of the first `max_ranks` ranks (all when 0), and each
/// counter series as a counter track of a "network" process.
void write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result,
                        int max_ranks = 0, const std::vector<CounterSeries>& counters = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_TIMELINE_H_
