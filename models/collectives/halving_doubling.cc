// File: models/collectives/halving_doubling.cc
//
// Recursive halving / doubling lowering (see halving_doubling.h).

#include "models/collectives/halving_doubling.h"

#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {

CollectivePlan HalvingDoublingAlgorithm::lower(const CollectiveRequest& request,
                                               const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const std::vector<int> member = topology.ring_order();
  internal::PlanBuilder plan(request.kind, n);
  int pof2 = 1;
  while (pof2 * 2 <= n) pof2 *= 2;
  const int rem = n - pof2;
  for (sim::Bytes size : split_bytes(request.bytes_per_rank, pof2, size_bytes(request.dtype))) {
    plan.add_chunk(size, {}, {});
  }
  const auto all = std::vector<ChunkRange>{{0, static_cast<std::uint32_t>(pof2)}};
  // The member at new index i (MPICH's newrank).
  const auto at = [&](int i) {
    return member[static_cast<std::size_t>(i < rem ? 2 * i + 1 : i + rem)];
  };

  std::vector<std::uint32_t> after;
  if (rem > 0) {
    const std::uint32_t step = plan.add_step();
    for (int p = 0; p < 2 * rem; p += 2) {
      plan.add_transfer(step, member[static_cast<std::size_t>(p)],
                        member[static_cast<std::size_t>(p + 1)], TransferOp::kReduce, all);
    }
    after = {step};
  }
  // Recursive halving: before round m, index i holds the aligned range of 2m
  // chunks containing chunk i; it keeps the half containing i.
  for (int m = pof2 / 2; m >= 1; m /= 2) {
    const std::uint32_t step = plan.add_step(after);
    for (int i = 0; i < pof2; ++i) {
      const int partner = i ^ m;
      const auto lo = static_cast<std::uint32_t>(partner & ~(m - 1));
      plan.add_transfer(step, at(i), at(partner), TransferOp::kReduce,
                        {ChunkRange{lo, lo + static_cast<std::uint32_t>(m)}});
    }
    after = {step};
  }
  // Recursive doubling: before round m, index i holds the aligned m chunks
  // containing chunk i and sends them to its partner.
  for (int m = 1; m < pof2; m *= 2) {
    const std::uint32_t step = plan.add_step(after);
    for (int i = 0; i < pof2; ++i) {
      const auto lo = static_cast<std::uint32_t>(i & ~(m - 1));
      plan.add_transfer(step, at(i), at(i ^ m), TransferOp::kCopy,
                        {ChunkRange{lo, lo + static_cast<std::uint32_t>(m)}});
    }
    after = {step};
  }
  if (rem > 0) {
    const std::uint32_t step = plan.add_step(after);
    for (int p = 0; p < 2 * rem; p += 2) {
      plan.add_transfer(step, member[static_cast<std::size_t>(p + 1)],
                        member[static_cast<std::size_t>(p)], TransferOp::kCopy, all);
    }
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
