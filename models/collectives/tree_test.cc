// Tests of the tree algorithms, for n = 2, 3, 8, 16, 64, 128; the symbolic
// checker proves every plan right, and:
//   tree broadcast / reduce: each of the n-1 tree edges carries the buffer
//     once, so (n-1) x S in all, in chunks x (n-1) steps (one per piece and
//     edge); the root sends (broadcast) or receives (reduce) S per child.
//   double_binary_tree all-reduce: each tree carries half the buffer up and
//     down its n-1 edges: 2(n-1) x S in all, in 2 x 2 x chunks x (n-1) steps;
//     no rank sends more than 2 x S (at most two children per tree, and an
//     inner node of one tree is a leaf of the other).

#include "models/collectives/tree.h"

#include <gtest/gtest.h>

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

TEST(TreeTest, DoubleBinaryTreeAllReduce) {
  for (int n : kSizes) {
    for (int chunks : {1, 3}) {
      const std::int64_t s = 4 * 2 * 3 * 500;
      const CollectiveRequest req = request(CollectiveKind::kAllReduce, n, s);
      const auto report = check_plan(
          DoubleBinaryTreeAlgorithm({chunks}).lower(req, TopologyView::packed(n, 8)), req);
      ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
      EXPECT_EQ(report.total_bytes.count(), 2 * (n - 1) * s);
      EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * 2 * chunks * (n - 1)));
      for (int r = 0; r < n; ++r) EXPECT_LE(report.bytes_sent[r].count(), 2 * s) << "rank " << r;
    }
  }
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
