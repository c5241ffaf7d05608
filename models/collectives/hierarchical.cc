// File: models/collectives/hierarchical.cc
//
// Two-level lowering (see hierarchical.h). All phases form one chain of
// steps; each step holds the transfers of every server (or every rail) at once.

#include "models/collectives/hierarchical.h"

#include <fmt/format.h>

#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {
namespace {

using internal::PlanBuilder;

int mod(int a, int n) { return ((a % n) + n) % n; }

/// A chain of steps: each new step follows the previous one.
class Chain {
 public:
  explicit Chain(PlanBuilder& plan) : plan_(plan) {}
  std::uint32_t next() {
    std::vector<std::uint32_t> after;
    if (last_) after.push_back(*last_);
    last_ = plan_.add_step(std::move(after));
    return *last_;
  }

 private:
  PlanBuilder& plan_;
  std::optional<std::uint32_t> last_;
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

}  // namespace

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
  Chain chain(plan);
  const int elem = size_bytes(request.dtype);

  switch (request.kind) {
    case CollectiveKind::kAllReduce: {
      // Chunk l * G + g: piece g of the 1/L block that rail l all-reduces.
      for (sim::Bytes block : split_bytes(request.bytes_per_rank, per_server, elem)) {
        for (sim::Bytes piece : split_bytes(block, num_servers, elem))
          plan.add_chunk(piece, {}, {});
      }
      const auto super_block = [&](int, int l) {
        return std::vector<ChunkRange>{
            {static_cast<std::uint32_t>(l) * G, static_cast<std::uint32_t>(l + 1) * G}};
      };
      const auto piece = [&](int l, int g) {
        const auto c = static_cast<std::uint32_t>(l) * G + static_cast<std::uint32_t>(g);
        return std::vector<ChunkRange>{{c, c + 1}};
      };
      ring_phase(plan, chain, servers, /*reducing=*/true, super_block);
      ring_phase(plan, chain, rails, /*reducing=*/true, piece);
      ring_phase(plan, chain, rails, /*reducing=*/false, piece);
      ring_phase(plan, chain, servers, /*reducing=*/false, super_block);
      break;
    }
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: {
      // Chunk r: rank r's block. Rail l's super-block: the blocks of its members.
      const bool gather = request.kind == CollectiveKind::kAllGather;
      const auto blocks = block_sizes(request);
      for (int r = 0; r < n; ++r) {
        plan.add_chunk(blocks[static_cast<std::size_t>(r)],
                       gather ? std::optional<int>(r) : std::nullopt,
                       gather ? std::nullopt : std::optional<int>(r));
      }
      std::vector<std::vector<ChunkRange>> rail_blocks;
      for (const auto& rail : rails) {
        rail_blocks.push_back(internal::to_ranges({rail.begin(), rail.end()}));
      }
      const auto super_block = [&](int, int l) { return rail_blocks[static_cast<std::size_t>(l)]; };
      const auto own_block = [&](int l, int g) {
        const auto c = static_cast<std::uint32_t>(rails[l][g]);
        return std::vector<ChunkRange>{{c, c + 1}};
      };
      if (gather) {
        ring_phase(plan, chain, rails, /*reducing=*/false, own_block);
        ring_phase(plan, chain, servers, /*reducing=*/false, super_block);
      } else {
        ring_phase(plan, chain, servers, /*reducing=*/true, super_block);
        ring_phase(plan, chain, rails, /*reducing=*/true, own_block);
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
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
