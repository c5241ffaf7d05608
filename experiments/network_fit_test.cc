// Tests of experiments/network_fit.h, closed loop: rows the network model
// itself gives on a cluster whose link parameters were changed (simulated
// with --fit none on that cluster) must give those parameters back from a
// fit on the preset, with the rows matched. Moved from
// tools/calibrate_network_test.cc, which keeps the command's own text, files
// and exit statuses. Also: which parameters the runs determine, and the
// checks made before anything is simulated.

#include "experiments/network_fit.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "calibration/nccl_tests.h"
#include "topology/cluster_file.h"

namespace zx::experiments {
namespace {

using calibration::NcclTestsRun;

// A run of `collective` over `hosts` hosts with `per_host` ranks each (rank
// lines as nccl-tests prints them), rows from 1 KiB to `max_bytes` by
// factors of 4, times not yet measured.
NcclTestsRun run_of(const std::string& source, const std::string& collective, int hosts, int per_host,
                    std::int64_t max_bytes = std::int64_t{256} << 20) {
  NcclTestsRun run{.source = source, .collective = collective, .ranks = hosts * per_host};
  for (int h = 0; h < hosts; ++h) run.hosts.push_back(fmt::format("node{}", h));
  for (int r = 0; r < run.ranks; ++r) run.rank_host.push_back(r / per_host);
  for (std::int64_t size = 1024; size <= max_bytes; size *= 4) {
    run.rows.push_back({.size_bytes = size, .count = size / 4, .type = "float", .time_us = 1,
                        .line = static_cast<int>(run.rows.size()) + 10});
  }
  return run;
}

// `set` ("key=value", --set's) on the preset zionex, the servers the runs
// used unless `nodes` says.
topology::ClusterRequest zionex(std::vector<std::string> set = {}, std::optional<int> nodes = std::nullopt) {
  topology::ClusterRequest r;
  r.cluster = "zionex";
  r.nodes = nodes;
  r.overrides = std::move(set);
  return r;
}

NetworkFitHooks with_algorithms(std::map<std::string, std::string> algorithms) {
  return {.algorithms = [algorithms] { return algorithms; }};
}

// `run` with the times the model gives on the cluster `truth` sets, its
// servers the run's hosts.
NcclTestsRun measured(NcclTestsRun run, const std::vector<std::string>& truth, const std::string& algorithm) {
  const NetworkFitReport r =
      fit_network({run}, zionex(truth), {.fit = "none"}, with_algorithms({{run.collective, algorithm}}));
  for (std::size_t i = 0; i < run.rows.size(); ++i) run.rows[i].time_us = r.runs[0].rows[i].before_us;
  return run;
}

const FittedParameter& fitted(const NetworkFitReport& r, const std::string& key) {
  for (const FittedParameter& p : r.fitted) {
    if (p.key == key) return p;
  }
  ADD_FAILURE() << key << " was not fitted";
  static const FittedParameter none;
  return none;
}

bool has(const NetworkFitReport& r, const std::string& key) {
  for (const FittedParameter& p : r.fitted) {
    if (p.key == key) return true;
  }
  return false;
}

// What fit_network throws, as the command prints it.
std::string error_of(const std::vector<NcclTestsRun>& runs, const topology::ClusterRequest& request,
                     const NetworkFitOptions& options, const NetworkFitHooks& hooks = {}) {
  try {
    fit_network(runs, request, options, hooks);
  } catch (const InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "(no error)";
}

// Across two servers: an all-reduce and an all-to-all measured on a fabric
// at 45% RoCE efficiency with 1.2 us more per transfer between servers
// than the default, where all-to-all traffic gets 30% of that; the fit
// finds all three within rounding and matches every row, and the fitted
// cluster reproduces them.
TEST(NetworkFitTest, RecoversTheFabricAcrossServers) {
  const std::vector<std::string> truth = {"nic.efficiency=0.45", "communication.network_transfer_latency_ns=2400",
                                          "nic.all_to_all_efficiency=0.3"};
  const std::map<std::string, std::string> algorithms = {{"all_reduce", "hierarchical"}, {"all_to_all", "direct"}};
  const std::vector<NcclTestsRun> runs = {measured(run_of("ar", "all_reduce", 2, 8), truth, "hierarchical"),
                                          measured(run_of("a2a", "all_to_all", 2, 8), truth, "direct")};
  const NetworkFitReport r = fit_network(runs, zionex(), {}, with_algorithms(algorithms));
  EXPECT_EQ(r.fit, "nic");
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.gpus_per_node, 8);
  EXPECT_NEAR(fitted(r, "nic.efficiency").value, 0.45, 0.45 * 0.005);
  EXPECT_NEAR(fitted(r, "communication.network_transfer_latency_ns").value, 2400, 2400 * 0.03);
  EXPECT_NEAR(fitted(r, "nic.all_to_all_efficiency").value, 0.3, 0.3 * 0.005);
  EXPECT_FALSE(fitted(r, "nic.efficiency").at_bound);
  EXPECT_EQ(fitted(r, "communication.network_transfer_latency_ns").was, 1200);
  EXPECT_GT(r.evaluations, 0);
  ASSERT_EQ(r.runs.size(), 2u);
  for (const NetworkFitRun& run : r.runs) {
    EXPECT_GT(run.mape_before_percent, 10.0) << run.source;
    EXPECT_LT(run.mape_after_percent, 0.5) << run.source;
    EXPECT_EQ(run.ranks, 16u);
    EXPECT_EQ(run.rows.size(), 10u);
  }
  // The fitted cluster reproduces the measured rows.
  const NetworkFitReport again = fit_network(runs, r.fitted_request, {.fit = "none"}, with_algorithms(algorithms));
  const NetworkFitRow& largest = again.runs[1].rows[9];
  EXPECT_NEAR(largest.before_us, largest.measured_us, largest.measured_us * 0.005);
}

// All-to-alls of two group sizes (2 and 4 servers) tell the gap between a
// rank's peers from the latency per transfer: the gap grows the small
// all-to-all with the group, the latency does not. A fabric at 60% RoCE
// efficiency, 1.5 us between peers and the default 1.2 us per transfer
// fits back to all three, every row matched.
TEST(NetworkFitTest, AllToAllsOfTwoGroupSizesFitThePeerGap) {
  const std::vector<std::string> truth = {"nic.efficiency=0.6", "communication.peer_gap_ns=1500"};
  const NcclTestsRun small = measured(run_of("a2a_16", "all_to_all", 2, 8, 16 << 20), truth, "direct");
  const NcclTestsRun large = measured(run_of("a2a_32", "all_to_all", 4, 8, 16 << 20), truth, "direct");
  const NetworkFitHooks direct = with_algorithms({{"all_to_all", "direct"}});
  const NetworkFitReport r = fit_network({small, large}, zionex(), {}, direct);
  EXPECT_EQ(r.nodes, 4);
  ASSERT_TRUE(has(r, "communication.peer_gap_ns"));
  EXPECT_NEAR(fitted(r, "communication.peer_gap_ns").value, 1500, 1500 * 0.03);
  EXPECT_NEAR(fitted(r, "communication.network_transfer_latency_ns").value, 1200, 1200 * 0.1);
  EXPECT_NEAR(fitted(r, "nic.efficiency").value, 0.6, 0.6 * 0.005);
  EXPECT_FALSE(fitted(r, "communication.peer_gap_ns").at_bound);
  for (const NetworkFitRun& run : r.runs) {
    EXPECT_GT(run.mape_before_percent, 10.0) << run.source;
    EXPECT_LT(run.mape_after_percent, 0.5) << run.source;
  }
  // One group size: no gap to fit.
  EXPECT_FALSE(has(fit_network({small}, zionex(), {}, direct), "communication.peer_gap_ns"));
}

// All-to-all rows alone cannot tell the links from what all-to-all traffic
// gets of them: only the link values are fitted.
TEST(NetworkFitTest, AllToAllAloneFitsTheLinks) {
  const NcclTestsRun run = measured(run_of("a2a_only", "all_to_all", 2, 8), {"nic.efficiency=0.6"}, "direct");
  const NetworkFitReport r = fit_network({run}, zionex(), {}, with_algorithms({{"all_to_all", "direct"}}));
  EXPECT_FALSE(has(r, "nic.all_to_all_efficiency"));
  EXPECT_NEAR(fitted(r, "nic.efficiency").value, 0.6, 0.6 * 0.005);
}

// Inside one server the fit moves NVLink's efficiency and the transfer
// latency: 70% and 900 ns (the default is 400).
TEST(NetworkFitTest, RecoversNvlinkInsideOneServer) {
  const NcclTestsRun run =
      measured(run_of("ag", "all_gather", 1, 8), {"nvlink.efficiency=0.7", "communication.transfer_latency_ns=900"},
               "hierarchical");
  const NetworkFitReport r = fit_network({run}, zionex(), {}, with_algorithms({{"all_gather", "hierarchical"}}));
  EXPECT_EQ(r.fit, "nvlink");
  EXPECT_NEAR(fitted(r, "nvlink.efficiency").value, 0.7, 0.7 * 0.005);
  EXPECT_NEAR(fitted(r, "communication.transfer_latency_ns").value, 900, 900 * 0.05);
  EXPECT_LT(r.runs[0].mape_after_percent, 0.5);
}

// Runs inside one server and across two, measured on one cluster whose
// NVLink and fabric both differ from the preset: auto fits NVLink to the
// first and the fabric to the second, and finds both.
TEST(NetworkFitTest, FitsNvlinkAndTheFabricTogether) {
  const std::vector<std::string> truth = {"nvlink.efficiency=0.6", "communication.transfer_latency_ns=300",
                                          "nic.efficiency=0.45", "communication.network_transfer_latency_ns=2400"};
  const NcclTestsRun ag = measured(run_of("ag_inside", "all_gather", 1, 8), truth, "hierarchical");
  const NcclTestsRun ar = measured(run_of("ar_across", "all_reduce", 2, 8), truth, "hierarchical");
  const NetworkFitHooks hierarchical = with_algorithms({{"all_gather", "hierarchical"}, {"all_reduce", "hierarchical"}});
  const NetworkFitReport r = fit_network({ag, ar}, zionex({}, 2), {}, hierarchical);
  EXPECT_EQ(r.fit, "nvlink and nic");
  EXPECT_NEAR(fitted(r, "nvlink.efficiency").value, 0.6, 0.6 * 0.005);
  EXPECT_NEAR(fitted(r, "nic.efficiency").value, 0.45, 0.45 * 0.01);
  EXPECT_NEAR(fitted(r, "communication.network_transfer_latency_ns").value, 2400, 2400 * 0.1);
  for (const NetworkFitRun& run : r.runs) EXPECT_LT(run.mape_after_percent, 1.0) << run.source;
  // --fit nvlink takes only the runs inside a server; with none, it says so.
  EXPECT_EQ(error_of({ar}, zionex(), {.fit = "nvlink"}, hierarchical),
            "--fit: nvlink is fitted to runs inside one server, and every run spans servers");
}

// Comparison only: nothing fitted, no evaluation, the rows as they were.
TEST(NetworkFitTest, ComparisonOnly) {
  const NcclTestsRun run = measured(run_of("ar", "all_reduce", 2, 8, 1 << 20), {"nic.efficiency=0.5"}, "ring");
  const NetworkFitReport r = fit_network({run}, zionex(), {.fit = "none"}, with_algorithms({{"all_reduce", "ring"}}));
  EXPECT_EQ(r.fit, "none");
  EXPECT_TRUE(r.fitted.empty());
  EXPECT_EQ(r.evaluations, 0);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].algorithm, "ring");
  EXPECT_EQ(r.runs[0].collective, "all_reduce");
  for (const NetworkFitRow& row : r.runs[0].rows) {
    EXPECT_EQ(row.after_us, row.before_us);
    EXPECT_GE(row.measured_us, row.before_us) << row.size_bytes;
    EXPECT_DOUBLE_EQ(row.error_percent, 100.0 * (row.after_us - row.measured_us) / row.measured_us);
  }
  EXPECT_GT(r.runs[0].rows.back().measured_us, r.runs[0].rows.back().before_us * 1.2)
      << "at half the RoCE efficiency a 1 MiB all-reduce is slower";
  EXPECT_EQ(r.fitted_request.nodes, 2);
  EXPECT_EQ(r.fitted_request.overrides, std::vector<std::string>{});
}

// A truth at the end of a parameter's range is found there and flagged:
// a communication library with no latency between servers fits to within
// the search's resolution of 0.
TEST(NetworkFitTest, ValueAtTheEndOfItsRangeIsFlagged) {
  const NcclTestsRun run = measured(run_of("ar_no_latency", "all_reduce", 2, 8),
                                    {"communication.network_transfer_latency_ns=0"}, "hierarchical");
  const NetworkFitReport r = fit_network({run}, zionex(), {}, with_algorithms({{"all_reduce", "hierarchical"}}));
  EXPECT_LT(fitted(r, "communication.network_transfer_latency_ns").value, 1.0);
  EXPECT_TRUE(fitted(r, "communication.network_transfer_latency_ns").at_bound);
  EXPECT_FALSE(fitted(r, "nic.efficiency").at_bound);
}

// Which parameters the runs determine, with their ranges and scales.
TEST(NetworkFitTest, TheParametersEachRowSetDetermines) {
  const auto keys = [](const std::vector<NetworkParameter>& params) {
    std::vector<std::string> k;
    for (const NetworkParameter& p : params) k.push_back(p.fit.name);
    return k;
  };
  EXPECT_EQ(keys(network_parameters(true, false, false, false)),
            (std::vector<std::string>{"nvlink.efficiency", "communication.transfer_latency_ns"}));
  EXPECT_EQ(keys(network_parameters(false, true, true, true)),
            (std::vector<std::string>{"nic.efficiency", "communication.network_transfer_latency_ns",
                                      "nic.all_to_all_efficiency", "communication.peer_gap_ns"}));
  const std::vector<NetworkParameter> nic = network_parameters(false, true, true, true);
  EXPECT_EQ(nic[0].rows, RowSet::kAcrossOthers);
  EXPECT_EQ(nic[2].rows, RowSet::kAcrossAllToAll);
  EXPECT_EQ(network_parameters(false, true, false, false)[0].rows, RowSet::kAcross);
  // Efficiencies on a log scale up to 1, which is an answer (no loss);
  // latencies linear from 0, where only the gap between peers is one.
  EXPECT_TRUE(nic[0].fit.log_scale);
  EXPECT_EQ(nic[0].fit.lo, 0.02);
  EXPECT_EQ(nic[0].fit.hi, 1.0);
  EXPECT_TRUE(nic[0].fit.hi_is_answer);
  EXPECT_FALSE(nic[1].fit.log_scale);
  EXPECT_EQ(nic[1].fit.hi, 20'000.0);
  EXPECT_FALSE(nic[1].fit.lo_is_answer);
  EXPECT_TRUE(nic[3].fit.lo_is_answer);
  EXPECT_FALSE(nic[3].fit.hi_is_answer);
  EXPECT_EQ(describe(RowSet::kInside), "the runs inside one server");
}

// Two parameters cannot be fitted to rows of one size; runs the cluster
// cannot hold and NCCL's cost model are refused; all before anything is
// simulated or any output file opened.
TEST(NetworkFitTest, InputsAreCheckedBeforeAnythingIsSimulated) {
  bool simulating = false;
  NetworkFitHooks hooks = with_algorithms({{"all_to_all", "direct"}, {"all_reduce", "hierarchical"}});
  hooks.before_simulating = [&] { simulating = true; };
  NcclTestsRun one_size = run_of("one_size", "all_to_all", 1, 8, 1024);
  one_size.ranks = 0;  // no rank lines: every GPU of the cluster
  one_size.hosts.clear();
  one_size.rank_host.clear();
  EXPECT_EQ(error_of({one_size}, zionex({}, 1), {}, hooks),
            "--nccl-tests: fitting nvlink.efficiency and communication.transfer_latency_ns (2 parameters) needs rows "
            "of at least 2 distinct sizes in the runs inside one server; the files give 1: measure a sweep "
            "(nccl-tests -b 8 -e 1G -f 2), or fit fewer (--fit)");
  EXPECT_EQ(error_of({one_size}, zionex(), {}, hooks),
            "--nodes: the files list no ranks and hosts: give the cluster's --nodes");
  const NcclTestsRun ar = run_of("ar", "all_reduce", 2, 8);
  EXPECT_EQ(error_of({ar}, zionex({}, 1), {}, hooks),
            "ar: the run spans 2 hosts but the cluster has 1 server (use --nodes)");
  EXPECT_EQ(error_of({ar}, zionex({"gpus_per_node=4"}), {}, hooks),
            "ar: host node0 runs more than 4 ranks, the GPUs of a server");
  EXPECT_EQ(error_of({ar}, zionex(), {}, with_algorithms({{"all_reduce", "nccl"}})),
            "--algo: nccl is NCCL's closed-form cost model, which does not run on the links a fit moves; use a flow "
            "algorithm or --fit none");
  NcclTestsRun mixed = ar;
  mixed.rows[1].type = "half";
  EXPECT_EQ(error_of({mixed}, zionex(), {}, hooks),
            "ar: line 11: type: every row of a file must have one type, found 'half' after 'float'");
  EXPECT_FALSE(simulating);
}

}  // namespace
}  // namespace zx::experiments
