// File: models/collectives/hierarchical.cc
//
// Two-level lowering (see hierarchical.h). All phases of a slice form one
// chain of steps; each step holds the transfers of every server (or every
// rail) at once; a slice's j-th step also follows the previous slice's.

#include "models/collectives/hierarchical.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/json_reader.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {
namespace {

using internal::PlanBuilder;

int mod(int a, int n) { return ((a % n) + n) % n; }

/// A chain of steps: each new step follows the previous one, and the step
/// of the same index in the previous slice's chain (`before`, when given).
class Chain {
 public:
  Chain(PlanBuilder& plan, const std::vector<std::uint32_t>* before) : plan_(plan), before_(before) {}
  std::uint32_t next() {
    std::vector<std::uint32_t> after;
    if (!steps_.empty()) after.push_back(steps_.back());
    if (before_ != nullptr && steps_.size() < before_->size()) after.push_back((*before_)[steps_.size()]);
    steps_.push_back(plan_.add_step(std::move(after)));
    return steps_.back();
  }
  std::vector<std::uint32_t>& steps() { return steps_; }

 private:
  PlanBuilder& plan_;
  const std::vector<std::uint32_t>* before_;
  std::vector<std::uint32_t> steps_;
};

/// Ring phases over several disjoint rings at once. rings[i][p] is the
/// member at position p of ring i; blocks(i, b) the chunks of block b of
/// ring i. Reduce-scatter leaves position p with block p reduced over its
/// ring; all-gather starts from position p holding block p.
template <typename Blocks>
void ring_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& rings,
                bool reducing, const Blocks& blocks) {
  if (rings.empty()) return;
  const int n = static_cast<int>(rings.front().size());
  for (int s = 0; s + 1 < n; ++s) {
    const std::uint32_t step = chain.next();
    for (std::size_t i = 0; i < rings.size(); ++i) {
      for (int p = 0; p < n; ++p) {
        const int block = mod(reducing ? p - s - 1 : p - s, n);
        plan.add_transfer(step, rings[i][static_cast<std::size_t>(p)],
                          rings[i][static_cast<std::size_t>(mod(p + 1, n))],
                          reducing ? TransferOp::kReduce : TransferOp::kCopy,
                          blocks(static_cast<int>(i), block));
      }
    }
  }
}

/// Recursive halving (reduce-scatter) or doubling (all-gather) over several
/// groups at once, each of a power-of-two size n, with ring_phase's
/// contract: reduce-scatter leaves position p with block p reduced over its
/// group; all-gather starts from position p holding block p. Halving: at
/// distance d = n/2, n/4, ..., 1, p and p ^ d split the blocks p is still
/// responsible for, and p sends its partner's half; doubling: at d = 1, 2,
/// ..., n/2, p sends the aligned run of d blocks it holds (Thakur,
/// Rabenseifner and Gropp 2005). log2(n) steps each, every position sending
/// (n-1)/n of the group's blocks, as a ring does in n-1 steps.
template <typename Blocks>
void halving_doubling_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& groups,
                            bool reducing, const Blocks& blocks) {
  if (groups.empty()) return;
  const int n = static_cast<int>(groups.front().size());
  std::vector<int> distances;
  for (int d = 1; d < n; d *= 2) distances.push_back(d);
  if (reducing) std::reverse(distances.begin(), distances.end());
  for (const int d : distances) {
    const std::uint32_t step = chain.next();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (int p = 0; p < n; ++p) {
        const int q = p ^ d;
        // Halving: p still owns the aligned run of 2d blocks holding p and
        // sends q's half of it. Doubling: p holds the aligned run of d
        // blocks holding p and sends it all.
        const int first = reducing ? (q / d) * d : (p / d) * d;
        std::vector<ChunkRange> chunks;
        for (int b = first; b < first + d; ++b) {
          for (const ChunkRange& r : blocks(static_cast<int>(i), b)) chunks.push_back(r);
        }
        plan.add_transfer(step, groups[i][static_cast<std::size_t>(p)], groups[i][static_cast<std::size_t>(q)],
                          reducing ? TransferOp::kReduce : TransferOp::kCopy, std::move(chunks));
      }
    }
  }
}

/// The phase across servers, along the rails: halving/doubling when the
/// option allows it and the rails' length is a power of two, else a ring.
template <typename Blocks>
void rail_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& rails, bool reducing,
                const Blocks& blocks, RailAlgorithm across) {
  const std::size_t g = rails.empty() ? 0 : rails.front().size();
  if (across != RailAlgorithm::kRing && g > 1 && (g & (g - 1)) == 0) {
    halving_doubling_phase(plan, chain, rails, reducing, blocks);
  } else {
    ring_phase(plan, chain, rails, reducing, blocks);
  }
}

/// Slice `slice` of `slices` (all-to-all: the only one): its chunks and its
/// chain of phases.
void lower_slice(const CollectiveRequest& request, PlanBuilder& plan, Chain& chain,
                 const std::vector<std::vector<int>>& servers, const std::vector<std::vector<int>>& rails,
                 int slice, int slices, int elem, std::uint32_t G, RailAlgorithm across) {
  const int n = static_cast<int>(request.ranks.size());
  const int num_servers = static_cast<int>(servers.size());
  const int per_server = static_cast<int>(servers.front().size());
  // This slice's chunks start here.
  const auto base = static_cast<std::uint32_t>(plan.num_chunks());
  switch (request.kind) {
    case CollectiveKind::kAllReduce: {
      // Chunk base + l * G + g: piece g of the 1/L block that rail l all-reduces.
      const sim::Bytes mine = split_bytes(request.bytes_per_rank, slices, elem)[static_cast<std::size_t>(slice)];
      for (sim::Bytes block : split_bytes(mine, per_server, elem)) {
        for (sim::Bytes piece : split_bytes(block, num_servers, elem))
          plan.add_chunk(piece, {}, {});
      }
      const auto super_block = [&](int, int l) {
        return std::vector<ChunkRange>{
            {base + static_cast<std::uint32_t>(l) * G, base + static_cast<std::uint32_t>(l + 1) * G}};
      };
      const auto piece = [&](int l, int g) {
        const auto c = base + static_cast<std::uint32_t>(l) * G + static_cast<std::uint32_t>(g);
        return std::vector<ChunkRange>{{c, c + 1}};
      };
      ring_phase(plan, chain, servers, /*reducing=*/true, super_block);
      rail_phase(plan, chain, rails, /*reducing=*/true, piece, across);
      rail_phase(plan, chain, rails, /*reducing=*/false, piece, across);
      ring_phase(plan, chain, servers, /*reducing=*/false, super_block);
      break;
    }
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: {
      // Chunk base + r: this slice of rank r's block. Rail l's super-block:
      // the blocks of its members.
      const bool gather = request.kind == CollectiveKind::kAllGather;
      const auto blocks = block_sizes(request);
      for (int r = 0; r < n; ++r) {
        plan.add_chunk(split_bytes(blocks[static_cast<std::size_t>(r)], slices, elem)[static_cast<std::size_t>(slice)],
                       gather ? std::optional<int>(r) : std::nullopt,
                       gather ? std::nullopt : std::optional<int>(r));
      }
      std::vector<std::vector<ChunkRange>> rail_blocks;
      for (const auto& rail : rails) {
        std::vector<std::uint32_t> members;
        for (int r : rail) members.push_back(base + static_cast<std::uint32_t>(r));
        rail_blocks.push_back(internal::to_ranges(std::move(members)));
      }
      const auto super_block = [&](int, int l) { return rail_blocks[static_cast<std::size_t>(l)]; };
      const auto own_block = [&](int l, int g) {
        const auto c = base + static_cast<std::uint32_t>(rails[l][g]);
        return std::vector<ChunkRange>{{c, c + 1}};
      };
      if (gather) {
        rail_phase(plan, chain, rails, /*reducing=*/false, own_block, across);
        ring_phase(plan, chain, servers, /*reducing=*/false, super_block);
      } else {
        ring_phase(plan, chain, servers, /*reducing=*/true, super_block);
        rail_phase(plan, chain, rails, /*reducing=*/true, own_block, across);
      }
      break;
    }
    case CollectiveKind::kAllToAll: {
      // Chunk s * n + d: the data from s to d.
      for (int s = 0; s < n; ++s) {
        for (int d = 0; d < n; ++d) plan.add_chunk(pair_size(request, s, d), s, d);
      }
      const auto chunk = [&](int s, int d) {
        return static_cast<std::uint32_t>(s) * static_cast<std::uint32_t>(n) +
               static_cast<std::uint32_t>(d);
      };
      // Inside the server: (g, p) -> (g, q) carries everything from (g, p) to rail q.
      const std::uint32_t gather = chain.next();
      for (int g = 0; g < num_servers; ++g) {
        for (int p = 0; p < per_server; ++p) {
          for (int q = 0; q < per_server; ++q) {
            if (p == q) continue;
            std::vector<std::uint32_t> carried;
            for (int h = 0; h < num_servers; ++h)
              carried.push_back(chunk(servers[g][p], servers[h][q]));
            plan.add_transfer(gather, servers[g][p], servers[g][q], TransferOp::kCopy,
                              internal::to_ranges(std::move(carried)));
          }
        }
      }
      // Across the fabric: (g, q) -> (h, q) carries everything from server g to (h, q).
      const std::uint32_t cross = chain.next();
      for (int q = 0; q < per_server; ++q) {
        for (int g = 0; g < num_servers; ++g) {
          for (int h = 0; h < num_servers; ++h) {
            if (g == h) continue;
            std::vector<std::uint32_t> carried;
            for (int p = 0; p < per_server; ++p)
              carried.push_back(chunk(servers[g][p], servers[h][q]));
            plan.add_transfer(cross, servers[g][q], servers[h][q], TransferOp::kCopy,
                              internal::to_ranges(std::move(carried)));
          }
        }
      }
      break;
    }
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      break;
  }
}

}  // namespace

HierarchicalOptions parse_hierarchical_options(json::ObjectReader& options) {
  HierarchicalOptions out;
  const bool chunks = options.read_int("chunks", out.chunks, {.min = 1, .max = 64});
  if (options.read_int("chunk_bytes", out.chunk_bytes, {.min = 1, .max = std::int64_t{1} << 40}) && chunks) {
    options.error("chunk_bytes", "give chunks or chunk_bytes, not both");
  }
  std::string across = "auto";
  if (options.read_enum("across", across, {"auto", "ring", "halving_doubling"})) {
    out.across = across == "ring" ? RailAlgorithm::kRing : RailAlgorithm::kAuto;
    out.across = across == "halving_doubling" ? RailAlgorithm::kHalvingDoubling : out.across;
  }
  return out;
}

int hierarchical_slices(const HierarchicalOptions& options, sim::Bytes bytes_per_rank) {
  constexpr std::int64_t kMostSlices = 64;
  if (options.chunk_bytes <= 0) return options.chunks;
  const std::int64_t b = std::max<std::int64_t>(bytes_per_rank.count(), 1);
  return static_cast<int>(std::min(kMostSlices, (b + options.chunk_bytes - 1) / options.chunk_bytes));
}

bool HierarchicalAlgorithm::supports(CollectiveKind kind) const {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAll;
}

CollectivePlan HierarchicalAlgorithm::lower(const CollectiveRequest& request,
                                            const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const std::vector<std::vector<int>> servers = topology.members_by_server();
  const int num_servers = static_cast<int>(servers.size());
  const int per_server = static_cast<int>(servers.front().size());
  for (std::size_t g = 0; g < servers.size(); ++g) {
    if (static_cast<int>(servers[g].size()) != per_server) {
      internal::throw_cannot_lower(
          name(), fmt::format("needs the same number of group members on every server; server "
                              "{} of the group has {}, server 0 has {}",
                              g, servers[g].size(), per_server));
    }
  }
  std::vector<std::vector<int>> rails(static_cast<std::size_t>(per_server));
  for (int l = 0; l < per_server; ++l) {
    for (int g = 0; g < num_servers; ++g) rails[l].push_back(servers[g][l]);
  }
  const auto G = static_cast<std::uint32_t>(num_servers);
  PlanBuilder plan(request.kind, n);
  const int elem = size_bytes(request.dtype);
  // All-to-all is two steps of whole buffers; the others pipeline slices.
  const int slices =
      request.kind == CollectiveKind::kAllToAll ? 1 : hierarchical_slices(options_, request.bytes_per_rank);
  std::vector<std::uint32_t> previous;
  for (int j = 0; j < slices; ++j) {
    Chain chain(plan, j == 0 ? nullptr : &previous);
    lower_slice(request, plan, chain, servers, rails, j, slices, elem, G, options_.across);
    previous = std::move(chain.steps());
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
