#include "sim/simulator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <limits>
#include <new>
#include <utility>

#include <fmt/format.h>

namespace zx::sim {

namespace {
constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

// Sweep tombstones once they outnumber live events and are this many.
constexpr std::uint64_t kMinTombstonesToSweep = 1024;

// After popping an event, the slots of the events up to this many places
// behind the next one are prefetched (figures in sim/simulator_benchmark.cc).
constexpr std::size_t kPrefetchAhead = 2;
}  // namespace

// One pending event: 64 bytes, one cache line. `link` is the next free slot
// while the slot is free, and otherwise one of the marks below; folding the
// state into it keeps the slot at 64 bytes.
struct Simulator::Slot {
  static constexpr std::uint32_t kPending = kNoSlot - 1;
  static constexpr std::uint32_t kCancelled = kNoSlot - 2;
  static constexpr std::uint32_t kRunning = kNoSlot - 3;
  /// Free-list links are below this.
  static constexpr std::uint32_t kFirstMark = kRunning;

  EventCallback callback;
  std::uint64_t label = 0;
  std::uint32_t generation = 0;
  std::uint32_t link = kNoSlot;
};

void Simulator::ChunkDeleter::operator()(Slot* chunk) const {
  for (std::uint32_t i = 0; i < kSlotsPerChunk; ++i) chunk[i].~Slot();
  std::free(chunk);
}

Simulator::Chunk Simulator::make_chunk() {
  static_assert(sizeof(Slot) == 64, "a slot should fill one cache line");
  constexpr std::size_t kBytes = sizeof(Slot) * kSlotsPerChunk;
  void* memory = std::aligned_alloc(kHugePageBytes, kBytes);
  if (memory == nullptr) throw std::bad_alloc();
  // A million pending events spread their slots over 64 MB: with 4 KiB pages
  // nearly every event would miss the TLB. Ask for transparent huge pages
  // (a hint; ignored where unsupported).
  ::madvise(memory, kBytes, MADV_HUGEPAGE);
  Slot* slots = static_cast<Slot*>(memory);
  for (std::uint32_t i = 0; i < kSlotsPerChunk; ++i) ::new (&slots[i]) Slot();
  return Chunk(slots);
}

Simulator::Simulator()
    : free_head_(kNoSlot), running_slot_(kNoSlot), fingerprint_(kEmptyFingerprint) {}

Simulator::~Simulator() = default;

Simulator::Slot& Simulator::slot(std::uint32_t index) {
  return chunks_[index / kSlotsPerChunk].get()[index % kSlotsPerChunk];
}

std::uint32_t Simulator::allocate_slot() {
  if (free_head_ != kNoSlot) {
    const std::uint32_t index = free_head_;
    free_head_ = slot(index).link;
    return index;
  }
  if (slot_count_ % kSlotsPerChunk == 0) {
    if (slot_count_ >= Slot::kFirstMark - kSlotsPerChunk) {
      throw std::length_error("simulator: more than 2^32 pending events");
    }
    chunks_.push_back(make_chunk());
  }
  return slot_count_++;
}

void Simulator::free_slot(std::uint32_t index) {
  Slot& s = slot(index);
  s.callback.reset();
  ++s.generation;
  s.link = free_head_;
  free_head_ = index;
}

void Simulator::throw_past(TimePoint when) const {
  throw SchedulingError(fmt::format("cannot schedule an event at {} before the current time {}",
                                    when.to_string(), now_.to_string()));
}

EventId Simulator::schedule(TimePoint when, EventCallback&& callback, EventLabel label) {
  if (when < now_) [[unlikely]] throw_past(when);
  if (when.is_max()) [[unlikely]] {
    throw SchedulingError("cannot schedule an event at t=never (TimePoint::max())");
  }
  if (!callback) [[unlikely]] throw SchedulingError("cannot schedule an empty callback");
  const std::uint32_t index = allocate_slot();
  Slot& s = slot(index);
  s.callback = std::move(callback);
  s.label = label.value();
  s.link = Slot::kPending;
  queue_.push(static_cast<std::uint64_t>(when.count_ps()), index);
  ++live_pending_;
  return EventId{(std::uint64_t{s.generation} << 32) | index};
}

EventId Simulator::schedule_after(Duration delay, EventCallback&& callback, EventLabel label) {
  if (delay < Duration::zero()) [[unlikely]] {
    throw SchedulingError(fmt::format("cannot schedule an event {} in the past (now {})",
                                      (-delay).to_string(), now_.to_string()));
  }
  return schedule(now_ + delay, std::move(callback), label);
}

bool Simulator::cancel(EventId id) {
  const auto raw = static_cast<std::uint64_t>(id);
  const auto index = static_cast<std::uint32_t>(raw & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(raw >> 32);
  if (index >= slot_count_) return false;
  Slot& s = slot(index);
  if (s.generation != generation || s.link != Slot::kPending) return false;
  s.callback.reset();
  s.link = Slot::kCancelled;
  --live_pending_;
  ++tombstones_;
  if (tombstones_ >= kMinTombstonesToSweep && tombstones_ > live_pending_) sweep_tombstones();
  return true;
}

void Simulator::sweep_tombstones() {
  queue_.remove_if([this](const RadixEventQueue::Entry& e) {
    if (slot(e.slot).link != Slot::kCancelled) return false;
    free_slot(e.slot);
    return true;
  });
  tombstones_ = 0;
}

TimePoint Simulator::next_event_bound() {
  return queue_.empty() ? TimePoint::max() : TimePoint::from_ps(static_cast<std::int64_t>(queue_.min_key()));
}

RunStats Simulator::run(TimePoint until) {
  if (running_) throw SchedulingError("Simulator::run called from inside an event");
  running_ = true;
  stop_requested_ = false;
  RunStats stats;
  const auto horizon = static_cast<std::uint64_t>(until.count_ps());
  try {
    while (!queue_.empty()) {
      if (queue_.min_key() > horizon) {
        // Only a finite horizon can be below a pending event's time.
        now_ = until;
        stats.stop_reason = RunStats::StopReason::kHorizonReached;
        break;
      }
      const RadixEventQueue::Entry entry = queue_.pop();
      for (std::size_t ahead = 0; ahead <= kPrefetchAhead; ++ahead) {
        const std::uint32_t next = queue_.upcoming_slot(ahead);
        if (next == RadixEventQueue::kNone) break;
        __builtin_prefetch(&slot(next));
      }
      Slot& s = slot(entry.slot);
      if (s.link == Slot::kCancelled) {
        --tombstones_;
        free_slot(entry.slot);
        continue;
      }
      now_ = TimePoint::from_ps(static_cast<std::int64_t>(entry.key));
      fingerprint_ = fold_fingerprint(fingerprint_, now_.count_ps(), s.label);
      --live_pending_;
      ++executed_;
      ++stats.events_executed;
      // Slots never move (chunked storage), so the callback runs in place;
      // the slot is released only afterwards, so it cannot be handed to an
      // event the callback schedules while it is still running.
      s.link = Slot::kRunning;
      running_slot_ = entry.slot;
      s.callback();
      running_slot_ = kNoSlot;
      free_slot(entry.slot);
      if (stop_requested_) {
        stats.stop_reason = RunStats::StopReason::kStopRequested;
        break;
      }
    }
  } catch (...) {
    // An exception from a callback ends the run; the event counts as run.
    if (running_slot_ != kNoSlot) free_slot(running_slot_);
    running_slot_ = kNoSlot;
    running_ = false;
    throw;
  }
  if (queue_.empty() && stats.stop_reason == RunStats::StopReason::kQueueEmpty &&
      !until.is_max()) {
    now_ = until;
  }
  running_ = false;
  return stats;
}

}  // namespace zx::sim
