// File: experiments/scenario.h
//
// One experiment, typed: the cluster asked for and its sizes, the GPU, the
// model, how its tables are sharded, the collective algorithms and data
// types, the network model's fidelity, and every other knob a sweep can turn
// (experiments/knobs.h). What a command parses its flags into and what the
// simulation is built from; with a JSON form that reads back to the same
// value and a hash that names it.
//
//   Scenario s;                       // the defaults: model A on ZionEX
//   s.nodes = {8, 16};
//   apply_knob(s, "nic-gbit", "400", Sweeper::kWhatif);
//   const nlohmann::ordered_json j = scenario_to_json(s);
//   assert(scenario_from_json(j, "x.json") == s);
//   scenario_hash(s);                 // "3f2a..." (16 hex digits)
//
// The scenario names files (a cluster, a model, a profile, a sharding file,
// plug-ins) by path; its hash is of the names, not of the files' bytes
// (experiments/sweep_cache.h adds those where a result is kept).

#ifndef ZIONSIM_EXPERIMENTS_SCENARIO_H_
#define ZIONSIM_EXPERIMENTS_SCENARIO_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/compute/cost_models.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "topology/cluster_file.h"
#include "workloads/dlrm_iteration.h"

namespace zx::experiments {

/// The JSON form's version; a reader refuses any other.
inline constexpr int kScenarioSchemaVersion = 1;

/// The network model's fidelities: flow (max-min sharing, finish times to
/// the completion quantum), coalesced (finishes within a tolerance of each
/// flow's transfer time share a re-solve) and analytical (no sharing).
inline constexpr std::array<const char*, 4> kFidelities = {"flow", "coalesced", "linkshare", "analytical"};

/// The largest completion quantum taken, ns: SimGrid's default timing
/// precision (its surf/precision setting, 1e-5 s; FlowNetwork's comment
/// cites it). Each finishing instant may wait up to a
/// quantum, and an iteration has thousands of them: 1 ms made model A's
/// 67 ms iteration 599 ms.
inline constexpr double kMaxCompletionQuantumNs = 1e4;

/// models::default_collective_algorithms() of the kinds a DLRM iteration
/// runs: all_reduce, reduce_scatter, all_gather, all_to_all.
std::map<std::string, std::string> dlrm_default_algorithms();

/// "sgd", "adagrad", "adam" and back.
const char* dense_optimizer_name(models::DenseOptimizer optimizer);
/// nullopt for any other name.
std::optional<models::DenseOptimizer> parse_dense_optimizer_name(const std::string& name);

struct Scenario {
  /// The cluster (preset or file, --set overrides, --degrade parts);
  /// cluster.nodes is the one size of commands that simulate one (run,
  /// collective), `nodes` the sizes whatif sweeps.
  topology::ClusterRequest cluster;
  std::vector<int> nodes = {1};
  std::string model = "dlrm-a";
  std::optional<std::int64_t> batch_per_gpu;  ///< default 512 when no global batch
  std::optional<std::int64_t> global_batch;
  /// A scheme (models::sharding_scheme_names()), a sharding file, or
  /// "search": at each size, the plan the sharding search finds from "auto",
  /// with at most `search_budget` simulations.
  std::string sharding = "auto";
  int search_budget = 200;
  /// Per-table choices on top of `sharding` (later entries win).
  std::vector<models::TableOverride> sharding_overrides;
  std::string a2a_forward_dtype;   ///< empty: the model's embedding type
  std::string a2a_backward_dtype;  ///< empty: same as forward
  std::string all_reduce_dtype = "fp32";
  std::string gpu;      ///< a built-in profile name; empty: the cluster's
  std::string profile;  ///< a profile file (overrides gpu)
  std::string fidelity = "flow";  ///< one of kFidelities
  /// Flow finish times round up to multiples of this (FlowNetwork's
  /// completion quantum); 0: exact. The default, 10 ns, changes model A's
  /// iteration by at most 7.4e-4 of itself from 8 to 256 nodes and takes
  /// 128 nodes 3x faster than 1 ns, 64 nodes 10x faster than exact (README).
  double completion_quantum_ns = 10.0;
  /// Collective kind -> algorithm (dlrm_default_algorithms() unless set).
  std::map<std::string, std::string> algorithms = dlrm_default_algorithms();
  /// Extra collective algorithms: plug-in libraries and schedule files.
  std::vector<std::string> plugins;
  std::vector<std::string> schedules;
  /// Algorithm name -> its options as JSON text (--options NAME=JSON).
  std::map<std::string, std::string> algorithm_options;
  bool fused_embeddings = true;
  bool pipeline_input = true;
  /// Host-memory tables: fetch the next batch's cache misses beside the
  /// iteration instead of before the embedding forward.
  bool prefetch_cache = false;
  /// The HBM cache of host-memory tables (models::ShardingOptions): a hit
  /// rate for all, or Zipf lookups and an LRU cache per table; its size.
  double cache_hit_rate = models::ShardingOptions{}.host_cache_hit_rate;
  std::optional<double> index_zipf_alpha;
  double cache_fraction = models::ShardingOptions{}.host_cache_fraction;
  /// Share of HBM the planner keeps from embeddings, at least.
  double hbm_reserve = models::ShardingOptions{}.hbm_reserve_fraction;
  models::DenseOptimizer dense_optimizer = models::DenseOptimizer::kAdagrad;
  /// Bytes per embedding index: 8 (int64) or 4 (int32).
  int index_bytes = 8;
  /// Dense gradients are all-reduced in buckets of at least this many bytes
  /// (DDP's bucket_cap_mb; workloads::IterationOptions has its default).
  std::int64_t all_reduce_bucket_bytes = workloads::IterationOptions{}.all_reduce_bucket_bytes;
  /// Every table's pooling factor (lookups per sample) times this
  /// (scenario_model); 1: the model's own.
  double pooling_scale = 1;

  bool operator==(const Scenario&) const = default;
};

/// Every field, in declaration order, under its own name (snake_case);
/// numbers as numbers (doubles round-trip exactly), absent optionals as
/// null, "schema_version" first.
nlohmann::ordered_json scenario_to_json(const Scenario& scenario);

/// Reads scenario_to_json's form. A key that is absent keeps its default;
/// an unknown key, a value of the wrong type or out of its domain is an
/// error naming `source` and the value's JSON pointer (every problem at
/// once). Throws zx::InputError.
Scenario scenario_from_json(const nlohmann::json& json, const std::string& source);

/// The model `s` trains: the zoo model or model file it names
/// (models::load_model), as the scenario's knobs reshape it. Every
/// simulation and search of a scenario takes its model from here. Throws
/// zx::InputError for an unknown model or a bad model file.
models::DlrmModel scenario_model(const Scenario& s);

/// FNV-1a (64 bits, 16 hex digits) of scenario_to_json's compact text: equal
/// scenarios have equal hashes, on every build and machine, until the form
/// changes (then kScenarioSchemaVersion does).
std::string scenario_hash(const Scenario& scenario);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SCENARIO_H_
