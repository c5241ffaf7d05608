// Tests of parallel_for: every index runs exactly once whatever the thread
// count, and the error rethrown is the lowest index's, not the first in time.

#include "experiments/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace zx::experiments {
namespace {

TEST(ParallelForTest, EveryIndexOnce) {
  for (int threads : {0, 1, 2, 7}) {
    std::vector<std::atomic<int>> calls(1000);
    parallel_for(calls.size(), threads, [&](std::size_t i) { ++calls[i]; });
    for (std::size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i].load(), 1) << i << " threads " << threads;
  }
  parallel_for(0, 4, [](std::size_t) { FAIL() << "no index to call"; });
}

TEST(ParallelForTest, RethrowsTheLowestIndexAfterAllRan) {
  for (int threads : {1, 2, 4}) {
    std::atomic<int> ran{0};
    try {
      parallel_for(100, threads, [&](std::size_t i) {
        ++ran;
        if (i == 70 || i == 30) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "expected an exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "30");
    }
    EXPECT_EQ(ran.load(), 100);
  }
}

}  // namespace
}  // namespace zx::experiments
