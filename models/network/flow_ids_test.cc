// Tests of the flow network's ids (flow_ids.h): fresh ids in order, ids
// recycled only once released and only a block at a time, the batch that
// waits for enough released ids and the owner's sweep before it, and the
// callbacks' reused slots.

#include "models/network/flow_ids.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

namespace zx::models {
namespace {

TEST(FlowIdsTest, WithoutRecyclingEveryFlowGetsAFreshId) {
  FlowIds ids;
  EXPECT_FALSE(ids.recycles());
  for (std::uint32_t i = 0; i < 5; ++i) EXPECT_EQ(ids.acquire(), i);
  EXPECT_EQ(ids.started(), 5u);
  EXPECT_EQ(ids.in_flight(), 5u);
  const std::vector<std::uint32_t> finished = {0, 1, 2};
  for (std::size_t i = 0; i < finished.size(); ++i) ids.finish();
  ids.release(finished);
  EXPECT_EQ(ids.in_flight(), 2u);
  EXPECT_EQ(ids.acquire(), 5u);  // never a released one
  EXPECT_EQ(ids.started(), 6u);
}

TEST(FlowIdsTest, AnIdComesBackOnlyWhenItsWholeBlockIsReleased) {
  int sweeps = 0;
  FlowIds ids([&] { ++sweeps; });
  ids.set_recycling(true, 4);
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(ids.acquire(), i);  // block 0
  // Two of block 0 finish: the block is not free yet.
  ids.finish();
  ids.finish();
  ids.release(std::vector<std::uint32_t>{0, 1});
  for (std::uint32_t i = 4; i < 8; ++i) EXPECT_EQ(ids.acquire(), i);  // block 1, fresh
  EXPECT_EQ(sweeps, 0);
  // A finished flow whose id is not yet released keeps its block.
  ids.finish();
  ids.finish();
  EXPECT_EQ(ids.acquire(), 8u);  // block 2, fresh
  ids.release(std::vector<std::uint32_t>{2, 3});
  EXPECT_EQ(sweeps, 1);  // block 0 free: the owner swept before it goes out
  for (std::uint32_t i = 9; i < 12; ++i) EXPECT_EQ(ids.acquire(), i);  // block 2's rest
  EXPECT_EQ(ids.acquire(), 0u);  // then block 0 again, in order
  EXPECT_EQ(ids.acquire(), 1u);
  EXPECT_EQ(ids.started(), 14u);
  EXPECT_EQ(ids.in_flight(), 10u);
}

TEST(FlowIdsTest, TheBlockHandingOutIdsIsNotRecycledBeforeItIsUsedUp) {
  FlowIds ids;
  ids.set_recycling(true, 4);
  EXPECT_EQ(ids.acquire(), 0u);
  EXPECT_EQ(ids.acquire(), 1u);
  ids.finish();
  ids.finish();
  ids.release(std::vector<std::uint32_t>{0, 1});
  EXPECT_EQ(ids.acquire(), 2u);
  EXPECT_EQ(ids.acquire(), 3u);
  ids.finish();
  ids.finish();
  ids.release(std::vector<std::uint32_t>{2, 3});
  // Block 0 is used up and all released: retired when the next id is due,
  // and handed out again at once (nothing else in flight).
  EXPECT_EQ(ids.acquire(), 0u);
}

TEST(FlowIdsTest, ReleasedBlocksWaitForABatchOfAQuarterOfTheFlowsInFlight) {
  int sweeps = 0;
  FlowIds ids([&] { ++sweeps; });
  ids.set_recycling(true, 1);
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(ids.acquire(), i);
  ids.finish();
  ids.release(std::vector<std::uint32_t>{0});  // 1 of 9 in flight: waits
  EXPECT_EQ(sweeps, 0);
  EXPECT_EQ(ids.acquire(), 10u);
  ids.finish();
  ids.finish();
  ids.release(std::vector<std::uint32_t>{2});  // 2 x 4 >= 8 in flight: a batch
  EXPECT_EQ(sweeps, 1);
  ids.release(std::vector<std::uint32_t>{1});  // waits for the next batch
  EXPECT_EQ(sweeps, 1);
  // The batch goes out lowest block first, then fresh ids again.
  std::vector<std::uint32_t> next;
  for (int i = 0; i < 4; ++i) next.push_back(ids.acquire());
  EXPECT_EQ(next, (std::vector<std::uint32_t>{0, 2, 11, 12}));
}

TEST(FlowIdsTest, NoIdIsInUseTwice) {
  // Random finishes: an id handed out again was released since.
  FlowIds ids;
  ids.set_recycling(true, 8);
  std::set<std::uint32_t> live;
  std::uint32_t largest = 0;
  std::uint64_t state = 1;
  for (int step = 0; step < 5000; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((state >> 60) < 9 || live.empty()) {
      const std::uint32_t id = ids.acquire();
      largest = std::max(largest, id);
      EXPECT_TRUE(live.insert(id).second) << "id " << id << " handed out while in use";
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>((state >> 20) % live.size()));
      const std::uint32_t id = *it;
      live.erase(it);
      ids.finish();
      ids.release(std::vector<std::uint32_t>{id});
    }
  }
  EXPECT_EQ(ids.in_flight(), live.size());
  EXPECT_LT(largest + 1, ids.started() / 3 * 2);  // ids did come back
}

TEST(FlowIdsTest, CallbackSlotsAreReused) {
  FlowIds ids;
  EXPECT_EQ(ids.add_callback({}), FlowIds::kNoCallback);
  int ran = 0;
  const std::uint32_t a = ids.add_callback([&] { ran += 1; });
  const std::uint32_t b = ids.add_callback([&] { ran += 10; });
  EXPECT_NE(a, b);
  ids.take_callback(a)();
  EXPECT_EQ(ran, 1);
  const std::uint32_t c = ids.add_callback([&] { ran += 100; });
  EXPECT_EQ(c, a);  // a's slot, free again
  EXPECT_EQ(ids.callback_slots(), 2u);
  ids.take_callback(b)();
  ids.take_callback(c)();
  EXPECT_EQ(ran, 111);
}

TEST(FlowIdsTest, BlockSizeMustBeAPowerOfTwo) {
  FlowIds ids;
  EXPECT_THROW(ids.set_recycling(true, 3), std::invalid_argument);
  EXPECT_THROW(ids.set_recycling(true, 0), std::invalid_argument);
  ids.set_recycling(true, 4096);
  EXPECT_EQ(ids.block_ids(), 4096u);
}

}  // namespace
}  // namespace zx::models
