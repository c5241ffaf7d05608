// File: models/collectives/plugins/examples/incompatible_plugin.cc
//
// A deliberately incompatible plug-in for the loader's tests: it reports
// plug-in API version 2, as a plug-in built against a future zionsim would.
// The loader must refuse it before calling its registration function, which
// therefore must never run (it would register a name the test looks for).

#include "models/collectives/plugins/plugin_api.h"

extern "C" int zionsim_collective_plugin_api_version(void) {
  return ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION + 1;
}

extern "C" void zionsim_register_collectives(
    zx::models::collectives::CollectiveRegistry* registry) {
  registry->add("from_the_future", "must never be registered", nullptr);
}
