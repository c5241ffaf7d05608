// Tests of the plan vocabulary: kind and element-type names round-trip;
// split_bytes splits on element boundaries with the first parts larger and
// a partial element last; validate() reports every problem of a malformed
// request; the TopologyView of a ZionEX group gives each member's server and
// local index, orders rings server by server and rejects ranks outside the
// cluster; an empty plan writes as valid, minimal JSON.

#include "models/collectives/plan.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/collectives/collective_algorithm.h"
#include "models/collectives/plan_json.h"
#include "models/collectives/topology_view.h"
#include "topology/presets.h"

namespace zx::models::collectives {
namespace {

TEST(PlanTest, NamesRoundTrip) {
  for (CollectiveKind kind : all_collective_kinds()) {
    EXPECT_EQ(parse_collective_kind(to_string(kind)), kind);
  }
  EXPECT_EQ(parse_collective_kind("all-reduce"), CollectiveKind::kAllReduce);
  EXPECT_EQ(parse_collective_kind("allreduce"), std::nullopt);
  EXPECT_EQ(parse_data_type("bf16"), DataType::kBf16);
  EXPECT_EQ(size_bytes(DataType::kFp32), 4);
  EXPECT_EQ(size_bytes(DataType::kFp8), 1);
  EXPECT_TRUE(is_reduction(CollectiveKind::kReduceScatter));
  EXPECT_FALSE(is_reduction(CollectiveKind::kAllToAll));
}

TEST(PlanTest, SplitBytesOnElementBoundaries) {
  auto counts = [](const std::vector<sim::Bytes>& v) {
    std::vector<std::int64_t> out;
    for (auto b : v) out.push_back(b.count());
    return out;
  };
  EXPECT_EQ(counts(split_bytes(sim::Bytes(40), 3, 4)), (std::vector<std::int64_t>{16, 12, 12}));
  EXPECT_EQ(counts(split_bytes(sim::Bytes(42), 3, 4)), (std::vector<std::int64_t>{16, 12, 14}));
  EXPECT_EQ(counts(split_bytes(sim::Bytes(3), 2, 4)), (std::vector<std::int64_t>{0, 3}));
}

TEST(PlanTest, ValidateReportsEveryProblem) {
  CollectiveRequest r{.kind = CollectiveKind::kBroadcast,
                      .ranks = {0, 3, 3},
                      .bytes_per_rank = sim::Bytes(-1),
                      .all_to_all_v_bytes = {{1}},
                      .root = 3};
  try {
    validate(r);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "collective request: ranks/2: rank 3 appears twice in the group\n"
              "collective request: bytes_per_rank: expected bytes >= 0, got -1\n"
              "collective request: root: expected a group index in [0, 2], got 3\n"
              "collective request: all_to_all_v_bytes: only all_to_all takes a matrix, not "
              "broadcast");
  }
}

TEST(PlanTest, TopologyViewOfAZionExGroup) {
  const topology::Topology cluster = topology::build_cluster(topology::preset_spec("zionex", 3));
  const TopologyView view = make_topology_view(cluster, {17, 2, 9, 0, 16});
  EXPECT_EQ(view.member(0).server, 2);
  EXPECT_EQ(view.member(0).local_index, 1);
  EXPECT_EQ(view.member(2).server, 1);
  EXPECT_EQ(view.ring_order(), (std::vector<int>{3, 1, 2, 4, 0}));
  EXPECT_EQ(view.members_by_server(), (std::vector<std::vector<int>>{{3, 1}, {2}, {4, 0}}));
  EXPECT_THROW(make_topology_view(cluster, {0, 24}), InputError);
}

TEST(PlanTest, EmptyPlanJson) {
  const CollectivePlan plan{.kind = CollectiveKind::kBroadcast, .group_size = 1};
  EXPECT_EQ(plan_to_json(plan),
            "{\n  \"kind\": \"broadcast\",\n  \"group_size\": 1,\n  \"total_bytes\": 0,\n"
            "  \"chunks\": [],\n  \"steps\": []\n}\n");
}

TEST(PlanTest, PairSizeIsTheEvenSplitsPiece) {
  // pair_size computes one piece of split_bytes; every piece, for totals
  // with and without a partial element, more and fewer elements than ranks.
  for (DataType dtype : {DataType::kFp32, DataType::kFp16, DataType::kFp8}) {
    for (int n : {1, 2, 3, 7, 8, 64}) {
      for (std::int64_t total : {0, 1, 3, 5, 63, 64, 1000, 1 << 20, (1 << 20) + 3}) {
        CollectiveRequest r{.kind = CollectiveKind::kAllToAll, .bytes_per_rank = sim::Bytes(total), .dtype = dtype};
        for (int i = 0; i < n; ++i) r.ranks.push_back(i);
        const std::vector<sim::Bytes> split = block_sizes(r);
        for (int d = 0; d < n; ++d) {
          EXPECT_EQ(pair_size(r, 0, d), split[static_cast<std::size_t>(d)]) << n << " " << total << " " << d;
        }
      }
    }
  }
}

}  // namespace
}  // namespace zx::models::collectives
