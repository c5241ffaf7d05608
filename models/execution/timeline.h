// File: models/execution/timeline.h
//
// A simulated run as a Chrome trace event file (JSON), which
// ui.perfetto.dev and chrome://tracing open:
//
//   * one process per GPU rank ("GPU r"), one thread per stream, one complete
//     ("X") slice per op from when it became ready to when it ended (a
//     collective's wait for its peers shows as the start of its slice);
//   * one process per NIC ("NIC <node>"), with one async slice ("b"/"e",
//     category "tx" or "rx") per transfer that crossed the NIC, from its
//     start to its last byte; transfers overlap, so they are async slices,
//     which the viewers stack in rows;
//   * flow arrows ("s"/"f"): category "critical" along the critical path;
//     "dependency" for each dependency between ops of different streams or
//     ranks (stream order is visible as slice order and gets none);
//     "transfer" from the op that sent each transfer to the op that received
//     it (a point-to-point send to its recv; a collective's op on the source
//     rank to its op on the destination rank);
//   * counter tracks ("C") in a "network links" process, e.g. the
//     utilisation of the busiest links over time.
//
// Only ranks below max_ranks appear (all when 0), and only NICs and
// transfers of those ranks; TimelineLimits caps the arrows and transfer
// slices so that a million-flow run still gives a file a viewer can open
// (what was left out is counted in the file's "otherData" object, the trace
// event format's place for metadata, under "zionsim").
// Times are microseconds with picosecond precision, converted only here.

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

/// One transfer (a flow of the network model) as seen by the timeline.
struct TransferSlice {
  std::string name;           ///< e.g. "GPU 0 -> GPU 9"
  int src_rank = 0;
  int dst_rank = 0;
  std::int64_t bytes = 0;
  std::int64_t start_ps = 0;   ///< when the transfer was started
  std::int64_t finish_ps = 0;  ///< when its last byte arrived
  std::vector<int> tx_nics;    ///< indices into NetworkActivity::nic_names it left through
  std::vector<int> rx_nics;    ///< ... and arrived through
  std::int64_t from_op = -1;   ///< op that sent it (index into the graph), or -1
  std::int64_t to_op = -1;     ///< op that received it, or -1
};

/// The network side of a run, for the timeline.
struct NetworkActivity {
  std::vector<std::string> nic_names;  ///< one process per NIC
  std::vector<TransferSlice> transfers;
  std::vector<CounterSeries> counters;
};

struct TimelineLimits {
  int max_ranks = 0;                       ///< ranks shown; 0: all
  std::size_t max_transfers = 100'000;     ///< transfer slices and arrows
  std::size_t max_dependency_arrows = 100'000;
};

/// What write_chrome_trace wrote, and what it left out for the limits.
struct TimelineStats {
  std::size_t op_slices = 0;
  std::size_t transfer_slices = 0;  ///< NIC slices (a transfer may cross two NICs)
  std::size_t dependency_arrows = 0;
  std::size_t transfer_arrows = 0;
  std::size_t critical_arrows = 0;
  std::size_t transfers_left_out = 0;
  std::size_t dependency_arrows_left_out = 0;
};

TimelineStats write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result,
                                 const NetworkActivity& network, const TimelineLimits& limits = {});

/// Ops, critical path and counters only (no transfers).
void write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result,
                        int max_ranks = 0, const std::vector<CounterSeries>& counters = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_TIMELINE_H_
