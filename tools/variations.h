// File: tools/variations.h
//
// --vary KEY=V1,V2,... in the outputs: knob values and settings as JSON and
// CSV fields. The knobs themselves are experiments/knobs.h's.

#ifndef ZIONSIM_TOOLS_VARIATIONS_H_
#define ZIONSIM_TOOLS_VARIATIONS_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "experiments/placement.h"
#include "experiments/whatif.h"
#include "experiments/report_format.h"
#include "experiments/result_schema.h"

namespace zx::tools {

// The syntax and product of --vary, and the knob table, are experiments'
// (experiments/knobs.h).
using experiments::all_combinations;
using experiments::parse_knob_variation;
using experiments::parse_variation;
using experiments::Settings;
using experiments::settings_label;
using experiments::Sweeper;
using experiments::Variation;

/// The flags that the knob table declares for `sweeper`
/// (experiments::Knob::declares_flag) and what the command line gave them.
struct KnobFlags {
  std::vector<std::string> declared;          ///< knob keys, in table order
  std::map<std::string, std::string> values;  ///< knob key -> a value option's text
  Settings given;                             ///< (key, value) of the flags given, in table order
};

/// Declares the flags of `group` that `sweeper` takes on `cmd`: a value
/// option, or a switch (a flag with Knob::switch_value), with the entry's
/// help, values and default; two knobs that exclude each other, both
/// declared here, exclude each other's flags.
std::shared_ptr<KnobFlags> add_knob_flags(CLI::App& cmd, experiments::Sweeper sweeper,
                                          experiments::FlagGroup group = experiments::FlagGroup::kCommand);

/// After parsing: fills flags.given with the declared flags `cmd` was given.
void collect_knob_flags(const CLI::App& cmd, KnobFlags& flags);

/// Sets `s` as flags.given says; an error names the flag ("--a2a-precision:
/// expected one of ..."). A flag that sets a cluster key (--nic-gbit) given
/// with --set of that key is refused. Throws zx::InputError.
void apply_knob_flags(const KnobFlags& flags, experiments::Scenario& s);

/// The flags of `sweeper`'s knobs given on `cmd`'s command line (for
/// experiments::check_knob_conflicts): those of the table's knobs that `cmd`
/// has and was given.
std::set<std::string> knob_flags_given(const CLI::App& cmd, experiments::Sweeper sweeper);

/// The collective kinds --algo KIND=NAME flags name (canonical: all_to_all);
/// a bare name (nccl, auto: every kind) names none, as the varied kind
/// refines it.
std::set<std::string> algorithm_kinds_named(const std::vector<std::string>& algo_flags);

/// --shard K/N and --results DIR, as every command that sweeps declares them.
struct PlacementFlags {
  std::string shard;    ///< empty: the Slurm job array's share, if any; "off": none
  std::string results;  ///< empty: nothing kept
};

/// Declares --results and --shard on `cmd` (docs/sweeps.md).
void add_placement_flags(CLI::App& cmd, PlacementFlags& flags);

/// Where a command's points run (experiments/placement.h).
inline experiments::PlacementRequest placement_request(const PlacementFlags& flags,
                                                       const std::vector<std::string>& args,
                                                       const experiments::SweepPlacement* merged) {
  return experiments::placement_request(flags.shard, flags.results, args, merged);
}

// The JSON forms of knob values are experiments/knobs.h's, the CSV fields
// experiments/result_schema.h's.
using experiments::csv_field;
using experiments::csv_quoted;
using experiments::knob_value_json;
using experiments::settings_json;
using experiments::variations_json;

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_VARIATIONS_H_
