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

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "experiments/whatif.h"

namespace zx::experiments {

/// Whether a whatif flag ("--nodes") only chooses which points exist or
/// where output goes (the list above, and --json), rather than shaping them.
bool chooses_points_or_outputs(const std::string& flag);

/// The words of a whatif command line that shape its points (see above).
std::vector<std::string> point_shaping_words(const std::vector<std::string>& args);

class PointCache {
 public:
  /// Creates `dir` when missing; throws zx::InputError naming `option` when
  /// it cannot, or it is not a directory.
  PointCache(std::string option, std::string dir, std::vector<std::string> words);

  nlohmann::ordered_json identity(const Settings& settings, int nodes) const;
  /// The file a point is kept in.
  std::string path(const Settings& settings, int nodes) const;
  /// The kept point, or nullopt when there is none (or one of another
  /// identity). Throws zx::InputError naming the file when it cannot be
  /// read or is not a kept point (delete it to simulate that point again).
  std::optional<WhatIfPoint> load(const Settings& settings, int nodes) const;
  /// Keeps a point (whole or not at all); throws zx::InputError naming the
  /// directory when it cannot be written.
  void store(const Settings& settings, int nodes, const WhatIfPoint& point) const;

 private:
  std::string option_;
  std::string dir_;
  std::vector<std::string> words_;
  std::string binary_;  // FNV-1a of this program's bytes
};

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SWEEP_CACHE_H_
