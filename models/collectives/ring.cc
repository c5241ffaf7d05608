// File: models/collectives/ring.cc
//
// Ring lowering (see ring.h). Ring positions p = 0..n-1 follow ring_order();
// in reduce-scatter step s position p sends block (p - s - 1) mod n to p + 1,
// which reduces it, so position p ends with block p fully reduced; in
// all-gather step s it forwards block (p - s) mod n.

#include "models/collectives/ring.h"

#include <algorithm>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "base/json_reader.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {

using internal::PlanBuilder;

namespace {

// The ring reduce-scatter / all-gather / all-reduce as a generated plan.
// Step index s = (j x ring_steps + t) x n + p for slice j, ring step t and
// position p: the order in which a held plan would add them.
class RingSteps final : public StepGenerator {
 public:
  RingSteps(CollectiveKind kind, int chunks, std::vector<std::vector<int>> rings,
            std::vector<std::vector<std::uint32_t>> chunk_of, std::vector<sim::Bytes> chunk_sizes)
      : chunks_(chunks),
        n_(static_cast<int>(rings.front().size())),
        slices_(static_cast<int>(chunk_of.size())),
        reduce_phase_(kind != CollectiveKind::kAllGather),
        gather_phase_(kind != CollectiveKind::kReduceScatter),
        ring_steps_((reduce_phase_ ? n_ - 1 : 0) + (gather_phase_ ? n_ - 1 : 0)),
        rings_(std::move(rings)),
        chunk_of_(std::move(chunk_of)),
        chunk_sizes_(std::move(chunk_sizes)) {
    const std::uint64_t count = std::uint64_t{static_cast<std::uint32_t>(slices_)} *
                                static_cast<std::uint32_t>(ring_steps_) * static_cast<std::uint32_t>(n_);
    if (count > std::numeric_limits<std::uint32_t>::max()) {
      internal::throw_cannot_lower("ring", fmt::format("{} steps are more than a plan can index (2^32 - 1)", count));
    }
    count_ = static_cast<std::uint32_t>(count);
    for (const sim::Bytes& b : chunk_sizes_) moves_ |= b.count() > 0;
    moves_ &= count_ > 0;
  }

  std::uint32_t step_count() const override { return count_; }

  void step(std::uint32_t s, Step& out) const override {
    const Place at = place(s);
    out.transfers.clear();
    out.after.clear();
    out.local_work.clear();
    out.issue_slot = 0;
    if (at.j % chunks_ != 0) out.after.push_back(index(at.j - 1, at.t, at.p));
    if (at.t > 0) out.after.push_back(index(at.j, at.t - 1, (at.p + n_ - 1) % n_));
    const bool reducing = reduce_phase_ && at.t < n_ - 1;
    const int r = reducing || !reduce_phase_ ? at.t : at.t - (n_ - 1);
    const int block = ((reducing ? at.p - r - 1 : at.p - r) % n_ + n_) % n_;
    const std::uint32_t chunk = chunk_of_[static_cast<std::size_t>(at.j)][static_cast<std::size_t>(block)];
    const sim::Bytes size = chunk_sizes_[chunk];
    if (size.count() == 0) return;  // as PlanBuilder drops it
    const std::vector<int>& ring = rings_[static_cast<std::size_t>(at.j / chunks_)];
    const int dst = ring[static_cast<std::size_t>((at.p + 1) % n_)];
    Transfer& x = out.transfers.emplace_back();
    x.src = ring[static_cast<std::size_t>(at.p)];
    x.dst = dst;
    x.size = size;
    x.op = reducing ? TransferOp::kReduce : TransferOp::kCopy;
    x.chunks.assign(1, ChunkRange{chunk, chunk + 1});
    x.relay.reset();
    if (reducing) out.local_work.push_back({.rank = dst, .reduce_bytes = size});
  }

  void for_each_transfer(std::uint32_t s, const std::function<void(const Transfer&)>& visit) const override {
    thread_local Step made;  // one transfer at most; its vectors reused
    step(s, made);
    for (const Transfer& x : made.transfers) visit(x);
  }

  std::uint32_t after_count(std::uint32_t s) const override {
    const Place at = place(s);
    return (at.j % chunks_ != 0 ? 1 : 0) + (at.t > 0 ? 1 : 0);
  }

  std::size_t dependents(std::uint32_t s, std::span<std::uint32_t, kMaxGeneratedDependents> out) const override {
    const Place at = place(s);
    std::size_t k = 0;
    if (at.t + 1 < ring_steps_) out[k++] = index(at.j, at.t + 1, (at.p + 1) % n_);
    if (at.j + 1 < slices_ && (at.j + 1) % chunks_ != 0) out[k++] = index(at.j + 1, at.t, at.p);
    return k;
  }

  std::vector<std::uint32_t> roots() const override {
    std::vector<std::uint32_t> out;
    if (ring_steps_ == 0) return out;
    for (int j = 0; j < slices_; j += chunks_) {
      for (int p = 0; p < n_; ++p) out.push_back(index(j, 0, p));
    }
    return out;
  }

  bool moves_bytes() const override { return moves_; }

 private:
  struct Place {
    int j = 0;
    int t = 0;
    int p = 0;
  };
  Place place(std::uint32_t s) const {
    const std::uint32_t per_slice = static_cast<std::uint32_t>(ring_steps_) * static_cast<std::uint32_t>(n_);
    const std::uint32_t within = s % per_slice;
    return Place{static_cast<int>(s / per_slice), static_cast<int>(within / static_cast<std::uint32_t>(n_)),
                 static_cast<int>(within % static_cast<std::uint32_t>(n_))};
  }
  std::uint32_t index(int j, int t, int p) const {
    return (static_cast<std::uint32_t>(j) * static_cast<std::uint32_t>(ring_steps_) + static_cast<std::uint32_t>(t)) *
               static_cast<std::uint32_t>(n_) +
           static_cast<std::uint32_t>(p);
  }

  int chunks_;
  int n_;
  int slices_;
  bool reduce_phase_;
  bool gather_phase_;
  int ring_steps_;
  std::vector<std::vector<int>> rings_;
  std::vector<std::vector<std::uint32_t>> chunk_of_;
  std::vector<sim::Bytes> chunk_sizes_;
  std::uint32_t count_ = 0;
  bool moves_ = false;
};

}  // namespace

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
  // That is slices x 2(n-1) x n steps: generated, not held (RingSteps).
  CollectivePlan out = std::move(plan).finish();
  std::vector<sim::Bytes> chunk_sizes;
  chunk_sizes.reserve(out.chunks.size());
  for (const Chunk& c : out.chunks) chunk_sizes.push_back(c.size);
  out.generator = std::make_shared<const RingSteps>(request.kind, chunks, std::move(rings), std::move(chunk_of),
                                                    std::move(chunk_sizes));
  return out;
}

}  // namespace zx::models::collectives
