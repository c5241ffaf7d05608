// Tests of the topology vocabulary: enum names round-trip, effective bandwidth.

#include "topology/types.h"

#include <gtest/gtest.h>

namespace zx::topology {
namespace {

// Every enum value prints a name that parses back to itself; unknown names fail.
TEST(TypesTest, NamesRoundTrip) {
  for (NodeKind k : {NodeKind::kGpu, NodeKind::kNvSwitch, NodeKind::kPcieSwitch, NodeKind::kCpu,
                     NodeKind::kNic, NodeKind::kEthernetSwitch, NodeKind::kNvme}) {
    EXPECT_EQ(parse_node_kind(to_string(k)), k);
  }
  for (SwitchTier t :
       {SwitchTier::kNone, SwitchTier::kRack, SwitchTier::kSpine, SwitchTier::kFrontEnd}) {
    EXPECT_EQ(parse_switch_tier(to_string(t)), t);
  }
  for (LinkKind k :
       {LinkKind::kNvlink, LinkKind::kPcieGen3, LinkKind::kPcieGen4, LinkKind::kPcieGen5,
        LinkKind::kPcieGen6, LinkKind::kUpi, LinkKind::kRoce, LinkKind::kTcpFrontEnd, LinkKind::kNvlinkC2c}) {
    EXPECT_EQ(parse_link_kind(to_string(k)), k);
  }
  EXPECT_EQ(parse_link_kind("nvlnk"), std::nullopt);
  EXPECT_EQ(to_string(LinkKind::kRoce), "roce");
}

// Effective bandwidth is the wire rate times the protocol efficiency: 25 GB/s * 0.5.
TEST(TypesTest, EffectiveBandwidthScalesByEfficiency) {
  LinkInfo l;
  l.bandwidth = sim::BytesPerSecond::from_gbit_per_s(200);
  l.efficiency = 0.5;
  EXPECT_EQ(l.effective_bandwidth().count(), 12'500'000'000);
}

}  // namespace
}  // namespace zx::topology
