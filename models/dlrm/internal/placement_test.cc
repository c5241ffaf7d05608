// Tests of the sharding planner's stages one at a time (placement.h): the
// request's derived numbers, each table's kind, the sharding file's
// precedence, HBM and host memory, the fixed shards and pieces, LPT
// (every table once, within budget, Graham's bound), table-row-wise nodes,
// the row-wise fall-back, the balancing cost and split, and the mean hit
// rate. sharding_test.cc tests the planner as a whole.

#include "models/dlrm/internal/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/cache_model.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models::internal {
namespace {

const DeviceProfile& a100() {
  static const DeviceProfile p = builtin_device_profile("a100-40gb");
  return p;
}

TableGroup group(std::string name, std::int64_t count, std::int64_t rows, std::int64_t dim, double pooling) {
  return TableGroup{.name = std::move(name), .count = count, .rows = rows, .dim = dim, .pooling = pooling};
}

// A model of fp16 tables; the MLPs do not matter to placement.
DlrmModel model_of(std::vector<TableGroup> groups) {
  DlrmModel m;
  m.name = "test";
  m.dense_features = 16;
  m.embedding_type = DataType::kFp16;
  m.tables = std::move(groups);
  m.bottom_mlp = Mlp{.input = 16, .widths = {64, 32}};
  m.top_mlp = Mlp{.input = m.interaction_output(), .widths = {64, 1}};
  return m;
}

// Weights in fp16 and one fp32 of AdaGrad state per row.
double table_bytes(std::int64_t rows, std::int64_t dim) { return static_cast<double>(rows) * (2.0 * dim + 4); }

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The stages before the LPT pass, as place_tables runs them.
struct Staged {
  Overrides overrides;
  HitRates hits;
  Placement placement;
  std::vector<Piece> pieces;
  bool fits = false;
};

Staged stage(const PlanRequest& request, bool spread_in_host = true) {
  std::vector<Candidate> candidates = choose_kinds(request, spread_in_host);
  spread_heavy_exchange(request, candidates);
  Staged s;
  s.overrides = apply_overrides(request.options, candidates);
  s.placement = start_placement(request, std::move(candidates));
  s.fits = assign_memory(request, s.overrides, s.hits, s.placement);
  if (s.fits) s.pieces = lay_out_tables(request, s.overrides, s.placement);
  return s;
}

// Every table has its shards, and each GPU's load is the sum of its shards'.
void expect_each_table_placed_once(const PlanRequest& request, const ShardingPlan& plan) {
  ASSERT_EQ(plan.tables.size(), static_cast<std::size_t>(request.model.num_tables()));
  std::vector<std::int64_t> shards(plan.gpus.size(), 0);
  for (std::size_t i = 0; i < plan.tables.size(); ++i) {
    const TablePlacement& t = plan.tables[i];
    EXPECT_EQ(t.table, static_cast<std::int64_t>(i));
    ASSERT_FALSE(t.shards.empty()) << "table " << i;
    if (t.kind == ShardingKind::kTableWise) {
      EXPECT_EQ(t.shards.size(), 1u) << "table " << i;
    }
    for (const Shard& s : t.shards) ++shards[static_cast<std::size_t>(s.rank)];
  }
  for (std::size_t r = 0; r < plan.gpus.size(); ++r) {
    EXPECT_EQ(plan.gpus[r].shards, shards[r]) << "GPU " << r;
    EXPECT_LE(plan.gpus[r].hbm_bytes, plan.hbm_budget_bytes) << "GPU " << r;
  }
}

double busiest_gpu(const ShardingPlan& plan) {
  double most = 0;
  for (const GpuLoad& g : plan.gpus) most = std::max(most, g.embedding_seconds);
  return most;
}

// 16 GPUs in servers of 8 with the defaults: 75% of 40 GiB per GPU for
// embeddings, 90% of 1.5 TB of host memory per node, 512 samples per GPU.
TEST(PlacementTest, MakeRequestDerivesTheBudgets) {
  const DlrmModel m = model_of({group("t", 1, 1000, 16, 1)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  const double capacity = 40.0 * 1024 * 1024 * 1024;
  EXPECT_EQ(r.num_nodes, 2);
  EXPECT_DOUBLE_EQ(r.hbm_budget, capacity * 0.75);
  EXPECT_DOUBLE_EQ(r.total_budget, 16 * capacity * 0.75);
  EXPECT_DOUBLE_EQ(r.node_host_capacity, 1.5e12 * 0.9);
  EXPECT_DOUBLE_EQ(r.host_capacity, 2 * 1.5e12 * 0.9);
  EXPECT_EQ(r.global_batch, 512 * 16);
  EXPECT_EQ(r.elem, 2);
  EXPECT_TRUE(r.is_auto());
}

// Unknown schemes get a suggestion; GPUs that do not fill whole servers, or
// options out of range, are refused with the request's numbers.
TEST(PlacementTest, CheckRequestRefusesBadRequests) {
  ShardingOptions o;
  EXPECT_NO_THROW(check_request(o, 16, 8));
  o.scheme = "rowwise";
  EXPECT_EQ(error_of([&] { check_request(o, 16, 8); }),
            "--sharding: unknown sharding scheme 'rowwise' (did you mean 'row_wise'?); valid: auto, column_wise, "
            "data_parallel, row_wise, table_row_wise, table_wise");
  o = {};
  EXPECT_EQ(error_of([&] { check_request(o, 12, 8); }),
            "sharding: invalid sharding request: 12 GPUs in servers of 8, batch 512, reserve 0.25, hit rate 0.9, "
            "cache fraction 0.05, Zipf alpha -1");
  o.index_bytes = 5;
  EXPECT_NE(error_of([&] { check_request(o, 16, 8); }), "(no error)");
  o = {};
  o.index_zipf_alpha = 11;
  EXPECT_NE(error_of([&] { check_request(o, 16, 8); }), "(no error)");
}

// auto on 2 nodes: tables within 4 MiB are replicated; tables within half a
// GPU's budget stay whole; larger ones spread over a node's GPUs, in their
// HBM when an eighth fits half a budget, else in the node's host memory.
// Groups expand in order, each table with its group's bytes and cost.
TEST(PlacementTest, ChooseKindsByTableSize) {
  const DlrmModel m = model_of({group("small", 3, 1000, 16, 2), group("mid", 2, 10'000'000, 128, 10),
                                group("big", 1, 100'000'000, 128, 1), group("huge", 1, 1'000'000'000, 128, 1)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  const std::vector<Candidate> c = choose_kinds(r, /*spread_in_host=*/true);
  ASSERT_EQ(c.size(), 7u);
  const std::vector<std::int64_t> groups = {0, 0, 0, 1, 1, 2, 3};
  const std::vector<ShardingKind> kinds = {ShardingKind::kDataParallel, ShardingKind::kDataParallel,
                                           ShardingKind::kDataParallel, ShardingKind::kTableWise,
                                           ShardingKind::kTableWise,    ShardingKind::kTableRowWise,
                                           ShardingKind::kTableRowWise};
  for (std::size_t i = 0; i < c.size(); ++i) {
    const TableGroup& g = m.tables[static_cast<std::size_t>(groups[i])];
    EXPECT_EQ(c[i].table, static_cast<std::int64_t>(i));
    EXPECT_EQ(c[i].group, groups[i]);
    EXPECT_DOUBLE_EQ(c[i].bytes, table_bytes(g.rows, g.dim));
    EXPECT_EQ(c[i].seconds, table_seconds(r, g.dim, g.pooling));
    EXPECT_GT(c[i].seconds, 0);
    EXPECT_EQ(c[i].kind, kinds[i]) << "table " << i;
    EXPECT_EQ(c[i].needs_host, i == 6) << "table " << i;
    EXPECT_FALSE(c[i].host);
  }
  // Without host memory for spreading, the huge table goes row-wise.
  EXPECT_EQ(choose_kinds(r, /*spread_in_host=*/false)[6].kind, ShardingKind::kRowWise);
  // One node: no table-row-wise; one GPU: nothing to replicate over.
  const PlanRequest one_node = make_request(m, 8, 8, a100(), options);
  const std::vector<Candidate> on8 = choose_kinds(one_node, true);
  EXPECT_EQ(on8[5].kind, ShardingKind::kRowWise);
  EXPECT_EQ(on8[6].kind, ShardingKind::kRowWise);
  const PlanRequest one_gpu = make_request(m, 1, 1, a100(), options);
  EXPECT_EQ(choose_kinds(one_gpu, true)[0].kind, ShardingKind::kTableWise);
  // A scheme other than auto sets every table's kind.
  ShardingOptions column_wise;
  column_wise.scheme = "column_wise";
  const PlanRequest fixed = make_request(m, 16, 8, a100(), column_wise);
  for (const Candidate& x : choose_kinds(fixed, true)) {
    EXPECT_EQ(x.kind, ShardingKind::kColumnWise);
    EXPECT_FALSE(x.needs_host);
  }
}

// Per sample, a table's exchange is its pooling's indices (8 bytes each) in
// and its pooled fp16 embedding out and back: 1*8 + 2*16*2 = 72 bytes for
// each of 60 light tables, 136*8 + 2*128*2 = 1,600 for the heavy one and
// 73.5*8 + 512 = 1,100 for the medium one, 7,020 in all. On 16 GPUs a table
// may take 3 GPUs' shares, 1,316.25: the heavy one (3.6 shares) spreads, the
// medium one (2.5 shares) stays whole; only across nodes, only under auto.
TEST(PlacementTest, SpreadHeavyExchangeSpreadsOnlyTablesOverThreeShares) {
  const DlrmModel m = model_of({group("light", 60, 1'000'000, 16, 1), group("heavy", 1, 1'000'000, 128, 136),
                                group("medium", 1, 1'000'000, 128, 73.5)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  std::vector<Candidate> c = choose_kinds(r, true);
  for (const Candidate& x : c) ASSERT_EQ(x.kind, ShardingKind::kTableWise);
  spread_heavy_exchange(r, c);
  for (std::size_t i = 0; i < 60; ++i) EXPECT_EQ(c[i].kind, ShardingKind::kTableWise) << "table " << i;
  EXPECT_EQ(c[60].kind, ShardingKind::kTableRowWise);
  EXPECT_EQ(c[61].kind, ShardingKind::kTableWise);

  const PlanRequest one_node = make_request(m, 8, 8, a100(), options);
  std::vector<Candidate> on8 = choose_kinds(one_node, true);
  spread_heavy_exchange(one_node, on8);
  EXPECT_EQ(on8[60].kind, ShardingKind::kTableWise);

  ShardingOptions table_wise;
  table_wise.scheme = "table_wise";
  const PlanRequest fixed = make_request(m, 16, 8, a100(), table_wise);
  std::vector<Candidate> kept = choose_kinds(fixed, true);
  spread_heavy_exchange(fixed, kept);
  EXPECT_EQ(kept[60].kind, ShardingKind::kTableWise);
}

// A sharding file's entry sets the table's kind and clears auto's host
// spreading; of two entries for one table the later wins; a table that
// does not exist is refused.
TEST(PlacementTest, ApplyOverridesWinOverTheScheme) {
  const DlrmModel m = model_of({group("t", 5, 1'000'000, 16, 1)});
  ShardingOptions options;
  options.overrides = {{.table = 1, .kind = ShardingKind::kRowWise},
                       {.table = 3, .kind = ShardingKind::kColumnWise, .memory = TableMemory::kHost},
                       {.table = 1, .kind = ShardingKind::kTableRowWise, .node = 1}};
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  std::vector<Candidate> c = choose_kinds(r, true);
  c[1].needs_host = true;
  const Overrides o = apply_overrides(options, c);
  ASSERT_EQ(o.size(), 5u);
  EXPECT_EQ(o[0], nullptr);
  EXPECT_EQ(o[1], &options.overrides[2]);
  EXPECT_EQ(o[3], &options.overrides[1]);
  EXPECT_EQ(c[1].kind, ShardingKind::kTableRowWise);
  EXPECT_FALSE(c[1].needs_host);
  EXPECT_EQ(c[3].kind, ShardingKind::kColumnWise);
  EXPECT_EQ(c[0].kind, ShardingKind::kTableWise);
  EXPECT_EQ(memory_of(o, c[3]), TableMemory::kHost);
  EXPECT_EQ(memory_of(o, c[0]), TableMemory::kAuto);

  ShardingOptions bad;
  bad.overrides = {{.table = 5}};
  EXPECT_EQ(error_of([&] { apply_overrides(bad, c); }), "sharding: table 5 does not exist (5 tables)");
  bad.overrides = {{.table = -1}};
  EXPECT_EQ(error_of([&] { apply_overrides(bad, c); }), "sharding: table -1 does not exist (5 tables)");
}

// A replicated table demands its bytes on every GPU; in host memory it is
// one table-wise copy whose HBM is its cache (5%), at the fixed hit rate.
TEST(PlacementTest, MoveToHostKeepsDemandAndHostBytesInStep) {
  const DlrmModel m = model_of({group("small", 1, 1000, 16, 1), group("mid", 1, 1'000'000, 64, 1)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  Placement p = start_placement(r, choose_kinds(r, true));
  const double small = table_bytes(1000, 16);
  const double mid = table_bytes(1'000'000, 64);
  ASSERT_EQ(p.candidates[0].kind, ShardingKind::kDataParallel);
  EXPECT_DOUBLE_EQ(p.demand, 16 * small + mid);
  HitRates hits;
  move_to_host(r, hits, p, 0);
  EXPECT_TRUE(p.candidates[0].host);
  EXPECT_EQ(p.candidates[0].kind, ShardingKind::kTableWise);
  EXPECT_EQ(p.candidates[0].hit, 0.9);
  EXPECT_DOUBLE_EQ(p.demand, 0.05 * small + mid);
  EXPECT_DOUBLE_EQ(p.host_bytes, small);
  EXPECT_DOUBLE_EQ(hbm_demand(r, p.candidates[0]), 0.05 * small);
}

// Under Zipf lookups a host table's hit rate is that of an LRU cache of 5%
// of each shard's rows: a row-wise shard has 1/16 of them on 16 GPUs, a
// table-row-wise one 1/8. Without --index-zipf-alpha, the group's own skew.
TEST(PlacementTest, HitRatesFollowEachShardsRows) {
  TableGroup skewed = group("skewed", 1, 16'000'000, 64, 1);
  skewed.zipf_alpha = 0.9;
  const DlrmModel m = model_of({group("t", 1, 16'000'000, 64, 1), skewed});
  ShardingOptions options;
  options.index_zipf_alpha = 1.1;
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  Candidate c = choose_kinds(r, true)[0];
  HitRates hits;
  c.kind = ShardingKind::kRowWise;
  EXPECT_EQ(hits(r, c), lru_hit_rate_zipf(1e6, 0.05 * 1e6, 1.1));
  c.kind = ShardingKind::kTableRowWise;
  EXPECT_EQ(hits(r, c), lru_hit_rate_zipf(2e6, 0.05 * 2e6, 1.1));
  c.kind = ShardingKind::kTableWise;
  EXPECT_EQ(hits(r, c), lru_hit_rate_zipf(16e6, 0.05 * 16e6, 1.1));
  EXPECT_LT(hits(r, c), 1.0);

  const ShardingOptions defaults;
  const PlanRequest by_group = make_request(m, 16, 8, a100(), defaults);
  const std::vector<Candidate> both = choose_kinds(by_group, true);
  EXPECT_EQ(hits(by_group, both[0]), 0.9);  // no skew: the fixed rate
  EXPECT_EQ(hits(by_group, both[1]), lru_hit_rate_zipf(16e6, 0.05 * 16e6, 0.9));
}

// 24 tables of three sizes on 8 GPUs (table-wise) demand more than 97% of
// the GPUs' budget: the largest move to host memory, and no more than
// needed. A table pinned to HBM stays; without host memory the plan does
// not fit, and with too little it says so.
TEST(PlacementTest, AssignMemoryMovesTheLargestTablesUntilTheRestFit) {
  const DlrmModel m = model_of({group("large", 4, 12'000'000, 1024, 1), group("medium", 4, 8'000'000, 1024, 1),
                                group("small", 16, 4'000'000, 1024, 1)});
  ShardingOptions options;
  options.scheme = "table_wise";
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  Staged s = stage(r);
  ASSERT_TRUE(s.fits) << s.placement.plan.reason;
  const Placement& p = s.placement;
  const double room = r.total_budget * kPackingSlack;
  double demand = 0;
  double host = 0;
  double smallest_host = 1e300;
  double largest_hbm = 0;
  for (const Candidate& c : p.candidates) {
    demand += hbm_demand(r, c);
    if (c.host) {
      host += c.bytes;
      smallest_host = std::min(smallest_host, c.bytes);
    } else {
      largest_hbm = std::max(largest_hbm, c.bytes);
    }
  }
  EXPECT_GT(host, 0);
  EXPECT_LE(p.demand, room);
  EXPECT_NEAR(p.demand, demand, 1e-9 * demand);
  EXPECT_NEAR(p.host_bytes, host, 1e-9 * host);
  EXPECT_GE(smallest_host, largest_hbm);
  // Moving the smallest host table back would not fit.
  EXPECT_GT(p.demand - 0.05 * smallest_host + smallest_host, room);

  ShardingOptions pinned = options;
  pinned.overrides = {{.table = 0, .kind = ShardingKind::kTableWise, .memory = TableMemory::kHbm}};
  const PlanRequest pinned_request = make_request(m, 8, 8, a100(), pinned);
  const Staged kept = stage(pinned_request);
  ASSERT_TRUE(kept.fits);
  EXPECT_FALSE(kept.placement.candidates[0].host);
  EXPECT_TRUE(kept.placement.candidates[1].host);

  ShardingOptions no_host = options;
  no_host.host_memory_bytes_per_node = 0;
  const PlanRequest no_host_request = make_request(m, 8, 8, a100(), no_host);
  const Staged refused = stage(no_host_request);
  EXPECT_FALSE(refused.fits);
  EXPECT_FALSE(refused.placement.plan.fits);
  EXPECT_EQ(refused.placement.plan.reason,
            fmt::format("test needs {} of HBM for its embeddings (weights and row-wise state) but 8 GPUs have {} "
                        "after the 25% reserve, and host memory is disabled",
                        format_bytes(refused.placement.demand), format_bytes(r.total_budget)));

  // place_tables stops there, with the reason and no tables.
  std::vector<std::int64_t> fell_back;
  const ShardingPlan not_placed = place_tables(m, 8, 8, a100(), no_host, true, fell_back);
  EXPECT_FALSE(not_placed.fits);
  EXPECT_EQ(not_placed.reason, refused.placement.plan.reason);
  EXPECT_TRUE(not_placed.tables.empty());

  ShardingOptions little_host = options;
  little_host.host_memory_bytes_per_node = 1e10;
  const PlanRequest little_request = make_request(m, 8, 8, a100(), little_host);
  const Staged short_of_host = stage(little_request);
  EXPECT_FALSE(short_of_host.fits);
  EXPECT_NE(short_of_host.placement.plan.reason.find("1 node 9.0 GB of usable host memory"), std::string::npos)
      << short_of_host.placement.plan.reason;

  no_host.overrides = {{.table = 2, .kind = ShardingKind::kTableWise, .memory = TableMemory::kHost}};
  EXPECT_EQ(error_of([&] { stage(make_request(m, 8, 8, a100(), no_host)); }),
            "sharding: table 2 is placed in host memory but host memory is disabled");
}

// 10 rows row-wise over 3 GPUs: 4, 3 and 3 rows, each GPU its share of the
// bytes and cost. A replicated table: a whole copy on each GPU and a third
// of the cost. Neither leaves a piece for LPT.
TEST(PlacementTest, LayOutTablesPlacesRowWiseAndReplicatedTables) {
  const DlrmModel m = model_of({group("t", 1, 10, 8, 4)});
  for (const std::string scheme : {"row_wise", "data_parallel"}) {
    SCOPED_TRACE(scheme);
    ShardingOptions options;
    options.scheme = scheme;
    const PlanRequest r = make_request(m, 3, 3, a100(), options);
    Staged s = stage(r);
    ASSERT_TRUE(s.fits);
    EXPECT_TRUE(s.pieces.empty());
    const ShardingPlan& plan = s.placement.plan;
    const Candidate& c = s.placement.candidates[0];
    ASSERT_EQ(plan.tables.size(), 1u);
    ASSERT_EQ(plan.tables[0].shards.size(), 3u);
    double share = 0;
    for (int rank = 0; rank < 3; ++rank) {
      const Shard& sh = plan.tables[0].shards[static_cast<std::size_t>(rank)];
      const GpuLoad& g = plan.gpus[static_cast<std::size_t>(rank)];
      EXPECT_EQ(sh.rank, rank);
      EXPECT_EQ(sh.dim, 8);
      EXPECT_EQ(g.shards, 1);
      share += sh.lookup_share;
      if (scheme == "row_wise") {
        EXPECT_EQ(sh.rows, rank == 0 ? 4 : 3);
        EXPECT_DOUBLE_EQ(sh.lookup_share, sh.rows / 10.0);
        EXPECT_DOUBLE_EQ(g.hbm_bytes, c.bytes * sh.lookup_share);
      } else {
        EXPECT_EQ(sh.rows, 10);
        EXPECT_DOUBLE_EQ(g.hbm_bytes, c.bytes);
      }
      EXPECT_DOUBLE_EQ(g.embedding_seconds, c.seconds * sh.lookup_share);
    }
    EXPECT_NEAR(share, 1.0, 1e-12);
  }
}

// Column-wise: 150 columns in shards of at most 64 (64, 64, 22), each its
// fraction of the bytes; a sharding file's widths and ranks instead, which
// must add up to the dim and match in number.
TEST(PlacementTest, LayOutTablesCutsColumnShards) {
  const DlrmModel m = model_of({group("t", 1, 1'000'000, 150, 4)});
  ShardingOptions options;
  options.scheme = "column_wise";
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  const Staged s = stage(r);
  ASSERT_EQ(s.pieces.size(), 3u);
  const std::vector<std::int64_t> widths = {64, 64, 22};
  double bytes = 0;
  for (std::size_t k = 0; k < 3; ++k) {
    const Piece& p = s.pieces[k];
    EXPECT_EQ(p.placement, 0u);
    EXPECT_EQ(p.dim, widths[k]);
    EXPECT_EQ(p.rows, 1'000'000);
    EXPECT_EQ(p.fixed_rank, -1);
    EXPECT_EQ(p.column_shard, static_cast<int>(k));
    EXPECT_EQ(p.seconds, table_seconds(r, widths[k], 4));
    bytes += p.bytes;
  }
  EXPECT_NEAR(bytes, table_bytes(1'000'000, 150), 1e-6);
  EXPECT_TRUE(s.placement.plan.tables[0].shards.empty());

  ShardingOptions file = options;
  file.overrides = {{.table = 0, .kind = ShardingKind::kColumnWise, .ranks = {2, 0}, .columns = {100, 50}}};
  const PlanRequest file_request = make_request(m, 8, 8, a100(), file);
  const Staged pinned = stage(file_request);
  ASSERT_EQ(pinned.pieces.size(), 2u);
  EXPECT_EQ(pinned.pieces[0].dim, 100);
  EXPECT_EQ(pinned.pieces[0].fixed_rank, 2);
  EXPECT_EQ(pinned.pieces[1].dim, 50);
  EXPECT_EQ(pinned.pieces[1].fixed_rank, 0);

  file.overrides[0].columns = {100, 40};
  EXPECT_EQ(error_of([&] { stage(make_request(m, 8, 8, a100(), file)); }),
            "sharding: table 0's column shards are 100, 40 columns wide; they must be at least 1 each and add up "
            "to its dim, 150");
  file.overrides[0].columns = {};
  file.overrides[0].ranks = {1};
  EXPECT_EQ(error_of([&] { stage(make_request(m, 8, 8, a100(), file)); }),
            "sharding: table 0 has 3 column shards (64, 64, 22 columns wide; dim 150) but 1 ranks are given for "
            "them");
}

// The mean work counts what is placed and what is still to place.
TEST(PlacementTest, MeanWorkCountsPlacedShardsAndPieces) {
  const DlrmModel m = model_of({group("rows", 1, 100'000'000, 128, 4), group("whole", 3, 1'000'000, 64, 9)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  const Staged s = stage(r);
  ASSERT_EQ(s.placement.candidates[0].kind, ShardingKind::kRowWise);
  ASSERT_EQ(s.pieces.size(), 3u);
  const double total = s.placement.candidates[0].seconds + 3 * s.placement.candidates[1].seconds;
  EXPECT_NEAR(mean_work(r, s.placement.plan, s.pieces), total / 8, 1e-12 * total);
}

// LPT over 37 unequal tables on 8 GPUs: every table once, within budget,
// the busiest GPU within Graham's bound for greedy list scheduling (at most
// the mean plus the largest piece), and longest first: the 8 costliest
// pieces (ties by bytes, then table) open GPUs 0 to 7 in that order.
TEST(PlacementTest, PlacePiecesKeepsLptsBounds) {
  const DlrmModel m = model_of({group("a", 5, 2'000'000, 128, 40), group("b", 11, 1'000'000, 64, 25),
                                group("c", 13, 3'000'000, 32, 7), group("d", 8, 500'000, 256, 60)});
  ShardingOptions options;
  options.scheme = "table_wise";
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  Staged s = stage(r);
  ASSERT_EQ(s.pieces.size(), 37u);
  std::vector<std::int64_t> fell_back;
  ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
  EXPECT_TRUE(fell_back.empty());
  const ShardingPlan& plan = s.placement.plan;
  expect_each_table_placed_once(r, plan);
  double largest = 0;
  for (const Piece& p : s.pieces) largest = std::max(largest, p.seconds);
  const double mean = mean_work(r, ShardingPlan{.gpus = std::vector<GpuLoad>(8)}, s.pieces);
  EXPECT_LE(busiest_gpu(plan), (mean + largest) * (1 + 1e-12));
  EXPECT_GE(busiest_gpu(plan), mean);
  std::vector<Piece> longest_first = s.pieces;
  std::stable_sort(longest_first.begin(), longest_first.end(), [](const Piece& a, const Piece& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.bytes > b.bytes;
  });
  ASSERT_GT(longest_first[0].seconds, longest_first.back().seconds);
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(plan.tables[longest_first[static_cast<std::size_t>(rank)].placement].shards.at(0).rank, rank);
  }
}

// 24 equal tables on 8 GPUs: three each, exactly balanced.
TEST(PlacementTest, PlacePiecesBalancesEqualTables) {
  const DlrmModel m = model_of({group("t", 24, 1'000'000, 64, 10)});
  ShardingOptions options;
  options.scheme = "table_wise";
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  Staged s = stage(r);
  std::vector<std::int64_t> fell_back;
  ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
  expect_each_table_placed_once(r, s.placement.plan);
  for (const GpuLoad& g : s.placement.plan.gpus) EXPECT_EQ(g.shards, 3);
  EXPECT_NEAR(s.placement.plan.load_imbalance(), 1.0, 1e-12);
}

// Pins: two 20.5 GB tables pinned to GPU 3 do not both fit its 32.2 GB
// budget; a GPU that does not exist is refused. Unpinned, a ninth such
// table finds no GPU with room: without host memory the plan says so;
// with it, the table goes to host memory, its 5% cache on a GPU.
TEST(PlacementTest, PlacePiecesHonoursPinsAndReportsNoRoom) {
  const DlrmModel two = model_of({group("t", 2, 10'000'000, 1024, 1)});
  ShardingOptions options;
  options.scheme = "table_wise";
  options.overrides = {{.table = 0, .kind = ShardingKind::kTableWise, .rank = 3},
                       {.table = 1, .kind = ShardingKind::kTableWise, .rank = 3}};
  const PlanRequest r = make_request(two, 8, 8, a100(), options);
  Staged s = stage(r);
  std::vector<std::int64_t> fell_back;
  EXPECT_FALSE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
  const ShardingPlan& plan = s.placement.plan;
  EXPECT_EQ(plan.tables[0].shards.at(0).rank, 3);
  EXPECT_EQ(plan.reason, fmt::format("table 1 ({}) does not fit on GPU 3, where the sharding file puts it: it holds "
                                     "{} of {}",
                                     format_bytes(table_bytes(10'000'000, 1024)),
                                     format_bytes(table_bytes(10'000'000, 1024)), format_bytes(r.hbm_budget)));
  options.overrides[1].rank = 9;
  const PlanRequest bad = make_request(two, 8, 8, a100(), options);
  Staged bad_staged = stage(bad);
  EXPECT_EQ(error_of([&] {
              place_pieces(bad, bad_staged.overrides, bad_staged.hits, bad_staged.placement, bad_staged.pieces, 0,
                           nullptr, fell_back);
            }),
            "sharding: table 1 is placed on GPU 9 but there are 8 GPUs");

  const DlrmModel nine = model_of({group("t", 9, 10'000'000, 1024, 1)});
  ShardingOptions no_host;
  no_host.scheme = "table_wise";
  no_host.host_memory_bytes_per_node = 0;
  const PlanRequest full = make_request(nine, 8, 8, a100(), no_host);
  Staged f = stage(full);
  ASSERT_TRUE(f.fits);
  EXPECT_FALSE(place_pieces(full, f.overrides, f.hits, f.placement, f.pieces, 1e300, nullptr, fell_back));
  EXPECT_EQ(f.placement.plan.reason,
            fmt::format("no GPU has room for table 8 ({}); the fullest GPU holds {} of {}",
                        format_bytes(table_bytes(10'000'000, 1024)), format_bytes(table_bytes(10'000'000, 1024)),
                        format_bytes(full.hbm_budget)));

  ShardingOptions host = no_host;
  host.host_memory_bytes_per_node = 1.5e12;
  const PlanRequest with_host = make_request(nine, 8, 8, a100(), host);
  Staged h = stage(with_host);
  ASSERT_TRUE(place_pieces(with_host, h.overrides, h.hits, h.placement, h.pieces, 1e300, nullptr, fell_back));
  expect_each_table_placed_once(with_host, h.placement.plan);
  EXPECT_EQ(h.placement.plan.host_memory_tables(), 1);
  EXPECT_TRUE(h.placement.plan.tables[8].host_memory);
  EXPECT_DOUBLE_EQ(h.placement.host_bytes, table_bytes(10'000'000, 1024));
  const GpuLoad& g = h.placement.plan.gpus[static_cast<std::size_t>(h.placement.plan.tables[8].shards[0].rank)];
  EXPECT_DOUBLE_EQ(g.hbm_bytes, 1.05 * table_bytes(10'000'000, 1024));
  EXPECT_DOUBLE_EQ(g.host_bytes, table_bytes(10'000'000, 1024));
  EXPECT_TRUE(fell_back.empty());
}

// Two 20.5 GB tables in host memory, on 2 nodes of 30 GB of usable host
// memory each: the second skips node 0's idle GPUs for node 1's first.
TEST(PlacementTest, HostTablesGoWhereTheirNodeHasHostMemory) {
  const DlrmModel m = model_of({group("t", 2, 10'000'000, 1024, 1)});
  ShardingOptions options;
  options.scheme = "table_wise";
  options.host_memory_bytes_per_node = 30e9 / 0.9;
  for (std::int64_t t = 0; t < 2; ++t) {
    options.overrides.push_back({.table = t, .kind = ShardingKind::kTableWise, .memory = TableMemory::kHost});
  }
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  Staged s = stage(r);
  ASSERT_TRUE(s.fits);
  std::vector<std::int64_t> fell_back;
  ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
  const ShardingPlan& plan = s.placement.plan;
  EXPECT_EQ(plan.tables[0].shards.at(0).rank, 0);
  EXPECT_EQ(plan.tables[1].shards.at(0).rank, 8);
  EXPECT_DOUBLE_EQ(plan.gpus[8].host_bytes, table_bytes(10'000'000, 1024));
}

// Table-row-wise tables take one node's 8 GPUs, the least-loaded node
// first (the lower on a tie): nodes 0, 1, 0; a file's node wins.
TEST(PlacementTest, TableRowWisePiecesGoToTheLeastLoadedNode) {
  const DlrmModel m = model_of({group("t", 3, 8'000'001, 64, 10)});
  ShardingOptions options;
  options.scheme = "table_row_wise";
  for (const bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "table 0 pinned to node 1" : "free");
    if (pinned) options.overrides = {{.table = 0, .kind = ShardingKind::kTableRowWise, .node = 1}};
    const PlanRequest r = make_request(m, 16, 8, a100(), options);
    Staged s = stage(r);
    std::vector<std::int64_t> fell_back;
    ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
    const ShardingPlan& plan = s.placement.plan;
    expect_each_table_placed_once(r, plan);
    const std::vector<int> nodes = pinned ? std::vector<int>{1, 0, 0} : std::vector<int>{0, 1, 0};
    for (std::size_t t = 0; t < 3; ++t) {
      ASSERT_EQ(plan.tables[t].shards.size(), 8u);
      std::int64_t rows = 0;
      for (int i = 0; i < 8; ++i) {
        const Shard& sh = plan.tables[t].shards[static_cast<std::size_t>(i)];
        EXPECT_EQ(sh.rank, nodes[t] * 8 + i) << "table " << t;
        rows += sh.rows;
      }
      EXPECT_EQ(rows, 8'000'001);
      EXPECT_EQ(plan.tables[t].shards[0].rows, 1'000'001);
    }
  }
}

// Three 130 GB tables too large for a node's HBM, on 2 nodes of 216 GB of
// usable host memory: auto puts them table-row-wise in host memory (390 GB
// of 432 in all), but a node holds only one; the third goes row-wise over
// all 16 GPUs (65 GB of each node's host memory) and is listed as fallen
// back, so that plan_sharding plans it row-wise from the start.
TEST(PlacementTest, HostTablesThatFitNoNodeFallBackToRowWise) {
  const DlrmModel m = model_of({group("huge", 3, 500'000'000, 128, 1)});
  ShardingOptions options;
  options.host_memory_bytes_per_node = 2.4e11;
  std::vector<std::int64_t> fell_back = {7};  // cleared
  const ShardingPlan plan = place_tables(m, 16, 8, a100(), options, /*spread_in_host=*/true, fell_back);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(fell_back, std::vector<std::int64_t>{2});
  const PlanRequest r = make_request(m, 16, 8, a100(), options);
  expect_each_table_placed_once(r, plan);
  EXPECT_EQ(plan.tables[0].kind, ShardingKind::kTableRowWise);
  EXPECT_EQ(plan.tables[0].shards.front().rank, 0);
  EXPECT_EQ(plan.tables[1].kind, ShardingKind::kTableRowWise);
  EXPECT_EQ(plan.tables[1].shards.front().rank, 8);
  EXPECT_EQ(plan.tables[2].kind, ShardingKind::kRowWise);
  EXPECT_EQ(plan.tables[2].shards.size(), 16u);
  for (const TablePlacement& t : plan.tables) EXPECT_TRUE(t.host_memory);
  const double table = table_bytes(500'000'000, 128);
  for (int n = 0; n < 2; ++n) {
    double node = 0;
    for (int i = 0; i < 8; ++i) node += plan.gpus[static_cast<std::size_t>(n * 8 + i)].host_bytes;
    EXPECT_NEAR(node, 1.5 * table, 1e-9 * table) << "node " << n;
    EXPECT_LE(node, r.node_host_capacity);
  }
  // Without host memory for spreading, all three go row-wise from the start.
  const ShardingPlan spread = place_tables(m, 16, 8, a100(), options, /*spread_in_host=*/false, fell_back);
  EXPECT_TRUE(fell_back.empty());
  for (const TablePlacement& t : spread.tables) EXPECT_EQ(t.kind, ShardingKind::kRowWise);
}

// One table-wise table on GPU 0 of 2: the busiest GPU's work alone without
// an exchange rate; with one, plus the indices every GPU sends it (512
// samples, 10 lookups, 8 bytes) and its exchange for the global batch of
// 1,024 (10 indices of 8 bytes in, 64 columns out and back in fp16, or in
// the wire types given).
TEST(PlacementTest, BusiestCostAddsTheExchange) {
  const DlrmModel m = model_of({group("t", 1, 1'000'000, 64, 10)});
  ShardingOptions options;
  options.scheme = "table_wise";
  const PlanRequest r = make_request(m, 2, 2, a100(), options);
  Staged s = stage(r);
  std::vector<std::int64_t> fell_back;
  ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, 1e300, nullptr, fell_back));
  const double seconds = s.placement.candidates[0].seconds;
  ASSERT_EQ(s.placement.plan.tables[0].shards[0].rank, 0);
  EXPECT_EQ(busiest_cost(r, s.placement), seconds);

  ShardingOptions nic = options;
  nic.exchange_bytes_per_second = 1e9;
  const PlanRequest with_nic = make_request(m, 2, 2, a100(), nic);
  EXPECT_DOUBLE_EQ(busiest_cost(with_nic, s.placement), seconds + (512.0 * 10 * 8 + 1024.0 * (10 * 8 + 64 * 4)) / 1e9);
  nic.exchange_forward_bytes = 1;
  nic.exchange_backward_bytes = 1;
  const PlanRequest narrow = make_request(m, 2, 2, a100(), nic);
  EXPECT_DOUBLE_EQ(busiest_cost(narrow, s.placement), seconds + (512.0 * 10 * 8 + 1024.0 * (10 * 8 + 64 * 2)) / 1e9);
}

// The tables to split go column-wise in k even shards (widths within one
// of each other), at most one column each, each with its share of the
// bytes and its own kernel cost; the others keep their pieces.
TEST(PlacementTest, SplitForBalanceCutsEvenShards) {
  const DlrmModel m = model_of({group("wide", 5, 1'000'000, 128, 20), group("narrow", 1, 1'000'000, 4, 20)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 4, 4, a100(), options);
  const Staged s = stage(r);
  ASSERT_EQ(s.pieces.size(), 6u);
  for (const std::int64_t k : {2, 3, 8}) {
    SCOPED_TRACE(k);
    Placement p = s.placement;
    const std::vector<Piece> split = split_for_balance(r, s.pieces, {4}, k, p);
    ASSERT_EQ(split.size(), 5 + static_cast<std::size_t>(k));
    std::int64_t columns = 0;
    std::int64_t widest = 0;
    std::int64_t narrowest = 128;
    double bytes = 0;
    for (const Piece& piece : split) {
      if (piece.placement != 4) continue;
      columns += piece.dim;
      widest = std::max(widest, piece.dim);
      narrowest = std::min(narrowest, piece.dim);
      bytes += piece.bytes;
      EXPECT_EQ(piece.seconds, table_seconds(r, piece.dim, 20));
      EXPECT_EQ(piece.fixed_rank, -1);
    }
    EXPECT_EQ(columns, 128);
    EXPECT_LE(widest - narrowest, 1);
    EXPECT_NEAR(bytes, table_bytes(1'000'000, 128), 1e-6);
    EXPECT_EQ(p.plan.tables[4].kind, ShardingKind::kColumnWise);
    for (std::size_t t = 0; t < 6; ++t) {
      if (t != 4) {
        EXPECT_EQ(p.plan.tables[t].kind, ShardingKind::kTableWise) << "table " << t;
      }
    }
  }
  // A table of 4 columns splits into at most 4.
  Placement p = s.placement;
  EXPECT_EQ(split_for_balance(r, s.pieces, {5}, 8, p).size(), 5u + 4u);
}

// Five equal tables on 4 GPUs: whole, one GPU carries two (1.6 times the
// mean). Balancing splits the fifth column-wise and lowers the busiest
// GPU's work by more than kSplitGain; without it the tables stay whole.
TEST(PlacementTest, BalanceSplitsTablesThatDoNotDivide) {
  const DlrmModel m = model_of({group("t", 5, 1'000'000, 128, 20)});
  ShardingOptions options;
  std::vector<std::int64_t> fell_back;
  const ShardingPlan plan = place_tables(m, 4, 4, a100(), options, true, fell_back);
  options.split_to_balance = false;
  const ShardingPlan whole = place_tables(m, 4, 4, a100(), options, true, fell_back);
  const PlanRequest r = make_request(m, 4, 4, a100(), options);
  expect_each_table_placed_once(r, plan);
  expect_each_table_placed_once(r, whole);
  EXPECT_NEAR(whole.load_imbalance(), 1.6, 1e-12);
  EXPECT_NEAR(whole.whole_load_imbalance, 1.6, 1e-12);
  EXPECT_EQ(whole.balance_split_tables, 0);
  EXPECT_NEAR(plan.whole_load_imbalance, 1.6, 1e-12);
  EXPECT_LT(plan.load_imbalance(), 1.6);
  EXPECT_LT(busiest_gpu(plan), busiest_gpu(whole) * (1 - kSplitGain));
  EXPECT_EQ(plan.balance_split_tables, 1);
  EXPECT_EQ(plan.tables[4].kind, ShardingKind::kColumnWise);
  EXPECT_EQ(plan.balance_split_shards, static_cast<std::int64_t>(plan.tables[4].shards.size()));
  std::int64_t columns = 0;
  for (const Shard& sh : plan.tables[4].shards) columns += sh.dim;
  EXPECT_EQ(columns, 128);
  for (std::size_t t = 0; t < 4; ++t) EXPECT_EQ(plan.tables[t].kind, ShardingKind::kTableWise);
}

// balance alone: 5 equal tables on 4 GPUs leave the fifth on a GPU with
// another; of its splits into 2 to kMostBalancingShards shards, balance
// keeps the one with the least busiest_cost (not merely one that gains).
TEST(PlacementTest, BalanceKeepsTheCheapestSplit) {
  const DlrmModel m = model_of({group("t", 5, 1'000'000, 128, 20)});
  const ShardingOptions options;
  const PlanRequest r = make_request(m, 4, 4, a100(), options);
  Staged s = stage(r);
  const Placement before = s.placement;
  std::vector<std::size_t> over;
  std::vector<std::int64_t> fell_back;
  const double level = mean_work(r, s.placement.plan, s.pieces) * (1 + kSplitTolerance);
  ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, s.placement, s.pieces, level, &over, fell_back));
  EXPECT_EQ(over, std::vector<std::size_t>{4});
  const double whole = busiest_cost(r, s.placement);
  double cheapest = whole;
  for (std::int64_t k = 2; k <= kMostBalancingShards; ++k) {
    Placement trial = before;
    std::vector<Piece> split = split_for_balance(r, s.pieces, over, k, trial);
    ASSERT_TRUE(place_pieces(r, s.overrides, s.hits, trial, std::move(split), 0, nullptr, fell_back));
    cheapest = std::min(cheapest, busiest_cost(r, trial));
  }
  ASSERT_LT(cheapest, whole * (1 - kSplitGain));
  balance(r, s.overrides, s.hits, before, s.pieces, over, s.placement, fell_back);
  EXPECT_EQ(busiest_cost(r, s.placement), cheapest);
  EXPECT_EQ(s.placement.plan.balance_split_tables, 1);
  expect_each_table_placed_once(r, s.placement.plan);
}

// With Zipf skew the plan's hit rate is the host tables' mean weighted by
// their lookups: (10 * 0.5 + 30 * 0.9) / 40 = 0.8; without skew, or
// without host tables, there is none to report.
TEST(PlacementTest, MeanHostHitRateWeighsByLookups) {
  const DlrmModel m = model_of({group("t", 3, 1000, 16, 1)});
  ShardingOptions options;
  options.index_zipf_alpha = 1.0;
  const PlanRequest r = make_request(m, 8, 8, a100(), options);
  std::vector<Candidate> c = choose_kinds(r, true);
  c[0].host = true;
  c[0].pooling = 10;
  c[0].hit = 0.5;
  c[1].host = true;
  c[1].pooling = 30;
  c[1].hit = 0.9;
  c[2].pooling = 100;
  c[2].hit = 0.1;
  ASSERT_TRUE(mean_host_hit_rate(r, c).has_value());
  EXPECT_DOUBLE_EQ(*mean_host_hit_rate(r, c), 0.8);
  const ShardingOptions defaults;
  EXPECT_FALSE(mean_host_hit_rate(make_request(m, 8, 8, a100(), defaults), c).has_value());
  for (Candidate& x : c) x.host = false;
  EXPECT_FALSE(mean_host_hit_rate(r, c).has_value());
}

// Where plan_sharding keeps the reserve, its plan is place_tables's.
TEST(PlacementTest, PlaceTablesIsPlanShardingsPlacement) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  const ShardingOptions options;
  const ShardingPlan planned = plan_sharding(m, 16, 8, a100(), options);
  ASSERT_TRUE(planned.fits);
  ASSERT_EQ(planned.hbm_reserve_fraction, options.hbm_reserve_fraction);
  std::vector<std::int64_t> fell_back;
  const ShardingPlan placed = place_tables(m, 16, 8, a100(), options, true, fell_back);
  ASSERT_EQ(placed.tables.size(), planned.tables.size());
  for (std::size_t t = 0; t < placed.tables.size(); ++t) {
    const TablePlacement& a = placed.tables[t];
    const TablePlacement& b = planned.tables[t];
    EXPECT_EQ(a.kind, b.kind) << "table " << t;
    ASSERT_EQ(a.shards.size(), b.shards.size()) << "table " << t;
    for (std::size_t i = 0; i < a.shards.size(); ++i) {
      EXPECT_EQ(a.shards[i].rank, b.shards[i].rank);
      EXPECT_EQ(a.shards[i].rows, b.shards[i].rows);
      EXPECT_EQ(a.shards[i].dim, b.shards[i].dim);
    }
  }
  for (std::size_t g = 0; g < placed.gpus.size(); ++g) {
    EXPECT_EQ(placed.gpus[g].hbm_bytes, planned.gpus[g].hbm_bytes);
    EXPECT_EQ(placed.gpus[g].embedding_seconds, planned.gpus[g].embedding_seconds);
  }
}

}  // namespace
}  // namespace zx::models::internal
