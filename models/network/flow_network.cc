#include "models/network/flow_network.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace zx::models {

namespace {
const sim::EventLabel kJoinLabel("net/flow_first_byte");
const sim::EventLabel kDoneLabel("net/flow_done");
const sim::EventLabel kResolveLabel("net/resolve");
}  // namespace

std::string_view to_string(NetworkFidelity fidelity) {
  switch (fidelity) {
    case NetworkFidelity::kFlow: return "flow";
    case NetworkFidelity::kAnalytical: return "analytical";
    case NetworkFidelity::kLinkShare: return "linkshare";
  }
  return "unknown";
}

sim::Duration transfer_time(double bytes, double rate_bytes_per_s) {
  if (!(bytes > 0.0) || std::isinf(rate_bytes_per_s)) return sim::Duration::zero();
  return sim::Duration::from_seconds_ceil(bytes / rate_bytes_per_s);
}

FlowNetwork::FlowNetwork(sim::Simulator& simulator, std::vector<LinkParams> links,
                         NetworkFidelity fidelity)
    : sim_(simulator), fidelity_(fidelity), ids_([this] { sweep_finished(); }), history_(links.size()) {
  links_.reserve(links.size());
  for (std::size_t l = 0; l < links.size(); ++l) {
    const LinkParams& p = links[l];
    if (!(p.capacity_bytes_per_s > 0.0) || !std::isfinite(p.capacity_bytes_per_s)) {
      throw std::invalid_argument(fmt::format(
          "network model: link {} has capacity {} B/s, expected a positive finite rate", l,
          p.capacity_bytes_per_s));
    }
    if (p.latency < sim::Duration::zero()) {
      throw std::invalid_argument(fmt::format("network model: link {} has negative latency {}", l,
                                              p.latency.to_string()));
    }
    links_.push_back(Link{.params = p});
  }
  link_to_compact_.assign(links_.size(), 0);
  track_levels_ = fidelity_ == NetworkFidelity::kFlow;
  if (track_levels_) link_levels_.resize(links_.size());
  // A re-solve re-times up to every flow in flight at once: bursts that
  // would otherwise leave a copy in each bucket they passed through.
  completions_.release_drained_buckets(true);
  if (fidelity_ == NetworkFidelity::kLinkShare) {
    track_levels_ = false;
    share_ = std::make_unique<LinkShareNetwork>(sim_, link_params());
  }
}

FlowId FlowNetwork::start_flow(std::span<const std::uint32_t> route, sim::Bytes size,
                               sim::EventCallback on_done, FlowOptions options) {
  if (size.count() < 0) {
    throw std::invalid_argument(
        fmt::format("start_flow: expected a non-negative size, got {} B", size.count()));
  }
  if (!(options.weight > 0.0) || !std::isfinite(options.weight)) {
    throw std::invalid_argument(fmt::format("start_flow: weight {}, expected > 0", options.weight));
  }
  if (!(options.rate_cap_bytes_per_s > 0.0)) {
    throw std::invalid_argument(
        fmt::format("start_flow: rate cap {} B/s, expected > 0", options.rate_cap_bytes_per_s));
  }
  if (options.added_latency < sim::Duration::zero()) {
    throw std::invalid_argument(
        fmt::format("start_flow: added latency {}, expected >= 0", options.added_latency.to_string()));
  }
  // One pass finds unknown links, sums the latency and spots a repeated link
  // by a fresh link mark; only a route that repeats one is scanned again, to
  // name the link (the first one repeated later, or with more than 32 hops
  // the smallest).
  sim::Duration latency = options.added_latency;
  next_stamp(1);
  bool repeated = false;
  for (std::uint32_t l : route) {
    if (l >= links_.size()) {
      throw std::invalid_argument(fmt::format("start_flow: link {} does not exist ({} links)", l,
                                              links_.size()));
    }
    latency += links_[l].params.latency;
    repeated |= links_[l].stamp == stamp_;
    links_[l].stamp = stamp_;
  }
  if (repeated && route.size() > 32) {
    std::vector<std::uint32_t> sorted(route.begin(), route.end());
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
      throw std::invalid_argument(fmt::format("start_flow: the route crosses link {} twice", *dup));
    }
  }
  for (std::size_t i = 0; repeated && route.size() <= 32 && i < route.size(); ++i) {
    for (std::size_t j = i + 1; j < route.size(); ++j) {
      if (route[i] == route[j]) {
        throw std::invalid_argument(
            fmt::format("start_flow: the route crosses link {} twice", route[i]));
      }
    }
  }
  if (share_) {
    share_->add(route, size, options.weight, options.added_latency);
    const std::uint32_t id = share_->start(std::move(on_done), options.rate_cap_bytes_per_s / options.weight);
    if (share_routes_.size() <= id) share_routes_.resize(id + 1);
    share_routes_[id].serial = share_->serial(id);
    share_routes_[id].links.assign(route.begin(), route.end());
    return FlowId{id};
  }
  // Integer weights (to 2^20, so that sums of up to 2^32 flows stay exact)
  // allow the exact incremental re-solve; see flow_network.h.
  integer_weights_ &= options.weight == std::trunc(options.weight) && options.weight <= 0x1p20;
  if (!integer_weights_ && track_levels_) {  // no incremental re-solve from now on
    track_levels_ = false;
    link_levels_ = {};
  }
  if (slots_.size() >= std::numeric_limits<std::uint32_t>::max() - ids_.block_ids()) {
    throw std::length_error("network model: too many flows");
  }
  if (route_links_.size() + route.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw std::length_error("network model: too many route entries");
  }

  const std::uint32_t f = ids_.acquire();
  const bool reuse = f < slots_.size();
  const sim::TimePoint now = sim_.now();
  const std::uint32_t callback = ids_.add_callback(std::move(on_done));
  const FlowSlot slot{.record = FlowRecord{.start = now,
                                           .first_byte = now + latency,
                                           .finish = sim::TimePoint::max(),
                                           .size = size},
                      .callback = callback};
  const Progress progress{.remaining = static_cast<double>(size.count())};
  const auto length = static_cast<std::uint32_t>(route.size());
  if (reuse) {
    // A recycled id keeps its level_version counting up, so that the level
    // buckets' entries of its earlier flows stay stale; its route goes where
    // the id's earlier routes went when it fits (an id's route space only
    // grows, to the longest route it carried).
    const std::uint32_t version = slots_[f].level_version;
    slots_[f] = slot;
    slots_[f].level_version = version;
    progress_[f] = progress;
    state_[f] = State::kLatent;
    flow_stamp_[f] = 0;
    if (route_capacity_[f] < length) {
      route_begin_[f] = static_cast<std::uint32_t>(route_links_.size());
      route_capacity_[f] = length;
      route_links_.resize(route_links_.size() + length);
    }
    route_end_[f] = route_begin_[f] + length;
    std::copy(route.begin(), route.end(), route_links_.begin() + route_begin_[f]);
  } else {
    slots_.push_back(slot);
    progress_.push_back(progress);
    state_.push_back(State::kLatent);
    flow_stamp_.push_back(0);
    route_begin_.push_back(static_cast<std::uint32_t>(route_links_.size()));
    route_links_.insert(route_links_.end(), route.begin(), route.end());
    route_end_.push_back(static_cast<std::uint32_t>(route_links_.size()));
    if (ids_.recycles()) route_capacity_.push_back(length);
  }
  if (exact_incidence_) incidence_slot_.resize(route_links_.size(), 0);
  // weight_ and cap_ stay empty (meaning 1 and none) until a flow needs them.
  // Once non-empty they cover every id (a recycled id can be below others).
  if (options.weight != 1.0 || !weight_.empty()) {
    weight_.resize(slots_.size(), 1.0);
    weight_[f] = options.weight;
  }
  if (std::isfinite(options.rate_cap_bytes_per_s) || !cap_.empty()) {
    cap_.resize(slots_.size(), std::numeric_limits<double>::infinity());
    cap_[f] = options.rate_cap_bytes_per_s;
  }
  // Flows whose first byte falls on the same instant join in one event (an
  // all-to-all's million flows have a handful of distinct latencies).
  const std::int64_t at = (now + latency).count_ps();
  auto [batch, fresh] = pending_joins_.try_emplace(at);
  batch->second.push_back(f);
  if (fresh) {
    sim_.schedule(now + latency, [this, at] {
      auto node = pending_joins_.extract(at);
      for (std::uint32_t g : node.mapped()) join(g);
    }, kJoinLabel);
  }
  return FlowId{f};
}

void FlowNetwork::set_completion_quantum(sim::Duration quantum) {
  if (quantum.count_ps() < 0) {
    throw std::invalid_argument(fmt::format("completion quantum: expected >= 0 ps, found {} ps", quantum.count_ps()));
  }
  if (slots_.size() != 0) {
    throw std::invalid_argument("completion quantum: set it before the first flow starts");
  }
  quantum_ps_ = quantum.count_ps();
  if (share_) share_->set_completion_quantum(quantum);
}

void FlowNetwork::set_completion_tolerance(double relative) {
  if (!(relative >= 0.0 && relative <= kMaxCompletionTolerance)) {
    throw std::invalid_argument(
        fmt::format("completion tolerance: expected 0 to {}, found {}", kMaxCompletionTolerance, relative));
  }
  if (slots_.size() != 0) {
    throw std::invalid_argument("completion tolerance: set it before the first flow starts");
  }
  tolerance_ = relative;
}

std::int64_t FlowNetwork::completion_step_ps(const FlowSlot& slot) const {
  const std::int64_t base = std::max<std::int64_t>(quantum_ps_, 1);
  if (tolerance_ <= 0.0) return base;
  // The coarsest power-of-two multiple of the quantum within the tolerance
  // of the flow's transfer time (first byte to the exact finish estimate):
  // steps of 2^k quanta nest, so two flows on different steps still share
  // the coarser one's instants.
  const double transfer_ps = static_cast<double>((slot.finish_estimate - slot.record.first_byte).count_ps());
  const double steps = std::floor(tolerance_ * transfer_ps / static_cast<double>(base));
  if (!(steps >= 2.0)) return base;
  // Below 2^62 ps (53 days) a step cannot overflow.
  const auto ratio = static_cast<std::uint64_t>(std::min(steps, 0x1p40));
  return base * static_cast<std::int64_t>(std::bit_floor(ratio));
}

void FlowNetwork::recycle_flow_ids(bool on, std::uint32_t block_ids) {
  if (flows_started() != 0) {
    throw std::invalid_argument("recycle_flow_ids: set it before the first flow starts");
  }
  ids_.set_recycling(on, block_ids);
  if (share_) share_->recycle_ids(on);
}

void FlowNetwork::sweep_finished() {
  // A finished id may still sit in the flow lists of its links (they are
  // swept lazily) and in stale completion and level entries. The latter
  // check the id's state and finish estimate or level_version, which a new
  // flow on the id keeps consistent (see start_flow); the lists are swept
  // here, all at once, before FlowIds hands a batch of ids out again.
  if (exact_incidence_) return;
  for (Link& link : links_) {
    if (link.flows.size() > link.active) sweep(link);
  }
}

void FlowNetwork::record_link_history(bool on) {
  if (share_) share_->record_link_history(on);
  history_.set_recording(on);
  if (on) use_exact_incidence();
}

void FlowNetwork::use_exact_incidence() {
  if (exact_incidence_) return;
  exact_incidence_ = true;
  incidence_slot_.assign(route_links_.size(), 0);
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    Link& link = links_[l];
    sweep(link);
    for (std::uint32_t slot = 0; slot < link.flows.size(); ++slot) {
      const std::uint32_t g = link.flows[slot];
      for (std::uint32_t pos = route_begin(g); pos < route_end(g); ++pos) {
        if (route_links_[pos] == l) incidence_slot_[pos] = slot;
      }
    }
  }
}

void FlowNetwork::sweep(Link& link) {
  std::erase_if(link.flows, [this](std::uint32_t g) { return !active(g); });
}

void FlowNetwork::join(std::uint32_t f) {
  if (history_.recording() && fidelity_ == NetworkFidelity::kAnalytical) flush_history_before(sim_.now());
  joined_since_resolve_ = true;
  state_[f] = State::kActive;
  progress_[f].last_update = sim_.now();
  const std::uint32_t begin = route_begin(f);
  const std::uint32_t end = route_end(f);
  for (std::uint32_t pos = begin; pos < end; ++pos) {
    Link& link = links_[route_links_[pos]];
    if (link.active == 0) link.busy_since = sim_.now();
    ++link.active;
    if (exact_incidence_) incidence_slot_[pos] = static_cast<std::uint32_t>(link.flows.size());
    link.flows.push_back(f);
  }
  if (progress_[f].remaining <= 0.0 || begin == end) {
    untracked_join_ = true;
    set_rate(f, std::numeric_limits<double>::infinity());
    reschedule_completion_event();
    return;
  }
  if (fidelity_ == NetworkFidelity::kAnalytical) {
    double bottleneck = cap_of(f);
    for (std::uint32_t pos = begin; pos < end; ++pos) {
      bottleneck = std::min(bottleneck, links_[route_links_[pos]].params.capacity_bytes_per_s);
    }
    set_rate(f, bottleneck);
    if (history_.recording()) {
      history_.note(std::span<const std::uint32_t>(route_links_).subspan(begin, end - begin), sim_.now());
    }
    reschedule_completion_event();
    return;
  }
  for (std::uint32_t pos = begin; pos < end; ++pos) add_seed(route_links_[pos]);
  if (track_levels_) joiners_.push_back(f);
  request_resolve();
}

void FlowNetwork::add_seed(std::uint32_t link) {
  // Each link once per re-solve: a million departing flows name the same
  // few thousand links again and again.
  if (links_[link].seeded) return;
  links_[link].seeded = true;
  seeds_.push_back(link);
}

double FlowNetwork::utilisation(std::uint32_t link) const {
  double load = 0;
  for (std::uint32_t g : links_[link].flows) load += slots_[g].rate;
  return load / links_[link].params.capacity_bytes_per_s;
}

void FlowNetwork::record_links(std::span<const std::uint32_t> links, sim::TimePoint now) const {
  for (std::uint32_t l : links) history_.record(l, now, utilisation(l));
}

void FlowNetwork::flush_history_before(sim::TimePoint now) {
  if (history_.pending_before(now)) flush_history();
}

void FlowNetwork::flush_history() const {
  history_.flush([this](std::uint32_t l) { return utilisation(l); });
}

const std::vector<FlowNetwork::UtilisationSample>& FlowNetwork::link_history(std::uint32_t link) const {
  if (share_) return share_->link_history(link);
  flush_history();
  return history_.samples(link);
}

void FlowNetwork::clear_seeds() {
  for (std::uint32_t l : seeds_) links_[l].seeded = false;
  seeds_.clear();
}

void FlowNetwork::request_resolve() {
  if (resolve_scheduled_) return;
  resolve_scheduled_ = true;
  sim_.schedule(sim_.now(), [this] { resolve(); }, kResolveLabel);
}

void FlowNetwork::set_rate(std::uint32_t f, double rate) {
  FlowSlot& slot = slots_[f];
  Progress& p = progress_[f];
  const sim::TimePoint now = sim_.now();
  if (slot.rate > 0.0 && now > p.last_update) {
    const double elapsed_s = static_cast<double>((now - p.last_update).count_ps()) * 1e-12;
    p.remaining = std::max(0.0, p.remaining - slot.rate * elapsed_s);
  }
  const bool queued = slot.rate > 0.0;
  slot.rate = rate;
  p.last_update = now;
  const sim::TimePoint previous = slot.finish_estimate;
  const sim::Duration left = transfer_time(p.remaining, rate);
  slot.finish_estimate = now + left;
  if ((quantum_ps_ > 1 || tolerance_ > 0.0) && std::isfinite(rate)) {
    // Up to the next multiple of the quantum (or of the tolerance's step) (time is never negative here).
    // Only the flows that join with nothing to send (zero bytes, an empty
    // route: an infinite rate) finish at once.
    const std::int64_t t = slot.finish_estimate.count_ps();
    const std::int64_t step = completion_step_ps(slot);
    const std::int64_t over = t % step;
    if (over != 0 && t <= std::numeric_limits<std::int64_t>::max() - step) {
      slot.finish_estimate = sim::TimePoint::from_ps(t - over + step);
    }
  }
  // Its entry at the unchanged estimate is still queued and valid: pushing
  // another would only add a duplicate for the stale sweeps to walk.
  if (queued && slot.finish_estimate == previous) return;
  push_completion(f);
}

void FlowNetwork::push_completion(std::uint32_t f) {
  new_completions_.push_back({static_cast<std::uint64_t>(slots_[f].finish_estimate.count_ps()), f});
}

void FlowNetwork::flush_completions() {
  // The radix queue re-buckets everything when a key falls below the last
  // key it handed out, which peeking at the next completion moved past now;
  // pushing the batch's earliest entry first does that at most once per
  // batch instead of once per new minimum. (Order among equal keys does not
  // matter: finish_due sorts each instant's flows by id.)
  if (new_completions_.empty()) return;
  const auto earliest = std::min_element(
      new_completions_.begin(), new_completions_.end(),
      [](const sim::RadixEventQueue::Entry& a, const sim::RadixEventQueue::Entry& b) { return a.key < b.key; });
  std::swap(*earliest, new_completions_.front());
  for (const sim::RadixEventQueue::Entry& e : new_completions_) completions_.push(e.key, e.slot);
  new_completions_.clear();
}

bool FlowNetwork::completion_is_stale(std::uint64_t time_ps, std::uint32_t f) const {
  // A flow keeps one valid entry: the one at its current finish estimate.
  // Older entries (its rate changed since) and entries of finished flows are
  // stale; a duplicate at the same time is harmless (finished once).
  return !active(f) || static_cast<std::uint64_t>(slots_[f].finish_estimate.count_ps()) != time_ps;
}

void FlowNetwork::reschedule_completion_event() {
  flush_completions();
  // Drop stale entries wholesale when they are a third of the queue (each
  // sweep removes at least that many, so it costs O(1) per stale entry),
  // then from the front. At twice that (queue > 4x the flows in flight)
  // model A at 64 nodes peaked at 379 MiB instead of 274, in the same time.
  if (completions_.size() > 1024 && completions_.size() > ids_.in_flight() + ids_.in_flight() / 2) {
    completions_.remove_if([this](const sim::RadixEventQueue::Entry& e) { return completion_is_stale(e.key, e.slot); });
  }
  while (!completions_.empty() && completion_is_stale(completions_.front().key, completions_.front().slot)) {
    completions_.pop();
  }
  if (completions_.empty()) {
    if (completion_scheduled_) sim_.cancel(completion_event_);
    completion_scheduled_ = false;
    return;
  }
  const auto next = static_cast<std::int64_t>(completions_.front().key);
  if (completion_scheduled_ && completion_time_ps_ == next) return;
  if (completion_scheduled_) sim_.cancel(completion_event_);
  completion_scheduled_ = true;
  completion_time_ps_ = next;
  completion_event_ =
      sim_.schedule(sim::TimePoint::from_ps(next), [this] { finish_due(); }, kDoneLabel);
}

void FlowNetwork::finish_due() {
  completion_scheduled_ = false;
  const sim::TimePoint now = sim_.now();
  if (history_.recording() && fidelity_ == NetworkFidelity::kAnalytical) flush_history_before(now);
  flush_completions();
  // The finished flows, in a member buffer: an all-to-all's last instants
  // finish hundreds of thousands of flows each.
  std::vector<std::uint32_t> finished = std::move(finished_);
  finished.clear();
  while (!completions_.empty()) {
    const sim::RadixEventQueue::Entry top = completions_.front();
    const bool stale = completion_is_stale(top.key, top.slot);
    if (!stale && top.key != static_cast<std::uint64_t>(now.count_ps())) break;
    completions_.pop();
    if (!stale && active(top.slot)) {
      finished.push_back(top.slot);
      state_[top.slot] = State::kDone;  // a duplicate entry is now stale
    }
  }
  // Finish in flow-id order: the queue keeps push order among equal times.
  std::sort(finished.begin(), finished.end());
  // The flows of one instant sit at scattered ids (hundreds of thousands of
  // them at an all-to-all's last instants): their slots and routes are
  // fetched a few flows ahead, so that the misses overlap.
  constexpr std::size_t kAhead = 8;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> callbacks = std::move(due_callbacks_);
  callbacks.clear();
  for (std::size_t i = 0; i < finished.size(); ++i) {
    if (i + kAhead < finished.size()) {
      __builtin_prefetch(&slots_[finished[i + kAhead]], 1);
      __builtin_prefetch(&route_begin_[finished[i + kAhead]]);
      __builtin_prefetch(&route_end_[finished[i + kAhead]]);
    }
    if (i + kAhead / 2 < finished.size()) {
      __builtin_prefetch(route_links_.data() + route_begin_[finished[i + kAhead / 2]]);
    }
    const std::uint32_t f = finished[i];
    FlowSlot& slot = slots_[f];
    left_min_level_ = std::min(left_min_level_, slot.level);
    slot.rate = 0.0;
    ids_.finish();
    slot.record.finish = now;
    if (slot.callback != kNoCallback) {
      callbacks.emplace_back(f, slot.callback);
      slot.callback = kNoCallback;
    }
    const sim::Bytes size = slot.record.size;
    const bool grouped = track_levels_ && std::isfinite(slot.level);
    for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
      const std::uint32_t l = route_links_[pos];
      Link& link = links_[l];
      if (grouped && link_levels_[l].built) remove_from_level_group(l, slot.level, weight_of(f));
      if (exact_incidence_) {
        // Swap the flow out; the moved flow's slot is found on its route.
        const std::uint32_t at = incidence_slot_[pos];
        const std::uint32_t moved = link.flows.back();
        link.flows[at] = moved;
        for (std::uint32_t q = route_begin(moved); q < route_end(moved); ++q) {
          if (route_links_[q] == l) incidence_slot_[q] = at;
        }
        link.flows.pop_back();
      }
      --link.active;
      if (link.active == 0) link.busy_total += now - link.busy_since;
      link.bytes_carried += size;
      if (fidelity_ == NetworkFidelity::kFlow) add_seed(l);
      if (history_.recording() && fidelity_ == NetworkFidelity::kAnalytical) history_.note({&l, 1}, now);
    }
  }
  if (!seeds_.empty()) request_resolve();
  reschedule_completion_event();
  finished_ = std::move(finished);
  // Callbacks last, in flow-id order: they may start flows, which may grow
  // the callbacks ids_ keeps.
  for (const auto& [f, c] : callbacks) {
    sim::EventCallback done = ids_.take_callback(c);
    done();
  }
  due_callbacks_ = std::move(callbacks);
  // Their callbacks have run: the ids may be handed out again.
  ids_.release(finished_);
}

void FlowNetwork::resolve() {
  resolve_scheduled_ = false;
  const bool removal_only = !joined_since_resolve_ && integer_weights_;
  std::vector<std::uint32_t> touched;
  if (history_.recording()) touched = seeds_;
  // Flows that join change no rate below the level at which the first of
  // their links would fill with them on it (join_bound): up to there a
  // from-scratch progressive filling freezes the same flows at the same
  // levels as before. So joins, like departures, re-solve only the flows at
  // or above a level; they are reached from the joined flows' links through
  // such flows, the rest of the fabric keeping its rates (component
  // exactness).
  bool done = false;
  if (removal_only) {
    done = resolve_incremental(left_min_level_, /*from_seeds=*/false);
  } else if (integer_weights_ && track_levels_ && !untracked_join_) {
    // When the bound is below every flow's level nothing is fixed, and the
    // component re-solve does the same work for less (a collective step's
    // flows joining at once, most of a what-if's joins).
    const double lambda = std::min(left_min_level_, join_bound());
    if (!level_buckets_.empty() && level_buckets_.begin()->first < lambda) {
      done = resolve_incremental(lambda, /*from_seeds=*/true);
      if (done) ++join_resolves_;
    }
  }
  if (!done) resolve_component();
  joiners_.clear();
  untracked_join_ = false;
  if (history_.recording()) {
    record_links(touched, sim_.now());
    record_links(component_links_, sim_.now());
  }
  joined_since_resolve_ = false;
  left_min_level_ = std::numeric_limits<double>::infinity();
  clear_seeds();
  flush_levels();
  reschedule_completion_event();
}

void FlowNetwork::next_stamp(std::uint32_t count) {
  // Takes `count` fresh marks (stamp_ - count + 1 .. stamp_); clears every
  // mark once before the counter would wrap.
  if (stamp_ > std::numeric_limits<std::uint32_t>::max() - 1 - count) {
    for (Link& link : links_) link.stamp = 0;
    std::fill(flow_stamp_.begin(), flow_stamp_.end(), 0);
    stamp_ = 0;
  }
  stamp_ += count;
}

// Canonical order (increasing ids) so that the rates do not depend on how a
// set was discovered. Every id in the set carries `mark`. For a set that
// covers most of its id range a scan of the range (by the mark) is cheaper
// than sorting.
void FlowNetwork::canonical(std::vector<std::uint32_t>& ids, bool of_links, std::uint32_t mark) {
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const std::uint32_t first = *lo;
  const std::uint32_t last = *hi;
  if (static_cast<std::uint64_t>(last - first) < 16 * static_cast<std::uint64_t>(ids.size())) {
    ids.clear();
    for (std::uint32_t id = first; id <= last; ++id) {
      if ((of_links ? links_[id].stamp : flow_stamp_[id]) == mark) ids.push_back(id);
    }
  } else {
    std::sort(ids.begin(), ids.end());
  }
}

void FlowNetwork::set_level(std::uint32_t f, double level) {
  FlowSlot& slot = slots_[f];
  if (level == slot.level) return;
  if (track_levels_) {
    const double w = weight_of(f);
    for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
      const std::uint32_t l = route_links_[pos];
      if (!link_levels_[l].built) continue;
      if (std::isfinite(slot.level)) remove_from_level_group(l, slot.level, w);
      if (std::isfinite(level)) add_to_level_group(l, level, w);
    }
  }
  slot.level = level;
  const std::uint32_t version = ++slot.level_version;
  if (level_hint_ == level_buckets_.end() || level_hint_->first != level) {
    level_hint_ = level_buckets_.try_emplace(level).first;
  }
  level_hint_->second.push_back({f, version});
  ++level_entries_;
}

void FlowNetwork::add_to_level_group(std::uint32_t link, double level, double weight) {
  LinkLevels& ll = link_levels_[link];
  std::vector<LevelGroup>& g = ll.groups;
  // Most flows of a solve share a few levels: try the last group first.
  auto it = !g.empty() && g.back().level <= level
                ? g.end() - 1
                : std::lower_bound(g.begin(), g.end(), level,
                                   [](const LevelGroup& a, double x) { return a.level < x; });
  if (it != g.end() && it->level == level) {
    it->weight += weight;
    ++it->flows;
    ll.folded = std::min(ll.folded, static_cast<std::uint32_t>(it - g.begin()) + 1);
    return;
  }
  if (it != g.end() && it->level < level) ++it;  // the last group, below level
  const auto index = static_cast<std::uint32_t>(it - g.begin());
  g.insert(it, LevelGroup{.level = level, .weight = weight, .flows = 1, .base_before = 0.0});
  ll.folded = std::min(ll.folded, index);
}

void FlowNetwork::remove_from_level_group(std::uint32_t link, double level, double weight) {
  LinkLevels& ll = link_levels_[link];
  std::vector<LevelGroup>& g = ll.groups;
  auto it = std::lower_bound(g.begin(), g.end(), level,
                             [](const LevelGroup& a, double x) { return a.level < x; });
  // Every grouped flow was added at its current level.
  if (it == g.end() || it->level != level) {
    throw std::logic_error(fmt::format("network model: link {} has no flow at level {}", link, level));
  }
  const auto index = static_cast<std::uint32_t>(it - g.begin());
  it->weight -= weight;
  if (--it->flows == 0) {
    g.erase(it);
    ll.folded = std::min(ll.folded, index);
  } else {
    ll.folded = std::min(ll.folded, index + 1);
  }
}

void FlowNetwork::build_level_groups(std::uint32_t link) {
  LinkLevels& ll = link_levels_[link];
  Link& l = links_[link];
  if (l.flows.size() > l.active) sweep(l);
  level_scratch_.clear();
  for (std::uint32_t g : l.flows) {
    if (std::isfinite(slots_[g].level)) level_scratch_.emplace_back(slots_[g].level, weight_of(g));
  }
  // Integer weights: their sums are exact in any order.
  std::sort(level_scratch_.begin(), level_scratch_.end());
  ll.groups.clear();
  for (const auto& [level, weight] : level_scratch_) {
    if (!ll.groups.empty() && ll.groups.back().level == level) {
      ll.groups.back().weight += weight;
      ++ll.groups.back().flows;
    } else {
      ll.groups.push_back(LevelGroup{.level = level, .weight = weight, .flows = 1, .base_before = 0.0});
    }
  }
  ll.folded = 0;
  ll.built = true;
}

void FlowNetwork::drop_level_groups(std::uint32_t link) {
  LinkLevels& ll = link_levels_[link];
  if (!ll.built) return;
  ll.groups.clear();
  ll.folded = 0;
  ll.built = false;
}

FixedLinkState FlowNetwork::fixed_link_state(std::uint32_t link, double lambda) {
  // The groups below λ, folded as the solver's replay folds them: every group
  // but the last closed in ascending order, the last one open.
  LinkLevels& ll = link_levels_[link];
  std::vector<LevelGroup>& g = ll.groups;
  const double capacity = links_[link].params.capacity_bytes_per_s;
  const auto below = static_cast<std::uint32_t>(
      std::lower_bound(g.begin(), g.end(), lambda,
                       [](const LevelGroup& a, double x) { return a.level < x; }) -
      g.begin());
  if (below == 0) return FixedLinkState{capacity, 0.0, 0.0};
  for (std::uint32_t i = ll.folded; i < below; ++i) {
    g[i].base_before = i == 0 ? capacity : fold_step(g[i - 1].base_before, g[i - 1].level, g[i - 1].weight);
  }
  ll.folded = std::max(ll.folded, below);
  const LevelGroup& last = g[below - 1];
  return FixedLinkState{last.base_before, last.level, last.weight};
}

void FlowNetwork::flush_levels() {
  // Walks drop the stale entries of the buckets they visit; the buckets
  // below every leaver's level are swept here, wholesale, when stale entries
  // dominate (O(entries), about what they already cost).
  if (level_entries_ <= 1024 || level_entries_ <= 2 * ids_.in_flight()) return;
  level_entries_ = 0;
  for (auto it = level_buckets_.begin(); it != level_buckets_.end();) {
    std::erase_if(it->second, [this](const LevelEntry& e) {
      return !active(e.flow) || slots_[e.flow].level_version != e.version;
    });
    level_entries_ += it->second.size();
    it = it->second.empty() ? level_buckets_.erase(it) : std::next(it);
  }
  level_hint_ = level_buckets_.end();
}

void FlowNetwork::begin_problem(std::span<const std::uint32_t> flows) {
  // Room for every flow's whole route, reserved at once: a million-flow
  // problem grown by doubling would copy and fault in twice its size.
  std::size_t incidences = 0;
  for (std::uint32_t f : flows) incidences += route_end(f) - route_begin(f);
  problem_.links.reserve(incidences);
  problem_.link_offsets.reserve(flows.size() + 1);
  new_completions_.reserve(flows.size());
  // The links of the problem are component_links_, numbered in that order.
  problem_.capacity.clear();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    const std::uint32_t l = component_links_[i];
    link_to_compact_[l] = static_cast<std::uint32_t>(i);
    problem_.capacity.push_back(links_[l].params.capacity_bytes_per_s);
  }
  problem_.link_offsets.assign(1, 0);
  problem_.links.clear();
  problem_.weight.clear();
  problem_.cap.clear();
}

void FlowNetwork::resolve_component() {
  next_stamp(1);
  // The connected component of the seed links: flows on them, the links of
  // those flows, and so on.
  component_links_.clear();
  component_flows_.clear();
  for (std::uint32_t l : seeds_) {
    if (links_[l].stamp != stamp_) {
      links_[l].stamp = stamp_;
      component_links_.push_back(l);
    }
  }
  clear_seeds();
  for (std::size_t i = 0; i < component_links_.size(); ++i) {
    Link& link = links_[component_links_[i]];
    if (link.flows.size() > link.active) sweep(link);
    for (std::uint32_t g : link.flows) {
      if (flow_stamp_[g] == stamp_) continue;
      flow_stamp_[g] = stamp_;
      component_flows_.push_back(g);
      for (std::uint32_t pos = route_begin(g); pos < route_end(g); ++pos) {
        Link& other = links_[route_links_[pos]];
        if (other.stamp == stamp_) continue;
        other.stamp = stamp_;
        component_links_.push_back(route_links_[pos]);
      }
    }
  }
  if (component_flows_.empty()) return;
  canonical(component_links_, /*of_links=*/true, stamp_);
  canonical(component_flows_, /*of_links=*/false, stamp_);

  begin_problem(component_flows_);
  bool weighted = false;
  bool capped = false;
  for (std::uint32_t f : component_flows_) {
    weighted |= weight_of(f) != 1.0;
    capped |= std::isfinite(cap_of(f));
    for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
      problem_.links.push_back(link_to_compact_[route_links_[pos]]);
    }
    problem_.link_offsets.push_back(static_cast<std::uint32_t>(problem_.links.size()));
  }
  if (weighted) {
    for (std::uint32_t f : component_flows_) problem_.weight.push_back(weight_of(f));
  }
  if (capped) {
    for (std::uint32_t f : component_flows_) problem_.cap.push_back(cap_of(f));
  }
  const std::vector<double>& rates = solver_.solve(problem_);
  const std::vector<double>& levels = solver_.levels();
  ++resolves_;
  resolved_flows_ += component_flows_.size();
  if (track_levels_) {
    for (std::uint32_t l : component_links_) drop_level_groups(l);
  }
  for (std::size_t i = 0; i < component_flows_.size(); ++i) {
    const std::uint32_t f = component_flows_[i];
    if (rates[i] != slots_[f].rate) set_rate(f, rates[i]);
    set_level(f, levels[i]);
  }
}

double FlowNetwork::join_bound() {
  // Progressive filling of the new problem repeats the old one while no
  // link with a joiner fills: on such a link, once the old solve's groups
  // below level t have frozen, the share is (capacity - their rates) /
  // (the weight still unfrozen + the joiners' weight), and the link fills
  // at the first t where that share is at most t. A joiner's cap binds at
  // cap / weight. The bound is the least of these, lowered by 1e-8 of
  // itself: more than the rounding of these sums and the solver's level
  // tolerance (1e-10), so that no flow fixed below it can move. Departures
  // at the same instant are handled by taking the least with their λ (the
  // groups have lost the leavers already, which is right below their λ).
  double bound = std::numeric_limits<double>::infinity();
  if (join_weight_.size() != links_.size()) join_weight_.assign(links_.size(), 0.0);
  join_links_.clear();
  for (std::uint32_t f : joiners_) {
    if (!active(f)) continue;
    const double w = weight_of(f);
    bound = std::min(bound, cap_of(f) / w);
    for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
      const std::uint32_t l = route_links_[pos];
      if (join_weight_[l] == 0.0) join_links_.push_back(l);
      join_weight_[l] += w;
    }
  }
  for (std::uint32_t l : join_links_) {
    const double joined = join_weight_[l];
    join_weight_[l] = 0.0;
    if (!link_levels_[l].built && weight_.empty()) {
      // No groups kept here (building them would make every later level
      // change on this link update them): the share with every flow on it
      // unfrozen, joiners included, which is where the filling starts and
      // so at most the level it fills at.
      bound = std::min(bound, links_[l].params.capacity_bytes_per_s / static_cast<double>(links_[l].active));
      continue;
    }
    if (!link_levels_[l].built) build_level_groups(l);
    const std::vector<LevelGroup>& groups = link_levels_[l].groups;
    double rest = links_[l].params.capacity_bytes_per_s;
    double unfrozen = 0.0;
    for (const LevelGroup& g : groups) unfrozen += g.weight;
    double fills = -1.0;
    for (const LevelGroup& g : groups) {
      const double share = rest / (unfrozen + joined);
      if (share <= g.level) {
        fills = share;
        break;
      }
      rest -= g.level * g.weight;
      unfrozen -= g.weight;
    }
    if (fills < 0.0) fills = rest / (unfrozen + joined);
    bound = std::min(bound, std::max(fills, 0.0));
  }
  return bound * (1.0 - 1e-8);
}

void FlowNetwork::keep_seeded_components() {
  // The flows at or above λ fall into groups that share no link with each
  // other. A group none of whose links a leaver crossed has the same
  // sub-problem as before the departures (the same flows, and the same
  // capacity left them by the flows below λ), so it keeps its rates bit for
  // bit (the solver's component exactness): only the groups holding a seed
  // link are re-solved. The groups come from a union-find over the links,
  // one pass over the flows' routes, where reaching them from the seeds
  // would walk every flow on the links, those below λ too.
  if (seeds_.empty()) return;
  if (uf_parent_.size() != links_.size()) {
    uf_parent_.assign(links_.size(), 0);
    uf_epoch_of_.assign(links_.size(), 0);
    uf_seeded_.assign(links_.size(), 0);
    uf_epoch_ = 0;
  }
  if (uf_epoch_ == std::numeric_limits<std::uint32_t>::max()) {
    std::fill(uf_epoch_of_.begin(), uf_epoch_of_.end(), 0);
    std::fill(uf_seeded_.begin(), uf_seeded_.end(), 0);
    uf_epoch_ = 0;
  }
  const std::uint32_t epoch = ++uf_epoch_;
  auto find = [&](std::uint32_t l) {
    if (uf_epoch_of_[l] != epoch) {
      uf_epoch_of_[l] = epoch;
      uf_parent_[l] = l;
      return l;
    }
    while (uf_parent_[l] != l) {
      uf_parent_[l] = uf_parent_[uf_parent_[l]];  // path halving
      l = uf_parent_[l];
    }
    return l;
  };
  for (std::uint32_t f : component_flows_) {
    if (route_begin(f) == route_end(f)) continue;
    std::uint32_t root = find(route_links_[route_begin(f)]);
    for (std::uint32_t pos = route_begin(f) + 1; pos < route_end(f); ++pos) {
      const std::uint32_t other = find(route_links_[pos]);
      if (other != root) uf_parent_[other] = root;
    }
  }
  for (std::uint32_t l : seeds_) uf_seeded_[find(l)] = epoch;
  std::erase_if(component_flows_, [&](std::uint32_t f) {
    return route_begin(f) != route_end(f) && uf_seeded_[find(route_links_[route_begin(f)])] != epoch;
  });
}

std::uint32_t FlowNetwork::take_into_set(std::uint32_t f, std::uint32_t mark) {
  flow_stamp_[f] = mark;
  for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
    std::uint32_t& link_mark = links_[route_links_[pos]].stamp;
    if (link_mark == mark) continue;
    link_mark = mark;
    component_links_.push_back(route_links_[pos]);
  }
  return route_end(f) - route_begin(f);
}

bool FlowNetwork::resolve_incremental(double lambda, bool from_seeds) {
  // Leavers that no solve covered (zero-size flows) change no one's rate.
  if (!(lambda < std::numeric_limits<double>::infinity())) return true;

  // U: the transferring flows at or above λ that may move, and U's links.
  // Every other flow on those links (D) is below λ and keeps its rate. Two
  // marks: stamp_ - 1 for U (flows and links), stamp_ for D.
  component_flows_.clear();
  component_links_.clear();
  std::uint64_t u_incidences = 0;
  next_stamp(2);
  const std::uint32_t u_mark = stamp_ - 1;
  const std::uint32_t d_mark = stamp_;
  if (from_seeds) {
    // The flows at or above λ reached from the seed links through such
    // flows (the joiners, never solved, sit at +inf). A group of them that
    // no seed reaches shares no link with a changed one, so it keeps its
    // rates (the solver's component exactness).
    for (std::uint32_t l : seeds_) {
      if (links_[l].stamp == u_mark) continue;
      links_[l].stamp = u_mark;
      component_links_.push_back(l);
    }
    for (std::size_t i = 0; i < component_links_.size(); ++i) {
      Link& link = links_[component_links_[i]];
      if (link.flows.size() > link.active) sweep(link);
      for (std::uint32_t g : link.flows) {
        if (flow_stamp_[g] == u_mark || !(slots_[g].level >= lambda)) continue;
        component_flows_.push_back(g);
        u_incidences += take_into_set(g, u_mark);
      }
    }
    if (component_flows_.empty()) return true;
  } else {
    // The buckets from λ up (whose stale entries are dropped on the way).
    for (auto it = level_buckets_.lower_bound(lambda); it != level_buckets_.end();) {
      std::vector<LevelEntry>& bucket = it->second;
      std::size_t kept = 0;
      for (const LevelEntry& e : bucket) {
        if (!active(e.flow) || slots_[e.flow].level_version != e.version) continue;
        bucket[kept++] = e;
        component_flows_.push_back(e.flow);
      }
      level_entries_ -= bucket.size() - kept;
      bucket.resize(kept);
      if (kept == 0) {
        if (it == level_hint_) level_hint_ = level_buckets_.end();
        it = level_buckets_.erase(it);
      } else {
        ++it;
      }
    }
    keep_seeded_components();
    if (component_flows_.empty()) return true;
    for (std::uint32_t f : component_flows_) u_incidences += take_into_set(f, u_mark);
  }
  canonical(component_flows_, /*of_links=*/false, u_mark);
  canonical(component_links_, /*of_links=*/true, u_mark);
  std::uint64_t link_incidences = 0;
  for (std::uint32_t l : component_links_) link_incidences += links_[l].active;

  // What the free flows need of D is, per link of U, D's levels there folded
  // (FixedLinkState). Two exact ways to get it, the same bits: from the
  // links' level groups, at a cost in U's flows (the groups are kept up to
  // date as U's flows change level), or by handing D's flows to the solver to
  // replay, at a cost in D's flows on U's links. Groups when D dominates
  // (an all-to-all's tail: a few thousand flows re-levelled next to a
  // hundred thousand fixed ones); the replay when U is most of the links'
  // flows (an all-to-all's first departures re-level nearly everything, and
  // keeping groups for them would cost more than it saves).
  const bool by_groups = track_levels_ && link_incidences - u_incidences > u_incidences;
  if (!by_groups) {
    if (track_levels_) {
      for (std::uint32_t l : component_links_) drop_level_groups(l);
    }
    fixed_flows_.clear();
    for (std::uint32_t l : component_links_) {
      Link& link = links_[l];
      if (link.flows.size() > link.active) sweep(link);
      for (std::uint32_t g : link.flows) {
        const std::uint32_t mark = flow_stamp_[g];
        if (mark == u_mark || mark == d_mark) continue;
        flow_stamp_[g] = d_mark;
        // Every flow on a link was covered by a solve, below λ; anything else
        // (which no join-free instant should produce) takes the safe path.
        if (!(slots_[g].level < lambda)) return false;
        fixed_flows_.push_back(g);
      }
    }
    canonical(fixed_flows_, /*of_links=*/false, d_mark);
  } else {
    fixed_flows_.clear();
  }
  problem_flows_.resize(component_flows_.size() + fixed_flows_.size());
  std::merge(component_flows_.begin(), component_flows_.end(), fixed_flows_.begin(),
             fixed_flows_.end(), problem_flows_.begin());

  // The sub-problem: U's links in increasing id, its flows in increasing id
  // (with the replay, D's too; a fixed flow lists only its links among U's).
  begin_problem(problem_flows_);
  fixed_level_.clear();
  bool weighted = false;
  bool capped = false;
  for (std::uint32_t f : problem_flows_) {
    weighted |= weight_of(f) != 1.0;
    capped |= std::isfinite(cap_of(f));
    const bool free = flow_stamp_[f] == u_mark;
    for (std::uint32_t pos = route_begin(f); pos < route_end(f); ++pos) {
      const std::uint32_t l = route_links_[pos];
      if (free || links_[l].stamp == u_mark) problem_.links.push_back(link_to_compact_[l]);
    }
    problem_.link_offsets.push_back(static_cast<std::uint32_t>(problem_.links.size()));
    if (!by_groups) fixed_level_.push_back(free ? MaxMinSolver::kFree : slots_[f].level);
  }
  if (weighted) {
    for (std::uint32_t f : problem_flows_) problem_.weight.push_back(weight_of(f));
  }
  if (capped) {
    for (std::uint32_t f : problem_flows_) problem_.cap.push_back(cap_of(f));
  }
  if (by_groups) {
    fixed_links_.clear();
    for (std::uint32_t l : component_links_) {
      if (!link_levels_[l].built) build_level_groups(l);
      fixed_links_.push_back(fixed_link_state(l, lambda));
    }
  }
  const std::vector<double>& rates = by_groups ? solver_.solve_with_fixed_links(problem_, fixed_links_)
                                               : solver_.solve_with_fixed(problem_, fixed_level_);
  const std::vector<double>& levels = solver_.levels();
  ++resolves_;
  if (!from_seeds) ++incremental_resolves_;
  if (by_groups) ++group_resolves_;
  resolved_flows_ += component_flows_.size();
  if (!from_seeds) incremental_resolved_flows_ += component_flows_.size();
  if (by_groups) {
    // On U's links the groups at or above λ were U's flows, all of them (every
    // other flow is below λ); U's new levels are at or above λ too. So the
    // groups from λ up are rebuilt at once below, and set_level leaves these
    // links alone meanwhile (built off): one sort per link instead of a
    // removal and an insertion per flow and link.
    for (std::uint32_t l : component_links_) {
      LinkLevels& ll = link_levels_[l];
      const auto keep = static_cast<std::uint32_t>(
          std::lower_bound(ll.groups.begin(), ll.groups.end(), lambda,
                           [](const LevelGroup& a, double x) { return a.level < x; }) -
          ll.groups.begin());
      ll.groups.resize(keep);
      ll.folded = std::min(ll.folded, keep);
      ll.built = false;
    }
  }
  for (std::size_t i = 0; i < problem_flows_.size(); ++i) {
    const std::uint32_t f = problem_flows_[i];
    if (flow_stamp_[f] != u_mark) continue;
    if (rates[i] != slots_[f].rate) set_rate(f, rates[i]);
    set_level(f, levels[i]);
  }
  if (by_groups) regroup_above();
  return true;
}

void FlowNetwork::regroup_above() {
  // U's flows in the order the solver froze them, which is by level
  // (progressive filling freezes at non-decreasing levels): each link's new
  // groups come out in order, appended after the ones below λ. (In the groups
  // path the problem's flows are U's, with their whole routes.)
  const std::vector<double>& levels = solver_.levels();
  for (std::uint32_t i : solver_.freeze_order()) {
    const std::uint32_t f = component_flows_[i];
    const double level = levels[i];
    const double weight = weight_of(f);
    for (std::uint32_t k = problem_.link_offsets[i]; k < problem_.link_offsets[i + 1]; ++k) {
      const std::uint32_t l = component_links_[problem_.links[k]];
      std::vector<LevelGroup>& g = link_levels_[l].groups;
      if (!g.empty() && g.back().level == level) {
        g.back().weight += weight;
        ++g.back().flows;
        continue;
      }
      if (!g.empty() && g.back().level > level) {
        throw std::logic_error(fmt::format(
            "network model: a re-solve froze a flow at level {} after level {} on link {}", level,
            g.back().level, l));
      }
      g.push_back(LevelGroup{.level = level, .weight = weight, .flows = 1, .base_before = 0.0});
    }
  }
  for (std::uint32_t l : component_links_) link_levels_[l].built = true;
}

LinkRecord FlowNetwork::link(std::uint32_t index) const {
  if (share_) return share_->link(index);
  const Link& l = links_.at(index);
  LinkRecord record{l.bytes_carried, l.busy_total};
  if (l.active > 0) record.busy_time += sim_.now() - l.busy_since;
  return record;
}

std::vector<LinkParams> FlowNetwork::link_params() const {
  std::vector<LinkParams> out;
  out.reserve(links_.size());
  for (const Link& l : links_) out.push_back(l.params);
  return out;
}

std::span<const std::uint32_t> FlowNetwork::route(FlowId id) const {
  if (share_) {
    const auto f = static_cast<std::uint32_t>(id);
    if (f >= share_->num_ids()) throw std::out_of_range(fmt::format("route: no flow {}", f));
    if (f < share_routes_.size() && share_routes_[f].serial == share_->serial(f)) return share_routes_[f].links;
    return {};
  }
  const auto f = static_cast<std::uint32_t>(id);
  if (f >= slots_.size()) throw std::out_of_range(fmt::format("route: no flow {}", f));
  return std::span<const std::uint32_t>(route_links_).subspan(route_begin(f), route_end(f) - route_begin(f));
}

std::vector<std::uint32_t> FlowNetwork::hottest_links(std::size_t k) const {
  if (share_) return share_->hottest_links(k);
  std::vector<std::uint32_t> order;
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    if (links_[l].bytes_carried.count() > 0) order.push_back(l);
  }
  const auto load = [this](std::uint32_t l) {
    return static_cast<double>(links_[l].bytes_carried.count()) / links_[l].params.capacity_bytes_per_s;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return load(a) > load(b); });
  if (order.size() > k) order.resize(k);
  return order;
}

}  // namespace zx::models
