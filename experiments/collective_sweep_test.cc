// The collective sweep (`zionsim collective`'s model) on typed requests: the
// sizes it runs, the rows' shape and nccl-tests' definitions, determinism
// over threads, and what its algorithms give (the ring, the hierarchical
// pipeline, NVLS, NCCL's cost model, the tuner). The command's text, CSV
// and JSON are tools/cli_test.cc's and tests/golden/'s.

#include "experiments/collective_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "experiments/stack.h"
#include "models/nccl/nccl_model.h"

namespace zx::experiments {
namespace {

namespace coll = models::collectives;

CollectiveSweepRequest request(const std::string& cluster, std::optional<int> nodes,
                               std::vector<std::string> algorithms, std::int64_t lo, std::int64_t hi,
                               double factor = 2) {
  CollectiveSweepRequest r;
  r.scenario.cluster.cluster = cluster;
  r.scenario.cluster.nodes = nodes;
  r.algorithms = std::move(algorithms);
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.step_factor = factor;
  return r;
}

CollectiveSweepReport sweep(const CollectiveSweepRequest& r) {
  const std::optional<CollectiveSweepReport> report = run_collective_sweep(r);
  EXPECT_TRUE(report.has_value());  // no MPI job: this process is rank 0
  return report.value_or(CollectiveSweepReport{});
}

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

TEST(CollectiveSweepTest, ParsesSizesAsNcclTests) {
  EXPECT_EQ(parse_message_size("8", "-b"), 8);
  EXPECT_EQ(parse_message_size("64K", "-b"), 64 * kKiB);
  EXPECT_EQ(parse_message_size("1.5k", "-b"), 1536);
  EXPECT_EQ(parse_message_size("2G", "-b"), 2 * kGiB);
  for (const char* bad : {"1X", "", "-1", "K", "1MB"}) {
    EXPECT_THROW(parse_message_size(bad, "--min-bytes"), InputError) << bad;
  }
  // Past 1e15 bytes simulated time could overflow.
  EXPECT_THROW(parse_message_size("2000000000000000", "--min-bytes"), InputError);
}

// A sweep from zero bytes has one zero-byte row and continues from one
// element, doubling: 0, 4, 8, 16 for fp32. Steps smaller than an element
// round to the size before them: no repeated rows (1, 1.5, 2.25, ... bytes
// are 0 bytes of fp32 until 4). More sizes than allowed are refused.
TEST(CollectiveSweepTest, SizesRoundToWholeElements) {
  EXPECT_EQ(sweep_sizes(0, 16, 2, 4, 1000), (std::vector<std::int64_t>{0, 4, 8, 16}));
  EXPECT_EQ(sweep_sizes(1, 8, 1.5, 4, 1000), (std::vector<std::int64_t>{0, 4, 8}));
  EXPECT_EQ(sweep_sizes(kKiB, kKiB, 2, 4, 1), (std::vector<std::int64_t>{kKiB}));
  EXPECT_THROW(sweep_sizes(8, 16, 2, 4, 1), InputError);
  // The zero-byte row moves nothing and takes no time.
  const CollectiveSweepReport r = sweep(request("zionex", 1, {"ring"}, 0, 16));
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].bytes, 0);
  EXPECT_EQ(r.rows[0].count, 0);
  EXPECT_EQ(r.rows[0].time_us, 0.0);
  EXPECT_EQ(r.rows[0].algbw, 0.0);
  EXPECT_GT(r.rows[1].time_us, 0.0);
}

// Rows: sizes outermost, then variants, then algorithms; sizes x
// algorithms x variants of them, each with its variant's ranks.
TEST(CollectiveSweepTest, RowsAreSizesTimesAlgorithmsTimesVariants) {
  CollectiveSweepRequest req = request("zionex", std::nullopt, {"ring", "hierarchical"}, kKiB, kMiB, 32);
  req.vary = {"nodes=1,2", "nic-gbit=100,400"};
  const CollectiveSweepReport r = sweep(req);
  ASSERT_EQ(r.sizes, (std::vector<std::int64_t>{kKiB, 32 * kKiB, kMiB}));
  ASSERT_EQ(r.variants.size(), 4u);
  EXPECT_TRUE(r.varied());
  EXPECT_EQ(r.columns(), 8u);
  ASSERT_EQ(r.rows.size(), r.sizes.size() * req.algorithms.size() * r.variants.size());
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const CollectiveSweepRow& row = r.rows[i];
    EXPECT_EQ(row.bytes, r.sizes[i / 8]) << i;
    EXPECT_EQ(row.variant, i % 8 / 2) << i;
    EXPECT_EQ(row.algorithm, req.algorithms[i % 2]) << i;
    EXPECT_EQ(row.ranks, row.variant < 2 ? 8 : 16) << i;
    EXPECT_EQ(row.ranks, r.variants[row.variant].ranks);
    EXPECT_EQ(row.count, row.bytes / 4) << i;  // all-reduce: the whole buffer's elements
  }
  EXPECT_EQ(r.variants[3].settings, (Settings{{"nodes", "2"}, {"nic-gbit", "400"}}));
  EXPECT_EQ(column_labels(r)[7], "hierarchical nodes=2 nic-gbit=400");
}

// nccl-tests' definitions: algbw = size / time; busbw = algbw x 2(n-1)/n
// for all-reduce, (n-1)/n for all-gather, 1 for broadcast.
TEST(CollectiveSweepTest, BusBandwidthIsNcclTests) {
  CollectiveSweepRequest req = request("zionex", std::nullopt, {"ring", "nccl"}, kKiB, 16 * kMiB, 16);
  req.vary = {"nodes=1,2"};
  const CollectiveSweepReport r = sweep(req);
  ASSERT_EQ(r.rows.size(), 4u * 2u * 2u);  // 1K, 16K, 256K, 4M
  for (const CollectiveSweepRow& row : r.rows) {
    const double n = row.ranks;
    EXPECT_DOUBLE_EQ(row.algbw, static_cast<double>(row.bytes) / (row.time_us * 1e3));
    EXPECT_DOUBLE_EQ(row.busbw, row.algbw * 2 * (n - 1) / n) << row.algorithm << " " << row.bytes;
  }
  EXPECT_DOUBLE_EQ(bus_factor(coll::CollectiveKind::kAllGather, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(coll::CollectiveKind::kBroadcast, 16), 1.0);
  EXPECT_EQ(bus_factor_formula(coll::CollectiveKind::kReduceScatter), "(n-1)/n");
  // All-gather's count is one rank's block.
  CollectiveSweepRequest gather = request("zionex", 1, {"ring"}, kMiB, kMiB);
  gather.kind = coll::CollectiveKind::kAllGather;
  const CollectiveSweepReport g = sweep(gather);
  ASSERT_EQ(g.rows.size(), 1u);
  EXPECT_EQ(g.rows[0].count, kMiB / 4 / 8);
  EXPECT_DOUBLE_EQ(g.rows[0].busbw, g.rows[0].algbw * 7 / 8);
}

// The rows are the same bits on one thread, two, and one per core, with the
// tuner's and NCCL's choices.
TEST(CollectiveSweepTest, DeterministicAcrossThreads) {
  CollectiveSweepRequest req = request("zionex", 2, {"ring", "auto", "nccl"}, kKiB, 4 * kMiB, 8);
  std::vector<CollectiveSweepReport> reports;
  for (int threads : {1, 2, 0}) {
    req.threads = threads;
    reports.push_back(sweep(req));
  }
  for (std::size_t k = 1; k < reports.size(); ++k) {
    ASSERT_EQ(reports[k].rows.size(), reports[0].rows.size());
    for (std::size_t i = 0; i < reports[0].rows.size(); ++i) {
      const CollectiveSweepRow& a = reports[0].rows[i];
      const CollectiveSweepRow& b = reports[k].rows[i];
      EXPECT_EQ(a.time_us, b.time_us) << i;
      EXPECT_EQ(a.busbw, b.busbw) << i;
      EXPECT_EQ(a.chosen, b.chosen) << i;
      ASSERT_EQ(a.candidates.size(), b.candidates.size()) << i;
      for (std::size_t c = 0; c < a.candidates.size(); ++c) {
        EXPECT_EQ(a.candidates[c].algorithm, b.candidates[c].algorithm);
        EXPECT_EQ(a.candidates[c].time, b.candidates[c].time);
      }
    }
  }
  EXPECT_FALSE(reports[0].rows[1].chosen.empty());  // auto's
  EXPECT_FALSE(reports[0].rows[2].chosen.empty());  // nccl's
  EXPECT_TRUE(reports[0].rows[0].chosen.empty());   // the ring's
}

// Errors come before any simulation, a variant's naming it.
TEST(CollectiveSweepTest, RefusesBadRequests) {
  CollectiveSweepRequest req = request("zionex", std::nullopt, {"ring"}, kKiB, kMiB);
  bool simulated = false;
  const auto before = [&] { simulated = true; };
  req.min_bytes = 2 * kMiB;
  EXPECT_THROW(run_collective_sweep(req, before), InputError);
  req.min_bytes = kKiB;
  req.vary = {"nodes=1,2"};
  req.ranks = 12;
  try {
    run_collective_sweep(req, before);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().at(0).message, "expected 1 to 8 ranks, got 12 (in the variant nodes=1)");
  }
  req.ranks = 0;
  req.options = {"rign={}"};
  EXPECT_THROW(run_collective_sweep(req, before), InputError);
  EXPECT_FALSE(simulated);
}

// The hierarchical default pipelines a large collective across servers: a
// 64 MiB all-reduce on two ZionEX servers (four slices) takes less than in
// one slice, yet no less than its NICs allow: each GPU's NIC sends (G-1)/G x
// S/L in the reduce-scatter and again in the all-gather, S/L = 8 MiB in
// all, at 200 Gb/s at most.
TEST(CollectiveSweepTest, PipelinedHierarchicalBeatsOneSliceButNotTheNics) {
  CollectiveSweepRequest req = request("zionex", 2, {"hierarchical"}, 64 * kMiB, 64 * kMiB);
  const double pipelined = sweep(req).rows.at(0).time_us;
  req.options = {R"(hierarchical={"chunks": 1})"};
  const double whole = sweep(req).rows.at(0).time_us;
  const double nic_bound_us = 8.0 * (1 << 20) / 25e9 * 1e6;  // 335.5 us
  EXPECT_GE(pipelined, nic_bound_us);
  EXPECT_LT(pipelined, 0.8 * whole) << pipelined << " us pipelined, " << whole << " us in one slice";
}

// --algo auto: at every size its time is the least of the other columns
// (every algorithm that runs all-reduce, the candidates it has by default)
// and it chose that column. On one HGX server NVLink SHARP wins some sizes,
// not all.
TEST(CollectiveSweepTest, AutoIsTheFastestColumn) {
  const std::vector<std::string> algorithms = {"double_binary_tree", "halving_doubling", "hierarchical", "nvls",
                                               "ring"};
  std::vector<std::string> columns = algorithms;
  columns.push_back("auto");
  const CollectiveSweepReport r = sweep(request("hgx", std::nullopt, columns, kKiB, kGiB, 32));
  ASSERT_EQ(r.rows.size(), 5 * columns.size());
  std::set<std::string> chosen;
  for (std::size_t size = 0; size < 5; ++size) {
    std::map<std::string, double> time_us;
    for (std::size_t c = 0; c < columns.size(); ++c) time_us[columns[c]] = r.rows[size * columns.size() + c].time_us;
    const auto faster = [&](const std::string& a, const std::string& b) { return time_us[a] < time_us[b]; };
    const std::string fastest = *std::min_element(algorithms.begin(), algorithms.end(), faster);
    const CollectiveSweepRow& auto_row = r.rows[size * columns.size() + algorithms.size()];
    EXPECT_EQ(auto_row.chosen, fastest) << r.sizes[size];
    EXPECT_EQ(auto_row.time_us, time_us[fastest]) << r.sizes[size];
    EXPECT_EQ(auto_row.candidates.size(), algorithms.size());
    chosen.insert(auto_row.chosen);
  }
  EXPECT_TRUE(chosen.contains("nvls"));
  EXPECT_GE(chosen.size(), 2u);
  const std::vector<ChoiceSpan> spans = choice_spans(r, algorithms.size());
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(spans.front().chosen, "nvls");
  EXPECT_EQ(spans.front().from_bytes, kKiB);
  EXPECT_EQ(spans.back().to_bytes, kGiB);
}

// NVLink SHARP on one HGX server: NVLS's all-reduce moves S + S/n up and S
// down per GPU where the ring moves 2(n-1)/n S each way, at the switch's
// fitted share of the link; at 1 GiB its bus bandwidth is about 1.37x the
// ring's (NCCL measured 480 against 370 GB/s: 1.30x).
TEST(CollectiveSweepTest, NvlsBeatsTheRingOnHopperSwitches) {
  const CollectiveSweepReport r = sweep(request("hgx", std::nullopt, {"ring", "nvls"}, kGiB, kGiB));
  ASSERT_EQ(r.rows.size(), 2u);
  const double ratio = r.rows[1].busbw / r.rows[0].busbw;
  EXPECT_GT(ratio, 1.3);
  EXPECT_LT(ratio, 1.45);
  EXPECT_NEAR(r.rows[1].busbw, 480, 0.05 * 480);
}

// NCCL's cost model sees a B200 and a B300 as NCCL does: Hopper's tuning
// rows with Blackwell's NVLink (18 links of 40.1 GB/s), so on one HGX B200
// or B300 server a 256 MiB all-reduce lands within 10% of the flow-level
// ring (both bound by NVLink; with A100's 12 x 20 GB/s it would take about
// three times as long, as it did for B300 before its profile was known by
// name).
TEST(CollectiveSweepTest, NcclModelKnowsBlackwellNvlink) {
  for (const char* cluster : {"hgx-b200", "hgx-b300"}) {
    SCOPED_TRACE(cluster);
    const CollectiveSweepReport r = sweep(request(cluster, std::nullopt, {"ring", "nccl"}, 256 * kMiB, 256 * kMiB));
    ASSERT_EQ(r.rows.size(), 2u);
    const double ratio = r.rows[1].time_us / r.rows[0].time_us;
    EXPECT_GT(ratio, 0.9);
    EXPECT_LT(ratio, 1.1);
  }
  for (const char* gpu : {"a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "gb200", "b300", "gb300"}) {
    SCOPED_TRACE(gpu);
    const std::string name(gpu);
    const NcclGpuView view = nccl_gpu_view(name);
    const bool ampere = name.starts_with("a100");
    const bool hopper = name.starts_with("h");
    EXPECT_EQ(view.generation, ampere ? models::nccl::GpuGeneration::kAmpere : models::nccl::GpuGeneration::kHopper);
    EXPECT_EQ(view.nvlink_gbps, ampere   ? models::nccl::kA100NvlinkGbps
                                : hopper ? models::nccl::kH100NvlinkGbps
                                         : models::nccl::kB200NvlinkGbps);
    // The share gives the same from the datasheet's NVLink per direction.
    EXPECT_NEAR(view.nvlink_share * (ampere ? 300 : hopper ? 450 : 900), view.nvlink_gbps, 1e-9);
    // A calibrated profile keeps its base's name as prefix.
    EXPECT_EQ(nccl_gpu_view(name + "-calibrated").nvlink_gbps, view.nvlink_gbps);
  }
  // A name it does not know: Hopper's view with fp8, an A100's without.
  EXPECT_EQ(nccl_gpu_view("lab-gpu", true).generation, models::nccl::GpuGeneration::kHopper);
  EXPECT_EQ(nccl_gpu_view("lab-gpu", false).generation, models::nccl::GpuGeneration::kAmpere);
  EXPECT_EQ(nccl_gpu_view("a100-40gb", true).generation, models::nccl::GpuGeneration::kAmpere);
}

// `nccl` weighs NVLS where NCCL 2.20 does: on one HGX H100 server a 1 GiB
// all-reduce is predicted at NVLS's 23 us + size / (8 x 40 x 5/6 GB/s), bus
// bandwidth 464 GB/s, within 5% of the flow-level nvls plan and of NCCL's
// measured 480, where the ring alone gives 369. ZionEX's A100 switch has no
// SHARP, and on a GB200 NVL72 rack (MNNVL) NCCL 2.20 turns NVLS off, so
// both get the model's time without NVLS.
TEST(CollectiveSweepTest, NcclModelWeighsNvlsOnOneHopperServer) {
  const auto busbw = [](const std::string& cluster, const std::string& algo,
                        const std::vector<std::string>& overrides = {}) {
    CollectiveSweepRequest req = request(cluster, std::nullopt, {algo}, kGiB, kGiB);
    req.scenario.cluster.overrides = overrides;
    const CollectiveSweepReport r = sweep(req);
    return r.rows.size() == 1 ? r.rows[0].busbw : -1.0;
  };
  const auto model = [](int ranks, const NcclGpuView& gpu, bool nvls) {
    return models::nccl::predict({.ranks = ranks,
                                  .ranks_per_node = ranks,
                                  .bytes = std::int64_t{1} << 30,
                                  .gpu = gpu.generation,
                                  .intra_bw_gbps = gpu.nvlink_gbps,
                                  .version = models::nccl::NcclVersion::kV2_20,
                                  .nvls = nvls});
  };
  const models::nccl::NcclPrediction h100 = model(8, nccl_gpu_view("h100-sxm"), true);
  ASSERT_EQ(h100.algorithm, models::nccl::Algorithm::kNvls);
  const double hgx = busbw("hgx", "nccl");
  EXPECT_NEAR(hgx, h100.busbw_gbps, 0.01);
  EXPECT_NEAR(hgx, 464.0, 0.5);
  EXPECT_NEAR(hgx / busbw("hgx", "nvls"), 1.0, 0.05);
  EXPECT_NEAR(busbw("zionex", "nccl"), model(8, nccl_gpu_view("a100-40gb"), false).busbw_gbps, 0.01);
  const NcclGpuView gb200 = nccl_gpu_view("gb200");
  EXPECT_NEAR(busbw("gb200-nvl72", "nccl"), model(72, gb200, false).busbw_gbps, 0.01);
  // With NVLS the rack would be 14% faster: the switch-off is visible.
  EXPECT_GT(model(72, gb200, true).busbw_gbps, 1.1 * model(72, gb200, false).busbw_gbps);

  // The cluster's NVLink reaches NCCL's model, as NCCL would count it (20.6
  // of every 25 GB/s): with twice H100's 450 GB/s, 741.6, NVLS's channels
  // stop at the top of NCCL's list, 60 GB/s (8 x 60 x 5/6 = 400 GB/s
  // algbw), and so do the ring's: 12 rings of 60, split into 16 (the most)
  // of 30, raised to 16 x 40 = 640 GB/s, x 8/14 = 365.7 algbw. NVLS still
  // wins: bus bandwidth 694 at 1 GiB, against 464 with the preset's.
  NcclGpuView wide = nccl_gpu_view("h100-sxm");
  wide.nvlink_gbps = 900 * 20.6 / 25;
  const models::nccl::NcclPrediction wider = model(8, wide, true);
  EXPECT_EQ(wider.algorithm, models::nccl::Algorithm::kNvls);
  EXPECT_NEAR(busbw("hgx", "nccl", {"nvlink.bandwidth_gbyte_per_s=900"}), wider.busbw_gbps, 0.01);
  EXPECT_NEAR(wider.busbw_gbps, 694.1, 0.5);
  for (const models::nccl::AlgoProtoTime& e : wider.table) {
    if (e.algorithm == models::nccl::Algorithm::kRing && e.protocol == models::nccl::Protocol::kSimple) {
      EXPECT_NEAR(e.bandwidth_gbps, 640.0 * 8 / 14, 1e-6);
    }
  }
}

// What NCCL's cost model picked, per size: on one HGX H100 server ring/LL at
// 1 KiB, NVLS from 1 MiB (the crossover is at 494 kB, models/nccl's tests);
// NCCL_ALGO / NCCL_PROTO as its options, for the name they are given for.
// And the graphs behind its numbers, per variant: one HGX server (ring 12 x
// 30, NVLS 8 x 40, 24 channels run) and two (a ring per 400 Gb/s NIC at 48,
// NVLS 48 to the NICs, 16 channels run).
TEST(CollectiveSweepTest, WhatNcclPickedAndItsGraphs) {
  const CollectiveSweepReport r = sweep(request("hgx", std::nullopt, {"nccl", "ring"}, kKiB, kGiB, 1024));
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.rows[0].chosen, "ring/LL");
  EXPECT_EQ(r.rows[2].chosen, "nvls/Simple");
  EXPECT_EQ(r.rows[4].chosen, "nvls/Simple");
  EXPECT_EQ(r.rows[1].chosen, "");  // the ring's column
  EXPECT_EQ(describe_choices(choice_spans(r, 0)), "ring/LL at 1 KiB; nvls/Simple from 1 MiB to 1 GiB");

  const auto chosen = [](const std::vector<std::string>& algorithms, const std::vector<std::string>& options) {
    CollectiveSweepRequest req = request("hgx", std::nullopt, algorithms, kGiB, kGiB);
    req.options = options;
    std::vector<std::string> out;
    for (const CollectiveSweepRow& row : sweep(req).rows) out.push_back(row.chosen);
    return out;
  };
  EXPECT_EQ(chosen({"nccl"}, {}), std::vector<std::string>{"nvls/Simple"});
  EXPECT_EQ(chosen({"nccl"}, {R"(nccl={"algo": "Ring"})"}), std::vector<std::string>{"ring/Simple"});
  EXPECT_EQ(chosen({"nccl"}, {R"(nccl={"proto": "LL"})"}), std::vector<std::string>{"ring/LL"});
  EXPECT_EQ(chosen({"nccl", "nccl-2.20"}, {R"(nccl-2.20={"algo": "Tree"})"}),
            (std::vector<std::string>{"nvls/Simple", "tree/Simple"}));

  CollectiveSweepRequest varied = request("hgx", std::nullopt, {"nccl"}, kMiB, kMiB);
  varied.vary = {"nodes=1,2"};
  const CollectiveSweepReport v = sweep(varied);
  ASSERT_EQ(v.variants.size(), 2u);
  ASSERT_EQ(v.variants[0].nccl_graphs.size(), 1u);
  ASSERT_EQ(v.variants[1].nccl_graphs.size(), 1u);
  const NcclGraphs& one = v.variants[0].nccl_graphs[0].second;
  EXPECT_EQ(v.variants[0].nccl_graphs[0].first, "nccl");
  EXPECT_EQ(one.ring.channels, 12);
  EXPECT_EQ(one.ring.bw_intra_gbps, 30.0);
  EXPECT_EQ(one.nvls.channels, 8);
  EXPECT_FALSE(one.several_nodes);
  EXPECT_EQ(one.channels_run, 24);
  const NcclGraphs& two = v.variants[1].nccl_graphs[0].second;
  EXPECT_EQ(two.ring.channels, 8);
  EXPECT_EQ(two.tree.bw_intra_gbps, 48.0);
  EXPECT_EQ(two.nvls.bw_inter_gbps, 48.0);
  EXPECT_EQ(two.channels_run, 16);
  EXPECT_TRUE(two.several_nodes);
}

// --vary cluster=...: a ring all-reduce inside one server is bound by
// NVLink, 300 GB/s per direction on ZionEX and 900 on HGX B200, so B200's
// takes about a third of the time (a little less: its reductions also run
// on faster HBM).
TEST(CollectiveSweepTest, VariesTheCluster) {
  CollectiveSweepRequest req = request("zionex", std::nullopt, {"ring"}, 256 * kMiB, 256 * kMiB);
  req.scenario.cluster.cluster = "zionex";
  req.vary = {"cluster=zionex,hgx-b200"};
  const CollectiveSweepReport r = sweep(req);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.variants[1].settings, (Settings{{"cluster", "hgx-b200"}}));
  const double ratio = r.rows[1].time_us / r.rows[0].time_us;
  EXPECT_GT(ratio, 0.28);
  EXPECT_LT(ratio, 0.36);
}

// The ring's one-channel default on a group of several servers: the advice
// names the channels of a server's GPUs; with its own options, or inside
// one server, none.
TEST(CollectiveSweepTest, AdvisesChannelsAcrossServers) {
  const CollectiveSweepReport across = sweep(request("zionex", 2, {"ring", "double_binary_tree"}, kMiB, kMiB));
  EXPECT_TRUE(across.default_channels.ring);
  EXPECT_TRUE(across.default_channels.double_binary_tree);
  EXPECT_EQ(across.default_channels.ranks_per_server, 8);
  EXPECT_EQ(channel_advice(across.default_channels).size(), 2u);
  CollectiveSweepRequest own = request("zionex", 2, {"ring"}, kMiB, kMiB);
  own.options = {R"(ring={"channels": 8})"};
  EXPECT_FALSE(sweep(own).default_channels.ring);
  EXPECT_FALSE(sweep(request("zionex", 1, {"ring"}, kMiB, kMiB)).default_channels.ring);
}

}  // namespace
}  // namespace zx::experiments
