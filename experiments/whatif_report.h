// File: experiments/whatif_report.h
//
// A what-if sweep's results in the three forms `zionsim whatif --format`
// writes (docs/output_formats.md): a table for people, CSV and JSON for
// scripts. Each point of each variant, with the variants' knob settings as
// leading columns and, with several variants, the throughput against the
// first at the same size.

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_REPORT_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/whatif.h"

namespace zx::experiments {

/// The table: what was simulated (`o`, the `degraded` links and GPUs), a
/// row per point, the breakdown's legend, and notes on scaling, the tuner's
/// and NCCL's picks and the sharding search.
void write_whatif_table(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
                        const std::vector<WhatIfVariant>& variants,
                        const std::vector<std::vector<WhatIfPoint>>& points);
/// CSV, a header and a row per point; a size that does not fit has empty
/// times and its reason in the last column.
void write_whatif_csv(std::ostream& out, const std::vector<WhatIfVariant>& variants,
                      const std::vector<std::vector<WhatIfPoint>>& points);
/// JSON (schema_version 1): the settings, the varied knobs and a result per
/// point.
void write_whatif_json(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
                       const std::vector<WhatIfVariant>& variants,
                       const std::vector<std::vector<WhatIfPoint>>& points);
/// Every setting of the run that changes its results, so that the JSON says
/// what was simulated (and can be repeated); knobs that --vary changes are in
/// each result's "variant" instead.
nlohmann::ordered_json whatif_settings_json(const WhatIfOptions& o);
/// --emit-scenarios: each variant's knob settings, the scenario it simulated
/// (scenario.h) and that scenario's hash.
nlohmann::ordered_json whatif_scenarios_json(const std::vector<WhatIfVariant>& variants);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_REPORT_H_
