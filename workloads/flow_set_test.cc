// Tests of flow sets: the patterns' shapes and flows files' errors.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/error.h"
#include "workloads/flow_set.h"

namespace zx::workloads {
namespace {

TEST(FlowSetTest, PatternShapes) {
  const std::vector<FlowSpec> a2a = make_flow_pattern("all_to_all", 8, sim::Bytes(100));
  EXPECT_EQ(a2a.size(), 56u);  // n (n - 1)
  for (const FlowSpec& f : a2a) EXPECT_NE(f.src_rank, f.dst_rank);
  EXPECT_EQ(make_flow_pattern("incast", 8, sim::Bytes(1)).size(), 7u);
  const std::vector<FlowSpec> ring = make_flow_pattern("ring", 5, sim::Bytes(1));
  EXPECT_EQ(ring.back().dst_rank, 0);
  // A permutation: every rank sends once and receives once, never to itself,
  // and the same seed gives the same permutation.
  const std::vector<FlowSpec> perm = make_flow_pattern("permutation", 64, sim::Bytes(1), 7);
  std::set<int> sources;
  std::set<int> destinations;
  for (const FlowSpec& f : perm) {
    sources.insert(f.src_rank);
    destinations.insert(f.dst_rank);
    EXPECT_NE(f.src_rank, f.dst_rank);
  }
  EXPECT_EQ(sources.size(), 64u);
  EXPECT_EQ(destinations.size(), 64u);
  const std::vector<FlowSpec> again = make_flow_pattern("permutation", 64, sim::Bytes(1), 7);
  for (std::size_t i = 0; i < perm.size(); ++i) EXPECT_EQ(perm[i].dst_rank, again[i].dst_rank);
  try {
    make_flow_pattern("alltoall", 8, sim::Bytes(1));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--pattern: unknown traffic pattern 'alltoall' (did you mean 'all_to_all'?); valid: "
              "all_to_all, incast, permutation, ring");
  }
}

TEST(FlowSetTest, FileErrors) {
  const std::vector<FlowSpec> ok = parse_flow_file(
      R"({"schema_version": 1, "flows": [{"id": 4, "src_rank": 0, "dst_rank": 1, "size_bytes": 10, "start_ns": 1.5}]})",
      "f.json", 2);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].start.count_ps(), 1'500);
  EXPECT_EQ(ok[0].id, 4);
  try {
    parse_flow_file(R"({"schema_version": 1, "flows": [
        {"id": 1, "src_rank": 0, "dst_rank": 16, "size_bytes": -1},
        {"id": 1, "src_rank": 0, "dst_rank": 1, "size_bytes": 5, "start": 3}]})",
                    "f.json", 16);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.json: /flows/0/dst_rank: expected an integer in [0, 15], got 16\n"
              "f.json: /flows/0/size_bytes: expected an integer in [0, 1125899906842624], got -1\n"
              "f.json: /flows/1: unknown key 'start' (did you mean 'start_ns'?)\n"
              "f.json: /flows/1/id: duplicate flow id 1 (first at /flows/0)");
  }
}

}  // namespace
}  // namespace zx::workloads
