// File: models/collectives/internal/plan_builder.h
//
// Shared by the built-in algorithms: builds a CollectivePlan from chunks,
// steps and transfers. A transfer's size is computed from the chunks it
// carries (so size and content never disagree), empty transfers are dropped,
// and finish() derives each step's local work from its reducing transfers.
// Also the small helpers several algorithms share (ring schedules, binary
// trees). Not part of the public API.

#ifndef ZIONSIM_MODELS_COLLECTIVES_INTERNAL_PLAN_BUILDER_H_
#define ZIONSIM_MODELS_COLLECTIVES_INTERNAL_PLAN_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/plan.h"

namespace zx::models::collectives::internal {

class PlanBuilder {
 public:
  PlanBuilder(CollectiveKind kind, int group_size);

  /// Adds a chunk; returns its index.
  std::uint32_t add_chunk(sim::Bytes size, std::optional<int> origin,
                          std::optional<int> destination);
  std::uint32_t num_chunks() const { return static_cast<std::uint32_t>(plan_.chunks.size()); }

  /// Adds a step after `after` (earlier steps, or none); returns its index.
  std::uint32_t add_step(std::vector<std::uint32_t> after = {});
  /// Adds a dependency to a step.
  void add_after(std::uint32_t step, std::uint32_t earlier);
  std::uint32_t num_steps() const { return static_cast<std::uint32_t>(plan_.steps.size()); }

  /// Adds a transfer of the given chunks to `step`; dropped if it carries 0 bytes.
  void add_transfer(std::uint32_t step, int src, int dst, TransferOp op,
                    std::vector<ChunkRange> chunks);
  /// One chunk.
  void add_transfer(std::uint32_t step, int src, int dst, TransferOp op, std::uint32_t chunk) {
    add_transfer(step, src, dst, op, {ChunkRange{chunk, chunk + 1}});
  }

  /// Sends the step's latest transfer through group member `relay` (plan.h,
  /// Transfer::relay); -1 leaves it direct. The step must have a transfer.
  void set_relay(std::uint32_t step, int relay);
  /// The step's issue slot (plan.h, Step::issue_slot).
  void set_issue_slot(std::uint32_t step, std::uint32_t slot);

  CollectivePlan finish() &&;

 private:
  CollectivePlan plan_;
};

/// Merges a sorted list of chunk indices into ranges.
std::vector<ChunkRange> to_ranges(std::vector<std::uint32_t> indices);

/// Throws zx::InputError "collective algorithm '<name>': <message>".
[[noreturn]] void throw_cannot_lower(std::string_view algorithm, std::string message);

/// NCCL's binary tree (ncclGetBtree) over positions 0..n-1: the parent of
/// each position, nullopt for the root (position 0). Position r with lowest
/// set bit b has parent (r ^ b) | (b << 1), or r ^ b when that is >= n.
std::vector<std::optional<int>> btree_parents(int n);

/// The children of each position, ascending, from a parent vector.
std::vector<std::vector<int>> children_of(const std::vector<std::optional<int>>& parents);

}  // namespace zx::models::collectives::internal

#endif  // ZIONSIM_MODELS_COLLECTIVES_INTERNAL_PLAN_BUILDER_H_
