// File: experiments/report_format.h
//
// Pieces the reports of several commands share, in their text, CSV and JSON
// forms: knob settings as JSON, CSV quoting (RFC 4180), and the tuner's and
// NCCL's cost model's per-call choices (docs/output_formats.md,
// "auto_choices").

#ifndef ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_
#define ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "models/execution/network_backend.h"

namespace zx::experiments {

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

/// A choice's candidates as JSON: `algorithm` and `time_us` or `refused`.
nlohmann::ordered_json candidates_json(const std::vector<models::AutoChoice::Candidate>& candidates);
/// The tuner's choices as JSON (docs/output_formats.md, "auto_choices"): a
/// row per distinct call, its candidates' times (time_us) or refusals.
nlohmann::ordered_json auto_choices_json(const std::vector<models::AutoChoice>& choices);
/// One line of them: per kind, each algorithm run with its number of
/// distinct calls and their sizes ("all_reduce: nvls x3 (1 MiB to 25 MiB),
/// hierarchical x1 (96 MiB)"). Empty without choices.
std::string auto_choices_summary(const std::vector<models::AutoChoice>& choices);
/// The heading of the same summary for NCCL's cost model's picks
/// (NetworkBackend::nccl_choices()).
inline constexpr std::string_view kNcclChoicesTitle =
    "nccl picked (per distinct call, algorithm/protocol by NCCL's cost model; --format json has each one's time)";

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_
