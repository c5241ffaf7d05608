// Tests of the command line, in process: help and version exit 0 on stdout;
// bad usage exits 2 with a message on stderr that names the problem.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tools/backend_options.h"
#include "experiments/knobs.h"
#include "experiments/scenario.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "experiments/interrupt.h"
#include "tools/variations.h"

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

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The knob and ranks columns collective --vary puts before a row.
std::string fmt_prefix(const std::string& nodes, const std::string& gbit, int ranks) {
  return "\"" + nodes + "\",\"" + gbit + "\"," + std::to_string(ranks) + ",";
}

// An interrupt requested from outside (the Python package's Ctrl-C) stops
// whatif, collective and run with status 130 and "interrupted", prints no
// result, and, once cleared, the same command runs. Progress lines go to the
// sink, not stderr; bad input fills the caller's diagnostics.
TEST(CliTest, InterruptProgressSinkAndDiagnostics) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"whatif", "--model", "dlrm-a-small", "--nodes", "1"},
        std::vector<std::string>{"collective", "--nodes", "1", "-b", "8", "-e", "8"}}) {
    request_interrupt();
    const Result stopped = run(args);
    EXPECT_EQ(stopped.status, kExitInterrupted) << args.front();
    EXPECT_EQ(stopped.err, "zionsim: interrupted\n");
    EXPECT_EQ(stopped.out, "");
    clear_interrupt();
    EXPECT_EQ(run(args).status, kExitOk) << args.front();
  }
  std::vector<std::string> lines;
  set_progress_sink([&lines](std::string_view line) { lines.emplace_back(line); });
  EXPECT_EQ(run({"whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--vary", "nic-gbit=100,200,400"}).status,
            kExitOk);
  set_progress_sink({});
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(contains(lines.front(), "whatif: ")) << lines.front();
  EXPECT_FALSE(contains(lines.front(), "\n"));

  std::ostringstream out;
  std::ostringstream err;
  std::vector<Diagnostic> diagnostics;
  EXPECT_EQ(run_cli({"whatif", "--model", "dlrm-z"}, out, err, &diagnostics), kExitBadInput);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].source, "--model");
  EXPECT_TRUE(contains(diagnostics[0].message, "unknown model 'dlrm-z'"));
}

TEST(CliTest, HelpListsEverySubcommand) {
  for (const char* flag : {"--help", "-h"}) {
    const Result r = run({flag});
    EXPECT_EQ(r.status, kExitOk);
    EXPECT_TRUE(contains(r.out, "version")) << r.out;
    EXPECT_TRUE(contains(r.out, "list")) << r.out;
    EXPECT_TRUE(contains(r.out, "ZionEX")) << r.out;
    EXPECT_EQ(r.err, "");
  }
}

// Each subcommand has its own help, which shows its own options.
TEST(CliTest, SubcommandHelp) {
  const Result r = run({"list", "--help"});
  EXPECT_EQ(r.status, kExitOk);
  EXPECT_TRUE(contains(r.out, "Only this registry")) << r.out;
  EXPECT_TRUE(contains(r.out, "clusters,collectives,gpus,models,algorithms")) << r.out;
  const Result v = run({"version", "--help"});
  EXPECT_EQ(v.status, kExitOk);
  EXPECT_TRUE(contains(v.out, "Print the version")) << v.out;
}

TEST(CliTest, VersionFlagAndCommandAgree) {
  const Result flag = run({"--version"});
  const Result cmd = run({"version"});
  EXPECT_EQ(flag.status, kExitOk);
  EXPECT_EQ(cmd.status, kExitOk);
  EXPECT_TRUE(contains(cmd.out, "zionsim 0.1.0")) << cmd.out;
  EXPECT_EQ(flag.out, cmd.out);
}

TEST(CliTest, ListPrintsEveryRegistryInOrder) {
  const Result r = run({"list"});
  EXPECT_EQ(r.status, kExitOk);
  const auto clusters = r.out.find("clusters:");
  const auto collectives = r.out.find("collectives:");
  const auto models = r.out.find("models:");
  ASSERT_NE(clusters, std::string::npos) << r.out;
  ASSERT_NE(collectives, std::string::npos) << r.out;
  ASSERT_NE(models, std::string::npos) << r.out;
  EXPECT_LT(clusters, collectives);
  EXPECT_LT(collectives, models);
  const Result only = run({"list", "models"});
  EXPECT_EQ(only.status, kExitOk);
  EXPECT_TRUE(contains(only.out, "models:"));
  EXPECT_FALSE(contains(only.out, "clusters:"));
}

// `topology` prints the summary of a preset: 2 ZionEX nodes have 16 GPUs,
// 25 GB/s of injection per GPU, and an 8-hop longest route through the NICs.
TEST(CliTest, TopologySummary) {
  const Result r = run({"topology", "--nodes", "2"});
  EXPECT_EQ(r.status, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.out, "GPUs: 16")) << r.out;
  EXPECT_TRUE(contains(r.out, "per-GPU scale-out injection: 25.00 GB/s")) << r.out;
  EXPECT_TRUE(contains(r.out, "longest GPU-to-GPU route: 8 hops")) << r.out;
  const Result zion = run({"topology", "--cluster", "zion", "--nodes", "2"});
  EXPECT_TRUE(contains(zion.out, "backend bisection bandwidth: none")) << zion.out;
  const Result json = run({"topology", "--nodes", "2", "--format", "json"});
  EXPECT_EQ(json.out.rfind("{\n  \"schema_version\": 1,", 0), 0u) << json.out.substr(0, 80);
  const Result list = run({"list", "clusters"});
  EXPECT_TRUE(contains(list.out, "zionex")) << list.out;
  const Result models = run({"list", "models"});
  EXPECT_TRUE(contains(models.out, "dlrm-dcnv2")) << models.out;
  const Result gpus = run({"list", "gpus"});
  EXPECT_TRUE(contains(gpus.out, "h200")) << gpus.out;
}

// `flows` runs a pattern and reports times and the hottest links; as JSON
// it has one record per flow with its route.
TEST(CliTest, FlowsPatternAndJson) {
  const Result table = run({"flows", "--nodes", "2", "--pattern", "ring", "--size-bytes", "1000000"});
  EXPECT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "16 flows")) << table.out;
  EXPECT_TRUE(contains(table.out, "makespan:")) << table.out;
  const Result json = run({"flows", "--nodes", "2", "--pattern", "incast", "--format", "json"});
  EXPECT_EQ(json.status, kExitOk) << json.err;
  EXPECT_TRUE(contains(json.out, "\"makespan_ps\"")) << json.out.substr(0, 200);
  EXPECT_TRUE(contains(json.out, "\"route\"")) << json.out.substr(0, 200);
  const Result csv = run({"flows", "--nodes", "1", "--pattern", "ring", "--format", "csv"});
  EXPECT_EQ(csv.out.rfind("id,src_rank,dst_rank,size_bytes,start_ps,first_byte_ps,finish_ps,route\n", 0), 0u);
  // The rows are streamed; the bytes are what nlohmann writes for the whole
  // document (parsed and dumped again alike), flows or none.
  for (const char* nodes : {"2", "1"}) {
    for (const char* top : {"10", "0"}) {
      const Result streamed = run({"flows", "--nodes", nodes, "--pattern", "all_to_all", "--top", top, "--format", "json"});
      ASSERT_EQ(streamed.status, kExitOk) << streamed.err;
      const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(streamed.out);
      EXPECT_EQ(parsed.dump(1) + "\n", streamed.out);
      EXPECT_EQ(parsed["flows"].size(), std::string(nodes) == "2" ? 16u * 15u : 8u * 7u);
    }
  }
}

// A Chakra trace of more ranks than the process may hold descriptors: each
// rank's file is closed once written and renamed with the others at the end
// (it used to keep every file open until then and failed past the limit).
TEST(CliTest, ChakraTraceOfManyRanksUnderALowDescriptorLimit) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "chakra_fd";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::size_t open_now = 0;
  for ([[maybe_unused]] const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) ++open_now;
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit low = before;
  low.rlim_cur = static_cast<rlim_t>(open_now + 24);  // far fewer than the 64 ranks
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  const Result r = run({"whatif", "--model", "dlrm-a-small", "--nodes", "8", "--emit-trace", (dir / "t.et").string()});
  ::setrlimit(RLIMIT_NOFILE, &before);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::size_t files = 0;
  for (int rank = 0; rank < 64; ++rank) files += std::filesystem::is_regular_file(dir / fmt::format("t.{}.et", rank));
  EXPECT_EQ(files, 64u);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 64u);  // no temporary file left behind
}

// Two outputs naming one file (under any spelling) are refused before the
// run, and nothing is written: one would have replaced the other.
TEST(CliTest, TwoOutputsToOneFileAreRefused) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "same_output";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "out.json").string();
  const std::string other_spelling = (dir / "." / "out.json").string();
  const Result r = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--timeline", file, "--emit-trace",
                        other_spelling});
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--emit-trace: the same file as --timeline")) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  // Each output once: both written.
  const Result ok = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--timeline", file, "--emit-trace",
                         (dir / "trace.json").string()});
  EXPECT_EQ(ok.status, kExitOk) << ok.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(file));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "trace.json"));
}

// `whatif` prints one row per size; JSON has the documented fields.
TEST(CliTest, WhatIfTableAndJson) {
  const Result table = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1,2"});
  EXPECT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "samples/s")) << table.out;
  const Result json = run({"whatif", "--model", "dlrm-a", "--nodes", "1", "--format", "json"});
  EXPECT_EQ(json.status, kExitOk) << json.err;
  EXPECT_TRUE(contains(json.out, "\"results\"")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"fits\": false")) << json.out;
  const Result small = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--format", "json"});
  for (const char* key : {"\"gpus\"", "\"iteration_time_ms\"", "\"samples_per_s\"", "\"breakdown_ms\""}) {
    EXPECT_TRUE(contains(small.out, key)) << key;
  }
}

// `collective` prints the nccl-tests columns for each algorithm; JSON rows
// carry the documented keys; quantizing to fp16 halves the bytes on the wire.
TEST(CliTest, CollectiveTable) {
  const Result t = run({"collective", "--nodes", "1", "--algo", "ring", "--algo", "nccl", "-b", "1M", "-e", "4M"});
  EXPECT_EQ(t.status, kExitOk) << t.err;
  EXPECT_TRUE(contains(t.out, "busbw")) << t.out;
  EXPECT_TRUE(contains(t.out, "nccl")) << t.out;
  const Result j = run({"collective", "--nodes", "1", "--op", "all_to_all", "-b", "64K", "-e", "64K", "--format", "json"});
  EXPECT_EQ(j.status, kExitOk) << j.err;
  for (const char* key : {"\"size_bytes\"", "\"time_us\"", "\"algbw_gbyte_per_s\"", "\"busbw_gbyte_per_s\""}) {
    EXPECT_TRUE(contains(j.out, key)) << key;
  }
  // A sweep from zero bytes (its sizes: experiments/collective_sweep_test.cc).
  const Result r = run({"collective", "--nodes", "1", "-b", "0", "-e", "16", "--format", "csv"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_TRUE(contains(r.out, "\n0,0,fp32,ring,0.000,0.0000,0.0000\n4,1,fp32,ring,")) << r.out;
}

// The CSV data rows of a run, without the header.
std::vector<std::string> csv_rows(const std::string& text) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) rows.push_back(line);
  return rows;
}

// collective --algo auto: the CSV's `chosen` names what it ran (empty in
// the other columns), and the table's footnote says so as runs of sizes.
// That it is the fastest column: experiments/collective_sweep_test.cc.
TEST(CliTest, CollectiveAutoSaysWhatItRan) {
  const std::vector<std::string> args = {"collective", "--cluster", "hgx", "-b", "1K", "-e", "1G", "-f", "32",
                                         "--algo", "ring", "--algo", "nvls", "--algo", "auto"};
  std::vector<std::string> csv = args;
  csv.insert(csv.end(), {"--format", "csv"});
  const Result r = run(csv);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "size_bytes,count,type,algorithm,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s,chosen");
  const std::vector<std::string> rows = csv_rows(r.out);
  ASSERT_EQ(rows.size(), 5u * 3u);
  EXPECT_TRUE(rows[0].starts_with("1024,256,fp32,ring,") && rows[0].ends_with(",")) << rows[0];  // chosen: empty
  EXPECT_TRUE(rows[1].starts_with("1024,256,fp32,nvls,") && rows[1].ends_with(",")) << rows[1];
  EXPECT_TRUE(rows[2].starts_with("1024,256,fp32,auto,") && rows[2].ends_with(",nvls")) << rows[2];
  const Result t = run(args);
  ASSERT_EQ(t.status, kExitOk) << t.err;
  EXPECT_TRUE(contains(t.out, "# auto ran nvls from 1 KiB to 32 KiB; ")) << t.out;
  EXPECT_TRUE(contains(t.out, "(the fastest of its candidates, each alone on an idle network)")) << t.out;
}

// collective --vary: each variant's rows are the rows of the same settings
// run alone (after the knob columns and the ranks), sizes outermost; the
// table gets a column group per algorithm and variant.
TEST(CliTest, CollectiveVaryEqualsSeparateRuns) {
  const Result v = run({"collective", "--algo", "ring", "--algo", "hierarchical", "-b", "1K", "-e", "1M", "-f", "32",
                        "--vary", "nodes=1,2", "--vary", "nic-gbit=100,400", "--format", "csv"});
  ASSERT_EQ(v.status, kExitOk) << v.err;
  const std::vector<std::string> rows = csv_rows(v.out);
  EXPECT_EQ(v.out.substr(0, v.out.find('\n')),
            "nodes,nic-gbit,ranks,size_bytes,count,type,algorithm,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s");
  ASSERT_EQ(rows.size(), 3u * 4u * 2u);  // sizes x variants x algorithms
  const std::vector<std::pair<std::string, std::string>> variants = {{"1", "100"}, {"1", "400"}, {"2", "100"}, {"2", "400"}};
  for (std::size_t k = 0; k < variants.size(); ++k) {
    const auto& [nodes, gbit] = variants[k];
    const Result alone = run({"collective", "--algo", "ring", "--algo", "hierarchical", "-b", "1K", "-e", "1M", "-f",
                              "32", "--nodes", nodes, "--set", "nic.bandwidth_gbit_per_s=" + gbit, "--format", "csv"});
    ASSERT_EQ(alone.status, kExitOk) << alone.err;
    const std::vector<std::string> expected = csv_rows(alone.out);
    ASSERT_EQ(expected.size(), 3u * 2u);
    const std::string prefix = fmt_prefix(nodes, gbit, nodes == "1" ? 8 : 16);
    for (std::size_t size = 0; size < 3; ++size) {
      for (std::size_t a = 0; a < 2; ++a) {
        EXPECT_EQ(rows[size * 8 + k * 2 + a], prefix + expected[size * 2 + a]) << nodes << " " << gbit;
      }
    }
  }
  const Result t = run({"collective", "--algo", "ring", "-b", "1K", "-e", "1K", "--vary", "nic-gbit=100,400"});
  ASSERT_EQ(t.status, kExitOk) << t.err;
  EXPECT_TRUE(contains(t.out, "ring nic-gbit=100")) << t.out;
  EXPECT_TRUE(contains(t.out, "ring nic-gbit=400")) << t.out;
}

// Rows of a CSV as maps from column name to value.
std::vector<std::map<std::string, std::string>> csv_records(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::vector<std::map<std::string, std::string>> records;
  const auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    bool quoted = false;
    for (char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
    return cells;
  };
  const std::vector<std::string> header = split(lines.front());
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = split(lines[i]);
    std::map<std::string, std::string> record;
    for (std::size_t k = 0; k < header.size() && k < cells.size(); ++k) record[header[k]] = cells[k];
    records.push_back(record);
  }
  return records;
}

// Model A on 16 nodes: 4096 equal tables, 32 table-wise on each of 128
// GPUs. Each GPU sends, per iteration, its 32 tables' pooled embeddings for
// the 512 samples of each of the 127 other GPUs forward and their gradients
// backward (94 fp16 values each), and the indices of its 512 samples for the
// other GPUs' tables (4064 tables x 15 lookups x 8 bytes).
TEST(CliTest, PlanOfModelAMatchesClosedForms) {
  const Result r = run({"plan", "--model", "dlrm-a", "--nodes", "16", "--format", "csv"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const auto gpus = csv_records(r.out);
  ASSERT_EQ(gpus.size(), 128u);
  const std::int64_t pooled = std::int64_t{512} * 94 * 2 * 32 * 127;
  const std::int64_t indices = std::int64_t{512} * 15 * 8 * (4096 - 32);
  for (const auto& g : gpus) {
    EXPECT_EQ(g.at("shards"), "32");
    EXPECT_EQ(std::stoll(g.at("exchange_sent_bytes")), 2 * pooled + indices) << g.at("rank");
    EXPECT_EQ(std::stoll(g.at("exchange_received_bytes")), 2 * pooled + indices) << g.at("rank");
    EXPECT_EQ(std::stoi(g.at("node")), std::stoi(g.at("rank")) / 8);
  }
  const Result table = run({"plan", "--model", "dlrm-a", "--nodes", "16"});
  ASSERT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "table_wise          4096")) << table.out;
  EXPECT_TRUE(contains(table.out, "busiest GPUs by estimated embedding time (--per-gpu for all 128)")) << table.out;
}

// The summary of a superchip rack says how its GPUs reach their hosts and
// that its switch reduces; ZionEX's says neither.
TEST(CliTest, TopologySummaryOfSuperchips) {
  const Result gb = run({"topology", "--cluster", "gb200-nvl72"});
  ASSERT_EQ(gb.status, kExitOk) << gb.err;
  EXPECT_TRUE(contains(gb.out, "hosts: 2 GPUs per CPU on NVLink-C2C (225.00 GB/s each), the CPUs in hosts of 2\n"))
      << gb.out;
  EXPECT_TRUE(contains(gb.out, "NVLink SHARP: the switch reduces in the network at 0.642 of the link")) << gb.out;
  EXPECT_TRUE(contains(gb.out, "host memory: 17280 GB per server")) << gb.out;
  const Result zionex = run({"topology"});
  ASSERT_EQ(zionex.status, kExitOk);
  EXPECT_FALSE(contains(zionex.out, "NVLink-C2C")) << zionex.out;
  EXPECT_FALSE(contains(zionex.out, "NVLink SHARP")) << zionex.out;
}

// `list collectives` names NVLS (its figures: experiments/collective_sweep_test.cc).
TEST(CliTest, ListCollectivesHasNvls) {
  const Result list = run({"list", "collectives"});
  EXPECT_TRUE(contains(list.out, "nvls")) << list.out;
}

// Expect: the GPU-to-NIC PCIe path as NCCL counts it, from the presets'
// links: ZionEX's Gen4 x16 (16 x 120 / 80 = 24 GB/s) and its x32 tray
// uplink shared by two NICs (48 / 2 = 24); HGX's at Gen5 twice that (48);
// the B300 board's NICs on the GPU's own Gen6 switch (96); GB200's on
// Grace's Gen5 x16 (48); Zion has no backend NICs (0). Gen3 links
// (`pcie.device_generation` `pcie_gen3`) halve ZionEX's, and a x16 uplink
// for two NICs halves it again.
TEST(CliTest, NcclCountsThePcieWayToTheNic) {
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(topology::preset_spec("zionex", 2)), 24.0);
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(topology::preset_spec("hgx", 2)), 48.0);
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(topology::preset_spec("hgx-b300", 2)), 96.0);
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(topology::preset_spec("gb200-nvl72", 1)), 48.0);
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(topology::preset_spec("zion", 2)), 0.0);
  topology::ClusterSpec narrow = topology::preset_spec("zionex", 2);
  narrow.device_pcie = topology::LinkKind::kPcieGen3;
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(narrow), 12.0);
  narrow.tray_uplink_lanes = 16;  // one x16 uplink for two NICs: 6 each
  EXPECT_DOUBLE_EQ(nccl_nic_pcie_gbps(narrow), 6.0);
}

// Expect: NCCL_ALGO / NCCL_PROTO as the nccl algorithm's options: the JSON
// says what they leave out, and whatif takes them too (what they pick per
// name: experiments/collective_sweep_test.cc).
TEST(CliTest, NcclTakesNcclAlgoAndProto) {
  const Result json = run({"collective", "--cluster", "hgx", "--algo", "nccl", "--options", "nccl={\"algo\":\"ring\"}",
                           "-b", "1G", "-e", "1G", "--format", "json"});
  ASSERT_EQ(json.status, kExitOk) << json.err;
  EXPECT_TRUE(contains(json.out, "\"algorithm\": \"nvls/Simple\",\n     \"refused\": \"NCCL_ALGO leaves it out\""))
      << json.out;
  const Result w = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo",
                        "all_reduce=nccl", "--options", "nccl={\"algo\": \"Ring\"}"});
  ASSERT_EQ(w.status, kExitOk) << w.err;
  EXPECT_TRUE(contains(w.out, "1 node: all_reduce: ring/")) << w.out;
}

// What NCCL's cost model picked is in the output: the table's footnote as
// runs of sizes, the JSON's candidates and graphs, and whatif's per-size
// summary (the picks themselves: experiments/collective_sweep_test.cc).
TEST(CliTest, CollectiveAndWhatIfSayWhatNcclPicked) {
  const std::vector<std::string> sweep = {"collective", "--cluster", "hgx", "--algo", "nccl", "--algo", "ring",
                                          "-b",         "1K",        "-e",  "1G",     "-f",   "1024"};
  const Result table = run(sweep);
  ASSERT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "# nccl ran ring/LL at 1 KiB; nvls/Simple from 1 MiB to 1 GiB (algorithm/protocol"))
      << table.out;
  // JSON: what NCCL weighed, each row with its time or why it is off.
  const Result json = run({"collective", "--cluster", "hgx", "--algo", "nccl", "-b", "1M", "-e", "1M", "--format",
                           "json"});
  ASSERT_EQ(json.status, kExitOk) << json.err;
  EXPECT_TRUE(contains(json.out, "\"chosen\": \"nvls/Simple\"")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"algorithm\": \"ring/LL128\",\n     \"time_us\"")) << json.out;
  EXPECT_TRUE(contains(json.out, "\"algorithm\": \"nvls_tree/Simple\",\n     \"refused\": \"NVLS_TREE is for several "
                                 "nodes\""))
      << json.out;
  // ... and the graphs behind NCCL's numbers, per variant: one HGX server
  // (ring 12 x 30, NVLS 8 x 40, 24 channels run) and two (a ring per 400
  // Gb/s NIC at 48, NVLS 48 to the NICs, 16 channels run).
  const Result graphs = run({"collective", "--cluster", "hgx", "--vary", "nodes=1,2", "--algo", "nccl", "-b", "1M",
                             "-e", "1M", "--format", "json"});
  ASSERT_EQ(graphs.status, kExitOk) << graphs.err;
  const nlohmann::json g = nlohmann::json::parse(graphs.out).at("nccl_graphs");
  ASSERT_EQ(g.size(), 2u) << graphs.out;
  EXPECT_EQ(g[0].at("ring").at("channels"), 12);
  EXPECT_EQ(g[0].at("ring").at("bw_gbyte_per_s"), 30.0);
  EXPECT_EQ(g[0].at("nvls").at("channels"), 8);
  EXPECT_FALSE(g[0].at("nvls").contains("bw_to_nics_gbyte_per_s"));
  EXPECT_EQ(g[0].at("channels_run"), 24);
  EXPECT_EQ(g[1].at("variant").at("nodes"), 2);
  EXPECT_EQ(g[1].at("ring").at("channels"), 8);
  EXPECT_EQ(g[1].at("tree").at("bw_gbyte_per_s"), 48.0);
  EXPECT_EQ(g[1].at("nvls").at("bw_to_nics_gbyte_per_s"), 48.0);
  EXPECT_EQ(g[1].at("channels_run"), 16);
  EXPECT_TRUE(contains(table.out, "# nccl's graphs (NCCL's topology search, replayed): ring 12 x 30 GB/s, tree 12 x "
                                  "30, nvls 8 x 40; 24 channels run"))
      << table.out;
  // ZionEX has no NVLS: the key is absent.
  const Result zionex = run({"collective", "--nodes", "2", "--algo", "nccl", "-b", "1M", "-e", "1M", "--format",
                             "json"});
  ASSERT_EQ(zionex.status, kExitOk) << zionex.err;
  const nlohmann::json z = nlohmann::json::parse(zionex.out).at("nccl_graphs").at(0);
  EXPECT_FALSE(z.contains("nvls"));
  EXPECT_EQ(z.at("ring").at("bw_gbyte_per_s"), 24.0);

  const Result w = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo",
                        "all_reduce=nccl"});
  ASSERT_EQ(w.status, kExitOk) << w.err;
  EXPECT_TRUE(contains(w.out, "nccl picked (per distinct call")) << w.out;
  EXPECT_TRUE(contains(w.out, "1 node: all_reduce: nvls/Simple x")) << w.out;
  // A bare --algo nccl prices every kind; a KIND= after it takes that kind back.
  const Result every = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo", "nccl"});
  ASSERT_EQ(every.status, kExitOk) << every.err;
  EXPECT_TRUE(contains(every.out, "1 node: all_reduce: nvls/Simple x")) << every.out;
  EXPECT_TRUE(contains(every.out, "all_to_all: p2p/Simple x")) << every.out;
  const Result but = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo", "nccl",
                          "--algo", "all_to_all=direct"});
  ASSERT_EQ(but.status, kExitOk) << but.err;
  EXPECT_TRUE(contains(but.out, "1 node: all_reduce: nvls/Simple x")) << but.out;
  EXPECT_FALSE(contains(but.out, "all_to_all: p2p")) << but.out;
  // ... and gives way to a varied kind.
  const Result varied = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo", "nccl",
                             "--vary", "algo.all_reduce=nccl,nvls"});
  ASSERT_EQ(varied.status, kExitOk) << varied.err;
  EXPECT_TRUE(contains(varied.out, "algo.all_reduce=nccl, 1 node: all_reduce: nvls/Simple x")) << varied.out;
  EXPECT_TRUE(contains(varied.out, "algo.all_reduce=nvls, 1 node: all_to_all: p2p/Simple x")) << varied.out;

  const Result j = run({"whatif", "--model", "dlrm-a-small", "--cluster", "hgx", "--nodes", "1", "--algo",
                        "all_reduce=nccl", "--format", "json"});
  ASSERT_EQ(j.status, kExitOk) << j.err;
  EXPECT_TRUE(contains(j.out, "\"nccl_choices\"")) << j.out;
  EXPECT_TRUE(contains(j.out, "\"chosen\": \"nvls/Simple\"")) << j.out;
  EXPECT_FALSE(contains(j.out, "\"auto_choices\"")) << j.out;
}

// collective --vary cluster=...: a column per cluster, in the CSV and the
// table (the times: experiments/collective_sweep_test.cc); --cluster with it
// is refused.
TEST(CliTest, CollectiveVariesTheCluster) {
  const Result r = run({"collective", "--algo", "ring", "-b", "1K", "-e", "1K", "--vary", "cluster=zionex,hgx-b200",
                        "--format", "csv"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const auto rows = csv_records(r.out);
  ASSERT_EQ(rows.size(), 2u) << r.out;
  EXPECT_EQ(rows[0].at("cluster"), "zionex");
  EXPECT_EQ(rows[1].at("cluster"), "hgx-b200");
  const Result table = run({"collective", "--algo", "ring", "-b", "1K", "-e", "1K", "--vary", "cluster=zionex,hgx-b200"});
  ASSERT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "all_reduce on the ranks and cluster of each variant, fp32")) << table.out;
  EXPECT_TRUE(contains(table.out, "ring cluster=hgx-b200")) << table.out;
  const Result both = run({"collective", "--cluster", "hgx", "--vary", "cluster=zionex,hgx-b200"});
  EXPECT_EQ(both.status, kExitBadInput);
  EXPECT_TRUE(contains(both.err, "--vary: cluster: give --cluster or --vary cluster=..., not both")) << both.err;
}

// The plan reports the host memory it placed tables against: the
// cluster's, 90% of it usable, in the table and in JSON.
TEST(CliTest, PlanUsesTheClustersHostMemory) {
  const Result table = run({"plan", "--model", "dlrm-f", "--nodes", "8", "--set", "host.memory_gbyte=4000"});
  ASSERT_EQ(table.status, kExitOk) << table.err;
  EXPECT_TRUE(contains(table.out, "(of 3600.0 GB usable per node: 90% of 4000.0 GB)")) << table.out;
  const Result json = run({"plan", "--model", "dlrm-f", "--nodes", "8", "--cluster", "hgx", "--format", "json"});
  ASSERT_EQ(json.status, kExitOk) << json.err;
  EXPECT_TRUE(contains(json.out, "\"host_memory_gbyte_per_node\": 2000.0")) << json.out.substr(0, 400);
}

// DCNv2 mixes replicated, table-wise and table-row-wise tables (with the
// reduce-scatter and all-gather of the row-wise shards): what all GPUs send
// is what all receive, and every table is listed once with its GPUs.
TEST(CliTest, PlanExchangeIsConserved) {
  const Result r = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "2", "--format", "csv"});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::int64_t sent = 0;
  std::int64_t received = 0;
  for (const auto& g : csv_records(r.out)) {
    sent += std::stoll(g.at("exchange_sent_bytes"));
    received += std::stoll(g.at("exchange_received_bytes"));
  }
  EXPECT_GT(sent, 0);
  EXPECT_EQ(sent, received);
  const Result tables = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "2", "--format", "csv", "--per-table"});
  ASSERT_EQ(tables.status, kExitOk) << tables.err;
  const auto rows = csv_records(tables.out);
  ASSERT_EQ(rows.size(), 26u);
  std::set<std::string> kinds;
  for (std::size_t t = 0; t < rows.size(); ++t) {
    EXPECT_EQ(rows[t].at("table"), std::to_string(t));
    kinds.insert(rows[t].at("kind"));
    if (rows[t].at("kind") == "data_parallel") {
      EXPECT_EQ(rows[t].at("gpus"), "0-15");
    }
    if (rows[t].at("kind") == "table_row_wise") {
      EXPECT_TRUE(rows[t].at("gpus") == "0-7" || rows[t].at("gpus") == "8-15") << rows[t].at("gpus");
    }
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"data_parallel", "table_row_wise", "table_wise"}));
}

// The emitted sharding file reproduces the plan: whatif with it prints what
// whatif with the planner prints; an edited file moves a table.
TEST(CliTest, EmittedShardingRoundTrips) {
  const std::string file = ::testing::TempDir() + "/dcnv2_plan.json";
  const Result plan = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "2", "--emit-sharding", file});
  ASSERT_EQ(plan.status, kExitOk) << plan.err;
  const std::vector<std::string> base = {"whatif", "--model", "dlrm-dcnv2", "--nodes", "2", "--format", "csv"};
  const Result automatic = run(base);
  std::vector<std::string> pinned_args = base;
  pinned_args.insert(pinned_args.end(), {"--sharding", file});
  const Result pinned = run(pinned_args);
  ASSERT_EQ(automatic.status, kExitOk) << automatic.err;
  ASSERT_EQ(pinned.status, kExitOk) << pinned.err;
  EXPECT_EQ(csv_rows(automatic.out).back(), csv_rows(pinned.out).back());
  const Result again = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "2", "--sharding", file, "--format", "csv"});
  const Result first = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "2", "--format", "csv"});
  EXPECT_EQ(again.out, first.out);
}

// plan --search: the file it writes trains as fast as it says.
TEST(CliTest, SearchedShardingRoundTrips) {
  const std::string file = ::testing::TempDir() + "/dcnv2_search.json";
  const Result plan = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "1", "--search", "--search-budget", "30",
                           "--emit-sharding", file, "--format", "json"});
  ASSERT_EQ(plan.status, kExitOk) << plan.err;
  const std::string key = "\"best_iteration_time_ms\": ";
  const std::size_t at = plan.out.find(key);
  ASSERT_NE(at, std::string::npos) << plan.out;
  const double best = std::stod(plan.out.substr(at + key.size()));
  const Result whatif = run({"whatif", "--model", "dlrm-dcnv2", "--nodes", "1", "--sharding", file, "--format", "csv"});
  ASSERT_EQ(whatif.status, kExitOk) << whatif.err;
  const std::string row = csv_rows(whatif.out).back();
  // nodes,gpus,global_batch,fits,iteration_time_ms,...
  std::vector<std::string> cells;
  std::istringstream in(row);
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  ASSERT_GT(cells.size(), 4u);
  EXPECT_NEAR(std::stod(cells[4]), best, 1e-6 * best);
  EXPECT_TRUE(contains(plan.out, "\"simulations\": 30") || contains(plan.out, "\"budget_exhausted\": false")) << plan.out;
}

// whatif --sharding search simulates, at each size, the plan that
// plan --search finds there.
TEST(CliTest, WhatIfShardingSearchEqualsPlanSearch) {
  const Result whatif = run({"whatif", "--model", "dlrm-dcnv2", "--nodes", "1", "--sharding", "search",
                             "--search-budget", "20", "--format", "json"});
  ASSERT_EQ(whatif.status, kExitOk) << whatif.err;
  EXPECT_TRUE(contains(whatif.out, "\"simulations\": 20")) << whatif.out;
  const Result plan = run({"plan", "--model", "dlrm-dcnv2", "--nodes", "1", "--search", "--search-budget", "20",
                           "--format", "json"});
  ASSERT_EQ(plan.status, kExitOk) << plan.err;
  const auto number_after = [](const std::string& text, const std::string& key) {
    const std::size_t at = text.find("\"" + key + "\": ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + key.size() + 4));
  };
  EXPECT_EQ(number_after(whatif.out, "iteration_time_ms"), number_after(plan.out, "best_iteration_time_ms"));
  EXPECT_EQ(number_after(whatif.out, "start_iteration_time_ms"), number_after(plan.out, "start_iteration_time_ms"));
  EXPECT_LT(number_after(whatif.out, "iteration_time_ms"), number_after(whatif.out, "start_iteration_time_ms"));
}

// --set gpu.KEY=VALUE changes the GPU profile as a profile file with that
// key would: the same iteration to the bit; twice the HBM bandwidth makes
// model A-small's memory-bound embeddings faster.
TEST(CliTest, GpuOverridesActAsAProfileFile) {
  const std::string file = ::testing::TempDir() + "/a100_fast_hbm.json";
  std::ofstream(file) << R"({"schema_version": 1, "base": "a100-40gb", "hbm": {"bandwidth_gbyte_per_s": 3110}})";
  const std::vector<std::string> base = {"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--format", "csv"};
  std::vector<std::string> with_set = base;
  with_set.insert(with_set.end(), {"--set", "gpu.hbm.bandwidth_gbyte_per_s=3110"});
  std::vector<std::string> with_file = base;
  with_file.insert(with_file.end(), {"--profile", file});
  const Result plain = run(base);
  const Result set = run(with_set);
  const Result profile = run(with_file);
  ASSERT_EQ(set.status, kExitOk) << set.err;
  ASSERT_EQ(profile.status, kExitOk) << profile.err;
  EXPECT_EQ(csv_rows(set.out), csv_rows(profile.out));
  const auto iteration = [](const std::string& row) {
    std::vector<std::string> cells;
    std::istringstream in(row);
    for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
    return std::stod(cells.at(4));
  };
  EXPECT_LT(iteration(csv_rows(set.out).back()), 0.95 * iteration(csv_rows(plain.out).back()));
  // On top of a profile file too: the file's own value is replaced.
  std::vector<std::string> both = with_file;
  both.insert(both.end(), {"--set", "gpu.hbm.bandwidth_gbyte_per_s=1555"});
  EXPECT_EQ(csv_rows(run(both).out), csv_rows(plain.out));
}

// Bad usage: exit status 2, nothing on stdout, a message naming the problem.
// Every knob of the table is taken by --vary of every command it claims,
// with its example values, and refused by the others. Each command is
// stopped by a refusal that comes after --vary is read and checked (and
// before anything is simulated).
TEST(CliTest, EveryKnobOnTheVaryOfEveryCommandItClaims) {
  struct Command {
    experiments::Sweeper sweeper;
    std::vector<std::string> args;
    std::string stopped_by;
  };
  const std::vector<Command> commands = {
      {experiments::Sweeper::kWhatif, {"whatif", "--nodes", "1", "--timeline", "never_written.json"},
       "--timeline: writes one iteration; it cannot be combined with --vary"},
      {experiments::Sweeper::kRun, {"run", "--trace", "never_read.json", "--timeline", "never_written.json"},
       "--timeline: writes one run; it cannot be combined with --vary"},
      {experiments::Sweeper::kCollective, {"collective", "-b", "8", "-e", "8", "--max-points", "1"},
       "is more than --max-points 1"},
  };
  int claimed = 0;
  for (const experiments::Knob& knob : experiments::knobs()) {
    const std::string key = knob.key == "algo.KIND"     ? "algo.all_to_all"
                            : knob.key == "SECTION.KEY" ? "nic.all_to_all_efficiency"
                                                        : std::string(knob.key);
    for (const Command& c : commands) {
      std::vector<std::string> args = c.args;
      args.insert(args.end(), {"--vary", key + "=" + std::string(knob.examples)});
      const Result r = run(args);
      EXPECT_EQ(r.status, kExitBadInput) << key << " on " << c.args[0];
      if (knob.for_sweeper(c.sweeper)) {
        ++claimed;
        EXPECT_TRUE(contains(r.err, c.stopped_by)) << key << " on " << c.args[0] << ": " << r.err;
      } else {
        EXPECT_TRUE(contains(r.err, "--vary: " + key + ": ")) << key << " on " << c.args[0] << ": " << r.err;
      }
    }
  }
  EXPECT_GE(claimed, 40);
  std::filesystem::remove("never_written.json");
}

// --emit-scenarios writes each variant's scenario: it reads back as one,
// carries the variant's knob and the base's flags, and its hash is the
// scenario's.
TEST(CliTest, EmitScenariosWritesEachVariantsScenario) {
  const std::string path = "emitted_scenarios.json";
  const Result r = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--unfused", "--vary",
                        "nic-gbit=100,400", "--format", "csv", "--emit-scenarios", path});
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::ifstream in(path);
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["scenarios"].size(), 2u);
  const char* speeds[] = {"100", "400"};
  for (std::size_t v = 0; v < 2; ++v) {
    const nlohmann::json& e = doc["scenarios"][v];
    const experiments::Scenario s = experiments::scenario_from_json(e["scenario"], path);
    EXPECT_EQ(e["variant"]["nic-gbit"], std::stoi(speeds[v]));
    EXPECT_EQ(e["hash"], experiments::scenario_hash(s));
    EXPECT_EQ(s.model, "dlrm-a-small");
    EXPECT_EQ(s.nodes, (std::vector<int>{1, 2}));
    EXPECT_FALSE(s.fused_embeddings);
    EXPECT_EQ(s.cluster.overrides, std::vector<std::string>{std::string("nic.bandwidth_gbit_per_s=") + speeds[v]});
  }
  EXPECT_NE(doc["scenarios"][0]["hash"], doc["scenarios"][1]["hash"]);
  std::filesystem::remove(path);
  // A failed run leaves no file.
  const Result bad = run({"whatif", "--model", "dlrm-z", "--nodes", "1", "--emit-scenarios", path});
  EXPECT_EQ(bad.status, kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(path));
}

// --scenario-file runs what a variant's emitted scenario holds: each one
// alone gives its variant's row to the bit, --vary on top of one gives the
// whole sweep back, --nodes replaces its sizes, and --json writes the JSON
// document beside the table.
TEST(CliTest, ScenarioFileRunsAnEmittedScenario) {
  const std::string emitted = "scenario_file_emitted.json";
  const Result sweep = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--unfused", "--vary",
                            "nic-gbit=100,400", "--format", "json", "--emit-scenarios", emitted});
  ASSERT_EQ(sweep.status, kExitOk) << sweep.err;
  const nlohmann::json swept = nlohmann::json::parse(sweep.out);
  std::ifstream in(emitted);
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (std::size_t v = 0; v < 2; ++v) {
    const std::string file = fmt::format("scenario_file_{}.json", v);
    std::ofstream(file) << doc["scenarios"][v]["scenario"].dump();
    const Result one = run({"whatif", "--scenario-file", file, "--format", "json"});
    ASSERT_EQ(one.status, kExitOk) << one.err;
    const nlohmann::json alone = nlohmann::json::parse(one.out);
    ASSERT_EQ(alone["results"].size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const nlohmann::json& want = swept["results"][2 * v + i];
      EXPECT_EQ(alone["results"][i]["nodes"], want["nodes"]);
      EXPECT_EQ(alone["results"][i]["iteration_time_ms"], want["iteration_time_ms"]);
      EXPECT_EQ(alone["results"][i]["fingerprint"], want["fingerprint"]);
    }
  }
  // The first variant's scenario, varied as the sweep was: the sweep's CSV.
  const Result csv = run({"whatif", "--model", "dlrm-a-small", "--nodes", "1,2", "--unfused", "--vary",
                          "nic-gbit=100,400", "--format", "csv"});
  const std::string json_file = "scenario_file_results.json";
  const Result again = run({"whatif", "--scenario-file", "scenario_file_0.json", "--vary", "nic-gbit=100,400",
                            "--format", "csv", "--json", json_file});
  ASSERT_EQ(again.status, kExitOk) << again.err;
  EXPECT_EQ(again.out, csv.out);
  std::ifstream written(json_file);
  const nlohmann::json beside = nlohmann::json::parse(written);
  ASSERT_EQ(beside["results"].size(), 4u);
  EXPECT_EQ(beside["results"][3]["iteration_time_ms"], swept["results"][3]["iteration_time_ms"]);
  // --nodes replaces the file's sizes.
  const Result resized = run({"whatif", "--scenario-file", "scenario_file_1.json", "--nodes", "2", "--format", "json"});
  ASSERT_EQ(resized.status, kExitOk) << resized.err;
  const nlohmann::json r = nlohmann::json::parse(resized.out);
  ASSERT_EQ(r["results"].size(), 1u);
  EXPECT_EQ(r["results"][0]["iteration_time_ms"], swept["results"][3]["iteration_time_ms"]);
  // A flag that sets what the file sets is refused, naming it; so are a bad
  // file (at its pointer) and a whole --emit-scenarios document.
  const Result model = run({"whatif", "--scenario-file", "scenario_file_0.json", "--model", "dlrm-b"});
  EXPECT_EQ(model.status, kExitBadInput);
  EXPECT_TRUE(contains(model.err, "--model: given with --scenario-file scenario_file_0.json")) << model.err;
  const Result cluster = run({"whatif", "--scenario-file", "scenario_file_0.json", "--set", "nic.efficiency=0.5"});
  EXPECT_EQ(cluster.status, kExitBadInput);
  EXPECT_TRUE(contains(cluster.err, "--set: given with --scenario-file")) << cluster.err;
  std::ofstream("scenario_file_bad.json") << R"({"schema_version": 1, "nodes": [0]})";
  const Result bad = run({"whatif", "--scenario-file", "scenario_file_bad.json", "--json", json_file});
  EXPECT_EQ(bad.status, kExitBadInput);
  EXPECT_TRUE(contains(bad.err, "scenario_file_bad.json: /nodes/0: ")) << bad.err;
  const Result whole = run({"whatif", "--scenario-file", emitted});
  EXPECT_EQ(whole.status, kExitBadInput);
  EXPECT_TRUE(contains(whole.err, "/scenarios: an --emit-scenarios document (2 scenarios)")) << whole.err;
  // The failed run left the earlier --json file as it was.
  std::ifstream kept(json_file);
  EXPECT_EQ(nlohmann::json::parse(kept)["results"].size(), 4u);
  for (const std::string& f : {emitted, json_file, std::string("scenario_file_0.json"),
                               std::string("scenario_file_1.json"), std::string("scenario_file_bad.json")}) {
    std::filesystem::remove(f);
  }
}

// The flags the table declares set what --vary sets, and name themselves
// in errors.
TEST(CliTest, KnobFlagsAreTheTables) {
  for (const experiments::Knob& knob : experiments::knobs()) {
    if (!knob.declares_flag) continue;
    const std::string flag(knob.flag);
    std::vector<std::string> args = {"whatif", "--nodes", "1", flag};
    if (knob.switch_value.empty()) args.push_back("not-a-value");
    args.insert(args.end(), {"--vary", std::string(knob.key) + "=" + std::string(knob.examples)});
    const Result both = run(args);
    EXPECT_EQ(both.status, kExitBadInput) << flag;
    if (knob.switch_value.empty()) {
      // The value is checked first, and said of the flag; a value that only
      // a later load can refuse (a model's name) meets the conflict first.
      EXPECT_TRUE(contains(both.err, "zionsim: error: " + flag + ": ") ||
                  contains(both.err, "give " + flag + " or --vary " + std::string(knob.key) + "=..., not both"))
          << both.err;
    } else {
      EXPECT_TRUE(contains(both.err, "give " + flag + " or --vary " + std::string(knob.key) + "=..., not both"))
          << both.err;
    }
  }
}

TEST(CliTest, BadUsageExitsTwoWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string expected_in_err;
  };
  const std::vector<Case> cases = {
      {{}, "expected a command, one of: whatif, sweep, merge, plan, run, topology, flows, collective, calibrate, calibrate-network, validate, list, version"},
      {{"simulate-everything"}, "simulate-everything"},
      {{"--frobnicate"}, "--frobnicate"},
      {{"list", "widgets"}, "widgets"},
      {{"version", "extra"}, "extra"},
      {{"list", "models", "clusters"}, "clusters"},
      {{"topology", "--cluster", "zionx"}, "unknown cluster 'zionx'"},
      {{"topology", "--nodes", "0"}, "--nodes: expected an integer in [1, 8192], got 0"},
      // An empty value is a mistake, never the option left out; every
      // option that takes a value, of every command.
      {{"whatif", "--nodes", ""}, "--nodes: expected a value, got an empty string"},
      {{"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--profile", ""}, "--profile: expected a value, got an empty string"},
      {{"whatif", "--model", "dlrm-a-small", "--nodes", "1", "--timeline", ""}, "--timeline: expected a value, got an empty string"},
      {{"collective", "--op", ""}, "--op: expected a value, got an empty string"},
      {{"validate", ""}, "files: expected a value, got an empty string"},
      // An unsigned option never wraps a negative value or clamps a huge one.
      {{"flows", "--pattern", "permutation", "--seed", "-1"}, "--seed: expected an integer in [0, 18446744073709551615], got '-1'"},
      {{"flows", "--pattern", "permutation", "--seed", "18446744073709551616"}, "got '18446744073709551616'"},
      {{"topology", "--nodes", "two"}, "--nodes"},
      {{"topology", "--format", "xml"}, "xml"},
      {{"topology", "--set", "fabric.spine=4"}, "unknown key 'spine' (did you mean 'spines'?)"},
      {{"topology", "--cluster", "missing.json"}, "missing.json: cannot open the file for reading"},
      {{"flows", "--nodes", "2"}, "give exactly one of --flows FILE or --pattern NAME"},
      {{"flows", "--pattern", "broadcast"}, "broadcast"},
      {{"flows", "--flows", "nope.json"}, "nope.json: cannot open the file for reading"},
      {{"whatif", "--nodes", "1,x"}, "--nodes: expected a comma-separated list of positive node counts"},
      {{"whatif", "--model", "dlrm-b"}, "unknown model 'dlrm-b'"},
      {{"whatif", "--algo", "all_reduce"}, "expected KIND=ALGORITHM"},
      {{"whatif", "--algo", "direct"}, "or nccl, nccl-2.13, nccl-2.20 or auto alone (for every kind), got 'direct'"},
      {{"whatif", "--a2a-precision", "fp64"}, "fp64"},
      {{"collective", "--algo", "rign"}, "unknown collective algorithm 'rign' for all_reduce (did you mean 'ring'?)"},
      {{"collective", "-b", "1X"}, "--min-bytes: expected a size such as 8, 64K, 1M or 1G, got '1X'"},
      {{"collective", "--ranks", "99"}, "--ranks: expected 1 to 8 ranks, got 99"},
      {{"collective", "--vary", "nics=1,2"}, "--vary: nics: unknown knob 'nics'; valid: nodes, nic-gbit, oversubscription, cluster, gpu"},
      {{"collective", "--nodes", "2", "--vary", "nodes=1,2"}, "give --nodes or --vary nodes=..., not both"},
      {{"collective", "--vary", "nodes=1,0"}, "--vary: nodes: expected an integer in [1, 8192], got '0'"},
      {{"collective", "--vary", "nodes=1,2", "--ranks", "12"},
       "--ranks: expected 1 to 8 ranks, got 12 (in the variant nodes=1)"},
      {{"collective", "--vary", "gpu=a100-40gb,r300"}, "unknown GPU profile 'r300'"},
      {{"collective", "--vary", "fabric.spine=4"}, "unknown key 'spine' (did you mean 'spines'?)"},
      {{"calibrate", "--measurements", "nope.jsonl", "--out", "p.json"}, "nope.jsonl"},
      {{"whatif", "--batch-per-gpu", "4", "--global-batch", "64"}, "excludes"},
      {{"plan", "--model", "dlrm-a"}, "--nodes is required"},
      {{"plan", "--nodes", "2", "--batch-per-gpu", "4", "--global-batch", "64"}, "excludes"},
      {{"plan", "--nodes", "1", "--model", "dlrm-a", "--emit-sharding", "p.json"},
       "--emit-sharding: the plan does not fit, nothing to write: dlrm-a needs 1.64 TB"},
      {{"plan", "--nodes", "1", "--model", "dlrm-a", "--format", "csv"}, "the plan does not fit, no rows to write"},
      {{"plan", "--nodes", "2", "--sharding", "rowwise"}, "unknown sharding scheme 'rowwise'"},
      {{"plan", "--nodes", "2", "--sharding", "search"}, "unknown sharding scheme 'search'"},
      {{"whatif", "--nodes", "2", "--search-budget", "0"}, "--search-budget"},
      {{"whatif", "--nodes", "1", "--sensitivity", "2", "--vary", "nic-gbit=100,200"},
       "--sensitivity: varies one resource at a time itself; not with --vary"},
      {{"whatif", "--nodes", "1", "--sensitivity", "1"}, "--sensitivity: expected a factor in (1, 1000], got 1"},
      {{"whatif", "--nodes", "1", "--set", "gpu.hbm.bandwith_gbyte_per_s=1"},
       "--set gpu.hbm.bandwith_gbyte_per_s=1: /hbm: unknown key 'bandwith_gbyte_per_s' (did you mean "
       "'bandwidth_gbyte_per_s'?)"},
      {{"whatif", "--nodes", "1", "--vary", "gpu.efficiency.compute=0.5,2"},
       "/efficiency/compute: expected a number in [0, 1], got 2"},
      {{"collective", "--set", "gpu.kernel_launch_ns=-1"}, "/kernel_launch_ns: expected a number in [0, 1000000000], got -1"},
      {{"whatif", "--nodes", "2", "--vary", "sharding=auto,serch"}, "unknown sharding scheme 'serch'"},
      {{"plan", "--nodes", "2", "--global-batch", "100"}, "100 samples do not split evenly over 16 GPUs"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.status, kExitBadInput) << c.expected_in_err;
    EXPECT_EQ(r.out, "") << c.expected_in_err;
    EXPECT_TRUE(contains(r.err, "zionsim: error:")) << r.err;
    EXPECT_TRUE(contains(r.err, c.expected_in_err)) << r.err;
  }
}

}  // namespace
}  // namespace zx::tools

namespace zx::tools {
namespace {

// RFC 4180: a field with a comma, a quote or a line break is quoted, its
// quotes doubled; any other field is written as it is (so that ordinary
// output stays byte for byte what it was).
TEST(CsvTest, FieldsAreQuotedOnlyWhenTheyMustBe) {
  EXPECT_EQ(csv_field("ring"), "ring");
  EXPECT_EQ(csv_field("my,algo"), "\"my,algo\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_quoted("plain"), "\"plain\"");
}

}  // namespace
}  // namespace zx::tools
