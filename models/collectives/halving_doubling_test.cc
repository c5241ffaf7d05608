// Tests of recursive halving / doubling all-reduce, n = 2, 3, 8, 16, 64, 128
// (and every n up to 40); the symbolic checker proves every plan right, and:
//   powers of two: 2 log2(n) steps, each rank sends exactly 2(n-1)/n x S;
//   otherwise (MPICH): 2 log2(p') + 2 steps with p' the largest power of two
//   below n; the 2(n - p') ranks that pair up first send S more (the extra
//   ranks send S and receive S, and nothing else).

#include "models/collectives/halving_doubling.h"

#include <gtest/gtest.h>

#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

CollectiveRequest request(int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = CollectiveKind::kAllReduce, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

int log2_floor(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

TEST(HalvingDoublingTest, PowersOfTwoSend2nMinus1OverN) {
  for (int n : {2, 8, 16, 64, 128}) {
    const std::int64_t s = std::int64_t{4} * n * 9;
    const CollectiveRequest req = request(n, s);
    const auto report =
        check_plan(HalvingDoublingAlgorithm().lower(req, TopologyView::packed(n, 8)), req);
    ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
    for (int r = 0; r < n; ++r) EXPECT_EQ(report.bytes_sent[r].count(), 2 * (n - 1) * s / n);
    EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * log2_floor(n)));
    EXPECT_EQ(report.critical_path_steps, report.num_steps);
  }
}

TEST(HalvingDoublingTest, NonPowersOfTwoFoldTheExtraRanksFirst) {
  for (int n = 3; n <= 40; ++n) {
    if ((n & (n - 1)) == 0) continue;
    const int p = 1 << log2_floor(n);
    const std::int64_t s = std::int64_t{4} * p * 5;
    const CollectiveRequest req = request(n, s);
    const TopologyView view = TopologyView::packed(n, 8);
    const auto report = check_plan(HalvingDoublingAlgorithm().lower(req, view), req);
    ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
    EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * log2_floor(n) + 2));
    // Ring positions 0, 2, ..., 2(n-p)-2 only fold in and receive the result.
    const std::vector<int> order = view.ring_order();
    for (int q = 0; q < 2 * (n - p); q += 2) {
      EXPECT_EQ(report.bytes_sent[order[q]].count(), s);
      EXPECT_EQ(report.bytes_received[order[q]].count(), s);
    }
  }
}

TEST(HalvingDoublingTest, UnevenSizes) {
  for (int n : {3, 6, 8}) {
    for (std::int64_t s : {0, 1, 5, 999}) {
      const CollectiveRequest req = request(n, s);
      const auto report =
          check_plan(HalvingDoublingAlgorithm().lower(req, TopologyView::packed(n, 8)), req);
      EXPECT_TRUE(report.ok()) << "n=" << n << " S=" << s << "\n" << report.summary();
    }
  }
}

}  // namespace
}  // namespace zx::models::collectives
