#include "models/network/flow_ids.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include <fmt/format.h>

namespace zx::models {

void FlowIds::set_recycling(bool on, std::uint32_t block_ids) {
  if (block_ids == 0 || (block_ids & (block_ids - 1)) != 0) {
    throw std::invalid_argument(fmt::format("recycle_flow_ids: block of {} ids, expected a power of two", block_ids));
  }
  recycle_ = on;
  block_ids_ = block_ids;
  block_shift_ = static_cast<std::uint32_t>(std::countr_zero(block_ids));
}

std::uint32_t FlowIds::next_recycled() {
  if (cursor_ == cursor_end_) {
    if (cursor_end_ != 0) {
      const std::uint32_t done = (cursor_end_ - 1) >> block_shift_;
      if (block_live_[done] == 0) retire_block(done);
    }
    std::uint32_t block;
    if (free_blocks_.empty()) {
      block = static_cast<std::uint32_t>(block_live_.size());  // fresh ids, at the end
      block_live_.push_back(0);
    } else {
      block = free_blocks_.back();
      free_blocks_.pop_back();
    }
    cursor_ = block << block_shift_;
    cursor_end_ = cursor_ + block_ids_;
  }
  ++block_live_[cursor_ >> block_shift_];
  return cursor_++;
}

void FlowIds::retire(std::span<const std::uint32_t> finished) {
  const std::uint32_t current = cursor_end_ == 0 ? std::numeric_limits<std::uint32_t>::max()
                                                 : (cursor_end_ - 1) >> block_shift_;
  for (std::uint32_t f : finished) {
    const std::uint32_t block = f >> block_shift_;
    // The block still handing out ids is retired when it has handed out all.
    if (--block_live_[block] == 0 && block != current) retire_block(block);
  }
}

void FlowIds::retire_block(std::uint32_t block) {
  // A batch of at least a quarter as many ids as flows in flight keeps the
  // owner's sweep (see before_reuse_) at a constant cost per flow.
  retired_blocks_.push_back(block);
  if (4 * retired_blocks_.size() * block_ids_ < in_flight_) return;
  if (before_reuse_) before_reuse_();
  // free_blocks_ is a stack: the batch goes out lowest block first.
  std::sort(retired_blocks_.begin(), retired_blocks_.end(), std::greater<>());
  free_blocks_.insert(free_blocks_.end(), retired_blocks_.begin(), retired_blocks_.end());
  retired_blocks_.clear();
}

}  // namespace zx::models
