// File: models/collectives/plugins/examples/clashing_plugin.cc
//
// A plug-in for the loader's tests that registers a name zionsim already
// has ("ring") next to a fresh one: the loader must refuse the whole plug-in
// with an input error and leave the registry as it was.

#include <memory>

#include "models/collectives/plugins/plugin_api.h"
#include "models/collectives/ring.h"

extern "C" int zionsim_collective_plugin_api_version(void) {
  return ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION;
}

extern "C" void zionsim_register_collectives(
    zx::models::collectives::CollectiveRegistry* registry) {
  using zx::models::collectives::RingAlgorithm;
  const auto factory = [](zx::json::ObjectReader&) { return std::make_unique<RingAlgorithm>(); };
  registry->add("another_ring", "a fresh name", factory);
  registry->add("ring", "a name zionsim already has", factory);
}
