// File: models/network/link_share.h
//
// The `linkshare` fidelity: the network as independent links, each a
// weighted processor-sharing server, and transfers grouped into bundles.
//
// A bundle is what a collective's step (or one transfer) puts on the
// network: for each link its routes cross, the bytes they put there and how
// many transfers cross it (the part's weight). After the bundle's latency
// (the largest of its transfers': their links' latencies plus the software
// latency each was given), every part joins its link. A link serves the
// parts on it at once, each at capacity x weight / (total weight of the
// link's parts), with a part's rate cap honoured and its unused share handed
// to the others (water-filling); a part leaves when its bytes are through,
// and the bundle is done when all its parts are.
//
// What this keeps from `flow` (max-min over routes): a link's capacity is
// split among the transfers crossing it, so an all-to-all's hundred
// transfers on a NIC take a hundred shares to an all-reduce's one, and a
// bundle alone takes max over its links of bytes / capacity, its most
// loaded link's time, which is the flow model's time for a single transfer
// and for every step whose transfers do not share links (a ring's). What it
// drops: the coupling of a transfer's links (a transfer held back at one
// link still takes its share of the others), and the order in which a
// step's transfers finish (the step's bytes on a link are one part). The
// error this makes against `flow` on the zoo is measured in
// docs/network_model.md, "Link sharing".
//
// Why: the cost is per bundle and per link it touches, not per transfer and
// re-solve. A step's transfers are routed once and summed; no solve couples
// the fabric (a link's change re-shares that link alone), so a run costs
// about as many events as the plans have steps.
//
// The same processor sharing per link is the "fluid" link model of
// SimGrid's CM02 without its route coupling, and of the analytical network
// backends of ASTRA-sim and SimAI, which price a collective phase by its
// most loaded link; this one also shares links between the phases and
// collectives in flight.

#ifndef ZIONSIM_MODELS_NETWORK_LINK_SHARE_H_
#define ZIONSIM_MODELS_NETWORK_LINK_SHARE_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "models/network/flow_types.h"
#include "sim/simulator.h"
#include "sim/time.h"
#include "sim/units.h"

namespace zx::models {

class LinkShareNetwork {
 public:
  /// `links` are valid (FlowNetwork checks them).
  LinkShareNetwork(sim::Simulator& simulator, std::vector<LinkParams> links);
  LinkShareNetwork(const LinkShareNetwork&) = delete;
  LinkShareNetwork& operator=(const LinkShareNetwork&) = delete;

  /// Adds a transfer to the bundle being built: `size` bytes over `route`
  /// (valid link indices, none twice), counting `weight` transfers on each
  /// link, its first byte `added_latency` after the route's latency.
  void add(std::span<const std::uint32_t> route, sim::Bytes size, double weight, sim::Duration added_latency);
  /// add() for several transfers at once, in two halves. add_to_link puts
  /// `bytes` and `weight` on `link` as the adds of the transfers crossing it
  /// would (their sums; each transfer's size and weight are whole numbers,
  /// so the sums are exact in any order). The bundle's parts keep the order
  /// in which links were first given bytes, which decides the order of the
  /// links' events at equal times: a caller that wants add()'s bundle calls
  /// add_to_link in the order add() would have first touched the links.
  void add_to_link(std::uint32_t link, double bytes, double weight);
  /// The other half: the transfers' sizes summed, and the largest of their
  /// first bytes' delays (route latency and added latency).
  void add_extent(sim::Bytes size, sim::Duration latency);
  sim::Duration link_latency(std::uint32_t link) const { return latency_[link]; }
  /// Starts the bundle built since the last start (possibly empty: it is
  /// then done after the latencies of what was added, or after the events
  /// due now) and returns its id. `rate_cap_per_weight` caps each part's
  /// rate at that times its weight. `on_done` runs, in an engine event, when
  /// the bundle is through.
  std::uint32_t start(sim::EventCallback on_done,
                      double rate_cap_per_weight = std::numeric_limits<double>::infinity());

  /// Rounds every part's finish up to a multiple of `quantum` (0: to the
  /// picosecond), as FlowNetwork::set_completion_quantum.
  void set_completion_quantum(sim::Duration quantum) { quantum_ps_ = quantum.count_ps(); }
  /// Reuse a finished bundle's id (and record) for a later bundle.
  void recycle_ids(bool on) { recycle_ = on; }

  /// What a started bundle will put on the network when its first byte
  /// is due, in that order: (link, bytes, weight); empty once it has.
  struct PendingPart {
    std::uint32_t link;
    double bytes;
    double weight;
    bool operator==(const PendingPart&) const = default;
  };
  std::span<const PendingPart> pending_parts(std::uint32_t bundle) const { return bundles_[bundle].pending; }
  /// A bundle's times; `size` is the sum of its transfers' sizes.
  const FlowRecord& record(std::uint32_t bundle) const { return records_[bundle]; }
  /// Bundles started so far when `bundle` (its newest use, with recycling)
  /// started: tells a recycled id's bundles apart.
  std::uint64_t serial(std::uint32_t bundle) const { return serials_[bundle]; }
  std::uint64_t bundles_started() const { return started_; }
  std::size_t bundles_in_flight() const { return in_flight_; }
  /// Bundle ids handed out (with recycling, the most in use at once).
  std::size_t num_ids() const { return records_.size(); }
  /// Times a link's shares were recomputed, and the parts they covered.
  std::uint64_t reshares() const { return reshares_; }
  std::uint64_t reshared_parts() const { return reshared_parts_; }

  std::size_t num_links() const { return links_.size(); }
  LinkRecord link(std::uint32_t index) const;
  /// As FlowNetwork::hottest_links.
  std::vector<std::uint32_t> hottest_links(std::size_t k) const;
  /// Utilisation history: a sample (time, sum of the parts' rates /
  /// capacity) each time a link's shares change; a later change at the same
  /// instant replaces the sample.
  void record_link_history(bool on) { record_history_ = on; }
  using UtilisationSample = LinkUtilisationSample;
  const std::vector<UtilisationSample>& link_history(std::uint32_t link) const;

 private:
  // A part on its link. Without caps on the link, parts are served by
  // virtual time (start-time fair queueing's clock, exact for processor
  // sharing): the link's clock `vtime` counts the bytes served per unit of
  // weight, and a part finishes when it reaches the part's `tag` (the clock
  // at its join plus bytes / weight), so a join or a finish costs a heap
  // operation, not a pass over the link's parts. With a capped part on the
  // link, each part's remaining bytes and rate are kept instead
  // (water-filling at every change).
  struct Part {
    std::uint32_t bundle = 0;  // alive: its bundle; dead: the next free slot (kNoSlot: none)
    bool alive = false;
    double bytes = 0.0;  // the part's size, for the link's bytes carried
    double weight = 0.0;
    double cap = 0.0;        // bytes per second; +inf: none
    double tag = 0.0;        // virtual mode: the clock value at which it is through
    double remaining = 0.0;  // capped mode: bytes left at the link's last_ps
    double rate = 0.0;       // capped mode
    std::int64_t finish_ps = 0;  // capped mode
  };
  struct HeapEntry {
    double tag;
    std::uint64_t seq;  // join order, for ties
    std::uint32_t slot;
  };
  static constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
  // Everything a join or a finish touches, in one 128-byte pair of cache
  // lines (a link's first touch in a bundle is a cache miss on a large
  // fabric; a third line, or a free list of its own, was one more): the
  // free slots are a list through the dead parts, the heap's tie-breaking
  // sequence is the network's, the latency (read only while bundles are
  // built) is kept apart, and the busy time is one counter.
  struct alignas(128) Link {
    std::int64_t last_ps = 0;
    double vtime = 0.0;
    double weight = 0.0;  // of the live parts
    double capacity_bytes_per_s = 0.0;
    std::uint32_t live = 0;
    std::uint32_t capped = 0;  // live parts with a finite cap: capped mode while > 0
    std::uint32_t free_head = kNoSlot;  // dead parts' slots, last freed first
    bool capped_mode = false;
    bool busy = false;
    std::int64_t event_ps = -1;  // the pending finish event's time; -1: none
    sim::EventId event{};
    // Busy time in ps: the total while idle, the total minus the start of
    // the busy period while busy (add now for the total).
    std::int64_t busy_ps = 0;
    std::int64_t bytes_carried = 0;
    // Virtual mode: live parts by tag. While a finish event is pending its
    // front is the part the event is for (every change to it re-shares).
    std::vector<HeapEntry> heap;
    std::vector<Part> parts;  // slots
  };
  struct Bundle {
    std::uint32_t parts_left = 0;
    double cap_per_weight = std::numeric_limits<double>::infinity();
    sim::EventCallback on_done;
    std::vector<PendingPart> pending;  // until the first byte
  };

  void join(std::uint32_t bundle);
  void advance(Link& link, std::int64_t now_ps);
  void reshare(std::uint32_t link, std::int64_t now_ps);
  void reshare_capped(Link& link, std::int64_t now_ps);
  void enter_capped_mode(Link& link);
  void leave_capped_mode(Link& link);
  void finish_part(Link& link, std::uint32_t slot, std::vector<sim::EventCallback>& callbacks);
  void link_due(std::uint32_t link);
  void bundle_done(std::uint32_t bundle, std::vector<sim::EventCallback>& callbacks);

  sim::Simulator& sim_;
  std::vector<Link> links_;
  std::vector<sim::Duration> latency_;  // per link
  std::uint64_t seq_ = 0;               // parts joined, for the heaps' ties
  std::int64_t quantum_ps_ = 0;
  bool recycle_ = false;
  std::vector<Bundle> bundles_;
  std::vector<FlowRecord> records_;
  std::vector<std::uint64_t> serials_;
  std::vector<std::uint32_t> free_ids_;
  std::uint64_t started_ = 0;
  std::size_t in_flight_ = 0;
  std::uint64_t reshares_ = 0;
  std::uint64_t reshared_parts_ = 0;
  // The bundle being built: bytes and weight per link touched, in the order
  // first touched.
  std::vector<double> acc_bytes_;
  std::vector<double> acc_weight_;
  std::vector<std::uint32_t> touched_;
  sim::Duration acc_latency_ = sim::Duration::zero();
  std::int64_t acc_size_ = 0;
  bool record_history_ = false;
  std::vector<std::vector<UtilisationSample>> history_;
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_LINK_SHARE_H_
