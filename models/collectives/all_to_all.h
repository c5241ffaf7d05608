// File: models/collectives/all_to_all.h
//
// Flat all-to-all and all-to-all-v (the latter when the request carries an
// n x n byte matrix). Chunk s * n + d is the data rank s sends rank d.
//
//   direct    every pair at once, one step of n(n-1) transfers: what
//             NCCL's grouped ncclSend/ncclRecv all-to-all does; each rank
//             sends (n-1)/n x S.
//   pairwise  n-1 rounds; in round k rank i sends to i XOR k when n is a
//             power of two, else to (i + k) mod n (pairwise exchange, Thakur,
//             Rabenseifner and Gropp 2005, section 3; MPICH's
//             alltoall_intra_pairwise). Each round follows the previous one.

#ifndef ZIONSIM_MODELS_COLLECTIVES_ALL_TO_ALL_H_
#define ZIONSIM_MODELS_COLLECTIVES_ALL_TO_ALL_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::models::collectives {

class DirectAllToAllAlgorithm : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "direct"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllToAll; }
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;
};

class PairwiseAllToAllAlgorithm : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "pairwise"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllToAll; }
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_ALL_TO_ALL_H_
