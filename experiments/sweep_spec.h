// File: experiments/sweep_spec.h
//
// A what-if sweep written down as a file (`zionsim sweep SPEC.json`): the
// whatif flags and the knobs to vary (the product of their values), read,
// checked and spelt as the whatif command line it stands for, so that a
// sweep can be kept under version control and runs over MPI ranks or as
// shards like any whatif (docs/sweeps.md). tools/sweep_command.cc runs the
// words, with any flag given after the file added.
//
//   {"schema_version": 1,
//    "command": "whatif",
//    "flags": {"model": "dlrm-a", "nodes": [8, 16, 32], "set": ["fabric.switch_latency_ns=700"], "unfused": true},
//    "vary": {"nic-gbit": [200, 400], "oversubscription": [1, 2]},
//    "scenarios": [{"gpu": "a100-40gb"}, {"gpu": "h100-80gb"}]}
//
// "vary" sweeps the product of its knobs' values; "scenarios" lists
// variants one by one (each sets the same knobs), --vary's product running
// inside each.
//
// A flag's value: a string or a number (--model dlrm-a), true for a flag
// that takes none (--unfused; false leaves it out), a list for a flag given
// several times (--set a --set b), or for "nodes" the sizes (8,16,32).

#ifndef ZIONSIM_EXPERIMENTS_SWEEP_SPEC_H_
#define ZIONSIM_EXPERIMENTS_SWEEP_SPEC_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zx::experiments {

/// The long flags of `zionsim whatif` (without "--"), and which of them
/// take no value: what a sweep's "flags" may name. The command line's
/// (tools/sweep_command.cc reads them from the whatif command).
struct WhatIfFlagNames {
  std::vector<std::string> names;
  std::vector<std::string> no_value;
};

/// The whatif command line of a sweep file's document: "whatif", its flags
/// in the file's order, a --vary per knob of "vary" (KNOB=V1,V2,...) and a
/// --scenario per entry of "scenarios" ("KNOB=V KNOB=V"). Whole numbers
/// written as reals are written whole (400.0: "400"). Throws zx::InputError
/// naming `path` at the JSON pointer of the first problem: an unknown key,
/// schema_version not 1, a command not "whatif", a flag whatif does not
/// have (with the closest), "vary" or "shard" among the flags, a value of
/// the wrong type or an empty list, a value to vary with a comma, a
/// scenario's value with a space or empty.
std::vector<std::string> sweep_whatif_words(const nlohmann::ordered_json& root, const std::string& path,
                                            const WhatIfFlagNames& flags);

/// The sweep file at `path`: checked as every input file is (size,
/// nesting, syntax, keys given twice; json::Document::load_file), then read
/// again keeping the keys' order (--vary's order is the file's), and its
/// words (sweep_whatif_words). Throws zx::InputError.
std::vector<std::string> read_sweep_spec(const std::string& path, const WhatIfFlagNames& flags);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_SWEEP_SPEC_H_
