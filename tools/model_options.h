// File: tools/model_options.h
//
// The flags that say what model to train and how to place it, shared by
// `whatif` and `plan`: --model, --batch-per-gpu or --global-batch, --sharding,
// --gpu, --profile.

#ifndef ZIONSIM_TOOLS_MODEL_OPTIONS_H_
#define ZIONSIM_TOOLS_MODEL_OPTIONS_H_

#include <cstdint>
#include <memory>

#include "tools/whatif.h"

namespace CLI {
class App;
}

namespace zx::tools {

/// The batch flags as given (0: not given).
struct BatchFlags {
  std::int64_t batch_per_gpu = 0;
  std::int64_t global_batch = 0;
};

/// Adds the model flags to `cmd`; --model, --sharding, --gpu and --profile
/// write into `options` (which must outlive parsing), the batch flags into
/// the returned BatchFlags (apply them with apply_batch_flags). The two batch
/// flags exclude each other. `with_search`: --sharding also takes "search",
/// and --search-budget is added.
std::shared_ptr<BatchFlags> add_model_options(CLI::App& cmd, WhatIfOptions& options, bool with_search);

/// Sets o.batch_per_gpu / o.global_batch from the flags given.
void apply_batch_flags(const BatchFlags& flags, WhatIfOptions& o);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_MODEL_OPTIONS_H_
