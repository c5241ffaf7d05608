// File: tools/model_options.h
//
// The flags that say what model to train and how to place it, shared by
// `whatif` and `plan`: the knob table's model group (experiments/knobs.h,
// FlagGroup::kModel: --model, --sharding, --batch-per-gpu or
// --global-batch, the HBM cache of host-memory tables, --hbm-reserve,
// --dense-optimizer, --index-dtype), declared from the table, and --gpu,
// --profile.

#ifndef ZIONSIM_TOOLS_MODEL_OPTIONS_H_
#define ZIONSIM_TOOLS_MODEL_OPTIONS_H_

#include <memory>

#include "experiments/whatif.h"
#include "tools/variations.h"

namespace CLI {
class App;
}

namespace zx::tools {

/// Adds the model flags to `cmd`. --gpu and --profile write into `options`
/// (which must outlive parsing); the table's flags are read after parsing
/// (collect_knob_flags) and applied with apply_model_flags. `with_search`:
/// --sharding also takes "search", and --search-budget is added.
std::shared_ptr<KnobFlags> add_model_options(CLI::App& cmd, experiments::WhatIfOptions& options, bool with_search);

/// Sets `o` as the model flags given say (apply_knob_flags); without
/// `with_search`, --sharding search is refused. Throws zx::InputError
/// naming the flag.
void apply_model_flags(const KnobFlags& flags, experiments::WhatIfOptions& o, bool with_search);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_MODEL_OPTIONS_H_
