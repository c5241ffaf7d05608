#include "models/network/topology_links.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace zx::models {

std::vector<LinkParams> link_params(const topology::Topology &topology) {
  std::vector<LinkParams> params;
  params.reserve(topology.num_links());
  for (std::uint32_t l = 0; l < topology.num_links(); ++l) {
    const topology::LinkInfo &link = topology.link(topology::LinkId{l});
    params.push_back({static_cast<double>(link.effective_bandwidth().count()), link.latency});
  }
  return params;
}

void to_link_indices(const topology::Route &route, std::vector<std::uint32_t> &out) {
  out.clear();
  for (topology::LinkId id : route) out.push_back(topology::index(id));
}

std::uint64_t gpu_pair_flow_key(int src_rank, int dst_rank) {
  std::uint64_t z = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_rank)) << 32) |
                    static_cast<std::uint32_t>(dst_rank);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void route_gpus(const topology::Router &router, int src_rank, int dst_rank, std::uint64_t flow_key,
                RouteScratch &scratch) {
  const topology::Topology &t = router.topology();
  if (src_rank < 0 || src_rank >= t.num_gpus() || dst_rank < 0 || dst_rank >= t.num_gpus()) {
    throw std::invalid_argument(fmt::format("start_gpu_flow: rank {} -> {} out of range ({} GPUs)",
                                            src_rank, dst_rank, t.num_gpus()));
  }
  if (!router.route_into(t.gpu(src_rank), t.gpu(dst_rank), flow_key, scratch.route)) {
    throw std::invalid_argument(
        fmt::format("start_gpu_flow: GPU {} cannot reach GPU {}", src_rank, dst_rank));
  }
  to_link_indices(scratch.route, scratch.links);
}

void route_relayed_gpus(const topology::Router &router, int src_rank, int relay_rank, int dst_rank,
                        std::uint64_t flow_key, RouteScratch &scratch) {
  const topology::Topology &t = router.topology();
  for (int rank : {src_rank, relay_rank, dst_rank}) {
    if (rank < 0 || rank >= t.num_gpus()) {
      throw std::invalid_argument(fmt::format("start_relayed_gpu_flow: rank {} out of range ({} GPUs)", rank,
                                              t.num_gpus()));
    }
  }
  if (!router.route_into(t.gpu(src_rank), t.gpu(relay_rank), flow_key, scratch.route)) {
    throw std::invalid_argument(fmt::format("start_relayed_gpu_flow: GPU {} cannot reach GPU {}", src_rank, relay_rank));
  }
  to_link_indices(scratch.route, scratch.links);
  if (!router.route_into(t.gpu(relay_rank), t.gpu(dst_rank), flow_key, scratch.route)) {
    throw std::invalid_argument(fmt::format("start_relayed_gpu_flow: GPU {} cannot reach GPU {}", relay_rank, dst_rank));
  }
  for (topology::LinkId id : scratch.route) scratch.links.push_back(topology::index(id));
}

void route_nodes(const topology::Router &router, topology::NodeId src, topology::NodeId dst, std::uint64_t flow_key,
                 RouteScratch &scratch) {
  const topology::Topology &t = router.topology();
  if (!router.route_into(src, dst, flow_key, scratch.route)) {
    throw std::invalid_argument(
        fmt::format("start_node_flow: {} cannot reach {}", t.node(src).name, t.node(dst).name));
  }
  to_link_indices(scratch.route, scratch.links);
}

FlowId start_gpu_flow(FlowNetwork &network, const topology::Router &router, int src_rank,
                      int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                      sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options) {
  route_gpus(router, src_rank, dst_rank, flow_key, scratch);
  return network.start_flow(scratch.links, size, std::move(on_done), options);
}

FlowId start_relayed_gpu_flow(FlowNetwork &network, const topology::Router &router, int src_rank,
                              int relay_rank, int dst_rank, sim::Bytes size, std::uint64_t flow_key,
                              sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options) {
  route_relayed_gpus(router, src_rank, relay_rank, dst_rank, flow_key, scratch);
  return network.start_flow(scratch.links, size, std::move(on_done), options);
}

FlowId start_node_flow(FlowNetwork &network, const topology::Router &router, topology::NodeId src,
                       topology::NodeId dst, sim::Bytes size, std::uint64_t flow_key,
                       sim::EventCallback on_done, RouteScratch &scratch, FlowOptions options) {
  route_nodes(router, src, dst, flow_key, scratch);
  return network.start_flow(scratch.links, size, std::move(on_done), options);
}

}  // namespace zx::models
