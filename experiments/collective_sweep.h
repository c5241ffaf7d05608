// File: experiments/collective_sweep.h
//
// The nccl-tests sweep of `zionsim collective`: one collective over a range
// of message sizes, for each algorithm of a list and each combination of
// --vary's knobs, each size a simulation of its own on an idle network.
// Each row has nccl-tests' time, algorithm bandwidth (size / time) and bus
// bandwidth (algbw x the kind's factor, nccl-tests' doc/PERFORMANCE.md),
// and for NCCL's cost model and the tuner ("auto") what they picked. The
// rows run on threads, or over the ranks of an MPI job (parallel.h).

#ifndef ZIONSIM_EXPERIMENTS_COLLECTIVE_SWEEP_H_
#define ZIONSIM_EXPERIMENTS_COLLECTIVE_SWEEP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/knobs.h"
#include "experiments/placement.h"
#include "experiments/result_schema.h"
#include "experiments/scenario.h"
#include "experiments/stack.h"
#include "models/collectives/kinds.h"
#include "models/execution/network_backend.h"
#include "topology/cluster_file.h"
#include "topology/presets.h"

namespace zx::experiments {

/// "8", "64K", "1M", "2G": bytes, binary multiples, as nccl-tests reads -b
/// and -e. Throws zx::InputError naming `flag` for anything else, or more
/// than 1e15 bytes (at 1 GB/s, a tenth of the picosecond clock's range).
std::int64_t parse_message_size(const std::string& text, const std::string& flag);

/// nccl-tests' bus bandwidth factor for `ranks` ranks (doc/PERFORMANCE.md of
/// nccl-tests): 2(n-1)/n for all-reduce; (n-1)/n for reduce-scatter,
/// all-gather and all-to-all; 1 for broadcast and reduce.
double bus_factor(models::collectives::CollectiveKind kind, int ranks);
/// The factor as the table's footnote writes it: "2(n-1)/n", "(n-1)/n", "1".
std::string_view bus_factor_formula(models::collectives::CollectiveKind kind);

/// The message sizes from `lo` to `hi` by `factor`, rounded down to whole
/// elements of `element_bytes`; a step that lands on the size before it
/// adds none, and a sweep from 0 has a zero-byte row and continues from one
/// element. Throws zx::InputError naming --step-factor for more than
/// `max_points` sizes (a factor of 1.000001 would otherwise run for days).
std::vector<std::int64_t> sweep_sizes(std::int64_t lo, std::int64_t hi, double factor, int element_bytes,
                                      int max_points);

/// A Scenario{} with an exact network (no completion quantum): what a
/// collective sweep times by default.
inline Scenario exact_scenario() {
  Scenario s;
  s.completion_quantum_ns = 0;
  return s;
}

struct CollectiveSweepRequest {
  models::collectives::CollectiveKind kind = models::collectives::CollectiveKind::kAllReduce;
  models::collectives::DataType dtype = models::collectives::DataType::kFp32;
  /// --quantize: the wire's type; each rank converts its buffer before and
  /// after, on its GPU (models/compute convert()).
  std::optional<models::collectives::DataType> wire;
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = std::int64_t{128} << 20;
  double step_factor = 2;
  int max_points = 1000;  ///< of sizes, and of sizes x variants
  /// Algorithms, a column each; empty: all_reduce's ring, or the default
  /// of the kind (models::default_collective_algorithms()).
  std::vector<std::string> algorithms;

  /// What the sweep shares with every command: the cluster (cluster.nodes
  /// its size), the GPU profile (gpu or profile: reductions and
  /// quantization), the network's fidelity and completion quantum (exact by
  /// default here), and the plug-ins and schedule files. The model fields
  /// are not used.
  Scenario scenario = exact_scenario();
  int ranks = 0;        ///< the first N GPUs; 0: all of each variant's
  /// --vary KEY=V1,V2,... (the knobs of Sweeper::kCollective), as given:
  /// parsed after the sizes are checked, so that errors come in the order
  /// the command has always reported them.
  std::vector<std::string> vary;
  /// The knob flags given besides --vary (check_knob_conflicts).
  std::set<std::string> flags_given;

  std::vector<std::string> options;  ///< NAME=JSON, as --options gives them
  int threads = 0;                   ///< rows simulated in parallel; 0: one per core
  /// A share of the rows (--shard), rows kept in a directory (--results) or
  /// read back from shards (zionsim merge): experiments/placement.h. A row's
  /// identity there is the command less kCollectiveChoosingFlags, its
  /// variant's settings, its algorithm and its size.
  PlacementRequest placement;
};

/// collective's flags that choose which rows exist or where output goes,
/// with the values each takes (point_shaping_words): --min-bytes, --algo,
/// --vary, --format, ...
const std::map<std::string, int>& collective_choosing_flags();

/// One size of one algorithm on one variant.
struct CollectiveSweepRow {
  std::size_t variant = 0;
  int ranks = 0;
  std::int64_t bytes = 0;  ///< per rank, before quantization
  /// The element count each rank passes to NCCL (nccl-tests' count).
  std::int64_t count = 0;
  std::string algorithm;
  double time_us = 0;
  double algbw = 0;  ///< GB/s
  double busbw = 0;  ///< GB/s
  /// What NCCL's cost model ("algorithm/protocol") or the tuner ran; empty
  /// for the other algorithms.
  std::string chosen;
  std::vector<models::AutoChoice::Candidate> candidates;  ///< what they weighed
};

/// One combination of --vary's values (none: the one variant) and what it
/// ran on.
struct CollectiveSweepVariant {
  Settings settings;
  std::string cluster;  ///< the cluster's source ("preset zionex")
  int ranks = 0;
  /// NCCL's graphs, per NCCL cost-model algorithm of the sweep, where its
  /// group has at least 2 ranks and as many on every server.
  std::vector<std::pair<std::string, NcclGraphs>> nccl_graphs;
};

/// The ring's and the double binary tree's defaults (one channel; for the
/// trees one unpipelined chunk) keep big groups cheap to simulate but
/// leave each server through one GPU and its NIC, where NCCL's use every
/// NIC. For the first variant: set for an algorithm that runs with its
/// defaults on a group of several servers with several ranks on one.
struct DefaultChannels {
  bool ring = false;
  bool double_binary_tree = false;
  int ranks_per_server = 0;  ///< the most on one server: NCCL's channels
  /// The trees' chunks to suggest: pieces of 4 MiB per tree and channel at
  /// 1 GiB on 8 channels.
  static constexpr int kTreeChunks = 16;
};

/// The advice in words, a line for each algorithm it concerns: how many
/// channels (and chunks) would leave through every NIC, and what that costs.
std::vector<std::string> channel_advice(const DefaultChannels& channels);

struct CollectiveSweepReport {
  models::collectives::CollectiveKind kind = models::collectives::CollectiveKind::kAllReduce;
  models::collectives::DataType dtype = models::collectives::DataType::kFp32;
  std::vector<std::string> algorithms;  ///< as run (the default filled in)
  std::vector<CollectiveSweepVariant> variants;
  std::vector<std::int64_t> sizes;
  /// Sizes outermost, then variants, then algorithms: a table line per size,
  /// a column per (variant, algorithm).
  std::vector<CollectiveSweepRow> rows;
  /// The first variant's communication library latencies.
  topology::CommunicationLatencies communication;
  DefaultChannels default_channels;
  /// With a share of the rows (placement.shard): the shard file to print
  /// instead of the report (experiments/sweep_shards.h); the rows are not
  /// all there.
  std::optional<nlohmann::ordered_json> shard;

  bool varied() const { return !variants.front().settings.empty(); }
  /// Whether --vary varies `knob` ("cluster").
  bool varies(std::string_view knob) const;
  /// Whether any column is NCCL's cost model (which has its own latencies).
  bool has_nccl_columns() const;
  std::size_t columns() const { return variants.size() * algorithms.size(); }
};

/// Whether `algorithm` is NCCL's cost model or the tuner: its rows say
/// what it ran (models::backend_algorithm_role).
bool picks_per_call(const std::string& algorithm);

/// Runs the sweep. Every input is checked before the first simulation:
/// sizes, variants (a variant's error says which), algorithms and their
/// options; then `before_simulating` (if any) is called (a command opens its
/// output files there: an unwritable path costs no simulation). Returns
/// nullopt on the ranks of an MPI job other than 0, which hold no rows.
/// Throws zx::InputError.
std::optional<CollectiveSweepReport> run_collective_sweep(const CollectiveSweepRequest& request,
                                                          const std::function<void()>& before_simulating = {});

/// A tuned column's choices as runs of sizes with one choice.
struct ChoiceSpan {
  std::string chosen;
  std::int64_t from_bytes = 0;
  std::int64_t to_bytes = 0;
};
/// Column `column` (variant x algorithms + algorithm) of the report.
std::vector<ChoiceSpan> choice_spans(const CollectiveSweepReport& report, std::size_t column);
/// The spans in words: "tree/LL from 1 KiB to 64 KiB; ring/LL128 at 32 MiB".
std::string describe_choices(const std::vector<ChoiceSpan>& spans);

// --- the report's schema (result_schema.h) -------------------------------------

/// The columns' labels: an algorithm's name, "ALGO VARIANT" when varied
/// ("ring nic-gbit=400").
std::vector<std::string> column_labels(const CollectiveSweepReport& report);

/// A row per CollectiveSweepRow: with --vary, the knobs (CSV), the settings
/// (JSON's "variant") and the ranks; size_bytes, count, type (not in JSON),
/// algorithm, time_us, algbw_gbyte_per_s and busbw_gbyte_per_s (GB/s; the
/// table's time, algbw and busbw); with NCCL's model or the tuner among the
/// algorithms, `chosen` and (JSON) `candidates`, absent from other rows.
Schema collective_sweep_schema(const CollectiveSweepReport& report);
std::vector<Row> collective_sweep_rows(const CollectiveSweepReport& report);

/// The table's layout: a line per size, the time and bandwidths of every
/// column side by side under its label.
TableGroups collective_sweep_groups(const CollectiveSweepReport& report);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_COLLECTIVE_SWEEP_H_
