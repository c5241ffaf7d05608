// Tests of `zionsim calibrate-network`, in process and closed loop: the
// network model's own collective times, written as nccl-tests output for a
// cluster whose link parameters were changed, must give those parameters
// back from the fit, with the rows matched; the fitted cluster file must
// read back; bad combinations exit 2 with a message. The fit's own cases
// (peer gap, NVLink, both at once, a value at its bound) are
// experiments/network_fit_test.cc's.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/cli.h"

namespace zx::tools {
namespace {

struct Result {
  int status;
  std::string out;
  std::string err;
};

Result run(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int status = run_cli(args, out, err);
  return {status, out.str(), err.str()};
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(std::getenv("TEST_TMPDIR")) / name).string();
}

// `zionsim collective ... --format json` written as nccl-tests 2.18 prints a
// run of `program` over `hosts` hosts with `per_host` ranks each.
std::string as_nccl_tests(const std::string& collective_json, const std::string& program, int hosts, int per_host) {
  const nlohmann::json j = nlohmann::json::parse(collective_json);
  std::string text = "# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003\n";
  text += fmt::format("# Collective test starting: {}\n", program);
  text += "# nThread 1 nGpus 1 minBytes 1024 maxBytes 268435456 step: 4(factor) warmup iters: 5 iters: 20\n#\n";
  for (int r = 0; r < hosts * per_host; ++r) {
    text += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on node{} device {:2d} [0x{:02x}] NVIDIA A100-SXM4-40GB\n",
                        r, 1000 + r, r / per_host, r % per_host, r % per_host);
  }
  text += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
          "busbw #wrong\n";
  for (const nlohmann::json& row : j["results"]) {
    const std::int64_t size = row["size_bytes"];
    const double t = row["time_us"];
    text += fmt::format("{:12d} {:13d}     float     sum      -1 {:10.3f} {:7.2f} {:7.2f}      0 {:10.3f} {:7.2f} "
                        "{:7.2f}      0\n",
                        size, size / 4, t, row["algbw_gbyte_per_s"].get<double>(),
                        row["busbw_gbyte_per_s"].get<double>(), t, row["algbw_gbyte_per_s"].get<double>(),
                        row["busbw_gbyte_per_s"].get<double>());
  }
  return text + "# Avg bus bandwidth    : 1.0\n";
}

std::string measured_file(const std::string& name, std::vector<std::string> collective_args, const std::string& program,
                          int hosts, int per_host, const char* max_bytes = "256M") {
  collective_args.insert(collective_args.begin(), "collective");
  for (const char* a : {"-b", "1K", "-e", max_bytes, "-f", "4", "--format", "json"}) collective_args.push_back(a);
  const Result c = run(collective_args);
  EXPECT_EQ(c.status, kExitOk) << c.err;
  const std::string path = temp_path(name);
  std::ofstream(path) << as_nccl_tests(c.out, program, hosts, per_host);
  return path;
}

// Across two servers: an all-reduce and an all-to-all measured on a fabric
// at 45% RoCE efficiency with 1.2 us more per transfer between servers
// than the default, where all-to-all traffic gets
// 30% of that; the fit finds all three within rounding and matches every
// row.
TEST(CalibrateNetworkTest, RecoversTheFabricAcrossServers) {
  const std::vector<std::string> truth = {"--nodes", "2", "--set", "nic.efficiency=0.45", "--set",
                                          "communication.network_transfer_latency_ns=2400", "--set",
                                          "nic.all_to_all_efficiency=0.3"};
  std::vector<std::string> ar = truth;
  for (const char* a : {"--op", "all_reduce", "--algo", "hierarchical"}) ar.push_back(a);
  std::vector<std::string> a2a = truth;
  for (const char* a : {"--op", "all_to_all", "--algo", "direct"}) a2a.push_back(a);
  const std::string ar_file = measured_file("ar.txt", ar, "all_reduce_perf", 2, 8);
  const std::string a2a_file = measured_file("a2a.txt", a2a, "alltoall_perf", 2, 8);
  const std::string fitted = temp_path("fitted.json");
  const std::string report = temp_path("report.md");
  const Result r = run({"calibrate-network", "--nccl-tests", ar_file, a2a_file, "--out", fitted, "--report", report,
                        "--format", "json"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fit"], "nic");
  EXPECT_EQ(j["nodes"], 2);
  EXPECT_NEAR(j["fitted"]["nic.efficiency"]["value"].get<double>(), 0.45, 0.45 * 0.005);
  EXPECT_NEAR(j["fitted"]["communication.network_transfer_latency_ns"]["value"].get<double>(), 2400, 2400 * 0.03);
  EXPECT_NEAR(j["fitted"]["nic.all_to_all_efficiency"]["value"].get<double>(), 0.3, 0.3 * 0.005);
  EXPECT_FALSE(j["fitted"]["nic.efficiency"]["at_bound"].get<bool>());
  ASSERT_EQ(j["files"].size(), 2u);
  for (const nlohmann::json& file : j["files"]) {
    EXPECT_GT(file["mape_before_percent"].get<double>(), 10.0) << file["file"];
    EXPECT_LT(file["mape_after_percent"].get<double>(), 0.5) << file["file"];
    EXPECT_EQ(file["ranks"], 16);
    EXPECT_EQ(file["rows"].size(), 10u);
  }
  // The fitted cluster reproduces the measured rows.
  std::vector<std::string> again = {"collective", "--cluster", fitted, "--op", "all_to_all", "--algo", "direct",
                                    "-b", "256M", "-e", "256M", "--format", "json"};
  const Result c = run(again);
  ASSERT_EQ(c.status, kExitOk) << c.err;
  const double measured = j["files"][1]["rows"][9]["measured_us"];
  EXPECT_NEAR(nlohmann::json::parse(c.out)["results"][0]["time_us"].get<double>(), measured, measured * 0.005);
  std::ifstream report_in(report);
  const std::string report_text((std::istreambuf_iterator<char>(report_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report_text.find("fitted nic.efficiency"), std::string::npos) << report_text;
}

// Comparison only, and the combinations that cannot work.
TEST(CalibrateNetworkTest, ComparisonOnlyAndBadCombinations) {
  const std::string file = measured_file("ar2.txt", {"--nodes", "2", "--op", "all_reduce", "--algo", "hierarchical"},
                                         "all_reduce_perf", 2, 8);
  const Result none = run({"calibrate-network", "--nccl-tests", file, "--fit", "none", "--algo", "all_reduce=nccl"});
  EXPECT_EQ(none.status, kExitOk) << none.err;
  EXPECT_NE(none.out.find("fit: none (comparison only)"), std::string::npos) << none.out;
  const Result nccl = run({"calibrate-network", "--nccl-tests", file, "--algo", "all_reduce=nccl"});
  EXPECT_EQ(nccl.status, kExitBadInput);
  EXPECT_NE(nccl.err.find("closed-form cost model"), std::string::npos) << nccl.err;
  const Result small = run({"calibrate-network", "--nccl-tests", file, "--nodes", "1"});
  EXPECT_EQ(small.status, kExitBadInput);
  EXPECT_NE(small.err.find("the run spans 2 hosts but the cluster has 1 server (use --nodes)"), std::string::npos)
      << small.err;
  const Result dense = run({"calibrate-network", "--nccl-tests", file, "--set", "gpus_per_node=4"});
  EXPECT_EQ(dense.status, kExitBadInput);
  EXPECT_NE(dense.err.find("host node0 runs more than 4 ranks"), std::string::npos) << dense.err;
  // --fit nvlink takes only the runs inside a server; with none, it says so.
  const Result nvlink_only = run({"calibrate-network", "--nccl-tests", file, "--fit", "nvlink"});
  EXPECT_EQ(nvlink_only.status, kExitBadInput);
  EXPECT_NE(nvlink_only.err.find("--fit: nvlink is fitted to runs inside one server, and every run spans servers"),
            std::string::npos)
      << nvlink_only.err;
}

// Two parameters cannot be fitted to rows of one size.
TEST(CalibrateNetworkTest, TooFewSizesForTheParametersAreRefused) {
  const std::string path = temp_path("one_size.txt");
  std::ofstream(path) << "# Collective test starting: alltoall_perf\n"
                         "        8   2   float   none   -1   10.0   0.00   0.00   0   9.0   0.00   0.00   0\n";
  const Result r = run({"calibrate-network", "--nccl-tests", path, "--nodes", "1"});
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_NE(r.err.find("fitting nvlink.efficiency and communication.transfer_latency_ns (2 parameters) needs rows "
                       "of at least 2 distinct sizes in the runs inside one server; the files give 1"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace zx::tools
