#include "models/network/link_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "base/check.h"

namespace zx::models {

namespace {
const sim::EventLabel kShareJoin("net/share_first_byte");
const sim::EventLabel kShareDone("net/share_done");
}  // namespace

LinkShareNetwork::LinkShareNetwork(sim::Simulator& simulator, std::vector<LinkParams> links) : sim_(simulator) {
  static_assert(sizeof(Link) == 128, "a link's record should fill one pair of cache lines");
  links_.reserve(links.size());
  latency_.reserve(links.size());
  for (const LinkParams& p : links) {
    links_.push_back(Link{.capacity_bytes_per_s = p.capacity_bytes_per_s});
    latency_.push_back(p.latency);
  }
  acc_bytes_.assign(links_.size(), 0.0);
  acc_weight_.assign(links_.size(), 0.0);
}

void LinkShareNetwork::add(std::span<const std::uint32_t> route, sim::Bytes size, double weight,
                           sim::Duration added_latency) {
  sim::Duration latency = added_latency;
  for (std::uint32_t l : route) latency += latency_[l];
  acc_latency_ = std::max(acc_latency_, latency);
  acc_size_ += size.count();
  if (size.count() == 0) return;
  for (std::uint32_t l : route) {
    if (acc_weight_[l] == 0.0) touched_.push_back(l);
    acc_bytes_[l] += static_cast<double>(size.count());
    acc_weight_[l] += weight;
  }
}

void LinkShareNetwork::add_to_link(std::uint32_t link, double bytes, double weight) {
  if (acc_weight_[link] == 0.0) touched_.push_back(link);
  acc_bytes_[link] += bytes;
  acc_weight_[link] += weight;
}

void LinkShareNetwork::add_extent(sim::Bytes size, sim::Duration latency) {
  acc_latency_ = std::max(acc_latency_, latency);
  acc_size_ += size.count();
}

std::uint32_t LinkShareNetwork::start(sim::EventCallback on_done, double rate_cap_per_weight) {
  std::uint32_t id = 0;
  if (recycle_ && !free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    ZX_CHECK(records_.size() < std::numeric_limits<std::uint32_t>::max(), "link sharing: too many bundles");
    id = static_cast<std::uint32_t>(records_.size());
    records_.emplace_back();
    serials_.emplace_back();
    bundles_.emplace_back();
  }
  const sim::TimePoint now = sim_.now();
  records_[id] = FlowRecord{.start = now,
                            .first_byte = now + acc_latency_,
                            .finish = sim::TimePoint::max(),
                            .size = sim::Bytes(acc_size_)};
  Bundle& b = bundles_[id];
  b.cap_per_weight = rate_cap_per_weight;
  b.on_done = std::move(on_done);
  b.pending.clear();
  for (std::uint32_t l : touched_) {
    b.pending.push_back(PendingPart{l, acc_bytes_[l], acc_weight_[l]});
    acc_bytes_[l] = 0.0;
    acc_weight_[l] = 0.0;
  }
  touched_.clear();
  b.parts_left = static_cast<std::uint32_t>(b.pending.size());
  serials_[id] = started_;
  ++started_;
  ++in_flight_;
  sim_.schedule(now + acc_latency_, [this, id] { join(id); }, kShareJoin);
  acc_latency_ = sim::Duration::zero();
  acc_size_ = 0;
  return id;
}

namespace {
// A min-heap on (tag, seq).
bool heap_after(const auto& a, const auto& b) { return a.tag != b.tag ? a.tag > b.tag : a.seq > b.seq; }
}  // namespace

void LinkShareNetwork::join(std::uint32_t id) {
  const std::int64_t now = sim_.now().count_ps();
  Bundle& b = bundles_[id];
  if (b.pending.empty()) {
    std::vector<sim::EventCallback> callbacks;
    bundle_done(id, callbacks);
    if (callbacks.front()) callbacks.front()();
    return;
  }
  // A bundle's links are scattered over the fabric's records: fetch each
  // link's record a few parts ahead, and, once it is in, the slot its part
  // will take (the work per part is a few cache misses, not arithmetic).
  constexpr std::size_t kLinkAhead = 8;
  constexpr std::size_t kSlotAhead = 4;
  const std::size_t num_pending = b.pending.size();
  for (std::size_t i = 0; i < std::min(kLinkAhead, num_pending); ++i) __builtin_prefetch(&links_[b.pending[i].link]);
  for (std::size_t i = 0; i < num_pending; ++i) {
    if (i + kLinkAhead < num_pending) __builtin_prefetch(&links_[b.pending[i + kLinkAhead].link]);
    if (i + kSlotAhead < num_pending) {
      const Link& ahead = links_[b.pending[i + kSlotAhead].link];
      if (ahead.free_head != kNoSlot) __builtin_prefetch(&ahead.parts[ahead.free_head], 1);
      if (!ahead.heap.empty()) __builtin_prefetch(ahead.heap.data() + ahead.heap.size(), 1);
    }
    const PendingPart& p = b.pending[i];
    Link& link = links_[p.link];
    advance(link, now);
    std::uint32_t slot = link.free_head;
    if (slot == kNoSlot) {
      slot = static_cast<std::uint32_t>(link.parts.size());
      link.parts.emplace_back();
    } else {
      link.free_head = link.parts[slot].bundle;
    }
    Part& part = link.parts[slot];
    part = Part{.bundle = id, .alive = true, .bytes = p.bytes, .weight = p.weight, .cap = b.cap_per_weight * p.weight};
    ++link.live;
    link.weight += p.weight;
    if (std::isfinite(part.cap)) {
      ++link.capped;
      if (!link.capped_mode) enter_capped_mode(link);
    }
    if (link.capped_mode) {
      part.remaining = p.bytes;
    } else {
      part.tag = link.vtime + p.bytes / p.weight;
      link.heap.push_back(HeapEntry{part.tag, seq_++, slot});
      std::push_heap(link.heap.begin(), link.heap.end(), [](const HeapEntry& x, const HeapEntry& y) { return heap_after(x, y); });
    }
    reshare(p.link, now);
  }
  b.pending.clear();
}

void LinkShareNetwork::advance(Link& link, std::int64_t now_ps) {
  if (now_ps == link.last_ps) return;
  if (link.live > 0) {
    const double seconds = static_cast<double>(now_ps - link.last_ps) * 1e-12;
    if (link.capped_mode) {
      for (Part& p : link.parts) {
        if (p.alive) p.remaining = std::max(0.0, p.remaining - p.rate * seconds);
      }
    } else {
      link.vtime += link.capacity_bytes_per_s / link.weight * seconds;
    }
  }
  link.last_ps = now_ps;
}

void LinkShareNetwork::enter_capped_mode(Link& link) {
  for (Part& p : link.parts) {
    if (p.alive) p.remaining = std::max(0.0, (p.tag - link.vtime) * p.weight);
  }
  link.heap.clear();
  link.capped_mode = true;
}

void LinkShareNetwork::leave_capped_mode(Link& link) {
  link.heap.clear();
  for (std::uint32_t slot = 0; slot < link.parts.size(); ++slot) {
    Part& p = link.parts[slot];
    if (!p.alive) continue;
    p.tag = link.vtime + p.remaining / p.weight;
    link.heap.push_back(HeapEntry{p.tag, seq_++, slot});
  }
  std::make_heap(link.heap.begin(), link.heap.end(), [](const HeapEntry& x, const HeapEntry& y) { return heap_after(x, y); });
  link.capped_mode = false;
}

void LinkShareNetwork::reshare_capped(Link& link, std::int64_t now_ps) {
  // Water-filling: the parts whose cap is below their share take their
  // cap, from the most constrained up; the rest split what is left.
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < link.parts.size(); ++i) {
    if (link.parts[i].alive) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return link.parts[a].cap / link.parts[a].weight < link.parts[b].cap / link.parts[b].weight;
  });
  double capacity = link.capacity_bytes_per_s;
  double weight = link.weight;
  std::int64_t next = std::numeric_limits<std::int64_t>::max();
  for (std::uint32_t i : order) {
    Part& p = link.parts[i];
    p.rate = std::min(capacity * p.weight / weight, p.cap);
    capacity = std::max(0.0, capacity - p.rate);
    weight -= p.weight;
    std::int64_t finish = now_ps + transfer_time(p.remaining, p.rate).count_ps();
    if (quantum_ps_ > 1 && p.remaining > 0.0) finish = (finish + quantum_ps_ - 1) / quantum_ps_ * quantum_ps_;
    p.finish_ps = finish;
    next = std::min(next, finish);
  }
  link.event_ps = next;
}

void LinkShareNetwork::reshare(std::uint32_t index, std::int64_t now_ps) {
  Link& link = links_[index];
  ++reshares_;
  reshared_parts_ += link.live;
  const sim::TimePoint now = sim::TimePoint::from_ps(now_ps);
  const std::int64_t scheduled = link.event_ps;
  if (link.live == 0) {
    if (scheduled >= 0) sim_.cancel(link.event);
    link.event_ps = -1;
    if (link.busy) link.busy_ps += now_ps;
    link.busy = false;
    link.weight = 0.0;  // no drift carried into the next busy period
    link.vtime = 0.0;
    link.heap.clear();
  } else {
    if (link.capped_mode) {
      reshare_capped(link, now_ps);
    } else {
      const HeapEntry& top = link.heap.front();
      const double bytes = std::max(0.0, (top.tag - link.vtime) * link.weight);
      std::int64_t finish = now_ps + transfer_time(bytes, link.capacity_bytes_per_s).count_ps();
      if (quantum_ps_ > 1 && bytes > 0.0) finish = (finish + quantum_ps_ - 1) / quantum_ps_ * quantum_ps_;
      link.event_ps = finish;
    }
    if (!link.busy) link.busy_ps -= now_ps;
    link.busy = true;
    if (link.event_ps != scheduled) {
      if (scheduled >= 0) sim_.cancel(link.event);
      link.event = sim_.schedule(sim::TimePoint::from_ps(link.event_ps), [this, index] { link_due(index); }, kShareDone);
    }
  }
  if (record_history_) {
    if (history_.size() < links_.size()) history_.resize(links_.size());
    double used = 0.0;
    if (link.capped_mode) {
      for (const Part& p : link.parts) used += p.alive ? p.rate : 0.0;
    } else if (link.live > 0) {
      used = link.capacity_bytes_per_s;
    }
    std::vector<UtilisationSample>& h = history_[index];
    const double utilisation = used / link.capacity_bytes_per_s;
    if (!h.empty() && h.back().time == now) {
      h.back().utilisation = utilisation;
    } else {
      h.push_back(UtilisationSample{now, utilisation});
    }
  }
}

void LinkShareNetwork::finish_part(Link& link, std::uint32_t slot, std::vector<sim::EventCallback>& callbacks) {
  Part& p = link.parts[slot];
  const std::uint32_t bundle = p.bundle;
  link.bytes_carried += std::llround(p.bytes);
  p.alive = false;
  p.bundle = link.free_head;
  link.free_head = slot;
  --link.live;
  link.weight -= p.weight;
  if (std::isfinite(p.cap)) --link.capped;
  if (--bundles_[bundle].parts_left == 0) bundle_done(bundle, callbacks);
}

void LinkShareNetwork::link_due(std::uint32_t index) {
  Link& link = links_[index];
  const std::int64_t now = sim_.now().count_ps();
  link.event_ps = -1;
  advance(link, now);
  std::vector<sim::EventCallback> callbacks;
  if (link.capped_mode) {
    for (std::uint32_t slot = 0; slot < link.parts.size(); ++slot) {
      if (link.parts[slot].alive && link.parts[slot].finish_ps <= now) finish_part(link, slot, callbacks);
    }
    if (link.capped == 0 && link.live > 0) leave_capped_mode(link);
  } else {
    // Through: the part the event was for, and every part whose tag the
    // clock has reached (ties and the quantum's rounding).
    const double through = std::max(link.vtime, link.heap.front().tag);
    const auto after = [](const HeapEntry& x, const HeapEntry& y) { return heap_after(x, y); };
    while (!link.heap.empty() && link.heap.front().tag <= through) {
      const std::uint32_t slot = link.heap.front().slot;
      std::pop_heap(link.heap.begin(), link.heap.end(), after);
      link.heap.pop_back();
      finish_part(link, slot, callbacks);
    }
  }
  if (link.live == 0) link.capped_mode = false;
  reshare(index, now);
  for (sim::EventCallback& c : callbacks) {
    if (c) c();
  }
}

void LinkShareNetwork::bundle_done(std::uint32_t id, std::vector<sim::EventCallback>& callbacks) {
  records_[id].finish = sim_.now();
  callbacks.push_back(std::move(bundles_[id].on_done));
  bundles_[id].on_done = sim::EventCallback();
  --in_flight_;
  if (recycle_) free_ids_.push_back(id);
}

LinkRecord LinkShareNetwork::link(std::uint32_t index) const {
  const Link& l = links_.at(index);
  const std::int64_t busy_ps = l.busy ? l.busy_ps + sim_.now().count_ps() : l.busy_ps;
  LinkRecord record{sim::Bytes(l.bytes_carried), sim::Duration::ps(busy_ps)};
  return record;
}

std::vector<std::uint32_t> LinkShareNetwork::hottest_links(std::size_t k) const {
  std::vector<std::uint32_t> order;
  for (std::uint32_t l = 0; l < links_.size(); ++l) {
    if (links_[l].bytes_carried > 0) order.push_back(l);
  }
  const auto load = [this](std::uint32_t l) {
    return static_cast<double>(links_[l].bytes_carried) / links_[l].capacity_bytes_per_s;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return load(a) > load(b); });
  if (order.size() > k) order.resize(k);
  return order;
}

const std::vector<LinkShareNetwork::UtilisationSample>& LinkShareNetwork::link_history(std::uint32_t link) const {
  static const std::vector<UtilisationSample> kEmpty;
  return link < history_.size() ? history_[link] : kEmpty;
}

}  // namespace zx::models
