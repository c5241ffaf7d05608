// Tests of the ring algorithm. For every kind it supports and n = 2, 3, 8, 16,
// 64, 128, with 1 or 2 channels of 1 or 3 chunks, the symbolic checker proves
// the plan right, and:
//   all-reduce: each rank sends exactly 2(n-1)/n x S, in 2(n-1) ring steps
//     per slice, each a step per position (one transfer); a channel's
//     slices pipeline, so the critical path is 2(n-1) + chunks - 1 steps.
//   reduce-scatter, all-gather: each rank sends (n-1)/n x S, n-1 ring steps
//     per slice.
//   a position's transfer waits only for its predecessor's transfer of the
//     ring step before (and the slice before), not for the whole ring.
//   broadcast, reduce: (n-1) x S in all, n-1 hops per slice; the root sends
//     S (broadcast) or receives S (reduce) and no more.
// A 4-rank all-reduce is pinned as a golden file; refresh it with
//   ZX_UPDATE_GOLDENS=1 bazel run //models/collectives:ring_test

#include "models/collectives/ring.h"

#include <gtest/gtest.h>

#include "base/testing/runfiles.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "base/error.h"
#include "models/collectives/plan_json.h"
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

struct Shape {
  int chunks;
  int channels;
};
const Shape kShapes[] = {{1, 1}, {3, 1}, {1, 2}, {3, 2}};

// The checker's replay keeps, per step, the set of steps before it: with a
// step per position, 128 ranks' pipelined rings (~10^5 steps) would need
// gigabytes. Above this the linear checks alone run; every shape up to 16
// ranks is replayed.
constexpr std::size_t kReplayBytes = std::size_t{64} << 20;

TEST(RingTest, AllReduceSends2nMinus1OverNPerRank) {
  for (int n : kSizes) {
    for (Shape shape : kShapes) {
      const int slices = shape.chunks * shape.channels;
      const std::int64_t s = std::int64_t{4} * n * slices * 10;
      const CollectiveRequest req = request(CollectiveKind::kAllReduce, n, s);
      const CollectivePlan plan =
          RingAlgorithm({shape.chunks, shape.channels}).lower(req, TopologyView::packed(n, 8));
      const auto report = check_plan(plan, req, kReplayBytes);
      ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
      EXPECT_TRUE(report.replayed || n > 16) << n;
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(report.bytes_sent[r].count(), 2 * (n - 1) * s / n) << "n=" << n;
        EXPECT_EQ(report.bytes_received[r].count(), 2 * (n - 1) * s / n);
      }
      EXPECT_EQ(report.num_steps, static_cast<std::size_t>(slices * 2 * (n - 1) * n));
      EXPECT_EQ(report.critical_path_steps,
                static_cast<std::size_t>(2 * (n - 1) + shape.chunks - 1));
      // Local work: (n-1)/n x S reduced per rank.
      EXPECT_EQ(report.total_reduce_bytes.count(), (n - 1) * s);
    }
  }
}

TEST(RingTest, ReduceScatterAndAllGatherSendNMinus1OverN) {
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    for (int n : kSizes) {
      for (Shape shape : kShapes) {
        const int slices = shape.chunks * shape.channels;
        const std::int64_t s = std::int64_t{2} * n * slices * 7;
        CollectiveRequest req = request(kind, n, s);
        req.dtype = DataType::kBf16;
        const CollectivePlan plan =
            RingAlgorithm({shape.chunks, shape.channels}).lower(req, TopologyView::packed(n, 8));
        const auto report = check_plan(plan, req, kReplayBytes);
        ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << "\n" << report.summary();
        EXPECT_TRUE(report.replayed || n > 16) << n;
        for (int r = 0; r < n; ++r) EXPECT_EQ(report.bytes_sent[r].count(), (n - 1) * s / n);
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(slices * (n - 1) * n));
      }
    }
  }
}

TEST(RingTest, BroadcastAndReducePipelineFromOrToTheRoot) {
  for (CollectiveKind kind : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    for (int n : kSizes) {
      for (int root : {0, n / 2, n - 1}) {
        const std::int64_t s = 4 * 6 * 100;
        const CollectiveRequest req = request(kind, n, s, root);
        const CollectivePlan plan = RingAlgorithm({3, 2}).lower(req, TopologyView::packed(n, 8));
        const auto report = check_plan(plan, req);
        ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << "\n" << report.summary();
        EXPECT_EQ(report.total_bytes.count(), (n - 1) * s);
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(6 * (n - 1)));
        EXPECT_EQ(report.critical_path_steps, static_cast<std::size_t>(n - 1 + 2));
        if (kind == CollectiveKind::kBroadcast) {
          EXPECT_EQ(report.bytes_sent[root].count(), s);
          EXPECT_EQ(report.bytes_received[root].count(), 0);
        } else {
          EXPECT_EQ(report.bytes_received[root].count(), s);
          EXPECT_EQ(report.bytes_sent[root].count(), 0);
        }
      }
    }
  }
}

// Uneven sizes (not a multiple of n or of the element) and a group that
// visits servers out of order still check; one rank is a no-op plan.
TEST(RingTest, UnevenSizesScatteredGroupsAndOneRank) {
  std::vector<MemberLocation> members = {{3, 1}, {0, 2}, {3, 0}, {1, 5}, {0, 0}};
  const TopologyView view(members);
  for (CollectiveKind kind :
       {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
        CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    for (std::int64_t s : {0, 1, 3, 37, 1001}) {
      const CollectiveRequest req = request(kind, 5, s, /*root=*/3);
      const auto report = check_plan(RingAlgorithm({2, 2}).lower(req, view), req);
      EXPECT_TRUE(report.ok()) << to_string(kind) << " S=" << s << "\n" << report.summary();
    }
    const CollectiveRequest one = request(kind, 1, 64);
    const CollectivePlan plan = materialize(RingAlgorithm().lower(one, TopologyView::packed(1, 8)));
    EXPECT_TRUE(check_plan(plan, one).ok());
    EXPECT_TRUE(plan.steps.empty());
  }
}

// The ring crosses servers once per server: with 2 servers of 8, only 2 of
// each ring step's 16 transfers (steps 16t .. 16t + 15, one per position)
// leave a server.
TEST(RingTest, RingOrderCrossesEachServerBoundaryOnce) {
  const TopologyView view = TopologyView::packed(16, 8);
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 16, 1 << 20);
  const CollectivePlan plan = materialize(RingAlgorithm().lower(req, view));
  ASSERT_EQ(plan.steps.size(), 30u * 16u);
  for (std::size_t t = 0; t < 30; ++t) {
    int crossing = 0;
    for (std::size_t p = 0; p < 16; ++p) {
      const Step& step = plan.steps[t * 16 + p];
      ASSERT_EQ(step.transfers.size(), 1u);
      const Transfer& x = step.transfers.front();
      crossing += view.member(x.src).server != view.member(x.dst).server;
    }
    EXPECT_EQ(crossing, 2);
  }
}

// Each position's transfer of ring step t waits for exactly its ring
// predecessor's transfer of step t - 1 (the data it forwards): no global
// barrier between ring steps.
TEST(RingTest, PositionsWaitOnlyForTheirPredecessor) {
  const TopologyView view = TopologyView::packed(8, 8);
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 8, 8 * 1024);
  const CollectivePlan plan = materialize(RingAlgorithm().lower(req, view));
  ASSERT_EQ(plan.steps.size(), 14u * 8u);
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& step = plan.steps[i];
    if (i < 8) {
      EXPECT_TRUE(step.after.empty()) << i;
      continue;
    }
    ASSERT_EQ(step.after.size(), 1u) << i;
    const Step& before = plan.steps[step.after.front()];
    EXPECT_EQ(step.after.front() / 8, i / 8 - 1) << i;
    EXPECT_EQ(before.transfers.front().dst, step.transfers.front().src) << i;
  }
}

// Channel c leaves each server from its GPU c - 1 (each server's members
// rotated by c), so 8 channels on 8-GPU servers send across the fabric from
// every GPU, and so through every NIC (each carrying an eighth, for the
// closed rings); every kind the ring runs stays correct.
TEST(RingTest, ChannelsLeaveEachServerThroughDifferentGpus) {
  const TopologyView view = TopologyView::packed(24, 8);
  for (const CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                    CollectiveKind::kAllGather, CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    const CollectiveRequest req = request(kind, 24, 24 * 8 * 1024, /*root=*/kind == CollectiveKind::kReduce ? 13 : 0);
    for (const int channels : {1, 8}) {
      const CollectivePlan plan = materialize(RingAlgorithm({1, channels}).lower(req, view));
      const testing::PlanReport report = check_plan(plan, req);
      EXPECT_TRUE(report.ok()) << to_string(kind) << " channels " << channels << "\n" << report.summary();
      std::map<int, sim::Bytes> leaving;  // local index of the sender -> bytes it sends to another server
      for (const Step& step : plan.steps) {
        for (const Transfer& t : step.transfers) {
          if (view.member(t.src).server != view.member(t.dst).server) leaving[view.member(t.src).local_index] += t.size;
        }
      }
      EXPECT_EQ(leaving.size(), static_cast<std::size_t>(channels)) << to_string(kind);
      // A closed ring crosses every boundary alike; a broadcast's or reduce's
      // open chain skips one.
      const bool closed = kind != CollectiveKind::kBroadcast && kind != CollectiveKind::kReduce;
      for (const auto& [local, bytes] : leaving) {
        if (closed) {
          EXPECT_EQ(bytes, leaving.begin()->second) << to_string(kind);
        }
      }
    }
  }
  // Channel 0 is the plain ring order; channel c rotates each server by c.
  EXPECT_EQ(view.ring_order(0), view.ring_order());
  const std::vector<int> rotated = view.ring_order(3);
  EXPECT_EQ(std::vector<int>(rotated.begin(), rotated.begin() + 8), (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
}

TEST(RingTest, AllToAllIsNotSupported) {
  EXPECT_FALSE(RingAlgorithm().supports(CollectiveKind::kAllToAll));
  const CollectiveRequest req = request(CollectiveKind::kAllToAll, 4, 64);
  EXPECT_THROW(RingAlgorithm().lower(req, TopologyView::packed(4, 8)), InputError);
}

// The 4-rank, 64-byte fp32 ring all-reduce, step by step, as a golden file.
TEST(RingTest, GoldenFourRankAllReduce) {
  const std::string relative = "models/collectives/testdata/ring_allreduce_4ranks.plan.json";
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 4, 64);
  const std::string actual = plan_to_json(RingAlgorithm().lower(req, TopologyView::packed(4, 8)));
  if (zx::testing::maybe_update_golden(relative, actual)) GTEST_SKIP() << "golden updated";
  const std::string expected = zx::testing::read_file(zx::testing::runfile(relative));
  ASSERT_FALSE(expected.empty()) << "missing golden " << relative;
  EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace zx::models::collectives
