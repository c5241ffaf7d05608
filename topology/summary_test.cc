// Tests of summarize() on a 2-server ZionEX and of per-GPU injection on Zion.

#include "topology/summary.h"

#include <gtest/gtest.h>

#include "topology/presets.h"
#include "topology/router.h"

namespace zx::topology {
namespace {

// 2-server ZionEX: 16 GPUs, 2 NVSwitches, 16 PCIe switches, 8 CPUs, 24 NICs,
// 2 Ethernet switches (one backend, one front-end rack switch, no spines).
// Each GPU injects 25 GB/s (its own 200 Gb/s NIC); bisection is half of the
// 16 NICs' 400 GB/s = 200 GB/s. The longest GPU route is a cross-server one:
// 8 links, 6 PCIe hops at 150 ns, NIC -> switch 50 + 500 ns, switch -> NIC
// 50 ns: 900 + 550 + 50 = 1,500 ns, first found from rank 0 to rank 8.
TEST(SummaryTest, TwoServerZionEx) {
  const Topology t = build_cluster(preset_spec("zionex", 2));
  const Router router(t);
  const TopologySummary s = summarize(t, router);
  EXPECT_EQ(s.gpus, 16);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kGpu), 16);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kNvSwitch), 2);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kPcieSwitch), 16);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kCpu), 8);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kNic), 24);
  EXPECT_EQ(s.nodes_by_kind.at(NodeKind::kEthernetSwitch), 2);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kNvlink), 32);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kPcieGen4), 80);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kPcieGen3), 32);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kUpi), 24);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kRoce), 32);
  EXPECT_EQ(s.links_by_kind.at(LinkKind::kTcpFrontEnd), 16);
  ASSERT_TRUE(s.gpu_injection_bandwidth.has_value());
  EXPECT_EQ(s.gpu_injection_bandwidth->count(), 25'000'000'000);
  ASSERT_TRUE(s.backend_bisection.has_value());
  EXPECT_EQ(s.backend_bisection->count(), 200'000'000'000);
  EXPECT_EQ(s.longest_route_hops, 8);
  EXPECT_EQ(s.longest_route_latency, sim::Duration::ns(1'500));
  EXPECT_EQ(s.longest_route_src_rank, 0);
  EXPECT_EQ(s.longest_route_dst_rank, 8);
}

// Zion: two GPUs share each socket's 100 Gb/s front-end NIC: 6.25 GB/s each;
// no backend, so no bisection figure.
TEST(SummaryTest, ZionInjectionIsSharedFrontEnd) {
  const Topology t = build_cluster(preset_spec("zion", 2));
  const Router router(t);
  const TopologySummary s = summarize(t, router);
  ASSERT_TRUE(s.gpu_injection_bandwidth.has_value());
  EXPECT_EQ(s.gpu_injection_bandwidth->count(), 6'250'000'000);
  EXPECT_FALSE(s.backend_bisection.has_value());
}

}  // namespace
}  // namespace zx::topology
