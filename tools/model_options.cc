#include "tools/model_options.h"
#include "tools/cli_checks.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/dlrm/sharding.h"

namespace zx::tools {

using experiments::parse_dense_optimizer;

std::shared_ptr<ModelFlags> add_model_options(CLI::App& cmd, experiments::WhatIfOptions& options, bool with_search) {
  auto batch = std::make_shared<ModelFlags>();
  cmd.add_option("--model", options.model, "A zoo model (zionsim list models) or a .json model file")
      ->capture_default_str();
  CLI::Option* per_gpu = cmd.add_option("--batch-per-gpu", batch->batch_per_gpu, "Samples per GPU per iteration (default 512)")
                             ->check(in_range(std::int64_t{1}, std::int64_t{1} << 24));
  cmd.add_option("--global-batch", batch->global_batch, "Samples per iteration over all GPUs (instead of --batch-per-gpu)")
      ->check(in_range(std::int64_t{1}, std::int64_t{1} << 40))
      ->excludes(per_gpu);
  cmd.add_option("--sharding", options.sharding,
                 fmt::format("Embedding sharding: a scheme (auto, table_wise, row_wise, column_wise, table_row_wise, "
                             "data_parallel){} or a sharding file (docs/sharding_files.md)",
                             with_search ? ", search (at each size, the plan search's fastest; see --search-budget)"
                                         : ""))
      ->check([with_search](const std::string& v) -> std::string {
        const auto names = models::sharding_scheme_names();
        if (v.find('/') != std::string::npos || v.ends_with(".json")) return "";
        if (std::find(names.begin(), names.end(), v) != names.end()) return "";
        if (with_search && v == "search") return "";
        return fmt::format("unknown sharding scheme '{}'; valid: {}{}, or a .json sharding file", v,
                           fmt::join(names, ", "), with_search ? ", search" : "");
      })
      ->option_text("SCHEME|FILE")
      ->capture_default_str();
  if (with_search) {
    cmd.add_option("--search-budget", options.search_budget,
                   "Most iterations --sharding search simulates per size (experiments/plan_search.h)")
        ->check(in_range(1, 100000))
        ->capture_default_str();
  }
  CLI::Option* hit_rate =
      cmd.add_option("--cache-hit-rate", options.cache_hit_rate,
                     "Host-memory tables: share of lookups their HBM cache serves, every table alike")
          ->check(in_range(0.0, 1.0))
          ->capture_default_str();
  cmd.add_option("--index-zipf-alpha", batch->index_zipf_alpha,
                 "Host-memory tables: lookups are Zipf(ALPHA) over each table's rows; each table's hit rate is an "
                 "LRU cache's (instead of --cache-hit-rate)")
      ->check(in_range(0.0, 10.0))
      ->option_text("ALPHA")
      ->excludes(hit_rate);
  cmd.add_option("--cache-fraction", options.cache_fraction,
                 "Host-memory tables: HBM given to each one's cache, as a share of its size")
      ->check(in_range(0.0001, 1.0))
      ->capture_default_str();
  cmd.add_option("--hbm-reserve", options.hbm_reserve,
                 "Share of HBM the planner keeps from embeddings, at least (more when the iteration needs it)")
      ->check(in_range(0.0, 0.95))
      ->capture_default_str();
  cmd.add_option("--dense-optimizer", batch->dense_optimizer, "The dense MLPs' optimizer: its step and its state in HBM")
      ->check(CLI::IsMember({"sgd", "adagrad", "adam"}))
      ->capture_default_str();
  cmd.add_option("--index-dtype", batch->index_dtype,
                 "Embedding indices' type (the input copy, the indices all-to-all, the kernels' reads)")
      ->check(CLI::IsMember({"int64", "int32"}))
      ->capture_default_str();
  cmd.add_option("--gpu", options.gpu, "GPU profile: a built-in (zionsim list gpus) or a .json profile file, as --profile; default: the cluster's");
  cmd.add_option("--profile", options.profile, "A GPU profile file (a calibration result)")->option_text("FILE");
  return batch;
}

void apply_model_flags(const ModelFlags& flags, experiments::WhatIfOptions& o) {
  if (flags.batch_per_gpu > 0) o.batch_per_gpu = flags.batch_per_gpu;
  if (flags.global_batch > 0) o.global_batch = flags.global_batch;
  if (flags.index_zipf_alpha >= 0) o.index_zipf_alpha = flags.index_zipf_alpha;
  o.dense_optimizer = parse_dense_optimizer(flags.dense_optimizer);
  o.index_bytes = flags.index_dtype == "int32" ? 4 : 8;
}

}  // namespace zx::tools
