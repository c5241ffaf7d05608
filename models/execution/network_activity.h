// File: models/execution/network_activity.h
//
// Gathers the network side of a finished run for the timeline
// (models/execution/timeline.h): every flow the NetworkBackend tagged
// (record_flows(true) before the run) becomes a TransferSlice with its
// times from the FlowNetwork, the NICs it left and arrived through, and the
// ops that sent and received it; the busiest links' utilisation history
// (record_link_history(true) before the run) becomes counter tracks.
//
// A NIC is a transfer's "tx" NIC when the transfer leaves it towards the
// network (a link from the NIC to an Ethernet switch or another NIC), its
// "rx" NIC when it enters it from the network. NICs are listed in node order,
// and only those that carried a transfer of a shown rank.

#ifndef ZIONSIM_MODELS_EXECUTION_NETWORK_ACTIVITY_H_
#define ZIONSIM_MODELS_EXECUTION_NETWORK_ACTIVITY_H_

#include <cstddef>

#include "models/execution/network_backend.h"
#include "models/execution/op_graph.h"
#include "models/execution/timeline.h"
#include "models/network/flow_network.h"
#include "topology/topology.h"

namespace zx::models {

struct NetworkActivityOptions {
  int max_ranks = 0;               ///< transfers touching ranks below this; 0: all
  std::size_t counter_links = 16;  ///< busiest links shown as counters
};

NetworkActivity collect_network_activity(const OpGraph& graph, const NetworkBackend& backend,
                                         const FlowNetwork& network, const topology::Topology& topology,
                                         const NetworkActivityOptions& options = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_NETWORK_ACTIVITY_H_
