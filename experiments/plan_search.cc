#include "experiments/plan_search.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "base/error.h"
#include "models/dlrm/model.h"

namespace zx::experiments {
namespace {

constexpr models::ShardingKind kKinds[] = {models::ShardingKind::kTableWise, models::ShardingKind::kRowWise,
                                           models::ShardingKind::kColumnWise, models::ShardingKind::kTableRowWise,
                                           models::ShardingKind::kDataParallel};

struct Unit {
  std::size_t group;
  std::int64_t first;  // first table index
  std::int64_t count;
  double weight;  // lookups x dim x tables: the order of the search
};

// The kinds a group's tables have in `plan`: one name, or "mixed".
std::string kinds_of(const models::ShardingPlan& plan, const Unit& u) {
  std::set<std::string> kinds;
  for (std::int64_t t = u.first; t < u.first + u.count; ++t) {
    kinds.insert(std::string(models::to_string(plan.tables[static_cast<std::size_t>(t)].kind)));
  }
  return kinds.size() == 1 ? *kinds.begin() : "mixed";
}

}  // namespace

SearchResult search_sharding(const WhatIfOptions& base, int nodes, const SearchOptions& search,
                             const std::function<void(const SearchResult&, const std::string&)>& progress) {
  if (search.max_simulations < 1 || !(search.min_gain >= 0 && search.min_gain < 1)) {
    throw InputError(Diagnostic{"--search-budget", "", fmt::format("expected at least 1 simulation, got {}",
                                                                   search.max_simulations)});
  }
  WhatIfOptions o = base;
  o.nodes = {nodes};
  check_whatif_options(o);
  const models::DlrmModel model = scenario_model(o);
  std::vector<Unit> units;
  std::int64_t first = 0;
  for (std::size_t g = 0; g < model.tables.size(); ++g) {
    const models::TableGroup& t = model.tables[g];
    units.push_back({g, first, t.count, t.pooling * static_cast<double>(t.dim) * static_cast<double>(t.count)});
    first += t.count;
  }
  std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.weight > b.weight; });

  SearchResult result;
  const auto simulate = [&](const std::vector<WhatIfOptions>& candidates) {
    std::vector<WhatIfVariant> variants;
    for (const WhatIfOptions& c : candidates) variants.push_back(WhatIfVariant{{}, c});
    std::vector<std::vector<WhatIfPoint>> points = run_whatif_variants(variants);
    result.simulations += static_cast<int>(candidates.size());
    std::vector<WhatIfPoint> out;
    for (auto& p : points) out.push_back(std::move(p.front()));
    return out;
  };
  const WhatIfPoint start = simulate({o}).front();
  if (!start.fits) {
    throw InputError(Diagnostic{"--search", "", fmt::format("the starting plan does not fit: {}", start.reason)});
  }
  result.start_iteration_time_ms = start.iteration_time_ms;
  result.best_iteration_time_ms = start.iteration_time_ms;

  // The current choice per group (none: as the starting options say), and
  // the options with group `change` set to `kind` instead (nullopt: none).
  std::vector<std::optional<models::ShardingKind>> chosen(model.tables.size());
  const auto options_with = [&](std::optional<std::size_t> change, std::optional<models::ShardingKind> kind) {
    WhatIfOptions c = o;
    for (const Unit& u : units) {
      const std::optional<models::ShardingKind> k = change == u.group ? kind : chosen[u.group];
      if (!k) continue;
      for (std::int64_t t = u.first; t < u.first + u.count; ++t) {
        c.sharding_overrides.push_back(models::TableOverride{.table = t, .kind = *k});
      }
    }
    return c;
  };
  // What a group's tables are in the plan of `c`: "row_wise", "mixed", "table_wise in host memory".
  const auto placed_as = [&](const models::ShardingPlan& plan, const Unit& u) {
    std::string kinds = kinds_of(plan, u);
    for (std::int64_t t = u.first; t < u.first + u.count; ++t) {
      if (plan.tables[static_cast<std::size_t>(t)].host_memory) return kinds + " in host memory";
    }
    return kinds;
  };
  const auto current_plan = [&] { return plan_whatif_size(options_with(std::nullopt, std::nullopt), nodes).plan; };
  for (int pass = 1;; ++pass) {
    result.passes = pass;
    bool moved = false;
    for (const Unit& u : units) {
      const models::ShardingPlan now = current_plan();
      const std::string from = kinds_of(now, u);
      std::vector<models::ShardingKind> alternatives;
      for (models::ShardingKind k : kKinds) {
        if (from != models::to_string(k)) alternatives.push_back(k);
      }
      const int left = search.max_simulations - result.simulations;
      if (left <= 0) {
        result.budget_exhausted = true;
        break;
      }
      if (static_cast<int>(alternatives.size()) > left) alternatives.resize(static_cast<std::size_t>(left));
      std::vector<WhatIfOptions> candidates;
      for (models::ShardingKind k : alternatives) candidates.push_back(options_with(u.group, k));
      const std::string was = placed_as(now, u);
      const std::vector<WhatIfPoint> points = simulate(candidates);
      std::optional<std::size_t> best;
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (!points[i].fits) continue;
        if (!best || points[i].iteration_time_ms < points[*best].iteration_time_ms) best = i;
      }
      if (best && points[*best].iteration_time_ms < result.best_iteration_time_ms * (1.0 - search.min_gain)) {
        chosen[u.group] = alternatives[*best];
        const std::string to = placed_as(current_plan(), u);
        result.best_iteration_time_ms = points[*best].iteration_time_ms;
        result.moves.push_back(SearchMove{.pass = pass,
                                          .group = model.tables[u.group].name,
                                          .tables = u.count,
                                          .from = was,
                                          .to = to,
                                          .iteration_time_ms = points[*best].iteration_time_ms});
        moved = true;
      }
      if (progress) progress(result, model.tables[u.group].name);
    }
    if (!moved || result.budget_exhausted) break;
  }
  result.overrides = options_with(std::nullopt, std::nullopt).sharding_overrides;
  return result;
}

}  // namespace zx::experiments
