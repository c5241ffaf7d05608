// Tests of the sharding planner: it never exceeds a GPU's HBM budget, places
// every table exactly once with shards that add up, balances uniform tables,
// falls back to host memory for model F and refuses model A on one node with
// the numbers.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/cache_model.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models {
namespace {

const DeviceProfile& a100() {
  static const DeviceProfile p = builtin_device_profile("a100-40gb");
  return p;
}

// Checks the invariants every plan must keep: within every GPU's HBM budget
// and every node's host memory (the default 90% of 1.5 TB), every host-memory
// table's bytes in exactly one node's host memory, shards that add up.
void expect_consistent(const DlrmModel& model, const ShardingPlan& plan, int gpus, int gpus_per_node = 8) {
  ASSERT_TRUE(plan.fits) << model.name << ": " << plan.reason;
  ASSERT_EQ(plan.tables.size(), static_cast<std::size_t>(model.num_tables()));
  ASSERT_EQ(plan.gpus.size(), static_cast<std::size_t>(gpus));
  for (const GpuLoad& g : plan.gpus) EXPECT_LE(g.hbm_bytes, plan.hbm_budget_bytes);
  const ShardingOptions defaults;
  double host_bytes = 0;
  for (int n = 0; n < gpus / gpus_per_node; ++n) {
    double node = 0;
    for (int i = 0; i < gpus_per_node; ++i) node += plan.gpus[static_cast<std::size_t>(n * gpus_per_node + i)].host_bytes;
    EXPECT_LE(node, defaults.host_memory_bytes_per_node * defaults.host_memory_usable_fraction * (1 + 1e-12))
        << "node " << n;
    host_bytes += node;
  }
  double host_tables = 0;  // weights (embedding type) and one fp32 of row-wise state per row
  for (const TablePlacement& p : plan.tables) {
    const TableGroup& group = model.tables[static_cast<std::size_t>(p.group)];
    const double row_bytes = static_cast<double>(group.dim * element_bytes(model.embedding_type)) + 4;
    if (p.host_memory) host_tables += static_cast<double>(group.rows) * row_bytes;
  }
  EXPECT_NEAR(host_bytes, host_tables, 1e-9 * host_tables + 1);
  for (std::size_t t = 0; t < plan.tables.size(); ++t) {
    const TablePlacement& p = plan.tables[t];
    EXPECT_EQ(p.table, static_cast<std::int64_t>(t));
    const TableGroup& group = model.tables[static_cast<std::size_t>(p.group)];
    ASSERT_FALSE(p.shards.empty());
    std::int64_t rows = 0;
    std::int64_t dims = 0;
    double share = 0;
    for (const Shard& s : p.shards) {
      EXPECT_GE(s.rank, 0);
      EXPECT_LT(s.rank, gpus);
      rows += s.rows;
      dims += s.dim;
      share += s.lookup_share;
    }
    switch (p.kind) {
      case ShardingKind::kRowWise:
      case ShardingKind::kTableRowWise:
        EXPECT_EQ(rows, group.rows);
        EXPECT_NEAR(share, 1.0, 1e-12);
        break;
      case ShardingKind::kColumnWise:
        EXPECT_EQ(dims, group.dim);
        break;
      case ShardingKind::kDataParallel:
        EXPECT_EQ(p.shards.size(), static_cast<std::size_t>(gpus));
        EXPECT_NEAR(share, 1.0, 1e-12);
        break;
      case ShardingKind::kTableWise:
        EXPECT_EQ(p.shards.size(), 1u);
        EXPECT_EQ(rows, group.rows);
        break;
    }
  }
}

// Model A's 4096 equal tables over 128 GPUs: 32 table-wise tables each,
// perfectly balanced, within HBM.
TEST(ShardingTest, ModelAOn128GpusIsBalanced) {
  const DlrmModel a = load_model("dlrm-a");
  const ShardingPlan plan = plan_sharding(a, 128, 8, a100(), {});
  expect_consistent(a, plan, 128);
  EXPECT_EQ(plan.host_memory_tables(), 0);
  EXPECT_NEAR(plan.load_imbalance(), 1.0, 1e-12);
  for (const GpuLoad& g : plan.gpus) EXPECT_EQ(g.shards, 32);
}

// Model A's 4,096 equal tables do not divide over 768 GPUs (5 1/3 each):
// LPT alone gives 256 GPUs 6 tables, 12.5% above the mean. Balancing splits
// those 256 tables column-wise in three shards of 32, 31 and 31 columns on
// three GPUs, and every GPU carries 5 tables and one shard. On 384 GPUs
// (10 2/3 each) the best split saves 1.1% of the busiest GPU's work, less
// than the indices each extra shard receives cost at a 25 GB/s NIC: the
// tables stay whole, unless the exchange is left out of the trade-off.
TEST(ShardingTest, ModelABalancesTablesThatDoNotDivide) {
  const DlrmModel a = load_model("dlrm-a");
  ShardingOptions nic;
  nic.exchange_bytes_per_second = 25e9;  // one 200 Gb/s NIC per GPU (ZionEX)
  ShardingOptions whole = nic;
  whole.scheme = "table_wise";
  const ShardingPlan plan = plan_sharding(a, 768, 8, a100(), nic);
  expect_consistent(a, plan, 768);
  const ShardingPlan table_wise = plan_sharding(a, 768, 8, a100(), whole);
  EXPECT_NEAR(table_wise.load_imbalance(), 6.0 / (4096.0 / 768), 1e-9);
  EXPECT_LT(plan.load_imbalance(), 1.001);
  double most = 0;
  double most_whole = 0;
  for (const GpuLoad& g : plan.gpus) most = std::max(most, g.embedding_seconds);
  for (const GpuLoad& g : table_wise.gpus) most_whole = std::max(most_whole, g.embedding_seconds);
  EXPECT_LT(most, most_whole * 0.92);
  int split = 0;
  for (const TablePlacement& t : plan.tables) {
    if (t.kind == ShardingKind::kTableWise) continue;
    ASSERT_EQ(t.kind, ShardingKind::kColumnWise);
    ++split;
    ASSERT_EQ(t.shards.size(), 3u);
    EXPECT_EQ(t.shards[0].dim, 32);
    EXPECT_EQ(t.shards[1].dim, 31);
    EXPECT_EQ(t.shards[2].dim, 31);
    EXPECT_NE(t.shards[0].rank, t.shards[1].rank);
    EXPECT_NE(t.shards[0].rank, t.shards[2].rank);
    EXPECT_NE(t.shards[1].rank, t.shards[2].rank);
  }
  EXPECT_EQ(split, 256);
  EXPECT_EQ(plan.balance_split_tables, 256);
  EXPECT_EQ(plan.balance_split_shards, 768);
  EXPECT_NEAR(plan.whole_load_imbalance, table_wise.load_imbalance(), 1e-12);
  for (const GpuLoad& g : plan.gpus) EXPECT_EQ(g.shards, 6);
  // HBM is conserved: the shards hold what the whole tables would.
  double bytes = 0;
  double bytes_whole = 0;
  for (const GpuLoad& g : plan.gpus) bytes += g.hbm_bytes;
  for (const GpuLoad& g : table_wise.gpus) bytes_whole += g.hbm_bytes;
  EXPECT_NEAR(bytes, bytes_whole, bytes_whole * 1e-12);

  const ShardingPlan kept = plan_sharding(a, 384, 8, a100(), nic);
  expect_consistent(a, kept, 384);
  for (const TablePlacement& t : kept.tables) EXPECT_EQ(t.kind, ShardingKind::kTableWise);
  EXPECT_EQ(kept.balance_split_tables, 0);
  EXPECT_EQ(kept.whole_load_imbalance, kept.load_imbalance());
  EXPECT_NEAR(kept.load_imbalance(), 11.0 / (4096.0 / 384), 1e-9);
  // On 1,536 GPUs (2 2/3 tables each) a third of the tables would split in
  // three: every GPU would send 50% more indices. Kept whole (simulated, one
  // slice: 79.266 ms whole, 80.124 split).
  const ShardingPlan many = plan_sharding(a, 1536, 8, a100(), nic);
  EXPECT_EQ(many.balance_split_tables, 0);
  EXPECT_NEAR(many.load_imbalance(), 3.0 / (4096.0 / 1536), 1e-9);
  const ShardingPlan work_alone = plan_sharding(a, 384, 8, a100(), {});
  expect_consistent(a, work_alone, 384);
  EXPECT_LT(work_alone.load_imbalance(), 1.001);
}

// A GPU's fixed embedding costs (launches, the backward's sort overhead)
// are paid once per GPU whatever it holds: they leave a table's estimated
// work, and so the plan, unchanged.
TEST(ShardingTest, PerGpuFixedCostsDoNotMoveTables) {
  const DlrmModel a = load_model("dlrm-a");
  ShardingOptions nic;
  nic.exchange_bytes_per_second = 25e9;
  DeviceProfile slow_sort = a100();
  slow_sort.embedding_backward_overhead_ns = 50000;
  const ShardingPlan plan = plan_sharding(a, 768, 8, a100(), nic);
  const ShardingPlan with_overhead = plan_sharding(a, 768, 8, slow_sort, nic);
  ASSERT_EQ(plan.tables.size(), with_overhead.tables.size());
  for (std::size_t i = 0; i < plan.tables.size(); ++i) {
    ASSERT_EQ(plan.tables[i].shards.size(), with_overhead.tables[i].shards.size()) << i;
    for (std::size_t j = 0; j < plan.tables[i].shards.size(); ++j) {
      EXPECT_EQ(plan.tables[i].shards[j].rank, with_overhead.tables[i].shards[j].rank) << i;
      EXPECT_EQ(plan.tables[i].shards[j].dim, with_overhead.tables[i].shards[j].dim) << i;
    }
  }
  for (std::size_t g = 0; g < plan.gpus.size(); ++g) {
    EXPECT_DOUBLE_EQ(plan.gpus[g].embedding_seconds, with_overhead.gpus[g].embedding_seconds) << g;
  }
}

// One node cannot hold model A: 1.6 TB of fp16 weights plus 33 GB of state
// against 8 x 30 GB of HBM and 1.35 TB of usable host memory. The plan says so.
TEST(ShardingTest, ModelAOnOneNodeDoesNotFit) {
  const DlrmModel a = load_model("dlrm-a");
  const ShardingPlan plan = plan_sharding(a, 8, 8, a100(), {});
  EXPECT_FALSE(plan.fits);
  EXPECT_NE(plan.reason.find("dlrm-a needs 1.64 TB"), std::string::npos) << plan.reason;
  EXPECT_NE(plan.reason.find("1.35 TB of usable host memory"), std::string::npos) << plan.reason;
  ShardingOptions no_host;
  no_host.host_memory_bytes_per_node = 0;
  const ShardingPlan hbm_only = plan_sharding(a, 8, 8, a100(), no_host);
  EXPECT_FALSE(hbm_only.fits);
  EXPECT_NE(hbm_only.reason.find("host memory is disabled"), std::string::npos) << hbm_only.reason;
  // The small variant fits one node in HBM.
  const DlrmModel small = load_model("dlrm-a-small");
  expect_consistent(small, plan_sharding(small, 8, 8, a100(), {}), 8);
}

// Model F (24 TB) on 16 nodes: most tables live in host memory behind an
// HBM cache, as the paper trains it.
TEST(ShardingTest, ModelFUsesHostMemory) {
  const DlrmModel f = load_model("dlrm-f");
  const ShardingPlan plan = plan_sharding(f, 128, 8, a100(), {});
  expect_consistent(f, plan, 128);
  EXPECT_GT(plan.host_memory_tables(), 0);
  EXPECT_LT(plan.host_memory_tables(), 64);
}

// Model F's 378 GB tables fit no node's HBM (8 x 32 GB) but a node's host
// memory (90% of 1.5 TB: three of them): across nodes auto keeps each one
// table-row-wise in one node's host memory, behind its GPUs' caches, so that
// its partial pools are reduced inside the node, not over every GPU. On 32
// nodes that is every table, two per node; on 16 the nodes' host memory
// holds 48 of the 64 and the rest go row-wise over every GPU; on one node,
// or with host memory too small for one table, row-wise as before.
TEST(ShardingTest, TablesTooLargeForANodesHbmGoTableRowWiseInHostMemory) {
  const DlrmModel f = load_model("dlrm-f");
  const ShardingPlan on32 = plan_sharding(f, 256, 8, a100(), {});
  expect_consistent(f, on32, 256);
  std::map<int, int> per_node;
  for (const TablePlacement& t : on32.tables) {
    EXPECT_EQ(t.kind, ShardingKind::kTableRowWise) << t.table;
    EXPECT_TRUE(t.host_memory) << t.table;
    ASSERT_EQ(t.shards.size(), 8u);
    ++per_node[t.shards.front().rank / 8];
  }
  EXPECT_EQ(per_node.size(), 32u);
  for (const auto& [node, tables] : per_node) EXPECT_EQ(tables, 2) << "node " << node;

  const ShardingPlan on16 = plan_sharding(f, 128, 8, a100(), {});
  expect_consistent(f, on16, 128);
  std::map<ShardingKind, int> kinds;
  for (const TablePlacement& t : on16.tables) {
    ++kinds[t.kind];
    if (t.kind == ShardingKind::kTableRowWise) {
      EXPECT_TRUE(t.host_memory) << t.table;
    }
  }
  EXPECT_EQ(kinds[ShardingKind::kTableRowWise], 48);
  EXPECT_EQ(kinds[ShardingKind::kRowWise], 16);

  // On 48 nodes with host memory for one table each (90% of 600 GB): 48
  // table-row-wise, the rest row-wise (in HBM or host memory).
  ShardingOptions smaller;
  smaller.host_memory_bytes_per_node = 6.0e11;
  const ShardingPlan one = plan_sharding(f, 384, 8, a100(), smaller);
  ASSERT_TRUE(one.fits) << one.reason;
  EXPECT_EQ(std::count_if(one.tables.begin(), one.tables.end(),
                          [](const TablePlacement& t) { return t.kind == ShardingKind::kTableRowWise; }),
            48);
  // Host memory too small for a whole table: row-wise over every GPU.
  ShardingOptions tiny;
  tiny.host_memory_bytes_per_node = 4.0e11;
  const ShardingPlan none = plan_sharding(f, 512, 8, a100(), tiny);
  ASSERT_TRUE(none.fits) << none.reason;
  for (const TablePlacement& t : none.tables) EXPECT_EQ(t.kind, ShardingKind::kRowWise) << t.table;

  // Four pinned to one node's host memory: the fourth finds it full, and
  // the reason says so with the numbers.
  ShardingOptions pinned;
  for (std::int64_t t = 0; t < 4; ++t) {
    pinned.overrides.push_back({.table = t, .kind = ShardingKind::kTableRowWise, .node = 0, .memory = TableMemory::kHost});
  }
  const ShardingPlan full = plan_sharding(f, 256, 8, a100(), pinned);
  EXPECT_FALSE(full.fits);
  EXPECT_EQ(full.reason,
            "no node has room for table 3 (377.7 GB in host memory, its 18.9 GB cache split over a node's 8 GPUs): "
            "node 0, where the sharding file puts it, has 1.13 TB of its 1.35 TB of usable host memory taken");
  pinned.overrides.pop_back();
  expect_consistent(f, plan_sharding(f, 256, 8, a100(), pinned), 256);

  // A sharding file's kind wins: row-wise stays row-wise.
  ShardingOptions file;
  file.scheme = "row_wise";
  for (const TablePlacement& t : plan_sharding(f, 256, 8, a100(), file).tables) {
    EXPECT_EQ(t.kind, ShardingKind::kRowWise) << t.table;
  }
}

// Table-wise tables in host memory take their node's host memory: model F's
// 64 tables, one per GPU, would put eight on each of the first eight nodes
// (3 TB on a node of 1.35 TB usable); the planner moves them on.
TEST(ShardingTest, HostMemoryTablesRespectEachNodesHostMemory) {
  const DlrmModel f = load_model("dlrm-f");
  ShardingOptions o;
  o.scheme = "table_wise";
  const ShardingPlan plan = plan_sharding(f, 512, 8, a100(), o);
  expect_consistent(f, plan, 512);
  EXPECT_GT(plan.host_memory_tables(), 32);
}

// auto spreads a table whose exchange would take more than three GPUs'
// shares over a node's GPUs: one table of 200 lookups per sample (200 x 8 +
// 2 x 128 x 2 = 2,112 bytes per sample) beside fifteen of one (520 bytes),
// 9,912 in all. On 2 and 4 nodes (three shares: 1,858 and 929 bytes) it goes
// table-row-wise and the cold ones stay whole. On one node no NIC is in the
// way, and balancing splits it column-wise instead (it alone is 200/215 of
// the work), over more than one GPU.
TEST(ShardingTest, AutoSpreadsATableWhoseExchangeOneNicCannotCarry) {
  DlrmModel m;
  m.name = "hot-table";
  m.dense_features = 64;
  m.embedding_type = DataType::kFp16;
  m.tables = {TableGroup{.name = "hot", .count = 1, .rows = 1'000'000, .dim = 128, .pooling = 200},
              TableGroup{.name = "cold", .count = 15, .rows = 1'000'000, .dim = 128, .pooling = 1}};
  m.bottom_mlp = Mlp{.input = 64, .widths = {256, 128}};
  m.interaction.kind = InteractionKind::kDot;
  m.top_mlp = Mlp{.input = m.interaction_output(), .widths = {256, 1}};
  for (const int gpus : {8, 16, 32}) {
    const ShardingPlan plan = plan_sharding(m, gpus, 8, a100(), {});
    expect_consistent(m, plan, gpus);
    EXPECT_EQ(plan.tables[0].kind, gpus == 8 ? ShardingKind::kColumnWise : ShardingKind::kTableRowWise) << gpus;
    EXPECT_GT(plan.tables[0].shards.size(), 1u) << gpus;
    for (std::size_t t = 1; t < plan.tables.size(); ++t) EXPECT_EQ(plan.tables[t].kind, ShardingKind::kTableWise) << gpus;
  }
}

// Model I on 2 nodes: 679 GB of tables of 1.33 GB each, 515 GB of HBM. The
// planner moves tables to host memory until the rest needs 97% of the HBM,
// but 24 tables fill a GPU to 31.9 of its 32.2 GB: the ones left over go to
// host memory too, instead of the plan failing.
TEST(ShardingTest, TablesThatFitNoGpuGoToHostMemory) {
  const DlrmModel i = load_model("dlrm-i");
  const ShardingPlan plan = plan_sharding(i, 16, 8, a100(), {});
  ASSERT_TRUE(plan.fits) << plan.reason;
  expect_consistent(i, plan, 16);
  EXPECT_GT(plan.host_memory_tables(), 0);
  for (const GpuLoad& g : plan.gpus) EXPECT_LE(g.hbm_bytes, plan.hbm_budget_bytes);
  // Without host memory the same tables cannot be placed.
  ShardingOptions no_host;
  no_host.host_memory_bytes_per_node = 0;
  EXPECT_FALSE(plan_sharding(i, 16, 8, a100(), no_host).fits);

  // Model F on 16 H200 nodes: its 378 GB tables go table-row-wise, two per
  // node (94 of a GPU's 106 GB); those no node has room for go to host
  // memory too.
  const DlrmModel f = load_model("dlrm-f");
  const DeviceProfile h200 = builtin_device_profile("h200");
  const ShardingPlan big = plan_sharding(f, 128, 8, h200, {});
  ASSERT_TRUE(big.fits) << big.reason;
  expect_consistent(f, big, 128);
  EXPECT_GT(big.host_memory_tables(), 0);
  for (const TablePlacement& t : big.tables) EXPECT_EQ(t.kind, ShardingKind::kTableRowWise);
  for (const GpuLoad& g : big.gpus) EXPECT_LE(g.hbm_bytes, big.hbm_budget_bytes);
}

// The HBM cache's hit rate: the fixed one on every host-memory table, or,
// with Zipf lookups, an LRU cache of 5% of each shard's rows: 732 M rows / 8
// GPUs for model F's table-row-wise tables on 16 nodes, / 128 for the
// row-wise ones; the plan's rate is their mean over the lookups (the tables'
// poolings are equal). A bigger cache or more skew hits more. Bad cache
// options are refused.
TEST(ShardingTest, HostMemoryTablesHitTheirCache) {
  const DlrmModel f = load_model("dlrm-f");
  ShardingOptions o;
  o.host_cache_hit_rate = 0.75;
  const ShardingPlan fixed = plan_sharding(f, 128, 8, a100(), o);
  ASSERT_TRUE(fixed.fits) << fixed.reason;
  EXPECT_EQ(fixed.host_cache_hit_rate, 0.75);
  for (const TablePlacement& t : fixed.tables) EXPECT_EQ(t.cache_hit_rate, t.host_memory ? 0.75 : 1.0) << t.table;

  o.index_zipf_alpha = 1.05;
  const ShardingPlan zipf = plan_sharding(f, 128, 8, a100(), o);
  ASSERT_TRUE(zipf.fits) << zipf.reason;
  const double rows = static_cast<double>(732'000'000 / 128);
  const double expected = lru_hit_rate_zipf(rows, 0.05 * rows, 1.05);
  const double node_rows = static_cast<double>(732'000'000 / 8);
  const double node_expected = lru_hit_rate_zipf(node_rows, 0.05 * node_rows, 1.05);
  EXPECT_GT(expected, 0.5);
  EXPECT_LT(expected, 0.99);
  EXPECT_GT(node_expected, expected);  // a larger cache of the same share hits more under Zipf
  double sum = 0;
  int host_tables = 0;
  for (const TablePlacement& t : zipf.tables) {
    ASSERT_TRUE(t.kind == ShardingKind::kRowWise || t.kind == ShardingKind::kTableRowWise) << t.table;
    const double rate = t.kind == ShardingKind::kRowWise ? expected : node_expected;
    EXPECT_EQ(t.cache_hit_rate, t.host_memory ? rate : 1.0) << t.table;
    if (t.host_memory) {
      sum += t.cache_hit_rate;
      ++host_tables;
    }
  }
  ASSERT_GT(host_tables, 0);
  EXPECT_NEAR(zipf.host_cache_hit_rate, sum / host_tables, 1e-12);  // a mean over the tables

  ShardingOptions skewed = o;
  skewed.index_zipf_alpha = 1.2;
  EXPECT_GT(plan_sharding(f, 128, 8, a100(), skewed).host_cache_hit_rate, expected);
  ShardingOptions larger = o;
  larger.host_cache_fraction = 0.06;
  const ShardingPlan more = plan_sharding(f, 256, 8, a100(), larger);
  const ShardingPlan base = plan_sharding(f, 256, 8, a100(), o);
  ASSERT_TRUE(more.fits && base.fits) << more.reason << base.reason;
  ASSERT_GT(base.host_memory_tables(), 0);
  EXPECT_GT(more.host_cache_hit_rate, base.host_cache_hit_rate);

  // A table group's own zipf_alpha sets its tables' rate; the others keep
  // the fixed one; the option overrides the model.
  DlrmModel skew_model = f;
  skew_model.tables = {f.tables[0], f.tables[0]};
  skew_model.tables[0].count = 32;
  skew_model.tables[0].zipf_alpha = 1.2;
  skew_model.tables[1].count = 32;
  skew_model.tables[1].name = "flat";
  ShardingOptions fixed_rate;
  fixed_rate.host_cache_hit_rate = 0.75;
  const ShardingPlan mixed = plan_sharding(skew_model, 128, 8, a100(), fixed_rate);
  ASSERT_TRUE(mixed.fits) << mixed.reason;
  // A shard's rate under Zipf(alpha): its rows, of a row-wise or a
  // table-row-wise table.
  const auto shard_rate = [&](const TablePlacement& t, double alpha) {
    const double r = t.kind == ShardingKind::kRowWise ? rows : node_rows;
    return lru_hit_rate_zipf(r, 0.05 * r, alpha);
  };
  double hottest = 0;
  for (const TablePlacement& t : mixed.tables) {
    if (!t.host_memory) continue;
    EXPECT_EQ(t.cache_hit_rate, t.group == 0 ? shard_rate(t, 1.2) : 0.75) << t.table;
    hottest = std::max(hottest, t.cache_hit_rate);
  }
  EXPECT_GT(mixed.host_cache_hit_rate, 0.75);
  EXPECT_LT(mixed.host_cache_hit_rate, hottest);
  const ShardingPlan overridden = plan_sharding(skew_model, 128, 8, a100(), o);
  for (const TablePlacement& t : overridden.tables) {
    if (t.host_memory) {
      EXPECT_EQ(t.cache_hit_rate, shard_rate(t, 1.05)) << t.table;
    }
  }

  for (const auto& bad : {std::pair{0.0, std::optional<double>{}}, std::pair{1.5, std::optional<double>{}},
                          std::pair{0.05, std::optional<double>{-1.0}}, std::pair{0.05, std::optional<double>{11.0}}}) {
    ShardingOptions b;
    b.host_cache_fraction = bad.first;
    b.index_zipf_alpha = bad.second;
    EXPECT_THROW(plan_sharding(f, 128, 8, a100(), b), InputError) << bad.first;
  }
}

// DCNv2's tiny tables are replicated, its 40 M-row tables placed whole, and
// every explicit scheme gives a consistent plan.
TEST(ShardingTest, DcnV2SchemesAreConsistent) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  const ShardingPlan automatic = plan_sharding(m, 16, 8, a100(), {});
  expect_consistent(m, automatic, 16);
  std::map<ShardingKind, int> kinds;
  for (const TablePlacement& t : automatic.tables) ++kinds[t.kind];
  EXPECT_GT(kinds[ShardingKind::kDataParallel], 10);
  EXPECT_GT(kinds[ShardingKind::kTableWise], 0);
  for (const char* scheme : {"table_wise", "row_wise", "column_wise", "table_row_wise", "data_parallel"}) {
    ShardingOptions o;
    o.scheme = scheme;
    const ShardingPlan plan = plan_sharding(m, 16, 8, a100(), o);
    expect_consistent(m, plan, 16);
    // Replicating 105 GB of fp32 tables on every GPU does not fit: the
    // biggest tables move to host memory (table-wise, cached); the rest keep the scheme.
    for (const TablePlacement& t : plan.tables) {
      if (!t.host_memory) {
        EXPECT_EQ(to_string(t.kind), scheme);
      }
    }
    EXPECT_EQ(plan.host_memory_tables() > 0, std::string(scheme) == "data_parallel") << scheme;
  }
  ShardingOptions cw;
  cw.scheme = "column_wise";
  const ShardingPlan plan = plan_sharding(m, 16, 8, a100(), cw);
  EXPECT_EQ(plan.tables[0].shards.size(), 2u);  // 128 columns in shards of 64
}

// Row-wise sharding spreads one table's lookups evenly: shares 1/n.
TEST(ShardingTest, RowWiseSplitsEvenly) {
  const DlrmModel m = parse_model(R"({"schema_version": 1, "name": "one", "dense_features": 8,
      "tables": [{"rows": 1000003, "dim": 64, "pooling": 4}], "bottom_mlp": {"widths": [64]},
      "interaction": {"kind": "dot"}, "top_mlp": {"widths": [1]}})",
                                  "one.json");
  ShardingOptions o;
  o.scheme = "row_wise";
  const ShardingPlan plan = plan_sharding(m, 8, 8, a100(), o);
  expect_consistent(m, plan, 8);
  EXPECT_EQ(plan.tables[0].shards[0].rows, 125001);  // 1000003 = 8 x 125000 + 3
  EXPECT_EQ(plan.tables[0].shards[7].rows, 125000);
  EXPECT_LT(plan.load_imbalance(), 1.0001);
}

// More GPUs never raise the busiest GPU's embedding load.
TEST(ShardingTest, MoreGpusLowerTheMaxLoad) {
  const DlrmModel i = load_model("dlrm-i");
  double previous = 1e30;
  for (int gpus : {64, 128, 256}) {
    ShardingOptions o;
    o.batch_per_gpu = 512 * 64 / gpus;  // fixed global batch
    const ShardingPlan plan = plan_sharding(i, gpus, 8, a100(), o);
    ASSERT_TRUE(plan.fits) << plan.reason;
    double max = 0;
    for (const GpuLoad& g : plan.gpus) max = std::max(max, g.embedding_seconds);
    EXPECT_LT(max, previous) << gpus;
    previous = max;
  }
}

// A sharding file: a group row-wise, one table pinned to a GPU, the rest by
// the planner; bad entries are reported at their pointers.
TEST(ShardingTest, ShardingFiles) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  ShardingOptions o = parse_sharding_file(R"({"schema_version": 1, "default": "auto", "tables": [
      {"group": "cat_20", "kind": "row_wise"},
      {"table": 0, "kind": "table_wise", "rank": 5},
      {"table": 9, "kind": "column_wise"}]})",
                                          "s.json", m, 16, 8);
  EXPECT_EQ(o.overrides.size(), 3u);
  const ShardingPlan plan = plan_sharding(m, 16, 8, a100(), o);
  expect_consistent(m, plan, 16);
  EXPECT_EQ(plan.tables[20].kind, ShardingKind::kRowWise);
  EXPECT_EQ(plan.tables[0].kind, ShardingKind::kTableWise);
  EXPECT_EQ(plan.tables[0].shards[0].rank, 5);
  EXPECT_EQ(plan.tables[9].kind, ShardingKind::kColumnWise);
  try {
    parse_sharding_file(R"({"schema_version": 1, "tables": [
        {"table": 26, "kind": "row_wise"},
        {"group": "cat_99", "kind": "rowwise"},
        {"table": 1, "kind": "row_wise", "rank": 3}]})",
                        "s.json", m, 16, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: /tables/0/table: expected an integer in [0, 25], got 26\n"
              "s.json: /tables/1/group: unknown value 'cat_99' (did you mean 'cat_19'?); valid: cat_0, cat_1, "
              "cat_10, cat_11, cat_12, cat_13, cat_14, cat_15, cat_16, cat_17, cat_18, cat_19, cat_2, cat_20, "
              "cat_21, cat_22, cat_23, cat_24, cat_25, cat_3, cat_4, cat_5, cat_6, cat_7, cat_8, cat_9\n"
              "s.json: /tables/1/kind: unknown value 'rowwise' (did you mean 'row_wise'?); valid: column_wise, "
              "data_parallel, row_wise, table_row_wise, table_wise\n"
              "s.json: /tables/2/rank: a rank places table-wise tables only");
  }
}

// Each table and group is named once; a table's own entry wins over its
// group's wherever the two stand; a file for another model is refused.
TEST(ShardingTest, ShardingFilesNameEachTableOnceAndTheirModel) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  for (const char* text : {R"({"schema_version": 1, "tables": [{"table": 20, "kind": "table_wise"},
                              {"group": "cat_20", "kind": "row_wise"}]})",
                           R"({"schema_version": 1, "tables": [{"group": "cat_20", "kind": "row_wise"},
                              {"table": 20, "kind": "table_wise"}]})"}) {
    const ShardingPlan plan = plan_sharding(m, 16, 8, a100(), parse_sharding_file(text, "s.json", m, 16, 8));
    EXPECT_EQ(plan.tables[20].kind, ShardingKind::kTableWise) << text;
  }
  try {
    parse_sharding_file(R"({"schema_version": 1, "model": "dlrm-a", "tables": [
        {"table": 0, "kind": "table_wise", "rank": 5},
        {"group": "cat_3", "kind": "row_wise"},
        {"table": 0, "kind": "row_wise"},
        {"group": "cat_3", "kind": "data_parallel"}]})",
                        "s.json", m, 16, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: /model: this file places the tables of model 'dlrm-a'; the run's model is 'dlrm-dcnv2'\n"
              "s.json: /tables/2/table: table 0 is placed by /tables/0 already; name each table once\n"
              "s.json: /tables/3/group: group 'cat_3' is placed by /tables/1 already; name each group once");
  }
}

// Two plans are the same shard for shard, and their loads are equal to the bit.
void expect_same_plan(const ShardingPlan& a, const ShardingPlan& b) {
  ASSERT_EQ(a.fits, b.fits) << a.reason << " | " << b.reason;
  ASSERT_EQ(a.tables.size(), b.tables.size());
  for (std::size_t t = 0; t < a.tables.size(); ++t) {
    const TablePlacement& x = a.tables[t];
    const TablePlacement& y = b.tables[t];
    ASSERT_EQ(x.kind, y.kind) << "table " << t;
    ASSERT_EQ(x.host_memory, y.host_memory) << "table " << t;
    ASSERT_EQ(x.shards.size(), y.shards.size()) << "table " << t;
    for (std::size_t k = 0; k < x.shards.size(); ++k) {
      EXPECT_EQ(x.shards[k].rank, y.shards[k].rank) << "table " << t << " shard " << k;
      EXPECT_EQ(x.shards[k].rows, y.shards[k].rows);
      EXPECT_EQ(x.shards[k].dim, y.shards[k].dim);
      EXPECT_EQ(x.shards[k].lookup_share, y.shards[k].lookup_share);
    }
  }
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (std::size_t g = 0; g < a.gpus.size(); ++g) {
    EXPECT_EQ(a.gpus[g].hbm_bytes, b.gpus[g].hbm_bytes) << "GPU " << g;
    EXPECT_EQ(a.gpus[g].embedding_seconds, b.gpus[g].embedding_seconds) << "GPU " << g;
    EXPECT_EQ(a.gpus[g].shards, b.gpus[g].shards) << "GPU " << g;
  }
}

// A plan written as a sharding file and read back gives the same plan, for
// every kind of placement: table-wise (model A), column-wise (model A on 192
// GPUs: balancing's shards of 32 and 31 columns), table-row-wise, replicated,
// and tables moved to host memory (model F, DCNv2 replicated).
TEST(ShardingTest, EmittedFilesReproduceThePlan) {
  struct Case {
    const char* model;
    int gpus;
    const char* scheme;
  };
  for (const Case& c : {Case{"dlrm-a", 128, "auto"}, Case{"dlrm-a", 192, "auto"}, Case{"dlrm-f", 128, "auto"},
                        Case{"dlrm-dcnv2", 16, "auto"},
                        Case{"dlrm-dcnv2", 16, "column_wise"}, Case{"dlrm-dcnv2", 16, "table_row_wise"},
                        Case{"dlrm-dcnv2", 16, "data_parallel"}, Case{"dlrm-dcnv2", 16, "row_wise"},
                        Case{"dlrm-i", 64, "auto"}}) {
    SCOPED_TRACE(std::string(c.model) + " " + c.scheme);
    const DlrmModel m = load_model(c.model);
    ShardingOptions o;
    o.scheme = c.scheme;
    const ShardingPlan planned = plan_sharding(m, c.gpus, 8, a100(), o);
    expect_consistent(m, planned, c.gpus);
    const std::string text = sharding_file_text(planned, 8, "test");
    const ShardingOptions pinned = parse_sharding_file(text, "emitted.json", m, c.gpus, 8);
    EXPECT_EQ(pinned.overrides.size(), planned.tables.size());
    expect_same_plan(planned, plan_sharding(m, c.gpus, 8, a100(), pinned));
  }
}

// Balancing on random models (fixed seed): groups of 1 to 40 tables of
// random rows, dims and pooling, on 1 to 6 nodes, with and without the
// exchange in the trade-off. Against the same plan without balancing: only
// tables it kept whole become column-wise, in shards at most one column
// apart in width and at most 64 wide; every other table is placed the same
// way; and, weighing the work alone, the busiest GPU does less by at least
// the 1% balancing asks of a split, or the plans are identical. Every plan
// reads back from its sharding file shard for shard.
TEST(ShardingTest, BalancingOnRandomModels) {
  std::mt19937_64 rng(20261201);
  const auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  int splits = 0;
  for (int trial = 0; trial < 40; ++trial) {
    DlrmModel m;
    m.name = fmt::format("random-{}", trial);
    m.dense_features = 16;
    m.embedding_type = DataType::kFp16;
    const std::int64_t groups = uniform(1, 4);
    for (std::int64_t g = 0; g < groups; ++g) {
      m.tables.push_back(TableGroup{.name = fmt::format("g{}", g),
                                    .count = uniform(1, 40),
                                    .rows = uniform(100'000, 20'000'000),
                                    .dim = 4 * uniform(4, 64),
                                    .pooling = static_cast<double>(uniform(1, 80))});
    }
    m.bottom_mlp = Mlp{.input = 16, .widths = {64, 32}};
    m.interaction.kind = InteractionKind::kDot;
    m.top_mlp = Mlp{.input = m.interaction_output(), .widths = {64, 1}};
    const int gpus = 8 * static_cast<int>(uniform(1, 6));
    ShardingOptions o;
    o.exchange_bytes_per_second = trial % 2 == 0 ? 0 : 25e9;
    ShardingOptions whole = o;
    whole.split_to_balance = false;
    SCOPED_TRACE(fmt::format("trial {}: {} groups on {} GPUs", trial, groups, gpus));
    const ShardingPlan plan = plan_sharding(m, gpus, 8, a100(), o);
    const ShardingPlan kept = plan_sharding(m, gpus, 8, a100(), whole);
    ASSERT_EQ(plan.fits, kept.fits);
    if (!plan.fits) continue;
    expect_consistent(m, plan, gpus);
    expect_consistent(m, kept, gpus);
    bool split = false;
    for (std::size_t t = 0; t < plan.tables.size(); ++t) {
      const TablePlacement& a = plan.tables[t];
      const TablePlacement& b = kept.tables[t];
      if (a.kind == b.kind) continue;
      split = true;
      ASSERT_EQ(b.kind, ShardingKind::kTableWise);
      ASSERT_EQ(a.kind, ShardingKind::kColumnWise);
      ASSERT_GE(a.shards.size(), 2u);
      std::int64_t widest = 0;
      std::int64_t narrowest = a.shards.front().dim;
      for (const Shard& sh : a.shards) {
        widest = std::max(widest, sh.dim);
        narrowest = std::min(narrowest, sh.dim);
      }
      EXPECT_LE(widest - narrowest, 1);
      EXPECT_LE(widest, 64);
    }
    const auto busiest = [](const ShardingPlan& p) {
      double most = 0;
      for (const GpuLoad& g : p.gpus) most = std::max(most, g.embedding_seconds);
      return most;
    };
    if (!split) {
      expect_same_plan(plan, kept);
    } else {
      ++splits;
      if (o.exchange_bytes_per_second == 0) {
        EXPECT_LT(busiest(plan), 0.99 * busiest(kept));
      }
    }
    expect_same_plan(plan, plan_sharding(m, gpus, 8, a100(),
                                         parse_sharding_file(sharding_file_text(plan, 8, "t"), "t.json", m, gpus, 8)));
  }
  // The seed gives both outcomes.
  EXPECT_GT(splits, 3);
  EXPECT_LT(splits, 37);
}

// "memory": host puts a table in host memory behind its cache even when HBM
// has room; "hbm" keeps a table out of the planner's moves.
TEST(ShardingTest, MemoryPins) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  const ShardingPlan host = plan_sharding(
      m, 16, 8, a100(),
      parse_sharding_file(R"({"schema_version": 1, "tables": [{"table": 2, "kind": "table_wise", "memory": "host"}]})",
                          "s.json", m, 16, 8));
  expect_consistent(m, host, 16);
  EXPECT_EQ(host.host_memory_tables(), 1);
  EXPECT_TRUE(host.tables[2].host_memory);
  const ShardingPlan hbm = plan_sharding(m, 16, 8, a100(), {});
  EXPECT_LT(host.gpus[static_cast<std::size_t>(host.tables[2].shards[0].rank)].hbm_bytes,
            hbm.max_hbm_bytes());

  // Replicating everything does not fit; the largest tables move to host
  // memory unless pinned to HBM.
  ShardingOptions dp;
  dp.scheme = "data_parallel";
  const ShardingPlan moved = plan_sharding(m, 16, 8, a100(), dp);
  ASSERT_TRUE(moved.fits);
  std::int64_t largest = -1;
  for (const TablePlacement& t : moved.tables) {
    if (t.host_memory && largest < 0) largest = t.table;
  }
  ASSERT_GE(largest, 0);
  ShardingOptions keep = parse_sharding_file(
      fmt::format(R"({{"schema_version": 1, "default": "data_parallel", "tables": [{{"table": {}, "kind": "row_wise", "memory": "hbm"}}]}})",
                  largest),
      "s.json", m, 16, 8);
  const ShardingPlan kept = plan_sharding(m, 16, 8, a100(), keep);
  expect_consistent(m, kept, 16);
  EXPECT_FALSE(kept.tables[static_cast<std::size_t>(largest)].host_memory);
  EXPECT_GT(kept.host_memory_tables(), 0);

  ShardingOptions disabled = parse_sharding_file(
      R"({"schema_version": 1, "tables": [{"table": 2, "kind": "table_wise", "memory": "host"}]})", "s.json", m, 16, 8);
  disabled.host_memory_bytes_per_node = 0;
  EXPECT_THROW(plan_sharding(m, 16, 8, a100(), disabled), InputError);
}

// Column shards go to the GPUs a file gives; a GPU without room says so.
TEST(ShardingTest, ColumnShardRanks) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  const ShardingPlan plan = plan_sharding(
      m, 16, 8, a100(),
      parse_sharding_file(R"({"schema_version": 1, "tables": [{"table": 0, "kind": "column_wise", "ranks": [3, 11]}]})",
                          "s.json", m, 16, 8));
  expect_consistent(m, plan, 16);
  ASSERT_EQ(plan.tables[0].shards.size(), 2u);
  EXPECT_EQ(plan.tables[0].shards[0].rank, 3);
  EXPECT_EQ(plan.tables[0].shards[1].rank, 11);
  // Widths of the file's choosing.
  const ShardingPlan widths = plan_sharding(
      m, 16, 8, a100(),
      parse_sharding_file(
          R"({"schema_version": 1, "tables": [{"table": 0, "kind": "column_wise", "columns": [100, 20, 8], "ranks": [3, 11, 4]}]})",
          "s.json", m, 16, 8));
  expect_consistent(m, widths, 16);
  ASSERT_EQ(widths.tables[0].shards.size(), 3u);
  EXPECT_EQ(widths.tables[0].shards[0].dim, 100);
  EXPECT_EQ(widths.tables[0].shards[1].dim, 20);
  EXPECT_EQ(widths.tables[0].shards[2].dim, 8);
  EXPECT_EQ(widths.tables[0].shards[2].rank, 4);
  ShardingOptions short_columns;
  short_columns.overrides = {TableOverride{.table = 0, .kind = ShardingKind::kColumnWise, .columns = {64, 32}}};
  EXPECT_THROW(plan_sharding(m, 16, 8, a100(), short_columns), InputError);
  ShardingOptions small;
  small.hbm_reserve_fraction = 0.999;
  small.overrides = {TableOverride{.table = 0, .kind = ShardingKind::kColumnWise, .ranks = {3, 11}}};
  const ShardingPlan full = plan_sharding(m, 16, 8, a100(), small);
  EXPECT_FALSE(full.fits);
  ShardingOptions wrong;
  wrong.overrides = {TableOverride{.table = 0, .kind = ShardingKind::kColumnWise, .ranks = {3}}};
  EXPECT_THROW(plan_sharding(m, 16, 8, a100(), wrong), InputError);
}

TEST(ShardingTest, BadPinsAreReported) {
  const DlrmModel m = load_model("dlrm-dcnv2");
  try {
    parse_sharding_file(R"({"schema_version": 1, "tables": [
        {"table": 0, "kind": "table_wise", "ranks": [1, 2]},
        {"table": 1, "kind": "column_wise", "ranks": [1, 2, 3]},
        {"group": "cat_2", "kind": "column_wise", "ranks": [1, 16]},
        {"table": 3, "kind": "row_wise", "memory": "ddr"},
        {"table": 4, "kind": "table_wise", "columns": [64, 64]},
        {"table": 5, "kind": "column_wise", "columns": [64, 60]},
        {"table": 6, "kind": "column_wise", "columns": [64, 32, 32], "ranks": [1, 2]},
        {"table": 7, "kind": "column_wise", "columns": [0, 128]}]})",
                        "s.json", m, 16, 8);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: /tables/0/ranks: ranks place column-wise tables only (a table-wise table takes 'rank')\n"
              "s.json: /tables/1/ranks: expected 2 ranks, one per column shard of at most 64 columns (dim 128), "
              "got 3\n"
              "s.json: /tables/2/ranks/1: expected an integer in [0, 15], got 16\n"
              "s.json: /tables/3/memory: unknown value 'ddr'; valid: auto, hbm, host\n"
              "s.json: /tables/4/columns: columns split column-wise tables only\n"
              "s.json: /tables/5/columns: the column shards' widths add up to 124; the table's dim is 128\n"
              "s.json: /tables/6/ranks: expected 3 ranks, one per entry of 'columns', got 2\n"
              "s.json: /tables/7/columns/0: expected an integer in [1, 128], got 0");
  }
}

TEST(ShardingTest, RejectsUnknownSchemes) {
  ShardingOptions o;
  o.scheme = "rowwise";
  try {
    plan_sharding(load_model("dlrm-a-small"), 8, 8, a100(), o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--sharding: unknown sharding scheme 'rowwise' (did you mean 'row_wise'?); valid: auto, "
              "column_wise, data_parallel, row_wise, table_row_wise, table_wise");
  }
}

}  // namespace
}  // namespace zx::models
