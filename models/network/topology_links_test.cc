// Tests of the topology bridge on a 2-node ZionEX: one cross-server flow runs
// at the NIC's effective rate after the route's latency; two flows through
// different NICs do not slow each other down; an incast of eight GPUs into one
// shares the destination NIC's link equally.

#include "models/network/topology_links.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/simulator.h"
#include "topology/degrade.h"
#include "topology/presets.h"

namespace zx::models {
namespace {

using sim::Bytes;
using sim::Duration;
using sim::TimePoint;

struct Cluster {
  topology::Router router{topology::build_cluster(topology::preset_spec("zionex", 2))};
  const topology::Topology &topo() const { return router.topology(); }

  topology::Route route(int src, int dst) const {
    return router.route(topo().gpu(src), topo().gpu(dst), gpu_pair_flow_key(src, dst));
  }
  Duration latency(const topology::Route &r) const {
    Duration d = Duration::zero();
    for (topology::LinkId l : r) d += topo().link(l).latency;
    return d;
  }
  double min_capacity(const topology::Route &r) const {
    double c = 1e300;
    for (topology::LinkId l : r) {
      c = std::min(c, static_cast<double>(topo().link(l).effective_bandwidth().count()));
    }
    return c;
  }
};

// RoCE NIC: 200 Gb/s = 25 GB/s per direction, times 4096 / 4178 payload per
// wire byte (RoCEv2, 4 KiB MTU) = about 24.51 GB/s.
double nic_effective_rate() {
  return static_cast<double>(
      sim::BytesPerSecond::from_gbit_per_s(200).scaled(4096.0 / 4178.0).count());
}

TEST(TopologyLinksTest, LinkParamsMirrorTheTopology) {
  const Cluster c;
  const std::vector<LinkParams> params = link_params(c.topo());
  ASSERT_EQ(params.size(), c.topo().num_links());
  for (std::uint32_t l = 0; l < params.size(); ++l) {
    const topology::LinkInfo &info = c.topo().link(topology::LinkId{l});
    EXPECT_EQ(params[l].capacity_bytes_per_s,
              static_cast<double>(info.effective_bandwidth().count()));
    EXPECT_EQ(params[l].latency, info.latency);
  }
  std::vector<std::uint32_t> indices;
  const topology::Route r = c.route(0, 9);
  to_link_indices(r, indices);
  ASSERT_EQ(indices.size(), r.size());
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_EQ(indices[i], topology::index(r[i]));
}

// GPU 0 (server 0) to GPU 8 (server 1), 1 MiB, alone: first byte after the
// sum of the route's latencies, then 1 MiB at the slowest link, which is the
// NIC's 25 GB/s x 0.980. The model rounds the transfer up to the picosecond.
TEST(TopologyLinksTest, CrossServerFlowAloneRunsAtTheNicRate) {
  const Cluster c;
  sim::Simulator sim;
  FlowNetwork net(sim, link_params(c.topo()));
  RouteScratch scratch;
  bool done = false;
  const Bytes size = Bytes::mib(1);
  const FlowId id = start_gpu_flow(
      net, c.router, 0, 8, size, gpu_pair_flow_key(0, 8), [&] { done = true; }, scratch);
  sim.run();
  ASSERT_TRUE(done);
  const topology::Route r = c.route(0, 8);
  EXPECT_EQ(c.min_capacity(r), nic_effective_rate());
  const TimePoint expected = TimePoint::zero() + c.latency(r) +
                             transfer_time(static_cast<double>(size.count()), nic_effective_rate());
  EXPECT_EQ(net.flow(id).finish, expected);
  // The integer serialisation delay agrees to the picosecond's rounding.
  const Duration exact = sim::serialization_delay(
      size, sim::BytesPerSecond(static_cast<std::int64_t>(nic_effective_rate())));
  EXPECT_LE(std::abs((expected - TimePoint::zero() - c.latency(r) - exact).count_ps()), 1);
  // A GPU pair inside one server uses NVLink only and is much faster.
  const topology::Route local = c.route(0, 1);
  for (topology::LinkId l : local) EXPECT_EQ(c.topo().link(l).kind, topology::LinkKind::kNvlink);
}

// A NIC degraded to 40% of its rate (--degrade device:node0/nic0=0.4):
// GPU 0's lone flow to GPU 8 runs at 0.4 x the NIC rate after the same
// latency; GPU 1's flow, through a healthy NIC, is unchanged.
TEST(TopologyLinksTest, ADegradedNicCarriesItsShareOfTheRate) {
  const Cluster c;
  const topology::Router slow(topology::degrade_links(
      c.topo(), {topology::parse_degradation("device:node0/nic0=0.4")}));
  const Bytes size = Bytes::mib(2);
  const auto finish = [&](const topology::Router &router, int src, int dst) {
    sim::Simulator sim;
    FlowNetwork net(sim, link_params(router.topology()));
    RouteScratch scratch;
    const FlowId id = start_gpu_flow(net, router, src, dst, size, gpu_pair_flow_key(src, dst), {}, scratch);
    sim.run();
    return net.flow(id).finish;
  };
  const double rate = static_cast<double>(
      sim::BytesPerSecond::from_gbit_per_s(200).scaled(0.4).scaled(4096.0 / 4178.0).count());
  EXPECT_EQ(finish(slow, 0, 8),
            TimePoint::zero() + c.latency(c.route(0, 8)) + transfer_time(static_cast<double>(size.count()), rate));
  EXPECT_GT(finish(slow, 0, 8), finish(c.router, 0, 8));
  EXPECT_EQ(finish(slow, 1, 9), finish(c.router, 1, 9));
  // The reverse direction enters through the same NIC: just as slow.
  EXPECT_EQ(finish(slow, 8, 0), finish(slow, 0, 8));
}

// GPUs 0 and 1 of server 0 send to GPUs 8 and 9 of server 1 through NICs 0
// and 1: their routes share only links with spare capacity (the PCIe tray
// uplink, about 57 GB/s for two 24.5 GB/s flows), so each finishes exactly as
// if it were alone.
TEST(TopologyLinksTest, FlowsThroughDifferentNicsDoNotShareABottleneck) {
  const Cluster c;
  const Bytes size = Bytes::mib(4);
  const auto alone = [&](int src, int dst) {
    sim::Simulator sim;
    FlowNetwork net(sim, link_params(c.topo()));
    RouteScratch scratch;
    const FlowId id =
        start_gpu_flow(net, c.router, src, dst, size, gpu_pair_flow_key(src, dst), {}, scratch);
    sim.run();
    return net.flow(id).finish;
  };
  sim::Simulator sim;
  FlowNetwork net(sim, link_params(c.topo()));
  RouteScratch scratch;
  const FlowId a = start_gpu_flow(net, c.router, 0, 8, size, gpu_pair_flow_key(0, 8), {}, scratch);
  const FlowId b = start_gpu_flow(net, c.router, 1, 9, size, gpu_pair_flow_key(1, 9), {}, scratch);
  sim.run();
  EXPECT_EQ(net.flow(a).finish, alone(0, 8));
  EXPECT_EQ(net.flow(b).finish, alone(1, 9));
  // No RoCE link in common: they leave and enter through different NICs.
  for (std::uint32_t la : net.route(a)) {
    for (std::uint32_t lb : net.route(b)) {
      if (la == lb) {
        EXPECT_NE(c.topo().link(topology::LinkId{la}).kind, topology::LinkKind::kRoce);
      }
    }
  }
}

// Incast: the eight GPUs of server 1 each send 1 MiB to GPU 0. All routes
// enter through GPU 0's NIC, so that link (24.5 GB/s) is shared eight ways:
// each flow runs at C / 8 and all finish together, at latency + 8 x 1 MiB / C.
TEST(TopologyLinksTest, IncastSharesTheDestinationNicLink) {
  const Cluster c;
  sim::Simulator sim;
  FlowNetwork net(sim, link_params(c.topo()));
  RouteScratch scratch;
  const Bytes size = Bytes::mib(1);
  std::vector<FlowId> ids;
  for (int src = 8; src < 16; ++src) {
    ids.push_back(
        start_gpu_flow(net, c.router, src, 0, size, gpu_pair_flow_key(src, 0), {}, scratch));
  }
  // The links every route crosses include a RoCE link into GPU 0's NIC.
  std::vector<std::uint32_t> common(net.route(ids[0]).begin(), net.route(ids[0]).end());
  for (FlowId id : ids) {
    std::erase_if(common, [&](std::uint32_t l) {
      const auto r = net.route(id);
      return std::find(r.begin(), r.end(), l) == r.end();
    });
  }
  const auto nic_in = std::find_if(common.begin(), common.end(), [&](std::uint32_t l) {
    const topology::LinkInfo &info = c.topo().link(topology::LinkId{l});
    return info.kind == topology::LinkKind::kRoce &&
           c.topo().node(info.dst).kind == topology::NodeKind::kNic;
  });
  ASSERT_NE(nic_in, common.end());

  const Duration latency = c.latency(c.route(8, 0));
  sim.run(TimePoint::zero() + latency + Duration::us(1));
  for (FlowId id : ids) EXPECT_EQ(net.rate(id), nic_effective_rate() / 8);
  sim.run();
  const TimePoint expected =
      TimePoint::zero() + latency +
      transfer_time(static_cast<double>(size.count()), nic_effective_rate() / 8);
  for (FlowId id : ids) EXPECT_EQ(net.flow(id).finish, expected);
  EXPECT_EQ(net.link(*nic_in).bytes_carried, Bytes::mib(8));
}

TEST(TopologyLinksTest, RejectsBadRanks) {
  const Cluster c;
  sim::Simulator sim;
  FlowNetwork net(sim, link_params(c.topo()));
  RouteScratch scratch;
  EXPECT_THROW(start_gpu_flow(net, c.router, 0, 16, Bytes(1), 0, {}, scratch),
               std::invalid_argument);
  EXPECT_THROW(start_gpu_flow(net, c.router, -1, 0, Bytes(1), 0, {}, scratch),
               std::invalid_argument);
}

}  // namespace
}  // namespace zx::models
