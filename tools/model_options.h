// File: tools/model_options.h
//
// The flags that say what model to train and how to place it, shared by
// `whatif` and `plan`: --model, --batch-per-gpu or --global-batch, --sharding,
// --gpu, --profile, and the HBM cache of host-memory tables (--cache-hit-rate
// or --index-zipf-alpha, --cache-fraction).

#ifndef ZIONSIM_TOOLS_MODEL_OPTIONS_H_
#define ZIONSIM_TOOLS_MODEL_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "experiments/whatif.h"

namespace CLI {
class App;
}

namespace zx::tools {

/// The flags that WhatIfOptions holds as optionals, as given (0 or < 0:
/// not given).
struct ModelFlags {
  std::int64_t batch_per_gpu = 0;
  std::int64_t global_batch = 0;
  double index_zipf_alpha = -1;
  std::string dense_optimizer = "adagrad";
  std::string index_dtype = "int64";
};

/// Adds the model flags to `cmd`; --model, --sharding, --gpu, --profile,
/// --cache-hit-rate and --cache-fraction write into `options` (which must
/// outlive parsing), the batch flags and --index-zipf-alpha into the returned
/// ModelFlags (apply them with apply_model_flags). The two batch flags
/// exclude each other, as do --cache-hit-rate and --index-zipf-alpha. `with_search`: --sharding also takes "search",
/// and --search-budget is added.
std::shared_ptr<ModelFlags> add_model_options(CLI::App& cmd, experiments::WhatIfOptions& options, bool with_search);

/// Sets o.batch_per_gpu / o.global_batch / o.index_zipf_alpha from the flags given.
void apply_model_flags(const ModelFlags& flags, experiments::WhatIfOptions& o);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_MODEL_OPTIONS_H_
