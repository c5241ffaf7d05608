// File: models/network/flow_network.h
//
// The network model on the engine: flows over routes of links, at one of two
// fidelities, behind one interface.
//
// Semantics (kFlow, the default). A flow has a route (an ordered list of
// links), a size in bytes and a start time (when start_flow is called). It
// first waits the sum of its links' latencies (propagation and switching; it
// uses no bandwidth meanwhile); that instant is its first byte. Then it
// transfers its bytes. While transferring, every flow gets its max-min fair
// rate (models/network/maxmin.h): on every link the capacity (bandwidth x
// protocol efficiency, as given in LinkParams) is shared among the flows
// crossing it, weighted, and an optional per-flow rate cap applies. Rates are
// recomputed whenever the set of transferring flows changes and are constant
// in between. A flow finishes when its last byte is transferred; a flow of
// zero bytes finishes at its first byte.
//
// Mechanics. Flows that join or leave at one instant are handled by one
// re-solve, which runs as an engine event at that instant after the events
// already due then. When flows joined, a re-solve covers the flows whose
// level is at least a bound λ below which the joiners change nothing: the
// lowest level at which one of their links would fill with them on it, read
// off the links' level groups where kept, else taken as the link's share
// with all its flows unfrozen (where filling starts, so no higher), less
// 1e-8 of itself (join_bound). Up to that level a from-scratch progressive
// filling freezes the same flows at the same levels with the joiners as
// without. The flows covered are those reached from the changed links
// through flows at or above λ; the others keep their rates, bit for bit
// (the solver's component exactness). When λ is below every flow's level
// (a collective step's flows joining at once), and with non-integer
// weights, a join re-solves the whole connected component of the changed
// links instead. When flows only left, it covers only the flows whose level
// (rate / weight) was at least the smallest level λ of the leavers: every
// flow below λ keeps its rate exactly, and the solver re-fills the others
// from λ so that the rates are the bits a from-scratch solve gives. Of
// those, only the groups that share links (directly or through each other)
// with a leaver's links are re-solved, found by a union-find over their
// links (keep_seeded_components); a group apart keeps its rates, bit for
// bit. What those need of the fixed flows on their links comes one of two
// ways: from per-link level groups (each link's distinct levels with their
// total weight, folded: MaxMinSolver::solve_with_fixed_links), kept up to
// date once a link is first used, so that the cost is in the re-solved
// flows; or, when the re-solved flows are most of their links' flows anyway,
// by the solver replaying the fixed flows' freezes
// (MaxMinSolver::solve_with_fixed). In an ECMP-hashed fabric's tail, where
// flows finish at hundreds of distinct levels, that is a handful of flows per
// instant instead of the whole fabric.
// Active flows are kept in buckets by level (one per distinct level, lazily
// invalidated) from which the flows at or above λ are enumerated in time
// proportional to their number. With a non-integer weight anywhere the exact
// replay is not available and every re-solve is a component re-solve. A
// flow's progress is integrated only when its rate changes: remaining bytes
// (a double inside the model) drop by rate x elapsed time, and its finish time
// becomes now + remaining / rate rounded up to the picosecond, in one place
// (transfer_time). The model keeps one engine event for its earliest
// completion and moves it, never duplicating it. Bytes are accounted exactly
// at the flow level: a finished flow has delivered its integer size to every
// link of its route.
//
// kLinkShare: every link a processor-sharing server of its own, and the
// flows (or a collective step's transfers, as one bundle) served on each
// link independently: models/network/link_share.h, which this delegates to.
//
// kAnalytical: no sharing. Each flow transfers at the smallest capacity along
// its route (for fast sweeps). With no link shared the two fidelities give
// identical finish times to the picosecond.
//
// Files. This class is the fluid core (rates, re-solves, level buckets and
// groups, progress, the completion queue) and the front of the other
// fidelities; what it keeps beside the core lives in classes of its own:
//   models/network/flow_ids.h      flow ids, their recycling in blocks, the
//                                  counts started and in flight, callbacks;
//   models/network/link_history.h  the links' utilisation samples
//                                  (record_link_history, link_history);
//   models/network/link_share.h    the kLinkShare model;
//   models/network/maxmin.h        the max-min solver;
//   models/network/flow_types.h    the records and link parameters.

#ifndef ZIONSIM_MODELS_NETWORK_FLOW_NETWORK_H_
#define ZIONSIM_MODELS_NETWORK_FLOW_NETWORK_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "models/network/flow_ids.h"
#include "models/network/flow_types.h"
#include "models/network/link_history.h"
#include "models/network/link_share.h"
#include "models/network/maxmin.h"
#include "sim/event_queue.h"
#include "sim/simulator.h"
#include "sim/time.h"
#include "sim/units.h"

namespace zx::models {

enum class NetworkFidelity { kFlow, kAnalytical, kLinkShare };

/// "flow", "analytical" or "linkshare".
std::string_view to_string(NetworkFidelity fidelity);

enum class FlowId : std::uint32_t {};

struct FlowOptions {
  double weight = 1.0;                                         ///< > 0
  double rate_cap_bytes_per_s = std::numeric_limits<double>::infinity();  ///< > 0
  /// Time before the first byte on top of the route's link latencies: the
  /// sender's and receiver's software (a communication library's protocol
  /// handshake); >= 0. The flow joins the links after both.
  sim::Duration added_latency = sim::Duration::zero();
};

namespace internal {

/// A growable array in fixed chunks of 2^kChunkBits elements: it never moves
/// what it holds, so growing it to a million flows copies nothing and
/// touches each page once, where a std::vector's doublings copy everything
/// and fault in twice the final size. Indexing costs a shift and one load
/// more.
template <typename T, int kChunkBits = 12>
class ChunkedArray {
 public:
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return chunks_[i >> kChunkBits][i & kMask]; }
  const T& operator[](std::size_t i) const { return chunks_[i >> kChunkBits][i & kMask]; }
  void push_back(const T& value) {
    if ((size_ & kMask) == 0) chunks_.push_back(std::make_unique<T[]>(kMask + 1));
    chunks_.back()[size_ & kMask] = value;
    ++size_;
  }

 private:
  static constexpr std::size_t kMask = (std::size_t{1} << kChunkBits) - 1;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::size_t size_ = 0;
};

}  // namespace internal

class FlowNetwork {
 public:
  /// Throws std::invalid_argument for a non-positive or non-finite capacity
  /// or a negative latency, naming the link.
  FlowNetwork(sim::Simulator& simulator, std::vector<LinkParams> links,
              NetworkFidelity fidelity = NetworkFidelity::kFlow);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// Starts a flow now. `on_done` runs (as part of an engine event) when its
  /// last byte arrives. A route must not repeat a link; an empty route is a
  /// local copy with no network cost (it finishes immediately after the
  /// events due now; options.added_latency still delays it). Throws
  /// std::invalid_argument for an unknown or repeated link, a negative
  /// size, or invalid options.
  FlowId start_flow(std::span<const std::uint32_t> route, sim::Bytes size,
                    sim::EventCallback on_done, FlowOptions options = {});

  NetworkFidelity fidelity() const { return fidelity_; }
  /// The link-sharing model behind kLinkShare (null at other fidelities):
  /// where a caller starts a bundle of transfers as one
  /// (LinkShareNetwork::add, then start). start_flow is a bundle of one.
  LinkShareNetwork* link_share() { return share_.get(); }
  const LinkShareNetwork* link_share() const { return share_.get(); }

  /// Completion quantum: every finish time of a flow that transfers bytes is
  /// rounded up to the next multiple of `quantum` (on the absolute time
  /// axis), so that flows due within one quantum finish at one instant and
  /// cost one re-solve. Zero (the default) keeps finish times exact to the
  /// picosecond. A flow never finishes earlier than it would without the
  /// quantum's own rounding, so no flow beats its bottleneck; the price is a
  /// delay of under one quantum per finishing instant, which can add up
  /// along a chain of instants (an all-to-all's tail). The size of the
  /// effect and the speed it buys, for the what-if runs, are in the README.
  /// For scale: SimGrid 3.x lets actions finish together within its timing
  /// precision (`surf/precision`, 1e-5 s by default, in its config
  /// registration), and ns-3 keeps time in 1 ns steps by default. Throws
  /// std::invalid_argument when negative or once a flow has started.
  void set_completion_quantum(sim::Duration quantum);
  sim::Duration completion_quantum() const { return sim::Duration::ps(quantum_ps_); }
  /// Relative completion tolerance (the `coalesced` fidelity of the
  /// commands): a flow's finish time is rounded up, instead of to the
  /// quantum, to the coarsest step of 2^k quanta (k >= 0; 1 ps when the
  /// quantum is 0) that is at most `relative` x its transfer time (first byte
  /// to its exact finish, as estimated at the latest rate change). Steps of
  /// 2^k quanta nest, so flows of different lengths due close together still
  /// meet at the coarser step's instants: where finishes are spread over a
  /// collective's whole duration (an all-to-all on an oversubscribed fabric,
  /// whose ECMP-hashed uplinks carry uneven loads, or NCCL's point-to-point
  /// schedule) that is several times fewer re-solves. A flow still never
  /// finishes early, and finishes late by less than `relative` of its
  /// transfer time at its last re-solve; what that does to iteration times
  /// is measured in docs/network_model.md. 0 (the default) keeps the
  /// quantum alone. Throws std::invalid_argument outside [0,
  /// kMaxCompletionTolerance] or once a flow has started.
  void set_completion_tolerance(double relative);
  double completion_tolerance() const { return tolerance_; }
  static constexpr double kMaxCompletionTolerance = 0.01;
  /// Recycling of flow ids, for callers that keep no FlowId past the flow's
  /// on_done: a finished flow's id, with its record and route, may then be
  /// handed to a later flow, so that memory follows the flows in flight
  /// rather than every flow ever started (a what-if iteration of 2,048 GPUs
  /// starts tens of millions). Ids go out and come back in blocks of
  /// `block_ids` consecutive ids (a power of two): a block is handed out
  /// again once all its flows have finished, and only in batches of at least
  /// a quarter as many ids as flows in flight, which keeps the cost per flow
  /// constant.
  /// flow() and route() of a recycled id describe its newest flow. The
  /// solver takes flows in id order, so rates and finish times can differ
  /// from a run without recycling in the last bits of a sum; a run is as
  /// deterministic either way. Off by default. Throws std::invalid_argument
  /// once a flow has started, or for a block size that is not a power of two.
  void recycle_flow_ids(bool on, std::uint32_t block_ids = 4096);
  bool recycles_flow_ids() const { return ids_.recycles(); }
  std::size_t num_links() const { return links_.size(); }
  /// Flow ids handed out: every flow started, or with recycling the most
  /// ids in use at once (flows in flight and ids waiting to be recycled).
  std::size_t num_flows() const { return share_ ? share_->num_ids() : slots_.size(); }
  /// Flows started since construction.
  std::uint64_t flows_started() const { return share_ ? share_->bundles_started() : ids_.started(); }
  /// Flows that have started and not finished.
  std::size_t flows_in_flight() const { return share_ ? share_->bundles_in_flight() : ids_.in_flight(); }

  const FlowRecord& flow(FlowId id) const {
    return share_ ? share_->record(static_cast<std::uint32_t>(id)) : slots_[static_cast<std::uint32_t>(id)].record;
  }
  /// Stats of a link; busy time counts up to now() for a link still busy.
  LinkRecord link(std::uint32_t index) const;
  /// The links as constructed, in index order: what a second, idle network
  /// of the same links is built from.
  std::vector<LinkParams> link_params() const;
  /// The route of a flow, as given. At kLinkShare, empty for a bundle
  /// started on link_share() rather than by start_flow.
  std::span<const std::uint32_t> route(FlowId id) const;
  /// The current rate of a transferring flow (0 before its first byte or
  /// after its finish), bytes per second.
  double rate(FlowId id) const { return share_ ? 0.0 : slots_[static_cast<std::uint32_t>(id)].rate; }
  /// The links that carried the most bytes relative to their capacity,
  /// largest first, ties by link index; at most k.
  std::vector<std::uint32_t> hottest_links(std::size_t k) const;

  /// Utilisation history (for timelines): when enabled, every change of a
  /// link's load is recorded as (time, sum of its flows' rates / capacity).
  /// Off by default: it costs a pass over each changed link's flows. Turned
  /// on while flows are in flight, the sums add those flows in the order
  /// they joined (a run recording from the start can differ in the last
  /// bits of a sample).
  void record_link_history(bool on);
  using UtilisationSample = LinkUtilisationSample;
  const std::vector<UtilisationSample>& link_history(std::uint32_t link) const;

  /// How many re-solves ran, and the flows they covered in total (for an
  /// incremental re-solve, the flows whose rates it recomputed).
  std::uint64_t resolves() const { return share_ ? share_->reshares() : resolves_; }
  std::uint64_t resolved_flows() const { return share_ ? share_->reshared_parts() : resolved_flows_; }
  /// How many of the re-solves were incremental (flows only left), and the
  /// flows they recomputed; the rest were component re-solves.
  std::uint64_t incremental_resolves() const { return incremental_resolves_; }
  std::uint64_t incremental_resolved_flows() const { return incremental_resolved_flows_; }
  /// How many incremental re-solves took the fixed flows from the links'
  /// level groups; the others had the solver replay them (see
  /// resolve_incremental). The same rates either way.
  std::uint64_t group_resolves() const { return group_resolves_; }
  /// How many re-solves after joins re-solved only the flows at or above
  /// the joiners' bound (see resolve()); the others were component re-solves.
  std::uint64_t join_resolves() const { return join_resolves_; }

 private:
  enum class State : std::uint8_t { kLatent, kActive, kDone };
  // Per-flow state is split by who touches it: a million flows' worth of a
  // wide record does not fit in cache, and a finishing flow (at a random
  // id) should cost one cache line, not one per field. FlowSlot is that line:
  // what finish_due reads and writes, the record, the rate and the level.
  // The rest lives in arrays indexed by flow id, touched in id order by the
  // solves (Progress) or small enough to stay cached (state_); flows without
  // options or a callback store neither.
  static constexpr std::uint32_t kNoCallback = FlowIds::kNoCallback;
  struct alignas(64) FlowSlot {
    FlowRecord record;
    sim::TimePoint finish_estimate;
    double rate = 0.0;
    // Normalised level at the latest solve that covered the flow (+inf
    // before), and a counter bumped with it that tells stale LevelEntry apart.
    double level = std::numeric_limits<double>::infinity();
    std::uint32_t level_version = 0;
    std::uint32_t callback = kNoCallback;  // FlowIds::add_callback's index
  };
  static_assert(sizeof(FlowSlot) == 64, "one cache line per flow");
  struct Progress {
    double remaining;  // bytes still to send at last_update
    sim::TimePoint last_update;
  };
  struct Link {
    LinkParams params;
    // Flows that joined the link, as ids. Without exact_incidence_ the list
    // keeps join order and finished flows stay in it until a re-solve that
    // walks the list sweeps them out in bulk (most lists are never walked
    // again once their flows start finishing); with it, a finishing flow is
    // swapped out at once (incidence_slot_), the order the utilisation sums
    // of link_history have always used.
    std::vector<std::uint32_t> flows;
    std::uint32_t active = 0;  // transferring flows on this link
    sim::TimePoint busy_since;
    sim::Duration busy_total;
    sim::Bytes bytes_carried;
    std::uint32_t stamp = 0;  // component search marks
    bool seeded = false;      // in seeds_ already
  };
  // A flow's entry in the bucket of its level; stale when the flow finished
  // or its level (and so its level_version) changed since.
  struct LevelEntry {
    std::uint32_t flow;
    std::uint32_t version;
  };
  using LevelBuckets = std::map<double, std::vector<LevelEntry>>;

  void join(std::uint32_t f);
  void resolve_component();
  // Starts problem_ over component_links_ (capacities, compact link numbers)
  // for `flows`.
  void begin_problem(std::span<const std::uint32_t> flows);
  // Returns false (having changed nothing) when the instant cannot be handled
  // incrementally after all; the caller then re-solves components.
  // Re-solves the flows at or above `lambda` (every other flow keeps its
  // rate): those of the level buckets (from_seeds false: only flows left),
  // or those reached from the seed links through flows at or above lambda
  // (from_seeds true: flows joined). False when a flow below lambda was
  // never covered by a solve (the caller then re-solves the component).
  bool resolve_incremental(double lambda, bool from_seeds);
  // The level below which no flow's rate can change when joiners_ join
  // (see resolve()), from their links' level groups; slightly under it.
  double join_bound();
  // Of component_flows_ (the flows at or above λ), keeps those sharing
  // links, directly or through each other, with a seed link.
  void keep_seeded_components();
  // Marks flow f with `mark`, adds its links not yet marked to
  // component_links_ (marking them), and returns its route's length.
  std::uint32_t take_into_set(std::uint32_t f, std::uint32_t mark);
  void set_level(std::uint32_t f, double level);
  void flush_levels();
  void next_stamp(std::uint32_t count);
  void canonical(std::vector<std::uint32_t>& ids, bool of_links, std::uint32_t mark);
  void finish_due();
  void request_resolve();
  void resolve();
  void set_rate(std::uint32_t f, double rate);
  void push_completion(std::uint32_t f);
  void flush_completions();
  bool completion_is_stale(std::uint64_t time_ps, std::uint32_t f) const;
  void reschedule_completion_event();
  void add_seed(std::uint32_t link);
  // The sum of a link's flows' rates over its capacity.
  double utilisation(std::uint32_t link) const;
  // Samples the links' utilisation at `now` into history_.
  void record_links(std::span<const std::uint32_t> links, sim::TimePoint now) const;
  // Analytical fidelity: the links whose load changed at the latest instant
  // are noted (LinkHistory::note) and sampled once, before the next instant
  // changes any rate or when the history is read.
  void flush_history_before(sim::TimePoint now);
  void flush_history() const;
  void clear_seeds();
  void sweep(Link& link);
  void use_exact_incidence();
  bool active(std::uint32_t f) const { return state_[f] == State::kActive; }
  double weight_of(std::uint32_t f) const { return weight_.empty() ? 1.0 : weight_[f]; }
  double cap_of(std::uint32_t f) const {
    return cap_.empty() ? std::numeric_limits<double>::infinity() : cap_[f];
  }
  std::uint32_t route_begin(std::uint32_t f) const { return route_begin_[f]; }
  std::uint32_t route_end(std::uint32_t f) const { return route_end_[f]; }
  // Before a batch of recycled ids goes out again: the finished ids out of
  // the links' lists (FlowIds).
  void sweep_finished();

  sim::Simulator& sim_;
  NetworkFidelity fidelity_;
  std::unique_ptr<LinkShareNetwork> share_;  // kLinkShare
  // kLinkShare: the routes given to start_flow, by id, with the serial of
  // the bundle that id then was (a bundle started on link_share() has none).
  struct SharedRoute {
    std::uint64_t serial = 0;
    std::vector<std::uint32_t> links;
  };
  std::vector<SharedRoute> share_routes_;
  std::int64_t quantum_ps_ = 0;  // set_completion_quantum; 0 or 1: exact
  double tolerance_ = 0.0;       // set_completion_tolerance; 0: the quantum alone
  // The step a flow's finish estimate is rounded up to (>= 1 ps).
  std::int64_t completion_step_ps(const FlowSlot& slot) const;
  std::vector<Link> links_;

  // Per flow (see above).
  internal::ChunkedArray<FlowSlot> slots_;
  internal::ChunkedArray<Progress> progress_;
  std::vector<State> state_;
  std::vector<std::uint32_t> route_begin_;  // route of f: route_links_[begin[f] .. end[f])
  std::vector<std::uint32_t> route_end_;
  std::vector<std::uint32_t> route_links_;
  std::vector<double> weight_;  // empty while every flow has weight 1
  std::vector<double> cap_;     // empty while no flow has a cap
  std::vector<std::uint32_t> flow_stamp_;
  // Ids, their recycling (recycle_flow_ids), the counts of flows started and
  // in flight, and the callbacks: models/network/flow_ids.h.
  FlowIds ids_;
  // With recycling, the route space each id owns (the longest route it
  // carried).
  std::vector<std::uint32_t> route_capacity_;

  // Swap-out removal from the links' lists (see Link), on from the moment
  // link history is recorded: per route entry, its index in the link's list.
  bool exact_incidence_ = false;
  std::vector<std::uint32_t> incidence_slot_;

  // Finish estimates by time: a stable monotone radix heap (the engine's
  // queue; finish times never precede now), lazily invalidated.
  sim::RadixEventQueue completions_;
  std::vector<sim::RadixEventQueue::Entry> new_completions_;  // pushed by the next flush
  // Flows waiting for their first byte, by that instant (ps): one engine
  // event per instant.
  std::map<std::int64_t, std::vector<std::uint32_t>> pending_joins_;

  // Re-solve state.
  std::vector<std::uint32_t> seeds_;
  // finish_due's buffers, kept for their capacity: the flows finishing, and
  // (flow, index in callbacks_) of those with a callback.
  std::vector<std::uint32_t> finished_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> due_callbacks_;
  // record_link_history's samples (models/network/link_history.h); mutable
  // for link_history, which samples the pending links first.
  mutable LinkHistory history_;
  bool resolve_scheduled_ = false;
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> component_flows_;
  std::vector<std::uint32_t> component_links_;
  std::vector<std::uint32_t> link_to_compact_;
  MaxMinProblem problem_;
  MaxMinSolver solver_;
  std::uint64_t resolves_ = 0;
  std::uint64_t resolved_flows_ = 0;
  std::uint64_t incremental_resolves_ = 0;
  std::uint64_t incremental_resolved_flows_ = 0;
  std::uint64_t group_resolves_ = 0;

  // Incremental re-solve state.
  bool joined_since_resolve_ = false;  // a flow joined since the latest re-solve
  // The flows that joined since the latest re-solve with bytes to send and a
  // route (kFlow with levels tracked); untracked_join_ when another did.
  std::vector<std::uint32_t> joiners_;
  bool untracked_join_ = false;
  std::vector<double> join_weight_;         // per link: the joiners' weight on it (join_bound)
  std::vector<std::uint32_t> join_links_;   // the links with a joiner
  std::uint64_t join_resolves_ = 0;
  double left_min_level_ = std::numeric_limits<double>::infinity();  // λ of the leavers
  bool integer_weights_ = true;        // every flow's weight is an integer
  // Transferring flows by level: one bucket per distinct level, lazily
  // invalidated (an all-to-all's million flows sit at a few hundred levels).
  // The flows at or above λ are the buckets from λ up.
  LevelBuckets level_buckets_;
  std::size_t level_entries_ = 0;  // entries in all buckets, stale ones included
  LevelBuckets::iterator level_hint_ = level_buckets_.end();  // the bucket set_level used last
  // Per link, the distinct levels of its transferring flows (those a solve
  // covered), ascending, with their total weight, and the fold of the
  // groups below each: what an incremental re-solve needs of the flows below
  // λ on a link (FixedLinkState) without visiting them. Kept while
  // incremental re-solves are possible (track_levels_: flow fidelity and
  // integer weights).
  struct LevelGroup {
    double level;
    double weight;         // total weight of the link's flows at this level (an integer)
    std::uint32_t flows;   // how many
    double base_before;    // capacity less the groups below, folded; valid below LinkLevels::folded
  };
  // A link's groups are built when an incremental re-solve first needs them
  // and kept up to date from then on; a component re-solve, which re-levels
  // all its flows at once, drops them (an all-to-all of a million flows would
  // otherwise pay for groups that no incremental re-solve reads).
  struct LinkLevels {
    std::vector<LevelGroup> groups;
    std::uint32_t folded = 0;  // groups[0 .. folded) have a valid base_before
    bool built = false;
  };
  void add_to_level_group(std::uint32_t link, double level, double weight);
  void remove_from_level_group(std::uint32_t link, double level, double weight);
  void build_level_groups(std::uint32_t link);
  void drop_level_groups(std::uint32_t link);
  // After a re-solve from groups: U's new levels as the groups from λ up.
  void regroup_above();
  FixedLinkState fixed_link_state(std::uint32_t link, double lambda);
  bool track_levels_ = false;
  std::vector<LinkLevels> link_levels_;
  std::vector<FixedLinkState> fixed_links_;  // of component_links_, for the solver
  // keep_seeded_components' union-find over the links, per link: parent,
  // the epoch it was last reset in, and the epoch it was last a seed's root.
  std::vector<std::uint32_t> uf_parent_;
  std::vector<std::uint32_t> uf_epoch_of_;
  std::vector<std::uint32_t> uf_seeded_;
  std::uint32_t uf_epoch_ = 0;
  // The replay's sub-problem: D's flows, all flows in increasing id, levels.
  std::vector<std::uint32_t> fixed_flows_;
  std::vector<std::uint32_t> problem_flows_;
  std::vector<double> fixed_level_;
  std::vector<std::pair<double, double>> level_scratch_;  // (level, weight) while building

  bool completion_scheduled_ = false;
  sim::EventId completion_event_{};
  std::int64_t completion_time_ps_ = 0;
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_FLOW_NETWORK_H_
