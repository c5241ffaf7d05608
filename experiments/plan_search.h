// File: experiments/plan_search.h
//
// Sharding search: the embedding plan that trains fastest in simulation.
// The planner balances its own estimate of embedding time; it does not see
// what a placement costs in communication (row-wise shards reduce-scatter
// the pools of every sample; table-wise tables send theirs to every GPU) or
// in the critical path. The search simulates the iteration (as `whatif`
// does) for each alternative and keeps what is faster.
//
// Method: coordinate descent over the model's table groups (a group's tables
// move together: model A's 4096 equal tables are one unit), heaviest groups
// first (lookups x dim x tables). For each group every other sharding kind
// is simulated with all other groups where they are; the fastest that beats
// the current iteration time by at least `min_gain` is taken. Passes repeat
// until one changes nothing or the budget of simulations is spent. Plans
// that do not fit are skipped. Alternatives of one group are simulated in
// parallel; the choice depends only on their results (ties: the order of
// kinds), so the search is deterministic.
//
// What it does not do: move single tables of a group, pin ranks (the
// planner still places shards), or choose host memory (left to the planner).

#ifndef ZIONSIM_EXPERIMENTS_PLAN_SEARCH_H_
#define ZIONSIM_EXPERIMENTS_PLAN_SEARCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/dlrm/sharding.h"
#include "experiments/whatif.h"

namespace zx::experiments {

struct SearchOptions {
  int max_simulations = 200;  ///< the first (start) simulation counts
  /// A move must shorten the iteration by at least this share of it.
  double min_gain = 1e-3;
};

struct SearchMove {
  int pass = 0;
  std::string group;
  std::int64_t tables = 0;
  std::string from;  ///< the kinds the group's tables had ("table_wise", or "mixed")
  std::string to;
  double iteration_time_ms = 0;  ///< after the move
};

struct SearchResult {
  double start_iteration_time_ms = 0;
  double best_iteration_time_ms = 0;
  int simulations = 0;
  int passes = 0;
  bool budget_exhausted = false;
  std::vector<SearchMove> moves;
  /// The choices to add to the options' sharding_overrides to get the best plan.
  std::vector<models::TableOverride> overrides;
};

/// Searches from the plan `o` describes at `nodes`. Throws zx::InputError
/// for bad options, or when the starting plan does not fit. `progress` (may
/// be empty) is called after each group's alternatives are simulated.
SearchResult search_sharding(const WhatIfOptions& o, int nodes, const SearchOptions& search,
                             const std::function<void(const SearchResult&, const std::string& group)>& progress = {});

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_PLAN_SEARCH_H_
