// Tests of Topology and TopologyBuilder: dense ids, adjacency in insertion
// order, lookups, and validation that reports every problem at once.

#include "topology/topology.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "base/error.h"

namespace zx::topology {
namespace {

LinkSpec pcie() {
  return LinkSpec{.kind = LinkKind::kPcieGen4,
                  .bandwidth = sim::BytesPerSecond::from_gbyte_per_s(31.5),
                  .latency = sim::Duration::ns(100),
                  .efficiency = 0.9};
}

NodeInfo gpu(std::string name, int rank) {
  return NodeInfo{.kind = NodeKind::kGpu,
                  .name = std::move(name),
                  .server = 0,
                  .local_index = rank,
                  .rank = rank};
}

// Two GPUs on one PCIe switch: 3 nodes, 4 directed links, ids in insertion
// order, out/in links listed in insertion order, lookups by rank and name.
TEST(TopologyTest, SmallGraphHasDenseIdsAndAdjacency) {
  TopologyBuilder b;
  const NodeId g0 = b.add_node(gpu("node0/gpu0", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  const NodeId sw =
      b.add_node({.kind = NodeKind::kPcieSwitch, .name = "node0/pcie_gpu0", .server = 0});
  const auto [a, a_back] = b.add_cable(g0, sw, pcie());
  const auto [c, c_back] = b.add_cable(g1, sw, pcie());
  const Topology t = b.build();

  EXPECT_EQ(index(g0), 0u);
  EXPECT_EQ(index(sw), 2u);
  EXPECT_EQ(t.num_nodes(), 3u);
  EXPECT_EQ(t.num_links(), 4u);
  EXPECT_EQ(t.num_gpus(), 2);
  EXPECT_EQ(t.gpu(1), g1);
  EXPECT_EQ(t.find("node0/pcie_gpu0"), sw);
  EXPECT_EQ(t.find("nope"), std::nullopt);
  ASSERT_EQ(t.out_links(sw).size(), 2u);
  EXPECT_EQ(t.out_links(sw)[0], a_back);
  EXPECT_EQ(t.out_links(sw)[1], c_back);
  ASSERT_EQ(t.in_links(sw).size(), 2u);
  EXPECT_EQ(t.in_links(sw)[0], a);
  EXPECT_EQ(t.link(c).src, g1);
  EXPECT_EQ(t.link(c).dst, sw);
  EXPECT_EQ(t.link(c).kind, LinkKind::kPcieGen4);
  EXPECT_EQ(t.node(g1).name, "node0/gpu1");
}

// A builder fed six different mistakes throws one InputError naming all of
// them: duplicate name, dangling endpoint, self loop, efficiency 0, negative
// latency, and a rank gap (ranks 0 and 2).
TEST(TopologyTest, BuilderReportsEveryProblem) {
  TopologyBuilder b("test");
  const NodeId g0 = b.add_node(gpu("gpu", 0));
  const NodeId g1 = b.add_node(gpu("gpu", 2));
  b.add_cable(g0, g1, pcie());
  b.add_link(g0, NodeId{42}, pcie());
  b.add_link(g1, g1, pcie());
  LinkSpec bad = pcie();
  bad.efficiency = 0.0;
  b.add_link(g0, g1, bad);
  bad = pcie();
  bad.latency = sim::Duration::ns(-1);
  b.add_link(g1, g0, bad);
  try {
    b.build();
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("duplicate name"), std::string::npos) << text;
    EXPECT_NE(text.find("endpoint node 42 does not exist"), std::string::npos) << text;
    EXPECT_NE(text.find("self loop"), std::string::npos) << text;
    EXPECT_NE(text.find("efficiency in [0.001, 1], got 0"), std::string::npos) << text;
    EXPECT_NE(text.find("latency >= 0"), std::string::npos) << text;
    EXPECT_NE(text.find("rank 1 is used by 0 GPUs"), std::string::npos) << text;
    EXPECT_EQ(e.diagnostics().size(), 6u) << text;
    EXPECT_EQ(e.diagnostics()[0].source, "test");
  }
}

// GPUs that cannot reach each other are an error naming the stranded GPU.
TEST(TopologyTest, BuilderRejectsDisconnectedGpus) {
  TopologyBuilder b;
  const NodeId g0 = b.add_node(gpu("node0/gpu0", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  b.add_link(g0, g1, pcie());  // one direction only: gpu1 cannot reach gpu0
  try {
    b.build();
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_NE(e.diagnostics()[0].location.find("node0/gpu1"), std::string::npos);
  }
}

// On a server with CPU sockets every GPU reaches one, each way, through
// switches of its server: a GPU whose switch only leads to a NIC (DGX-like
// trays wired to too few sockets) is an error; a path that leaves the server
// or passes through another GPU does not count.
TEST(TopologyTest, BuilderRejectsGpusCutOffFromTheirHost) {
  TopologyBuilder b("test");
  const NodeId cpu = b.add_node({.kind = NodeKind::kCpu, .name = "node0/cpu0", .server = 0});
  const NodeId tray0 = b.add_node({.kind = NodeKind::kPcieSwitch, .name = "node0/pcie_gpu0", .server = 0});
  const NodeId tray1 = b.add_node({.kind = NodeKind::kPcieSwitch, .name = "node0/pcie_gpu1", .server = 0});
  const NodeId g0 = b.add_node(gpu("node0/gpu0", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  const NodeId g2 = b.add_node(gpu("node0/gpu2", 2));
  const NodeId nic = b.add_node({.kind = NodeKind::kNic, .name = "node0/nic0", .server = 0});
  const NodeId fabric = b.add_node({.kind = NodeKind::kEthernetSwitch, .name = "rsw", .tier = SwitchTier::kRack, .server = -1});
  b.add_cable(cpu, tray0, pcie());
  b.add_cable(g0, tray0, pcie());
  b.add_cable(g1, tray1, pcie());
  b.add_link(cpu, g2, pcie());  // gpu2: in from the socket ...
  b.add_cable(tray0, nic, pcie());
  b.add_cable(nic, fabric, pcie());
  b.add_cable(tray1, fabric, pcie());  // tray1 reaches the socket only through the fabric
  b.add_cable(g0, g1, pcie());         // ... or through gpu0
  b.add_link(g2, tray1, pcie());       // gpu2's way up leaves the server
  try {
    b.build();
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string text = e.what();
    ASSERT_EQ(e.diagnostics().size(), 2u) << text;
    EXPECT_NE(e.diagnostics()[0].location.find("node0/gpu1"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU rank 1 has no path from a CPU socket of its server (server 0)"), std::string::npos)
        << text;
    EXPECT_NE(e.diagnostics()[1].location.find("node0/gpu2"), std::string::npos) << text;
    EXPECT_NE(text.find("GPU rank 2 has no path to a CPU socket"), std::string::npos) << text;
  }
}

// A server without sockets needs no host path (its copies run at the GPU
// profile's rate): two GPUs and a switch build.
TEST(TopologyTest, ServerWithoutSocketsNeedsNoHostPath) {
  TopologyBuilder b;
  const NodeId g0 = b.add_node(gpu("node0/gpu0", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  const NodeId sw = b.add_node({.kind = NodeKind::kPcieSwitch, .name = "node0/sw", .server = 0});
  b.add_cable(g0, sw, pcie());
  b.add_cable(g1, sw, pcie());
  EXPECT_EQ(b.build().num_gpus(), 2);
}

// DOT output: one vertex per node, a full-duplex cable drawn once with
// dir=both, a one-way link drawn as a plain arrow.
TEST(TopologyTest, GraphvizDrawsCablesOnce) {
  TopologyBuilder b;
  const NodeId g0 = b.add_node(gpu("node0/gpu0", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  b.add_cable(g0, g1, pcie());
  b.add_link(g0, g1, pcie());  // a second, one-way link
  const Topology t = b.build();
  std::ostringstream out;
  write_graphviz(out, t);
  const std::string dot = out.str();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = dot.find(needle); at != std::string::npos; at = dot.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << dot;
  EXPECT_EQ(count("label=\"node0/gpu"), 2u) << dot;
  EXPECT_EQ(count("->"), 2u) << dot;
  EXPECT_EQ(count("dir=both"), 1u) << dot;
}

// Names from a cluster file may hold what ends a DOT string: escaped.
TEST(TopologyTest, GraphvizEscapesQuotesInNames) {
  TopologyBuilder b;
  const NodeId g0 = b.add_node(gpu("gpu \"a\" \\ b", 0));
  const NodeId g1 = b.add_node(gpu("node0/gpu1", 1));
  b.add_cable(g0, g1, pcie());
  std::ostringstream out;
  write_graphviz(out, b.build());
  EXPECT_NE(out.str().find("label=\"gpu \\\"a\\\" \\\\ b\""), std::string::npos) << out.str();
}

}  // namespace
}  // namespace zx::topology
