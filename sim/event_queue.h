// File: sim/event_queue.h
//
// RadixEventQueue: the engine's pending-event queue. A monotone priority
// queue (a radix heap, Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms
// for the shortest path problem", JACM 1990) keyed by unsigned 64-bit time,
// made stable: entries with equal keys come out in the order they went in.
//
// Model. `last` is the smallest key seen at the last refill. Every entry
// with key k sits in bucket bit_width(k XOR last): bucket b > 0 holds the
// keys that first differ from `last` at bit b-1, so every key of bucket b is
// below every key of bucket b+1. Bucket 0 is the front run: a sorted run of
// the smallest keys, popped from its head. When it is empty, the lowest
// non-empty bucket becomes the new run: a small one (at most kSortedRunMax
// entries) is sorted stably in place of the run, and `last` becomes its
// minimum; a large one is scanned for its minimum, which becomes `last`, and
// its entries are redistributed (in order) into strictly lower buckets. An
// entry moves at most 64 times, in practice a handful, and every move is a
// sequential read and an append: no pointer chasing, no sift-up or sift-down.
// A push with a key below the end of the run is inserted into the run
// (rare: the engine schedules ahead of the few smallest keys).
//
// Why the sorted run: without it a key descends one bucket per refill all
// the way to bucket 0; the last levels, where buckets hold a few entries,
// cost more than sorting those few once. And the run tells which events pop
// next, so the engine prefetches their slots (Simulator::run). On the hold
// model (--config=opt, this 2-core machine) it took the bare queue from
// 14.0 to 18.5 M events/s at P = 1,000 and from 9.8 to 11.8 M at
// P = 1,000,000; run sizes 16 / 32 / 64 / 128 gave the engine 13.5 / 13.8 /
// 13.9 / 13.5 M at P = 1,000 (64 kept).
//
// Stability. Within one bucket, entries with equal keys are in insertion
// order: a redistributed or sorted bucket keeps its order (the sort is an
// insertion sort) and later pushes carry later sequence numbers than
// everything already queued; a push into the run goes behind its equal keys.
// So FIFO tie-breaking needs no sequence number in the entry (16 bytes, four
// to a cache line).
//
// Monotonicity. A radix heap requires pushed keys >= last. The simulator only
// schedules at or after now, but peeking past a run(until) horizon can move
// `last` beyond now; a push below `last` then re-buckets every entry around
// the new key (O(n), once per such horizon; stable for the reasons above).
//
// Why base 2: a base-16 variant (buckets by highest differing hex digit and
// the key's digit there; at most 16 moves per entry instead of 64) was
// measured on the hold model and ran 5-10% slower at P = 1,000: its lowest
// bucket holds more entries, so each refill scans more.
//
// Why not a binary heap: on the hold model with a million pending events a
// binary heap of the same entries runs 1.45 M events/s here and this queue
// 11.8 M; at a thousand 13.0 vs 18.5. The figures and the command are in
// sim/simulator_benchmark.cc.

#ifndef ZIONSIM_SIM_EVENT_QUEUE_H_
#define ZIONSIM_SIM_EVENT_QUEUE_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zx::sim {

class RadixEventQueue {
 public:
  struct Entry {
    std::uint64_t key;
    std::uint32_t slot;
  };

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  /// Queues `slot` at `key`. Entries with equal keys pop in push order.
  void push(std::uint64_t key, std::uint32_t slot) {
    if (key < last_) [[unlikely]] {
      rebase(key);
    }
    if (front_head_ < front_.size() && key < front_.back().key) [[unlikely]] {
      insert_into_front({key, slot});
    } else {
      place({key, slot});
    }
    ++size_;
  }

  /// The smallest key; requires !empty(). May reorganise buckets, which is
  /// why it is not const.
  std::uint64_t min_key() {
    refill_front();
    return front_[front_head_].key;
  }

  /// The entry with the smallest key (earliest pushed among equals) without
  /// removing it; requires !empty().
  const Entry& front() {
    refill_front();
    return front_[front_head_];
  }

  /// The slot of the entry `ahead` places behind the front (0: the front),
  /// when the sorted front run reaches that far; kNone otherwise. Reads
  /// only, so the engine can prefetch the slots of the next events while the
  /// current one runs. A later push with a smaller key makes it a wasted
  /// prefetch, nothing worse.
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t upcoming_slot(std::size_t ahead) const {
    const std::size_t i = front_head_ + ahead;
    return i < front_.size() ? front_[i].slot : kNone;
  }

  /// Removes and returns the front entry; requires !empty().
  Entry pop() {
    refill_front();
    --size_;
    return front_[front_head_++];
  }

  /// When on, a bucket whose entries moved to lower buckets frees its memory
  /// (beyond 64 KiB) instead of keeping it for its next fill. A queue that
  /// takes bursts of millions of entries (flow completions) then holds about
  /// one copy of them, not one per bucket they passed through; a queue in a
  /// steady state (the engine's) is faster keeping it: 6.6 vs 6.2 M events/s
  /// on the hold model at P = 1,000,000. Off by default.
  void release_drained_buckets(bool on) { release_drained_ = on; }

  /// Removes every entry for which `drop(entry)` is true, keeping the order
  /// of the rest. O(size).
  template <typename Pred>
  void remove_if(Pred drop) {
    compact_front();
    std::size_t removed = 0;
    removed += erase_from(front_, drop);
    for (auto& bucket : buckets_) removed += erase_from(bucket, drop);
    size_ -= removed;
    nonempty_ = 0;
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      if (!buckets_[b].empty()) nonempty_ |= std::uint64_t{1} << b;
    }
  }

 private:
  // buckets_[b] holds bucket b+1; bucket 0 is front_ (consumed from
  // front_head_, so popping never shifts memory).
  static constexpr int kBuckets = 64;
  // A bucket of at most this many entries becomes the front run by sorting.
  static constexpr std::size_t kSortedRunMax = 64;
  // With release_drained_, a drained bucket keeps up to this many entries'
  // memory (64 KiB).
  static constexpr std::size_t kKeepCapacity = 4096;
  bool release_drained_ = false;

  void place(const Entry& e) {
    const std::uint64_t diff = e.key ^ last_;
    if (diff == 0) {
      front_.push_back(e);
      return;
    }
    const int b = std::bit_width(diff) - 1;  // 0..63 for buckets 1..64
    buckets_[b].push_back(e);
    nonempty_ |= std::uint64_t{1} << b;
  }

  void refill_front() {
    if (front_head_ < front_.size()) return;
    front_.clear();
    front_head_ = 0;
    // The lowest non-empty bucket holds the smallest keys.
    const int b = std::countr_zero(nonempty_);
    std::vector<Entry>& bucket = buckets_[b];
    nonempty_ &= ~(std::uint64_t{1} << b);
    if (bucket.size() <= kSortedRunMax) {
      // Small: sort it (stably) into the front run instead of moving each
      // entry down the buckets one level at a time.
      front_.swap(bucket);
      insertion_sort(front_);
      last_ = front_.front().key;
      return;
    }
    std::uint64_t smallest = bucket.front().key;
    for (const Entry& e : bucket) smallest = e.key < smallest ? e.key : smallest;
    last_ = smallest;
    // Every entry lands in a bucket below b; `bucket` itself is not appended to.
    for (const Entry& e : bucket) place(e);
    bucket.clear();
    if (release_drained_ && bucket.capacity() > kKeepCapacity) std::vector<Entry>().swap(bucket);
  }

  // Keeps `run` in key order; equal keys keep their order (stable).
  static void insertion_sort(std::vector<Entry>& run) {
    for (std::size_t i = 1; i < run.size(); ++i) {
      const Entry e = run[i];
      std::size_t j = i;
      for (; j > 0 && run[j - 1].key > e.key; --j) run[j] = run[j - 1];
      run[j] = e;
    }
  }

  // A key below the end of the front run goes into the run, after the
  // entries with equal keys.
  void insert_into_front(const Entry& e) {
    std::size_t j = front_.size();
    front_.push_back(e);
    for (; j > front_head_ && front_[j - 1].key > e.key; --j) front_[j] = front_[j - 1];
    front_[j] = e;
  }

  void compact_front() {
    front_.erase(front_.begin(), front_.begin() + static_cast<std::ptrdiff_t>(front_head_));
    front_head_ = 0;
  }

  template <typename Pred>
  static std::size_t erase_from(std::vector<Entry>& v, Pred drop) {
    std::size_t kept = 0;
    for (const Entry& e : v) {
      if (!drop(e)) v[kept++] = e;
    }
    const std::size_t removed = v.size() - kept;
    v.resize(kept);
    return removed;
  }

  void rebase(std::uint64_t new_last) {
    // Gather in an order that keeps equal keys in push order: equal keys
    // always share a bucket, and each bucket is read front to back.
    std::vector<Entry> all;
    all.reserve(size_);
    all.insert(all.end(), front_.begin() + static_cast<std::ptrdiff_t>(front_head_), front_.end());
    for (auto& bucket : buckets_) {
      all.insert(all.end(), bucket.begin(), bucket.end());
      bucket.clear();
    }
    front_.clear();
    front_head_ = 0;
    nonempty_ = 0;
    last_ = new_last;
    for (const Entry& e : all) place(e);
  }

  std::vector<Entry> front_;
  std::size_t front_head_ = 0;
  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::uint64_t nonempty_ = 0;  // bit b set <=> buckets_[b] non-empty
  std::uint64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace zx::sim

#endif  // ZIONSIM_SIM_EVENT_QUEUE_H_
