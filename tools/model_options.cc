#include "tools/model_options.h"

#include <CLI/CLI.hpp>

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "models/dlrm/sharding.h"
#include "tools/cli_checks.h"

namespace zx::tools {

std::shared_ptr<KnobFlags> add_model_options(CLI::App& cmd, experiments::WhatIfOptions& options, bool with_search) {
  std::shared_ptr<KnobFlags> flags = add_knob_flags(cmd, experiments::Sweeper::kWhatif, experiments::FlagGroup::kModel);
  if (with_search) {
    cmd.add_option("--search-budget", options.search_budget,
                   "Most iterations --sharding search simulates per size (experiments/plan_search.h)")
        ->check(in_range(1, 100000))
        ->capture_default_str();
  }
  cmd.add_option("--gpu", options.gpu, "GPU profile: a built-in (zionsim list gpus) or a .json profile file, as --profile; default: the cluster's");
  cmd.add_option("--profile", options.profile, "A GPU profile file (a calibration result)")->option_text("FILE");
  return flags;
}

void apply_model_flags(const KnobFlags& flags, experiments::WhatIfOptions& o, bool with_search) {
  apply_knob_flags(flags, o);
  if (!with_search && o.sharding == "search") {
    throw InputError(Diagnostic{"--sharding", "",
                                fmt::format("unknown sharding scheme 'search' (plan shows one plan: add --search "
                                            "instead); valid: {}, or a .json sharding file",
                                            fmt::join(models::sharding_scheme_names(), ", "))});
  }
}

}  // namespace zx::tools
