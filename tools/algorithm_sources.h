// File: tools/algorithm_sources.h
//
// Where collective algorithms come from on the command line: the built-ins,
// plus --plugin LIB.so (a shared library exposing zionsim's C registration
// function) and --schedule FILE.json (a declarative schedule, validated
// before it runs). Every command that runs collectives, and `list`, take the
// same two flags.

#ifndef ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_
#define ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_

#include <memory>
#include <string>
#include <vector>

#include "models/collectives/registry.h"

namespace CLI {
class App;
}

namespace zx::tools {

struct AlgorithmSources {
  std::vector<std::string> plugins;
  std::vector<std::string> schedules;
};

/// Adds --plugin and --schedule to `cmd`.
std::shared_ptr<AlgorithmSources> add_algorithm_options(CLI::App& cmd);

/// The built-in algorithms plus those of the plug-ins and schedule files.
/// Throws zx::InputError for a plug-in or schedule that cannot be used.
void fill_registry(const AlgorithmSources& sources, models::collectives::CollectiveRegistry& registry);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_
