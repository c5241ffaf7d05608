// File: models/network/flow_ids.h
//
// The flow network's ids (models/network/flow_network.h): which id a new
// flow gets, when a finished flow's id may be handed out again, the count of
// flows started and in flight, and the flows' completion callbacks.
//
// Without recycling (the default) every flow gets a fresh id, 0, 1, 2, ...
// With recycling (FlowNetwork::recycle_flow_ids) ids go out and come back in
// blocks of `block_ids` consecutive ids (a power of two), each block in
// increasing order, so that the flows of one burst (an all-to-all) sit at
// neighbouring ids as they would without recycling: the network's solves
// walk flows in id order, and scattered ids cost a cache miss per flow and
// array. A block comes back once every flow on it has been released (its
// callback has run), and blocks are handed out again only in batches of at
// least a quarter as many ids as flows in flight: before each batch the
// network sweeps the finished ids out of its links' flow lists (the hook
// given to the constructor), a pass whose cost the batch's size makes
// constant per flow. Blocks of a batch go out lowest first; fresh blocks
// (at the end) only when no block is free.
//
// Callbacks live in one array whose slots are reused (a free list), so that
// a flow stores a 32-bit index rather than a std::function.

#ifndef ZIONSIM_MODELS_NETWORK_FLOW_IDS_H_
#define ZIONSIM_MODELS_NETWORK_FLOW_IDS_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/simulator.h"

namespace zx::models {

class FlowIds {
 public:
  static constexpr std::uint32_t kNoCallback = std::numeric_limits<std::uint32_t>::max();

  /// `before_reuse` runs before a batch of released blocks is handed out
  /// again (with recycling only).
  explicit FlowIds(std::function<void()> before_reuse = {}) : before_reuse_(std::move(before_reuse)) {}

  /// Recycling on or off, and the block size. Throws std::invalid_argument
  /// for a block size that is not a power of two. Set before the first id.
  void set_recycling(bool on, std::uint32_t block_ids);
  bool recycles() const { return recycle_; }
  std::uint32_t block_ids() const { return block_ids_; }

  /// The id of a flow that starts now: a fresh one, or with recycling the
  /// next id of the current block. Counts the flow started and in flight.
  std::uint32_t acquire() {
    // Without recycling, the flows started so far are the ids handed out.
    const std::uint32_t id = recycle_ ? next_recycled() : static_cast<std::uint32_t>(started_);
    ++started_;
    ++in_flight_;
    return id;
  }
  /// A flow finished: one fewer in flight. Its id is not handed out again
  /// before release.
  void finish() { --in_flight_; }
  /// The ids of finished flows whose callbacks have run: with recycling,
  /// they may be handed out again (see above); without, nothing.
  void release(std::span<const std::uint32_t> finished) {
    if (recycle_) retire(finished);
  }

  std::uint64_t started() const { return started_; }
  std::size_t in_flight() const { return in_flight_; }

  /// Keeps `callback` (moved from) until taken; kNoCallback for an empty one.
  std::uint32_t add_callback(sim::EventCallback&& callback) {
    if (!callback) return kNoCallback;
    if (free_callbacks_.empty()) {
      callbacks_.push_back(std::move(callback));
      return static_cast<std::uint32_t>(callbacks_.size() - 1);
    }
    const std::uint32_t index = free_callbacks_.back();
    free_callbacks_.pop_back();
    callbacks_[index] = std::move(callback);
    return index;
  }
  /// The callback at `index`, whose slot is reused from now on.
  sim::EventCallback take_callback(std::uint32_t index) {
    sim::EventCallback callback = std::move(callbacks_[index]);
    free_callbacks_.push_back(index);
    return callback;
  }
  /// Callback slots: the most callbacks kept at once.
  std::size_t callback_slots() const { return callbacks_.size(); }

 private:
  std::uint32_t next_recycled();
  void retire(std::span<const std::uint32_t> finished);
  void retire_block(std::uint32_t block);

  std::function<void()> before_reuse_;
  std::uint64_t started_ = 0;
  std::size_t in_flight_ = 0;
  std::vector<sim::EventCallback> callbacks_;
  std::vector<std::uint32_t> free_callbacks_;  // slots of callbacks_ to reuse

  // Recycling: ids go out from the block [cursor_, cursor_end_); block_live_
  // counts each block's flows not yet released; a block with none waits in
  // retired_blocks_ for the batch, then in free_blocks_.
  bool recycle_ = false;
  std::uint32_t block_ids_ = 1;
  std::uint32_t block_shift_ = 0;
  std::uint32_t cursor_ = 0;
  std::uint32_t cursor_end_ = 0;
  std::vector<std::uint32_t> block_live_;
  std::vector<std::uint32_t> retired_blocks_;
  std::vector<std::uint32_t> free_blocks_;
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_FLOW_IDS_H_
