// File: models/network/link_history.h
//
// The links' utilisation history of the flow network (FlowNetwork's
// record_link_history and link_history; models/network/flow_network.h): per
// link, the samples (time, utilisation) that the timeline's counter tracks
// (models/execution/network_activity.h) are drawn from. This class keeps the
// samples; the network computes each utilisation (the sum of a link's flows'
// rates over its capacity) and hands it over.
//
// A sample at the instant of the link's latest one replaces it (a link whose
// load changes several times at one instant keeps the last value), and a
// sample equal to the latest one is dropped (the load did not change).
//
// Pending marks: where the load of a link changes once per flow (the
// analytical fidelity, no re-solve that covers many flows at once), the
// network notes the links whose load changed at the latest instant instead
// of sampling each change, and has them sampled once, at that instant, before
// the next instant changes any rate or the history is read: flush(). An
// all-to-all's NIC carries thousands of flows, and a sum over them per flow
// made --timeline 25x slower than the run (64 nodes of model A).

#ifndef ZIONSIM_MODELS_NETWORK_LINK_HISTORY_H_
#define ZIONSIM_MODELS_NETWORK_LINK_HISTORY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "models/network/flow_types.h"
#include "sim/time.h"

namespace zx::models {

class LinkHistory {
 public:
  using Sample = LinkUtilisationSample;

  explicit LinkHistory(std::size_t num_links) : num_links_(num_links) {}

  /// Whether the network records (off by default): the network samples only
  /// while on; turning it off keeps the samples taken.
  bool recording() const { return recording_; }
  void set_recording(bool on) { recording_ = on; }

  /// The utilisation of `link` from `now` on (now no earlier than the link's
  /// latest sample).
  void record(std::uint32_t link, sim::TimePoint now, double utilisation);

  /// Notes that the load of `links` changed at `now`, each link once until
  /// the next flush. Every link noted since the latest flush must have
  /// changed at the same instant: flush first (pending_before).
  void note(std::span<const std::uint32_t> links, sim::TimePoint now);
  /// Whether links are pending from an instant other than `now`.
  bool pending_before(sim::TimePoint now) const {
    return !pending_.empty() && pending_ps_ != now.count_ps();
  }
  /// Records every pending link, at the instant it was noted, with
  /// `utilisation(link)`, in the order noted; clears the marks.
  template <typename Utilisation>
  void flush(const Utilisation& utilisation) {
    if (pending_.empty()) return;
    const sim::TimePoint at = sim::TimePoint::from_ps(pending_ps_);
    for (std::uint32_t l : pending_) record(l, at, utilisation(l));
    for (std::uint32_t l : pending_) pending_mark_[l] = 0;
    pending_.clear();
  }

  /// The samples of `link`, in time order (empty for a link never sampled).
  /// Pending links are not in them until flushed.
  const std::vector<Sample>& samples(std::uint32_t link) const;

 private:
  std::size_t num_links_;
  bool recording_ = false;
  std::vector<std::vector<Sample>> samples_;  // per link, once one is recorded
  std::vector<std::uint32_t> pending_;        // note's links, each once
  std::vector<std::uint8_t> pending_mark_;    // per link, once one is noted
  std::int64_t pending_ps_ = 0;               // their instant
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_LINK_HISTORY_H_
