// File: tools/variations.h
//
// --vary KEY=V1,V2,...: sweeping knobs besides the one a command sweeps
// anyway (cluster sizes for whatif, message sizes for collective). The
// syntax, the product of the values, and the knobs every such command shares
// (the cluster's); each command applies the rest to its own options.

#ifndef ZIONSIM_TOOLS_VARIATIONS_H_
#define ZIONSIM_TOOLS_VARIATIONS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/cluster_file.h"

namespace zx::tools {

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

/// Every combination of the values, the first variation outermost (its
/// values change slowest), values in the order given; no variations: one
/// empty combination. Throws zx::InputError for a key given twice.
std::vector<Settings> all_combinations(const std::vector<Variation>& variations);

/// "nic-gbit=400 a2a-precision=fp16"; "base" for no settings.
std::string settings_label(const Settings& settings);

/// The cluster override (--set KEY=VALUE) that a cluster knob sets:
/// nic-gbit (NIC speed, Gb/s), oversubscription (1 to 1024) or any key with
/// a dot (as --set takes it; checked when the cluster loads). nullopt for
/// any other key. Throws zx::InputError for a bad nic-gbit or
/// oversubscription value.
std::optional<std::string> cluster_override(const std::string& key, const std::string& value);

/// --vary degrade=...: a value is "none" or SELECTOR=SPEED parts joined by
/// '+' (gpu:0=0.8+device:node0/nic0=0.5), each added to
/// request.degradations on top of --degrade; the syntax is checked now, the
/// names when the cluster loads (topology/degrade.h). False for any other
/// key. Throws zx::InputError naming --vary for a bad value.
bool apply_degrade_knob(const std::string& key, const std::string& value, topology::ClusterRequest& request);

/// Throws zx::InputError when the key `override` sets is also set by one of
/// `existing` (--set, or a flag that stands for one).
void check_set_once(const std::string& vary_key, const std::string& override,
                    const std::vector<std::string>& existing);

/// A knob's value as a number in [lo, hi], an integer in [lo, hi], or one
/// of `valid`; zx::InputError naming --vary and the key otherwise.
double variation_number(const std::string& key, const std::string& value, double lo, double hi);
std::int64_t variation_integer(const std::string& key, const std::string& value, std::int64_t lo, std::int64_t hi);
const std::string& variation_one_of(const std::string& key, const std::string& value,
                                    std::span<const char* const> valid);
const std::string& variation_one_of(const std::string& key, const std::string& value,
                                    std::initializer_list<const char*> valid);

/// A knob's value in JSON: a number when the text is one ("200", "0.5"),
/// else the text ("h200", "gpu:0=0.8").
nlohmann::ordered_json knob_value_json(const std::string& value);

/// --vary's arguments as a JSON object, {"KEY": [V1, V2], ...} in order,
/// each value as knob_value_json gives it.
nlohmann::ordered_json variations_json(const std::vector<std::string>& texts);

/// One combination as a JSON object, {"KEY": V, ...} in order (values as
/// knob_value_json gives them).
nlohmann::ordered_json settings_json(const Settings& settings);

/// A CSV field in quotes, quotes inside doubled (RFC 4180).
std::string csv_quoted(const std::string& text);

/// A CSV field as RFC 4180 wants it: as it is, or quoted (csv_quoted) when
/// it holds a comma, a quote or a line break (names from users' files).
std::string csv_field(const std::string& text);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_VARIATIONS_H_
