// File: experiments/knobs.h
//
// The knobs a sweep turns, each declared once: its key (what --vary,
// --scenario and a sweep file's "vary" take), the flag that sets it once,
// its values and unit, a line of help, the commands whose --vary takes it,
// the knob it excludes, and how it sets a Scenario. The commands' --vary
// help, their "unknown knob" lists, the "give the flag or --vary, not both"
// checks and the application of every value come from this table.
//
//   Scenario s;
//   for (const Settings& combination : all_combinations({parse_variation("nic-gbit=100,400")}))
//     for (const auto& [key, value] : combination) apply_knob(s, key, value, Sweeper::kWhatif);
//
// Adding a knob: one entry in knobs.cc (and the Scenario field and model
// code it drives).

#ifndef ZIONSIM_EXPERIMENTS_KNOBS_H_
#define ZIONSIM_EXPERIMENTS_KNOBS_H_

#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/scenario.h"

namespace zx::experiments {

/// The commands that sweep knobs with --vary.
enum class Sweeper : unsigned { kWhatif = 1, kRun = 2, kCollective = 4 };

/// "whatif", "run", "collective".
const char* sweeper_name(Sweeper sweeper);

/// Which declaration a knob's flag belongs to (Knob::declares_flag): the
/// command's own knob flags, or the model flags whatif and plan share
/// (tools/model_options.h).
enum class FlagGroup { kCommand, kModel };

struct Knob {
  /// What --vary takes; "algo.KIND" stands for algo.all_to_all and the other
  /// kinds, "SECTION.KEY" for any cluster key --set takes.
  std::string_view key;
  /// The flag that sets the knob once (--vary and it exclude each other);
  /// empty: none.
  std::string_view flag;
  /// What its values are, for help and errors: "fp32, fp16, bf16, fp8".
  std::string_view values;
  /// Two valid values, comma-separated: the help's example, and what the
  /// tests sweep every command with.
  std::string_view examples;
  std::string_view help;
  /// The Sweeper bits of the commands whose --vary takes it.
  unsigned sweepers = 0;
  /// A knob this one contradicts (either, not both); empty: none.
  std::string_view excludes;
  /// Sets `s` from `value` for `key` (the knob's, or "algo.all_to_all" for
  /// a pattern). Throws zx::InputError naming --vary and the key for a bad
  /// value.
  void (*apply)(Scenario& s, const std::string& key, const std::string& value) = nullptr;
  /// Said instead of "unknown knob" by a command whose --vary does not take
  /// it; empty: unknown there.
  std::string_view elsewhere;
  /// The flag is declared from this entry (tools/variations.h,
  /// add_knob_flags) on the commands whose --vary takes the knob, rather
  /// than by an option group other commands share (cluster, model, network).
  bool declares_flag = false;
  /// The flag takes no value and sets the knob to this ("unfused"); empty:
  /// the flag takes the value.
  std::string_view switch_value;
  /// The knob's value in `s` as --vary writes it; a declared flag shows
  /// get(Scenario{}) as its default. nullptr: none to show.
  std::string (*get)(const Scenario& s) = nullptr;
  /// Who declares the flag (with declares_flag).
  FlagGroup group = FlagGroup::kCommand;

  bool for_sweeper(Sweeper sweeper) const { return (sweepers & static_cast<unsigned>(sweeper)) != 0; }
};

/// Every knob, in the order the help lists them.
std::span<const Knob> knobs();

/// The knob `key` is (patterns included); nullptr for none.
const Knob* find_knob(std::string_view key);

/// The keys `sweeper`'s --vary takes, in table order, joined by ", ".
std::string knob_keys(Sweeper sweeper);

/// --vary's help for `sweeper`: each key with its values.
std::string knob_help(Sweeper sweeper);

/// Sets knob `key` of `s` to `value`. Throws zx::InputError naming --vary
/// and the key for a key `sweeper` does not take (the valid ones listed)
/// or a bad value.
void apply_knob(Scenario& s, const std::string& key, const std::string& value, Sweeper sweeper);

// --- --vary's syntax and product --------------------------------------------

/// One knob and the values to try.
struct Variation {
  std::string key;
  std::vector<std::string> values;
};

/// One combination: (key, value) in --vary order.
using Settings = std::vector<std::pair<std::string, std::string>>;

/// Parses "KEY=V1,V2,...": a key, at least one value, none empty, none
/// twice. Says nothing of whether the key or values mean anything. Throws
/// zx::InputError naming --vary.
Variation parse_variation(const std::string& text);

/// As parse_variation, and the key is one `sweeper` takes and every value
/// valid for it (applied to a default scenario).
Variation parse_knob_variation(const std::string& text, Sweeper sweeper);

/// Every combination of the values, the first variation outermost (its
/// values change slowest), values in the order given; no variations: one
/// empty combination. Throws zx::InputError for a key given twice.
std::vector<Settings> all_combinations(const std::vector<Variation>& variations);

/// "nic-gbit=400 a2a-precision=fp16"; "base" for no settings.
std::string settings_label(const Settings& settings);

/// A knob's value in JSON: a number when the text is one ("200", "0.5"),
/// else the text ("h200", "gpu:0=0.8").
nlohmann::ordered_json knob_value_json(const std::string& value);

/// --vary's arguments as a JSON object, {"KEY": [V1, V2], ...} in order,
/// each value as knob_value_json gives it.
nlohmann::ordered_json variations_json(const std::vector<std::string>& texts);

/// One combination as a JSON object, {"KEY": V, ...} in order (values as
/// knob_value_json gives them).
nlohmann::ordered_json settings_json(const Settings& settings);

/// What a command was given besides --vary, for check_knob_conflicts: the
/// knobs' flags on its command line ("--nic-gbit"), the collective kinds
/// --algo named, and its --set overrides.
struct GivenFlags {
  std::set<std::string> flags;
  std::set<std::string> algorithm_kinds;
  std::vector<std::string> overrides;
};

/// Refuses a varied knob whose flag was given too, two knobs that exclude
/// each other (varied, or one varied and the other's flag given),
/// algo.KIND with --algo KIND=..., and a cluster key also given with --set.
/// Throws zx::InputError naming --vary and the key.
void check_knob_conflicts(const std::vector<Variation>& varied, const GivenFlags& given);

// --- values -------------------------------------------------------------------

/// A knob's value as a number in [lo, hi], an integer in [lo, hi], or one
/// of `valid`; zx::InputError naming --vary and the key otherwise.
double knob_number(const std::string& key, const std::string& value, double lo, double hi);
std::int64_t knob_integer(const std::string& key, const std::string& value, std::int64_t lo, std::int64_t hi);
const std::string& knob_one_of(const std::string& key, const std::string& value,
                               std::span<const char* const> valid);
const std::string& knob_one_of(const std::string& key, const std::string& value,
                               std::initializer_list<const char*> valid);

/// The cluster override (--set KEY=VALUE) that a cluster knob sets:
/// nic-gbit (NIC speed, Gb/s), oversubscription (1 to 1024) or any key with
/// a dot but algo.KIND (as --set takes it; checked when the cluster loads).
/// nullopt for any other key. Throws zx::InputError for a bad nic-gbit or
/// oversubscription value.
std::optional<std::string> cluster_override(const std::string& key, const std::string& value);

/// Refuses a cluster that is neither a preset nor a .json path; names --vary
/// and `key`.
void check_cluster_name(const std::string& key, const std::string& value);

/// `value` when it is a sharding scheme (models::sharding_scheme_names()),
/// "search", or a sharding file's path (a '/' or .json); zx::InputError
/// naming --vary and `key` otherwise.
const std::string& check_sharding(const std::string& key, const std::string& value);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_KNOBS_H_
