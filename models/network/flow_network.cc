#include "models/network/flow_network.h"

#include <algorithm>
#include <cmath>
#include <functional>
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
  }
  return "unknown";
}

sim::Duration transfer_time(double bytes, double rate_bytes_per_s) {
  if (!(bytes > 0.0) || std::isinf(rate_bytes_per_s)) return sim::Duration::zero();
  return sim::Duration::from_seconds_ceil(bytes / rate_bytes_per_s);
}

FlowNetwork::FlowNetwork(sim::Simulator& simulator, std::vector<LinkParams> links,
                         NetworkFidelity fidelity)
    : sim_(simulator), fidelity_(fidelity) {
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
  sim::Duration latency = sim::Duration::zero();
  for (std::uint32_t l : route) {
    if (l >= links_.size()) {
      throw std::invalid_argument(fmt::format("start_flow: link {} does not exist ({} links)", l,
                                              links_.size()));
    }
    latency += links_[l].params.latency;
  }
  // Routes are short (a dozen hops in a Clos): a quadratic scan finds a
  // repeated link without the allocation a sorted copy would cost per flow.
  if (route.size() > 32) {
    std::vector<std::uint32_t> sorted(route.begin(), route.end());
    std::sort(sorted.begin(), sorted.end());
    if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end()) {
      throw std::invalid_argument(fmt::format("start_flow: the route crosses link {} twice", *dup));
    }
  }
  for (std::size_t i = 0; route.size() <= 32 && i < route.size(); ++i) {
    for (std::size_t j = i + 1; j < route.size(); ++j) {
      if (route[i] == route[j]) {
        throw std::invalid_argument(
            fmt::format("start_flow: the route crosses link {} twice", route[i]));
      }
    }
  }
  // Integer weights (to 2^20, so that sums of up to 2^32 flows stay exact)
  // allow the exact incremental re-solve; see flow_network.h.
  integer_weights_ &= options.weight == std::trunc(options.weight) && options.weight <= 0x1p20;
  if (flows_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
    throw std::length_error("network model: too many flows");
  }

  const auto f = static_cast<std::uint32_t>(flows_.size());
  const auto begin = static_cast<std::uint32_t>(route_links_.size());
  route_links_.insert(route_links_.end(), route.begin(), route.end());
  incidence_slot_.resize(route_links_.size(), 0);
  const sim::TimePoint now = sim_.now();
  records_.push_back(FlowRecord{.start = now,
                                .first_byte = now + latency,
                                .finish = sim::TimePoint::max(),
                                .size = size});
  flows_.push_back(Flow{.route_begin = begin,
                        .route_end = static_cast<std::uint32_t>(route_links_.size()),
                        .weight = options.weight,
                        .cap = options.rate_cap_bytes_per_s,
                        .remaining = static_cast<double>(size.count()),
                        .on_done = std::move(on_done)});
  flow_stamp_.push_back(0);
  ++in_flight_;
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

void FlowNetwork::join(std::uint32_t f) {
  joined_since_resolve_ = true;
  Flow& flow = flows_[f];
  flow.state = State::kActive;
  flow.last_update = sim_.now();
  for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
    Link& link = links_[route_links_[pos]];
    if (link.active.empty()) link.busy_since = sim_.now();
    incidence_slot_[pos] = static_cast<std::uint32_t>(link.active.size());
    link.active.push_back({f, pos});
  }
  const bool empty_route = flow.route_begin == flow.route_end;
  if (flow.remaining <= 0.0 || empty_route) {
    set_rate(f, std::numeric_limits<double>::infinity());
    reschedule_completion_event();
    return;
  }
  if (fidelity_ == NetworkFidelity::kAnalytical) {
    double bottleneck = flow.cap;
    for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
      bottleneck = std::min(bottleneck, links_[route_links_[pos]].params.capacity_bytes_per_s);
    }
    set_rate(f, bottleneck);
    if (record_history_) {
      record_links(std::span<const std::uint32_t>(route_links_).subspan(flow.route_begin,
                                                                         flow.route_end - flow.route_begin));
    }
    reschedule_completion_event();
    return;
  }
  for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) add_seed(route_links_[pos]);
  request_resolve();
}

void FlowNetwork::add_seed(std::uint32_t link) {
  // Each link once per re-solve: a million departing flows name the same
  // few thousand links again and again.
  if (links_[link].seeded) return;
  links_[link].seeded = true;
  seeds_.push_back(link);
}

void FlowNetwork::record_links(std::span<const std::uint32_t> links) {
  if (history_.size() < links_.size()) history_.resize(links_.size());
  const sim::TimePoint now = sim_.now();
  for (std::uint32_t l : links) {
    double load = 0;
    for (const Incidence& inc : links_[l].active) load += flows_[inc.flow].rate;
    const double utilisation = load / links_[l].params.capacity_bytes_per_s;
    std::vector<UtilisationSample>& h = history_[l];
    if (!h.empty() && h.back().time == now) {
      h.back().utilisation = utilisation;
    } else if (h.empty() || h.back().utilisation != utilisation) {
      h.push_back({now, utilisation});
    }
  }
}

const std::vector<FlowNetwork::UtilisationSample>& FlowNetwork::link_history(std::uint32_t link) const {
  static const std::vector<UtilisationSample> kEmpty;
  return link < history_.size() ? history_[link] : kEmpty;
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
  Flow& flow = flows_[f];
  const sim::TimePoint now = sim_.now();
  if (flow.rate > 0.0 && now > flow.last_update) {
    const double elapsed_s = static_cast<double>((now - flow.last_update).count_ps()) * 1e-12;
    flow.remaining = std::max(0.0, flow.remaining - flow.rate * elapsed_s);
  }
  flow.rate = rate;
  flow.last_update = now;
  flow.finish_estimate = now + transfer_time(flow.remaining, rate);
  push_completion(f);
}

void FlowNetwork::push_completion(std::uint32_t f) {
  completions_.push(static_cast<std::uint64_t>(flows_[f].finish_estimate.count_ps()), f);
}

bool FlowNetwork::completion_is_stale(std::uint64_t time_ps, std::uint32_t f) const {
  // A flow keeps one valid entry: the one at its current finish estimate.
  // Older entries (its rate changed since) and entries of finished flows are
  // stale; a duplicate at the same time is harmless (finished once).
  const Flow& flow = flows_[f];
  return flow.state != State::kActive || static_cast<std::uint64_t>(flow.finish_estimate.count_ps()) != time_ps;
}

void FlowNetwork::reschedule_completion_event() {
  // Drop stale entries wholesale when they dominate, then from the front.
  if (completions_.size() > 1024 && completions_.size() > 4 * in_flight_) {
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
  std::vector<std::uint32_t> finished;
  while (!completions_.empty()) {
    const sim::RadixEventQueue::Entry top = completions_.front();
    const bool stale = completion_is_stale(top.key, top.slot);
    if (!stale && top.key != static_cast<std::uint64_t>(now.count_ps())) break;
    completions_.pop();
    if (!stale && flows_[top.slot].state == State::kActive) {
      finished.push_back(top.slot);
      flows_[top.slot].state = State::kDone;  // a duplicate entry is now stale
    }
  }
  // Finish in flow-id order: the queue keeps push order among equal times.
  std::sort(finished.begin(), finished.end());
  for (std::uint32_t f : finished) {
    Flow& flow = flows_[f];
    left_min_level_ = std::min(left_min_level_, flow.level);
    flow.rate = 0.0;
    flow.remaining = 0.0;
    --in_flight_;
    records_[f].finish = now;
    for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
      const std::uint32_t l = route_links_[pos];
      Link& link = links_[l];
      const std::uint32_t slot = incidence_slot_[pos];
      const Incidence moved = link.active.back();
      link.active[slot] = moved;
      incidence_slot_[moved.route_position] = slot;
      link.active.pop_back();
      if (link.active.empty()) link.busy_total += now - link.busy_since;
      link.bytes_carried += records_[f].size;
      if (fidelity_ == NetworkFidelity::kFlow) add_seed(l);
      if (record_history_ && fidelity_ == NetworkFidelity::kAnalytical) record_links({&l, 1});
    }
  }
  if (!seeds_.empty()) request_resolve();
  reschedule_completion_event();
  // Callbacks last: they may start flows, which may grow flows_.
  for (std::uint32_t f : finished) {
    sim::EventCallback done = std::move(flows_[f].on_done);
    if (done) done();
  }
}

void FlowNetwork::resolve() {
  resolve_scheduled_ = false;
  const bool removal_only = !joined_since_resolve_ && integer_weights_;
  std::vector<std::uint32_t> touched;
  if (record_history_) touched = seeds_;
  if (!removal_only || !resolve_incremental()) resolve_component();
  if (record_history_) {
    record_links(touched);
    record_links(component_links_);
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
// set was discovered. For a set that covers most of its id range a scan of
// the range (by the current stamp) is cheaper than sorting.
void FlowNetwork::canonical(std::vector<std::uint32_t>& ids, bool of_links) {
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const std::uint32_t first = *lo;
  const std::uint32_t last = *hi;
  if (static_cast<std::uint64_t>(last - first) < 16 * static_cast<std::uint64_t>(ids.size())) {
    ids.clear();
    for (std::uint32_t id = first; id <= last; ++id) {
      if ((of_links ? links_[id].stamp : flow_stamp_[id]) == stamp_) ids.push_back(id);
    }
  } else {
    std::sort(ids.begin(), ids.end());
  }
}

void FlowNetwork::set_level(std::uint32_t f, double level) {
  Flow& flow = flows_[f];
  if (level == flow.level) return;
  flow.level = level;
  ++flow.level_version;
  level_heap_.push_back({level, f, flow.level_version});
}

void FlowNetwork::flush_levels() {
  const auto stale = [this](const LevelEntry& e) {
    const Flow& flow = flows_[e.flow];
    return flow.state != State::kActive || flow.level_version != e.version;
  };
  const std::size_t added = level_heap_.size() - level_heap_sorted_;
  // Compact when stale entries dominate the heap, or when walks have met
  // more stale entries than half its size since the latest compaction
  // (finished flows sit at the top, where every walk passes): either way the
  // O(n) rebuild costs about what the stale entries already cost.
  const bool dominated = level_heap_.size() > 2 * in_flight_;
  const bool walked = 2 * level_heap_stale_seen_ > level_heap_.size();
  if (level_heap_.size() > 1024 && (dominated || walked)) {
    level_heap_stale_seen_ = 0;
    std::erase_if(level_heap_, stale);
    std::make_heap(level_heap_.begin(), level_heap_.end());
  } else if (added > level_heap_sorted_ / 4) {
    std::make_heap(level_heap_.begin(), level_heap_.end());
  } else {
    for (std::size_t i = level_heap_sorted_; i < level_heap_.size(); ++i) {
      std::push_heap(level_heap_.begin(), level_heap_.begin() + static_cast<std::ptrdiff_t>(i + 1));
    }
  }
  level_heap_sorted_ = level_heap_.size();
}

void FlowNetwork::begin_problem() {
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
    for (const Incidence& inc : links_[component_links_[i]].active) {
      if (flow_stamp_[inc.flow] == stamp_) continue;
      flow_stamp_[inc.flow] = stamp_;
      component_flows_.push_back(inc.flow);
      const Flow& flow = flows_[inc.flow];
      for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
        Link& other = links_[route_links_[pos]];
        if (other.stamp == stamp_) continue;
        other.stamp = stamp_;
        component_links_.push_back(route_links_[pos]);
      }
    }
  }
  if (component_flows_.empty()) return;
  canonical(component_links_, /*of_links=*/true);
  canonical(component_flows_, /*of_links=*/false);

  begin_problem();
  bool weighted = false;
  bool capped = false;
  for (std::uint32_t f : component_flows_) {
    const Flow& flow = flows_[f];
    weighted |= flow.weight != 1.0;
    capped |= std::isfinite(flow.cap);
    for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
      problem_.links.push_back(link_to_compact_[route_links_[pos]]);
    }
    problem_.link_offsets.push_back(static_cast<std::uint32_t>(problem_.links.size()));
  }
  if (weighted) {
    for (std::uint32_t f : component_flows_) problem_.weight.push_back(flows_[f].weight);
  }
  if (capped) {
    for (std::uint32_t f : component_flows_) problem_.cap.push_back(flows_[f].cap);
  }
  const std::vector<double>& rates = solver_.solve(problem_);
  const std::vector<double>& levels = solver_.levels();
  ++resolves_;
  resolved_flows_ += component_flows_.size();
  for (std::size_t i = 0; i < component_flows_.size(); ++i) {
    const std::uint32_t f = component_flows_[i];
    if (rates[i] != flows_[f].rate) set_rate(f, rates[i]);
    set_level(f, levels[i]);
  }
}

bool FlowNetwork::resolve_incremental() {
  const double lambda = left_min_level_;
  // Leavers that no solve covered (zero-size flows) change no one's rate.
  if (!(lambda < std::numeric_limits<double>::infinity())) return true;

  // U: the transferring flows at or above λ, from the level max-heap (a
  // pruned walk of its tree visits only entries at or above λ and their
  // children).
  component_flows_.clear();
  dfs_stack_.clear();
  if (!level_heap_.empty()) dfs_stack_.push_back(0);
  while (!dfs_stack_.empty()) {
    const std::size_t i = dfs_stack_.back();
    dfs_stack_.pop_back();
    const LevelEntry& e = level_heap_[i];
    if (e.level < lambda) continue;
    const Flow& flow = flows_[e.flow];
    if (flow.state == State::kActive && flow.level_version == e.version) {
      component_flows_.push_back(e.flow);
    } else {
      ++level_heap_stale_seen_;
    }
    if (2 * i + 1 < level_heap_.size()) dfs_stack_.push_back(2 * i + 1);
    if (2 * i + 2 < level_heap_.size()) dfs_stack_.push_back(2 * i + 2);
  }
  if (component_flows_.empty()) return true;

  // U's links, and D: the other flows on them, fixed at their levels (all
  // below λ). Two marks: stamp_ - 1 for U (flows and links), stamp_ for D.
  next_stamp(2);
  const std::uint32_t u_mark = stamp_ - 1;
  const std::uint32_t d_mark = stamp_;
  component_links_.clear();
  for (std::uint32_t f : component_flows_) {
    flow_stamp_[f] = u_mark;
    const Flow& flow = flows_[f];
    for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
      Link& link = links_[route_links_[pos]];
      if (link.stamp == u_mark) continue;
      link.stamp = u_mark;
      component_links_.push_back(route_links_[pos]);
    }
  }
  std::sort(component_flows_.begin(), component_flows_.end());
  std::sort(component_links_.begin(), component_links_.end());
  fixed_flows_.clear();
  for (std::uint32_t l : component_links_) {
    for (const Incidence& inc : links_[l].active) {
      const std::uint32_t mark = flow_stamp_[inc.flow];
      if (mark == u_mark || mark == d_mark) continue;
      flow_stamp_[inc.flow] = d_mark;
      // Every flow on a link was covered by a solve, below λ; anything else
      // (which no join-free instant should produce) takes the safe path.
      if (!(flows_[inc.flow].level < lambda)) return false;
      fixed_flows_.push_back(inc.flow);
    }
  }
  std::sort(fixed_flows_.begin(), fixed_flows_.end());
  problem_flows_.resize(component_flows_.size() + fixed_flows_.size());
  std::merge(component_flows_.begin(), component_flows_.end(), fixed_flows_.begin(),
             fixed_flows_.end(), problem_flows_.begin());

  // The sub-problem: U's links in increasing id, its flows in increasing id;
  // a fixed flow lists only its links among U's (the others do not matter).
  begin_problem();
  fixed_level_.clear();
  bool weighted = false;
  bool capped = false;
  for (std::uint32_t f : problem_flows_) {
    const Flow& flow = flows_[f];
    weighted |= flow.weight != 1.0;
    capped |= std::isfinite(flow.cap);
    const bool free = flow_stamp_[f] == u_mark;
    for (std::uint32_t pos = flow.route_begin; pos < flow.route_end; ++pos) {
      const std::uint32_t l = route_links_[pos];
      if (free || links_[l].stamp == u_mark) problem_.links.push_back(link_to_compact_[l]);
    }
    problem_.link_offsets.push_back(static_cast<std::uint32_t>(problem_.links.size()));
    fixed_level_.push_back(free ? MaxMinSolver::kFree : flow.level);
  }
  if (weighted) {
    for (std::uint32_t f : problem_flows_) problem_.weight.push_back(flows_[f].weight);
  }
  if (capped) {
    for (std::uint32_t f : problem_flows_) problem_.cap.push_back(flows_[f].cap);
  }
  const std::vector<double>& rates = solver_.solve_with_fixed(problem_, fixed_level_);
  const std::vector<double>& levels = solver_.levels();
  ++resolves_;
  ++incremental_resolves_;
  resolved_flows_ += component_flows_.size();
  incremental_resolved_flows_ += component_flows_.size();
  for (std::size_t i = 0; i < problem_flows_.size(); ++i) {
    const std::uint32_t f = problem_flows_[i];
    if (flow_stamp_[f] != u_mark) continue;
    if (rates[i] != flows_[f].rate) set_rate(f, rates[i]);
    set_level(f, levels[i]);
  }
  return true;
}

LinkRecord FlowNetwork::link(std::uint32_t index) const {
  const Link& l = links_.at(index);
  LinkRecord record{l.bytes_carried, l.busy_total};
  if (!l.active.empty()) record.busy_time += sim_.now() - l.busy_since;
  return record;
}

std::span<const std::uint32_t> FlowNetwork::route(FlowId id) const {
  const Flow& flow = flows_.at(static_cast<std::uint32_t>(id));
  return std::span<const std::uint32_t>(route_links_).subspan(flow.route_begin,
                                                              flow.route_end - flow.route_begin);
}

std::vector<std::uint32_t> FlowNetwork::hottest_links(std::size_t k) const {
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
