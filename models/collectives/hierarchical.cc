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
///
/// Each ring step is one step: every position of every ring waits for the
/// slowest transfer of the step before. Inside a server (NVLink, every hop
/// alike) that loses nothing. Along the rails (a ring there only for
/// server counts not a power of two, with large buffers) it charges every
/// step the slowest hop; a step per position waiting only for its
/// predecessor, as the ring algorithm does (ring.h), was tried: model A
/// 96 nodes 91.585 -> 88.323 ms, 48 nodes 80.835 -> 78.965, but its flows,
/// finishing at distinct instants beside the all-to-all's, cost 4.7x the
/// simulation time at 96 nodes (20 -> 94 s) and 2.5x at 48.
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
/// groups at once, with ring_phase's contract: reduce-scatter leaves
/// position p with block p reduced over its group; all-gather starts from
/// position p holding block p (Thakur, Rabenseifner and Gropp 2005). The
/// group's n positions: P, the largest power of two <= n, take part; the
/// extra positions P + k fold into position k first (reduce-scatter: all
/// their blocks, reduced; all-gather: their block) and get from it last
/// (their reduced block; every block). Block b belongs to super-block
/// b mod P. Halving: at distance d = 1, 2, ..., P/2, p and p ^ d split the
/// super-blocks p is still responsible for, and p sends its partner's half;
/// doubling: at d = P/2, ..., 1, p sends all it holds. The halves, the
/// largest transfers, go between neighbours (servers of one rack), the far
/// partners exchanging little. log2(P) steps, plus one for the extras each
/// way; the fabric
/// carries (n-1)/n of a group's blocks per position on average, as a ring
/// does in n-1 steps. `paired`: the reduce-scatter is followed by this
/// all-gather (an all-reduce), so the extras' round trip in between is left
/// out.
template <typename Blocks>
void halving_doubling_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& groups,
                            bool reducing, const Blocks& blocks, bool paired) {
  if (groups.empty()) return;
  const int n = static_cast<int>(groups.front().size());
  int P = 1;
  while (P * 2 <= n) P *= 2;
  const int extras = n - P;
  const auto member = [&](std::size_t i, int p) { return groups[i][static_cast<std::size_t>(p)]; };
  const auto append = [&](std::vector<ChunkRange>& out, std::size_t i, int b) {
    for (const ChunkRange& r : blocks(static_cast<int>(i), b)) out.push_back(r);
  };
  // The super-blocks sb with sb mod m == r: every block b with b mod P mod m == r.
  const auto super_blocks = [&](std::size_t i, int m, int r) {
    std::vector<ChunkRange> out;
    for (int sb = r; sb < P; sb += m) {
      for (int b = sb; b < n; b += P) append(out, i, b);
    }
    return out;
  };
  // Every block but `except` (-1: none).
  const auto all_but = [&](std::size_t i, int except) {
    std::vector<ChunkRange> out;
    for (int b = 0; b < n; ++b) {
      if (b != except) append(out, i, b);
    }
    return out;
  };
  const auto extras_step = [&](bool to_extras, bool whole) {
    const std::uint32_t step = chain.next();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (int k = 0; k < extras; ++k) {
        std::vector<ChunkRange> chunks;
        if (whole) {
          // To an extra that holds its own block reduced (after the
          // reduce-scatter's last step, unless paired), all but that one.
          chunks = all_but(i, to_extras && !paired ? P + k : -1);
        } else {
          append(chunks, i, P + k);
        }
        const int src = to_extras ? member(i, k) : member(i, P + k);
        const int dst = to_extras ? member(i, P + k) : member(i, k);
        plan.add_transfer(step, src, dst, reducing && !to_extras ? TransferOp::kReduce : TransferOp::kCopy,
                          std::move(chunks));
      }
    }
  };
  // Nearest partners carry the most: halving goes out from distance 1,
  // doubling comes back to it, so that the halves move between neighbouring
  // servers (one rack) and only small pieces between far ones.
  std::vector<int> distances;
  for (int d = 1; d < P; d *= 2) distances.push_back(d);
  if (!reducing) std::reverse(distances.begin(), distances.end());
  if (reducing) {
    if (extras > 0) extras_step(/*to_extras=*/false, /*whole=*/true);
  } else if (extras > 0 && !paired) {
    extras_step(/*to_extras=*/false, /*whole=*/false);
  }
  for (const int d : distances) {
    const std::uint32_t step = chain.next();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      for (int p = 0; p < P; ++p) {
        const int q = p ^ d;
        // Halving at d: p still owns the super-blocks agreeing with it
        // modulo d and sends those agreeing with q modulo 2d. Doubling at d:
        // p holds those agreeing with it modulo 2d and sends them all.
        plan.add_transfer(step, member(i, p), member(i, q), reducing ? TransferOp::kReduce : TransferOp::kCopy,
                          super_blocks(i, 2 * d, (reducing ? q : p) % (2 * d)));
      }
    }
  }
  if (reducing && extras > 0 && !paired) extras_step(/*to_extras=*/true, /*whole=*/false);
  if (!reducing && extras > 0) extras_step(/*to_extras=*/true, /*whole=*/true);
}

/// The phase across servers, along the rails: a ring or halving/doubling,
/// as `across` says (auto: rails_halve_double). `paired` as for
/// halving_doubling_phase.
template <typename Blocks>
void rail_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& rails, bool reducing,
                const Blocks& blocks, RailAlgorithm across, bool paired, double rail_bytes) {
  const int g = rails.empty() ? 0 : static_cast<int>(rails.front().size());
  const bool halve = across == RailAlgorithm::kHalvingDoubling ||
                     (across == RailAlgorithm::kAuto && rails_halve_double(g, rail_bytes, paired));
  if (halve) {
    halving_doubling_phase(plan, chain, rails, reducing, blocks, paired);
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
      const double rail_bytes = static_cast<double>(mine.count()) / per_server;
      rail_phase(plan, chain, rails, /*reducing=*/true, piece, across, /*paired=*/true, rail_bytes);
      rail_phase(plan, chain, rails, /*reducing=*/false, piece, across, /*paired=*/true, rail_bytes);
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
      const double rail_bytes = static_cast<double>(request.bytes_per_rank.count()) / slices / per_server;
      const auto own_block = [&](int l, int g) {
        const auto c = base + static_cast<std::uint32_t>(rails[l][g]);
        return std::vector<ChunkRange>{{c, c + 1}};
      };
      if (gather) {
        rail_phase(plan, chain, rails, /*reducing=*/false, own_block, across, /*paired=*/false, rail_bytes);
        ring_phase(plan, chain, servers, /*reducing=*/false, super_block);
      } else {
        ring_phase(plan, chain, servers, /*reducing=*/true, super_block);
        rail_phase(plan, chain, rails, /*reducing=*/true, own_block, across, /*paired=*/false, rail_bytes);
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

bool rails_halve_double(int servers, double rail_bytes, bool paired) {
  if (servers < 2) return false;
  int p = 1;
  int log_p = 0;
  while (p * 2 <= servers) {
    p *= 2;
    ++log_p;
  }
  const bool extras = p < servers;
  const double g = servers;
  const double ring = (g - 1) * kRailStepSeconds + (g - 1) / g * rail_bytes / kRailBytesPerSecond;
  // The extras fold their whole buffer into the others (and get it back);
  // alone, the reduce-scatter also sends the extras their block (the
  // all-gather takes it from them): a step of a block more.
  const double steps = log_p + (extras ? (paired ? 1 : 2) : 0);
  const double bytes = (p - 1.0) / p * rail_bytes + (extras ? rail_bytes * (paired ? 1.0 : 1.0 + 1.0 / g) : 0.0);
  const double halving = steps * kRailStepSeconds + bytes / kRailBytesPerSecond;
  return halving <= ring;  // 2 servers: the same plan either way
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
