// Tests of the tree algorithms, for n = 2, 3, 8, 16, 64, 128; the symbolic
// checker proves every plan right, and:
//   tree broadcast / reduce: each of the n-1 tree edges carries the buffer
//     once, so (n-1) x S in all, in chunks x (n-1) steps (one per piece and
//     edge); the root sends (broadcast) or receives (reduce) S per child.
//   double_binary_tree all-reduce: each tree carries half the buffer up and
//     down its n-1 edges: 2(n-1) x S in all, in 2 x 2 x chunks x (n-1) steps;
//     flat, no rank sends more than 2 x S (at most two children per tree,
//     and an inner node of one tree is a leaf of the other); over servers,
//     2(N-1) x S crosses between the N servers.

#include "models/collectives/tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>

#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

const int kSizes[] = {2, 3, 8, 16, 64, 128};

CollectiveRequest request(CollectiveKind kind, int n, std::int64_t bytes, int root = 0) {
  CollectiveRequest r{.kind = kind, .bytes_per_rank = sim::Bytes(bytes), .root = root};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

TEST(TreeTest, BroadcastAndReduceCarryTheBufferOncePerEdge) {
  for (CollectiveKind kind : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    for (int n : kSizes) {
      for (int chunks : {1, 4}) {
        for (int root : {0, n - 1}) {
          const std::int64_t s = 4 * 4 * 1000;
          const CollectiveRequest req = request(kind, n, s, root);
          const auto report =
              check_plan(TreeAlgorithm({chunks}).lower(req, TopologyView::packed(n, 8)), req);
          ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << "\n" << report.summary();
          EXPECT_EQ(report.total_bytes.count(), (n - 1) * s);
          EXPECT_EQ(report.num_steps, static_cast<std::size_t>(chunks * (n - 1)));
          const auto& root_bytes =
              kind == CollectiveKind::kBroadcast ? report.bytes_sent : report.bytes_received;
          EXPECT_EQ(root_bytes[root].count() % s, 0);
          EXPECT_GE(root_bytes[root].count(), s);
        }
      }
    }
  }
}

using Layout = DoubleBinaryTreeOptions::Layout;

// Bytes of the plan's transfers between members on different servers, and
// the members that send them.
std::pair<std::int64_t, std::set<int>> across_servers(const CollectivePlan& plan, const TopologyView& view) {
  std::int64_t bytes = 0;
  std::set<int> senders;
  for (const Step& step : plan.steps) {
    for (const Transfer& t : step.transfers) {
      if (view.member(t.src).server == view.member(t.dst).server) continue;
      bytes += t.size.count();
      senders.insert(t.src);
    }
  }
  return {bytes, senders};
}

TEST(TreeTest, DoubleBinaryTreeAllReduce) {
  for (int n : kSizes) {
    for (int chunks : {1, 3}) {
      const std::int64_t s = 4 * 2 * 3 * 500;
      const CollectiveRequest req = request(CollectiveKind::kAllReduce, n, s);
      const auto report = check_plan(
          DoubleBinaryTreeAlgorithm({.chunks = chunks, .layout = Layout::kFlat}).lower(req, TopologyView::packed(n, 8)),
          req);
      ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
      EXPECT_EQ(report.total_bytes.count(), 2 * (n - 1) * s);
      EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * 2 * chunks * (n - 1)));
      for (int r = 0; r < n; ++r) EXPECT_LE(report.bytes_sent[r].count(), 2 * s) << "rank " << r;
    }
  }
}

// NCCL's layout: binary trees over the N servers, a chain inside each. Every
// tree spans the n members, so 2(n-1) x S in all as flat; but only the
// servers' tree edges cross the fabric: each half up and down N-1 of them,
// 2(N-1) x S (flat on 64 members of 8 servers: far more). With K channels
// the chains start at K different members, and so many members send across.
TEST(TreeTest, DoubleBinaryTreeOverServers) {
  for (int n : {8, 16, 24, 64, 128}) {
    const int num_servers = (n + 7) / 8;
    for (int channels : {1, 2, 8}) {
      for (int chunks : {1, 3}) {
        const std::int64_t s = 4 * 2 * 8 * 3 * 500;
        const CollectiveRequest req = request(CollectiveKind::kAllReduce, n, s);
        const TopologyView view = TopologyView::packed(n, 8);
        const CollectivePlan plan =
            DoubleBinaryTreeAlgorithm({.chunks = chunks, .channels = channels}).lower(req, view);
        const auto report = check_plan(plan, req);
        ASSERT_TRUE(report.ok()) << "n=" << n << " channels=" << channels << "\n" << report.summary();
        EXPECT_EQ(report.total_bytes.count(), 2 * (n - 1) * s);
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * 2 * channels * chunks * (n - 1)));
        const auto [bytes, senders] = across_servers(plan, view);
        EXPECT_EQ(bytes, 2 * (num_servers - 1) * s) << "n=" << n << " channels=" << channels;
        if (num_servers > 1) {
          // Each channel's head on every server sends across, and no other member.
          EXPECT_EQ(senders.size(), static_cast<std::size_t>(num_servers * std::min(channels, 8)))
              << "n=" << n << " channels=" << channels;
        }
      }
    }
  }
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 64, 4 * 1000);
  const TopologyView view = TopologyView::packed(64, 8);
  const auto flat = across_servers(DoubleBinaryTreeAlgorithm({.layout = Layout::kFlat}).lower(req, view), view);
  EXPECT_GT(flat.first, 2 * 7 * 4 * 1000);
}

TEST(TreeTest, UnevenSizesAndOneRank) {
  for (std::int64_t s : {0, 1, 7, 1001}) {
    const CollectiveRequest req = request(CollectiveKind::kAllReduce, 5, s);
    EXPECT_TRUE(
        check_plan(DoubleBinaryTreeAlgorithm({4}).lower(req, TopologyView::packed(5, 2)), req)
            .ok());
    const CollectiveRequest b = request(CollectiveKind::kBroadcast, 5, s, 2);
    EXPECT_TRUE(check_plan(TreeAlgorithm({4}).lower(b, TopologyView::packed(5, 2)), b).ok());
  }
  const CollectiveRequest one = request(CollectiveKind::kAllReduce, 1, 64);
  EXPECT_TRUE(DoubleBinaryTreeAlgorithm().lower(one, TopologyView::packed(1, 8)).steps.empty());
}

}  // namespace
}  // namespace zx::models::collectives
