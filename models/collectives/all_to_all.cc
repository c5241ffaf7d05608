// File: models/collectives/all_to_all.cc
//
// Direct and pairwise all-to-all lowering (see all_to_all.h).

#include "models/collectives/all_to_all.h"

#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {
namespace {

internal::PlanBuilder with_pair_chunks(const CollectiveRequest& request) {
  const int n = static_cast<int>(request.ranks.size());
  internal::PlanBuilder plan(request.kind, n);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) plan.add_chunk(pair_size(request, s, d), s, d);
  }
  return plan;
}

std::uint32_t chunk(int n, int s, int d) { return static_cast<std::uint32_t>(s * n + d); }

}  // namespace

CollectivePlan DirectAllToAllAlgorithm::lower(const CollectiveRequest& request,
                                              const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  internal::PlanBuilder plan = with_pair_chunks(request);
  if (n > 1) {
    const std::uint32_t step = plan.add_step();
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s != d) plan.add_transfer(step, s, d, TransferOp::kCopy, chunk(n, s, d));
      }
    }
  }
  return std::move(plan).finish();
}

CollectivePlan PairwiseAllToAllAlgorithm::lower(const CollectiveRequest& request,
                                                const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const bool power_of_two = (n & (n - 1)) == 0;
  internal::PlanBuilder plan = with_pair_chunks(request);
  std::vector<std::uint32_t> after;
  for (int k = 1; k < n; ++k) {
    const std::uint32_t step = plan.add_step(after);
    for (int i = 0; i < n; ++i) {
      const int d = power_of_two ? (i ^ k) : (i + k) % n;
      plan.add_transfer(step, i, d, TransferOp::kCopy, chunk(n, i, d));
    }
    after = {step};
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
