// Tests of the two-level algorithms on groups packed 8 to a server (ZionEX),
// n = 2, 3, 8 (one server: the rail phases are empty), 16, 64, 128; the
// symbolic checker proves every plan right, and with G servers of L members:
//   all-reduce: each rank sends 2(L-1)/L x S + 2(G-1)/(G L) x S in
//     2(L-1) + 2R steps, and only 2(G-1)/(G L) x S per rank crosses servers
//     (on average: with G not a power of two, the servers that take the
//     others' data send more), where R, the steps along a rail, is log2 P
//     (halving/doubling over P, the largest power of two <= G), plus 1 when
//     P < G, and G - 1 with "across": "ring".
//   reduce-scatter, all-gather: (L-1)/L x S + (G-1)/(G L) x S per rank,
//     (L-1) + R steps.
//   all-to-all: two steps; the fabric carries exactly the bytes between
//     servers, in one transfer per (rail, server pair).
// Servers holding different numbers of members are an input error.

#include "models/collectives/hierarchical.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

const int kSizes[] = {2, 3, 8, 16, 24, 40, 64, 96, 128};

// Steps along a rail of G servers, each way: a ring, or halving/doubling
// with, for G not a power of two, a step for the extra servers (two in a
// reduce-scatter or all-gather alone: into the others and back).
int rail_steps(int G, bool ring = false, bool alone = false) {
  if (ring) return G - 1;
  int steps = 0;
  while ((2 << steps) <= G) ++steps;
  return steps + ((G & (G - 1)) != 0 ? (alone ? 2 : 1) : 0);
}

bool power_of_two(int G) { return (G & (G - 1)) == 0; }

CollectiveRequest request(CollectiveKind kind, int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = kind, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

std::int64_t fabric_bytes(const CollectivePlan& plan, const TopologyView& view) {
  std::int64_t bytes = 0;
  for (const Step& step : plan.steps) {
    for (const Transfer& t : step.transfers) {
      if (view.member(t.src).server != view.member(t.dst).server) bytes += t.size.count();
    }
  }
  return bytes;
}

TEST(HierarchicalTest, AllReduce) {
  for (int n : kSizes) {
    const int L = std::min(n, 8), G = n / L;
    const std::int64_t s = std::int64_t{4} * n * 25;
    const CollectiveRequest req = request(CollectiveKind::kAllReduce, n, s);
    const TopologyView view = TopologyView::packed(n, 8);
    const CollectivePlan plan = HierarchicalAlgorithm().lower(req, view);
    const auto report = check_plan(plan, req);
    ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
    std::int64_t total = 0;
    for (int r = 0; r < n; ++r) {
      total += report.bytes_sent[r].count();
      if (power_of_two(G)) {
        EXPECT_EQ(report.bytes_sent[r].count(), 2 * (L - 1) * s / L + 2 * (G - 1) * s / (G * L));
      }
    }
    EXPECT_EQ(total, n * (2 * (L - 1) * s / L + 2 * (G - 1) * s / (G * L)));
    const bool ring_rails = !rails_halve_double(G, static_cast<double>(s) / L, true);
    EXPECT_EQ(report.num_steps, static_cast<std::size_t>(2 * (L - 1) + 2 * rail_steps(G, ring_rails)));
    EXPECT_EQ(fabric_bytes(plan, view), n * (2 * (G - 1) * s / (G * L)));
    // A ring along the rails moves the same bytes in more steps.
    const CollectivePlan ring = HierarchicalAlgorithm({.across = RailAlgorithm::kRing}).lower(req, view);
    const auto ring_report = check_plan(ring, req);
    ASSERT_TRUE(ring_report.ok()) << "n=" << n << "\n" << ring_report.summary();
    EXPECT_EQ(ring_report.num_steps, static_cast<std::size_t>(2 * (L - 1) + 2 * rail_steps(G, true)));
    EXPECT_EQ(fabric_bytes(ring, view), fabric_bytes(plan, view));
  }
}

// Pipelined slices ("chunks"): the same bytes per rank and across the
// fabric, the chain of steps once per slice, and a critical path of the
// chain plus one step per further slice; every plan checks.
TEST(HierarchicalTest, ChunksPipelineTheSlices) {
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    for (int n : {8, 16, 24, 64}) {
      for (int chunks : {1, 3, 4}) {
        const int L = std::min(n, 8), G = n / L;
        const std::int64_t s = std::int64_t{4} * n * chunks * 25;
        const CollectiveRequest req = request(kind, n, s);
        const TopologyView view = TopologyView::packed(n, 8);
        const CollectivePlan plan = HierarchicalAlgorithm({.chunks = chunks}).lower(req, view);
        const CollectivePlan whole = HierarchicalAlgorithm().lower(req, view);
        const auto report = check_plan(plan, req);
        const auto whole_report = check_plan(whole, req);
        ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << " chunks=" << chunks << "\n" << report.summary();
        for (int r = 0; r < n; ++r) EXPECT_EQ(report.bytes_sent[r], whole_report.bytes_sent[r]);
        EXPECT_EQ(fabric_bytes(plan, view), fabric_bytes(whole, view));
        const bool paired = kind == CollectiveKind::kAllReduce;
        const bool ring_rails = !rails_halve_double(G, static_cast<double>(s) / chunks / L, paired);
        const int chain = paired ? 2 * (L - 1) + 2 * rail_steps(G, ring_rails)
                                 : (L - 1) + rail_steps(G, ring_rails, true);
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(chunks * chain));
        EXPECT_EQ(report.critical_path_steps, static_cast<std::size_t>(chain + chunks - 1));
      }
    }
  }
}

// One slice by default; "chunks" slices; or, with chunk_bytes, slices of
// about that size, at least one and at most 64; both options at once are an
// error.
TEST(HierarchicalTest, SlicesFollowChunksOrChunkBytes) {
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(std::int64_t{1} << 30)), 1);
  EXPECT_EQ(hierarchical_slices({.chunks = 3}, sim::Bytes(std::int64_t{1} << 30)), 3);
  const HierarchicalOptions mib{.chunk_bytes = 1 << 20};
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(0)), 1);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(1 << 20)), 1);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes((1 << 20) + 1)), 2);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(std::int64_t{25} << 20)), 25);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(std::int64_t{1} << 30)), 64);
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 16, std::int64_t{3} << 20);
  EXPECT_EQ(HierarchicalAlgorithm(mib).lower(req, TopologyView::packed(16, 8)).steps.size(), 3u * (14 + 2));
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  EXPECT_NO_THROW(registry.create("hierarchical", R"({"chunk_bytes": 1048576})"));
  EXPECT_NO_THROW(registry.create("hierarchical", R"({"across": "ring"})"));
  EXPECT_THROW(registry.create("hierarchical", R"({"across": "tree"})"), InputError);
  try {
    registry.create("hierarchical", R"({"chunks": 2, "chunk_bytes": 1048576})");
    ADD_FAILURE() << "both options accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/chunk_bytes: give chunks or chunk_bytes, not both"), std::string::npos)
        << e.what();
  }
}

// "auto" along the rails: halving/doubling for a power of two at any size;
// otherwise only while its fewer steps outweigh the extras' whole buffers
// (the crossovers of rails_halve_double's estimate); the plan follows.
TEST(HierarchicalTest, AutoPicksHalvingDoublingByAnAlphaBetaEstimate) {
  for (const double bytes : {1.0, 1e6, 1e9}) {
    EXPECT_TRUE(rails_halve_double(2, bytes, true));
    EXPECT_TRUE(rails_halve_double(256, bytes, false));
  }
  EXPECT_FALSE(rails_halve_double(1, 1e3, true));
  EXPECT_FALSE(rails_halve_double(3, 64, true));  // 1 + 1 steps against 2: the ring
  EXPECT_TRUE(rails_halve_double(12, 480e3, true));
  EXPECT_FALSE(rails_halve_double(12, 500e3, true));
  EXPECT_TRUE(rails_halve_double(96, 5.9e6, true));
  EXPECT_FALSE(rails_halve_double(96, 6.1e6, true));
  // 96 GPUs on 12 servers: 3.2 MB per rank is 400 KB per rail, halving and
  // doubling (2 (3 + 1) steps); 32 MB is 4 MB per rail, a ring (2 x 11).
  const TopologyView view = TopologyView::packed(96, 8);
  EXPECT_EQ(HierarchicalAlgorithm().lower(request(CollectiveKind::kAllReduce, 96, 3'200'000), view).steps.size(),
            2u * 7u + 2u * 4u);
  EXPECT_EQ(HierarchicalAlgorithm().lower(request(CollectiveKind::kAllReduce, 96, 32'000'000), view).steps.size(),
            2u * 7u + 2u * 11u);
}

TEST(HierarchicalTest, ReduceScatterAndAllGather) {
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    for (int n : kSizes) {
      const int L = std::min(n, 8), G = n / L;
      const std::int64_t s = std::int64_t{4} * n * 3;
      const CollectiveRequest req = request(kind, n, s);
      const auto report =
          check_plan(HierarchicalAlgorithm().lower(req, TopologyView::packed(n, 8)), req);
      ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << "\n" << report.summary();
      for (int r = 0; r < n && power_of_two(G); ++r) {
        EXPECT_EQ(report.bytes_sent[r].count(), (L - 1) * s / L + (G - 1) * s / (G * L));
      }
      const bool ring_rails = !rails_halve_double(G, static_cast<double>(s) / L, false);
      EXPECT_EQ(report.num_steps, static_cast<std::size_t>((L - 1) + rail_steps(G, ring_rails, true)));
    }
  }
}

TEST(HierarchicalTest, AllToAllAndAllToAllV) {
  for (int n : kSizes) {
    const int L = std::min(n, 8), G = n / L;
    CollectiveRequest req = request(CollectiveKind::kAllToAll, n, std::int64_t{4} * n * 5);
    const TopologyView view = TopologyView::packed(n, 8);
    const CollectivePlan plan = HierarchicalAlgorithm().lower(req, view);
    const auto report = check_plan(plan, req);
    ASSERT_TRUE(report.ok()) << "n=" << n << "\n" << report.summary();
    EXPECT_EQ(report.num_steps, 2u);
    // Per rank: (n - L) destinations on other servers, 20 bytes each.
    EXPECT_EQ(fabric_bytes(plan, view), std::int64_t{n} * (n - L) * 20);
    if (G > 1) {
      EXPECT_EQ(plan.steps[1].transfers.size(), static_cast<std::size_t>(L * G * (G - 1)));
    }

    req.all_to_all_v_bytes.assign(n, std::vector<std::int64_t>(n));
    std::int64_t off_diagonal = 0;
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        req.all_to_all_v_bytes[s][d] = (s + 2 * d) % 3 == 0 ? 0 : 10 + (s * d) % 17;
        if (s != d) off_diagonal += req.all_to_all_v_bytes[s][d];
      }
    }
    const auto v = check_plan(HierarchicalAlgorithm().lower(req, view), req);
    ASSERT_TRUE(v.ok()) << "v n=" << n << "\n" << v.summary();
    // Aggregation may relay bytes, so the plan moves at least the off-diagonal total.
    EXPECT_GE(v.total_bytes.count(), off_diagonal);
  }
}

// Members of a group spread over servers in any order still check.
TEST(HierarchicalTest, ScatteredGroup) {
  const TopologyView view({{5, 3}, {2, 1}, {5, 0}, {2, 6}, {9, 2}, {9, 7}});
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                              CollectiveKind::kAllGather, CollectiveKind::kAllToAll}) {
    const CollectiveRequest req = request(kind, 6, 4 * 6 * 7 + 2);
    const auto report = check_plan(HierarchicalAlgorithm().lower(req, view), req);
    EXPECT_TRUE(report.ok()) << to_string(kind) << "\n" << report.summary();
  }
}

// Three members on one server and two on another: no rail structure.
TEST(HierarchicalTest, UnevenServersAreAnInputError) {
  const TopologyView view({{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}});
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 5, 1000);
  try {
    HierarchicalAlgorithm().lower(req, view);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "collective algorithm 'hierarchical': needs the same number of group members on "
              "every server; server 1 of the group has 2, server 0 has 3");
  }
  EXPECT_FALSE(HierarchicalAlgorithm().supports(CollectiveKind::kBroadcast));
}

}  // namespace
}  // namespace zx::models::collectives
