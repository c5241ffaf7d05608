// File: experiments/flows_run.h
//
// `zionsim flows`: point-to-point flows on a cluster, from a flows file or
// a traffic pattern, simulated on the network model at one fidelity; and
// the report: per flow its times and route, the makespan, the hottest
// links, as table, CSV or JSON.
//
// The per-flow rows and the link rows have a schema each
// (experiments/result_schema.h). The CSV and JSON write the flows one row
// at a time through base/text_out.h, as they are read from the network, so
// that the memory of writing does not grow with the output (a million flows
// built as one JSON document took 223 s and 1.8 GiB). tools/flows_command.cc
// reads the flags and calls these.

#ifndef ZIONSIM_EXPERIMENTS_FLOWS_RUN_H_
#define ZIONSIM_EXPERIMENTS_FLOWS_RUN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "experiments/result_schema.h"
#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "topology/cluster_file.h"
#include "workloads/flow_set.h"

namespace zx::experiments {

struct FlowsOptions {
  std::string flows_file;  ///< a flows file (workloads/flow_set.h), or
  std::string pattern;     ///< a traffic pattern over all GPUs: exactly one
  std::int64_t size_bytes = 1 << 20;  ///< per flow of a pattern
  std::uint64_t seed = 1;             ///< of the permutation pattern
  std::string fidelity = "flow";      ///< one of kFidelities (experiments/stack.h)
  double completion_quantum_ns = 0;   ///< exact: per-flow times are the output
  int top = 10;                       ///< hottest links listed
};

/// A run's flows simulated: the network keeps each flow's record and route
/// and each link's load, which the writers read.
struct FlowsRun {
  FlowsRun(FlowsOptions run_options, topology::LoadedCluster loaded)
      : options(std::move(run_options)), cluster(std::move(loaded)) {}
  FlowsRun(const FlowsRun&) = delete;
  FlowsRun& operator=(const FlowsRun&) = delete;

  FlowsOptions options;
  topology::LoadedCluster cluster;
  std::vector<workloads::FlowSpec> specs;
  std::vector<models::FlowId> ids;  ///< each spec's flow in `network`
  sim::Simulator sim;
  std::unique_ptr<models::FlowNetwork> network;
  sim::TimePoint makespan = sim::TimePoint::zero();
  std::vector<std::uint32_t> hottest;  ///< the `top` links by bytes / capacity

  /// The share of the makespan the link was busy (0 for an empty run).
  double utilization(std::uint32_t link) const;
};

/// Loads the cluster and the flows and simulates them. Throws
/// zx::InputError naming `zionsim flows` unless exactly one of a flows
/// file and a pattern is given, and for bad input (the cluster, the file,
/// a rank out of range), or experiments::Interrupted when asked to stop.
/// The run holds its cluster and network in place: it is not moved.
std::unique_ptr<FlowsRun> run_flows(const topology::ClusterRequest& request, const FlowsOptions& options);

/// "node0/gpu0->node0/nvswitch": a link by its ends' names.
std::string link_name(const topology::Topology& topology, std::uint32_t link);

/// The per-flow rows. Table (up to kListedFlows flows): id, src, dst, size,
/// start, finish (times since the start), hops. CSV and JSON: id, src_rank,
/// dst_rank, size_bytes, start_ps, first_byte_ps, finish_ps, the route's
/// link ids (CSV: joined by spaces; JSON: a list).
Schema flow_schema();
/// Flow i's row with the cells of `output` (kTable, kCsv or kJson); the
/// others absent.
Row flow_row(const FlowsRun& run, std::size_t i, Output output);

/// The hottest links' rows (JSON): id, name, bytes, busy_ps, utilization.
Schema flow_link_schema();
std::vector<Row> flow_link_rows(const FlowsRun& run);

/// The table lists each flow up to this many; above, the completion times'
/// percentiles.
inline constexpr std::size_t kListedFlows = 32;

/// The table: the cluster and flows, the flows (or their completion times),
/// the makespan, re-solves and the hottest links.
void write_flows_table(std::ostream& out, const FlowsRun& run);

/// The CSV: a row per flow, streamed.
void write_flows_csv(std::ostream& out, const FlowsRun& run);

/// The JSON document (schema_version 1; docs/output_formats.md), its
/// "flows" streamed: the bytes of nlohmann's dump(1) of the whole document.
void write_flows_json(std::ostream& out, const FlowsRun& run);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_FLOWS_RUN_H_
