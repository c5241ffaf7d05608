// Tests of EventCallback: small callables stay inline, large ones go to the
// heap, moves transfer ownership, and every callable is destroyed exactly once.

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>
#include <utility>

#include "sim/callback.h"

namespace zx::sim {
namespace {

TEST(EventCallbackTest, SmallCallableIsInlineAndRuns) {
  int calls = 0;
  EventCallback cb([&calls] { ++calls; });
  EXPECT_TRUE(cb);
  EXPECT_TRUE(cb.is_inline());
  cb();
  cb();
  EXPECT_EQ(calls, 2);
}

TEST(EventCallbackTest, LargeCallableGoesToTheHeap) {
  std::array<std::int64_t, 16> big{};  // 128 bytes of captures
  big[15] = 42;
  std::int64_t seen = 0;
  EventCallback cb([big, &seen] { seen = big[15]; });
  EXPECT_FALSE(cb.is_inline());
  cb();
  EXPECT_EQ(seen, 42);
}

TEST(EventCallbackTest, EmptyByDefaultAndAfterReset) {
  EventCallback cb;
  EXPECT_FALSE(cb);
  cb = EventCallback([] {});
  EXPECT_TRUE(cb);
  cb.reset();
  EXPECT_FALSE(cb);
}

// Counts live copies of a capture so that leaks and double destruction show.
struct Tracker {
  static inline int live = 0;
  Tracker() { ++live; }
  Tracker(const Tracker&) { ++live; }
  Tracker(Tracker&&) noexcept { ++live; }
  ~Tracker() { --live; }
};

// A non-trivial capture (a std::string, a shared_ptr) is moved, not byte-copied,
// and destroyed once, inline or on the heap.
TEST(EventCallbackTest, MovesTransferOwnershipAndDestroyOnce) {
  ASSERT_EQ(Tracker::live, 0);
  {
    auto owned = std::make_shared<int>(7);
    std::weak_ptr<int> weak = owned;
    std::string text = "a string long enough to live on the heap, not in SSO";
    int result = 0;
    EventCallback a([t = Tracker(), p = std::move(owned), s = std::move(text), &result] {
      result = *p + static_cast<int>(s.size());
    });
    EXPECT_EQ(Tracker::live, 1);
    EventCallback b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(Tracker::live, 1);
    EventCallback c;
    c = std::move(b);
    EXPECT_EQ(Tracker::live, 1);
    c();
    EXPECT_EQ(result, 7 + 52);
    EXPECT_FALSE(weak.expired());
    c.reset();
    EXPECT_TRUE(weak.expired());
    EXPECT_EQ(Tracker::live, 0);

    std::array<char, 100> pad{};
    EventCallback heap([t = Tracker(), pad] { (void)pad; });
    EXPECT_FALSE(heap.is_inline());
    EventCallback moved(std::move(heap));
    EXPECT_EQ(Tracker::live, 1);
  }
  EXPECT_EQ(Tracker::live, 0);
}

// Assigning over a live callback destroys the old callable first.
TEST(EventCallbackTest, AssignmentDestroysThePreviousCallable) {
  {
    EventCallback cb([t = Tracker()] {});
    EXPECT_EQ(Tracker::live, 1);
    cb = EventCallback([] {});
    EXPECT_EQ(Tracker::live, 0);
  }
  EXPECT_EQ(Tracker::live, 0);
}

}  // namespace
}  // namespace zx::sim
