// Tests of the sharding planner: it never exceeds a GPU's HBM budget, places
// every table exactly once with shards that add up, balances uniform tables,
// falls back to host memory for model F and refuses model A on one node with
// the numbers.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/error.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models {
namespace {

const DeviceProfile& a100() {
  static const DeviceProfile p = builtin_device_profile("a100-40gb");
  return p;
}

// Checks the invariants every plan must keep.
void expect_consistent(const DlrmModel& model, const ShardingPlan& plan, int gpus) {
  ASSERT_TRUE(plan.fits) << model.name << ": " << plan.reason;
  ASSERT_EQ(plan.tables.size(), static_cast<std::size_t>(model.num_tables()));
  ASSERT_EQ(plan.gpus.size(), static_cast<std::size_t>(gpus));
  for (const GpuLoad& g : plan.gpus) EXPECT_LE(g.hbm_bytes, plan.hbm_budget_bytes);
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
