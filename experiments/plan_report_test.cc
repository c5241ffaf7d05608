// Tests of `zionsim plan`'s report on typed plans: the embedding exchange is
// conserved (every byte sent is received) and counts what each collective
// kind moves; every table is placed once and counted once by kind; the GPU
// rows add up to the plan's shards; the busiest GPUs come first; the
// schemas' CSV headers and JSON keys; a size that does not fit has no rows
// and refuses CSV; and the search's choices are what the report plans with.
// The command's text is tests/golden/'s and tests/cli_end_to_end_test.sh's.

#include "experiments/plan_report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <utility>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/result_schema.h"
#include "experiments/whatif.h"
#include "models/dlrm/sharding.h"
#include "models/execution/op_graph.h"
#include "sim/units.h"

namespace zx::experiments {
namespace {

WhatIfOptions options_for(const std::string& model) {
  WhatIfOptions o;
  o.model = model;
  o.threads = 2;
  return o;
}

std::int64_t total_sent(const PlanReport& r) {
  return std::accumulate(r.gpus.begin(), r.gpus.end(), std::int64_t{0},
                         [](std::int64_t sum, const PlanGpu& g) { return sum + g.sent_bytes; });
}

std::int64_t total_received(const PlanReport& r) {
  return std::accumulate(r.gpus.begin(), r.gpus.end(), std::int64_t{0},
                         [](std::int64_t sum, const PlanGpu& g) { return sum + g.received_bytes; });
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(PlanReportTest, ExchangeCountsWhatEachCollectiveMoves) {
  namespace mc = models::collectives;
  models::OpGraph graph;
  graph.num_ranks = 4;
  // All-to-all-v over ranks 2 and 0 (group order): 100 bytes from 2 to 0,
  // 30 back; what each sends itself is not exchanged.
  graph.collectives.push_back({.kind = mc::CollectiveKind::kAllToAll,
                               .ranks = {2, 0},
                               .bytes_per_rank = sim::Bytes(135),
                               .all_to_all_v_bytes = {{5, 100}, {30, 7}}});
  // Reduce-scatter of 120 bytes of fp32 over three ranks: 40-byte blocks;
  // each sends the two blocks it does not own and receives two for its own.
  graph.collectives.push_back(
      {.kind = mc::CollectiveKind::kReduceScatter, .ranks = {0, 1, 2}, .bytes_per_rank = sim::Bytes(120)});
  // All-gather of 64 bytes over ranks 1 and 3: each sends its 32-byte block
  // to the other.
  graph.collectives.push_back(
      {.kind = mc::CollectiveKind::kAllGather, .ranks = {1, 3}, .bytes_per_rank = sim::Bytes(64)});
  // The dense all-reduce is not the embedding exchange.
  graph.collectives.push_back(
      {.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1, 2, 3}, .bytes_per_rank = sim::Bytes(4096)});
  std::vector<PlanGpu> gpus(4);
  add_exchange(graph, gpus);
  EXPECT_EQ(gpus[0].sent_bytes, 30 + 80);
  EXPECT_EQ(gpus[0].received_bytes, 100 + 80);
  EXPECT_EQ(gpus[1].sent_bytes, 80 + 32);
  EXPECT_EQ(gpus[1].received_bytes, 80 + 32);
  EXPECT_EQ(gpus[2].sent_bytes, 100 + 80);
  EXPECT_EQ(gpus[2].received_bytes, 30 + 80);
  EXPECT_EQ(gpus[3].sent_bytes, 32);
  EXPECT_EQ(gpus[3].received_bytes, 32);
}

TEST(PlanReportTest, EveryByteSentIsReceived) {
  // DCNv2 on 2 nodes mixes replicated, table-wise and table-row-wise tables
  // (all-to-alls, reduce-scatters and all-gathers); MLPerf on one node
  // row-wise and table-wise ones.
  for (const auto& [model, nodes] : {std::pair{"dlrm-dcnv2", 2}, std::pair{"dlrm-mlperf", 1}}) {
    const PlanReport r = make_plan_report(options_for(model), nodes);
    ASSERT_TRUE(r.fits()) << model;
    ASSERT_EQ(r.gpus.size(), static_cast<std::size_t>(r.size.gpus)) << model;
    EXPECT_GT(total_sent(r), 0) << model;
    EXPECT_EQ(total_sent(r), total_received(r)) << model;
    for (std::size_t i = 0; i < r.gpus.size(); ++i) {
      EXPECT_EQ(r.gpus[i].rank, static_cast<int>(i));
      EXPECT_EQ(r.gpus[i].node, static_cast<int>(i) / r.size.gpus_per_node);
    }
  }
}

TEST(PlanReportTest, EveryTableIsPlacedOnceAndCountedOnceByKind) {
  const PlanReport r = make_plan_report(options_for("dlrm-dcnv2"), 2);
  ASSERT_TRUE(r.fits());
  std::int64_t tables = 0;
  for (const models::TableGroup& g : r.size.model.tables) tables += g.count;
  ASSERT_EQ(r.size.plan.tables.size(), static_cast<std::size_t>(tables));
  std::vector<int> seen(static_cast<std::size_t>(tables));
  std::vector<std::int64_t> shards(r.gpus.size());
  for (const models::TablePlacement& t : r.size.plan.tables) {
    ASSERT_GE(t.table, 0);
    ASSERT_LT(t.table, tables);
    ++seen[static_cast<std::size_t>(t.table)];
    EXPECT_FALSE(t.shards.empty()) << t.table;
    for (const models::Shard& s : t.shards) ++shards[static_cast<std::size_t>(s.rank)];
  }
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "table " << i;
  // The GPU rows' shards are the plan's.
  for (const PlanGpu& g : r.gpus) EXPECT_EQ(g.shards, shards[static_cast<std::size_t>(g.rank)]) << g.rank;

  // By kind: every table once, the kinds in alphabetical order, the bytes
  // the tables'.
  const std::vector<PlanKind> kinds = plan_kinds(r);
  ASSERT_GE(kinds.size(), 2u);
  std::int64_t by_kind = 0;
  double bytes = 0;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    by_kind += kinds[i].tables;
    bytes += kinds[i].bytes;
    if (i > 0) {
      EXPECT_LT(kinds[i - 1].kind, kinds[i].kind);
    }
  }
  EXPECT_EQ(by_kind, tables);
  double table_bytes = 0;
  for (const models::TablePlacement& t : r.size.plan.tables) table_bytes += plan_table_bytes(r.size, t);
  EXPECT_NEAR(bytes, table_bytes, 1e-9 * table_bytes);

  // A row per table, in the plan's order.
  const std::vector<Row> rows = plan_table_rows(r);
  ASSERT_EQ(rows.size(), r.size.plan.tables.size());
  const std::size_t table_column = plan_table_schema().index("table");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(std::get<std::int64_t>(rows[i][table_column]), r.size.plan.tables[i].table);
  }
}

TEST(PlanReportTest, RankRangesCompressRuns) {
  models::TablePlacement t;
  for (int rank : {19, 0, 2, 1, 16, 7, 18, 2}) t.shards.push_back({.rank = rank});
  EXPECT_EQ(rank_ranges(t), "0-2,7,16,18-19");
  t.shards = {{.rank = 5}};
  EXPECT_EQ(rank_ranges(t), "5");
}

TEST(PlanReportTest, StatsAndTheBusiestGpus) {
  const PlanStats s = plan_stats({2.0, 6.0, 1.0, 3.0});
  EXPECT_EQ(s.min, 1.0);
  EXPECT_EQ(s.max, 6.0);
  EXPECT_EQ(s.mean, 3.0);
  EXPECT_EQ(s.max_over_mean(), 2.0);
  EXPECT_EQ(plan_stats({0.0, 0.0}).max_over_mean(), 1.0);

  std::vector<PlanGpu> gpus;
  for (int rank = 0; rank < 5; ++rank) gpus.push_back({.rank = rank, .embedding_ms = rank == 3 ? 9.0 : 4.0});
  const std::vector<PlanGpu> busiest = busiest_gpus(gpus, 3);
  ASSERT_EQ(busiest.size(), 3u);
  EXPECT_EQ(busiest[0].rank, 3);
  EXPECT_EQ(busiest[1].rank, 0);  // ties: by rank
  EXPECT_EQ(busiest[2].rank, 1);
  EXPECT_EQ(busiest_gpus(gpus, 10).size(), 5u);
}

TEST(PlanReportTest, CsvHasTheSchemasColumnsAndARowEach) {
  const PlanReport r = make_plan_report(options_for("dlrm-mlperf"), 1);
  ASSERT_TRUE(r.fits());
  std::ostringstream gpus;
  write_plan_csv(gpus, r, /*per_table=*/false);
  std::vector<std::string> lines = lines_of(gpus.str());
  ASSERT_EQ(lines.size(), r.gpus.size() + 1);
  EXPECT_EQ(lines[0],
            "rank,node,shards,hbm_gbyte,embedding_ms,exchange_sent_bytes,exchange_received_bytes,"
            "iteration_hbm_gbyte,host_gbyte");
  // GPU 0's row: its bytes as integers, GB and ms with six places.
  const PlanGpu& g = r.gpus[0];
  EXPECT_EQ(lines[1].rfind(fmt::format("0,0,{},{:.6f},{:.6f},{},{},", g.shards, g.hbm_bytes / 1e9, g.embedding_ms,
                                       g.sent_bytes, g.received_bytes),
                           0),
            0u)
      << lines[1];

  std::ostringstream tables;
  write_plan_csv(tables, r, /*per_table=*/true);
  lines = lines_of(tables.str());
  ASSERT_EQ(lines.size(), r.size.plan.tables.size() + 1);
  EXPECT_EQ(lines[0], "table,group,kind,memory,rows,dim,gbyte,gpus,cache_hit_rate");
  // HBM tables have no hit rate: the row ends in an empty field; the GPUs
  // are always quoted.
  EXPECT_EQ(lines[1].back(), ',');
  EXPECT_NE(lines[1].find(fmt::format(",\"{}\",", rank_ranges(r.size.plan.tables[0]))), std::string::npos);
}

TEST(PlanReportTest, JsonKeysFollowTheSchemas) {
  // Model A on 2 nodes keeps most tables in host memory.
  const PlanReport r = make_plan_report(options_for("dlrm-a"), 2);
  ASSERT_TRUE(r.fits());
  ASSERT_GT(r.size.plan.host_memory_tables(), 0);
  const nlohmann::ordered_json j = plan_report_json(r);
  EXPECT_EQ(j["fits"], true);
  ASSERT_EQ(j["per_gpu"].size(), r.gpus.size());
  std::vector<std::string> keys;
  for (const auto& [key, value] : j["per_gpu"][0].items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"rank", "node", "shards", "hbm_gbyte", "iteration_hbm_gbyte",
                                            "host_gbyte", "embedding_ms", "exchange_sent_bytes",
                                            "exchange_received_bytes"}));
  EXPECT_EQ(j["per_gpu"][1]["exchange_sent_bytes"], r.gpus[1].sent_bytes);
  ASSERT_EQ(j["tables"].size(), r.size.plan.tables.size());
  std::int64_t host = 0;
  for (std::size_t i = 0; i < r.size.plan.tables.size(); ++i) {
    const models::TablePlacement& t = r.size.plan.tables[i];
    const nlohmann::ordered_json& table = j["tables"][i];
    // Only host-memory tables have a hit rate.
    EXPECT_EQ(table.contains("cache_hit_rate"), t.host_memory) << i;
    EXPECT_EQ(table["memory"], t.host_memory ? "host" : "hbm") << i;
    EXPECT_EQ(table["shards"].size(), t.shards.size()) << i;
    host += t.host_memory ? 1 : 0;
  }
  EXPECT_EQ(j["host_memory_tables"], host);
  std::int64_t by_kind = 0;
  for (const auto& k : j["kinds"]) by_kind += k["tables"].get<std::int64_t>();
  EXPECT_EQ(by_kind, static_cast<std::int64_t>(r.size.plan.tables.size()));
}

TEST(PlanReportTest, ASizeThatDoesNotFitHasNoRows) {
  // Model A's 1.6 TB of embeddings do not fit one ZionEX node.
  const PlanReport r = make_plan_report(options_for("dlrm-a"), 1);
  EXPECT_FALSE(r.fits());
  EXPECT_FALSE(r.size.plan.reason.empty());
  EXPECT_TRUE(r.gpus.empty());
  std::ostringstream csv;
  EXPECT_THROW(write_plan_csv(csv, r, false), InputError);
  EXPECT_TRUE(csv.str().empty());
  const nlohmann::ordered_json j = plan_report_json(r);
  EXPECT_EQ(j["fits"], false);
  EXPECT_EQ(j["reason"], r.size.plan.reason);
  EXPECT_FALSE(j.contains("per_gpu"));
  EXPECT_FALSE(j.contains("tables"));
  std::ostringstream table;
  write_plan_table(table, r, true, true);
  const std::vector<std::string> lines = lines_of(table.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "does not fit: " + r.size.plan.reason);
}

TEST(PlanReportTest, TableListsTheBusiestGpusOrEveryOne) {
  const PlanReport r = make_plan_report(options_for("dlrm-mlperf"), 2);
  ASSERT_TRUE(r.fits());
  ASSERT_GT(r.gpus.size(), 8u);
  const auto gpu_lines = [&](bool per_gpu) {
    std::ostringstream out;
    write_plan_table(out, r, per_gpu, false);
    const std::vector<std::string> lines = lines_of(out.str());
    std::size_t header = 0;
    while (header < lines.size() && lines[header].rfind("  GPU  node", 0) != 0) ++header;
    EXPECT_LT(header, lines.size());
    return std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(header) + 1, lines.end());
  };
  const std::vector<std::string> busiest = gpu_lines(false);
  ASSERT_EQ(busiest.size(), 8u);
  const PlanGpu first = busiest_gpus(r.gpus, 1).front();
  EXPECT_EQ(busiest[0].rfind(fmt::format("{:>5} {:>5} {:>7}", first.rank, first.node, first.shards), 0), 0u);
  EXPECT_EQ(gpu_lines(true).size(), r.gpus.size());
}

TEST(PlanReportTest, TheSearchsChoicesArePlanned) {
  WhatIfOptions o = options_for("dlrm-mlperf");
  o.search_budget = 5;
  const PlanReport r = make_plan_report(o, 1, /*search=*/true);
  ASSERT_TRUE(r.search.has_value());
  EXPECT_LE(r.search->simulations, 5);
  EXPECT_EQ(r.options.sharding_overrides, r.search->overrides);
  EXPECT_TRUE(r.fits());
  EXPECT_EQ(total_sent(r), total_received(r));
  EXPECT_TRUE(plan_report_json(r).contains("search"));
  // Without a search the options are as given.
  const PlanReport plain = make_plan_report(o, 1);
  EXPECT_FALSE(plain.search.has_value());
  EXPECT_TRUE(plain.options.sharding_overrides.empty());
}

}  // namespace
}  // namespace zx::experiments
