// File: experiments/sweep_cache.h
//
// `whatif --results DIR`: every point of a sweep, once simulated, is kept in
// DIR as a file of its own, named by the hash of what determines it; a rerun
// reads the points it finds there instead of simulating them, so that a
// killed sweep resumes where it stopped and a sweep grown by a size or a
// value simulates only what is new (docs/sweeps.md).
//
// A point's identity (what must be equal for its result to be):
//   - the command's words that shape a point: everything but the flags that
//     only choose which points exist or where output goes (--nodes, --vary,
//     --sensitivity, --threads, --format, --plot, --shard, --results,
//     --timeline, --emit-trace, --emit-scenarios, --json,
//     --skip-memory-check), in order;
//   - its variant's settings ("nic-gbit" = "400", ...) and its node count;
//   - the bytes of every file those words and settings name (a cluster, a
//     profile, a model, a sharding file, a plug-in), by FNV-1a;
//   - the bytes of this zionsim binary: a rebuilt simulator may give other
//     numbers, so nothing kept by another build is reused.
// The file is DIR/<FNV-1a of the identity>.json and holds the identity and
// the point (experiments/whatif_codec.h); a file whose identity differs is not
// used. Only points that ran to the end are kept, each written whole (a
// temporary file renamed into place) as soon as it is done.

#ifndef ZIONSIM_EXPERIMENTS_SWEEP_CACHE_H_
#define ZIONSIM_EXPERIMENTS_SWEEP_CACHE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/knobs.h"
#include "experiments/placement.h"
#include "experiments/whatif.h"

namespace zx::experiments {

/// Whether a whatif flag ("--nodes") only chooses which points exist or
/// where output goes (the list above, and --json), rather than shaping them.
bool chooses_points_or_outputs(const std::string& flag);

/// The words of a whatif command line that shape its points (see above).
std::vector<std::string> point_shaping_words(const std::vector<std::string>& args);

/// The words of a command line that shape its points: all but the flags of
/// `choosing` (flag -> how many values it takes; -1: every following word
/// that is not a flag, as CLI11's take_all does), given as "--flag VALUE" or
/// "--flag=VALUE".
std::vector<std::string> point_shaping_words(const std::vector<std::string>& args,
                                             const std::map<std::string, int>& choosing);

/// `e` with "; delete it to simulate that point again" after each message:
/// what a kept file that cannot be used says.
InputError with_remedy(const InputError& e);

/// The results of a sweep's tasks kept in a directory, a file per task
/// named by the hash of its identity: the command's shaping words, the
/// task's own fields (a JSON object: its settings, size, ...), the bytes of
/// every file the words or `names` name, and this binary's bytes. Any
/// command whose tasks encode losslessly keeps them this way.
class ResultCache {
 public:
  /// Creates `dir` when missing; throws zx::InputError naming `option` when
  /// it cannot, or it is not a directory.
  ResultCache(std::string option, std::string dir, std::vector<std::string> words);

  /// {"command": words, <task's fields>, "files": {path: hash}, "zionsim_binary": hash}.
  nlohmann::ordered_json identity(const nlohmann::ordered_json& task, const std::vector<std::string>& names) const;
  /// The kept outcome ({"result": ...}, {"point": ...} or {"error": ...}) and
  /// its file, or nullopt when there is none (or one of another identity).
  /// Throws zx::InputError naming the file when it cannot be read or is not
  /// a kept task (delete it to simulate that point again).
  std::optional<KeptOutcome> load(const nlohmann::ordered_json& task, const std::vector<std::string>& names) const;
  /// Keeps an outcome (whole or not at all); throws zx::InputError naming
  /// the directory when it cannot be written. Safe from several threads.
  void store(const nlohmann::ordered_json& task, const std::vector<std::string>& names,
             const nlohmann::ordered_json& outcome) const;

 private:
  std::string file_of(const nlohmann::ordered_json& id) const;

  std::string option_;
  std::string dir_;
  std::vector<std::string> words_;
  std::string binary_;  // FNV-1a of this program's bytes
};

/// whatif's points kept: a task is (settings, nodes).
class PointCache {
 public:
  PointCache(std::string option, std::string dir, std::vector<std::string> words)
      : cache_(std::move(option), std::move(dir), std::move(words)) {}

  /// The kept point, or nullopt when there is none (or one of another
  /// identity). Throws zx::InputError naming the file when it cannot be
  /// read or is not a kept point (delete it to simulate that point again).
  std::optional<WhatIfPoint> load(const Settings& settings, int nodes) const;
  /// Keeps a point (whole or not at all); throws zx::InputError naming the
  /// directory when it cannot be written.
  void store(const Settings& settings, int nodes, const WhatIfPoint& point) const;

 private:
  ResultCache cache_;
};

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SWEEP_CACHE_H_
