// File: models/collectives/ring.cc
//
// Ring lowering (see ring.h). Ring positions p = 0..n-1 follow ring_order();
// in reduce-scatter step s position p sends block (p - s - 1) mod n to p + 1,
// which reduces it, so position p ends with block p fully reduced; in
// all-gather step s it forwards block (p - s) mod n.

#include "models/collectives/ring.h"

#include <algorithm>

#include "base/json_reader.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {

using internal::PlanBuilder;

RingOptions parse_ring_options(json::ObjectReader& options) {
  RingOptions out;
  options.read_int("chunks", out.chunks, {.min = 1, .max = 1024});
  options.read_int("channels", out.channels, {.min = 1, .max = 64});
  return out;
}

bool RingAlgorithm::supports(CollectiveKind kind) const {
  return kind != CollectiveKind::kAllToAll;
}

CollectivePlan RingAlgorithm::lower(const CollectiveRequest& request,
                                    const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const int elem = size_bytes(request.dtype);
  const int chunks = options_.chunks;
  const int slices = options_.channels * chunks;
  // Channel c's ring: each server's members rotated by c, so that channels
  // leave each server through different GPUs and NICs (NCCL's rings use
  // every NIC). Slice j belongs to channel j / chunks.
  std::vector<std::vector<int>> rings;
  for (int c = 0; c < options_.channels; ++c) rings.push_back(topology.ring_order(c));
  const auto ring_of = [&](int j) -> std::vector<int>& { return rings[static_cast<std::size_t>(j / chunks)]; };
  const auto at = [&](int j, int p) { return ring_of(j)[static_cast<std::size_t>(((p % n) + n) % n)]; };
  PlanBuilder plan(request.kind, n);

  // chunk_of[j][b]: slice j of ring block b.
  std::vector<std::vector<std::uint32_t>> chunk_of(static_cast<std::size_t>(slices),
                                                   std::vector<std::uint32_t>(n));
  switch (request.kind) {
    case CollectiveKind::kAllReduce: {
      const auto slice_sizes = split_bytes(request.bytes_per_rank, slices, elem);
      for (int j = 0; j < slices; ++j) {
        const auto sizes = split_bytes(slice_sizes[static_cast<std::size_t>(j)], n, elem);
        for (int b = 0; b < n; ++b) {
          chunk_of[j][b] = plan.add_chunk(sizes[static_cast<std::size_t>(b)], {}, {});
        }
      }
      break;
    }
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: {
      // Chunks in group order: rank r's block, cut into slices.
      const auto blocks = block_sizes(request);
      // position[c][r]: rank r's place on channel c's ring.
      std::vector<std::vector<int>> position(rings.size(), std::vector<int>(static_cast<std::size_t>(n)));
      for (std::size_t c = 0; c < rings.size(); ++c) {
        for (int p = 0; p < n; ++p) position[c][static_cast<std::size_t>(rings[c][p])] = p;
      }
      const bool gather = request.kind == CollectiveKind::kAllGather;
      for (int r = 0; r < n; ++r) {
        const auto sizes = split_bytes(blocks[static_cast<std::size_t>(r)], slices, elem);
        for (int j = 0; j < slices; ++j) {
          chunk_of[j][position[static_cast<std::size_t>(j / chunks)][r]] = plan.add_chunk(sizes[static_cast<std::size_t>(j)],
                                                    gather ? std::optional<int>(r) : std::nullopt,
                                                    gather ? std::nullopt : std::optional<int>(r));
        }
      }
      break;
    }
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce: {
      const bool broadcast = request.kind == CollectiveKind::kBroadcast;
      // Rotate each ring so the root is first (broadcast) or last (reduce).
      for (std::vector<int>& ring : rings) {
        const auto it = std::find(ring.begin(), ring.end(), request.root);
        std::rotate(ring.begin(), broadcast ? it : it + 1, ring.end());
      }
      const auto sizes = split_bytes(request.bytes_per_rank, slices, elem);
      for (int j = 0; j < slices; ++j) {
        chunk_of[j][0] =
            plan.add_chunk(sizes[static_cast<std::size_t>(j)],
                           broadcast ? std::optional<int>(request.root) : std::nullopt,
                           broadcast ? std::nullopt : std::optional<int>(request.root));
      }
      // Slice j, hop p: position p sends to p + 1, after hop p-1 of the
      // slice and hop p of the channel's previous slice.
      std::vector<std::uint32_t> previous_slice;
      for (int j = 0; j < slices; ++j) {
        std::vector<std::uint32_t> hops;
        for (int p = 0; p + 1 < n; ++p) {
          std::vector<std::uint32_t> after;
          if (p > 0) after.push_back(hops.back());
          if (j % chunks != 0) after.push_back(previous_slice[static_cast<std::size_t>(p)]);
          const std::uint32_t step = plan.add_step(std::move(after));
          plan.add_transfer(step, at(j, p), at(j, p + 1),
                            broadcast ? TransferOp::kCopy : TransferOp::kReduce, chunk_of[j][0]);
          hops.push_back(step);
        }
        previous_slice = std::move(hops);
      }
      return std::move(plan).finish();
    }
    case CollectiveKind::kAllToAll:
      break;
  }

  // One step per slice, ring step t and position p: p sends to p + 1 once
  // p - 1's transfer of ring step t - 1 (the block p now forwards) has
  // arrived and been reduced, and, within a channel, once the previous
  // slice's transfer of the same hop has. Nothing else waits: a position
  // does not wait for its own earlier transfers to arrive, and ranks do not
  // wait for each other globally, so a latency-bound ring costs the sum of
  // the hops along its path (mostly NVLink) rather than every step the
  // slowest hop of the ring (the one between servers), as NCCL's ring does.
  const bool reduce_phase = request.kind != CollectiveKind::kAllGather;
  const bool gather_phase = request.kind != CollectiveKind::kReduceScatter;
  const int ring_steps = (reduce_phase ? n - 1 : 0) + (gather_phase ? n - 1 : 0);
  // step_of[t][p] of the slice before (within the channel) and of this one.
  std::vector<std::vector<std::uint32_t>> previous_slice;
  for (int j = 0; j < slices; ++j) {
    std::vector<std::vector<std::uint32_t>> step_of(static_cast<std::size_t>(ring_steps),
                                                    std::vector<std::uint32_t>(static_cast<std::size_t>(n)));
    for (int t = 0; t < ring_steps; ++t) {
      const bool reducing = reduce_phase && t < n - 1;
      const int s = reducing || !reduce_phase ? t : t - (n - 1);
      for (int p = 0; p < n; ++p) {
        std::vector<std::uint32_t> after;
        if (t > 0) after.push_back(step_of[static_cast<std::size_t>(t - 1)][static_cast<std::size_t>((p + n - 1) % n)]);
        if (j % chunks != 0) {
          after.push_back(previous_slice[static_cast<std::size_t>(t)][static_cast<std::size_t>(p)]);
        }
        const std::uint32_t step = plan.add_step(std::move(after));
        const int block = ((reducing ? p - s - 1 : p - s) % n + n) % n;
        plan.add_transfer(step, at(j, p), at(j, p + 1), reducing ? TransferOp::kReduce : TransferOp::kCopy,
                          chunk_of[j][block]);
        step_of[static_cast<std::size_t>(t)][static_cast<std::size_t>(p)] = step;
      }
    }
    previous_slice = std::move(step_of);
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
