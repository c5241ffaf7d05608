// File: experiments/placement.h
//
// Where a sweep's tasks run beyond parallel_map's threads and MPI ranks
// (experiments/parallel.h): a share of them (--shard K/N, or the Slurm job
// array's), tasks kept by an earlier run (--results DIR,
// experiments/sweep_cache.h), or every task read back from shard files
// (zionsim merge, experiments/sweep_shards.h). The generic form, for any
// command whose tasks encode and decode losslessly (collective's rows,
// run's variants); whatif's points have their own (experiments/whatif.h,
// SweepPlacement), with progress lines and per-point errors.
//
//   PlacementRequest where{.shard = shard_of(flag), .results = dir, .command = args};
//   TaskPlacement p = task_placement(where, kChoosingFlags, task_json, task_files);
//   PlacedResults<Row> rows = placed_map<Row>(n, threads, costs, p, compute, encode, decode);
//   if (where.shard) out << shard_document(where.command, n, *where.shard, shard_outcomes(rows, encode));

#ifndef ZIONSIM_EXPERIMENTS_PLACEMENT_H_
#define ZIONSIM_EXPERIMENTS_PLACEMENT_H_

#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/distribution.h"
#include "experiments/parallel.h"

namespace zx::experiments {

/// The share --shard asks for: "off" none (the whole sweep, even inside a
/// Slurm job array), "K/N" that one, empty the Slurm job array's when one
/// runs (shard_from_environment). Throws zx::InputError naming --shard or
/// the environment variable.
std::optional<Shard> shard_of(const std::string& flag);

/// What a command's flags say of where its tasks run; task_placement makes
/// the TaskPlacement.
struct PlacementRequest {
  std::optional<Shard> shard;
  /// --results DIR; empty: nothing kept.
  std::string results;
  /// The command line without --shard: what a shard file records, and (less
  /// the flags that only choose tasks or outputs) a kept task's identity.
  std::vector<std::string> command;
  /// Every task's outcome, read back from shard files by zionsim merge.
  const std::map<std::size_t, nlohmann::json>* merged = nullptr;
  std::string merged_source;

  bool placed() const { return shard || !results.empty() || merged != nullptr; }
};

struct SweepPlacement;  // experiments/whatif.h

/// Where a command's tasks run: as --shard and --results say, or (zionsim
/// merge, `merged` set) every task read back from shards. `args`: the
/// command line as given; a shard file records it less --shard. Throws
/// zx::InputError for a malformed --shard or Slurm array variable.
PlacementRequest placement_request(const std::string& shard, const std::string& results,
                                   const std::vector<std::string>& args, const SweepPlacement* merged);

namespace internal {
std::vector<std::size_t> placed_tasks(std::size_t count, std::span<const double> costs,
                                      const std::optional<Shard>& shard);
void check_merged_count(std::size_t merged, std::size_t count, const std::string& source);
// An outcome read from a file (a shard, a kept result): {"result": R} or
// {"error": ...} (rethrown); anything else an InputError naming `source`.
void check_outcome(const nlohmann::json& outcome, const std::string& source, const std::string& where);
// A result that does not decode: an InputError naming `source` and `where`
// (and the pointer inside the result an InputError `e` names).
[[noreturn]] void rethrow_decode_error(const std::exception& e, const std::string& source, const std::string& where);
}  // namespace internal

// --- Placed: a share of the tasks, tasks kept by an earlier run, or tasks
// read back from shard files -------------------------------------------------

/// A task's outcome kept by an earlier run (--results): {"result": ...} or
/// {"error": ...}, and the file it was read from (for errors).
struct KeptOutcome {
  nlohmann::json outcome;
  std::string file;
};

/// Where a sweep's tasks run beyond parallel_map's threads and MPI ranks:
/// the generic form of what `--shard`, `--results` and `zionsim merge` do
/// (experiments/distribution.h, sweep_cache.h, sweep_shards.h) for any
/// command whose tasks encode and decode losslessly.
struct TaskPlacement {
  /// Only this share of the tasks (shard_tasks); the others are left default.
  std::optional<Shard> shard;
  /// Every task's outcome read back from shard files (zionsim merge), by
  /// task, `merged_source` naming them in errors: nothing is computed.
  const std::map<std::size_t, nlohmann::json>* merged = nullptr;
  std::string merged_source;
  /// A task's outcome kept by an earlier run, or nullopt to compute it; and
  /// where a computed task's {"result": ...} is kept (called on the thread
  /// and rank that computed it, as soon as it is done). Either may be empty.
  std::function<std::optional<KeptOutcome>(std::size_t task)> kept;
  std::function<void(std::size_t task, const nlohmann::ordered_json& outcome)> keep;
};

/// What placed_map gives: every task's result (a shard's others default),
/// the tasks computed or read here (ascending), and whether this process
/// prints (false on MPI ranks other than 0).
template <typename R>
struct PlacedResults {
  std::vector<R> results;
  std::vector<std::size_t> computed;
  bool prints = true;
};

/// As parallel_map, placed. With `merged`, every result is decoded from its
/// outcome (the first error in task order rethrown; `merged` must hold
/// `count` tasks). Otherwise the tasks of the share (all without one) run
/// as parallel_map runs them, over MPI when a job runs, each first looked up
/// with `kept` and, when computed, handed to `keep`. Errors are the
/// one-process run's: the first failing task's in task order.
template <typename R>
PlacedResults<R> placed_map(std::size_t count, int threads, std::span<const double> costs,
                            const TaskPlacement& placement, const std::function<R(std::size_t)>& compute,
                            const std::function<nlohmann::ordered_json(const R&)>& encode,
                            const std::function<R(const nlohmann::json&)>& decode) {
  PlacedResults<R> out;
  out.results.resize(count);
  const auto decode_outcome = [&decode](const nlohmann::json& outcome, const std::string& source,
                                        const std::string& where) -> R {
    internal::check_outcome(outcome, source, where);
    try {
      return decode(outcome["result"]);
    } catch (const InputError& e) {
      internal::rethrow_decode_error(e, source, where + "/result");
    } catch (const nlohmann::json::exception& e) {
      internal::rethrow_decode_error(e, source, where + "/result");
    }
  };
  if (placement.merged != nullptr) {
    internal::check_merged_count(placement.merged->size(), count, placement.merged_source);
    for (std::size_t t = 0; t < count; ++t) {
      out.results[t] = decode_outcome(placement.merged->at(t), placement.merged_source, "/tasks/" + std::to_string(t));
      out.computed.push_back(t);
    }
    return out;
  }
  out.computed = internal::placed_tasks(count, costs, placement.shard);
  std::vector<double> here_costs;
  for (const std::size_t t : out.computed) here_costs.push_back(costs[t]);
  const std::function<R(std::size_t)> placed_compute = [&](std::size_t k) -> R {
    const std::size_t t = out.computed[k];
    if (placement.kept) {
      if (std::optional<KeptOutcome> kept = placement.kept(t)) return decode_outcome(kept->outcome, kept->file, "/outcome");
    }
    R r = compute(t);
    if (placement.keep) placement.keep(t, nlohmann::ordered_json{{"result", encode(r)}});
    return r;
  };
  std::vector<R> here;
  out.prints = parallel_map<R>(out.computed.size(), threads, here_costs, placed_compute, encode, decode, here);
  if (!out.prints) return out;
  for (std::size_t k = 0; k < here.size(); ++k) out.results[out.computed[k]] = std::move(here[k]);
  return out;
}

/// The outcomes of a shard's tasks, {"result": ...} each, for shard_document.
template <typename R>
std::vector<std::pair<std::size_t, nlohmann::ordered_json>> shard_outcomes(
    const PlacedResults<R>& placed, const std::function<nlohmann::ordered_json(const R&)>& encode) {
  std::vector<std::pair<std::size_t, nlohmann::ordered_json>> out;
  for (const std::size_t t : placed.computed) out.emplace_back(t, nlohmann::ordered_json{{"result", encode(placed.results[t])}});
  return out;
}

/// The TaskPlacement `where` asks for. With `where.results`, a task's
/// identity is the command's words less `choosing` (flag -> values taken,
/// as point_shaping_words reads them), task_json(t)'s fields and the files
/// task_files(t) names (experiments/sweep_cache.h's ResultCache). Throws
/// zx::InputError naming --results when the directory cannot be made.
TaskPlacement task_placement(const PlacementRequest& where, const std::map<std::string, int>& choosing,
                             std::function<nlohmann::ordered_json(std::size_t)> task_json,
                             std::function<std::vector<std::string>(std::size_t)> task_files);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_PLACEMENT_H_
