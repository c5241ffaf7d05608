// File: models/collectives/hierarchical.cc
//
// Two-level lowering (see hierarchical.h). All phases of a slice form one
// chain of steps; each step holds the transfers of every server (or every
// rail) at once; a slice's j-th step also follows the previous slice's.

#include "models/collectives/hierarchical.h"

#include <algorithm>
#include <cmath>
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
/// alike) that loses nothing. Along the rails (a ring there only when
/// option "across" asks for it) it charges every step the slowest hop; a
/// step per position waiting only for its predecessor, as the ring
/// algorithm does (ring.h), was tried when the ring was the default for
/// server counts not a power of two: model A 96 nodes 91.585 -> 88.323
/// ms, but its flows, finishing at distinct instants beside the
/// all-to-all's, cost 4.7x the simulation time (20 -> 94 s).
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

/// The prime factors of n, smallest first (12: 2, 2, 3).
std::vector<int> prime_factors(int n) {
  std::vector<int> out;
  for (int f = 2; f * f <= n; ++f) {
    while (n % f == 0) {
      out.push_back(f);
      n /= f;
    }
  }
  if (n > 1) out.push_back(n);
  return out;
}

/// A reduce-scatter (or all-gather) over m = f_0 f_1 ... f_{K-1} positions
/// of each group, one dimension at a time: position p's digits in that
/// mixed radix (p = d_0 + f_0 (d_1 + f_1 (d_2 + ...)), d_k in [0, f_k)) name
/// its partners, the positions differing from it in digit k alone, at
/// stride S_k = f_0 ... f_{k-1}, and along dimension k they run a ring of
/// f_k (f_k - 1 steps). Reduce-scatter goes through k = 0, 1, ... and
/// leaves p responsible, after dimension k, for the super-blocks agreeing
/// with it in digits 0..k; all-gather undoes it, last dimension first. So
/// position p ends with (or starts from) super-block p, as in ring_phase,
/// and each dimension moves (f_k - 1)/f_k of what it holds: over all of
/// them, (m - 1)/m of a group's super-blocks per position, as a ring does in
/// m - 1 steps, here in sum(f_k - 1). A factor 2 is a pairwise exchange:
/// with every factor 2 this is recursive halving/doubling (Thakur,
/// Rabenseifner and Gropp 2005), the halves between partners at distance 1;
/// in general, the generalisation of Ruefenacht et al. 2017 (recursive
/// multiplying) with a ring per factor. Small factors first: the largest
/// transfers go between neighbouring servers (one rack) and only small
/// pieces between far ones. super_block(out, i, sb) appends the chunks of
/// group i's super-block sb.
template <typename SuperBlock>
void radix_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& groups,
                 bool reducing, const std::vector<int>& factors, const SuperBlock& super_block) {
  int m = 1;
  for (int f : factors) m *= f;
  std::vector<int> strides;
  for (int k = 0, s = 1; k < static_cast<int>(factors.size()); s *= factors[static_cast<std::size_t>(k)], ++k) {
    strides.push_back(s);
  }
  const auto dimension = [&](int k) {
    const int f = factors[static_cast<std::size_t>(k)];
    const int stride = strides[static_cast<std::size_t>(k)];
    for (int s = 0; s + 1 < f; ++s) {
      const std::uint32_t step = chain.next();
      for (std::size_t i = 0; i < groups.size(); ++i) {
        for (int p = 0; p < m; ++p) {
          const int digit = p / stride % f;
          const int q = p + (mod(digit + 1, f) - digit) * stride;
          // As ring_phase: reduce-scatter passes on the piece digit - s - 1,
          // all-gather the piece digit - s; within the super-blocks that p
          // holds, those agreeing with it below digit k.
          const int v = mod(reducing ? digit - s - 1 : digit - s, f);
          std::vector<ChunkRange> chunks;
          for (int sb = p % stride + stride * v; sb < m; sb += stride * f) super_block(chunks, i, sb);
          plan.add_transfer(step, groups[i][static_cast<std::size_t>(p)], groups[i][static_cast<std::size_t>(q)],
                            reducing ? TransferOp::kReduce : TransferOp::kCopy, std::move(chunks));
        }
      }
    }
  };
  const int dims = static_cast<int>(factors.size());
  for (int k = 0; k < dims; ++k) dimension(reducing ? k : dims - 1 - k);
}

/// Recursive halving (reduce-scatter) or doubling (all-gather) over several
/// groups at once, with ring_phase's contract. The group's n positions: P,
/// the largest power of two <= n, take part (radix_phase with every factor
/// 2); the extra positions P + k fold into position k first
/// (reduce-scatter: all their blocks, reduced; all-gather: their block) and
/// get from it last (their reduced block; every block). Block b belongs to
/// super-block b mod P. log2(P) steps, plus one for the extras each way.
/// `paired`: the reduce-scatter is followed by this all-gather (an
/// all-reduce), so the extras' round trip in between is left out.
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
  if (reducing) {
    if (extras > 0) extras_step(/*to_extras=*/false, /*whole=*/true);
  } else if (extras > 0 && !paired) {
    extras_step(/*to_extras=*/false, /*whole=*/false);
  }
  // Super-block sb: the blocks b with b mod P == sb.
  const auto super_block = [&](std::vector<ChunkRange>& out, std::size_t i, int sb) {
    for (int b = sb; b < n; b += P) append(out, i, b);
  };
  std::vector<int> twos;
  for (int p = 1; p < P; p *= 2) twos.push_back(2);
  radix_phase(plan, chain, groups, reducing, twos, super_block);
  if (reducing && extras > 0 && !paired) extras_step(/*to_extras=*/true, /*whole=*/false);
  if (!reducing && extras > 0) extras_step(/*to_extras=*/true, /*whole=*/true);
}

/// The phase across servers, along the rails, by the algorithm `across`
/// names (auto: choose_rail_algorithm). `paired` as for
/// halving_doubling_phase.
template <typename Blocks>
void rail_phase(PlanBuilder& plan, Chain& chain, const std::vector<std::vector<int>>& rails, bool reducing,
                const Blocks& blocks, RailAlgorithm across, bool paired, double rail_bytes) {
  const int g = rails.empty() ? 0 : static_cast<int>(rails.front().size());
  if (g < 2) return;
  if (across == RailAlgorithm::kAuto) across = choose_rail_algorithm(g, rail_bytes, paired);
  switch (across) {
    case RailAlgorithm::kHalvingDoubling:
      halving_doubling_phase(plan, chain, rails, reducing, blocks, paired);
      break;
    case RailAlgorithm::kMixedRadix: {
      const auto block = [&](std::vector<ChunkRange>& out, std::size_t i, int b) {
        for (const ChunkRange& r : blocks(static_cast<int>(i), b)) out.push_back(r);
      };
      radix_phase(plan, chain, rails, reducing, prime_factors(g), block);
      break;
    }
    case RailAlgorithm::kAuto:
    case RailAlgorithm::kRing:
      ring_phase(plan, chain, rails, reducing, blocks);
      break;
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
  if (options.read_enum("across", across, {"auto", "halving_doubling", "mixed_radix", "ring"})) {
    out.across = across == "ring"               ? RailAlgorithm::kRing
                 : across == "halving_doubling" ? RailAlgorithm::kHalvingDoubling
                 : across == "mixed_radix"      ? RailAlgorithm::kMixedRadix
                                                : RailAlgorithm::kAuto;
  }
  return out;
}

int hierarchical_slices(const HierarchicalOptions& options, sim::Bytes bytes_per_rank, int servers) {
  constexpr std::int64_t kMostSlices = 64;
  if (options.chunks > 0) return options.chunks;
  const std::int64_t b = std::max<std::int64_t>(bytes_per_rank.count(), 1);
  if (options.chunk_bytes > 0) {
    return static_cast<int>(std::min(kMostSlices, (b + options.chunk_bytes - 1) / options.chunk_bytes));
  }
  // The default: nothing to overlap inside one server; across servers
  // sqrt(bytes / kDefaultSliceScaleBytes), rounded (IEEE sqrt is exact to
  // the last bit: the same count on every machine).
  if (servers < 2) return 1;
  const double k = std::floor(std::sqrt(static_cast<double>(b) / static_cast<double>(kDefaultSliceScaleBytes)) + 0.5);
  return static_cast<int>(std::clamp(k, 1.0, static_cast<double>(kDefaultMostSlices)));
}

double rail_phase_seconds(RailAlgorithm algorithm, int servers, double rail_bytes, bool paired) {
  if (servers < 2) return 0.0;
  const double g = servers;
  double steps = 0.0;
  double bytes = (g - 1) / g * rail_bytes;
  switch (algorithm) {
    case RailAlgorithm::kAuto:
      return rail_phase_seconds(choose_rail_algorithm(servers, rail_bytes, paired), servers, rail_bytes, paired);
    case RailAlgorithm::kRing:
      steps = g - 1;
      break;
    case RailAlgorithm::kMixedRadix:
      for (int f : prime_factors(servers)) steps += f - 1;
      break;
    case RailAlgorithm::kHalvingDoubling: {
      int p = 1;
      while (p * 2 <= servers) {
        p *= 2;
        steps += 1;
      }
      if (p < servers) {
        // The extras fold their whole buffer into the others (and get it
        // back); alone, the reduce-scatter also sends the extras their
        // block (the all-gather takes it from them): a step of a block more.
        steps += paired ? 1 : 2;
        bytes = (p - 1.0) / p * rail_bytes + rail_bytes * (paired ? 1.0 : 1.0 + 1.0 / g);
      }
      break;
    }
  }
  return steps * kRailStepSeconds + bytes / kRailBytesPerSecond;
}

RailAlgorithm choose_rail_algorithm(int servers, double rail_bytes, bool paired) {
  // A ring is never faster than mixed radix (the same bytes, as many steps
  // at most: the same plan for a prime count).
  const double mixed = rail_phase_seconds(RailAlgorithm::kMixedRadix, servers, rail_bytes, paired);
  const double folded = rail_phase_seconds(RailAlgorithm::kHalvingDoubling, servers, rail_bytes, paired);
  return folded < mixed ? RailAlgorithm::kHalvingDoubling : RailAlgorithm::kMixedRadix;
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
      request.kind == CollectiveKind::kAllToAll ? 1 : hierarchical_slices(options_, request.bytes_per_rank, num_servers);
  std::vector<std::uint32_t> previous;
  for (int j = 0; j < slices; ++j) {
    Chain chain(plan, j == 0 ? nullptr : &previous);
    lower_slice(request, plan, chain, servers, rails, j, slices, elem, G, options_.across);
    previous = std::move(chain.steps());
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
