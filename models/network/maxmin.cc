#include "models/network/maxmin.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace zx::models {

std::uint32_t MaxMinProblem::add_flow(std::span<const std::uint32_t> route, double flow_weight,
                                      double rate_cap) {
  if (link_offsets.empty()) link_offsets.push_back(0);
  const auto index = static_cast<std::uint32_t>(link_offsets.size() - 1);
  links.insert(links.end(), route.begin(), route.end());
  link_offsets.push_back(static_cast<std::uint32_t>(links.size()));
  // weight and cap stay empty (meaning 1 and none) until a flow needs them.
  if (flow_weight != 1.0 || !weight.empty()) {
    weight.resize(index, 1.0);
    weight.push_back(flow_weight);
  }
  if (std::isfinite(rate_cap) || !cap.empty()) {
    cap.resize(index, std::numeric_limits<double>::infinity());
    cap.push_back(rate_cap);
  }
  return index;
}

namespace {

// Also counts each link's flows into link_counts[l + 1] (the pass over the
// links that checks them), for run()'s incidence table.
void validate(const MaxMinProblem& p, std::vector<std::uint32_t>& link_counts) {
  const std::size_t flows = p.num_flows();
  if (!p.link_offsets.empty() && p.link_offsets.front() != 0) {
    throw std::invalid_argument("max-min problem: link_offsets must start at 0");
  }
  for (std::size_t f = 0; f < flows; ++f) {
    if (p.link_offsets[f + 1] < p.link_offsets[f]) {
      throw std::invalid_argument(fmt::format("max-min problem: link_offsets decrease at flow {}", f));
    }
  }
  if (!p.link_offsets.empty() && p.link_offsets.back() != p.links.size()) {
    throw std::invalid_argument("max-min problem: link_offsets do not end at links.size()");
  }
  for (std::size_t l = 0; l < p.capacity.size(); ++l) {
    if (!(p.capacity[l] > 0.0) || !std::isfinite(p.capacity[l])) {
      throw std::invalid_argument(
          fmt::format("max-min problem: link {} has capacity {}, expected > 0", l, p.capacity[l]));
    }
  }
  link_counts.assign(p.capacity.size() + 1, 0);
  for (std::uint32_t l : p.links) {
    if (l >= p.capacity.size()) {
      throw std::invalid_argument(fmt::format("max-min problem: link index {} out of range", l));
    }
    ++link_counts[l + 1];
  }
  if (!p.weight.empty() && p.weight.size() != flows) {
    throw std::invalid_argument("max-min problem: weight has the wrong size");
  }
  for (double w : p.weight) {
    if (!(w > 0.0) || !std::isfinite(w)) {
      throw std::invalid_argument(fmt::format("max-min problem: weight {}, expected > 0", w));
    }
  }
  if (!p.cap.empty() && p.cap.size() != flows) {
    throw std::invalid_argument("max-min problem: cap has the wrong size");
  }
  for (double c : p.cap) {
    if (!(c > 0.0)) throw std::invalid_argument(fmt::format("max-min problem: cap {}, expected > 0", c));
  }
}

// The re-solves from a level sum the weights of one level's flows in another
// order than a from-scratch solve; only integer sums are exact in any order.
void require_integer_weights(const MaxMinProblem& p) {
  double total = 0.0;
  for (double w : p.weight) {
    if (w != std::trunc(w)) {
      throw std::invalid_argument(
          fmt::format("max-min problem: weight {} with fixed flows, expected an integer", w));
    }
    total += w;
  }
  if (total >= 0x1p53) {
    throw std::invalid_argument("max-min problem: weights with fixed flows sum to 2^53 or more");
  }
}

}  // namespace

const std::vector<double>& MaxMinSolver::solve(const MaxMinProblem& p) {
  validate(p, link_flow_offsets_);
  return run(p, {}, {});
}

const std::vector<double>& MaxMinSolver::solve_with_fixed(const MaxMinProblem& p,
                                                          std::span<const double> fixed_level) {
  validate(p, link_flow_offsets_);
  if (fixed_level.size() != p.num_flows()) {
    throw std::invalid_argument("max-min problem: fixed_level has the wrong size");
  }
  bool any_fixed = false;
  for (double x : fixed_level) {
    if (std::isnan(x)) continue;
    any_fixed = true;
    if (!(x >= 0.0) || !std::isfinite(x)) {
      throw std::invalid_argument(fmt::format("max-min problem: fixed level {}, expected >= 0", x));
    }
  }
  if (any_fixed) require_integer_weights(p);
  return run(p, any_fixed ? fixed_level : std::span<const double>(), {});
}

const std::vector<double>& MaxMinSolver::solve_with_fixed_links(
    const MaxMinProblem& p, std::span<const FixedLinkState> fixed_links) {
  validate(p, link_flow_offsets_);
  if (fixed_links.size() != p.num_links()) {
    throw std::invalid_argument(fmt::format("max-min problem: {} fixed link states for {} links",
                                            fixed_links.size(), p.num_links()));
  }
  for (std::size_t l = 0; l < fixed_links.size(); ++l) {
    const FixedLinkState& s = fixed_links[l];
    if (!std::isfinite(s.base) || !(s.level >= 0.0) || !std::isfinite(s.level) ||
        !(s.level_weight >= 0.0) || s.level_weight != std::trunc(s.level_weight) ||
        !(s.level_weight < 0x1p53)) {
      throw std::invalid_argument(fmt::format(
          "max-min problem: link {} has fixed state (base {}, level {}, level weight {}), expected "
          "a finite base, a finite level >= 0 and an integer level weight >= 0",
          l, s.base, s.level, s.level_weight));
    }
  }
  require_integer_weights(p);
  return run(p, {}, fixed_links);
}

// The indexed heap: a binary min-heap by (share, id) with every link's
// position in heap_pos_.
void MaxMinSolver::place_at(std::size_t i, const HeapEntry& e) {
  heap_[i] = e;
  heap_pos_[e.id] = static_cast<std::uint32_t>(i);
}

void MaxMinSolver::sift_up(std::size_t i) {
  const HeapEntry e = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(heap_[parent] > e)) break;
    place_at(i, heap_[parent]);
    i = parent;
  }
  place_at(i, e);
}

void MaxMinSolver::sift_down(std::size_t i) {
  const HeapEntry e = heap_[i];
  const std::size_t n = heap_.size();
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child] > heap_[child + 1]) ++child;
    if (!(e > heap_[child])) break;
    place_at(i, heap_[child]);
    i = child;
  }
  place_at(i, e);
}

void MaxMinSolver::update_key(std::uint32_t l, double share) {
  const std::uint32_t i = heap_pos_[l];
  if (i == kNotInHeap) {
    heap_.push_back({share, l});
    sift_up(heap_.size() - 1);
    return;
  }
  const double old = heap_[i].share;
  heap_[i].share = share;
  if (share < old) {
    sift_up(i);
  } else if (share > old) {
    sift_down(i);
  }
}

void MaxMinSolver::pop_heap_front() {
  // Bottom-up: the hole at the root sinks along the smaller children to a
  // leaf (one comparison per level), and the last entry rises from there
  // (rarely far: it came from the bottom). Every link is popped once per
  // solve, so pops are most of the heap's work.
  heap_pos_[heap_.front().id] = kNotInHeap;
  const HeapEntry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (std::size_t child = 1; child < n; child = 2 * i + 1) {
    if (child + 1 < n && heap_[child] > heap_[child + 1]) ++child;
    place_at(i, heap_[child]);
    i = child;
  }
  heap_[i] = last;
  sift_up(i);
}

// Sorts the fixed flows by level, equal levels in flow order (the order they
// went in). This ran a comparison sort through the level array before, a
// quarter of a whole what-if sweep (24 nodes: uneven all-to-alls, some
// 3,500 re-solves replaying about 14,000 fixed flows each). Those flows have
// few distinct levels (60 to 100 on average: symmetric flows get
// bit-identical rates), so the first choice is a counting sort by level
// class; with too many classes, a radix sort.
void MaxMinSolver::sort_fixed_flows() {
  const std::size_t n = fixed_order_.size();
  if (n < 64) {
    std::stable_sort(fixed_order_.begin(), fixed_order_.end(),
                     [](const FixedFlow& a, const FixedFlow& b) { return a.key < b.key; });
    return;
  }
  if (sort_fixed_flows_by_level_class()) return;
  // Stable LSD radix sort, a byte per pass; a byte that every key shares
  // costs no pass.
  std::array<std::array<std::uint32_t, 256>, 8> counts{};
  for (const FixedFlow& e : fixed_order_) {
    for (int b = 0; b < 8; ++b) ++counts[b][(e.key >> (8 * b)) & 0xff];
  }
  fixed_scratch_.resize(n);
  for (int b = 0; b < 8; ++b) {
    std::array<std::uint32_t, 256>& count = counts[b];
    if (count[(fixed_order_.front().key >> (8 * b)) & 0xff] == n) continue;  // one value
    std::uint32_t sum = 0;
    for (std::uint32_t& c : count) {
      const std::uint32_t here = c;
      c = sum;
      sum += here;
    }
    for (const FixedFlow& e : fixed_order_) fixed_scratch_[count[(e.key >> (8 * b)) & 0xff]++] = e;
    fixed_order_.swap(fixed_scratch_);
  }
}

// Counting sort by level class: each distinct key gets a class (through a
// small hash table), the classes are sorted by key, and the flows are
// placed class by class in their input order. False, with nothing changed,
// when there are more than kMaxClasses distinct levels.
bool MaxMinSolver::sort_fixed_flows_by_level_class() {
  constexpr std::uint32_t kMaxClasses = 1024;
  constexpr std::size_t kTableBits = 12;  // 4,096 slots: at most a quarter full
  constexpr std::size_t kTableMask = (std::size_t{1} << kTableBits) - 1;
  if (class_table_.empty()) class_table_.assign(std::size_t{1} << kTableBits, ClassSlot{0, 0, 0});
  if (++class_stamp_ == 0) {  // wrapped: forget every stamp once
    for (ClassSlot& slot : class_table_) slot.stamp = 0;
    class_stamp_ = 1;
  }
  const std::size_t n = fixed_order_.size();
  class_keys_.clear();
  flow_class_.resize(n);
  std::uint64_t previous_key = fixed_order_.front().key;
  std::uint32_t previous_class = kMaxClasses;  // none yet
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = fixed_order_[i].key;
    if (key != previous_key || previous_class == kMaxClasses) {
      // Fibonacci hashing: the top bits of key x 2^64/phi.
      std::size_t h = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> (64 - kTableBits));
      for (;; h = (h + 1) & kTableMask) {
        ClassSlot& slot = class_table_[h];
        if (slot.stamp != class_stamp_) {
          if (class_keys_.size() == kMaxClasses) return false;
          slot = ClassSlot{key, class_stamp_, static_cast<std::uint32_t>(class_keys_.size())};
          class_keys_.push_back(key);
          break;
        }
        if (slot.key == key) break;
      }
      previous_key = key;
      previous_class = class_table_[h].id;
    }
    flow_class_[i] = previous_class;
  }
  const std::size_t classes = class_keys_.size();
  class_order_.resize(classes);
  for (std::uint32_t c = 0; c < classes; ++c) class_order_[c] = c;
  std::sort(class_order_.begin(), class_order_.end(),
            [this](std::uint32_t a, std::uint32_t b) { return class_keys_[a] < class_keys_[b]; });
  class_start_.assign(classes, 0);
  for (std::uint32_t c : flow_class_) ++class_start_[c];  // counts first
  std::uint32_t start = 0;
  for (std::uint32_t c : class_order_) {
    const std::uint32_t count = class_start_[c];
    class_start_[c] = start;
    start += count;
  }
  fixed_scratch_.resize(n);
  for (std::size_t i = 0; i < n; ++i) fixed_scratch_[class_start_[flow_class_[i]]++] = fixed_order_[i];
  fixed_order_.swap(fixed_scratch_);
  return true;
}

// Link -> flows incidence (CSR), flows in increasing index per link
// (validate() counted the flows per link), and each link's starting state.
void MaxMinSolver::build_links(const MaxMinProblem& p, std::span<const FixedLinkState> fixed_links) {
  const std::size_t num_flows = p.num_flows();
  const std::size_t num_links = p.num_links();
  link_.resize(num_links);
  for (std::size_t l = 0; l < num_links; ++l) {
    const std::uint32_t count = link_flow_offsets_[l + 1];
    // With every weight 1 the weight on a link is its flow count (the sum of
    // that many 1s, exactly).
    // Fixed flows given as link states (solve_with_fixed_links) are folded
    // in already; the flows of the problem are the free ones.
    const FixedLinkState start =
        fixed_links.empty() ? FixedLinkState{p.capacity[l], 0.0, 0.0} : fixed_links[l];
    link_[l] = LinkState{.base = start.base,
                         .level = start.level,
                         .level_weight = start.level_weight,
                         .weight_sum = p.weight.empty() ? static_cast<double>(count) : 0.0,
                         .unfrozen = count,
                         .dirty = 0};
    link_flow_offsets_[l + 1] += link_flow_offsets_[l];
  }
  link_flows_.resize(p.links.size());
  cursor_.assign(link_flow_offsets_.begin(), link_flow_offsets_.end() - 1);
  for (std::size_t f = 0; f < num_flows; ++f) {
    for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
      link_flows_[cursor_[p.links[i]]++] = static_cast<std::uint32_t>(f);
    }
  }
  if (!p.weight.empty()) {
    for (std::size_t f = 0; f < num_flows; ++f) {
      for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
        link_[p.links[i]].weight_sum += p.weight[f];
      }
    }
  }
}

// Drops every link whose column (its flows, in flow order) and starting
// open group equal those of a link with a clearly smaller base (see the
// header comment for why the solve's bits do not change). Columns are
// grouped by a hash of the flow list in an open-addressing table and
// compared whole, so a collision costs a comparison, never a wrong merge.
void MaxMinSolver::merge_identical_links(const MaxMinProblem& p) {
  const std::size_t num_links = p.num_links();
  dropped_.assign(num_links, 0);
  merged_links_ = 0;
  flow_offsets_ = p.link_offsets.data();
  flow_links_ = p.links.data();
  if (!options_.merge_identical_links || num_links < 2) return;
  std::size_t slots = 16;
  while (slots < 2 * num_links) slots *= 2;
  const std::size_t mask = slots - 1;
  column_table_.assign(slots, 0);
  column_hash_.resize(num_links);
  column_of_.resize(num_links);
  min_base_.resize(num_links);
  const auto same_column = [this](std::uint32_t a, std::uint32_t b) {
    const LinkState& x = link_[a];
    const LinkState& y = link_[b];
    if (x.unfrozen != y.unfrozen || x.weight_sum != y.weight_sum || x.level != y.level ||
        x.level_weight != y.level_weight) {
      return false;
    }
    return std::equal(link_flows_.begin() + link_flow_offsets_[a], link_flows_.begin() + link_flow_offsets_[a + 1],
                      link_flows_.begin() + link_flow_offsets_[b]);
  };
  bool any_shared = false;
  for (std::uint32_t l = 0; l < num_links; ++l) {
    column_of_[l] = l;
    if (link_[l].unfrozen == 0) continue;
    // A sum of mixed ids: the terms are independent, so the loop is not
    // one long chain of multiplications (the lists are in flow order, so a
    // sum still tells columns apart).
    std::uint64_t h = link_[l].unfrozen;
    for (std::uint32_t i = link_flow_offsets_[l]; i < link_flow_offsets_[l + 1]; ++i) {
      const std::uint64_t x = (link_flows_[i] + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
      h += x ^ (x >> 31);
    }
    column_hash_[l] = h;
    for (std::size_t slot = (h * 0x9e3779b97f4a7c15ULL) >> 20 & mask;; slot = (slot + 1) & mask) {
      const std::uint32_t entry = column_table_[slot];
      if (entry == 0) {
        column_table_[slot] = l + 1;
        min_base_[l] = link_[l].base;
        break;
      }
      const std::uint32_t first = entry - 1;
      if (column_hash_[first] != h || !same_column(first, l)) continue;
      column_of_[l] = first;
      min_base_[first] = std::min(min_base_[first], link_[l].base);
      any_shared = true;
      break;
    }
  }
  if (!any_shared) return;
  // A link is dropped only when its base exceeds its column's smallest by
  // more than kMergeGap of itself: far more than the rounding of every fold
  // a solve can do, so its share stays above the tightest link's by more
  // than kLevelTolerance and it never freezes a flow, by a pop or a snap.
  // Links of one column within the gap of each other all stay.
  for (std::uint32_t l = 0; l < num_links; ++l) {
    if (link_[l].unfrozen == 0) continue;
    if (link_[l].base * (1.0 - kMergeGap) > min_base_[column_of_[l]]) {
      dropped_[l] = 1;
      ++merged_links_;
    }
  }
  if (merged_links_ == 0) return;
  const std::size_t num_flows = p.num_flows();
  kept_offsets_.resize(num_flows + 1);
  kept_links_.resize(p.links.size());
  std::uint32_t kept = 0;
  kept_offsets_[0] = 0;
  for (std::size_t f = 0; f < num_flows; ++f) {
    for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
      const std::uint32_t l = p.links[i];
      kept_links_[kept] = l;
      kept += dropped_[l] ^ 1;
    }
    kept_offsets_[f + 1] = kept;
  }
  flow_offsets_ = kept_offsets_.data();
  flow_links_ = kept_links_.data();
}

// A link's remaining capacity is its capacity less the rates of its frozen
// flows. Flows freeze in groups at one normalised level; the link folds a
// whole group into its base with one multiplication (level x the group's
// weight) instead of one subtraction per flow, so that the remaining
// capacity of a link in a symmetric system is off by a few ulps, not by
// one rounding per frozen flow.
double MaxMinSolver::share_of(std::uint32_t l) const {
  const LinkState& s = link_[l];
  return std::max(0.0, s.base - s.level * s.level_weight) / s.weight_sum;
}

// Freezes flow f at normalised level `level` and takes it off every link it
// crosses. Links touched are queued once per step in dirty_.
void MaxMinSolver::freeze(const MaxMinProblem& p, std::size_t f, double level) {
  frozen_[f] = 1;
  levels_[f] = level;
  freeze_order_.push_back(static_cast<std::uint32_t>(f));
  const double w = p.weight.empty() ? 1.0 : p.weight[f];
  for (std::uint32_t i = flow_offsets_[f]; i < flow_offsets_[f + 1]; ++i) {
    const std::uint32_t l = flow_links_[i];
    LinkState& s = link_[l];
    if (s.level != level) {  // a new group: fold the previous one into the base
      s.base = fold_step(s.base, s.level, s.level_weight);
      s.level = level;
      s.level_weight = 0.0;
    }
    s.level_weight += w;
    s.weight_sum -= w;
    --s.unfrozen;
    if (!s.dirty) {
      s.dirty = 1;
      dirty_.push_back(l);
    }
  }
}

void MaxMinSolver::freeze_link(const MaxMinProblem& p, std::uint32_t l, double level) {
  for (std::uint32_t i = link_flow_offsets_[l]; i < link_flow_offsets_[l + 1]; ++i) {
    const std::uint32_t f = link_flows_[i];
    if (!frozen_[f]) freeze(p, f, level);
  }
}

// Replay of the fixed flows: the freezes a from-scratch solve performs below
// the free flows' levels, in ascending level (ties in flow order), through
// the same freeze() and so the same grouping and folding per link. Steps of
// a from-scratch solve come in non-decreasing level (end_step snaps every
// link that would fall back to the current level), so on each link the
// groups are the same, in the same order; within a group only the order of
// integer additions differs, which is exact.
void MaxMinSolver::replay_fixed(const MaxMinProblem& p, std::span<const double> fixed_level) {
  fixed_order_.clear();
  for (std::size_t f = 0; f < p.num_flows(); ++f) {
    if (std::isnan(fixed_level[f])) continue;
    // +0.0 for -0.0, so that the bit pattern orders as the value.
    const double level = fixed_level[f] == 0.0 ? 0.0 : fixed_level[f];
    fixed_order_.push_back({std::bit_cast<std::uint64_t>(level), static_cast<std::uint32_t>(f)});
  }
  sort_fixed_flows();
  for (const FixedFlow& fixed : fixed_order_) {
    const std::uint32_t f = fixed.flow;
    const double level = fixed_level[f];
    const double w = p.weight.empty() ? 1.0 : p.weight[f];
    const bool at_cap = !p.cap.empty() && std::isfinite(p.cap[f]) && level == p.cap[f] / w;
    freeze(p, f, level);
    if (at_cap) at_cap_.push_back(f);
  }
  for (std::uint32_t l : dirty_) link_[l].dirty = 0;
  dirty_.clear();
}

// Links by current share in an indexed heap (one entry per link, its key
// updated in place when the link's share changes); caps, whose keys never
// change, in one sorted list. The next step is the smaller of the two
// fronts by (share, id): a cap's id is num_links + its flow, so at equal
// shares links go first, then caps by flow.
void MaxMinSolver::build_queues(const MaxMinProblem& p) {
  const std::size_t num_links = p.num_links();
  heap_.clear();
  heap_pos_.assign(num_links, kNotInHeap);
  for (std::size_t l = 0; l < num_links; ++l) {
    if (link_[l].unfrozen > 0 && !dropped_[l]) {
      heap_pos_[l] = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back({share_of(static_cast<std::uint32_t>(l)), static_cast<std::uint32_t>(l)});
    }
  }
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
  caps_.clear();
  for (std::size_t f = 0; f < p.cap.size(); ++f) {
    if (std::isfinite(p.cap[f]) && !frozen_[f]) {
      caps_.push_back({p.cap[f] / (p.weight.empty() ? 1.0 : p.weight[f]), static_cast<std::uint32_t>(num_links + f)});
    }
  }
  std::sort(caps_.begin(), caps_.end(), [](const HeapEntry& a, const HeapEntry& b) { return b > a; });
}

// Ends a step at normalised level `level`. Progressive filling never lowers
// a link's share, so a touched link whose share is now at most the level
// (within kLevelTolerance, rounding noise) is saturated at this same level:
// its flows freeze at exactly `level` too, in this step. This makes flows
// of a symmetric system get bit-identical rates. The other touched links get
// their new share as their key.
void MaxMinSolver::end_step(const MaxMinProblem& p, double level) {
  const double snap = level * (1.0 + kLevelTolerance);
  for (std::size_t i = 0; i < dirty_.size(); ++i) {
    const std::uint32_t l = dirty_[i];
    if (link_[l].unfrozen > 0 && share_of(l) <= snap) freeze_link(p, l, level);
  }
  for (std::uint32_t l : dirty_) {
    link_[l].dirty = 0;
    if (link_[l].unfrozen > 0) update_key(l, share_of(l));
  }
  dirty_.clear();
}

// Progressive filling: the next link to saturate or cap to bind, its flows
// frozen at its level, until every flow is.
void MaxMinSolver::fill(const MaxMinProblem& p) {
  const std::size_t num_links = p.num_links();
  std::size_t next_cap = 0;
  while (!heap_.empty() || next_cap < caps_.size()) {
    if (heap_.empty() || (next_cap < caps_.size() && heap_.front() > caps_[next_cap])) {
      const HeapEntry cap = caps_[next_cap++];
      const std::size_t f = cap.id - num_links;
      if (!frozen_[f]) {
        freeze(p, f, cap.share);
        at_cap_.push_back(static_cast<std::uint32_t>(f));
        end_step(p, cap.share);
      }
      continue;
    }
    const std::uint32_t l = heap_.front().id;
    pop_heap_front();
    // A link whose flows all froze since its key was set has nothing left.
    if (link_[l].unfrozen == 0) continue;
    const double share = share_of(l);
    freeze_link(p, l, share);
    end_step(p, share);
  }
}

const std::vector<double>& MaxMinSolver::run(const MaxMinProblem& p,
                                             std::span<const double> fixed_level,
                                             std::span<const FixedLinkState> fixed_links) {
  const std::size_t num_flows = p.num_flows();
  levels_.assign(num_flows, std::numeric_limits<double>::infinity());
  frozen_.assign(num_flows, 0);
  build_links(p, fixed_links);
  merge_identical_links(p);
  dirty_.clear();
  // A flow's rate is written after the filling, in one pass in flow order
  // (level x weight, or its cap for the flows in at_cap_): freezes happen at
  // scattered flows, and one array less to write there is one miss less.
  at_cap_.clear();
  freeze_order_.clear();
  if (!fixed_level.empty()) replay_fixed(p, fixed_level);
  build_queues(p);
  fill(p);
  rates_.resize(num_flows);
  for (std::size_t f = 0; f < num_flows; ++f) rates_[f] = levels_[f] * (p.weight.empty() ? 1.0 : p.weight[f]);
  for (std::uint32_t f : at_cap_) rates_[f] = p.cap[f];
  return rates_;
}

}  // namespace zx::models
