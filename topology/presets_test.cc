// Tests of the cluster presets: device and link counts against closed forms,
// link parameters from the cited defaults, spec validation, preset lookup,
// and backend bisection bandwidth against its closed form.

#include "topology/presets.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "topology/router.h"
#include "topology/summary.h"

namespace zx::topology {
namespace {

struct Counts {
  std::map<NodeKind, int> nodes;
  std::map<LinkKind, int> links;
};

Counts count(const Topology& t) {
  Counts c;
  for (std::uint32_t i = 0; i < t.num_nodes(); ++i) ++c.nodes[t.node(NodeId{i}).kind];
  for (std::uint32_t i = 0; i < t.num_links(); ++i) ++c.links[t.link(LinkId{i}).kind];
  return c;
}

int racks(int n) { return (n + 15) / 16; }

// The kinds of the links a route from a to b crosses (flow key 7).
std::vector<LinkKind> route_kinds(const Topology& t, const Router& router, std::string_view a, std::string_view b) {
  std::vector<LinkKind> out;
  for (LinkId l : router.route(*t.find(a), *t.find(b), 7)) out.push_back(t.link(l).kind);
  return out;
}

// ZionEX with N servers (16 per rack, derived spines: 8 backend, 4 front-end):
//   GPUs 8N, NVSwitch N, PCIe switches 8N (4 GPU tray + 4 NIC tray), CPUs 4N,
//   NICs 12N (8 RoCE + 4 front-end), Ethernet switches 2R + (R > 1 ? 12 : 0).
//   Directed links: NVLink 16N; Gen4 40N (GPU 16N, tray uplinks 8N, NICs 16N);
//   Gen3 16N (CPU-tray 8N, CPU-front-end NIC 8N); UPI 12N (6 socket pairs);
//   RoCE 16N + (R > 1 ? 16R : 0); TCP 8N + (R > 1 ? 8R : 0).
TEST(PresetsTest, ZionExCountsMatchClosedForms) {
  for (int n : {1, 2, 16, 64}) {
    const Topology t = build_cluster(preset_spec("zionex", n));
    const int r = racks(n);
    Counts c = count(t);
    SCOPED_TRACE(n);
    EXPECT_EQ(c.nodes[NodeKind::kGpu], 8 * n);
    EXPECT_EQ(c.nodes[NodeKind::kNvSwitch], n);
    EXPECT_EQ(c.nodes[NodeKind::kPcieSwitch], 8 * n);
    EXPECT_EQ(c.nodes[NodeKind::kCpu], 4 * n);
    EXPECT_EQ(c.nodes[NodeKind::kNic], 12 * n);
    EXPECT_EQ(c.nodes[NodeKind::kEthernetSwitch], 2 * r + (r > 1 ? 12 : 0));
    EXPECT_EQ(t.num_nodes(), static_cast<std::size_t>(33 * n + 2 * r + (r > 1 ? 12 : 0)));
    EXPECT_EQ(c.links[LinkKind::kNvlink], 16 * n);
    EXPECT_EQ(c.links[LinkKind::kPcieGen4], 40 * n);
    EXPECT_EQ(c.links[LinkKind::kPcieGen3], 16 * n);
    EXPECT_EQ(c.links[LinkKind::kUpi], 12 * n);
    EXPECT_EQ(c.links[LinkKind::kRoce], 16 * n + (r > 1 ? 16 * r : 0));
    EXPECT_EQ(c.links[LinkKind::kTcpFrontEnd], 8 * n + (r > 1 ? 8 * r : 0));
    EXPECT_EQ(t.num_gpus(), 8 * n);
  }
}

// Zion: no NIC trays, no backend NICs, no RoCE: 21 nodes and 68 links per
// server, plus the front-end Clos (R rack switches, 4 spines when R > 1).
TEST(PresetsTest, ZionCountsMatchClosedForms) {
  for (int n : {1, 2, 16, 64}) {
    const Topology t = build_cluster(preset_spec("zion", n));
    const int r = racks(n);
    Counts c = count(t);
    SCOPED_TRACE(n);
    EXPECT_EQ(c.nodes[NodeKind::kPcieSwitch], 4 * n);
    EXPECT_EQ(c.nodes[NodeKind::kNic], 4 * n);
    EXPECT_EQ(c.nodes[NodeKind::kEthernetSwitch], r + (r > 1 ? 4 : 0));
    EXPECT_EQ(t.num_nodes(), static_cast<std::size_t>(21 * n + r + (r > 1 ? 4 : 0)));
    EXPECT_EQ(c.links[LinkKind::kRoce], 0);
    EXPECT_EQ(t.num_links(), static_cast<std::size_t>(68 * n + (r > 1 ? 8 * r : 0)));
  }
}

// HGX: two sockets (one UPI pair), Gen5 devices: 29 nodes and 90 links per
// server; fabrics: backend R + 8 spines, front end R + 2 spines when R > 1.
// Each of the 4 GPU trays has its own x16 link to a socket, trays 0-1 to the
// first and 2-3 to the second (GPUs 0-3 and 4-7 by NUMA node on a DGX H100).

TEST(PresetsTest, HgxCountsMatchClosedForms) {
  for (int n : {1, 2, 16, 64}) {
    const Topology t = build_cluster(preset_spec("hgx", n));
    const int r = racks(n);
    Counts c = count(t);
    SCOPED_TRACE(n);
    EXPECT_EQ(c.nodes[NodeKind::kCpu], 2 * n);
    EXPECT_EQ(c.links[LinkKind::kUpi], 2 * n);
    EXPECT_EQ(c.links[LinkKind::kPcieGen5], 40 * n + 12 * n);
    EXPECT_EQ(t.num_nodes(), static_cast<std::size_t>(29 * n + 2 * r + (r > 1 ? 10 : 0)));
    EXPECT_EQ(t.num_links(), static_cast<std::size_t>(90 * n + (r > 1 ? 20 * r : 0)));
    const auto tray_socket = [&](int tray) {
      int socket = -1;
      for (const LinkId l : t.out_links(*t.find(fmt::format("node0/pcie_gpu{}", tray)))) {
        const NodeInfo& to = t.node(t.link(l).dst);
        if (to.kind == NodeKind::kCpu) {
          EXPECT_EQ(socket, -1) << "tray " << tray << " has two sockets";
          socket = to.local_index;
        }
      }
      return socket;
    };
    EXPECT_EQ(tray_socket(0), 0);
    EXPECT_EQ(tray_socket(1), 0);
    EXPECT_EQ(tray_socket(2), 1);
    EXPECT_EQ(tray_socket(3), 1);
  }
}

// HGX B200 is the HGX server with DGX B200's GPUs, NVLink and memory: the
// same devices and links as hgx, NVLink at 900 GB/s per direction.
TEST(PresetsTest, HgxB200IsHgxWithBlackwellParts) {
  const ClusterSpec h = preset_spec("hgx", 4);
  const ClusterSpec b = preset_spec("hgx-b200", 4);
  EXPECT_EQ(b.preset, "hgx-b200");
  EXPECT_EQ(b.gpu, "b200");
  EXPECT_EQ(b.nvlink_bandwidth.count(), 900'000'000'000);
  EXPECT_EQ(b.nic_bandwidth, h.nic_bandwidth);
  EXPECT_EQ(b.nic_bandwidth.count(), 50'000'000'000);
  EXPECT_EQ(b.host_memory, sim::Bytes(2'000'000'000'000));
  EXPECT_EQ(h.host_memory, sim::Bytes(2'000'000'000'000));
  EXPECT_EQ(ClusterSpec{}.host_memory, sim::Bytes(1'500'000'000'000));
  // NVLink SHARP: none on ZionEX's A100 switches; fitted to NCCL's NVLS
  // bandwidth on H100 (275 GB/s algbw) and B300 (483).
  EXPECT_EQ(ClusterSpec{}.nvlink_sharp_efficiency, 0.0);
  EXPECT_NEAR(h.nvlink_sharp_efficiency, 0.7314, 1e-4);
  EXPECT_NEAR(b.nvlink_sharp_efficiency, 0.6423, 1e-4);
  EXPECT_EQ(preset_spec("gb200-nvl72", 1).nvlink_sharp_efficiency, b.nvlink_sharp_efficiency);
  const Topology th = build_cluster(h);
  const Topology tb = build_cluster(b);
  EXPECT_EQ(tb.num_nodes(), th.num_nodes());
  EXPECT_EQ(tb.num_links(), th.num_links());
  const NodeId gpu = *tb.find("node3/gpu7");
  const NodeId nvswitch = *tb.find("node3/nvswitch");
  int nvlinks = 0;
  for (LinkId l : tb.out_links(gpu)) {
    if (tb.link(l).dst != nvswitch) continue;
    ++nvlinks;
    EXPECT_EQ(tb.link(l).bandwidth.count(), 900'000'000'000);
  }
  EXPECT_EQ(nvlinks, 1);
}

// GB200 NVL72 with N racks (a node is a rack; 16 per rack switch; derived
// spines: 72 backend, 36 front-end):
//   GPUs 72N, NVSwitch N, no PCIe switches, CPUs 36N, NICs 108N (72 RoCE +
//   36 front-end). Directed links: NVLink 144N; NVLink-C2C 180N (every GPU
//   to its Grace 144N, the two Graces of each of 18 trays 36N); Gen5 216N
//   (NIC to Grace 144N, front-end NIC 72N); RoCE 144N + (R > 1 ? 144R : 0);
//   TCP 72N + (R > 1 ? 72R : 0).
//
// GB300 NVL72: the same rack with a ConnectX-8 (a PCIe switch and its NIC)
// beside every GPU: 72N PCIe switches more; Gen6 288N (GPU to its switch
// 144N, NIC to its switch 144N); the NIC's Gen5 links (144N) now go from
// the switch to its Grace.
TEST(PresetsTest, Nvl72CountsMatchClosedForms) {
  for (const bool ultra : {false, true}) {
    for (int n : {1, 2, 17}) {
      const Topology t = build_cluster(preset_spec(ultra ? "gb300-nvl72" : "gb200-nvl72", n));
      const int r = racks(n);
      Counts c = count(t);
      SCOPED_TRACE(fmt::format("{} racks, ultra {}", n, ultra));
      EXPECT_EQ(c.nodes[NodeKind::kGpu], 72 * n);
      EXPECT_EQ(c.nodes[NodeKind::kNvSwitch], n);
      EXPECT_EQ(c.nodes[NodeKind::kPcieSwitch], ultra ? 72 * n : 0);
      EXPECT_EQ(c.links[LinkKind::kPcieGen6], ultra ? 288 * n : 0);
      EXPECT_EQ(c.nodes[NodeKind::kCpu], 36 * n);
      EXPECT_EQ(c.nodes[NodeKind::kNic], 108 * n);
      EXPECT_EQ(c.nodes[NodeKind::kEthernetSwitch], 2 * r + (r > 1 ? 72 + 36 : 0));
      EXPECT_EQ(c.links[LinkKind::kNvlink], 144 * n);
      EXPECT_EQ(c.links[LinkKind::kNvlinkC2c], 180 * n);
      EXPECT_EQ(c.links[LinkKind::kPcieGen5], 216 * n);
      EXPECT_EQ(c.links[LinkKind::kUpi], 0);
      EXPECT_EQ(c.links[LinkKind::kRoce], 144 * n + (r > 1 ? 144 * r : 0));
      EXPECT_EQ(c.links[LinkKind::kTcpFrontEnd], 72 * n + (r > 1 ? 72 * r : 0));
    }
  }
}

// Routes of a superchip rack: GPUs of one rack meet on NVLink only (never
// over C2C and a Grace); a GPU reaches its own Grace in one C2C hop, and a
// GPU of another rack over C2C, its Grace's PCIe to its NIC, the rack
// switch and back the same way; Graces of one tray are linked, of two trays
// not.
TEST(PresetsTest, Gb200Nvl72Routes) {
  const ClusterSpec s = preset_spec("gb200-nvl72", 2);
  EXPECT_EQ(s.gpu, "gb200");
  EXPECT_EQ(s.host_attach, HostAttach::kNvlinkC2c);
  EXPECT_EQ(s.host_memory, sim::Bytes(17'280'000'000'000));
  const Topology t = build_cluster(s);
  const Router router(t);
  const auto kinds = [&](std::string_view a, std::string_view b) { return route_kinds(t, router, a, b); };
  using K = LinkKind;
  EXPECT_EQ(kinds("node0/gpu0", "node0/gpu71"), (std::vector<K>{K::kNvlink, K::kNvlink}));
  EXPECT_EQ(kinds("node0/gpu0", "node0/gpu1"), (std::vector<K>{K::kNvlink, K::kNvlink}));
  EXPECT_EQ(kinds("node0/gpu5", "node0/cpu2"), (std::vector<K>{K::kNvlinkC2c}));
  EXPECT_EQ(kinds("node0/cpu2", "node0/gpu5"), (std::vector<K>{K::kNvlinkC2c}));
  EXPECT_EQ(kinds("node0/gpu3", "node1/gpu3"),
            (std::vector<K>{K::kNvlinkC2c, K::kPcieGen5, K::kRoce, K::kRoce, K::kPcieGen5, K::kNvlinkC2c}));
  const std::vector<LinkId> out = router.route(*t.find("node0/gpu3"), *t.find("node1/gpu3"), 7);
  EXPECT_EQ(t.node(t.link(out[0]).dst).name, "node0/cpu1");
  EXPECT_EQ(t.node(t.link(out[1]).dst).name, "node0/nic3");
  EXPECT_EQ(t.link(out[0]).bandwidth.count(), 225'000'000'000);
  EXPECT_NEAR(t.link(out[1]).bandwidth.to_gbyte_per_s(), 63.0, 0.02);
  EXPECT_EQ(t.link(out[2]).bandwidth.count(), 50'000'000'000);
  EXPECT_EQ(kinds("node0/cpu4", "node0/cpu5"), (std::vector<K>{K::kNvlinkC2c}));
  EXPECT_NE(kinds("node0/cpu3", "node0/cpu4").size(), 1u);  // trays 1 and 2
  for (LinkId l : t.out_links(*t.find("node0/gpu7"))) {
    if (t.node(t.link(l).dst).kind == NodeKind::kNvSwitch) {
      EXPECT_EQ(t.link(l).bandwidth.count(), 900'000'000'000);
    }
  }
}

// PCIe Gen6 x16: 64 GT/s x 16 lanes / 8 bits x 242/256 of every flit = 121
// GB/s per direction, near twice Gen5's 63.
TEST(PresetsTest, PcieGenerationRates) {
  EXPECT_EQ(pcie_bandwidth(LinkKind::kPcieGen6, 16).count(), 121'000'000'000);
  EXPECT_NEAR(pcie_bandwidth(LinkKind::kPcieGen5, 16).to_gbyte_per_s(), 63.015, 0.001);
  EXPECT_NEAR(pcie_bandwidth(LinkKind::kPcieGen3, 16).to_gbyte_per_s(), 15.754, 0.001);
  EXPECT_EQ(pcie_bandwidth(LinkKind::kPcieGen6, 4).count() * 4, pcie_bandwidth(LinkKind::kPcieGen6, 16).count());
}

// A GB300 GPU reaches its NIC through its ConnectX-8's switch on Gen6, not
// over C2C and Grace; its Grace still in one C2C hop; the Grace reaches the
// NIC up the switch's Gen5 link. Between racks the 800 Gb/s NIC is the
// narrowest link (100 GB/s against Gen6's 121).
TEST(PresetsTest, Gb300Nvl72Routes) {
  const ClusterSpec s = preset_spec("gb300-nvl72", 2);
  EXPECT_EQ(s.gpu, "gb300");
  EXPECT_EQ(s.nic_attach, NicAttach::kGpuSwitch);
  EXPECT_EQ(preset_spec("gb200-nvl72", 2).nic_attach, NicAttach::kHost);
  const Topology t = build_cluster(s);
  const Router router(t);
  const auto kinds = [&](std::string_view a, std::string_view b) { return route_kinds(t, router, a, b); };
  using K = LinkKind;
  EXPECT_EQ(kinds("node0/gpu0", "node0/gpu71"), (std::vector<K>{K::kNvlink, K::kNvlink}));
  EXPECT_EQ(kinds("node0/gpu5", "node0/cpu2"), (std::vector<K>{K::kNvlinkC2c}));
  EXPECT_EQ(kinds("node0/gpu5", "node0/nic5"), (std::vector<K>{K::kPcieGen6, K::kPcieGen6}));
  EXPECT_EQ(kinds("node0/cpu2", "node0/nic5"), (std::vector<K>{K::kPcieGen5, K::kPcieGen6}));
  EXPECT_EQ(kinds("node0/gpu3", "node1/gpu3"),
            (std::vector<K>{K::kPcieGen6, K::kPcieGen6, K::kRoce, K::kRoce, K::kPcieGen6, K::kPcieGen6}));
  const std::vector<LinkId> out = router.route(*t.find("node0/gpu3"), *t.find("node1/gpu3"), 7);
  EXPECT_EQ(t.node(t.link(out[0]).dst).name, "node0/pcie_gpu3");
  EXPECT_EQ(t.node(t.link(out[1]).dst).name, "node0/nic3");
  EXPECT_EQ(t.link(out[0]).bandwidth.count(), 121'000'000'000);
  EXPECT_EQ(t.link(out[2]).bandwidth.count(), 100'000'000'000);
  // Switch 5 hangs off GPU 5's Grace (GPUs 4 and 5 on cpu2).
  int uplinks = 0;
  for (LinkId l : t.out_links(*t.find("node0/pcie_gpu5"))) {
    if (t.node(t.link(l).dst).kind != NodeKind::kCpu) continue;
    ++uplinks;
    EXPECT_EQ(t.node(t.link(l).dst).name, "node0/cpu2");
    EXPECT_EQ(t.link(l).kind, K::kPcieGen5);
  }
  EXPECT_EQ(uplinks, 1);
}

// Bounds on the graph's size: a cluster too large to build is refused up
// front (it took minutes and tens of GB), at the limits' edges exactly.
TEST(PresetsTest, GraphsTooLargeToBuildAreRefusedUpFront) {
  const auto problems = [](ClusterSpec s) {
    try {
      validate(s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ClusterSpec nvl72 = preset_spec("gb200-nvl72", 1820);  // 131,040 GPUs
  EXPECT_EQ(problems(nvl72), "");
  nvl72.nodes = 1821;
  EXPECT_EQ(problems(nvl72), "<cluster spec>: nodes: expected at most 131072 GPUs in a cluster (nodes x "
                             "gpus_per_node), got 1821 x 72 = 131112");
  ClusterSpec spines = preset_spec("zionex", 1024);  // 64 racks
  spines.spines = 4096;                               // 64 x 4096 = 262,144 cables: the limit
  EXPECT_EQ(problems(spines), "");
  spines.nodes = 1040;  // 65 racks
  EXPECT_NE(problems(spines).find("spines: expected at most 262144 cables between leaf and spine switches in a "
                                  "fabric, got 266240 (65 rack switches x 4096 spines)"),
            std::string::npos)
      << problems(spines);
}

// DGX A100: every NIC on its GPU's PCIe switch (two GPUs and two NICs per
// switch, no NIC trays), A100 80GB, HDR InfiniBand's payload efficiency, a
// rail-optimized fabric: GPU i of one server reaches GPU i of another
// through rail i's switch alone, never a spine.
TEST(PresetsTest, DgxA100IsRailOptimizedWithNicsOnTheGpuSwitches) {
  const ClusterSpec s = preset_spec("dgx-a100", 4);
  EXPECT_EQ(s.gpu, "a100-80gb");
  EXPECT_TRUE(s.rail_aligned);
  EXPECT_EQ(s.nic_attach, NicAttach::kGpuSwitch);
  EXPECT_DOUBLE_EQ(s.roce_efficiency, 4096.0 / 4122.0);
  const Topology t = build_cluster(s);
  EXPECT_FALSE(t.find("node0/pcie_nic0").has_value());
  const Router router(t);
  std::vector<std::string> hops;
  for (LinkId l : router.route(*t.find("node0/gpu3"), *t.find("node2/gpu3"), 7)) {
    hops.push_back(t.node(t.link(l).dst).name);
  }
  ASSERT_EQ(hops.size(), 6u);
  EXPECT_EQ(hops[1], "node0/nic3");
  EXPECT_EQ(hops[2], "rack0/rail3");
  EXPECT_EQ(hops[3], "node2/nic3");
  EXPECT_EQ(hops.back(), "node2/gpu3");
}

// HGX B300: hgx's device and link counts (29 nodes, 90 links a server), the
// eight GPU-tray switches now one ConnectX-8 each, every NIC on its GPU's
// switch (no NIC trays): Gen6 32N (GPU and NIC to the switch), Gen5 20N
// (switch to socket 16N, front-end NIC 4N); switches 0-3 on socket 0.
TEST(PresetsTest, HgxB300PutsEachNicOnItsGpusSwitch) {
  for (int n : {1, 2, 16, 64}) {
    const Topology t = build_cluster(preset_spec("hgx-b300", n));
    const int r = racks(n);
    Counts c = count(t);
    SCOPED_TRACE(n);
    EXPECT_EQ(c.nodes[NodeKind::kPcieSwitch], 8 * n);
    EXPECT_EQ(c.links[LinkKind::kPcieGen6], 32 * n);
    EXPECT_EQ(c.links[LinkKind::kPcieGen5], 20 * n);
    EXPECT_EQ(c.links[LinkKind::kUpi], 2 * n);
    EXPECT_EQ(t.num_nodes(), static_cast<std::size_t>(29 * n + 2 * r + (r > 1 ? 10 : 0)));
    EXPECT_EQ(t.num_links(), static_cast<std::size_t>(90 * n + (r > 1 ? 20 * r : 0)));
    EXPECT_FALSE(t.find("node0/pcie_nic0").has_value());
  }
  const ClusterSpec s = preset_spec("hgx-b300", 2);
  EXPECT_EQ(s.gpu, "b300");
  EXPECT_EQ(s.nic_bandwidth.count(), 100'000'000'000);
  EXPECT_EQ(s.nvlink_sharp_efficiency, preset_spec("hgx-b200", 1).nvlink_sharp_efficiency);
  const Topology t = build_cluster(s);
  const Router router(t);
  std::vector<std::string> hops;
  for (LinkId l : router.route(*t.find("node0/gpu6"), *t.find("node1/gpu6"), 3)) {
    hops.push_back(t.node(t.link(l).dst).name);
  }
  ASSERT_GE(hops.size(), 2u);
  EXPECT_EQ(hops[0], "node0/pcie_gpu6");
  EXPECT_EQ(hops[1], "node0/nic6");
  for (int g = 0; g < 8; ++g) {
    std::string socket;
    for (LinkId l : t.out_links(*t.find(fmt::format("node0/pcie_gpu{}", g)))) {
      if (t.node(t.link(l).dst).kind == NodeKind::kCpu) socket = t.node(t.link(l).dst).name;
    }
    EXPECT_EQ(socket, g < 4 ? "node0/cpu0" : "node0/cpu1") << g;
  }
}

// With the NICs on the GPUs' switches and the GPUs on C2C, a switch may not
// straddle two sockets.
TEST(PresetsTest, GpuSwitchesKeepToOneSocket) {
  ClusterSpec s = preset_spec("gb300-nvl72", 1);
  s.gpus_per_pcie_switch = 4;  // two sockets' GPUs on one switch
  try {
    build_cluster(s);
    FAIL();
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].location, "gpus_per_pcie_switch");
    EXPECT_EQ(e.diagnostics()[0].message,
              "with the NICs on the GPUs' switches and GPUs on NVLink-C2C a switch's GPUs share a socket: expected "
              "a divisor of the GPUs per socket (2), got 4");
  }
  s.gpus_per_pcie_switch = 2;  // both GPUs of a Grace on one switch: fine
  const Topology t = build_cluster(s);
  EXPECT_EQ(count(t).nodes[NodeKind::kPcieSwitch], 36);
}

// A superchip layout needs every socket to carry as many GPUs, and socket
// groups that divide the sockets.
TEST(PresetsTest, SuperchipSpecIsValidated) {
  ClusterSpec s = preset_spec("gb200-nvl72", 1);
  s.cpus_per_node = 5;
  try {
    build_cluster(s);
    FAIL();
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].location, "cpus_per_host");
    EXPECT_EQ(e.diagnostics()[1].message,
              "with GPUs on NVLink-C2C every socket carries as many GPUs: expected a divisor of gpus_per_node "
              "(72), got 5");
  }
  s.cpus_per_node = 72;  // one GPU per socket, trays of two sockets: fine
  EXPECT_EQ(build_cluster(s).num_gpus(), 72);
  ClusterSpec z = preset_spec("zionex", 1);
  z.cpus_per_host = 3;
  EXPECT_THROW(build_cluster(z), InputError);
  z.cpus_per_host = 2;  // ZionEX as two hosts of two sockets: UPI 4, not 12
  EXPECT_EQ(count(build_cluster(z)).links[LinkKind::kUpi], 4);
}

// Link parameters come from the cited defaults: 300 GB/s NVLink per GPU,
// 25 GB/s RoCE NIC, x16 Gen4 at 31.5 GB/s (to the rounding of 128b/130b), a
// 2 x16 tray uplink at 63 GB/s, and x16 Gen3 at 15.75 GB/s; names follow the
// node<k>/<device><i> scheme.
TEST(PresetsTest, ZionExLinkParameters) {
  const Topology t = build_cluster(preset_spec("zionex", 2));
  auto link_between = [&](std::string_view a, std::string_view b) -> const LinkInfo& {
    const NodeId src = *t.find(a);
    const NodeId dst = *t.find(b);
    for (LinkId l : t.out_links(src)) {
      if (t.link(l).dst == dst) return t.link(l);
    }
    ADD_FAILURE() << "no link " << a << " -> " << b;
    return t.link(LinkId{0});
  };
  EXPECT_EQ(link_between("node1/gpu5", "node1/nvswitch").bandwidth.count(), 300'000'000'000);
  EXPECT_EQ(link_between("node1/nic5", "rack0/rsw").bandwidth.count(), 25'000'000'000);
  EXPECT_EQ(link_between("node1/nic5", "rack0/rsw").kind, LinkKind::kRoce);
  EXPECT_NEAR(link_between("node1/gpu5", "node1/pcie_gpu2").bandwidth.to_gbyte_per_s(), 31.5, 0.01);
  EXPECT_NEAR(link_between("node1/pcie_gpu2", "node1/pcie_nic2").bandwidth.to_gbyte_per_s(), 63.0,
              0.02);
  EXPECT_NEAR(link_between("node1/cpu2", "node1/pcie_gpu2").bandwidth.to_gbyte_per_s(), 15.75,
              0.01);
  EXPECT_EQ(link_between("node1/cpu2", "node1/cpu3").kind, LinkKind::kUpi);
  EXPECT_EQ(link_between("node1/fe_nic2", "rack0/fe_rsw").bandwidth.count(), 12'500'000'000);
  EXPECT_EQ(t.node(*t.find("node1/gpu5")).rank, 13);
  EXPECT_NEAR(link_between("node1/nic5", "rack0/rsw").efficiency, 0.980, 0.001);
}

// Rail-aligned: NIC i of every server of a rack group hangs off rack<g>/rail<i>.
TEST(PresetsTest, RailAlignedPutsNicIOnRailI) {
  ClusterSpec s = preset_spec("zionex", 4);
  s.rail_aligned = true;
  const Topology t = build_cluster(s);
  for (int server = 0; server < 4; ++server) {
    for (int i = 0; i < 8; ++i) {
      const NodeId nic = *t.find("node" + std::to_string(server) + "/nic" + std::to_string(i));
      bool on_rail = false;
      for (LinkId l : t.out_links(nic)) {
        on_rail |= t.node(t.link(l).dst).name == "rack0/rail" + std::to_string(i);
      }
      EXPECT_TRUE(on_rail) << server << " " << i;
    }
  }
  EXPECT_TRUE(t.find("spine7").has_value());  // 8 rails need spines even in one rack
}

// Unknown presets list the valid names; a bad spec lists every bad field.
TEST(PresetsTest, RejectsBadInput) {
  try {
    preset_spec("zionx", 2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("valid: dgx-a100, gb200-nvl72, gb300-nvl72, hgx, hgx-b200, hgx-b300, zion, zionex"), std::string::npos)
        << e.what();
  }
  ClusterSpec s;
  s.nodes = 0;
  s.oversubscription = 0.5;
  s.roce_efficiency = 1.5;
  try {
    build_cluster(s);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 3u) << e.what();
  }
  const auto d = preset_descriptions();
  ASSERT_EQ(d.size(), 8u);
  EXPECT_EQ(d[0].first, "dgx-a100");
  EXPECT_EQ(d[1].first, "gb200-nvl72");
  EXPECT_EQ(d[2].first, "gb300-nvl72");
  EXPECT_EQ(d[3].first, "hgx");
  EXPECT_EQ(d[4].first, "hgx-b200");
  EXPECT_EQ(d[5].first, "hgx-b300");
  EXPECT_EQ(d[7].first, "zionex");
}

// Bisection of the backend = N * 8 * 25 GB/s / (2 * oversubscription) once
// there are spines (64 nodes: 6.4 TB/s at 1:1, 3.2 TB/s at 2:1); a single
// rack switch is non-blocking (2 nodes: 200 GB/s regardless of the ratio).
// The graph-based helper agrees with the closed form.
TEST(PresetsTest, BisectionMatchesClosedForm) {
  for (double over : {1.0, 2.0}) {
    for (int n : {2, 64}) {
      ClusterSpec s = preset_spec("zionex", n);
      s.oversubscription = over;
      const double injection = n * 8 * 25e9;
      const double expected = n > 16 ? injection / (2 * over) : injection / 2;
      EXPECT_NEAR(static_cast<double>(backend_bisection_bandwidth(s)->count()), expected, 1.0);
      EXPECT_NEAR(static_cast<double>(backend_bisection_bandwidth(build_cluster(s))->count()),
                  expected, 64.0);
    }
  }
  EXPECT_FALSE(backend_bisection_bandwidth(preset_spec("zion", 64)).has_value());
  EXPECT_FALSE(backend_bisection_bandwidth(build_cluster(preset_spec("zion", 64))).has_value());
}

}  // namespace
}  // namespace zx::topology
