// File: models/dlrm/sharding.h
//
// Neo's 4D parallelism for embedding tables, and a cost-based planner.
//
// Each table is placed one of five ways (ISCA 2022, section 4.1; TorchRec's
// ShardingType):
//   table-wise       the whole table on one GPU
//   row-wise         rows split evenly over all GPUs
//   column-wise      the embedding dimension split into column shards,
//                    each placed table-wise
//   table-row-wise   the table on one node, rows split over its GPUs
//                    (hierarchical: reduce-scatter inside the node, all-to-all across)
//   data-parallel    replicated on every GPU (gradients all-reduced)
//
// The planner estimates each shard's cost (fused TBE forward + backward
// time for its share of lookups at the given per-GPU batch) and places
// shards greedily, largest first, on the least-loaded GPU whose HBM still has
// room (longest-processing-time scheduling). When the tables do not divide
// over the GPUs, "auto" splits those that left a GPU above the mean
// column-wise, in as many even shards as balance the GPUs best, if that
// lowers the busiest GPU's embedding work plus exchange. Memory per shard
// counts the weights and the row-wise AdaGrad state (one fp32 per row). When
// the tables do not fit in HBM, the largest tables move to host memory (DDR)
// behind an HBM cache with the given hit rate (ISCA 2022, section 4.3); if
// even that does not fit, the plan says so with the numbers and is not
// simulated.

#ifndef ZIONSIM_MODELS_DLRM_SHARDING_H_
#define ZIONSIM_MODELS_DLRM_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"

namespace zx::models {

enum class ShardingKind { kTableWise, kRowWise, kColumnWise, kTableRowWise, kDataParallel };

std::string_view to_string(ShardingKind kind);

/// One piece of one table on one GPU.
struct Shard {
  int rank = 0;
  std::int64_t rows = 0;
  std::int64_t dim = 0;
  /// Share of the table's lookups this shard serves (rows / table rows for
  /// row-wise shards, 1 for table-wise, column-wise and replicas).
  double lookup_share = 1.0;
};

struct TablePlacement {
  std::int64_t table = 0;  ///< index among the model's expanded tables
  std::int64_t group = 0;  ///< index into DlrmModel::tables
  ShardingKind kind = ShardingKind::kTableWise;
  std::vector<Shard> shards;
  /// In host memory behind an HBM cache (only the cache is in HBM).
  bool host_memory = false;
  /// Host-memory tables: the share of lookups the HBM cache serves.
  double cache_hit_rate = 1.0;
};

/// Where a table's weights live: HBM, or host memory (DDR) behind an HBM
/// cache; kAuto lets the planner move the largest tables to host memory when
/// HBM is short.
enum class TableMemory { kAuto, kHbm, kHost };

std::string_view to_string(TableMemory memory);

/// A user's choice for one table (from a sharding file): its kind, and for
/// table-wise tables the GPU, for column-wise tables the width and GPU of each
/// column shard, for table-row-wise tables the node; and its memory.
struct TableOverride {
  std::int64_t table = 0;  ///< index among the model's expanded tables
  ShardingKind kind = ShardingKind::kTableWise;
  int rank = -1;  ///< table-wise: the GPU; -1 lets the planner choose
  int node = -1;  ///< table-row-wise: the node; -1 lets the planner choose
  /// Column-wise: the GPU of each column shard, in column order (one per
  /// entry of `columns`, or per ShardingOptions::column_shard_dim columns);
  /// empty lets the planner choose.
  std::vector<int> ranks;
  /// Column-wise: each shard's width in columns, in column order (they add
  /// up to the table's dim); empty: column_shard_dim each, the last narrower.
  std::vector<std::int64_t> columns;
  TableMemory memory = TableMemory::kAuto;

  bool operator==(const TableOverride&) const = default;
};

struct ShardingOptions {
  /// "auto", or one kind for every table.
  std::string scheme = "auto";
  /// Per-table choices that take precedence over `scheme` (sharding files).
  std::vector<TableOverride> overrides;
  std::int64_t batch_per_gpu = 512;
  /// Fraction of HBM kept from embeddings for dense weights, activations,
  /// exchange buffers and workspace; at least, since the planner raises it
  /// when a GPU's iteration needs more (models/dlrm/memory.h).
  double hbm_reserve_fraction = 0.25;
  /// The dense optimizer, whose state the reserve must hold.
  DenseOptimizer dense_optimizer = DenseOptimizer::kAdagrad;
  /// Bytes per embedding index: 8 (int64) or 4 (int32).
  int index_bytes = 8;
  /// Column-wise shards are at most this many columns wide.
  std::int64_t column_shard_dim = 64;
  /// Tables smaller than this are replicated (data-parallel) by "auto".
  double data_parallel_max_bytes = 4.0 * 1024 * 1024;
  /// Host (DDR) memory per node for tables that do not fit in HBM; 0 disables.
  /// whatif and plan take the cluster's (topology::ClusterSpec::host_memory).
  double host_memory_bytes_per_node = 1.5e12;  // ZionEX: 1.5 TB DDR per node (ARCHITECTURE.md)
  /// Share of host memory tables may use; the rest is the OS, the data
  /// loader and pinned staging buffers (assumption: 10%).
  double host_memory_usable_fraction = 0.9;
  /// HBM cache in front of host-memory tables: fraction of lookups served
  /// from HBM, the same for every table (unless index_zipf_alpha is set).
  double host_cache_hit_rate = 0.9;  // assumption, as in the paper's UVM-cache experiments
  /// HBM given to the cache of a host-memory table, as a fraction of its size.
  double host_cache_fraction = 0.05;  // assumption
  /// When set, lookups are Zipf(alpha) over each table's rows and each
  /// host-memory table's hit rate is that of an LRU cache of
  /// host_cache_fraction of the rows of each of its shards
  /// (models/dlrm/cache_model.h), instead of host_cache_hit_rate. Unset, a
  /// table group's own TableGroup::zipf_alpha does the same for its tables.
  std::optional<double> index_zipf_alpha;
  /// One GPU's rate for the embedding exchange (its share of the NICs across
  /// servers, NVLink inside one), which "auto" weighs against embedding work
  /// when it splits tables to balance the GPUs; 0 weighs the work alone.
  double exchange_bytes_per_second = 0;
  /// Bytes per pooled value on the wire, forward and backward
  /// (--a2a-precision); 0: the embeddings' type.
  int exchange_forward_bytes = 0;
  int exchange_backward_bytes = 0;
  /// "auto" splits tables column-wise to balance the GPUs (see the top of
  /// this file); false keeps every table it places table-wise whole.
  bool split_to_balance = true;
};

struct GpuLoad {
  double hbm_bytes = 0;           ///< embedding weights, state and caches
  /// Host memory of this GPU's node that its host-memory shards take
  /// (weights and state; their caches are in hbm_bytes).
  double host_bytes = 0;
  double embedding_seconds = 0;   ///< estimated TBE forward + backward time
  std::int64_t shards = 0;
  /// HBM the iteration needs besides the embeddings (models/dlrm/memory.h).
  double iteration_bytes = 0;
};

struct ShardingPlan {
  std::vector<TablePlacement> tables;
  std::vector<GpuLoad> gpus;
  bool fits = true;
  /// Why not, with the numbers, when !fits.
  std::string reason;
  double hbm_budget_bytes = 0;  ///< per GPU, after the reserve
  /// The share of HBM kept from embeddings: ShardingOptions's, or more when
  /// a GPU's iteration needs it (a large batch).
  double hbm_reserve_fraction = 0;
  /// Hit rate of the HBM cache in front of host-memory tables: the fixed
  /// one, or with index_zipf_alpha the mean over their lookups (1 without
  /// any); each table's is TablePlacement::cache_hit_rate.
  double host_cache_hit_rate = 1.0;
  /// Balancing (auto): how many tables it split column-wise, into how many
  /// shards in all, and load_imbalance() with those tables whole; 0, 0 and
  /// load_imbalance() when it split none.
  std::int64_t balance_split_tables = 0;
  std::int64_t balance_split_shards = 0;
  double whole_load_imbalance = 1.0;
  /// max / mean of embedding_seconds over GPUs (1 is perfect balance).
  double load_imbalance() const;
  double max_hbm_bytes() const;
  std::int64_t host_memory_tables() const;
};

/// Valid scheme names: auto, table_wise, row_wise, column_wise, table_row_wise, data_parallel.
std::vector<std::string> sharding_scheme_names();

/// Reads a sharding file (docs/sharding_files.md) for `model` on `num_gpus`
/// GPUs in servers of `gpus_per_node`:
///   {"schema_version": 1, "default": "auto",
///    "tables": [{"table": 0, "kind": "row_wise"},
///               {"group": "cat_20", "kind": "column_wise"},
///               {"table": 7, "kind": "table_wise", "rank": 3}]}
/// "group" applies to every table of a named table group. Throws
/// zx::InputError with every problem at its JSON pointer.
ShardingOptions load_sharding_file(const std::string& path, const DlrmModel& model, int num_gpus,
                                   int gpus_per_node);
ShardingOptions parse_sharding_file(std::string_view text, const std::string& source, const DlrmModel& model,
                                    int num_gpus, int gpus_per_node);

/// Plans the embedding tables of `model` over `num_gpus` GPUs in servers of
/// `gpus_per_node`. Throws zx::InputError for an unknown scheme or bad
/// options; a model that does not fit comes back with fits == false.
ShardingPlan plan_sharding(const DlrmModel& model, int num_gpus, int gpus_per_node,
                           const DeviceProfile& device, const ShardingOptions& options);

/// A sharding file (docs/sharding_files.md) that pins every table of `plan`
/// where it is: its kind, its GPU (table-wise), the width and GPU of each
/// column shard (column-wise), its node (table-row-wise) and its memory. Planning with it
/// on the same GPUs gives the same plan again, shard for shard. The plan must
/// fit. `description` goes into the file's "description", `model` (when
/// given) into its "model", which a reader checks against its model.
std::string sharding_file_text(const ShardingPlan& plan, int gpus_per_node, const std::string& description,
                               const std::string& model = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_DLRM_SHARDING_H_
