// Tests of cluster files: presets with overrides build what the spec says;
// the explicit form round-trips through the writer; every bad file of the
// corpus gives exactly its expected errors; the 2-node ZionEX dump matches its
// golden file. Refresh goldens with
//   ZX_UPDATE_GOLDENS=1 bazel run //topology:cluster_file_test

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/testing/runfiles.h"
#include "topology/cluster_file.h"
#include "topology/presets.h"
#include "topology/summary.h"

namespace zx::topology {
namespace {

using zx::testing::maybe_update_golden;
using zx::testing::read_file;
using zx::testing::runfile;

std::string dump(const Topology& topology, std::string_view source) {
  std::ostringstream out;
  write_cluster_json(out, topology, source);
  return out.str();
}

std::string errors_of(const std::string& text, const std::string& source) {
  try {
    parse_cluster(text, source);
  } catch (const InputError& e) {
    return std::string(e.what()) + "\n";
  }
  return "(no error)\n";
}

// A preset name with --nodes builds exactly the preset's spec.
TEST(ClusterFileTest, PresetNameWithNodes) {
  const LoadedCluster c = load_cluster({.cluster = "zionex", .nodes = 4});
  ASSERT_TRUE(c.spec.has_value());
  EXPECT_EQ(c.spec->nodes, 4);
  EXPECT_EQ(c.source, "preset zionex");
  const Topology expected = build_cluster(preset_spec("zionex", 4));
  EXPECT_EQ(dump(c.topology, "x"), dump(expected, "x"));
}

// Overrides from a file and from --set land in the spec; 2:1 oversubscription
// halves the backend bisection of a 32-node (2-rack) cluster.
TEST(ClusterFileTest, OverridesChangeTheSpec) {
  const LoadedCluster plain = parse_cluster(
      R"({"schema_version": 1, "preset": "zionex", "nodes": 32})", "plain.json");
  const LoadedCluster over = parse_cluster(
      R"({"schema_version": 1, "preset": "zionex", "nodes": 32,
          "fabric": {"oversubscription": 2}, "nic": {"bandwidth_gbit_per_s": 400}})",
      "over.json");
  EXPECT_EQ(over.spec->oversubscription, 2.0);
  EXPECT_EQ(over.spec->nic_bandwidth, sim::BytesPerSecond::from_gbit_per_s(400));
  const auto b_plain = backend_bisection_bandwidth(*plain.spec);
  const auto b_over = backend_bisection_bandwidth(*over.spec);
  ASSERT_TRUE(b_plain && b_over);
  // 400 Gb/s NICs double injection, 2:1 halves the uplinks: the same bisection.
  EXPECT_EQ(b_over->count(), b_plain->count());

  const LoadedCluster set = load_cluster(
      {.cluster = "hgx", .nodes = 2, .overrides = {"fabric.oversubscription=2", "preset=zion"}});
  EXPECT_EQ(set.spec->preset, "zion");
  EXPECT_EQ(set.spec->oversubscription, 2.0);
  EXPECT_EQ(set.spec->nodes, 2);
  EXPECT_FALSE(set.spec->backend_network);
  EXPECT_EQ(set.source, "preset hgx with --set overrides");
}

// The preset-based file of a request reads back as the same cluster, with
// the overrides and the node count in it; an explicit graph has none to give.
TEST(ClusterFileTest, PresetClusterTextRoundTrips) {
  const ClusterRequest request{.cluster = "zionex", .nodes = 3,
                               .overrides = {"nic.efficiency=0.5", "fabric.switch_latency_ns=700",
                                             "nic.all_to_all_efficiency=0.3"}};
  const std::string text = preset_cluster_text(request);
  const LoadedCluster back = parse_cluster(text, "fitted.json");
  ASSERT_TRUE(back.spec.has_value());
  EXPECT_EQ(back.spec->nodes, 3);
  EXPECT_EQ(back.spec->roce_efficiency, 0.5);
  EXPECT_EQ(back.spec->switch_latency, sim::Duration::ns(700));
  EXPECT_EQ(back.spec->all_to_all_efficiency, 0.3);
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "zionex", "nic": {"all_to_all_efficiency": 0}})", "a.json"),
            "a.json: /nic/all_to_all_efficiency: expected a number in [0.001, 1], got 0\n");
  // An efficiency near zero is refused at its field, not floored to 1 B/s or
  // left to overflow the clock later; so is SHARP's (0 there means none).
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "zionex", "nic": {"efficiency": 1e-300}})", "a.json"),
            "a.json: /nic/efficiency: expected a number in [0.001, 1], got 1e-300\n");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "hgx", "nvlink": {"sharp_efficiency": 1e-9}})", "a.json"),
            "a.json: /nvlink/sharp_efficiency: expected 0 (no NVLink SHARP) or a number in [0.001, 1], got 1e-09\n");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "hgx", "nvlink": {"sharp_efficiency": 0}})", "a.json"), "(no error)\n");
  EXPECT_EQ(dump(back.topology, "x"), dump(load_cluster(request).topology, "x"));
  const std::filesystem::path explicit_file =
      std::filesystem::path(std::getenv("TEST_TMPDIR")) / "explicit.json";
  {
    std::ofstream out(explicit_file);
    out << dump(build_cluster(preset_spec("zionex", 1)), "x");
  }
  EXPECT_THROW(preset_cluster_text({.cluster = explicit_file.string()}), InputError);
}

TEST(ClusterFileTest, BadRequestsNameTheFlag) {
  const auto message = [](const ClusterRequest& r) {
    try {
      load_cluster(r);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message({.cluster = "zionx"}),
            "--cluster: unknown cluster 'zionx' (did you mean 'zion'?); valid: dgx-a100, gb200-nvl72, gb300-nvl72, hgx, hgx-b200, hgx-b300, zion, zionex, "
            "or the path of a .json cluster file");
  EXPECT_EQ(message({.cluster = "zionex", .nodes = 0}), "--nodes: expected an integer in [1, 8192], got 0");
  EXPECT_EQ(message({.cluster = "zionex", .overrides = {"fabric"}}), "--set: expected KEY=VALUE, got 'fabric'");
  EXPECT_EQ(message({.cluster = "zionex", .overrides = {"preset.x=1"}}),
            "--set preset.x=1: 'preset' is not an object in the cluster description");
  EXPECT_EQ(message({.cluster = "zionex", .overrides = {"fabric.spine=4"}}),
            "preset zionex with --set overrides: /fabric: unknown key 'spine' (did you mean 'spines'?)");
  EXPECT_EQ(message({.cluster = "no/such/file.json"}), "no/such/file.json: cannot open the file for reading: No such file or directory");
}

// The explicit form written by write_cluster_json reads back as the same
// topology (same text when written again), for every preset.
TEST(ClusterFileTest, ExplicitFormRoundTrips) {
  for (const char* preset : {"zionex", "zion", "hgx"}) {
    ClusterSpec spec = preset_spec(preset, 3);
    spec.nodes_per_rack = 2;
    const Topology original = build_cluster(spec);
    const std::string first = dump(original, preset);
    const LoadedCluster again = parse_cluster(first, "dump.json");
    EXPECT_FALSE(again.spec.has_value());
    EXPECT_EQ(dump(again.topology, preset), first) << preset;
  }
}

// The GPUs a cluster carries: the preset's (hgx: H100), a file's "gpu" key,
// and the explicit form's dump keeps it, so a dumped cluster simulates the
// same GPUs.
TEST(ClusterFileTest, GpuProfileNameIsTheClustersAndSurvivesTheDump) {
  EXPECT_EQ(load_cluster({.cluster = "zionex"}).gpu, "a100-40gb");
  EXPECT_EQ(load_cluster({.cluster = "hgx"}).gpu, "h100-sxm");
  EXPECT_EQ(load_cluster({.cluster = "zionex", .overrides = {"gpu=\"h200\""}}).gpu, "h200");
  const LoadedCluster hgx = load_cluster({.cluster = "hgx", .nodes = 2});
  std::ostringstream out;
  write_cluster_json(out, hgx.topology, hgx.source, hgx.degradations, hgx.gpu);
  EXPECT_NE(out.str().find("\n  \"gpu\": \"h100-sxm\",\n"), std::string::npos) << out.str().substr(0, 200);
  const LoadedCluster again = parse_cluster(out.str(), "dump.json");
  EXPECT_EQ(again.gpu, "h100-sxm");
  EXPECT_EQ(parse_cluster(dump(hgx.topology, "hgx"), "dump.json").gpu, "") << "no key, no GPU named";
}

// Every example in topology/examples loads.
TEST(ClusterFileTest, ExamplesLoad) {
  for (const char* name : {"zionex_16nodes.json", "zionex_128nodes_oversubscribed.json",
                           "zionex_with_400g_nics.json", "two_gpus_explicit.json"}) {
    const std::string path = runfile(std::string("topology/examples/") + name);
    const LoadedCluster c = load_cluster({.cluster = path});
    EXPECT_GE(c.topology.num_gpus(), 2) << name;
  }
  const LoadedCluster two = load_cluster({.cluster = runfile("topology/examples/two_gpus_explicit.json")});
  EXPECT_EQ(two.topology.num_nodes(), 5u);
  EXPECT_EQ(two.topology.num_links(), 8u);  // four duplex cables
}

// Each bad file gives exactly its expected errors, all of them at once.
TEST(ClusterFileTest, BadFileCorpus) {
  for (const char* name : {"typo_key", "many_errors", "no_schema", "future_schema", "syntax",
                           "not_object", "dangling_link", "disconnected", "graph_errors", "duplicate_names",
                           "wrong_shapes"}) {
    const std::string base = std::string("topology/testdata/bad_clusters/") + name;
    const std::string actual = errors_of(read_file(runfile(base + ".json")), std::string(name) + ".json");
    if (maybe_update_golden(base + ".expected", actual)) continue;
    EXPECT_EQ(actual, read_file(runfile(base + ".expected"))) << name;
  }
}

// The explicit dump of a 2-node ZionEX is pinned.
// The communication library's latencies: NCCL-derived defaults, set in
// either form, kept by the explicit dump; a negative one is an error naming
// its pointer.
TEST(ClusterFileTest, CommunicationLatencies) {
  const LoadedCluster preset = load_cluster({.cluster = "zionex"});
  EXPECT_EQ(preset.communication.launch, sim::Duration::ns(6600));
  EXPECT_EQ(preset.communication.transfer, sim::Duration::ns(400));
  EXPECT_EQ(preset.communication.network_transfer, sim::Duration::ns(1200));
  EXPECT_EQ(preset.communication.peer_gap, sim::Duration::zero());
  const LoadedCluster set = load_cluster(
      {.cluster = "zionex", .nodes = 2,
       .overrides = {"communication.launch_latency_ns=5000", "communication.network_transfer_latency_ns=2500.5",
                     "communication.peer_gap_ns=2450"}});
  EXPECT_EQ(set.communication.peer_gap, sim::Duration::ns(2450));
  EXPECT_EQ(set.communication.launch, sim::Duration::ns(5000));
  EXPECT_EQ(set.communication.transfer, sim::Duration::ns(400));
  EXPECT_EQ(set.communication.network_transfer, sim::Duration::ps(2'500'500));
  std::ostringstream out;
  write_cluster_json(out, set.topology, set.source, {}, "", set.communication);
  const LoadedCluster back = parse_cluster(out.str(), "dump.json");
  EXPECT_EQ(back.communication.launch, set.communication.launch);
  EXPECT_EQ(back.communication.transfer, set.communication.transfer);
  EXPECT_EQ(back.communication.network_transfer, set.communication.network_transfer);
  EXPECT_EQ(back.communication.peer_gap, set.communication.peer_gap);
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "zionex", "communication": {"launch_latency_ns": -1,
                         "step_latency_ns": 1}})",
                      "c.json"),
            "c.json: /communication/launch_latency_ns: expected a number in [0, 1000000000], got -1\n"
            "c.json: /communication: unknown key 'step_latency_ns'; valid: launch_latency_ns, "
            "network_transfer_latency_ns, peer_gap_ns, transfer_latency_ns\n");
}

// Host memory per server: the presets' (ZionEX 1.5 TB, DGX H100 and DGX
// B200 2 TB), host.memory_gbyte in either form and through --set, kept by
// the explicit dump; out of range or misspelt is an error naming its pointer.
TEST(ClusterFileTest, HostMemory) {
  EXPECT_EQ(load_cluster({.cluster = "zionex"}).host_memory, sim::Bytes(1'500'000'000'000));
  EXPECT_EQ(load_cluster({.cluster = "zion"}).host_memory, sim::Bytes(1'500'000'000'000));
  EXPECT_EQ(load_cluster({.cluster = "hgx"}).host_memory, sim::Bytes(2'000'000'000'000));
  EXPECT_EQ(load_cluster({.cluster = "hgx-b200"}).host_memory, sim::Bytes(2'000'000'000'000));
  const LoadedCluster set =
      load_cluster({.cluster = "zionex", .nodes = 2, .overrides = {"host.memory_gbyte=4000.5"}});
  EXPECT_EQ(set.host_memory, sim::Bytes(4'000'500'000'000));
  ASSERT_TRUE(set.spec.has_value());
  EXPECT_EQ(set.spec->host_memory, set.host_memory);
  std::ostringstream out;
  write_cluster_json(out, set.topology, set.source, {}, "", set.communication, set.host_memory);
  EXPECT_NE(out.str().find("\n  \"host\": {\"memory_gbyte\":4000.5},\n"), std::string::npos) << out.str().substr(0, 400);
  EXPECT_EQ(parse_cluster(out.str(), "dump.json").host_memory, set.host_memory);
  // An explicit graph without the key has ZionEX's.
  std::ostringstream plain;
  write_cluster_json(plain, build_cluster(preset_spec("zionex", 1)), "preset zionex");
  nlohmann::json without = nlohmann::json::parse(plain.str());
  without.erase("host");
  EXPECT_EQ(parse_cluster(without.dump(), "g.json").host_memory, ClusterSpec{}.host_memory);
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "zionex", "host": {"memory_gbyte": 0, "memory_gb": 2}})",
                      "c.json"),
            "c.json: /host/memory_gbyte: expected a number in (0, 1000000), got 0\n"
            "c.json: /host: unknown key 'memory_gb' (did you mean 'memory_gbyte'?)\n");
  without["host"] = {{"memory_gbyte", -5}};
  EXPECT_EQ(errors_of(without.dump(), "g.json"), "g.json: /host/memory_gbyte: expected a number in (0, 1000000), got -5\n");
}

// The host layout keys: how GPUs attach (host.attach), the C2C rate and the
// socket groups, through --set as in a file; a layout the sockets cannot
// carry is an error at the file and pointer of the field.
TEST(ClusterFileTest, SuperchipHostKeys) {
  const LoadedCluster gb = load_cluster({.cluster = "gb200-nvl72"});
  ASSERT_TRUE(gb.spec.has_value());
  EXPECT_EQ(gb.spec->host_attach, HostAttach::kNvlinkC2c);
  EXPECT_EQ(gb.host_memory, sim::Bytes(17'280'000'000'000));
  EXPECT_EQ(gb.gpu, "gb200");
  const LoadedCluster set = load_cluster(
      {.cluster = "zionex",
       .overrides = {"host.attach=nvlink_c2c", "host.cpus_per_node=8", "host.cpus_per_host=4",
                     "host.c2c_bandwidth_gbyte_per_s=100"}});
  ASSERT_TRUE(set.spec.has_value());
  EXPECT_EQ(set.spec->host_attach, HostAttach::kNvlinkC2c);
  EXPECT_EQ(set.spec->cpus_per_host, 4);
  EXPECT_EQ(set.spec->c2c_bandwidth.count(), 100'000'000'000);
  int c2c = 0;
  for (std::uint32_t i = 0; i < set.topology.num_links(); ++i) {
    c2c += set.topology.link(LinkId{i}).kind == LinkKind::kNvlinkC2c ? 1 : 0;
  }
  EXPECT_EQ(c2c, 16 + 2 * 6 * 2);  // a C2C link each way per GPU; two hosts of 4 sockets, 6 pairs each
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "gb200-nvl72",
                         "host": {"cpus_per_node": 5, "attach": "c2c"}})",
                      "g.json"),
            "g.json: /host/attach: unknown value 'c2c'; valid: nvlink_c2c, pcie_switch\n");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "gb200-nvl72", "host": {"cpus_per_node": 5}})", "g.json"),
            "g.json: /host/cpus_per_host: expected 0 (all sockets) or a divisor of cpus_per_node (5), got 2\n"
            "g.json: /host/cpus_per_node: with GPUs on NVLink-C2C every socket carries as many GPUs: expected a "
            "divisor of gpus_per_node (72), got 5\n");
}

// nic.attach puts the NICs on the GPUs' switches (ZionEX with it has no NIC
// trays: 4 fewer switches and their uplinks; a GPU reaches its NIC over its
// own switch), reads back "host" as the default, and names its values when
// mistyped; gb300-nvl72 sets it, and --set takes it back to the host side.
TEST(ClusterFileTest, NicAttachKey) {
  const LoadedCluster base = load_cluster({.cluster = "zionex"});
  const LoadedCluster beside = load_cluster({.cluster = "zionex", .overrides = {"nic.attach=gpu_switch"}});
  ASSERT_TRUE(beside.spec.has_value());
  EXPECT_EQ(beside.spec->nic_attach, NicAttach::kGpuSwitch);
  EXPECT_EQ(base.spec->nic_attach, NicAttach::kHost);
  EXPECT_EQ(beside.topology.num_nodes() + 4, base.topology.num_nodes());
  EXPECT_EQ(beside.topology.num_links() + 8, base.topology.num_links());
  EXPECT_FALSE(beside.topology.find("node0/pcie_nic0").has_value());
  EXPECT_EQ(load_cluster({.cluster = "zionex", .overrides = {"nic.attach=host"}}).topology.num_links(),
            base.topology.num_links());
  const LoadedCluster gb = load_cluster({.cluster = "gb300-nvl72", .overrides = {"nic.attach=host"}});
  EXPECT_EQ(gb.topology.num_nodes(), load_cluster({.cluster = "gb200-nvl72"}).topology.num_nodes());
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "hgx", "nic": {"attach": "gpu"}})", "n.json"),
            "n.json: /nic/attach: unknown value 'gpu' (did you mean 'gpu_switch'?); valid: gpu_switch, host\n");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "preset": "gb300-nvl72", "pcie": {"gpus_per_switch": 4}})",
                      "n.json"),
            "n.json: /pcie/gpus_per_switch: with the NICs on the GPUs' switches and GPUs on NVLink-C2C a switch's "
            "GPUs share a socket: expected a divisor of the GPUs per socket (2), got 4\n");
}

// NVLink SHARP survives the explicit dump: hgx's efficiency is written as
// nvlink.sharp_efficiency and read back; ZionEX's dump has no such key (0);
// out of range in the explicit form is an error at its pointer.
TEST(ClusterFileTest, NvlinkSharpEfficiencyRoundTrips) {
  const LoadedCluster hgx = load_cluster({.cluster = "hgx"});
  EXPECT_NEAR(hgx.nvlink_sharp_efficiency, 0.7314, 1e-4);
  std::ostringstream out;
  write_cluster_json(out, hgx.topology, hgx.source, {}, hgx.gpu, hgx.communication, hgx.host_memory,
                     hgx.nvlink_sharp_efficiency);
  EXPECT_NE(out.str().find("\n  \"nvlink\": {\"sharp_efficiency\":0.731"), std::string::npos) << out.str().substr(0, 400);
  EXPECT_EQ(parse_cluster(out.str(), "dump.json").nvlink_sharp_efficiency, hgx.nvlink_sharp_efficiency);
  EXPECT_EQ(load_cluster({.cluster = "zionex"}).nvlink_sharp_efficiency, 0.0);
  nlohmann::json bad = nlohmann::json::parse(out.str());
  bad["nvlink"] = {{"sharp_efficiency", 2}};
  EXPECT_EQ(errors_of(bad.dump(), "g.json"), "g.json: /nvlink/sharp_efficiency: expected 0 (no NVLink SHARP) or a number in [0.001, 1], got 2\n");
}

TEST(ClusterFileTest, GoldenZionex2Nodes) {
  // As `zionsim topology --nodes 2 --format json` writes it, the GPU named.
  std::ostringstream out;
  write_cluster_json(out, build_cluster(preset_spec("zionex", 2)), "preset zionex", {}, "a100-40gb");
  const std::string actual = out.str();
  const std::string golden = "topology/testdata/zionex_2nodes.golden.json";
  if (maybe_update_golden(golden, actual)) return;
  EXPECT_EQ(actual, read_file(runfile(golden)));
}

}  // namespace
}  // namespace zx::topology
