// File: models/collectives/internal/plan_builder.cc
//
// PlanBuilder and shared helpers (see plan_builder.h).

#include "models/collectives/internal/plan_builder.h"

#include <algorithm>
#include <map>

#include "base/check.h"
#include "base/error.h"

namespace zx::models::collectives::internal {

PlanBuilder::PlanBuilder(CollectiveKind kind, int group_size) {
  plan_.kind = kind;
  plan_.group_size = group_size;
}

std::uint32_t PlanBuilder::add_chunk(sim::Bytes size, std::optional<int> origin,
                                     std::optional<int> destination) {
  plan_.chunks.push_back({.size = size, .origin = origin, .destination = destination});
  return num_chunks() - 1;
}

std::uint32_t PlanBuilder::add_step(std::vector<std::uint32_t> after) {
  const std::uint32_t index = num_steps();
  for (std::uint32_t a : after) ZX_CHECK(a < index, "a step may only follow earlier steps");
  std::sort(after.begin(), after.end());
  after.erase(std::unique(after.begin(), after.end()), after.end());
  plan_.steps.push_back({.after = std::move(after)});
  return index;
}

void PlanBuilder::add_after(std::uint32_t step, std::uint32_t earlier) {
  ZX_CHECK(step < num_steps() && earlier < step, "a step may only follow earlier steps");
  auto& after = plan_.steps[step].after;
  auto it = std::lower_bound(after.begin(), after.end(), earlier);
  if (it == after.end() || *it != earlier) after.insert(it, earlier);
}

void PlanBuilder::add_transfer(std::uint32_t step, int src, int dst, TransferOp op,
                               std::vector<ChunkRange> chunks) {
  ZX_CHECK(step < num_steps(), "transfer into a step that does not exist");
  const auto endpoint = [&](int e) { return (e >= 0 && e < plan_.group_size) || e == kNvlinkSwitch; };
  ZX_CHECK(endpoint(src) && endpoint(dst) && src != dst,
           "transfer endpoints must be distinct group indices (or one the NVLink switch)");
  sim::Bytes size;
  for (const ChunkRange& r : chunks) {
    ZX_CHECK(r.begin <= r.end && r.end <= num_chunks(), "chunk range out of bounds");
    for (std::uint32_t c = r.begin; c < r.end; ++c) size += plan_.chunks[c].size;
  }
  if (size == sim::Bytes(0)) return;
  plan_.steps[step].transfers.push_back(
      {.src = src, .dst = dst, .size = size, .op = op, .chunks = std::move(chunks)});
}

void PlanBuilder::set_relay(std::uint32_t step, int relay) {
  ZX_CHECK(step < num_steps() && !plan_.steps[step].transfers.empty(), "a relay for a transfer that does not exist");
  if (relay < 0) return;
  Transfer& t = plan_.steps[step].transfers.back();
  ZX_CHECK(relay < plan_.group_size && relay != t.src && relay != t.dst, "a relay is a third group member");
  t.relay = relay;
}

void PlanBuilder::set_issue_slot(std::uint32_t step, std::uint32_t slot) {
  ZX_CHECK(step < num_steps(), "an issue slot for a step that does not exist");
  plan_.steps[step].issue_slot = slot;
}

CollectivePlan PlanBuilder::finish() && {
  for (Step& step : plan_.steps) {
    std::map<int, sim::Bytes> work;
    for (const Transfer& t : step.transfers) {
      // The switch reduces in the network: no rank's work.
      if (t.op == TransferOp::kReduce && t.dst != kNvlinkSwitch) work[t.dst] += t.size;
    }
    for (const auto& [rank, bytes] : work) {
      step.local_work.push_back({.rank = rank, .reduce_bytes = bytes});
    }
  }
  return std::move(plan_);
}

std::vector<ChunkRange> to_ranges(std::vector<std::uint32_t> indices) {
  std::sort(indices.begin(), indices.end());
  std::vector<ChunkRange> out;
  for (std::uint32_t i : indices) {
    if (!out.empty() && out.back().end == i) {
      ++out.back().end;
    } else {
      out.push_back({i, i + 1});
    }
  }
  return out;
}

void throw_cannot_lower(std::string_view algorithm, std::string message) {
  throw InputError(Diagnostic{.source = "collective algorithm '" + std::string(algorithm) + "'",
                              .message = std::move(message)});
}

std::vector<std::optional<int>> btree_parents(int n) {
  std::vector<std::optional<int>> parents(static_cast<std::size_t>(n));
  for (int r = 1; r < n; ++r) {
    const int bit = r & -r;
    int up = (r ^ bit) | (bit << 1);
    if (up >= n) up = r ^ bit;
    parents[static_cast<std::size_t>(r)] = up;
  }
  return parents;
}

std::vector<std::vector<int>> children_of(const std::vector<std::optional<int>>& parents) {
  std::vector<std::vector<int>> children(parents.size());
  for (std::size_t r = 0; r < parents.size(); ++r) {
    if (parents[r]) children[static_cast<std::size_t>(*parents[r])].push_back(static_cast<int>(r));
  }
  return children;
}

}  // namespace zx::models::collectives::internal
