#include "tools/algorithm_sources.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "experiments/stack.h"

#include "models/collectives/plugins/plugin_loader.h"
#include "models/collectives/plugins/schedule_file.h"

namespace zx::tools {

std::shared_ptr<AlgorithmSources> add_algorithm_options(CLI::App& cmd, bool with_options) {
  auto sources = std::make_shared<AlgorithmSources>();
  cmd.add_option("--plugin", sources->plugins,
                 "Load collective algorithms from a plug-in library (docs/collective_schedules.md)")
      ->option_text("LIB.so")
      ->take_all();
  cmd.add_option("--schedule", sources->schedules,
                 "Add a collective algorithm from a schedule file (docs/collective_schedules.md)")
      ->option_text("FILE.json")
      ->take_all();
  if (with_options) {
    cmd.add_option("--options", sources->options,
                   "Options of an algorithm as JSON, for every collective it runs (zionsim list collectives "
                   "names them), e.g. --options 'hierarchical={\"chunk_bytes\": 1048576}'")
        ->option_text("NAME=JSON")
        ->take_all();
  }
  return sources;
}

void fill_registry(const AlgorithmSources& sources, models::collectives::CollectiveRegistry& registry) {
  experiments::fill_registry(sources.plugins, sources.schedules, registry);
}

}  // namespace zx::tools
