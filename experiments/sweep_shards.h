// File: experiments/sweep_shards.h
//
// Shard files: what `zionsim whatif ... --shard K/N` (or collective's, or
// run --vary's) writes instead of its table, and what `zionsim merge` joins
// back into the bytes one process prints (docs/sweeps.md).
//
//   {"zionsim_shard": 1,
//    "command": ["whatif", "--model", "dlrm-a", ...],  (argv, --shard left out)
//    "sweep": "9c0f...",                              (FNV-1a of the command)
//    "tasks": 12,                                     (points of the whole sweep)
//    "shard": {"index": 0, "count": 4},
//    "results": [{"task": 3, "outcome": {"point": {...}}}, ...]}
//
// A task is one (variant, size) point, numbered as the one-process run lists
// them; an outcome is experiments/whatif_codec.h's. For collective and run a
// task is a row or a variant, its outcome {"result": ...}
// (experiments/placement.h).

#ifndef ZIONSIM_EXPERIMENTS_SWEEP_SHARDS_H_
#define ZIONSIM_EXPERIMENTS_SWEEP_SHARDS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "experiments/distribution.h"

namespace zx::experiments {

inline constexpr int kShardFormatVersion = 1;

/// `args` without `--shard K/N` (or `--shard=K/N`).
std::vector<std::string> command_without_shard(const std::vector<std::string>& args);

/// The sweep's identity: FNV-1a (64 bits, hex) of the command's words.
std::string sweep_id(const std::vector<std::string>& command);

/// The document of one shard.
nlohmann::ordered_json shard_document(const std::vector<std::string>& command, std::size_t tasks,
                                      experiments::Shard shard,
                                      std::vector<std::pair<std::size_t, nlohmann::ordered_json>> outcomes);

/// Shard files read and checked against each other: one command, one
/// count N, every share 0..N-1 exactly once, every task exactly once.
struct MergedShards {
  std::vector<std::string> command;
  std::size_t tasks = 0;
  std::map<std::size_t, nlohmann::json> outcomes;  ///< by task
  std::string source;                              ///< "the shards FILE, FILE, ..." for errors
};

/// Throws zx::InputError naming the file and JSON pointer of anything
/// malformed, the files that disagree, a share given twice (both files) or
/// missing (which), a task given twice or missing.
MergedShards read_shards(const std::vector<std::string>& paths);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SWEEP_SHARDS_H_
