// File: models/dlrm/internal/placement.h
//
// The stages of the sharding planner (sharding.h). plan_sharding
// (sharding.cc) calls place_tables for each reserve it tries, and again for
// tables that fell back to row-wise; place_tables runs the stages in this
// order, each a function that a test can call alone (placement_test.cc):
//
//   make_request           checks the request and derives the numbers every
//                          stage reads (HBM budget, host memory, batch)
//   choose_kinds           expands the table groups into tables, each with
//                          its estimates and the scheme's (or auto's) kind
//   spread_heavy_exchange  auto across nodes: a table whose exchange one
//                          NIC cannot carry goes table-row-wise
//   apply_overrides        a sharding file's choices win over the scheme
//   start_placement        an empty plan and the HBM all tables demand
//   assign_memory          HBM or host memory for each table; the plan
//                          does not fit when neither holds them
//   lay_out_tables         one placement per table; row-wise and
//                          data-parallel shards go where they must, the rest
//                          become pieces for the LPT pass
//   place_pieces           longest processing time first, on the
//                          least-loaded GPU (or node) with room
//   balance                auto: the tables that left a GPU above the mean
//                          go column-wise when that lowers busiest_cost
//   mean_host_hit_rate     the plan's hit rate over host-memory lookups
//
// The state the placement changes (the plan, the tables' memory, the HBM and
// host memory they take) is one copyable Placement, which balancing saves
// and restores as it tries each split. Not part of the public API.

#ifndef ZIONSIM_MODELS_DLRM_INTERNAL_PLACEMENT_H_
#define ZIONSIM_MODELS_DLRM_INTERNAL_PLACEMENT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models::internal {

inline constexpr double kRowStateBytes = 4;  // row-wise AdaGrad: one fp32 per row
// How many GPUs' shares of the exchange one table may take before auto
// spreads it. Tuned, not derived: in DLRM-DCNv2 on 2 to 32 ZionEX nodes, A100
// and H100, 3 never trained slower than keeping tables whole, while 1 to 2
// lost up to 10% on 2 nodes and 4 to 6 left gains at 4 and 8 nodes.
inline constexpr double kSpreadExchangeShares = 3;
// Balancing: a table placed whole is split column-wise when it took its GPU
// more than this share above the mean embedding work, into at most
// kMostBalancingShards shards, if that lowers the busiest GPU's work by at
// least kSplitGain. Chosen, not derived: 2% leaves LPT's small unevenness
// among unequal tables alone; model A's 4,096 tables at 24, 48 and 96 nodes
// (192, 384, 768 GPUs) balance exactly with 3 shards each.
inline constexpr double kSplitTolerance = 0.02;
inline constexpr double kSplitGain = 0.01;
inline constexpr std::int64_t kMostBalancingShards = 8;
// The share of the GPUs' HBM budget the tables may demand before the largest
// move to host memory: leaves room for uneven packing.
inline constexpr double kPackingSlack = 0.97;

/// Column shards of at most `shard_dim` columns that a `dim` splits into.
inline std::int64_t column_shards(std::int64_t dim, std::int64_t shard_dim) {
  return (dim + shard_dim - 1) / shard_dim;
}

/// "12.3 GB", "1.50 TB", "4.0 MB": sizes in the plan's messages.
std::string format_bytes(double bytes);

/// Rows of part `i` of `rows` split evenly over `parts` (the first ones one
/// more when they do not divide).
inline std::int64_t split_rows(std::int64_t rows, int parts, int i) {
  return rows / parts + (i < rows % parts ? 1 : 0);
}

/// What every stage reads: the request, and the numbers derived from it.
/// Holds references: the model, device and options must outlive it.
struct PlanRequest {
  const DlrmModel& model;
  const DeviceProfile& device;
  const ShardingOptions& options;
  int num_gpus = 0;
  int gpus_per_node = 0;
  int num_nodes = 0;
  double node_host_capacity = 0;  ///< host memory one node lends to tables
  double host_capacity = 0;       ///< all nodes' together
  std::int64_t global_batch = 0;
  int elem = 0;              ///< bytes per embedding element
  double hbm_budget = 0;     ///< per GPU, after the reserve
  double total_budget = 0;   ///< hbm_budget on every GPU

  bool is_auto() const { return options.scheme == "auto"; }
};

/// Throws zx::InputError for an unknown scheme or options out of range.
void check_request(const ShardingOptions& options, int num_gpus, int gpus_per_node);

/// check_request, then the derived numbers.
PlanRequest make_request(const DlrmModel& model, int num_gpus, int gpus_per_node, const DeviceProfile& device,
                         const ShardingOptions& options);

/// One table to place, with its estimates.
struct Candidate {
  std::int64_t table;
  std::int64_t group;
  std::int64_t rows;
  std::int64_t dim;
  double pooling;
  double bytes;    ///< weights + row-wise state
  double seconds;  ///< fused TBE forward + backward for all global lookups
  ShardingKind kind;
  bool host = false;
  double hit = 1.0;  ///< host: the HBM cache's hit rate
  /// auto chose table-row-wise in host memory: a node's GPUs cannot hold the
  /// table in HBM; if no node has host memory left for it, it goes row-wise.
  bool needs_host = false;
};

/// A piece to place on a GPU (or, table-row-wise, a node) by the LPT pass.
struct Piece {
  std::size_t placement;  ///< index into ShardingPlan::tables
  std::int64_t rows;
  std::int64_t dim;
  double share;
  double bytes;
  double seconds;
  int fixed_rank = -1;    ///< where a sharding file pins it; -1: the planner chooses
  int column_shard = -1;  ///< column-wise: which shard, for messages
};

/// Per table: its sharding-file entry, or nullptr.
using Overrides = std::vector<const TableOverride*>;

/// A table's memory as its sharding-file entry sets it (kAuto without one).
TableMemory memory_of(const Overrides& overrides, const Candidate& c);

/// The state the placement changes; balancing copies it to try each split.
struct Placement {
  ShardingPlan plan;
  std::vector<Candidate> candidates;  ///< by table index
  double demand = 0;      ///< HBM all tables take: weights, or host tables' caches
  double host_bytes = 0;  ///< host memory the host-memory tables take
};

/// Cost of a full table (all global lookups) of this shape, without the
/// per-kernel fixed costs, which a GPU pays once for all its tables.
double table_seconds(const PlanRequest& request, std::int64_t dim, double pooling);

/// A host-memory table's cost: its kernel reads its HBM cache after the
/// misses were fetched over the host link.
double host_seconds(const PlanRequest& request, const Candidate& c);

/// HBM a table takes: its weights (on every GPU if replicated), or only its
/// cache when in host memory.
double hbm_demand(const PlanRequest& request, const Candidate& c);

/// A host-memory table's cache hit rate: the fixed one, or an LRU cache of
/// the cache fraction of each shard's rows under Zipf lookups (the options'
/// alpha, else the table group's). Memoised by shard rows and alpha: Che's
/// approximation sums thousands of terms, and models have many equal tables.
class HitRates {
 public:
  double operator()(const PlanRequest& request, const Candidate& c);

 private:
  std::map<std::pair<std::int64_t, double>, double> lru_;
};

/// The model's tables, by index, with their estimates and kinds: the
/// scheme's, or auto's (small ones replicated, ones too large for half a
/// GPU's budget spread over a node or every GPU, the rest table-wise).
/// `spread_in_host`: auto may put a table too large for a node's HBM
/// table-row-wise in a node's host memory (needs_host), else row-wise.
std::vector<Candidate> choose_kinds(const PlanRequest& request, bool spread_in_host);

/// auto, across nodes: table-wise tables whose exchange would take their
/// owner's NIC more than kSpreadExchangeShares GPUs' shares go
/// table-row-wise. Does nothing otherwise.
void spread_heavy_exchange(const PlanRequest& request, std::vector<Candidate>& candidates);

/// Sets each overridden table's kind (clearing needs_host) and returns each
/// table's entry, the last where several name one. Throws zx::InputError for
/// a table that does not exist.
Overrides apply_overrides(const ShardingOptions& options, std::vector<Candidate>& candidates);

/// An empty plan over the request's GPUs and the HBM `candidates` demand.
Placement start_placement(const PlanRequest& request, std::vector<Candidate> candidates);

/// Moves table `table` to host memory: replicated tables become one
/// table-wise copy; demand and host_bytes follow.
void move_to_host(const PlanRequest& request, HitRates& hits, Placement& placement, std::size_t table);

/// Host memory for the tables a sharding file or auto puts there, then for
/// the largest of the rest (not pinned to HBM) until the others fit HBM.
/// False, with plan.fits and plan.reason set, when HBM and host memory do
/// not hold them. Throws zx::InputError for a pin to disabled host memory.
bool assign_memory(const PlanRequest& request, const Overrides& overrides, HitRates& hits, Placement& placement);

/// Adds one shard to the plan and its GPU's load (a host-memory shard's
/// `bytes` are its cache; its table's bytes go to the node's host memory).
void place_shard(const ShardingOptions& options, ShardingPlan& plan, std::size_t placement, const Shard& shard,
                 double bytes, double seconds);

/// Places `rows` split evenly over ranks first_rank .. first_rank + parts - 1,
/// each shard its share of `bytes` and `seconds`.
void place_rows(const ShardingOptions& options, ShardingPlan& plan, std::size_t placement, int first_rank, int parts,
                std::int64_t rows, std::int64_t dim, double bytes, double seconds);

/// Adds a placement per table in table order; places row-wise and
/// data-parallel tables' shards; returns the pieces of the others. Throws
/// zx::InputError for a sharding file's column shards that do not add up.
std::vector<Piece> lay_out_tables(const PlanRequest& request, const Overrides& overrides, Placement& placement);

/// The mean embedding work per GPU once `pieces` are placed: no plan's
/// busiest GPU does less.
double mean_work(const PlanRequest& request, const ShardingPlan& plan, const std::vector<Piece>& pieces);

/// Longest processing time first (biggest cost, then bytes, then table
/// order), each piece on the least-loaded GPU with room; table-row-wise
/// pieces on the least-loaded node with room. A table that fits no GPU may
/// move to host memory; an auto table-row-wise host table that fits no node
/// goes row-wise and is added to `fell_back`. False, with plan.fits and
/// plan.reason set, when a piece has no room. `over`, when given, collects
/// the tables balancing may split that left their GPU above `level`.
bool place_pieces(const PlanRequest& request, const Overrides& overrides, HitRates& hits, Placement& placement,
                  std::vector<Piece> pieces, double level, std::vector<std::size_t>* over,
                  std::vector<std::int64_t>& fell_back);

/// What balancing minimises: the busiest GPU's embedding work plus, at
/// options.exchange_bytes_per_second, the busiest GPU's exchange and the
/// indices every GPU sends to every shard's owner.
double busiest_cost(const PlanRequest& request, const Placement& placement);

/// The pieces with the tables in `over` split column-wise for k shards of
/// the most costly of them (the others in proportion, none wider than
/// column_shard_dim, none narrower than a column); marks those tables
/// column-wise in placement.plan.
std::vector<Piece> split_for_balance(const PlanRequest& request, const std::vector<Piece>& pieces,
                                     const std::vector<std::size_t>& over, std::int64_t k, Placement& placement);

/// `placement` is `before` with the pieces placed whole, which left the
/// tables in `over` above the mean: tries 2 to kMostBalancingShards shards
/// and keeps the best plan if it lowers busiest_cost by kSplitGain. Sets the
/// plan's balance_split_* and whole_load_imbalance.
void balance(const PlanRequest& request, const Overrides& overrides, HitRates& hits, const Placement& before,
             const std::vector<Piece>& pieces, const std::vector<std::size_t>& over, Placement& placement,
             std::vector<std::int64_t>& fell_back);

/// When host-memory tables' hit rates come from Zipf skew (and so differ):
/// their mean over host-memory lookups. Otherwise nullopt (the fixed rate).
std::optional<double> mean_host_hit_rate(const PlanRequest& request, const std::vector<Candidate>& candidates);

/// One placement with options.hbm_reserve_fraction of HBM kept back: all the
/// stages above. Tables that went row-wise during the placement (see
/// place_pieces) are listed in `fell_back`, cleared first.
ShardingPlan place_tables(const DlrmModel& model, int num_gpus, int gpus_per_node, const DeviceProfile& device,
                          const ShardingOptions& options, bool spread_in_host, std::vector<std::int64_t>& fell_back);

}  // namespace zx::models::internal

#endif  // ZIONSIM_MODELS_DLRM_INTERNAL_PLACEMENT_H_
