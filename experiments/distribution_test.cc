#include "experiments/distribution.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"

namespace zx::experiments {
namespace {

TEST(ParseShard, ReadsKOfN) {
  EXPECT_EQ(parse_shard("0/1", "--shard"), (Shard{0, 1}));
  EXPECT_EQ(parse_shard("3/8", "--shard"), (Shard{3, 8}));
}

TEST(ParseShard, RefusesWhatIsNotAShare) {
  for (const char* bad : {"", "3", "8/8", "-1/4", "1/0", "a/4", "1/4x", "1 /4", "1/100001", "99999999999999999999/4"}) {
    try {
      parse_shard(bad, "--shard");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u);
      EXPECT_EQ(e.diagnostics()[0].source, "--shard");
      EXPECT_NE(e.diagnostics()[0].message.find("expected K/N"), std::string::npos) << e.what();
    }
  }
}

TEST(ShardTasks, EveryTaskInExactlyOneShare) {
  const std::vector<double> costs = {5, 1, 9, 9, 0, 3, 7, 2, 2, 8, 4};
  for (int n = 1; n <= 13; ++n) {
    std::vector<int> seen(costs.size(), 0);
    for (int k = 0; k < n; ++k) {
      for (const std::size_t t : shard_tasks(costs, Shard{k, n})) ++seen[t];
    }
    for (std::size_t t = 0; t < costs.size(); ++t) EXPECT_EQ(seen[t], 1) << "task " << t << ", " << n << " shares";
  }
}

TEST(ShardTasks, LargestFirstToTheLeastLoaded) {
  // LPT by hand: 9 (task 2) -> share 0, 9 (3) -> 1, 8 (9) -> 2, 7 (6) -> 2?
  // no: loads 9, 9, 8, so 7 goes to share 2 (8 is least) -> 15; 5 (0) -> 0
  // (9, 9, 15: ties to the lower share) -> 14; 4 (10) -> 1 -> 13; 3 (5) -> 1
  // -> 16; 2 (7) -> 0 -> 16; 2 (8) -> 2 -> 17; 1 (1) -> 0 -> 17 (16, 16:
  // share 0); 0 (4) -> 1.
  const std::vector<double> costs = {5, 1, 9, 9, 0, 3, 7, 2, 2, 8, 4};
  EXPECT_EQ(shard_tasks(costs, Shard{0, 3}), (std::vector<std::size_t>{0, 1, 2, 7}));
  EXPECT_EQ(shard_tasks(costs, Shard{1, 3}), (std::vector<std::size_t>{3, 4, 5, 10}));
  EXPECT_EQ(shard_tasks(costs, Shard{2, 3}), (std::vector<std::size_t>{6, 8, 9}));
}

TEST(ShardTasks, MoreSharesThanTasksLeavesSomeEmpty) {
  const std::vector<double> costs = {1, 1};
  EXPECT_EQ(shard_tasks(costs, Shard{0, 4}), (std::vector<std::size_t>{0}));
  EXPECT_EQ(shard_tasks(costs, Shard{1, 4}), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(shard_tasks(costs, Shard{3, 4}).empty());
}

TEST(LargestFirst, TiesKeepTaskOrder) {
  const std::vector<double> costs = {2, 5, 2, 5, 1};
  EXPECT_EQ(largest_first(costs), (std::vector<std::size_t>{1, 3, 0, 2, 4}));
}

class SlurmEnvironment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"}) unsetenv(name);
  }
  static void set(const char* id, const char* count, const char* min) {
    setenv("SLURM_ARRAY_TASK_ID", id, 1);
    if (count != nullptr) setenv("SLURM_ARRAY_TASK_COUNT", count, 1);
    if (min != nullptr) setenv("SLURM_ARRAY_TASK_MIN", min, 1);
  }
};

TEST_F(SlurmEnvironment, NoneOutsideAnArray) { EXPECT_FALSE(shard_from_environment().has_value()); }

TEST_F(SlurmEnvironment, ShareFromTheArrayTask) {
  set("5", "4", "3");  // --array=3-6, task 5
  EXPECT_EQ(shard_from_environment(), (Shard{2, 4}));
  set("0", "1", "0");
  EXPECT_EQ(shard_from_environment(), (Shard{0, 1}));
}

TEST_F(SlurmEnvironment, MalformedVariablesAreNamed) {
  set("5", nullptr, "0");
  try {
    shard_from_environment();
    ADD_FAILURE() << "accepted a missing count";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].source, "$SLURM_ARRAY_TASK_COUNT");
  }
  set("7", "4", "0");  // --array=0-6:2 has ids 0, 2, 4, 6: task 7 is past min + count - 1
  try {
    shard_from_environment();
    ADD_FAILURE() << "accepted an id past the range";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].source, "$SLURM_ARRAY_TASK_ID");
    EXPECT_NE(e.diagnostics()[0].message.find("step 1"), std::string::npos) << e.what();
  }
  set("x", "4", "0");
  EXPECT_THROW(shard_from_environment(), InputError);
}

TEST(AvailableCpus, AtLeastOne) { EXPECT_GE(available_cpus(), 1); }

TEST(Mpi, OneProcessIsRankZeroOfOne) {
  EXPECT_FALSE(Mpi::active());
  EXPECT_EQ(Mpi::rank(), 0);
  EXPECT_EQ(Mpi::size(), 1);
}

}  // namespace
}  // namespace zx::experiments
