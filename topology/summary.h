// File: topology/summary.h
//
// A cluster at a glance, for the CLI's `zionsim topology`: device and link
// counts by kind, per-GPU scale-out injection bandwidth, backend bisection
// bandwidth, and the longest GPU-to-GPU route.

#ifndef ZIONSIM_TOPOLOGY_SUMMARY_H_
#define ZIONSIM_TOPOLOGY_SUMMARY_H_

#include <map>
#include <optional>

#include "sim/time.h"
#include "sim/units.h"
#include "topology/router.h"
#include "topology/topology.h"
#include "topology/types.h"

namespace zx::topology {

/// Backend bisection bandwidth (wire rate) of a built topology, for uniform
/// racks split into two equal halves: half the backend NIC injection I, or
/// half the rack-to-spine uplink capacity U if smaller: min(I, U) / 2. With no
/// spines (one rack switch) the switch is non-blocking: I / 2. nullopt when
/// there is no backend (no kRoce links from NICs to rack switches).
std::optional<sim::BytesPerSecond> backend_bisection_bandwidth(const Topology& topology);

struct TopologySummary {
  std::map<NodeKind, int> nodes_by_kind;
  std::map<LinkKind, int> links_by_kind;  ///< directed links
  int gpus = 0;
  /// Fabric-facing bandwidth of a GPU's scale-out NIC divided by the GPUs that
  /// share it (GPU rank 0's); nullopt with a single server and no NIC.
  std::optional<sim::BytesPerSecond> gpu_injection_bandwidth;
  std::optional<sim::BytesPerSecond> backend_bisection;
  /// The longest GPU-to-GPU route by (hops, latency), flow key 0. Exact up to
  /// 256 GPUs; beyond that from 64 evenly spaced source ranks to every rank.
  int longest_route_hops = 0;
  sim::Duration longest_route_latency = sim::Duration::zero();
  int longest_route_src_rank = 0;
  int longest_route_dst_rank = 0;
};

TopologySummary summarize(const Topology& topology, const Router& router);

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_SUMMARY_H_
