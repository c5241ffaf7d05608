// File: models/collectives/halving_doubling.h
//
// Rabenseifner's all-reduce: a reduce-scatter by recursive halving followed by
// an all-gather by recursive doubling (R. Thakur, R. Rabenseifner, W. Gropp,
// "Optimization of collective communication operations in MPICH", IJHPCA
// 19(1), 2005, section 4.4; MPICH's allreduce_intra_reduce_scatter_allgather).
//
// With p' the largest power of two <= n and r = n - p': when r > 0, each of
// the first r even positions first sends its whole buffer to the next odd
// position, which reduces it, and drops out; the p' remaining ranks run the
// power-of-two algorithm; finally each odd position sends the result back to
// its even neighbour. In round m (m = p'/2, p'/4, ..., 1) of the halving,
// each rank exchanges with the rank whose new index differs in bit m, sends
// the half of its current range it does not keep, and reduces the half it
// receives; the doubling replays the rounds backwards with copies.
//
// Powers of two: 2 log2(n) steps, each rank sends 2(n-1)/n x S. Otherwise
// 2 log2(p') + 2 steps. Positions follow ring_order(), so the last, smallest
// rounds stay inside a server.

#ifndef ZIONSIM_MODELS_COLLECTIVES_HALVING_DOUBLING_H_
#define ZIONSIM_MODELS_COLLECTIVES_HALVING_DOUBLING_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::models::collectives {

class HalvingDoublingAlgorithm : public CollectiveAlgorithm {
 public:
  std::string_view name() const override { return "halving_doubling"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllReduce; }
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_HALVING_DOUBLING_H_
