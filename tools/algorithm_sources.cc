#include "tools/algorithm_sources.h"

#include <CLI/CLI.hpp>

#include "models/collectives/plugins/plugin_loader.h"
#include "models/collectives/plugins/schedule_file.h"

namespace zx::tools {

std::shared_ptr<AlgorithmSources> add_algorithm_options(CLI::App& cmd) {
  auto sources = std::make_shared<AlgorithmSources>();
  cmd.add_option("--plugin", sources->plugins,
                 "Load collective algorithms from a plug-in library (docs/collective_schedules.md)")
      ->option_text("LIB.so")
      ->take_all();
  cmd.add_option("--schedule", sources->schedules,
                 "Add a collective algorithm from a schedule file (docs/collective_schedules.md)")
      ->option_text("FILE.json")
      ->take_all();
  return sources;
}

void fill_registry(const AlgorithmSources& sources, models::collectives::CollectiveRegistry& registry) {
  models::collectives::register_builtin_collectives(registry);
  for (const std::string& path : sources.plugins) models::collectives::load_collective_plugin(path, registry);
  for (const std::string& path : sources.schedules) models::collectives::register_schedule_file(path, registry);
}

}  // namespace zx::tools
