// Tests of Router on the presets: every GPU pair routes, routes are connected
// and loop-free, the endpoint rules (NVLink inside a server, the GPU's own NIC
// across servers on ZionEX, the CPU path on Zion) hold, and ECMP is
// deterministic per key and spreads keys evenly over the spines.

#include "topology/router.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "topology/presets.h"

namespace zx::topology {
namespace {

// Connected: first src = src, each src = previous dst, last dst = dst; and no
// link appears twice.
void expect_valid(const Topology& t, NodeId src, NodeId dst, const Route& r) {
  ASSERT_FALSE(r.empty()) << t.node(src).name << " -> " << t.node(dst).name;
  NodeId at = src;
  std::set<std::uint32_t> seen;
  for (LinkId l : r) {
    ASSERT_EQ(t.link(l).src, at);
    ASSERT_TRUE(seen.insert(index(l)).second) << "link repeated";
    at = t.link(l).dst;
  }
  ASSERT_EQ(at, dst);
}

std::vector<std::string> names_along(const Topology& t, const Route& r) {
  std::vector<std::string> out;
  for (LinkId l : r) out.push_back(t.node(t.link(l).dst).name);
  return out;
}

bool visits(const Topology& t, const Route& r, std::string_view name) {
  for (LinkId l : r) {
    if (t.node(t.link(l).dst).name == name || t.node(t.link(l).src).name == name) return true;
  }
  return false;
}

// Every ordered GPU pair of every preset (2 servers; ZionEX also at 64 servers
// over 4 racks, and rail-aligned at 20) has a valid route.
TEST(RouterTest, EveryGpuPairHasAValidRoute) {
  std::vector<ClusterSpec> specs = {preset_spec("zionex", 2), preset_spec("zion", 2),
                                    preset_spec("hgx", 2), preset_spec("zionex", 64),
                                    preset_spec("zion", 20)};
  ClusterSpec rail = preset_spec("zionex", 20);
  rail.rail_aligned = true;
  specs.push_back(rail);
  for (const ClusterSpec& s : specs) {
    SCOPED_TRACE(fmt::format("{} x {} rail={}", s.preset, s.nodes, s.rail_aligned));
    const Topology t = build_cluster(s);
    const Router router(t);
    Route r;
    for (int a = 0; a < t.num_gpus(); ++a) {
      for (int b = 0; b < t.num_gpus(); ++b) {
        if (a == b) continue;
        ASSERT_TRUE(
            router.route_into(t.gpu(a), t.gpu(b), static_cast<std::uint64_t>(a * 7 + b), r));
        expect_valid(t, t.gpu(a), t.gpu(b), r);
      }
    }
  }
}

// Same-server GPU pairs take exactly two NVLink hops through the NVSwitch, on
// every preset, for any flow key.
TEST(RouterTest, SameServerPairsUseNvlink) {
  for (std::string_view preset : {"zionex", "zion", "hgx"}) {
    const Topology t = build_cluster(preset_spec(preset, 2));
    const Router router(t);
    for (int a = 8; a < 16; ++a) {
      for (int b = 8; b < 16; ++b) {
        if (a == b) continue;
        const Route r = router.route(t.gpu(a), t.gpu(b), 12345);
        ASSERT_EQ(r.size(), 2u);
        EXPECT_EQ(t.link(r[0]).kind, LinkKind::kNvlink);
        EXPECT_EQ(t.link(r[1]).kind, LinkKind::kNvlink);
        EXPECT_EQ(t.node(t.link(r[0]).dst).name, "node1/nvswitch");
      }
    }
  }
}

// ZionEX across servers (same rack): GPU i -> pcie_gpu(i/2) -> pcie_nic(i/2)
// -> nic i -> rack switch -> peer nic j -> pcie_nic(j/2) -> pcie_gpu(j/2) ->
// GPU j: 8 links, own NICs at both ends, no CPU, UPI or TCP link.
TEST(RouterTest, ZionExCrossServerUsesTheGpusOwnNic) {
  const Topology t = build_cluster(preset_spec("zionex", 2));
  const Router router(t);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      const Route r = router.route(t.gpu(i), t.gpu(8 + j), static_cast<std::uint64_t>(i + j));
      const std::vector<std::string> want = {
          fmt::format("node0/pcie_gpu{}", i / 2), fmt::format("node0/pcie_nic{}", i / 2),
          fmt::format("node0/nic{}", i),          "rack0/rsw",
          fmt::format("node1/nic{}", j),          fmt::format("node1/pcie_nic{}", j / 2),
          fmt::format("node1/pcie_gpu{}", j / 2), fmt::format("node1/gpu{}", j)};
      EXPECT_EQ(names_along(t, r), want);
      for (LinkId l : r) {
        EXPECT_NE(t.link(l).kind, LinkKind::kTcpFrontEnd);
        EXPECT_NE(t.link(l).kind, LinkKind::kUpi);
      }
    }
  }
}

// Rail-aligned ZionEX: GPU i still leaves through NIC i (rail i) even when
// the peer GPU j sits on another rail, going rail i -> spine -> rail j.
TEST(RouterTest, RailAlignedKeepsOwnNic) {
  ClusterSpec s = preset_spec("zionex", 2);
  s.rail_aligned = true;
  const Topology t = build_cluster(s);
  const Router router(t);
  const Route r = router.route(t.gpu(0), t.gpu(8 + 1), 7);
  EXPECT_TRUE(visits(t, r, "node0/nic0"));
  EXPECT_TRUE(visits(t, r, "rack0/rail0"));
  EXPECT_TRUE(visits(t, r, "rack0/rail1"));
  EXPECT_TRUE(visits(t, r, "node1/nic1"));
  EXPECT_EQ(r.size(), 10u);
  EXPECT_EQ(router.route(t.gpu(0), t.gpu(8), 7).size(), 8u);  // same rail: no spine
}

// Zion across servers: GPU -> tray switch -> its socket -> front-end NIC ->
// front-end switch -> ... -> GPU, over TCP; no RoCE anywhere.
TEST(RouterTest, ZionCrossServerUsesTheCpuPath) {
  const Topology t = build_cluster(preset_spec("zion", 2));
  const Router router(t);
  const Route r = router.route(t.gpu(3), t.gpu(8 + 6), 1);
  const std::vector<std::string> want = {"node0/pcie_gpu1", "node0/cpu1",    "node0/fe_nic1",
                                         "rack0/fe_rsw",    "node1/fe_nic3", "node1/cpu3",
                                         "node1/pcie_gpu3", "node1/gpu6"};
  EXPECT_EQ(names_along(t, r), want);
}

// Other pairs use the plain shortest path: a CPU reaches a GPU of its own
// tray switch in two hops.
TEST(RouterTest, NonGpuPairsUseShortestPath) {
  const Topology t = build_cluster(preset_spec("zionex", 1));
  const Router router(t);
  const Route r = router.route(*t.find("node0/cpu1"), *t.find("node0/gpu3"), 0);
  ASSERT_EQ(r.size(), 2u);
  expect_valid(t, *t.find("node0/cpu1"), *t.find("node0/gpu3"), r);
  EXPECT_TRUE(router.route(t.gpu(0), t.gpu(0), 0).empty());
}

// ECMP: between racks, 10,000 flow keys use all 8 spines, each within +-20%
// of the mean (1,250); the same key always yields the same route.
TEST(RouterTest, EcmpSpreadsKeysOverAllSpinesDeterministically) {
  const Topology t = build_cluster(preset_spec("zionex", 64));
  const Router router(t);
  const NodeId src = t.gpu(3);
  const NodeId dst = t.gpu(8 * 40 + 5);  // server 40, rack 2
  std::map<std::string, int> per_spine;
  for (std::uint64_t key = 0; key < 10'000; ++key) {
    const Route r = router.route(src, dst, key);
    ASSERT_EQ(r.size(), 10u);
    for (LinkId l : r) {
      const NodeInfo& n = t.node(t.link(l).dst);
      if (n.tier == SwitchTier::kSpine) ++per_spine[n.name];
    }
    if (key % 1000 == 0) {
      EXPECT_EQ(r, router.route(src, dst, key));
    }
  }
  ASSERT_EQ(per_spine.size(), 8u);
  for (const auto& [name, count] : per_spine) {
    EXPECT_GE(count, 1000) << name;
    EXPECT_LE(count, 1500) << name;
  }
}

// A second router over the same topology picks identical routes: no hidden state.
TEST(RouterTest, RoutesDoNotDependOnQueryOrder) {
  const Topology t = build_cluster(preset_spec("zionex", 40));
  const Router a(t);
  const Router b(t);
  const Route warm = b.route(t.gpu(300), t.gpu(1), 99);  // fill b's tables in another order
  for (int k = 0; k < 50; ++k) {
    EXPECT_EQ(a.route(t.gpu(k), t.gpu(300 - k), static_cast<std::uint64_t>(k)),
              b.route(t.gpu(k), t.gpu(300 - k), static_cast<std::uint64_t>(k)));
  }
  EXPECT_EQ(warm, a.route(t.gpu(300), t.gpu(1), 99));
}

// Every GPU pair's route, for several keys, as a vector (order: dst, src, key).
std::vector<Route> all_routes(const Topology& t, const Router& router) {
  std::vector<Route> out;
  for (int d = 0; d < t.num_gpus(); ++d) {
    for (int s = 0; s < t.num_gpus(); ++s) {
      for (std::uint64_t key : {0ULL, 7ULL, 0x9E3779B97F4A7C15ULL}) {
        out.push_back(router.route(t.gpu(s), t.gpu(d), key * 131 + static_cast<std::uint64_t>(s)));
      }
    }
  }
  return out;
}

// A copy of `t` plus extra links (by node name), to build fabrics the presets
// do not have.
Topology with_links(const Topology& t,
                    const std::vector<std::pair<std::string, std::string>>& extra) {
  TopologyBuilder b("<test>");
  for (std::uint32_t i = 0; i < t.num_nodes(); ++i) b.add_node(t.node(NodeId{i}));
  for (std::uint32_t i = 0; i < t.num_links(); ++i) {
    const LinkInfo& l = t.link(LinkId{i});
    b.add_link(l.src, l.dst, LinkSpec{l.kind, l.bandwidth, l.latency, l.efficiency});
  }
  for (const auto& [a, z] : extra) {
    b.add_link(*t.find(a), *t.find(z),
               LinkSpec{LinkKind::kRoce, sim::BytesPerSecond(25'000'000'000), sim::Duration::ns(1),
                        1.0});
  }
  return b.build();
}

// Routing to a NIC through its switch's table picks exactly the routes that
// the NIC's own table picks, on every preset and on fabrics where some NICs
// have a second way in (from a spine, from another NIC) and must keep theirs.
// Fabrics to route on: `presets` with 3 servers, ZionEX with 40, ZionEX
// rail-aligned with 20, and ZionEX with 20 plus the `extra` links.
std::vector<std::pair<std::string, Topology>> fabrics(
    const std::vector<const char*>& presets, const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, Topology>> cases;
  for (const char* preset : presets) cases.emplace_back(preset, build_cluster(preset_spec(preset, 3)));
  cases.emplace_back("zionex/40", build_cluster(preset_spec("zionex", 40)));
  ClusterSpec rail = preset_spec("zionex", 20);
  rail.rail_aligned = true;
  cases.emplace_back("zionex/20 rail-aligned", build_cluster(rail));
  cases.emplace_back("zionex/20 + extra links", with_links(build_cluster(preset_spec("zionex", 20)), extra));
  return cases;
}

TEST(RouterTest, SharedSwitchTablesPickTheSameRoutes) {
  const auto cases = fabrics({"zionex", "zion", "hgx"}, {{"spine0", "node3/nic0"},
                                                         {"node5/nic2", "node17/nic2"},
                                                         {"node17/nic2", "node5/nic2"},
                                                         {"spine3", "node11/nic7"}});
  for (const auto& [name, t] : cases) {
    SCOPED_TRACE(name);
    const Router shared(t);
    const Router own(t, /*share_switch_tables=*/false);
    const std::vector<Route> a = all_routes(t, shared);
    const std::vector<Route> b = all_routes(t, own);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "route " << i;
  }
}

// A route between GPUs of different servers is the GPU's fixed way out, the
// keyed route between the two fabric switches, and the peer's fixed way in,
// for every pair and key, on every preset and on fabrics where a NIC has a
// second way in or out (whose GPUs then get no fixed path).
TEST(RouterTest, GpuRoutesSplitAtTheFabricSwitches) {
  const auto cases = fabrics({"zionex", "zion", "hgx", "dgx-a100", "gb200-nvl72"}, {{"spine0", "node3/nic0"},
                                                                                    {"node5/nic2", "node17/nic2"},
                                                                                    {"node17/nic2", "node5/nic2"},
                                                                                    {"node9/nic4", "spine1"}});
  for (const auto& [name, t] : cases) {
    SCOPED_TRACE(name);
    for (bool shared : {true, false}) {
      const Router router(t, shared);
      int split = 0;
      for (int s = 0; s < t.num_gpus(); ++s) {
        const auto up = router.fixed_uplink(t.gpu(s));
        for (int d = 0; d < t.num_gpus(); ++d) {
          if (t.node(t.gpu(s)).server == t.node(t.gpu(d)).server) continue;
          const auto down = router.fixed_downlink(t.gpu(d));
          if (!up || !down) continue;
          for (std::uint64_t key : {0ULL, 5ULL, 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(s * 977 + d)}) {
            Route parts = up->links;
            ASSERT_TRUE(router.switch_route_into(up->fabric_switch, down->fabric_switch, key, parts));
            parts.insert(parts.end(), down->links.begin(), down->links.end());
            ASSERT_EQ(parts, router.route(t.gpu(s), t.gpu(d), key)) << s << " -> " << d << " key " << key;
            ++split;
          }
        }
      }
      // ZionEX's GPUs all have fixed paths (with shared switch tables: the
      // way in needs the NIC's last hop); the extra links take theirs away.
      if (name == "zionex/40" && shared) {
        EXPECT_EQ(split, 3 * 320 * 312);
      }
      if (name.starts_with("zionex/20 + extra")) {
        EXPECT_FALSE(router.fixed_downlink(*t.find("node3/gpu0")));
        EXPECT_FALSE(router.fixed_uplink(*t.find("node9/gpu4")));
        EXPECT_FALSE(router.fixed_uplink(*t.find("node5/gpu2")));
        EXPECT_EQ(router.fixed_uplink(*t.find("node4/gpu4")).has_value(), true);
      }
      if (!shared) {
        EXPECT_EQ(split, 0);
      }
    }
  }
}

}  // namespace
}  // namespace zx::topology
