// Tests of the engine: order of events and ties, cancellation, errors on
// scheduling into the past, horizons, a randomised million-event run against
// a reference sort, the hold model's reference results, and the fingerprint.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/hold_model.h"
#include "sim/simulator.h"

namespace zx::sim {
namespace {

TimePoint at_ps(std::int64_t ps) { return TimePoint::from_ps(ps); }

TEST(SimulatorTest, RunsEventsInTimeOrder) {
  Simulator sim;
  std::vector<int> order;
  sim.schedule(at_ps(30), [&] { order.push_back(3); });
  sim.schedule(at_ps(10), [&] { order.push_back(1); });
  sim.schedule(at_ps(20), [&] { order.push_back(2); });
  EXPECT_EQ(sim.pending(), 3u);
  const RunStats stats = sim.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(stats.events_executed, 3u);
  EXPECT_EQ(stats.stop_reason, RunStats::StopReason::kQueueEmpty);
  EXPECT_EQ(sim.now(), at_ps(30));
  EXPECT_EQ(sim.pending(), 0u);
}

// Events at equal times run in the order they were scheduled, including
// events scheduled for "now" by a running event: they queue behind the
// events already due at this instant.
TEST(SimulatorTest, TiesRunInSchedulingOrder) {
  Simulator sim;
  std::vector<std::string> order;
  sim.schedule(at_ps(5), [&] {
    order.push_back("a");
    sim.schedule_after(Duration::zero(), [&] { order.push_back("a-child"); });
  });
  sim.schedule(at_ps(5), [&] { order.push_back("b"); });
  sim.schedule(at_ps(5), [&] { order.push_back("c"); });
  sim.run();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c", "a-child"}));
}

TEST(SimulatorTest, NowIsTheTimeOfTheRunningEvent) {
  Simulator sim;
  std::vector<std::int64_t> seen;
  sim.schedule(at_ps(7), [&] {
    seen.push_back(sim.now().count_ps());
    sim.schedule_after(Duration::ns(1), [&] { seen.push_back(sim.now().count_ps()); });
  });
  sim.run();
  EXPECT_EQ(seen, (std::vector<std::int64_t>{7, 1'007}));
}

// A cancelled event never runs; cancelling is idempotent; cancelling after the
// event ran, or an id that never existed, returns false and changes nothing.
TEST(SimulatorTest, CancellationSemantics) {
  Simulator sim;
  std::vector<int> ran;
  const EventId a = sim.schedule(at_ps(1), [&] { ran.push_back(1); });
  const EventId b = sim.schedule(at_ps(2), [&] { ran.push_back(2); });
  const EventId c = sim.schedule(at_ps(3), [&] { ran.push_back(3); });
  EXPECT_TRUE(sim.cancel(b));
  EXPECT_FALSE(sim.cancel(b));
  EXPECT_EQ(sim.pending(), 2u);
  sim.run();
  EXPECT_EQ(ran, (std::vector<int>{1, 3}));
  EXPECT_FALSE(sim.cancel(a));  // cancel after run
  EXPECT_FALSE(sim.cancel(c));
  EXPECT_FALSE(sim.cancel(EventId{0xdeadbeef'00000123}));
  // Slots are reused, but an old id never cancels the new occupant.
  int reused = 0;
  sim.schedule(at_ps(10), [&] { ++reused; });
  EXPECT_FALSE(sim.cancel(a));
  EXPECT_FALSE(sim.cancel(b));
  sim.run();
  EXPECT_EQ(reused, 1);
}

// An event can cancel a later event, and a running event cannot cancel itself.
TEST(SimulatorTest, CancelFromInsideAnEvent) {
  Simulator sim;
  bool later_ran = false;
  EventId self{};
  const EventId later = sim.schedule(at_ps(20), [&] { later_ran = true; });
  self = sim.schedule(at_ps(10), [&] {
    EXPECT_TRUE(sim.cancel(later));
    EXPECT_FALSE(sim.cancel(self));
  });
  sim.run();
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(sim.now(), at_ps(10));
}

// Many cancellations are swept without changing what runs or its order.
TEST(SimulatorTest, MassCancellationKeepsOrder) {
  Simulator sim;
  std::vector<EventId> ids;
  std::vector<std::int64_t> ran;
  for (std::int64_t i = 0; i < 10'000; ++i) {
    ids.push_back(sim.schedule(at_ps(i % 97), [&ran, i] { ran.push_back(i); }));
  }
  for (std::int64_t i = 0; i < 10'000; ++i) {
    if (i % 10 != 0) {
      EXPECT_TRUE(sim.cancel(ids[static_cast<std::size_t>(i)]));
    }
  }
  EXPECT_EQ(sim.pending(), 1'000u);
  sim.run();
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 0; i < 10'000; i += 10) expected.push_back(i);
  std::stable_sort(expected.begin(), expected.end(),
                   [](std::int64_t x, std::int64_t y) { return x % 97 < y % 97; });
  EXPECT_EQ(ran, expected);
}

// Scheduling into the past is an error whose message names both times.
TEST(SimulatorTest, SchedulingIntoThePastNamesBothTimes) {
  Simulator sim;
  sim.schedule(at_ps(2'000'000), [&] {
    try {
      sim.schedule(at_ps(1'500), [] {});
      ADD_FAILURE() << "no error";
    } catch (const SchedulingError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("t=1.5 ns"), std::string::npos) << what;
      EXPECT_NE(what.find("t=2 us"), std::string::npos) << what;
    }
    EXPECT_THROW(sim.schedule_after(Duration::ps(-1), [] {}), SchedulingError);
  });
  sim.run();
  EXPECT_THROW(sim.schedule(TimePoint::max(), [] {}), SchedulingError);
  EXPECT_THROW(sim.schedule(at_ps(3'000'000), EventCallback()), SchedulingError);
  EXPECT_EQ(sim.pending(), 0u);
}

// run(until) runs events at or before the horizon, leaves now() at the
// horizon, and a later run continues where it stopped, including events
// scheduled between the two runs earlier than the pending ones.
TEST(SimulatorTest, RunUntilHorizon) {
  Simulator sim;
  std::vector<std::int64_t> ran;
  auto record = [&] { ran.push_back(sim.now().count_ps()); };
  sim.schedule(at_ps(100), record);
  sim.schedule(at_ps(200), record);
  sim.schedule(at_ps(300), record);
  RunStats stats = sim.run(at_ps(200));
  EXPECT_EQ(stats.events_executed, 2u);
  EXPECT_EQ(stats.stop_reason, RunStats::StopReason::kHorizonReached);
  EXPECT_EQ(sim.now(), at_ps(200));
  sim.schedule(at_ps(250), record);  // below the event the horizon peeked at
  sim.schedule(at_ps(200), record);  // exactly now
  stats = sim.run(at_ps(1'000));
  EXPECT_EQ(ran, (std::vector<std::int64_t>{100, 200, 200, 250, 300}));
  EXPECT_EQ(stats.stop_reason, RunStats::StopReason::kQueueEmpty);
  EXPECT_EQ(sim.now(), at_ps(1'000));
}

TEST(SimulatorTest, StopEndsTheRunAfterTheCurrentEvent) {
  Simulator sim;
  int count = 0;
  for (int i = 1; i <= 5; ++i) {
    sim.schedule(at_ps(i), [&] {
      if (++count == 2) sim.stop();
    });
  }
  RunStats stats = sim.run();
  EXPECT_EQ(count, 2);
  EXPECT_EQ(stats.stop_reason, RunStats::StopReason::kStopRequested);
  EXPECT_EQ(sim.now(), at_ps(2));
  EXPECT_EQ(sim.pending(), 3u);
  sim.run();
  EXPECT_EQ(count, 5);
}

// An exception from a callback leaves run(); the engine stays consistent and
// can run the remaining events.
TEST(SimulatorTest, ExceptionInCallbackPropagatesAndEngineRecovers) {
  Simulator sim;
  int ran = 0;
  const EventId failing = sim.schedule(at_ps(1), [] { throw std::runtime_error("boom"); });
  sim.schedule(at_ps(2), [&] { ++ran; });
  EXPECT_THROW(sim.run(), std::runtime_error);
  EXPECT_FALSE(sim.cancel(failing));
  EXPECT_EQ(sim.pending(), 1u);
  sim.run();
  EXPECT_EQ(ran, 1);
  EXPECT_THROW(sim.schedule(at_ps(5), [&] { sim.run(); }); sim.run(), SchedulingError);
}

// Two simulators in one process are independent.
TEST(SimulatorTest, InstancesAreIndependent) {
  Simulator a;
  Simulator b;
  int in_a = 0;
  int in_b = 0;
  a.schedule(at_ps(10), [&] { ++in_a; });
  b.schedule(at_ps(20), [&] { ++in_b; });
  a.run();
  EXPECT_EQ(in_a, 1);
  EXPECT_EQ(in_b, 0);
  EXPECT_EQ(b.pending(), 1u);
  EXPECT_EQ(a.now(), at_ps(10));
  EXPECT_EQ(b.now(), TimePoint::zero());
}

// One million events with random times (many ties) and random cancellations,
// scheduled partly up front and partly from inside events, must run exactly
// in the order of a reference stable sort by (time, scheduling order).
TEST(SimulatorTest, MillionRandomEventsMatchReferenceSort) {
  constexpr int kInitial = 200'000;
  constexpr int kTotal = 1'000'000;
  Simulator sim;
  std::mt19937_64 rng(12345);
  struct Scheduled {
    std::int64_t time_ps;
    std::int64_t seq;
    bool cancelled;
  };
  std::vector<Scheduled> all;
  all.reserve(kTotal);
  std::vector<EventId> ids;
  ids.reserve(kTotal);
  std::vector<std::int64_t> ran;
  ran.reserve(kTotal);

  // Each event records its scheduling sequence; some schedule a new event.
  std::function<void(std::int64_t)> add = [&](std::int64_t when) {
    const auto seq = static_cast<std::int64_t>(all.size());
    all.push_back({when, seq, false});
    ids.push_back(sim.schedule(at_ps(when), [&, seq] {
      ran.push_back(seq);
      if (static_cast<int>(all.size()) < kTotal) {
        add(sim.now().count_ps() + static_cast<std::int64_t>(rng() % 1'000));
      }
      if (rng() % 50 == 0 && !ids.empty()) {  // cancel a random earlier event, if pending
        const std::size_t victim = rng() % ids.size();
        if (sim.cancel(ids[victim])) all[victim].cancelled = true;
      }
    }));
  };
  for (int i = 0; i < kInitial; ++i) add(static_cast<std::int64_t>(rng() % 100'000));
  sim.run();
  while (static_cast<int>(all.size()) < kTotal) add(sim.now().count_ps());  // top up if needed
  sim.run();

  std::vector<Scheduled> expected;
  for (const Scheduled& s : all) {
    if (!s.cancelled) expected.push_back(s);
  }
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Scheduled& x, const Scheduled& y) { return x.time_ps < y.time_ps; });
  ASSERT_EQ(ran.size(), expected.size());
  for (std::size_t i = 0; i < ran.size(); ++i) {
    ASSERT_EQ(ran[i], expected[i].seq) << "position " << i;
  }
  EXPECT_EQ(sim.executed(), ran.size());
  EXPECT_GT(all.size() - ran.size(), 1'000u) << "too few cancellations to test them";
}

// The hold model on the engine reaches the reference final time and hash of
// ../shared/BENCHMARKS.md (the small sizes meant for tests).
TEST(SimulatorTest, HoldModelMatchesReferenceResults) {
  for (const hold::Reference& ref : hold::kHoldReferences) {
    if (ref.events > 200'000) continue;  // the large sizes are the benchmark's
    Simulator sim;
    std::mt19937_64 rng(hold::kSeed);
    std::uint64_t hash = hold::kHashBasis;
    std::int64_t count = 0;
    struct Event {
      Simulator* sim;
      std::mt19937_64* rng;
      std::uint64_t* hash;
      std::int64_t* count;
      std::int64_t limit;
      void operator()() const {
        *hash = hold::fold(*hash, sim->now().count_ps());
        if (++*count == limit) sim->stop();
        sim->schedule_after(Duration::ps(hold::draw_delay_ps(*rng)), Event(*this));
      }
    };
    for (std::int64_t i = 0; i < ref.pending; ++i) {
      sim.schedule(at_ps(hold::draw_delay_ps(rng)), Event{&sim, &rng, &hash, &count, ref.events});
    }
    sim.run();
    EXPECT_EQ(sim.now().count_ps(), ref.final_time_ps) << "P=" << ref.pending;
    EXPECT_EQ(hash, ref.hash) << "P=" << ref.pending;
    EXPECT_EQ(sim.pending(), static_cast<std::uint64_t>(ref.pending));
  }
}

// Builds a small schedule whose shape depends on `variant` and returns the
// fingerprint of its run.
std::uint64_t fingerprint_of(int variant) {
  Simulator sim;
  const EventLabel tick("tick");
  const EventLabel tock(variant == 2 ? "tock2" : "tock");
  for (int i = 0; i < 100; ++i) {
    const std::int64_t t = i * 10 + (variant == 1 && i == 57 ? 1 : 0);
    sim.schedule(at_ps(t), [] {}, i % 2 == 0 ? tick : tock);
  }
  sim.run();
  return sim.fingerprint();
}

// The same schedule gives the same fingerprint; moving one event by 1 ps or
// renaming a label changes it. A run of nothing has the empty fingerprint.
TEST(SimulatorTest, FingerprintIsStableAndSensitive) {
  EXPECT_EQ(fingerprint_of(0), fingerprint_of(0));
  EXPECT_NE(fingerprint_of(0), fingerprint_of(1));
  EXPECT_NE(fingerprint_of(0), fingerprint_of(2));
  EXPECT_NE(fingerprint_of(1), fingerprint_of(2));
  Simulator empty;
  empty.run();
  EXPECT_EQ(empty.fingerprint(), kEmptyFingerprint);
  // The fingerprint is exactly the documented fold over (time, label).
  std::uint64_t manual = kEmptyFingerprint;
  for (int i = 0; i < 100; ++i) {
    manual = fold_fingerprint(manual, i * 10, EventLabel(i % 2 == 0 ? "tick" : "tock").value());
  }
  EXPECT_EQ(fingerprint_of(0), manual);
  // Cancelled events leave no trace in the fingerprint.
  Simulator with_cancel;
  for (int i = 0; i < 100; ++i) {
    with_cancel.schedule(at_ps(i * 10), [] {}, EventLabel(i % 2 == 0 ? "tick" : "tock"));
  }
  const EventId extra = with_cancel.schedule(at_ps(55), [] {}, EventLabel("extra"));
  EXPECT_TRUE(with_cancel.cancel(extra));
  with_cancel.run();
  EXPECT_EQ(with_cancel.fingerprint(), manual);
}

TEST(EventLabelTest, DistinctNamesDistinctValues) {
  static_assert(EventLabel("flow_done").value() == EventLabel("flow_done").value());
  EXPECT_NE(EventLabel("flow_done"), EventLabel("flow_start"));
  EXPECT_EQ(EventLabel().value(), 0u);
  EXPECT_EQ(EventLabel::from_value(42).value(), 42u);
}

}  // namespace
}  // namespace zx::sim
