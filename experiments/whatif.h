// File: experiments/whatif.h
//
// What-if simulation of DLRM training: for each cluster size, build the
// cluster, plan the sharding, build one training iteration and simulate it
// on the network model; report iteration time, throughput, scaling, a
// breakdown and the bottleneck. The `zionsim whatif` command is a thin layer
// over run_whatif(); tests call it directly.

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/distribution.h"
#include "experiments/knobs.h"
#include "experiments/scenario.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/executor.h"
#include "models/execution/network_backend.h"
#include "models/execution/op_graph.h"
#include "models/execution/timeline.h"
#include "topology/cluster_file.h"
#include "workloads/dlrm_iteration.h"

namespace zx::experiments {

/// Ranks a --timeline shows (Perfetto slows down beyond a few dozen tracks
/// of busy GPUs); transfers touching them and their NICs are shown too.
inline constexpr int kTimelineRanks = 64;

/// What whatif simulates (the scenario, experiments/scenario.h) and how this
/// process runs it.
struct WhatIfOptions : experiments::Scenario {
  int threads = 0;  ///< 0: all cores
  /// Refuse, before simulating, sizes whose estimated memory (the sizes
  /// running at once, together) exceeds what the machine has available
  /// (experiments/memory_estimate.h); false tries anyway.
  bool memory_check = true;
};

struct Breakdown {
  double compute_ms = 0;
  double exposed_all_to_all_ms = 0;   ///< all-to-all, reduce-scatter, all-gather of embeddings
  double exposed_all_reduce_ms = 0;
  double other_ms = 0;                ///< waiting: imbalance, dependencies, launch gaps
  double overlapped_communication_ms = 0;
  /// Part of compute_ms: compute slowed because communication kernels held
  /// SMs (models::SmContention), i.e. what compute would save without it.
  double compute_slowed_by_communication_ms = 0;
};

struct WhatIfPoint {
  int variant = 0;  ///< index into run_whatif_variants' list (0 for run_whatif)
  int nodes = 0;
  int gpus = 0;
  std::string gpu;  ///< the GPU profile simulated (its name; a profile file's own)
  /// The communication library's latencies the cluster ran with.
  topology::CommunicationLatencies communication;
  std::int64_t global_batch = 0;
  bool fits = true;
  std::string reason;  ///< why it does not fit
  double iteration_time_ms = 0;
  double samples_per_s = 0;
  double scaling_efficiency = 0;  ///< throughput per GPU relative to the smallest fitting size
  Breakdown breakdown;
  std::string bottleneck;  ///< the largest breakdown part and the busiest link
  double load_imbalance = 1;
  /// Tables the planner's balancing split column-wise (models::ShardingPlan).
  std::int64_t balance_split_tables = 0;
  /// The GPU with the most kernel time (union of its compute intervals;
  /// the lowest rank on ties): a straggler (--degrade gpu:R) or the
  /// heaviest embedding shard.
  int busiest_gpu_rank = 0;
  double busiest_gpu_compute_ms = 0;
  /// With sharding "search": simulations it took, the planner's plan's
  /// iteration time and the moves kept (0 simulations: no search).
  int search_simulations = 0;
  double search_start_iteration_time_ms = 0;
  int search_moves = 0;
  std::int64_t host_memory_tables = 0;
  double max_hbm_gbyte = 0;
  /// The fullest GPU's HBM for the iteration besides embeddings, and the
  /// share of HBM the plan kept from embeddings (models/dlrm/memory.h).
  double max_iteration_hbm_gbyte = 0;
  double hbm_reserve_fraction = 0;
  /// Host-memory tables' HBM-cache hit rate (mean over their lookups).
  double cache_hit_rate = 1;
  /// What `--algo KIND=auto` ran: one choice per distinct call.
  std::vector<models::AutoChoice> auto_choices;
  /// What NCCL's cost model picked, where `--algo KIND=nccl` ran it.
  std::vector<models::AutoChoice> nccl_choices;
  double wall_seconds = 0;  ///< how long simulating this point took
  std::uint64_t fingerprint = 0;
  /// What the simulation did (where the wall time went): engine events,
  /// flows started, re-solves of the bandwidth sharing and the flows they
  /// covered (a flow re-solved five times counts five).
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t resolves = 0;
  std::uint64_t resolved_flows = 0;
  /// For --timeline: the graph and result of this point (kept only when asked).
  std::optional<models::OpGraph> graph;
  std::optional<models::ExecutionResult> execution;
  /// Transfers per NIC and the busiest links' utilisation over time, of
  /// the first kTimelineRanks ranks (kept with the graph).
  std::optional<models::NetworkActivity> network_activity;
};

/// Called about every 10 s of wall time while a size is simulated: its
/// variant (0 without variants) and node count, where its run stands and the
/// seconds it has taken so far.
using RunningHook =
    std::function<void(int variant, int nodes, const models::ExecutionProgress& progress, double seconds)>;

/// Runs every point (in parallel, results in the order of options.nodes).
/// `keep_trace_of` names a node count whose graph and result to keep.
/// `progress` (may be empty) is called after each point finishes, `running`
/// (may be empty) while one runs long; never two calls at once. Neither
/// changes a result.
/// Throws zx::InputError for bad input (the first problem of any point).
std::vector<WhatIfPoint> run_whatif(const WhatIfOptions& options, std::optional<int> keep_trace_of = {},
                                    const std::function<void(const WhatIfPoint&, int done, int total)>& progress = {},
                                    const RunningHook& running = {});

/// One size's cluster and embedding plan: what `whatif` simulates and `plan`
/// prints.
struct PlannedSize {
  topology::LoadedCluster cluster;
  int nodes = 0;
  int gpus = 0;
  int gpus_per_node = 0;
  std::int64_t batch_per_gpu = 0;
  models::DeviceProfile device;
  models::DlrmModel model;
  models::ShardingPlan plan;  ///< plan.fits false: does not fit, plan.reason says why
};

/// Loads the cluster at `nodes`, the GPU profile and the model, and plans
/// the sharding as o.sharding says. Throws zx::InputError for bad input.
PlannedSize plan_whatif_size(const WhatIfOptions& o, int nodes);

/// The iteration options `whatif` builds each size's iteration with.
/// "sgd", "adagrad" or "adam" (checked by the caller).
models::DenseOptimizer parse_dense_optimizer(const std::string& name);

workloads::IterationOptions iteration_options(const WhatIfOptions& o, std::int64_t batch_per_gpu);

struct WhatIfVariant;

/// Where a sweep's points run (experiments/distribution.h). The default: all
/// of them here, on the threads of the first variant's `threads`.
struct SweepPlacement {
  /// Only this share of the points (tasks numbered variant by variant, size
  /// by size); the others are left default and not in `computed`. Scaling
  /// efficiency needs every point and is left 0.
  std::optional<experiments::Shard> shard;
  /// Spread over the ranks of the MPI job when one runs (experiments::Mpi).
  bool mpi = false;
  /// Points read back from shard files (zionsim merge) by task, as
  /// task_outcome_to_json wrote them, `merged_source` naming them in errors:
  /// nothing is simulated.
  const std::map<std::size_t, nlohmann::json>* merged = nullptr;
  std::string merged_source;
  /// Points kept by an earlier run (--results, experiments/sweep_cache.h): a
  /// task's kept point, or nullopt to simulate it; and where a simulated
  /// point is kept. Either may be empty.
  std::function<std::optional<WhatIfPoint>(std::size_t task)> kept;
  std::function<void(std::size_t task, const WhatIfPoint& point)> keep;
};

/// What a placed sweep gives: the points (as run_whatif_variants), which
/// tasks ran here (every one, without a shard), and whether this process
/// prints them (false on the MPI ranks other than 0, whose points went to
/// rank 0).
struct PlacedSweep {
  std::vector<std::vector<WhatIfPoint>> points;
  std::vector<std::size_t> computed;  ///< task indices, ascending
  bool prints = true;
};

/// The cost of each task of a sweep for placing it (its GPUs squared, the
/// all-to-all's pairs; 1 for a size whose cluster cannot be read).
std::vector<double> sweep_task_costs(const std::vector<WhatIfOptions>& variants);

/// As run_whatif for several variants at once (the points of all of them
/// share the threads of the first variant's `threads`): result i holds
/// variant i's points, each with `variant` = i, scaling measured within the
/// variant. Every variant is checked (check_whatif_options) before any point
/// runs; an error names the variant it came from. No timeline is kept.
std::vector<std::vector<WhatIfPoint>> run_whatif_variants(
    const std::vector<WhatIfVariant>& variants,
    const std::function<void(const WhatIfPoint&, int done, int total)>& progress = {},
    const RunningHook& running = {});

/// As run_whatif_variants, placed: a share of the points, over MPI ranks, or
/// read back from shards. Errors are the one-process run's: the first
/// failing point's in task order (on rank 0 for MPI; a shard's own first).
PlacedSweep run_whatif_placed(const std::vector<WhatIfVariant>& variants, const SweepPlacement& placement,
                              const std::function<void(const WhatIfPoint&, int done, int total)>& progress = {},
                              const RunningHook& running = {});

/// Checks, without simulating, what can be checked of `o` before a long
/// sweep starts: the cluster loads (at each size), the GPU profile, the
/// model, the sharding scheme and the collective algorithms exist. Throws
/// zx::InputError as the simulation would.
void check_whatif_options(const WhatIfOptions& o);

/// The degradations the cluster runs with: the cluster file's `degrade`
/// list, then --degrade's (topology::LoadedCluster::degradations). Loads the
/// cluster at the first size; throws zx::InputError as loading does.
std::vector<std::string> effective_degradations(const WhatIfOptions& o);

// --- Sweeps over knobs other than the cluster size (--vary) -----------------

/// One knob of a sweep and the values to try: --vary KEY=V1,V2,...
using WhatIfVariation = Variation;

/// Parses "KEY=V1,V2,..." (at least one value, none empty, no value twice,
/// the key one whatif takes, every value valid for it). Throws
/// zx::InputError naming --vary.
WhatIfVariation parse_whatif_variation(const std::string& text);

/// Sets knob `key` of `o` to `value` (experiments/knobs.h). Throws
/// zx::InputError naming --vary for an unknown key or a bad value.
void apply_whatif_variation(WhatIfOptions& o, const std::string& key, const std::string& value);

/// One combination of the variations' values and the options it gives.
struct WhatIfVariant {
  Settings settings;  ///< (key, value), in --vary order
  WhatIfOptions options;
  /// "nic-gbit=400 a2a-precision=fp16"; "base" when nothing varies.
  std::string label() const;
};

/// Every combination of the variations' values applied to `base`, the first
/// variation outermost (its values change slowest), values in the order
/// given. No variations: `base` alone. Throws zx::InputError for a key given
/// twice.
std::vector<WhatIfVariant> expand_whatif_variations(const WhatIfOptions& base,
                                                    const std::vector<WhatIfVariation>& variations);

/// Sensitivity: the base, then one variant per resource with that resource
/// `factor` times better and everything else as the base: NIC bandwidth
/// (backend NICs, or the front-end NICs of a cluster without), NVLink
/// bandwidth, HBM bandwidth, GPU peak FLOP/s (every data type), host-to-
/// device copy bandwidth, and the rack uplinks (oversubscription divided by
/// `factor`, at least 1) when oversubscribed. Each variant's one setting
/// ("sensitivity", "nic.bandwidth_gbit_per_s=400") says what changed; the
/// values are the base's (its cluster at the first size, its GPU, --set
/// included) times `factor`. Requires a preset-based cluster and factor > 1;
/// throws zx::InputError naming --sensitivity otherwise.
std::vector<WhatIfVariant> sensitivity_variants(const WhatIfOptions& base, double factor);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_H_
