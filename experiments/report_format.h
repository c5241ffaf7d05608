// File: experiments/report_format.h
//
// What the reports of several commands say of the tuner's and NCCL's cost
// model's per-call choices, as JSON and as one line (docs/output_formats.md,
// "auto_choices"), and the leading columns of a report with a row per
// variant. Knob values as JSON are knobs.h's, CSV fields result_schema.h's,
// a choice's candidates whatif_codec.h's.

#ifndef ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_
#define ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "experiments/result_schema.h"
#include "experiments/whatif_codec.h"
#include "models/execution/network_backend.h"

namespace zx::experiments {

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

/// The leading columns of a report whose rows are variants, one per knob of
/// `settings` (each row's variant's knob settings; every variant sets the
/// same knobs): its key heads the column in the table and the CSV, its
/// values always quoted in the CSV (csv_quoted); the table's width fits the
/// key and every value. Table and CSV only: the JSON has each row's settings
/// as one object (settings_json).
std::vector<Column> knob_columns(const std::vector<Settings>& settings);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_REPORT_FORMAT_H_
