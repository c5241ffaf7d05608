// File: tools/algorithm_sources.h
//
// Where collective algorithms come from on the command line: the built-ins,
// plus --plugin LIB.so (a shared library exposing zionsim's C registration
// function) and --schedule FILE.json (a declarative schedule, validated
// before it runs). Every command that runs collectives, and `list`, take the
// same two flags; the commands that run collectives also take --options
// NAME=JSON, an algorithm's options (its registry entry says which: `zionsim
// list collectives`) for every collective it runs.

#ifndef ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_
#define ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "experiments/stack.h"
#include "models/collectives/registry.h"

namespace CLI {
class App;
}

namespace zx::tools {

struct AlgorithmSources {
  std::vector<std::string> plugins;
  std::vector<std::string> schedules;
  std::vector<std::string> options;  ///< --options NAME=JSON, as given
};

/// Adds --plugin and --schedule to `cmd`, and --options unless
/// `with_options` is false (`list`, which runs nothing).
std::shared_ptr<AlgorithmSources> add_algorithm_options(CLI::App& cmd, bool with_options = true);

/// The built-in algorithms plus those of the plug-ins and schedule files.
/// Throws zx::InputError for a plug-in or schedule that cannot be used.
void fill_registry(const AlgorithmSources& sources, models::collectives::CollectiveRegistry& registry);

// --options' parsing and checks are experiments/stack.h's.
using experiments::check_algorithm_options;
using experiments::check_algorithm_options_used;
using experiments::parse_algorithm_options;

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_ALGORITHM_SOURCES_H_
