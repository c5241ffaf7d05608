// File: models/collectives/topology_view.h
//
// Builds the collectives' TopologyView from a cluster graph: for each group
// member (a global GPU rank), the server it sits on and its index there.

#ifndef ZIONSIM_MODELS_COLLECTIVES_TOPOLOGY_VIEW_H_
#define ZIONSIM_MODELS_COLLECTIVES_TOPOLOGY_VIEW_H_

#include <vector>

#include "models/collectives/collective_algorithm.h"
#include "topology/topology.h"

namespace zx::models::collectives {

/// Throws zx::InputError for a rank outside [0, topology.num_gpus()).
TopologyView make_topology_view(const topology::Topology& topology, const std::vector<int>& ranks);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_TOPOLOGY_VIEW_H_
