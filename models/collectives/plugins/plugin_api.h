// File: models/collectives/plugins/plugin_api.h
//
// The ABI of collective-algorithm plug-ins: shared libraries that zionsim
// loads at run time (`zionsim ... --plugin ./libmine.so`, see
// plugin_loader.h), so a researcher adds an algorithm without rebuilding
// zionsim. A plug-in is a .so that exports exactly these two functions:
//
//   extern "C" int zionsim_collective_plugin_api_version(void) {
//     return ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION;  // the value it was built with
//   }
//   extern "C" void zionsim_register_collectives(
//       zx::models::collectives::CollectiveRegistry* registry) {
//     registry->add("my_algorithm", "one line for `zionsim list`", factory);
//   }
//
// The loader calls the version function first and refuses a plug-in built
// for another version; only then does it call the registration function.
//
// Why a C symbol that takes a C++ registry: the symbols are extern "C" so
// that dlsym finds them by a fixed, unmangled name whatever the compiler's
// mangling; but what crosses the boundary is C++ (CollectiveRegistry,
// std::function factories, json::ObjectReader, CollectiveRequest,
// CollectivePlan, exceptions). Wrapping all of that in a C API would double
// the vocabulary for little gain: a plug-in must instead be built with the
// same compiler and standard library as zionsim and from the same zionsim
// headers. ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION names that set of headers;
// it goes up whenever a type that crosses the boundary changes (plan.h,
// collective_algorithm.h, registry.h, base/json_reader.h, base/error.h), and
// the loader refuses a mismatch with a clear error instead of crashing.
//
// Building: plugins.bzl's zionsim_collective_plugin() makes a cc_binary with
// linkshared = True whose deps (the collectives libraries the plug-in uses)
// are linked into the .so, and a linker script that exports only the two
// functions above. So the plug-in carries its own copy of, say,
// CollectiveRegistry::add and check_lowerable, and needs nothing exported by
// the zionsim executable (which exports nothing: it is linked statically
// without -rdynamic). Its copies are the same source at the same API version
// as zionsim's, so objects built by one side are used safely by the other.
//
// Rules for plug-in code: throw zx::InputError for bad requests and options,
// as built-in algorithms do; keep no state that outlives a call (plans are
// pure functions of the request and the view). zionsim never unloads a
// plug-in, since the registry keeps its factories.

#ifndef ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_API_H_
#define ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_API_H_

#include "models/collectives/registry.h"

/// The plug-in API version of these headers.
#define ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION 1

/// The names the loader looks up with dlsym.
#define ZIONSIM_COLLECTIVE_PLUGIN_VERSION_SYMBOL "zionsim_collective_plugin_api_version"
#define ZIONSIM_COLLECTIVE_PLUGIN_REGISTER_SYMBOL "zionsim_register_collectives"

extern "C" {

/// Returns the ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION the plug-in was built with.
int zionsim_collective_plugin_api_version(void);

/// Adds the plug-in's algorithms to `registry` (never null). Names must not be
/// taken already; the loader reports a clash as an input error.
void zionsim_register_collectives(zx::models::collectives::CollectiveRegistry* registry);

}  // extern "C"

namespace zx::models::collectives {

/// The function types of the two symbols, for the loader.
using PluginApiVersionFn = int (*)();
using PluginRegisterFn = void (*)(CollectiveRegistry*);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_PLUGINS_PLUGIN_API_H_
