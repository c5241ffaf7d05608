// Tests of the flat all-to-all algorithms, n = 2, 3, 8, 16, 64, 128; the
// symbolic checker proves every plan right, and:
//   direct: one step; each rank sends and receives (n-1)/n x S.
//   pairwise: n-1 rounds, each a step in which every rank sends exactly one
//     message and receives exactly one; the same bytes as direct.
//   all-to-all-v with an uneven matrix: rank s sends its row total minus its
//     own entry, rank d receives its column total minus its own entry; in all,
//     bytes sent = bytes received = the matrix total less the diagonal (which
//     stays in place).

#include "models/collectives/all_to_all.h"

#include <gtest/gtest.h>

#include <memory>

#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

const int kSizes[] = {2, 3, 8, 16, 64, 128};

CollectiveRequest request(int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = CollectiveKind::kAllToAll, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

TEST(AllToAllTest, DirectAndPairwiseSendNMinus1OverN) {
  for (int n : kSizes) {
    const std::int64_t s = std::int64_t{4} * n * 3;
    const CollectiveRequest req = request(n, s);
    const TopologyView view = TopologyView::packed(n, 8);
    const auto direct = check_plan(DirectAllToAllAlgorithm().lower(req, view), req);
    ASSERT_TRUE(direct.ok()) << "n=" << n << "\n" << direct.summary();
    EXPECT_EQ(direct.num_steps, 1u);
    const CollectivePlan pairwise_plan = PairwiseAllToAllAlgorithm().lower(req, view);
    const auto pairwise = check_plan(pairwise_plan, req);
    ASSERT_TRUE(pairwise.ok()) << "n=" << n << "\n" << pairwise.summary();
    EXPECT_EQ(pairwise.num_steps, static_cast<std::size_t>(n - 1));
    EXPECT_EQ(pairwise.critical_path_steps, static_cast<std::size_t>(n - 1));
    for (const Step& step : pairwise_plan.steps) {
      std::vector<int> sends(n), receives(n);
      for (const Transfer& t : step.transfers) {
        ++sends[t.src];
        ++receives[t.dst];
      }
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(sends[r], 1);
        EXPECT_EQ(receives[r], 1);
      }
    }
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(direct.bytes_sent[r].count(), (n - 1) * s / n);
      EXPECT_EQ(direct.bytes_received[r].count(), (n - 1) * s / n);
      EXPECT_EQ(pairwise.bytes_sent[r].count(), (n - 1) * s / n);
    }
  }
}

TEST(AllToAllTest, UnevenMatrixConservesBytes) {
  for (int n : {2, 3, 8, 16}) {
    CollectiveRequest req = request(n, 0);
    req.all_to_all_v_bytes.assign(n, std::vector<std::int64_t>(n));
    std::int64_t off_diagonal = 0;
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        // Uneven, with zeros: some pairs exchange nothing.
        const std::int64_t bytes = (s * 7 + d * 13) % 5 == 0 ? 0 : 100 * (1 + (s * 3 + d) % 11);
        req.all_to_all_v_bytes[s][d] = bytes;
        if (s != d) off_diagonal += bytes;
      }
    }
    const TopologyView view = TopologyView::packed(n, 8);
    const std::unique_ptr<CollectiveAlgorithm> algorithms[] = {
        std::make_unique<DirectAllToAllAlgorithm>(), std::make_unique<PairwiseAllToAllAlgorithm>()};
    for (const auto& algorithm : algorithms) {
      const auto report = check_plan(algorithm->lower(req, view), req);
      ASSERT_TRUE(report.ok()) << algorithm->name() << " n=" << n << "\n" << report.summary();
      std::int64_t sent = 0, received = 0;
      for (int r = 0; r < n; ++r) {
        std::int64_t row = 0, column = 0;
        for (int k = 0; k < n; ++k) {
          if (k == r) continue;
          row += req.all_to_all_v_bytes[r][k];
          column += req.all_to_all_v_bytes[k][r];
        }
        EXPECT_EQ(report.bytes_sent[r].count(), row);
        EXPECT_EQ(report.bytes_received[r].count(), column);
        sent += report.bytes_sent[r].count();
        received += report.bytes_received[r].count();
      }
      EXPECT_EQ(sent, off_diagonal);
      EXPECT_EQ(received, off_diagonal);
    }
  }
}

}  // namespace
}  // namespace zx::models::collectives
