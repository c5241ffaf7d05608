#include "experiments/placement.h"

#include <memory>

#include <fmt/format.h>

#include "base/error.h"
#include "experiments/sweep_cache.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif.h"
#include "experiments/whatif_codec.h"

namespace zx::experiments {

std::optional<Shard> shard_of(const std::string& flag) {
  if (flag == "off") return std::nullopt;
  if (!flag.empty()) return parse_shard(flag, "--shard");
  return shard_from_environment();
}

PlacementRequest placement_request(const std::string& shard, const std::string& results,
                                   const std::vector<std::string>& args, const SweepPlacement* merged) {
  if (merged != nullptr) return {.merged = merged->merged, .merged_source = merged->merged_source};
  return {.shard = shard_of(shard), .results = results, .command = command_without_shard(args)};
}

namespace internal {

std::vector<std::size_t> placed_tasks(std::size_t count, std::span<const double> costs,
                                      const std::optional<Shard>& shard) {
  if (shard) return shard_tasks(costs.first(count), *shard);
  std::vector<std::size_t> all(count);
  for (std::size_t t = 0; t < count; ++t) all[t] = t;
  return all;
}

void check_outcome(const nlohmann::json& outcome, const std::string& source, const std::string& where) {
  if (outcome.is_object() && outcome.contains("error")) rethrow_error_json(outcome["error"], source, where + "/error");
  if (!outcome.is_object() || !outcome.contains("result")) {
    throw InputError(Diagnostic{source, where, "expected a task's outcome: {\"result\": ...} or {\"error\": ...}"});
  }
}

void rethrow_decode_error(const std::exception& e, const std::string& source, const std::string& where) {
  if (const auto* input = dynamic_cast<const InputError*>(&e)) {
    std::vector<Diagnostic> diagnostics;
    for (const Diagnostic& d : input->diagnostics()) diagnostics.push_back(Diagnostic{source, where + d.location, d.message});
    throw InputError(std::move(diagnostics));
  }
  throw InputError(Diagnostic{source, where, fmt::format("a task's result written by another version of zionsim, or "
                                                         "changed since: {}",
                                                         e.what())});
}

void check_merged_count(std::size_t merged, std::size_t count, const std::string& source) {
  if (merged == count) return;
  throw InputError(Diagnostic{
      "merge", "",
      fmt::format("{} hold {} points, and their command makes {} here: they were written by another version of "
                  "zionsim, or with other files behind the same names",
                  source, merged, count)});
}

}  // namespace internal

TaskPlacement task_placement(const PlacementRequest& where, const std::map<std::string, int>& choosing,
                             std::function<nlohmann::ordered_json(std::size_t)> task_json,
                             std::function<std::vector<std::string>(std::size_t)> task_files) {
  TaskPlacement p{.shard = where.shard, .merged = where.merged, .merged_source = where.merged_source};
  if (where.results.empty() || where.merged != nullptr) return p;
  auto cache = std::make_shared<const ResultCache>("--results", where.results,
                                                   point_shaping_words(where.command, choosing));
  p.kept = [cache, task_json, task_files](std::size_t t) { return cache->load(task_json(t), task_files(t)); };
  p.keep = [cache, task_json, task_files](std::size_t t, const nlohmann::ordered_json& outcome) {
    cache->store(task_json(t), task_files(t), outcome);
  };
  return p;
}

}  // namespace zx::experiments
