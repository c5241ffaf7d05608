#include "models/network/link_history.h"

namespace zx::models {

void LinkHistory::record(std::uint32_t link, sim::TimePoint now, double utilisation) {
  if (samples_.size() < num_links_) samples_.resize(num_links_);
  std::vector<Sample>& h = samples_[link];
  if (!h.empty() && h.back().time == now) {
    h.back().utilisation = utilisation;
  } else if (h.empty() || h.back().utilisation != utilisation) {
    h.push_back({now, utilisation});
  }
}

void LinkHistory::note(std::span<const std::uint32_t> links, sim::TimePoint now) {
  if (pending_mark_.size() < num_links_) pending_mark_.resize(num_links_, 0);
  pending_ps_ = now.count_ps();
  for (std::uint32_t l : links) {
    if (pending_mark_[l]) continue;
    pending_mark_[l] = 1;
    pending_.push_back(l);
  }
}

const std::vector<LinkHistory::Sample>& LinkHistory::samples(std::uint32_t link) const {
  static const std::vector<Sample> kEmpty;
  return link < samples_.size() ? samples_[link] : kEmpty;
}

}  // namespace zx::models
