// Tests of the symbolic plan checker on hand-built 2- and 3-rank plans: a
// right all-reduce passes with its bytes and critical path counted; a missing
// transfer, a contribution reduced twice, a wrong transfer size, local work
// that does not match the reductions, unordered steps that copy into and read
// the same chunk, and a chunk table that does not cover the buffer are each
// reported.

#include "models/collectives/testing/plan_checker.h"

#include <gtest/gtest.h>

namespace zx::models::collectives::testing {
namespace {

CollectiveRequest request(int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = CollectiveKind::kAllReduce, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

Transfer transfer(int src, int dst, std::int64_t size, TransferOp op, std::uint32_t chunk) {
  return {
      .src = src, .dst = dst, .size = sim::Bytes(size), .op = op, .chunks = {{chunk, chunk + 1}}};
}

// 2 ranks, 2 chunks of 8 bytes: rank 0 reduces chunk 0 from rank 1 and rank
// 1 chunk 1 from rank 0; then they swap the results.
CollectivePlan two_rank_all_reduce() {
  CollectivePlan plan{.kind = CollectiveKind::kAllReduce, .group_size = 2};
  plan.chunks = {{.size = sim::Bytes(8)}, {.size = sim::Bytes(8)}};
  plan.steps.push_back({.transfers = {transfer(1, 0, 8, TransferOp::kReduce, 0),
                                      transfer(0, 1, 8, TransferOp::kReduce, 1)},
                        .local_work = {{0, sim::Bytes(8)}, {1, sim::Bytes(8)}}});
  plan.steps.push_back({.transfers = {transfer(0, 1, 8, TransferOp::kCopy, 0),
                                      transfer(1, 0, 8, TransferOp::kCopy, 1)},
                        .after = {0}});
  return plan;
}

bool mentions(const PlanReport& report, std::string_view text) {
  return report.summary().find(text) != std::string::npos;
}

TEST(PlanCheckerTest, RightPlanPasses) {
  const PlanReport report = check_plan(two_rank_all_reduce(), request(2, 16));
  ASSERT_TRUE(report.ok()) << report.summary();
  EXPECT_EQ(report.bytes_sent[0].count(), 16);
  EXPECT_EQ(report.bytes_received[1].count(), 16);
  EXPECT_EQ(report.total_bytes.count(), 32);
  EXPECT_EQ(report.total_reduce_bytes.count(), 16);
  EXPECT_EQ(report.num_steps, 2u);
  EXPECT_EQ(report.num_transfers, 4u);
  EXPECT_EQ(report.critical_path_steps, 2u);
}

TEST(PlanCheckerTest, ReplayRunsOnlyWithinItsMemoryLimit) {
  // 2 ranks and the NVLink switch x 2 chunks of one-word sets and 2 steps of one-word sets.
  EXPECT_EQ(replay_bytes(two_rank_all_reduce()), 3u * 2 * (8 + 24) + 2 * (8 + 24));
  CollectivePlan plan = two_rank_all_reduce();
  plan.steps[1].transfers.pop_back();  // wrong only in its result
  EXPECT_TRUE(check_plan(plan, request(2, 16)).replayed);
  const PlanReport limited = check_plan(plan, request(2, 16), replay_bytes(plan) - 1);
  EXPECT_FALSE(limited.replayed);
  EXPECT_TRUE(limited.ok()) << "without the replay, a wrong result goes unseen";
  const PlanReport enough = check_plan(plan, request(2, 16), replay_bytes(plan));
  EXPECT_TRUE(enough.replayed);
  EXPECT_FALSE(enough.ok());
  // The linear checks run either way.
  plan.steps[0].transfers[0].size = sim::Bytes(7);
  EXPECT_TRUE(mentions(check_plan(plan, request(2, 16), 0), "size 7 but its chunks hold 8 bytes"));
}

TEST(PlanCheckerTest, MissingTransferLeavesAPartialResult) {
  CollectivePlan plan = two_rank_all_reduce();
  plan.steps[1].transfers.pop_back();
  const PlanReport report = check_plan(plan, request(2, 16));
  EXPECT_TRUE(mentions(report, "rank 0 ends with chunk 1 = {0}, expected {0,1}"))
      << report.summary();
}

TEST(PlanCheckerTest, DoubleReductionIsCaught) {
  CollectivePlan plan = two_rank_all_reduce();
  plan.steps[1].transfers[0].op = TransferOp::kReduce;
  plan.steps[1].local_work = {{1, sim::Bytes(8)}};
  const PlanReport report = check_plan(plan, request(2, 16));
  EXPECT_TRUE(mentions(report, "counted twice")) << report.summary();
}

TEST(PlanCheckerTest, SizeAndLocalWorkMustMatchTheChunks) {
  CollectivePlan plan = two_rank_all_reduce();
  plan.steps[0].transfers[0].size = sim::Bytes(7);
  EXPECT_TRUE(mentions(check_plan(plan, request(2, 16)), "size 7 but its chunks hold 8 bytes"));
  plan = two_rank_all_reduce();
  plan.steps[0].local_work.pop_back();
  EXPECT_TRUE(mentions(check_plan(plan, request(2, 16)), "local work does not match"));
}

TEST(PlanCheckerTest, UnorderedCopyAndReadRace) {
  CollectivePlan plan = two_rank_all_reduce();
  plan.steps[1].after.clear();
  EXPECT_TRUE(mentions(check_plan(plan, request(2, 16)), "races with step 0"));
}

TEST(PlanCheckerTest, ChunkTableMustCoverTheBuffer) {
  EXPECT_TRUE(mentions(check_plan(two_rank_all_reduce(), request(2, 20)),
                       "chunks hold 16 bytes, the buffer is 20"));
  CollectiveRequest gather = request(2, 16);
  gather.kind = CollectiveKind::kAllGather;
  CollectivePlan plan = two_rank_all_reduce();
  plan.kind = CollectiveKind::kAllGather;
  EXPECT_TRUE(mentions(check_plan(plan, gather), "origin/destination pattern"));
}

}  // namespace
}  // namespace zx::models::collectives::testing
