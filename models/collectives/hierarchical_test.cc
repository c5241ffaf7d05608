// Tests of the two-level algorithms on groups packed 8 to a server (ZionEX),
// n = 2, 3, 8 (one server: the rail phases are empty), 16, 64, 128; the
// symbolic checker proves every plan right, and with G servers of L members:
//   all-reduce: each rank sends 2(L-1)/L x S + 2(G-1)/(G L) x S in
//     2(L-1) + 2R steps, and only 2(G-1)/(G L) x S per rank crosses servers
//     (on average for halving/doubling with G not a power of two: the
//     servers that take the others' data send more; exactly for the
//     others), where R, the steps along a rail, is G - 1 for a ring, the
//     sum of f - 1 over G's prime factors f for mixed radix, and log2 P
//     for halving/doubling over P, the largest power of two <= G, plus 1
//     when P < G.
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

const int kSizes[] = {2, 3, 8, 16, 24, 40, 64, 72, 96, 128};

// Steps along a rail of G servers, each way: a ring; mixed radix, a ring
// per prime factor; or halving/doubling with, for G not a power of two, a
// step for the extra servers (two in a reduce-scatter or all-gather alone:
// into the others and back). "auto" as choose_rail_algorithm says.
int rail_steps(int G, RailAlgorithm algorithm, double rail_bytes, bool alone = false) {
  if (algorithm == RailAlgorithm::kAuto) algorithm = choose_rail_algorithm(G, rail_bytes, !alone);
  int steps = 0;
  switch (algorithm) {
    case RailAlgorithm::kRing:
      return G - 1;
    case RailAlgorithm::kMixedRadix:
      for (int g = G, f = 2; g > 1;) {
        if (g % f == 0) {
          steps += f - 1;
          g /= f;
        } else {
          ++f;
        }
      }
      return steps;
    default:
      while ((2 << steps) <= G) ++steps;
      return steps + ((G & (G - 1)) != 0 ? (alone ? 2 : 1) : 0);
  }
}

const RailAlgorithm kRailAlgorithms[] = {RailAlgorithm::kAuto, RailAlgorithm::kRing,
                                         RailAlgorithm::kHalvingDoubling, RailAlgorithm::kMixedRadix};

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
    for (const RailAlgorithm across : kRailAlgorithms) {
      const CollectivePlan plan = HierarchicalAlgorithm({.across = across}).lower(req, view);
      const auto report = check_plan(plan, req);
      ASSERT_TRUE(report.ok()) << "n=" << n << " across=" << static_cast<int>(across) << "\n" << report.summary();
      const bool even = power_of_two(G) || across == RailAlgorithm::kRing || across == RailAlgorithm::kMixedRadix;
      std::int64_t total = 0;
      for (int r = 0; r < n; ++r) {
        total += report.bytes_sent[r].count();
        if (even) {
          EXPECT_EQ(report.bytes_sent[r].count(), 2 * (L - 1) * s / L + 2 * (G - 1) * s / (G * L))
              << "n=" << n << " across=" << static_cast<int>(across) << " rank " << r;
        }
      }
      EXPECT_EQ(total, n * (2 * (L - 1) * s / L + 2 * (G - 1) * s / (G * L)));
      EXPECT_EQ(report.num_steps,
                static_cast<std::size_t>(2 * (L - 1) + 2 * rail_steps(G, across, static_cast<double>(s) / L)))
          << "n=" << n << " across=" << static_cast<int>(across);
      EXPECT_EQ(fabric_bytes(plan, view), n * (2 * (G - 1) * s / (G * L)));
    }
  }
}

// Mixed radix on a prime number of servers is the ring; on a power of two,
// halving/doubling: the same transfers, step for step.
TEST(HierarchicalTest, MixedRadixIsTheRingOrHalvingDoubling) {
  const auto same = [](const CollectivePlan& a, const CollectivePlan& b) {
    if (a.steps.size() != b.steps.size()) return false;
    for (std::size_t i = 0; i < a.steps.size(); ++i) {
      const auto& x = a.steps[i].transfers;
      const auto& y = b.steps[i].transfers;
      if (x.size() != y.size()) return false;
      for (std::size_t j = 0; j < x.size(); ++j) {
        if (x[j].src != y[j].src || x[j].dst != y[j].dst || x[j].size != y[j].size) return false;
      }
    }
    return true;
  };
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    for (const auto& [n, twin] : {std::pair{40, RailAlgorithm::kRing}, std::pair{56, RailAlgorithm::kRing},
                                  std::pair{64, RailAlgorithm::kHalvingDoubling}}) {
      const CollectiveRequest req = request(kind, n, std::int64_t{4} * n * 7);
      const TopologyView view = TopologyView::packed(n, 8);
      EXPECT_TRUE(same(HierarchicalAlgorithm({.across = RailAlgorithm::kMixedRadix}).lower(req, view),
                       HierarchicalAlgorithm({.across = twin}).lower(req, view)))
          << to_string(kind) << " n=" << n;
    }
  }
}

// Mixed radix takes its smallest factors first, so the first step of the
// reduce-scatter along the rails, the largest transfers (half of what each
// rail holds on 12 = 2 x 2 x 3 servers), goes between neighbouring servers
// and the ring of 3 on the last factor, at stride 4, carries a twelfth.
TEST(HierarchicalTest, MixedRadixKeepsTheLargestTransfersNearest) {
  const int n = 96;
  const std::int64_t s = std::int64_t{4} * n * 100;
  const CollectiveRequest req = request(CollectiveKind::kReduceScatter, n, s);
  const TopologyView view = TopologyView::packed(n, 8);
  const CollectivePlan plan = HierarchicalAlgorithm({.across = RailAlgorithm::kMixedRadix}).lower(req, view);
  ASSERT_EQ(plan.steps.size(), 7u + 4u);
  const std::int64_t rail = s / 8;
  const std::pair<int, std::int64_t> expected[] = {{1, rail / 2}, {2, rail / 4}, {4, rail / 12}, {4, rail / 12}};
  for (int k = 0; k < 4; ++k) {
    const Step& step = plan.steps[static_cast<std::size_t>(7 + k)];
    ASSERT_EQ(step.transfers.size(), 96u);
    for (const Transfer& t : step.transfers) {
      const int from = view.member(t.src).server, to = view.member(t.dst).server;
      // Ring of 3 at stride 4: the step forward is +4, or -8 from the last.
      const int distance = std::abs(from - to) == 8 ? 4 : std::abs(from - to);
      EXPECT_EQ(distance, expected[k].first) << "rail step " << k;
      EXPECT_EQ(t.size.count(), expected[k].second) << "rail step " << k;
    }
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
        const double rail_bytes = static_cast<double>(s) / chunks / L;
        const int chain = paired ? 2 * (L - 1) + 2 * rail_steps(G, RailAlgorithm::kAuto, rail_bytes)
                                 : (L - 1) + rail_steps(G, RailAlgorithm::kAuto, rail_bytes, true);
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(chunks * chain));
        EXPECT_EQ(report.critical_path_steps, static_cast<std::size_t>(chain + chunks - 1));
      }
    }
  }
}

// By default sqrt(bytes / 4 MiB) slices across servers (one inside one);
// "chunks" slices; or, with chunk_bytes, slices of about that size, at
// least one and at most 64; both options at once are an error.
TEST(HierarchicalTest, SlicesFollowChunksOrChunkBytes) {
  // The default: sqrt(bytes / 4 MiB) slices, rounded, 1 to 16, across
  // servers only.
  const std::int64_t mi = 1 << 20;
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(std::int64_t{1} << 30), 1), 1);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(0), 2), 1);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(9 * mi - 1), 2), 1);  // sqrt(2.25) = 1.5 rounds up
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(9 * mi), 2), 2);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(16 * mi), 2), 2);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(64 * mi), 16), 4);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(256 * mi), 16), 8);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(std::int64_t{1} << 30), 256), 16);
  EXPECT_EQ(hierarchical_slices({}, sim::Bytes(std::int64_t{1} << 40), 256), 16);
  EXPECT_EQ(hierarchical_slices({.chunks = 3}, sim::Bytes(std::int64_t{1} << 30), 1), 3);
  EXPECT_EQ(hierarchical_slices({.chunks = 1}, sim::Bytes(std::int64_t{1} << 30), 4), 1);
  const HierarchicalOptions mib{.chunk_bytes = mi};
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(0), 2), 1);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(mi), 2), 1);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(mi + 1), 2), 2);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(25 * mi), 1), 25);
  EXPECT_EQ(hierarchical_slices(mib, sim::Bytes(std::int64_t{1} << 30), 2), 64);
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 16, std::int64_t{3} << 20);
  EXPECT_EQ(HierarchicalAlgorithm(mib).lower(req, TopologyView::packed(16, 8)).steps.size(), 3u * (14 + 2));
  // 64 MiB across two servers: four slices by default, the same bytes as one.
  const CollectiveRequest big = request(CollectiveKind::kAllReduce, 16, 64 * mi);
  const TopologyView two = TopologyView::packed(16, 8);
  const CollectivePlan sliced = HierarchicalAlgorithm().lower(big, two);
  const CollectivePlan whole = HierarchicalAlgorithm({.chunks = 1}).lower(big, two);
  EXPECT_EQ(sliced.steps.size(), 4u * (14 + 2));
  EXPECT_EQ(whole.steps.size(), 14u + 2u);
  EXPECT_EQ(fabric_bytes(sliced, two), fabric_bytes(whole, two));
  EXPECT_EQ(HierarchicalAlgorithm().lower(request(CollectiveKind::kAllReduce, 8, 64 * mi), TopologyView::packed(8, 8))
                .steps.size(),
            14u);
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  EXPECT_NO_THROW(registry.create("hierarchical", R"({"chunk_bytes": 1048576})"));
  EXPECT_NO_THROW(registry.create("hierarchical", R"({"across": "ring"})"));
  EXPECT_NO_THROW(registry.create("hierarchical", R"({"across": "mixed_radix"})"));
  EXPECT_THROW(registry.create("hierarchical", R"({"across": "tree"})"), InputError);
  try {
    registry.create("hierarchical", R"({"chunks": 2, "chunk_bytes": 1048576})");
    ADD_FAILURE() << "both options accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/chunk_bytes: give chunks or chunk_bytes, not both"), std::string::npos)
        << e.what();
  }
}

// "auto" along the rails: mixed radix (for a power of two, the same plan as
// halving/doubling) unless folding the servers beyond a power of two into
// it is strictly cheaper, which takes large prime factors and small
// buffers (the crossovers of rail_phase_seconds' estimate); the plan
// follows.
TEST(HierarchicalTest, AutoPicksByAnAlphaBetaEstimate) {
  for (const double bytes : {1.0, 1e6, 1e9}) {
    for (const int g : {2, 3, 12, 96, 256}) {
      EXPECT_EQ(choose_rail_algorithm(g, bytes, true), RailAlgorithm::kMixedRadix) << g << " " << bytes;
    }
    // Never a ring: as many steps or more for the same bytes.
    for (const int g : {5, 12, 13, 65, 97}) {
      for (const bool paired : {false, true}) {
        EXPECT_LE(rail_phase_seconds(RailAlgorithm::kMixedRadix, g, bytes, paired),
                  rail_phase_seconds(RailAlgorithm::kRing, g, bytes, paired));
      }
    }
  }
  // 65 = 5 x 13: mixed radix 16 steps, folding 6 + 1 and a whole buffer more.
  EXPECT_EQ(choose_rail_algorithm(65, 600e3, true), RailAlgorithm::kHalvingDoubling);
  EXPECT_EQ(choose_rail_algorithm(65, 615e3, true), RailAlgorithm::kMixedRadix);
  // 97, a prime: mixed radix is the ring of 96 steps.
  EXPECT_EQ(choose_rail_algorithm(97, 1e6, true), RailAlgorithm::kHalvingDoubling);
  EXPECT_EQ(choose_rail_algorithm(97, 1e9, true), RailAlgorithm::kMixedRadix);
  EXPECT_DOUBLE_EQ(rail_phase_seconds(RailAlgorithm::kMixedRadix, 96, 96e6, true),
                   7 * kRailStepSeconds + 95e6 / kRailBytesPerSecond);
  EXPECT_DOUBLE_EQ(rail_phase_seconds(RailAlgorithm::kHalvingDoubling, 96, 64e6, true),
                   7 * kRailStepSeconds + (63e6 + 64e6) / kRailBytesPerSecond);
  EXPECT_EQ(rail_phase_seconds(RailAlgorithm::kRing, 1, 1e9, true), 0.0);
  // 520 GPUs on 65 servers, in one slice: 4.16 MB per rank is 520 KB per
  // rail, folding (2 (6 + 1) steps); 41.6 MB is 5.2 MB per rail, mixed radix
  // (2 x 16).
  const TopologyView view = TopologyView::packed(520, 8);
  const HierarchicalAlgorithm whole({.chunks = 1});
  EXPECT_EQ(whole.lower(request(CollectiveKind::kAllReduce, 520, 4'160'000), view).steps.size(),
            2u * 7u + 2u * 7u);
  EXPECT_EQ(whole.lower(request(CollectiveKind::kAllReduce, 520, 41'600'000), view).steps.size(),
            2u * 7u + 2u * 16u);
}

TEST(HierarchicalTest, ReduceScatterAndAllGather) {
  for (CollectiveKind kind : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    for (int n : kSizes) {
      const int L = std::min(n, 8), G = n / L;
      const std::int64_t s = std::int64_t{4} * n * 3;
      const CollectiveRequest req = request(kind, n, s);
      for (const RailAlgorithm across : kRailAlgorithms) {
        const auto report =
            check_plan(HierarchicalAlgorithm({.across = across}).lower(req, TopologyView::packed(n, 8)), req);
        ASSERT_TRUE(report.ok()) << to_string(kind) << " n=" << n << " across=" << static_cast<int>(across) << "\n"
                                 << report.summary();
        // Every rank sends alike, but for halving/doubling's extras off a power of two.
        const bool even =
            power_of_two(G) || across == RailAlgorithm::kRing || across == RailAlgorithm::kMixedRadix;
        for (int r = 0; r < n && even; ++r) {
          EXPECT_EQ(report.bytes_sent[r].count(), (L - 1) * s / L + (G - 1) * s / (G * L))
              << to_string(kind) << " n=" << n << " across=" << static_cast<int>(across) << " rank " << r;
        }
        EXPECT_EQ(report.num_steps,
                  static_cast<std::size_t>((L - 1) + rail_steps(G, across, static_cast<double>(s) / L, true)));
      }
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
