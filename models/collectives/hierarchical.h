// File: models/collectives/hierarchical.h
//
// Two-level collectives for servers with a fast NVSwitch domain and a
// per-GPU RDMA NIC (ZionEX: 8 GPUs, 8 x 200 Gb/s RoCE per server). The group
// is seen as G servers of L members each (members_by_server(); every server
// must hold the same number of members). Member (g, l) is the l-th member of
// server g; the members (., l) of all servers form "rail" l.
//
//   all-reduce      ring reduce-scatter inside each server (L-1 steps), ring
//                   all-reduce along each rail on the 1/L piece it owns
//                   (2(G-1) steps), ring all-gather inside each server (L-1
//                   steps): each rank sends 2(L-1)/L x S + 2(G-1)/(G L) x S,
//                   and only 2(G-1)/(G L) x S crosses the fabric (NCCL's
//                   intra-node/inter-node split; Horovod's hierarchical
//                   all-reduce; Thakur et al. 2005 for the ring phases).
//   reduce-scatter  intra-server ring reduce-scatter of the rail super-blocks,
//                   then a ring reduce-scatter along each rail.
//   all-gather      ring all-gather along each rail, then an intra-server ring
//                   all-gather of the rail super-blocks.
//   all-to-all(-v)  aggregate inside the server over NVLink by destination
//                   rail, then cross the fabric once per rail pair (g, l) ->
//                   (g', l). Data is aggregated by the rail of its final
//                   destination, so the fabric step delivers it directly and
//                   the "distribute" phase is empty (NCCL's PXN, "PCI x
//                   NVLink", 2.12). Two steps.

#ifndef ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_
#define ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::models::collectives {

class HierarchicalAlgorithm : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "hierarchical"; }
  bool supports(CollectiveKind kind) const override;
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_
