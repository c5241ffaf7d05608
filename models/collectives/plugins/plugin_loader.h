// File: models/collectives/plugins/plugin_loader.h
//
// Loads a collective-algorithm plug-in (a shared library, plugin_api.h) at
// run time and adds its algorithms to a registry: the `--plugin` flag of the
// CLI. Every way a plug-in can be unusable is an input error naming the file:
//
//   plug-in ./libmine.so: no such file
//   plug-in ./libmine.so cannot be loaded: <dlerror()>
//   plug-in ./libmine.so does not export zionsim_collective_plugin_api_version(); ...
//   plug-in ./libmine.so was built for collective plug-in API version 2; this
//     zionsim supports version 1 (...)
//   plug-in ./libmine.so registers collective algorithm 'ring', which is already registered
//
// The plug-in registers into a staging registry first, so a plug-in that
// fails any check leaves the caller's registry untouched.

#ifndef ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_LOADER_H_
#define ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_LOADER_H_

#include <string>
#include <vector>

#include "models/collectives/registry.h"

namespace zx::models::collectives {

/// Loads the plug-in at `path` (a file path: a name without '/' is taken
/// relative to the working directory, never searched on the library path),
/// checks its API version, and adds its algorithms to `registry`, each
/// description followed by " [plug-in <file name>]". Returns the names added,
/// sorted. The library stays loaded for the life of the process. Throws
/// zx::InputError (see above).
std::vector<std::string> load_collective_plugin(const std::string& path,
                                                CollectiveRegistry& registry);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_LOADER_H_
