// File: topology/summary.cc
//
// Counts and closed-form-checkable figures of a built cluster.

#include "topology/summary.h"

#include <algorithm>

namespace zx::topology {

std::optional<sim::BytesPerSecond> backend_bisection_bandwidth(const Topology& t) {
  std::int64_t injection = 0;
  std::int64_t uplinks = 0;
  for (std::uint32_t i = 0; i < t.num_links(); ++i) {
    const LinkInfo& l = t.link(LinkId{i});
    if (l.kind != LinkKind::kRoce) continue;
    const NodeInfo& src = t.node(l.src);
    const NodeInfo& dst = t.node(l.dst);
    if (src.kind == NodeKind::kNic && dst.tier == SwitchTier::kRack)
      injection += l.bandwidth.count();
    if (src.tier == SwitchTier::kRack && dst.tier == SwitchTier::kSpine)
      uplinks += l.bandwidth.count();
  }
  if (injection == 0) return std::nullopt;
  const std::int64_t cut = uplinks == 0 ? injection : std::min(injection, uplinks);
  return sim::BytesPerSecond(std::max<std::int64_t>(1, cut / 2));
}

TopologySummary summarize(const Topology& t, const Router& router) {
  TopologySummary s;
  for (std::uint32_t i = 0; i < t.num_nodes(); ++i) ++s.nodes_by_kind[t.node(NodeId{i}).kind];
  for (std::uint32_t i = 0; i < t.num_links(); ++i) ++s.links_by_kind[t.link(LinkId{i}).kind];
  s.gpus = t.num_gpus();
  s.backend_bisection = backend_bisection_bandwidth(t);

  if (s.gpus > 0) {
    if (const auto nic = router.scale_out_nic(t.gpu(0))) {
      int sharing = 0;
      for (int r = 0; r < s.gpus; ++r) sharing += router.scale_out_nic(t.gpu(r)) == nic ? 1 : 0;
      for (LinkId l : t.out_links(*nic)) {
        const LinkInfo& li = t.link(l);
        if (li.kind == LinkKind::kRoce || li.kind == LinkKind::kTcpFrontEnd) {
          s.gpu_injection_bandwidth = sim::BytesPerSecond(
              std::max<std::int64_t>(1, li.bandwidth.count() / std::max(1, sharing)));
          break;
        }
      }
    }
  }

  const int step = s.gpus <= 256 ? 1 : std::max(1, s.gpus / 64);
  Route r;
  for (int a = 0; a < s.gpus; a += step) {
    for (int b = 0; b < s.gpus; ++b) {
      if (a == b || !router.route_into(t.gpu(a), t.gpu(b), /*flow_key=*/0, r)) continue;
      sim::Duration latency = sim::Duration::zero();
      for (LinkId l : r) latency += t.link(l).latency;
      const int hops = static_cast<int>(r.size());
      if (hops > s.longest_route_hops ||
          (hops == s.longest_route_hops && latency > s.longest_route_latency)) {
        s.longest_route_hops = hops;
        s.longest_route_latency = latency;
        s.longest_route_src_rank = a;
        s.longest_route_dst_rank = b;
      }
    }
  }
  return s;
}

}  // namespace zx::topology
