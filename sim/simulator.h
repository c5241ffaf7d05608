// File: sim/simulator.h
//
// The discrete-event engine: a single-threaded simulator that runs callbacks
// in order of (time, scheduling sequence).
//
// Ordering. Events run in non-decreasing time; two events at the same time
// run in the order they were scheduled. Nothing else (addresses, hash order,
// container internals) affects the order, so a run is a pure function of its
// inputs.
//
// Cost. Scheduling stores the callback in a pooled 64-byte slot (callables of
// up to EventCallback::kInlineBytes allocate nothing) and a 16-byte entry in a
// stable radix heap (sim/event_queue.h). Cancelling marks the slot (a
// tombstone, as ns-3's scheduler does) and is O(1); tombstones are dropped
// when they reach the front, or swept in one pass when they outnumber the live
// events.
//
// Fingerprint. Every executed event folds (time in ps, label) into a 64-bit
// hash (after OMNeT++'s fingerprints). End-to-end tests pin it: the same
// schedule gives the same fingerprint, any change in what runs when, or in
// the labels, changes it.
//
// An instance is passed by reference to whatever schedules events; there is
// no global simulator.

#ifndef ZIONSIM_SIM_SIMULATOR_H_
#define ZIONSIM_SIM_SIMULATOR_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "sim/callback.h"
#include "sim/event_queue.h"
#include "sim/time.h"

namespace zx::sim {

/// Handle to a scheduled event. Never reused within one Simulator (a slot's
/// generation would have to wrap after 2^32 reuses).
enum class EventId : std::uint64_t {};

/// A 64-bit tag naming what an event is, for the fingerprint and for tracing.
/// Built from a string at compile time: EventLabel("flow_done").
class EventLabel {
 public:
  constexpr EventLabel() = default;
  explicit constexpr EventLabel(std::string_view name) : value_(fnv1a(name)) {}
  static constexpr EventLabel from_value(std::uint64_t value) {
    EventLabel label;
    label.value_ = value;
    return label;
  }
  constexpr std::uint64_t value() const { return value_; }
  constexpr bool operator==(const EventLabel&) const = default;

 private:
  static constexpr std::uint64_t fnv1a(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
    for (char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;  // FNV-1a 64-bit prime
    }
    return h;
  }
  std::uint64_t value_ = 0;
};

/// Scheduling an event before now(): a bug in the caller.
class SchedulingError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// What one call of run() did.
struct RunStats {
  std::uint64_t events_executed = 0;
  /// Why run() returned.
  enum class StopReason { kQueueEmpty, kHorizonReached, kStopRequested } stop_reason =
      StopReason::kQueueEmpty;
};

class Simulator {
 public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Schedules `callback` at `when`. Throws SchedulingError if `when` < now()
  /// (the message names both times) or `when` is TimePoint::max().
  EventId schedule(TimePoint when, EventCallback&& callback, EventLabel label = {});
  /// Schedules `callback` at now() + `delay`; requires `delay` >= 0.
  EventId schedule_after(Duration delay, EventCallback&& callback, EventLabel label = {});

  /// Cancels a pending event. Returns false if it already ran, was already
  /// cancelled, or never existed. O(1).
  bool cancel(EventId id);

  /// The current simulated time: the time of the event running now, or of
  /// the last one run, or the horizon of the last run(until).
  TimePoint now() const { return now_; }

  /// Runs events until none remain, stop() is called, or the next event is
  /// later than `until`. Unless stop() ended it, a run with a finite `until`
  /// leaves now() == `until`. An exception thrown by a callback propagates
  /// out of run(); the engine stays usable.
  RunStats run(TimePoint until = TimePoint::max());

  /// Makes the running run() return after the current event.
  void stop() { stop_requested_ = true; }

  /// Events scheduled and neither run nor cancelled.
  std::uint64_t pending() const { return live_pending_; }
  /// No pending event is earlier than this (the earliest scheduled one,
  /// which may have been cancelled); TimePoint::max() when none is. For a
  /// caller that runs in slices of simulated time, to start the next slice
  /// where something happens rather than step through idle time.
  TimePoint next_event_bound();
  /// Events run since construction.
  std::uint64_t executed() const { return executed_; }
  /// The fold of (time, label) over every event run so far.
  std::uint64_t fingerprint() const { return fingerprint_; }

 private:
  struct Slot;
  // One chunk of 64-byte slots is one 2 MiB huge page.
  static constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
  static constexpr std::uint32_t kSlotsPerChunk = 32768;
  struct ChunkDeleter {
    void operator()(Slot* chunk) const;
  };
  using Chunk = std::unique_ptr<Slot, ChunkDeleter>;
  static Chunk make_chunk();

  Slot& slot(std::uint32_t index);
  std::uint32_t allocate_slot();
  void free_slot(std::uint32_t index);
  void sweep_tombstones();
  [[noreturn]] void throw_past(TimePoint when) const;

  TimePoint now_;
  RadixEventQueue queue_;
  // Slots live in fixed chunks so that a running callback never moves when
  // the callbacks it schedules make the pool grow.
  std::vector<Chunk> chunks_;
  std::uint32_t free_head_;
  std::uint32_t running_slot_;  // the slot whose callback is running, if any
  std::uint32_t slot_count_ = 0;
  std::uint64_t live_pending_ = 0;
  std::uint64_t tombstones_ = 0;
  std::uint64_t executed_ = 0;
  std::uint64_t fingerprint_;
  bool stop_requested_ = false;
  bool running_ = false;
};

/// Folds one executed event into a fingerprint. Each step is a bijection of
/// the running hash, so changing one event's time or label changes the result.
constexpr std::uint64_t fold_fingerprint(std::uint64_t hash, std::int64_t time_ps,
                                         std::uint64_t label) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;  // FNV-1a 64-bit prime
  hash = (hash ^ static_cast<std::uint64_t>(time_ps)) * kPrime;
  hash = (hash ^ label) * kPrime;
  return hash;
}

/// The fingerprint of a run that executed nothing.
inline constexpr std::uint64_t kEmptyFingerprint = 0xcbf29ce484222325ULL;  // FNV-1a basis

}  // namespace zx::sim

#endif  // ZIONSIM_SIM_SIMULATOR_H_
