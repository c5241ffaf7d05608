// Tests of the NCCL point-to-point all-to-all (nccl_p2p.h):
//   * NCCL's peer order, checked against sequences computed by hand from
//     init.cc (2 and 4 nodes of 8, rank 0 and rank 9; 2.20's holes on
//     nodes of 8 and 6);
//   * the derived parameters (channels, pieces, steps) for ZionEX's group
//     shapes, as NCCL's formulas give them;
//   * every plan proven by the symbolic checker, bytes conserved, for even
//     and uneven matrices, both versions;
//   * no rank has more work items in flight on a channel than one, nor
//     more than 8 sends in one work item (NCCL's limits);
//   * PXN: every relay is the sender's server-mate on the receiver's rail;
//     none with NCCL_PXN_DISABLE or inside a server;
//   * bad options: unknown names and values out of range are errors.

#include "models/collectives/nccl_p2p.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

CollectiveRequest request(int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = CollectiveKind::kAllToAll, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

// Servers of 8 GPUs, each on an NVLink switch with its rail NIC (ZionEX).
TopologyView zionex_view(int n, int per_server = 8) {
  std::vector<MemberLocation> members;
  for (int i = 0; i < n; ++i) {
    members.push_back({.server = i / per_server, .local_index = i % per_server, .rail_nic = true,
                       .nvlink_switch = true});
  }
  return TopologyView(std::move(members));
}

std::vector<int> range(int from, int to) {
  std::vector<int> v(static_cast<std::size_t>(to - from));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::vector<int> concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(NcclP2pTest, PeerOrderIsNcclsOnTwoAndFourNodes) {
  for (NcclP2pVersion v : {NcclP2pVersion::kV2_13, NcclP2pVersion::kV2_20}) {
    const NcclP2pOptions o{.version = v};
    const NcclP2pLayout two = nccl_p2p_layout(o, zionex_view(16));
    EXPECT_EQ(nccl_p2p_order(o, two, 0, false), range(0, 16));
    EXPECT_EQ(nccl_p2p_order(o, two, 0, true),
              (std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9}));
    const NcclP2pLayout four = nccl_p2p_layout(o, zionex_view(32));
    // Node deltas 0, 2, 1, 3 (d, -d, n/2 - d, -(n/2 - d) for d = 0, repeats left out).
    EXPECT_EQ(nccl_p2p_order(o, four, 0, false), concat({range(0, 8), range(16, 24), range(8, 16), range(24, 32)}));
    EXPECT_EQ(nccl_p2p_order(o, four, 9, false),
              concat({range(9, 16), {8}, range(25, 32), {24}, range(17, 24), {16}, range(1, 8), {0}}));
  }
  // Sixteen nodes: the node deltas of init.cc's loop.
  const NcclP2pOptions o;
  const NcclP2pLayout sixteen = nccl_p2p_layout(o, zionex_view(128));
  const std::vector<int> order = nccl_p2p_order(o, sixteen, 0, false);
  std::vector<int> deltas;
  for (std::size_t i = 0; i < order.size(); i += 8) deltas.push_back(order[i] / 8);
  EXPECT_EQ(deltas, (std::vector<int>{0, 8, 1, 15, 7, 9, 2, 14, 6, 10, 3, 13, 5, 11, 4, 12}));
}

TEST(NcclP2pTest, UnevenNodesLeaveHolesIn220Only) {
  std::vector<MemberLocation> members;
  for (int i = 0; i < 14; ++i) members.push_back({.server = i < 8 ? 0 : 1, .local_index = i < 8 ? i : i - 8});
  const TopologyView view(members);
  const NcclP2pOptions old{.version = NcclP2pVersion::kV2_13};
  EXPECT_EQ(nccl_p2p_order(old, nccl_p2p_layout(old, view), 0, false), range(0, 14));
  const NcclP2pOptions now;
  const NcclP2pLayout l = nccl_p2p_layout(now, view);
  EXPECT_EQ(nccl_p2p_order(now, l, 0, false), concat({range(0, 14), {-1, -1}}));
  EXPECT_EQ(nccl_p2p_order(now, l, 0, true), concat({{0, 7, 6, 5, 4, 3, 2, 1, 8, -1, -1}, {13, 12, 11, 10, 9}}));
}

TEST(NcclP2pTest, ChannelsAndPiecesFollowNcclsFormulas) {
  const NcclP2pOptions v220;
  const NcclP2pOptions v213{.version = NcclP2pVersion::kV2_13};
  // 16 ZionEX nodes, 16 collective channels (NCCL's search on 8 NICs of 24 GB/s, doubled).
  TopologyView view = zionex_view(128);
  view.set_nccl_channels(16);
  for (const NcclP2pOptions& o : {v220, v213}) {
    const NcclP2pLayout l = nccl_p2p_layout(o, view);
    EXPECT_EQ(l.p2p_channels, 16);
    // 2.13: NCCL_NCHANNELS_PER_NET_PEER 2; 2.20 auto: 2 halved while 2 x 128 > 4 x 16.
    EXPECT_EQ(l.channels_per_peer, o.version == NcclP2pVersion::kV2_13 ? 2 : 1);
    EXPECT_EQ(l.pieces_min, 1);
    EXPECT_EQ(l.pieces_max, 1);  // 2.13: halved while 2 x 128 > 4 x 16
    EXPECT_EQ(l.step_bytes, 128 * 1024);
    EXPECT_EQ(l.min_piece_bytes, o.version == NcclP2pVersion::kV2_13 ? 16 * 1024 : 64 * 1024);
    // One piece, however large.
    EXPECT_EQ(nccl_p2p_piece_bytes(l, 3 << 20), 3 << 20);
    // Node delta d gets channel mirror(d) of 16: all 16 distinct.
    std::set<int> channels;
    for (int d = 0; d < 16; ++d) channels.insert(nccl_p2p_channel(l, 0, 8 * d, 0));
    EXPECT_EQ(channels.size(), 16u);
    EXPECT_EQ(nccl_p2p_channel(l, 0, 8, 0), 8);   // mirror(1) in 16
    EXPECT_EQ(nccl_p2p_channel(l, 0, 16, 0), 4);  // mirror(2)
  }
  // Two nodes: 2 channels per peer, pieces of at most 128 KiB over 2 channels.
  TopologyView two = zionex_view(16);
  two.set_nccl_channels(16);
  const NcclP2pLayout l2 = nccl_p2p_layout(v220, two);
  EXPECT_EQ(l2.channels_per_peer, 2);
  EXPECT_EQ(l2.pieces_max, 2);
  EXPECT_EQ(l2.pieces_min, 1);
  EXPECT_EQ(nccl_p2p_piece_bytes(l2, 1 << 20), 512 * 1024);  // 2 pieces: the most channels
  EXPECT_EQ(nccl_p2p_piece_bytes(l2, 100 * 1024), 128 * 1024);  // one, rounded up to 64 KiB
  // One node: 24 channels rounded to 32, and NVLink's 512 KiB step.
  TopologyView one = zionex_view(8);
  one.set_nccl_channels(24);
  const NcclP2pLayout l1 = nccl_p2p_layout(v220, one);
  EXPECT_EQ(l1.p2p_channels, 32);
  EXPECT_EQ(l1.channels_per_peer, 32);
  EXPECT_EQ(l1.pieces_min, 4);
  EXPECT_EQ(l1.step_bytes, 512 * 1024);
  EXPECT_EQ(nccl_p2p_piece_bytes(l1, 1 << 20), 256 * 1024);
}

TEST(NcclP2pTest, PlansAreRightAndConserveBytes) {
  for (NcclP2pVersion v : {NcclP2pVersion::kV2_13, NcclP2pVersion::kV2_20}) {
    const NcclP2pAlgorithm algorithm(NcclP2pOptions{.version = v});
    for (int n : {2, 3, 8, 12, 16, 64, 128}) {
      for (std::int64_t per_peer : {std::int64_t{4}, std::int64_t{300 * 1024}}) {
        const CollectiveRequest req = request(n, per_peer * n);
        const CollectivePlan plan = algorithm.lower(req, zionex_view(n));
        const auto report = check_plan(plan, req);
        ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
        for (int r = 0; r < n; ++r) {
          EXPECT_EQ(report.bytes_sent[r].count(), per_peer * (n - 1)) << n;
          EXPECT_EQ(report.bytes_received[r].count(), per_peer * (n - 1)) << n;
        }
      }
    }
    // All-to-all-v, uneven with zeros, on 3 servers of 8.
    const int n = 24;
    CollectiveRequest req = request(n, 0);
    req.all_to_all_v_bytes.assign(n, std::vector<std::int64_t>(n));
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        req.all_to_all_v_bytes[s][d] = (s * 7 + d * 13) % 5 == 0 ? 0 : 4096 * (1 + (s * 3 + d) % 97);
      }
    }
    const auto report = check_plan(algorithm.lower(req, zionex_view(n)), req);
    ASSERT_TRUE(report.ok()) << report.summary();
    for (int s = 0; s < n; ++s) {
      std::int64_t row = 0;
      for (int d = 0; d < n; ++d) row += d == s ? 0 : req.all_to_all_v_bytes[s][d];
      EXPECT_EQ(report.bytes_sent[s].count(), row);
    }
  }
}

// The steps of a plan are pieces (one transfer) and work items' ends (no
// transfer). Replays the plan as an untimed schedule in which every ready
// step runs at once, round by round: a piece is in flight from its round
// to the next; counts the most pieces one rank sends in one round.
std::size_t most_sends_in_flight(const CollectivePlan& plan, int n) {
  std::vector<int> round(plan.steps.size(), 0);
  std::map<std::pair<int, int>, std::size_t> per_round;  // (rank, round) -> pieces
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    for (std::uint32_t a : plan.steps[s].after) round[s] = std::max(round[s], round[a] + 1);
    for (const Transfer& t : plan.steps[s].transfers) ++per_round[{t.src, round[s]}];
  }
  std::size_t most = 0;
  for (const auto& [key, count] : per_round) most = std::max(most, count);
  (void)n;
  return most;
}

TEST(NcclP2pTest, PeersInFlightAreBoundedByChannelsTimesEight) {
  const NcclP2pAlgorithm algorithm;
  // 16 nodes: 16 channels hold every node group at once (127 peers).
  TopologyView view16 = zionex_view(128);
  view16.set_nccl_channels(16);
  EXPECT_EQ(most_sends_in_flight(algorithm.lower(request(128, 128 * 1024), view16), 128), 127u);
  // 64 nodes on 16 channels: at most 16 items of 8 sends each in flight.
  TopologyView view64 = zionex_view(512);
  view64.set_nccl_channels(16);
  const CollectivePlan plan = algorithm.lower(request(512, 512 * 1024), view64);
  EXPECT_EQ(most_sends_in_flight(plan, 512), 16u * 8u);
  // Each work item's end follows at most 8 sends and 8 receives.
  for (const Step& step : plan.steps) {
    if (step.transfers.empty()) {
      EXPECT_LE(step.after.size(), 16u);
    }
  }
}

TEST(NcclP2pTest, PxnRelaysStayOnTheReceiversRail) {
  const NcclP2pAlgorithm algorithm;
  const int n = 32;
  const TopologyView view = zionex_view(n);
  const CollectivePlan plan = algorithm.lower(request(n, 1 << 20), view);
  std::size_t relayed = 0;
  for (const Step& step : plan.steps) {
    for (const Transfer& t : step.transfers) {
      const MemberLocation& src = view.member(t.src);
      const MemberLocation& dst = view.member(t.dst);
      if (src.server == dst.server || src.local_index == dst.local_index) {
        EXPECT_FALSE(t.relay.has_value());
        continue;
      }
      ASSERT_TRUE(t.relay.has_value());
      const MemberLocation& relay = view.member(*t.relay);
      EXPECT_EQ(relay.server, src.server);
      EXPECT_EQ(relay.local_index, dst.local_index);
      ++relayed;
    }
  }
  // Of 31 peers, 24 on other servers, 3 of them on the sender's own rail.
  EXPECT_EQ(relayed, static_cast<std::size_t>(n * 21));
  const NcclP2pAlgorithm off(NcclP2pOptions{.pxn_disable = true});
  for (const Step& step : off.lower(request(n, 1 << 20), view).steps) {
    for (const Transfer& t : step.transfers) EXPECT_FALSE(t.relay.has_value());
  }
  // No rail NIC (Zion: the NICs behind the CPUs): no relay.
  std::vector<MemberLocation> members;
  for (int i = 0; i < 16; ++i) members.push_back({.server = i / 8, .local_index = i % 8, .nvlink_switch = true});
  for (const Step& step : algorithm.lower(request(16, 1 << 20), TopologyView(members)).steps) {
    for (const Transfer& t : step.transfers) EXPECT_FALSE(t.relay.has_value());
  }
}

TEST(NcclP2pTest, OptionsAreNcclsVariablesAndValidated) {
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  EXPECT_NO_THROW(registry.create("nccl_p2p", R"({"NCCL_PXN_DISABLE": 1, "NCCL_MAX_P2P_NCHANNELS": 8})"));
  EXPECT_NO_THROW(registry.create("nccl_p2p", R"({"version": "2.13", "NCCL_NCHANNELS_PER_NET_PEER": 4})"));
  const auto message = [&](const char* options) {
    try {
      registry.create("nccl_p2p", options);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"NCCL_PXN_DISABLED": 1})").find("NCCL_PXN_DISABLE"), std::string::npos);
  EXPECT_NE(message(R"({"NCCL_MAX_P2P_NCHANNELS": 64})").find("NCCL_MAX_P2P_NCHANNELS"), std::string::npos);
  EXPECT_NE(message(R"({"NCCL_P2P_PXN_LEVEL": 3})").find("NCCL_P2P_PXN_LEVEL"), std::string::npos);
  EXPECT_NE(message(R"({"version": "2.13", "NCCL_P2P_NET_CHUNKSIZE": 65536})").find("2.13 has no"),
            std::string::npos);
  EXPECT_NE(message(R"({"NCCL_MIN_P2P_NCHANNELS": 8, "NCCL_MAX_P2P_NCHANNELS": 4})").find("at most"),
            std::string::npos);
  EXPECT_NE(message(R"({"version": "2.18"})").find("version"), std::string::npos);
}

TEST(NcclP2pTest, RefusesOtherKinds) {
  CollectiveRequest req = request(8, 1024);
  req.kind = CollectiveKind::kAllReduce;
  EXPECT_THROW(NcclP2pAlgorithm().lower(req, zionex_view(8)), InputError);
}

}  // namespace
}  // namespace zx::models::collectives
