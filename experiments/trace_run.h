// File: experiments/trace_run.h
//
// A job's trace simulated on a cluster (`zionsim run`; docs/traces.md is the
// user's guide): the trace, in zionsim's format, Chakra's or Kineto's (a file
// per rank), loaded and checked against the cluster; the stack built as the
// scenario says (experiments/stack.h); the iteration simulated once, or once
// per combination of the varied knobs (experiments/knobs.h), those in
// parallel or over the ranks of an MPI job (experiments/parallel.h). The
// command reads its flags into a TraceRunRequest and prints the report:
//
//   TraceRunRequest request;
//   request.scenario.cluster.nodes = 2;
//   request.trace = {"job.trace.json"};
//   request.vary = {parse_knob_variation("nic-gbit=100,400", Sweeper::kRun)};
//   const std::optional<TraceRunReport> report = run_trace(request);
//   report->variants[1].summary.iteration_ms;  // with 400 Gb/s NICs

#ifndef ZIONSIM_EXPERIMENTS_TRACE_RUN_H_
#define ZIONSIM_EXPERIMENTS_TRACE_RUN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "experiments/placement.h"
#include "experiments/scenario.h"
#include "models/compute/device_profile.h"
#include "models/execution/executor.h"
#include "models/execution/network_activity.h"
#include "models/execution/network_backend.h"
#include "models/execution/op_graph.h"
#include "sim/time.h"
#include "sim/units.h"

namespace zx::experiments {

/// What to simulate. The scenario's cluster (cluster.nodes its size), GPU
/// and profile, fidelity and completion quantum, plug-ins and schedule files,
/// algorithms (kind -> name, over models::default_collective_algorithms())
/// and algorithm options are used; its other fields are a DLRM iteration's,
/// which a trace replaces.
struct TraceRunRequest {
  Scenario scenario;
  /// Trace files or directories of them (expand_trace_paths).
  std::vector<std::string> trace;
  /// "detect", "zionsim", "chakra" or "kineto".
  std::string trace_format = "detect";
  /// The knobs varied (parse_knob_variation with Sweeper::kRun): one run
  /// per combination, each summed up. None: one run, in detail.
  std::vector<Variation> vary;
  /// What the command line set besides the varied knobs, which a varied knob
  /// must not contradict (check_knob_conflicts).
  GivenFlags given;
  /// Keep what a timeline is drawn from (every flow's record, the graph and
  /// the network activity of the first kTimelineRanks ranks). One run only:
  /// with `vary`, an error naming --timeline.
  bool timeline = false;
  int threads = 0;  ///< variants simulated at once; 0: one per core
  /// Refuse, before simulating, runs estimated to need more memory than the
  /// machine has available (experiments/memory_estimate.h); false tries anyway.
  bool memory_check = true;
  /// With `vary`: a share of the variants (--shard), variants kept in a
  /// directory (--results) or read back from shards (zionsim merge),
  /// experiments/placement.h; a variant's identity there is the command
  /// less kRunChoosingFlags and its settings. Without `vary` (one run, in
  /// detail) none may be asked for.
  PlacementRequest placement;
};

/// run's flags that choose which variants exist or where output goes,
/// with the values each takes (point_shaping_words): --vary, --format, ...
const std::map<std::string, int>& run_choosing_flags();

/// What the command parses and checks of its own flags, asked for where
/// `zionsim run` has always made those checks, so that of two mistakes in
/// one command line the same one is reported. Each may be left empty: the
/// scenario's values are used.
struct TraceRunHooks {
  /// The algorithms chosen for kinds (--algo: kind -> name), instead of
  /// scenario.algorithms; a variant's varied kinds go over them. Asked when
  /// each variant is checked and when the one run's stack is built.
  std::function<std::map<std::string, std::string>()> algorithms;
  /// The algorithms' options (--options: name -> JSON), instead of
  /// scenario.algorithm_options. Asked before the trace is loaded.
  std::function<std::map<std::string, std::string>()> algorithm_options;
  /// Called once every input is checked, before the first simulation (the
  /// command opens its output files: an unwritable path costs no run).
  std::function<void()> before_simulating;
};

/// One run summed up. Means are over the trace's ranks; per rank,
/// communication (the union of its communication ops' intervals) is the
/// exposed part (no compute op running) plus the overlapped part, to the
/// picosecond, so the means add up to rounding.
struct TraceRunSummary {
  int ranks = 0;
  std::size_t ops = 0;
  std::string cluster;  ///< the cluster's source ("preset zionex")
  double iteration_ms = 0;
  double compute_ms = 0;  ///< union of compute-op intervals
  double communication_ms = 0;
  double exposed_ms = 0;
  double overlapped_ms = 0;
  /// Per op category (the trace's: "compute", "all_to_all", ... as whatif
  /// --emit-trace writes them; the op's kind, "collective", where it names
  /// none): its ops' time summed, mean over ranks
  /// (models::ExecutionResult::time_by_category).
  std::map<std::string, double> time_by_category_ms;
  /// Communication by category (so by collective kind where the trace names
  /// them): the time its ops run while no compute op runs on the rank,
  /// mean over ranks. Two categories may be exposed at the same instant.
  std::map<std::string, double> exposed_by_category_ms;
  std::uint64_t fingerprint = 0;  ///< the simulator's: equal runs, equal bits
  std::string busiest_link;       ///< "SRC->DST": the most bytes for its capacity
  std::vector<models::AutoChoice> auto_choices;  ///< what `auto` ran
  std::vector<models::AutoChoice> nccl_choices;  ///< what NCCL's cost model picked
};

/// One rank of the one run, ms. idle_ms is the iteration less compute_ms (as
/// the command has always printed it); communication_ms is exposed_ms plus
/// overlapped_ms.
struct RankTimes {
  int rank = 0;
  double compute_ms = 0;
  double idle_ms = 0;
  double communication_ms = 0;
  double exposed_ms = 0;
  double overlapped_ms = 0;
  /// Part of compute_ms: compute slowed because communication kernels held
  /// SMs (models::SmContention).
  double slowed_by_communication_ms = 0;
};

/// An op of the critical path.
struct CriticalPathOp {
  std::uint32_t op = 0;  ///< index in the trace's graph
  int rank = 0;
  std::string stream;
  std::string name;  ///< the trace's; may be empty
  std::string kind;  ///< models::to_string(OpKind)
  sim::TimePoint start;
  sim::TimePoint end;
};

/// A link of the network and what crossed it.
struct LinkLoad {
  std::uint32_t id = 0;
  std::string name;  ///< "SRC->DST"
  sim::Bytes bytes;
  sim::Duration busy;  ///< time with at least one flow on it
};

/// The one run (no varied knobs) in detail.
struct TraceRunDetail {
  std::vector<RankTimes> ranks;
  std::vector<CriticalPathOp> critical_path;  ///< first to last
  /// The 5 links that carried the most bytes for their capacity, most first.
  std::vector<LinkLoad> hottest_links;
  /// With request.timeline: what the timeline shows.
  std::optional<models::OpGraph> graph;
  std::optional<models::ExecutionResult> execution;
  std::optional<models::NetworkActivity> network_activity;
};

/// A variant: the knobs set, the scenario they make (its algorithms those the
/// run used, hooks' included), and its run.
struct TraceRunVariant {
  Settings settings;  ///< empty for the one run
  Scenario scenario;
  TraceRunSummary summary;
  /// The first variant's iteration time over this one's; 0 for a run that
  /// takes no time.
  double speedup = 0;
};

struct TraceRunReport {
  std::string trace_name;  ///< the one file, or "N files"
  /// One per combination of request.vary, first varied knob outermost; one
  /// (empty settings) without.
  std::vector<TraceRunVariant> variants;
  /// Without request.vary: the one run in detail.
  std::optional<TraceRunDetail> detail;
  /// With a share of the variants (request.placement.shard): the shard file
  /// to print instead of the report (experiments/sweep_shards.h).
  std::optional<nlohmann::ordered_json> shard;
};

/// Loads and checks every variant (cluster, GPU, algorithms, trace; the
/// trace's ranks must be GPUs of the cluster, and a GPU --degrade slows must
/// be one of them) before any runs, then simulates them. The one run (no
/// varied knobs) reports its progress every 10 s of wall time
/// (write_progress) and stops at an interrupt (check_interrupt). Inside an
/// MPI job the variants are spread over its ranks; nullopt on the ranks other
/// than 0. Throws zx::InputError naming the flag, file or variant at fault
/// (an error of one of several variants names it).
std::optional<TraceRunReport> run_trace(const TraceRunRequest& request, const TraceRunHooks& hooks = {});

/// The files of `paths`: each file as given, each directory's trace files
/// (*.json, *.et, and either gzip-compressed) in natural name order (rank 10
/// after rank 9: one file per rank for Chakra and Kineto).
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths);

/// The trace of `paths` in `format` ("detect": Kineto when the first file's
/// root object has traceEvents, zionsim's when it has schema_version, else
/// Chakra when it looks like it, else zionsim's). A zionsim trace's kernels
/// are priced on `device`; its collectives may name `algorithms`.
models::OpGraph load_any_trace(const std::vector<std::string>& paths, const std::string& format,
                               const models::DeviceProfile& device, const std::vector<std::string>& algorithms);

/// A summary as JSON and back, losslessly (the bits one process would hold):
/// what an MPI rank sends rank 0.
nlohmann::ordered_json encode_trace_summary(const TraceRunSummary& summary);
TraceRunSummary decode_trace_summary(const nlohmann::json& json);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_TRACE_RUN_H_
