// File: models/execution/testing/backend_rig.h
//
// For tests of the network backend: a preset cluster of `nodes` servers,
// its router, an idle flow network over its links and the built-in
// collective algorithms, ready for a NetworkBackend.

#ifndef ZIONSIM_MODELS_EXECUTION_TESTING_BACKEND_RIG_H_
#define ZIONSIM_MODELS_EXECUTION_TESTING_BACKEND_RIG_H_

#include <string_view>

#include "models/collectives/registry.h"
#include "models/execution/backend_algorithms.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/presets.h"
#include "topology/router.h"
#include "topology/topology.h"

namespace zx::models::testing {

struct BackendRig {
  explicit BackendRig(int nodes, std::string_view preset = "zionex",
                      NetworkFidelity fidelity = NetworkFidelity::kFlow)
      : topo(topology::build_cluster(topology::preset_spec(preset, nodes))),
        router(topo),
        network(sim, link_params(topo), fidelity) {
    collectives::register_builtin_collectives(registry);
    register_backend_algorithms(registry);
  }
  topology::Topology topo;
  topology::Router router;
  sim::Simulator sim;
  FlowNetwork network;
  collectives::CollectiveRegistry registry;
};

}  // namespace zx::models::testing

#endif  // ZIONSIM_MODELS_EXECUTION_TESTING_BACKEND_RIG_H_
