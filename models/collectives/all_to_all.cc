// File: models/collectives/all_to_all.cc
//
// Direct and pairwise all-to-all lowering (see all_to_all.h).

#include "models/collectives/all_to_all.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

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

// The direct all-to-all as a generated plan: its one step's n(n-1)
// transfers (those of a non-zero size, s-major, as a held plan adds them)
// and its n x n chunks are made when visited, from the pair sizes, which is
// all it keeps: 8 bytes a pair for an all-to-all-v, 8 a rank otherwise.
class DirectSteps final : public StepGenerator {
 public:
  explicit DirectSteps(const CollectiveRequest& request) : n_(static_cast<int>(request.ranks.size())) {
    const auto n = static_cast<std::size_t>(n_);
    if (request.all_to_all_v_bytes.empty()) {
      // pair_size of a flat all-to-all depends on the destination only.
      for (int d = 0; d < n_; ++d) by_destination_.push_back(pair_size(request, 0, d).count());
    } else {
      matrix_.reserve(n * n);
      for (const auto& row : request.all_to_all_v_bytes) matrix_.insert(matrix_.end(), row.begin(), row.end());
    }
    for (int s = 0; s < n_ && !moves_; ++s) {
      for (int d = 0; d < n_ && !moves_; ++d) moves_ = s != d && bytes(s, d) > 0;
    }
  }

  std::uint32_t step_count() const override { return n_ > 1 ? 1 : 0; }

  void step(std::uint32_t s, Step& out) const override {
    step_header(s, out);
    for_each_transfer(s, [&](const Transfer& x) { out.transfers.push_back(x); });
  }

  void step_header(std::uint32_t, Step& out) const override {
    out.transfers.clear();
    out.after.clear();
    out.local_work.clear();
    out.issue_slot = 0;
  }

  void for_each_transfer(std::uint32_t, const std::function<void(const Transfer&)>& visit) const override {
    Transfer x;
    x.op = TransferOp::kCopy;
    x.chunks.resize(1);
    for (int s = 0; s < n_; ++s) {
      for (int d = 0; d < n_; ++d) {
        const std::int64_t size = s != d ? bytes(s, d) : 0;
        if (size == 0) continue;  // as PlanBuilder drops it
        x.src = s;
        x.dst = d;
        x.size = sim::Bytes(size);
        x.chunks[0] = ChunkRange{chunk(n_, s, d), chunk(n_, s, d) + 1};
        visit(x);
      }
    }
  }

  std::vector<Chunk> make_chunks() const override {
    std::vector<Chunk> out;
    out.reserve(static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_));
    for (int s = 0; s < n_; ++s) {
      for (int d = 0; d < n_; ++d) out.push_back({.size = sim::Bytes(bytes(s, d)), .origin = s, .destination = d});
    }
    return out;
  }

  std::uint32_t after_count(std::uint32_t) const override { return 0; }
  std::size_t dependents(std::uint32_t, std::span<std::uint32_t, kMaxGeneratedDependents>) const override {
    return 0;
  }
  std::vector<std::uint32_t> roots() const override {
    return n_ > 1 ? std::vector<std::uint32_t>{0} : std::vector<std::uint32_t>{};
  }
  bool moves_bytes() const override { return moves_; }

 private:
  std::int64_t bytes(int s, int d) const {
    if (matrix_.empty()) return by_destination_[static_cast<std::size_t>(d)];
    return matrix_[static_cast<std::size_t>(s) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(d)];
  }

  int n_;
  std::vector<std::int64_t> by_destination_;
  std::vector<std::int64_t> matrix_;
  bool moves_ = false;
};

}  // namespace

CollectivePlan DirectAllToAllAlgorithm::lower(const CollectiveRequest& request,
                                              const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  // n x n transfers in one step, and n x n chunks: generated, not held
  // (an all-to-all of 8,192 GPUs is 67 M of each).
  CollectivePlan plan;
  plan.kind = request.kind;
  plan.group_size = static_cast<int>(request.ranks.size());
  plan.generator = std::make_shared<const DirectSteps>(request);
  return plan;
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
