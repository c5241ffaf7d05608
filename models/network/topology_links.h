// File: models/network/topology_links.h
//
// The bridge from a cluster graph (topology/) to the network model: the
// LinkParams of every directed link, routes as the model's link indices, and
// a helper that routes and starts a flow between two GPU ranks.
//
// A topology link and the model's link share their index: link i of the
// FlowNetwork built from link_params(t) is t.link(LinkId{i}). Capacity is the
// link's effective bandwidth (vendor data rate x protocol efficiency, see
// topology/types.h); calibrated deratings, when they come, belong here and not
// in the topology.

#ifndef ZIONSIM_MODELS_NETWORK_TOPOLOGY_LINKS_H_
#define ZIONSIM_MODELS_NETWORK_TOPOLOGY_LINKS_H_

#include <cstdint>
#include <vector>

#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "sim/units.h"
#include "topology/router.h"
#include "topology/topology.h"

namespace zx::models {

/// One LinkParams per topology link, in link-id order: capacity is the
/// effective bandwidth in B/s, latency the link's latency.
std::vector<LinkParams> link_params(const topology::Topology &topology);

/// Writes the route's link ids as model link indices into `out` (cleared
/// first).
void to_link_indices(const topology::Route &route, std::vector<std::uint32_t> &out);

/// A deterministic ECMP key for the flow from GPU `src_rank` to `dst_rank`: a
/// 64-bit mix (SplitMix64's finaliser) of the pair, so that the pairs of an
/// all-to-all spread over all equal-cost paths.
std::uint64_t gpu_pair_flow_key(int src_rank, int dst_rank);

/// Scratch storage for start_gpu_flow, reused between calls so that starting
/// a million flows does not allocate a million routes.
struct RouteScratch {
  topology::Route route;
  std::vector<std::uint32_t> links;
};

/// The route GPU `src_rank` -> `dst_rank` for `flow_key`, as link indices in
/// scratch.links; throws as start_gpu_flow.
void route_gpus(const topology::Router &router, int src_rank, int dst_rank, std::uint64_t flow_key,
                RouteScratch &scratch);
/// The route src -> relay -> dst of start_relayed_gpu_flow into scratch.links.
void route_relayed_gpus(const topology::Router &router, int src_rank, int relay_rank, int dst_rank,
                        std::uint64_t flow_key, RouteScratch &scratch);
/// The route between two nodes of start_node_flow into scratch.links.
void route_nodes(const topology::Router &router, topology::NodeId src, topology::NodeId dst, std::uint64_t flow_key,
                 RouteScratch &scratch);

/// Routes GPU `src_rank` to GPU `dst_rank` with `flow_key` and starts a flow
/// of `size` on `network`, which must have been built from
/// link_params(router.topology()). src == dst is a local copy (empty route).
/// Throws std::invalid_argument for a rank out of range or an unreachable
/// destination.
FlowId start_gpu_flow(FlowNetwork &network, const topology::Router &router, int src_rank,
                      int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                      sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options = {});

/// As start_gpu_flow, over the route from src to relay followed by the route
/// from relay to dst (NCCL's PXN: a send crosses NVLink to a server-mate,
/// whose NIC carries it). Throws std::invalid_argument as start_gpu_flow,
/// and when the two routes share a link.
FlowId start_relayed_gpu_flow(FlowNetwork &network, const topology::Router &router, int src_rank,
                              int relay_rank, int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                              sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options = {});

/// As start_gpu_flow, between any two nodes of the topology (a GPU and its
/// NVLink switch, say). Throws std::invalid_argument for an unreachable
/// destination.
FlowId start_node_flow(FlowNetwork &network, const topology::Router &router, topology::NodeId src,
                       topology::NodeId dst, sim::Bytes size, std::uint64_t flow_key,
                       sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_NETWORK_TOPOLOGY_LINKS_H_
