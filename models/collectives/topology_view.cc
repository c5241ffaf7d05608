// File: models/collectives/topology_view.cc
//
// TopologyView from topology::Topology (see topology_view.h).

#include "models/collectives/topology_view.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"

namespace zx::models::collectives {
namespace {

// Whether `gpu` is on an NVLink switch and reaches a backend NIC through
// PCIe switches alone (see MemberLocation::rail_nic). The PCIe tree of a
// server is a handful of nodes.
bool on_nvlink_switch(const topology::Topology& t, topology::NodeId gpu) {
  for (topology::LinkId l : t.out_links(gpu)) {
    if (t.node(t.link(l).dst).kind == topology::NodeKind::kNvSwitch) return true;
  }
  return false;
}

bool has_rail_nic(const topology::Topology& t, topology::NodeId gpu) {
  if (!on_nvlink_switch(t, gpu)) return false;
  std::vector<topology::NodeId> frontier{gpu};
  std::vector<topology::NodeId> seen{gpu};
  while (!frontier.empty()) {
    const topology::NodeId v = frontier.back();
    frontier.pop_back();
    for (topology::LinkId l : t.out_links(v)) {
      const topology::LinkInfo& link = t.link(l);
      if (link.kind == topology::LinkKind::kNvlink || link.kind == topology::LinkKind::kNvlinkC2c ||
          std::find(seen.begin(), seen.end(), link.dst) != seen.end()) {
        continue;
      }
      const topology::NodeInfo& next = t.node(link.dst);
      if (next.kind == topology::NodeKind::kNic) {
        for (topology::LinkId out : t.out_links(link.dst)) {
          if (t.link(out).kind == topology::LinkKind::kRoce) return true;
        }
      }
      seen.push_back(link.dst);
      if (next.kind == topology::NodeKind::kPcieSwitch && seen.size() < 64) frontier.push_back(link.dst);
    }
  }
  return false;
}

}  // namespace

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
    members.push_back({.server = node.server,
                       .local_index = node.local_index,
                       .rail_nic = has_rail_nic(topology, topology.gpu(rank)),
                       .nvlink_switch = on_nvlink_switch(topology, topology.gpu(rank))});
  }
  if (!problems.empty()) throw InputError(std::move(problems));
  return TopologyView(std::move(members));
}

}  // namespace zx::models::collectives
