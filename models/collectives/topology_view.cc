// File: models/collectives/topology_view.cc
//
// TopologyView from topology::Topology (see topology_view.h).

#include "models/collectives/topology_view.h"

#include <fmt/format.h>

#include "base/error.h"

namespace zx::models::collectives {

TopologyView make_topology_view(const topology::Topology& topology, const std::vector<int>& ranks) {
  std::vector<MemberLocation> members;
  std::vector<Diagnostic> problems;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int rank = ranks[i];
    if (rank < 0 || rank >= topology.num_gpus()) {
      problems.push_back({.source = "collective group",
                          .location = fmt::format("ranks/{}", i),
                          .message = fmt::format("expected a GPU rank in [0, {}], got {}",
                                                 topology.num_gpus() - 1, rank)});
      continue;
    }
    const topology::NodeInfo& node = topology.node(topology.gpu(rank));
    members.push_back({.server = node.server, .local_index = node.local_index});
  }
  if (!problems.empty()) throw InputError(std::move(problems));
  return TopologyView(std::move(members));
}

}  // namespace zx::models::collectives
