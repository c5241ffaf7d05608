// Tests of the stable radix heap against a reference: a stable sort of the
// same (key, push order) pairs. Any interleaving of pushes and pops that
// respects monotonicity must pop exactly the reference order.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "sim/event_queue.h"

namespace zx::sim {
namespace {

TEST(RadixEventQueueTest, PopsInKeyOrderWithFifoTies) {
  RadixEventQueue q;
  EXPECT_TRUE(q.empty());
  q.push(5, 0);
  q.push(3, 1);
  q.push(5, 2);
  q.push(3, 3);
  q.push(0, 4);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.min_key(), 0u);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().slot);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{4, 1, 3, 0, 2}));
}

// A push at the key just popped goes behind the entries already queued there.
TEST(RadixEventQueueTest, PushAtCurrentKeyQueuesBehindEqualKeys) {
  RadixEventQueue q;
  q.push(10, 0);
  q.push(10, 1);
  EXPECT_EQ(q.pop().slot, 0u);
  q.push(10, 2);
  EXPECT_EQ(q.pop().slot, 1u);
  EXPECT_EQ(q.pop().slot, 2u);
  EXPECT_TRUE(q.empty());
}

// Peeking past a horizon moves the queue's base beyond a later push; the
// queue re-buckets and stays correct and stable.
TEST(RadixEventQueueTest, PushBelowThePeekedMinimumRebases) {
  RadixEventQueue q;
  q.push(1000, 0);
  q.push(1000, 1);
  q.push(4000, 2);
  EXPECT_EQ(q.min_key(), 1000u);  // moves the base to 1000
  q.push(400, 3);
  q.push(1000, 4);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
  while (!q.empty()) {
    const auto e = q.pop();
    out.emplace_back(e.key, e.slot);
  }
  EXPECT_EQ(out, (std::vector<std::pair<std::uint64_t, std::uint32_t>>{
                     {400, 3}, {1000, 0}, {1000, 1}, {1000, 4}, {4000, 2}}));
}

// After pops, keys below the end of the run go into it, behind their equals.
TEST(RadixEventQueueTest, PushesIntoARunAfterPops) {
  RadixEventQueue q;
  for (std::uint32_t i = 0; i < 6; ++i) q.push(16 + 2 * i, i);  // 16..26, one bucket
  EXPECT_EQ(q.pop().slot, 0u);                                  // key 16; run 18..26 left
  EXPECT_EQ(q.pop().slot, 1u);                                  // key 18
  q.push(19, 10);  // below the run's head (20)
  q.push(19, 11);  // equal to the new head: behind it
  q.push(23, 12);  // between 22 and 24
  q.push(24, 13);  // equal to a key inside: behind it
  std::vector<std::pair<std::uint64_t, std::uint32_t>> out;
  while (!q.empty()) {
    const auto e = q.pop();
    out.emplace_back(e.key, e.slot);
  }
  EXPECT_EQ(out, (std::vector<std::pair<std::uint64_t, std::uint32_t>>{
                     {19, 10}, {19, 11}, {20, 2}, {22, 3}, {23, 12}, {24, 4}, {24, 13}, {26, 5}}));
}

// With the run empty, a key below `last` (below a key already popped, which
// the engine never pushes) re-buckets everything and keeps order.
TEST(RadixEventQueueTest, PushBelowThePoppedKeyRebases) {
  RadixEventQueue q;
  q.push(1000, 0);
  q.push(5000, 1);
  q.push(5000, 2);
  EXPECT_EQ(q.pop().slot, 0u);  // the run [1000] is now empty
  q.push(700, 3);
  q.push(5000, 4);
  q.push(800, 5);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().slot);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{3, 5, 1, 2, 4}));
}

TEST(RadixEventQueueTest, RemoveIfKeepsOrderOfTheRest) {
  RadixEventQueue q;
  for (std::uint32_t i = 0; i < 20; ++i) q.push(100 + (i % 4) * 7, i);
  (void)q.pop();  // slot 0, key 100; leaves the other key-100 entries in the front
  q.remove_if([](const RadixEventQueue::Entry& e) { return e.slot % 3 == 0; });
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().slot);
  // Key 100: 4, 8, 16 (12 removed); 107: 1, 5, 13, 17; 114: 2, 10, 14; 121: 7, 11, 19.
  EXPECT_EQ(order, (std::vector<std::uint32_t>{4, 8, 16, 1, 5, 13, 17, 2, 10, 14, 7, 11, 19}));
}

// A small bucket becomes the front run by sorting; pushes below the end of
// that run go into it, behind entries with equal keys.
TEST(RadixEventQueueTest, PushesIntoTheSortedFrontRunKeepOrderAndTies) {
  RadixEventQueue q;
  // Keys 16..31 share one bucket while the base is 0.
  q.push(28, 0);
  q.push(17, 1);
  q.push(24, 2);
  q.push(20, 3);
  EXPECT_EQ(q.pop().slot, 1u);  // key 17; keys 20, 24, 28 remain in the run
  EXPECT_EQ(q.upcoming_slot(0), 3u);
  EXPECT_EQ(q.upcoming_slot(1), 2u);
  EXPECT_EQ(q.upcoming_slot(2), 0u);
  EXPECT_EQ(q.upcoming_slot(3), RadixEventQueue::kNone);
  q.push(22, 4);
  q.push(20, 5);  // equal to the run's first key: behind it
  q.push(28, 6);  // equal to the run's last key: behind it
  q.push(17, 7);  // equal to the key just popped: first
  q.push(29, 8);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().slot);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{7, 3, 5, 4, 2, 0, 6, 8}));
}

// Randomised: interleave pushes (at or after the last popped key, with many
// ties and keys spanning all 64 bits) and pops; compare with a stable sort.
TEST(RadixEventQueueTest, RandomisedAgainstStableSort) {
  std::mt19937_64 rng(7);
  RadixEventQueue q;
  struct Item {
    std::uint64_t key;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  std::vector<Item> pending;  // reference: the multiset of queued items
  std::uint64_t now = 0;
  std::uint64_t seq = 0;
  std::uint32_t next_slot = 0;
  for (int round = 0; round < 200'000; ++round) {
    const auto before = [](const Item& a, const Item& b) {
      return a.key != b.key ? a.key < b.key : a.seq < b.seq;
    };
    const std::uint64_t op = rng() % 1000;
    if (!pending.empty() && op < 20) {
      // Peek (may move the base past later pushes) and check the hints.
      std::vector<Item> sorted = pending;
      std::sort(sorted.begin(), sorted.end(), before);
      ASSERT_EQ(q.min_key(), sorted.front().key) << "round " << round;
      for (std::size_t i = 0; i < 4 && i < sorted.size(); ++i) {
        const std::uint32_t hint = q.upcoming_slot(i);
        if (hint != RadixEventQueue::kNone) {
          ASSERT_EQ(hint, sorted[i].slot) << "round " << round;
        }
      }
      continue;
    }
    if (!pending.empty() && op < 22) {
      const std::uint32_t r = static_cast<std::uint32_t>(rng() % 7);
      q.remove_if([r](const RadixEventQueue::Entry& e) { return e.slot % 7 == r; });
      std::erase_if(pending, [r](const Item& i) { return i.slot % 7 == r; });
      ASSERT_EQ(q.size(), pending.size());
      continue;
    }
    const bool push = pending.empty() || (rng() % 100) < 52;
    if (push) {
      std::uint64_t delta = 0;
      switch (rng() % 4) {
        case 0: delta = 0; break;                              // ties
        case 1: delta = rng() % 16; break;                     // near
        case 2: delta = rng() % 1'000'000; break;              // typical
        default: delta = rng() >> (rng() % 64); break;         // anywhere
      }
      const std::uint64_t key = now + std::min(delta, ~std::uint64_t{0} - now);
      pending.push_back({key, seq++, next_slot});
      q.push(key, next_slot++);
    } else {
      auto it = std::min_element(pending.begin(), pending.end(), before);
      const auto e = q.pop();
      ASSERT_EQ(e.key, it->key) << "round " << round;
      ASSERT_EQ(e.slot, it->slot) << "round " << round;
      now = e.key;
      pending.erase(it);
    }
    ASSERT_EQ(q.size(), pending.size());
  }
}

// Freeing drained buckets changes memory, never order: bursts of tens of
// thousands of entries (so buckets pass the 4,096 entries they keep) pop
// exactly as from a queue that keeps its buckets.
TEST(RadixEventQueueTest, ReleasingDrainedBucketsChangesNoOrder) {
  std::mt19937_64 rng(11);
  RadixEventQueue keep;
  RadixEventQueue release;
  release.release_drained_buckets(true);
  std::uint64_t now = 0;
  std::uint32_t slot = 0;
  std::size_t popped = 0;
  for (int round = 0; round < 40; ++round) {
    const std::size_t burst = 1000 + rng() % 40'000;
    for (std::size_t i = 0; i < burst; ++i) {
      const std::uint64_t key = now + (rng() >> (rng() % 44 + 20));
      keep.push(key, slot);
      release.push(key, slot++);
    }
    if (round % 5 == 4) {  // a stale sweep, as the network model does
      keep.remove_if([](const RadixEventQueue::Entry& e) { return e.slot % 3 == 0; });
      release.remove_if([](const RadixEventQueue::Entry& e) { return e.slot % 3 == 0; });
    }
    const std::size_t pops = std::min(keep.size(), burst - burst / 8);
    for (std::size_t i = 0; i < pops; ++i) {
      const auto a = keep.pop();
      const auto b = release.pop();
      ASSERT_EQ(a.key, b.key) << "round " << round;
      ASSERT_EQ(a.slot, b.slot) << "round " << round;
      ASSERT_GE(a.key, now);
      now = a.key;
      ++popped;
    }
    ASSERT_EQ(keep.size(), release.size());
  }
  EXPECT_GT(popped, 500'000u);
}

}  // namespace
}  // namespace zx::sim
