// Tests of the max-min solver. Each case states the system and the expected
// answer first, as SimGrid's maxmin tests do; randomised cases check the
// defining properties (feasibility and a bottleneck for every flow) and
// compare with a deliberately naive water-filling reference.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "models/network/maxmin.h"

namespace zx::models {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> solve(const MaxMinProblem& p) {
  MaxMinSolver solver;
  return solver.solve(p);
}

// One flow on one link of capacity 10 gets 10.
TEST(MaxMinTest, OneFlow) {
  MaxMinProblem p;
  p.capacity = {10.0};
  p.add_flow(std::vector<std::uint32_t>{0});
  EXPECT_EQ(solve(p), (std::vector<double>{10.0}));
}

// n flows on one link of capacity 12 get 12/n each.
TEST(MaxMinTest, NFlowsShareOneLink) {
  for (int n : {1, 2, 3, 4, 6, 12}) {
    MaxMinProblem p;
    p.capacity = {12.0};
    for (int i = 0; i < n; ++i) p.add_flow(std::vector<std::uint32_t>{0});
    for (double r : solve(p)) EXPECT_DOUBLE_EQ(r, 12.0 / n) << n;
  }
}

// A symmetric all-to-all: n senders and n receivers, each an uplink or a
// downlink of the same odd capacity, one flow per (sender, receiver) pair.
// Every link carries n flows, so every flow gets C / n; and the rates must be
// equal to the bit (subtracting n - 1 rounded rates one by one leaves shares
// a few ulps off, which once scattered an all-to-all's completion times).
TEST(MaxMinTest, SymmetricAllToAllRatesAreBitIdentical) {
  for (int n : {7, 32, 248, 1016}) {
    MaxMinProblem p;
    const double c = 24'509'334'609.0;  // a RoCE NIC's effective B/s
    p.capacity.assign(2 * static_cast<std::size_t>(n), c);
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        p.add_flow(std::vector<std::uint32_t>{static_cast<std::uint32_t>(s),
                                              static_cast<std::uint32_t>(n + d)});
      }
    }
    const std::vector<double> rates = solve(p);
    for (double r : rates) ASSERT_EQ(r, rates.front()) << n;
    EXPECT_DOUBLE_EQ(rates.front(), c / (n - 1)) << n;
  }
}

// Parking lot: links 0 and 1 of capacity 1; a long flow crosses both, a short
// flow crosses each. Every link has two flows, so each flow gets 1/2.
TEST(MaxMinTest, ParkingLot) {
  MaxMinProblem p;
  p.capacity = {1.0, 1.0};
  p.add_flow(std::vector<std::uint32_t>{0, 1});
  p.add_flow(std::vector<std::uint32_t>{0});
  p.add_flow(std::vector<std::uint32_t>{1});
  EXPECT_EQ(solve(p), (std::vector<double>{0.5, 0.5, 0.5}));
}

// Capacities 10 and 4; flow A crosses both, flow B only the first. Max-min:
// link 1 limits A to 4, and B takes the rest of link 0: 6. (Proportional
// sharing would give A less than 4.)
TEST(MaxMinTest, UnequalCapacitiesDifferFromProportional) {
  MaxMinProblem p;
  p.capacity = {10.0, 4.0};
  p.add_flow(std::vector<std::uint32_t>{0, 1});  // A
  p.add_flow(std::vector<std::uint32_t>{0});     // B
  EXPECT_EQ(solve(p), (std::vector<double>{4.0, 6.0}));
}

// Weights: on one link of capacity 9, weights 1 and 2 get 3 and 6.
TEST(MaxMinTest, WeightsSplitInProportion) {
  MaxMinProblem p;
  p.capacity = {9.0};
  p.add_flow(std::vector<std::uint32_t>{0}, 1.0);
  p.add_flow(std::vector<std::uint32_t>{0}, 2.0);
  EXPECT_EQ(solve(p), (std::vector<double>{3.0, 6.0}));
}

// Caps: on one link of capacity 10, a flow capped at 2 gets 2 and the two
// others share the remaining 8: 4 each. A cap above the fair share is inert.
TEST(MaxMinTest, CapsFreezeFlowsEarly) {
  MaxMinProblem p;
  p.capacity = {10.0};
  p.add_flow(std::vector<std::uint32_t>{0}, 1.0, 2.0);
  p.add_flow(std::vector<std::uint32_t>{0});
  p.add_flow(std::vector<std::uint32_t>{0}, 1.0, 100.0);
  EXPECT_EQ(solve(p), (std::vector<double>{2.0, 4.0, 4.0}));
  // A flow on no link is limited only by its cap (or unlimited).
  MaxMinProblem q;
  q.capacity = {};
  q.add_flow(std::vector<std::uint32_t>{}, 1.0, 7.0);
  q.add_flow(std::vector<std::uint32_t>{});
  const std::vector<double> r = solve(q);
  EXPECT_EQ(r[0], 7.0);
  EXPECT_EQ(r[1], kInf);
}

TEST(MaxMinTest, RejectsMalformedProblems) {
  MaxMinProblem bad_link;
  bad_link.capacity = {1.0};
  bad_link.add_flow(std::vector<std::uint32_t>{3});
  EXPECT_THROW(solve(bad_link), std::invalid_argument);
  MaxMinProblem zero_capacity;
  zero_capacity.capacity = {0.0};
  EXPECT_THROW(solve(zero_capacity), std::invalid_argument);
  MaxMinProblem bad_weight;
  bad_weight.capacity = {1.0};
  bad_weight.add_flow(std::vector<std::uint32_t>{0}, -1.0);
  EXPECT_THROW(solve(bad_weight), std::invalid_argument);
  MaxMinProblem bad_cap;
  bad_cap.capacity = {1.0};
  bad_cap.add_flow(std::vector<std::uint32_t>{0}, 1.0, 0.0);
  EXPECT_THROW(solve(bad_cap), std::invalid_argument);
}

// A naive reference: repeatedly find the smallest share among links with
// unfrozen flows and caps, freeze at it; O(L * F) per step.
std::vector<double> naive_maxmin(const MaxMinProblem& p) {
  const std::size_t F = p.num_flows();
  const std::size_t L = p.num_links();
  std::vector<double> rate(F, kInf);
  std::vector<bool> frozen(F, false);
  auto w = [&](std::size_t f) { return p.weight.empty() ? 1.0 : p.weight[f]; };
  auto c = [&](std::size_t f) { return p.cap.empty() ? kInf : p.cap[f]; };
  for (;;) {
    double best = kInf;
    for (std::size_t l = 0; l < L; ++l) {
      double used = 0.0;
      double weights = 0.0;
      for (std::size_t f = 0; f < F; ++f) {
        for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
          if (p.links[i] != l) continue;
          if (frozen[f]) {
            used += rate[f];
          } else {
            weights += w(f);
          }
        }
      }
      if (weights > 0) best = std::min(best, std::max(0.0, p.capacity[l] - used) / weights);
    }
    for (std::size_t f = 0; f < F; ++f) {
      if (!frozen[f]) best = std::min(best, c(f) / w(f));
    }
    if (best == kInf) break;
    // Freeze the flows that hit their cap or cross a link saturated at `best`.
    bool any = false;
    std::vector<bool> freeze(F, false);
    for (std::size_t l = 0; l < L; ++l) {
      double used = 0.0;
      double weights = 0.0;
      for (std::size_t f = 0; f < F; ++f) {
        for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
          if (p.links[i] != l) continue;
          if (frozen[f]) {
            used += rate[f];
          } else {
            weights += w(f);
          }
        }
      }
      if (weights > 0 && std::max(0.0, p.capacity[l] - used) / weights <= best * (1 + 1e-12)) {
        for (std::size_t f = 0; f < F; ++f) {
          for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
            if (p.links[i] == l && !frozen[f]) freeze[f] = true;
          }
        }
      }
    }
    for (std::size_t f = 0; f < F; ++f) {
      if (!frozen[f] && c(f) / w(f) <= best * (1 + 1e-12)) freeze[f] = true;
    }
    for (std::size_t f = 0; f < F; ++f) {
      if (freeze[f]) {
        frozen[f] = true;
        rate[f] = best * w(f);
        any = true;
      }
    }
    if (!any) break;
  }
  return rate;
}

MaxMinProblem random_problem(std::mt19937_64& rng, bool weighted, bool capped,
                             std::size_t max_links = 12, std::size_t max_flows = 20) {
  MaxMinProblem p;
  const std::size_t links = 1 + rng() % max_links;
  for (std::size_t l = 0; l < links; ++l) p.capacity.push_back(1.0 + static_cast<double>(rng() % 100));
  const std::size_t flows = 1 + rng() % max_flows;
  for (std::size_t f = 0; f < flows; ++f) {
    std::vector<std::uint32_t> route;
    const std::size_t hops = 1 + rng() % std::min<std::size_t>(links, 5);
    while (route.size() < hops) {
      const auto l = static_cast<std::uint32_t>(rng() % links);
      if (std::find(route.begin(), route.end(), l) == route.end()) route.push_back(l);
    }
    const double weight = weighted ? 0.5 + static_cast<double>(rng() % 4) : 1.0;
    const double cap = capped && rng() % 3 == 0 ? 1.0 + static_cast<double>(rng() % 30) : kInf;
    p.add_flow(route, weight, cap);
  }
  return p;
}

// On random problems: the rates are feasible (no link over capacity, no flow
// over its cap), every flow has a bottleneck (its cap, or a saturated link on
// which its normalised rate is the largest), and they agree with the naive
// reference.
TEST(MaxMinTest, RandomisedPropertiesAndReference) {
  std::mt19937_64 rng(2024);
  MaxMinSolver solver;
  for (int trial = 0; trial < 600; ++trial) {
    const MaxMinProblem p = random_problem(rng, trial % 3 == 1, trial % 2 == 1);
    const std::vector<double> rate = solver.solve(p);
    const std::vector<double> reference = naive_maxmin(p);
    const std::size_t F = p.num_flows();
    auto w = [&](std::size_t f) { return p.weight.empty() ? 1.0 : p.weight[f]; };
    std::vector<double> load(p.num_links(), 0.0);
    for (std::size_t f = 0; f < F; ++f) {
      ASSERT_NEAR(rate[f], reference[f], 1e-9 * reference[f]) << "trial " << trial << " flow " << f;
      for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) load[p.links[i]] += rate[f];
      if (!p.cap.empty()) {
        ASSERT_LE(rate[f], p.cap[f] * (1 + 1e-12));
      }
    }
    for (std::size_t l = 0; l < p.num_links(); ++l) {
      ASSERT_LE(load[l], p.capacity[l] * (1 + 1e-9)) << "trial " << trial << " link " << l;
    }
    for (std::size_t f = 0; f < F; ++f) {
      bool bottleneck = !p.cap.empty() && rate[f] >= p.cap[f] * (1 - 1e-12);
      for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1] && !bottleneck; ++i) {
        const std::uint32_t l = p.links[i];
        if (load[l] < p.capacity[l] * (1 - 1e-9)) continue;  // not saturated
        bool largest = true;
        for (std::size_t g = 0; g < F; ++g) {
          for (std::uint32_t j = p.link_offsets[g]; j < p.link_offsets[g + 1]; ++j) {
            if (p.links[j] == l && rate[g] / w(g) > rate[f] / w(f) * (1 + 1e-9)) largest = false;
          }
        }
        bottleneck = largest;
      }
      ASSERT_TRUE(bottleneck) << "trial " << trial << ": flow " << f << " has no bottleneck";
    }
  }
}

// freeze_order() lists every flow with a link or a cap once, at
// non-decreasing levels (what the network model's level groups rely on), on
// random problems, some large, weighted and capped.
TEST(MaxMinTest, FreezeOrderIsByLevel) {
  std::mt19937_64 rng(1234);
  MaxMinSolver solver;
  for (int trial = 0; trial < 400; ++trial) {
    const MaxMinProblem p = trial % 4 == 3 ? random_problem(rng, trial % 3 == 1, trial % 2 == 1, 40, 600)
                                           : random_problem(rng, trial % 3 == 1, trial % 2 == 1);
    solver.solve(p);
    const std::vector<double> levels = solver.levels();
    const std::vector<std::uint32_t> order = solver.freeze_order();
    std::vector<int> seen(p.num_flows(), 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
      ++seen[order[i]];
      if (i > 0) {
        ASSERT_LE(levels[order[i - 1]], levels[order[i]]) << "trial " << trial << " step " << i;
      }
    }
    for (std::size_t f = 0; f < p.num_flows(); ++f) {
      const bool constrained = p.link_offsets[f + 1] > p.link_offsets[f] || (!p.cap.empty() && std::isfinite(p.cap[f]));
      ASSERT_EQ(seen[f], constrained ? 1 : 0) << "trial " << trial << " flow " << f;
    }
  }
}

// Solving a connected component alone gives bit-for-bit the rates of solving
// the whole problem, when links and flows keep their relative order.
TEST(MaxMinTest, ComponentSolveIsBitIdentical) {
  std::mt19937_64 rng(99);
  MaxMinSolver solver;
  for (int trial = 0; trial < 200; ++trial) {
    MaxMinProblem a = random_problem(rng, trial % 2 == 0, trial % 3 == 0);
    const MaxMinProblem b = random_problem(rng, false, false);
    // Merge: a's links first, then b's (shifted); flows interleaved.
    MaxMinProblem merged;
    merged.capacity = a.capacity;
    merged.capacity.insert(merged.capacity.end(), b.capacity.begin(), b.capacity.end());
    const auto shift = static_cast<std::uint32_t>(a.num_links());
    std::vector<std::size_t> a_index;
    auto wa = [&](std::size_t f) { return a.weight.empty() ? 1.0 : a.weight[f]; };
    auto ca = [&](std::size_t f) { return a.cap.empty() ? kInf : a.cap[f]; };
    const std::size_t n = std::max(a.num_flows(), b.num_flows());
    for (std::size_t f = 0; f < n; ++f) {
      if (f < a.num_flows()) {
        std::vector<std::uint32_t> route(a.links.begin() + a.link_offsets[f],
                                         a.links.begin() + a.link_offsets[f + 1]);
        a_index.push_back(merged.add_flow(route, wa(f), ca(f)));
      }
      if (f < b.num_flows()) {
        std::vector<std::uint32_t> route;
        for (std::uint32_t i = b.link_offsets[f]; i < b.link_offsets[f + 1]; ++i) route.push_back(b.links[i] + shift);
        merged.add_flow(route);
      }
    }
    const std::vector<double> alone = solver.solve(a);
    const std::vector<double> together = solver.solve(merged);
    for (std::size_t f = 0; f < a.num_flows(); ++f) {
      ASSERT_EQ(alone[f], together[a_index[f]]) << "trial " << trial << " flow " << f;
    }
  }
}

// The states solve_with_fixed_links takes, computed the slow way: per link,
// the distinct levels of its fixed flows in ascending order with their total
// weights, folded. Also the problem of the free flows alone, and their
// indices in `q`.
struct FreeProblem {
  MaxMinProblem problem;
  std::vector<FixedLinkState> links;
  std::vector<std::size_t> flows;
};
FreeProblem free_problem(const MaxMinProblem& q, const std::vector<double>& fixed) {
  FreeProblem out;
  out.problem.capacity = q.capacity;
  std::vector<std::map<double, double>> groups(q.num_links());
  for (std::size_t f = 0; f < q.num_flows(); ++f) {
    const double w = q.weight.empty() ? 1.0 : q.weight[f];
    std::vector<std::uint32_t> route(q.links.begin() + q.link_offsets[f],
                                     q.links.begin() + q.link_offsets[f + 1]);
    if (std::isnan(fixed[f])) {
      out.problem.add_flow(route, w, q.cap.empty() ? kInf : q.cap[f]);
      out.flows.push_back(f);
    } else {
      for (std::uint32_t l : route) groups[l][fixed[f]] += w;
    }
  }
  if (out.problem.weight.empty() && out.problem.num_flows() > 0 && !q.weight.empty()) {
    out.problem.weight.assign(out.problem.num_flows(), 1.0);
  }
  for (std::size_t l = 0; l < q.num_links(); ++l) {
    FixedLinkState state{q.capacity[l], 0.0, 0.0};
    for (const auto& [level, weight] : groups[l]) {
      if (state.level_weight > 0.0) state.base = fold_step(state.base, state.level, state.level_weight);
      state.level = level;
      state.level_weight = weight;
    }
    out.links.push_back(state);
  }
  return out;
}

// Re-solving from a level (solve_with_fixed). Take a random problem with
// weights 1 and 2 (some flows capped), solve it, remove a few flows, and fix
// every remaining flow whose level is below the smallest removed level λ at
// its level: the fixed flows' rates are those of a from-scratch solve of the
// smaller problem (the claim the network model relies on), and the free flows
// get exactly the from-scratch rates and levels. Every fourth problem is
// large (up to 600 flows), so the replay's radix sort of the fixed flows runs
// too (small sets are sorted by comparison).
TEST(MaxMinTest, SolveWithFixedMatchesFromScratchAfterRemovals) {
  std::mt19937_64 rng(515);
  MaxMinSolver solver;
  int fixed_seen = 0;
  int large_fixed_sets = 0;
  for (int trial = 0; trial < 800; ++trial) {
    const bool large = trial % 4 == 3;
    MaxMinProblem p = large ? random_problem(rng, false, trial % 3 == 0, 40, 600)
                            : random_problem(rng, false, trial % 3 == 0);
    p.weight.clear();
    for (std::size_t f = 0; f < p.num_flows(); ++f) p.weight.push_back(rng() % 3 == 0 ? 2.0 : 1.0);
    const std::vector<double> old_rates = solver.solve(p);
    const std::vector<double> old_levels = solver.levels();
    // Remove 1-3 flows; symmetric systems make many equal levels.
    std::vector<bool> removed(p.num_flows(), false);
    const std::size_t count = 1 + rng() % 3;
    for (std::size_t i = 0; i < count; ++i) removed[rng() % p.num_flows()] = true;
    double lambda = kInf;
    for (std::size_t f = 0; f < p.num_flows(); ++f) {
      if (removed[f]) lambda = std::min(lambda, old_levels[f]);
    }
    MaxMinProblem q;
    q.capacity = p.capacity;
    std::vector<std::size_t> kept;
    std::vector<double> fixed;
    for (std::size_t f = 0; f < p.num_flows(); ++f) {
      if (removed[f]) continue;
      kept.push_back(f);
      std::vector<std::uint32_t> route(p.links.begin() + p.link_offsets[f],
                                       p.links.begin() + p.link_offsets[f + 1]);
      q.add_flow(route, p.weight[f], p.cap.empty() ? kInf : p.cap[f]);
      fixed.push_back(old_levels[f] < lambda ? old_levels[f] : MaxMinSolver::kFree);
    }
    if (q.weight.empty() && q.num_flows() > 0) q.weight.assign(q.num_flows(), 1.0);
    const std::vector<double> scratch = solver.solve(q);
    const std::vector<double> scratch_levels = solver.levels();
    const std::vector<double> replay = solver.solve_with_fixed(q, fixed);
    const std::vector<double> replay_levels = solver.levels();
    // The same re-solve from link states: the free flows get the same bits.
    const FreeProblem free = free_problem(q, fixed);
    const std::vector<double> from_links = solver.solve_with_fixed_links(free.problem, free.links);
    for (std::size_t i = 0; i < free.flows.size(); ++i) {
      ASSERT_EQ(from_links[i], replay[free.flows[i]]) << "trial " << trial << " free flow " << i;
      ASSERT_EQ(solver.levels()[i], replay_levels[free.flows[i]]) << "trial " << trial;
    }
    if (std::count_if(fixed.begin(), fixed.end(), [](double x) { return !std::isnan(x); }) >= 64) {
      ++large_fixed_sets;
    }
    for (std::size_t i = 0; i < kept.size(); ++i) {
      if (std::isnan(fixed[i])) {
        ASSERT_EQ(replay[i], scratch[i]) << "trial " << trial << " flow " << kept[i];
        ASSERT_EQ(replay_levels[i], scratch_levels[i]) << "trial " << trial << " flow " << i;
      } else {
        ++fixed_seen;
        ASSERT_EQ(old_rates[kept[i]], scratch[i]) << "trial " << trial << " fixed flow " << kept[i];
        ASSERT_EQ(old_levels[kept[i]], scratch_levels[i]) << "trial " << trial << " flow " << i;
      }
    }
  }
  EXPECT_GT(fixed_seen, 1000);
  EXPECT_GT(large_fixed_sets, 50);
}

// More distinct fixed levels than the replay's level classes hold (it then
// radix-sorts them): 3,000 flows, each bottlenecked on its own link at its own
// level, all crossing one shared link, where their rates fold into the
// remaining capacity in ascending level; 5 more flows cross only the shared
// link and get what is left. Remove one of those 5: the other 4 must get the
// from-scratch rate to the bit, which a wrong fold order would round apart.
TEST(MaxMinTest, SolveWithFixedManyDistinctLevels) {
  constexpr std::uint32_t kPrivate = 3000;
  constexpr std::uint32_t kShared = 5;
  const auto build = [&](std::uint32_t shared_flows) {
    MaxMinProblem p;
    double sum = 0.0;
    p.capacity.push_back(0.0);  // link 0, shared: set below
    for (std::uint32_t i = 0; i < kPrivate; ++i) {
      // Distinct, not round, and in no monotone order of flow index.
      const double c = 1.0 + static_cast<double>((i * 7919u) % kPrivate) / 3.0 + 1e-7 * i;
      p.capacity.push_back(c);
      sum += c;
      p.add_flow(std::vector<std::uint32_t>{0, i + 1});
    }
    p.capacity[0] = sum + 12345.678;
    for (std::uint32_t k = 0; k < shared_flows; ++k) p.add_flow(std::vector<std::uint32_t>{0});
    return p;
  };
  MaxMinSolver solver;
  const MaxMinProblem before = build(kShared);
  const std::vector<double> levels_before = solver.solve(before);  // weights 1: level = rate
  const double lambda = levels_before[kPrivate];  // a shared-only flow's level, the largest
  for (std::uint32_t i = 0; i < kPrivate; ++i) ASSERT_LT(levels_before[i], lambda);

  const MaxMinProblem after = build(kShared - 1);
  std::vector<double> fixed(after.num_flows(), MaxMinSolver::kFree);
  for (std::uint32_t i = 0; i < kPrivate; ++i) fixed[i] = levels_before[i];
  const std::vector<double> scratch = solver.solve(after);
  const std::vector<double> replay = solver.solve_with_fixed(after, fixed);
  for (std::uint32_t k = kPrivate; k < after.num_flows(); ++k) {
    ASSERT_EQ(replay[k], scratch[k]) << "shared flow " << k;
  }
  for (std::uint32_t i = 0; i < kPrivate; ++i) ASSERT_EQ(levels_before[i], scratch[i]) << "flow " << i;
  const FreeProblem free = free_problem(after, fixed);
  const std::vector<double> from_links = solver.solve_with_fixed_links(free.problem, free.links);
  ASSERT_EQ(from_links.size(), kShared - 1);
  for (std::size_t i = 0; i < from_links.size(); ++i) ASSERT_EQ(from_links[i], scratch[kPrivate + i]);
}

// Copies of some links (the same flows, at other capacities) added to a
// problem, each at a random place in the routes of its original's flows.
MaxMinProblem with_copied_links(std::mt19937_64& rng, const MaxMinProblem& p) {
  // Far apart (dropped), equal or within the merge gap (kept), either side.
  constexpr std::array<double, 7> kScale{1.0, 1.0 + 1e-12, 1.0 - 1e-9, 1.2, 0.8, 3.0, 0.25};
  MaxMinProblem q;
  q.capacity = p.capacity;
  std::vector<std::vector<std::uint32_t>> copies(p.num_links());
  for (std::uint32_t l = 0; l < p.num_links(); ++l) {
    const std::size_t n = rng() % 3 == 0 ? 1 + rng() % 3 : 0;
    for (std::size_t k = 0; k < n; ++k) {
      copies[l].push_back(static_cast<std::uint32_t>(q.capacity.size()));
      q.capacity.push_back(p.capacity[l] * kScale[rng() % kScale.size()]);
    }
  }
  for (std::size_t f = 0; f < p.num_flows(); ++f) {
    std::vector<std::uint32_t> route(p.links.begin() + p.link_offsets[f], p.links.begin() + p.link_offsets[f + 1]);
    for (std::uint32_t i = p.link_offsets[f]; i < p.link_offsets[f + 1]; ++i) {
      for (std::uint32_t c : copies[p.links[i]]) route.insert(route.begin() + rng() % (route.size() + 1), c);
    }
    q.add_flow(route, p.weight.empty() ? 1.0 : p.weight[f], p.cap.empty() ? kInf : p.cap[f]);
  }
  if (!p.weight.empty() && q.weight.empty()) q.weight.assign(q.num_flows(), 1.0);
  return q;
}

// Merging links with identical columns (MaxMinSolver::Options) changes no
// bit: on random problems with copied links (weighted, fractional weights
// too, and capped), rates, levels and the freeze order equal those of the
// solver that keeps every link, from scratch, replaying fixed flows after
// removals, and from fixed link states. Most copies are merged.
TEST(MaxMinTest, MergedLinksChangeNoBit) {
  std::mt19937_64 rng(4242);
  MaxMinSolver merging;
  MaxMinSolver plain(MaxMinSolver::Options{.merge_identical_links = false});
  std::size_t merged = 0;
  std::size_t replays_merged = 0;
  const auto same = [](MaxMinSolver& a, MaxMinSolver& b, const std::vector<double>& ra,
                       const std::vector<double>& rb, int trial) {
    ASSERT_EQ(ra, rb) << "trial " << trial;
    ASSERT_EQ(a.levels(), b.levels()) << "trial " << trial;
    ASSERT_EQ(a.freeze_order(), b.freeze_order()) << "trial " << trial;
  };
  for (int trial = 0; trial < 600; ++trial) {
    const bool large = trial % 4 == 3;
    const MaxMinProblem base = large ? random_problem(rng, trial % 3 == 1, trial % 2 == 1, 40, 400)
                                     : random_problem(rng, trial % 3 == 1, trial % 2 == 1);
    const MaxMinProblem p = with_copied_links(rng, base);
    const std::vector<double> a = merging.solve(p);
    merged += merging.merged_links();
    const std::vector<double> b = plain.solve(p);
    EXPECT_EQ(plain.merged_links(), 0u);
    same(merging, plain, a, b, trial);

    // Integer weights: remove 1-3 flows and re-solve from the level below.
    MaxMinProblem q = p;
    if (!q.weight.empty()) {
      for (double& w : q.weight) w = std::ceil(w);
    }
    const std::vector<double> old_levels = plain.solve(q), levels = plain.levels();
    std::vector<bool> removed(q.num_flows(), false);
    for (std::size_t i = 0, n = 1 + rng() % 3; i < n; ++i) removed[rng() % q.num_flows()] = true;
    double lambda = kInf;
    for (std::size_t f = 0; f < q.num_flows(); ++f) {
      if (removed[f]) lambda = std::min(lambda, levels[f]);
    }
    MaxMinProblem r;
    r.capacity = q.capacity;
    std::vector<double> fixed;
    for (std::size_t f = 0; f < q.num_flows(); ++f) {
      if (removed[f]) continue;
      std::vector<std::uint32_t> route(q.links.begin() + q.link_offsets[f], q.links.begin() + q.link_offsets[f + 1]);
      r.add_flow(route, q.weight.empty() ? 1.0 : q.weight[f], q.cap.empty() ? kInf : q.cap[f]);
      fixed.push_back(levels[f] < lambda ? levels[f] : MaxMinSolver::kFree);
    }
    if (r.num_flows() == 0) continue;
    if (!q.weight.empty() && r.weight.empty()) r.weight.assign(r.num_flows(), 1.0);
    const std::vector<double> ra = merging.solve_with_fixed(r, fixed);
    replays_merged += merging.merged_links();
    same(merging, plain, ra, plain.solve_with_fixed(r, fixed), trial);
    const FreeProblem free = free_problem(r, fixed);
    const std::vector<double> la = merging.solve_with_fixed_links(free.problem, free.links);
    same(merging, plain, la, plain.solve_with_fixed_links(free.problem, free.links), trial);
  }
  EXPECT_GT(merged, 1000u);
  EXPECT_GT(replays_merged, 500u);
}

// Three links with one column: the slowest stays, a copy at 1.5x goes, a copy
// within 2^-16 of the slowest stays (it could tie).
TEST(MaxMinTest, MergesOnlyClearlyLooserCopies) {
  MaxMinProblem p;
  p.capacity = {10.0, 15.0, 10.0 * (1.0 + 0x1p-20), 40.0};
  p.add_flow(std::vector<std::uint32_t>{1, 0, 2, 3});
  p.add_flow(std::vector<std::uint32_t>{0, 1, 2, 3});
  p.add_flow(std::vector<std::uint32_t>{3});
  MaxMinSolver solver;
  EXPECT_EQ(solver.solve(p), (std::vector<double>{5.0, 5.0, 30.0}));
  EXPECT_EQ(solver.merged_links(), 1u);
}

TEST(MaxMinTest, SolveWithFixedRejectsWhatItCannotReplay) {
  MaxMinSolver solver;
  MaxMinProblem p;
  p.capacity = {10.0};
  p.add_flow(std::vector<std::uint32_t>{0}, 1.5);
  p.add_flow(std::vector<std::uint32_t>{0}, 1.0);
  const std::vector<double> one_fixed{1.0, MaxMinSolver::kFree};
  EXPECT_THROW(solver.solve_with_fixed(p, one_fixed), std::invalid_argument);  // weight 1.5
  const std::vector<double> wrong_size{1.0};
  EXPECT_THROW(solver.solve_with_fixed(p, wrong_size), std::invalid_argument);
  p.weight = {2.0, 1.0};
  const std::vector<double> negative{-1.0, MaxMinSolver::kFree};
  EXPECT_THROW(solver.solve_with_fixed(p, negative), std::invalid_argument);
  // All free: the same as solve(), whatever the weights.
  p.weight = {1.5, 1.0};
  const std::vector<double> all_free(2, MaxMinSolver::kFree);
  EXPECT_EQ(solver.solve_with_fixed(p, all_free), (std::vector<double>{6.0, 4.0}));
  // One fixed at 2 (rate 4 at weight 2): the other gets the remaining 6.
  p.weight = {2.0, 1.0};
  const std::vector<double> fixed{2.0, MaxMinSolver::kFree};
  EXPECT_EQ(solver.solve_with_fixed(p, fixed), (std::vector<double>{4.0, 6.0}));
}

TEST(MaxMinTest, SolveWithFixedLinksChecksItsStates) {
  MaxMinSolver solver;
  MaxMinProblem free;
  free.capacity = {10.0, 8.0};
  free.add_flow(std::vector<std::uint32_t>{0, 1});
  free.add_flow(std::vector<std::uint32_t>{0});
  // Link 0 carried fixed flows at levels 1 (weight 2) and 1.5 (weight 1):
  // base 10 - 1 x 2 = 8 with the group at 1.5 open, 6.5 left. Link 1: none.
  const std::vector<FixedLinkState> states{{8.0, 1.5, 1.0}, {8.0, 0.0, 0.0}};
  EXPECT_EQ(solver.solve_with_fixed_links(free, states), (std::vector<double>{3.25, 3.25}));
  const std::vector<FixedLinkState> wrong_size{{8.0, 1.5, 1.0}};
  EXPECT_THROW(solver.solve_with_fixed_links(free, wrong_size), std::invalid_argument);
  const std::vector<FixedLinkState> negative_level{{8.0, -1.0, 1.0}, {8.0, 0.0, 0.0}};
  EXPECT_THROW(solver.solve_with_fixed_links(free, negative_level), std::invalid_argument);
  const std::vector<FixedLinkState> fractional_weight{{8.0, 1.5, 0.5}, {8.0, 0.0, 0.0}};
  EXPECT_THROW(solver.solve_with_fixed_links(free, fractional_weight), std::invalid_argument);
  const std::vector<FixedLinkState> infinite_base{{kInf, 1.5, 1.0}, {8.0, 0.0, 0.0}};
  EXPECT_THROW(solver.solve_with_fixed_links(free, infinite_base), std::invalid_argument);
  free.weight = {1.5, 1.0};
  EXPECT_THROW(solver.solve_with_fixed_links(free, states), std::invalid_argument);
}

}  // namespace
}  // namespace zx::models
