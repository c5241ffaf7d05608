// File: models/collectives/tree.cc
//
// Tree lowering (see tree.h). Steps are created root-first for downward
// traffic and leaves-first for upward traffic, so every step follows only
// earlier steps.

#include "models/collectives/tree.h"

#include <algorithm>
#include <optional>
#include <string>

#include "base/json_reader.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {
namespace {

using internal::PlanBuilder;

/// A rooted tree over positions: parents, children, and a root-first order.
struct Tree {
  std::vector<std::optional<int>> parent;
  std::vector<std::vector<int>> children;
  std::vector<int> top_down;  // breadth-first from the root
};

Tree make_tree(std::vector<std::optional<int>> parent) {
  Tree t;
  t.children = internal::children_of(parent);
  t.parent = std::move(parent);
  for (std::size_t r = 0; r < t.parent.size(); ++r) {
    if (!t.parent[r]) t.top_down.push_back(static_cast<int>(r));
  }
  for (std::size_t i = 0; i < t.top_down.size(); ++i) {
    for (int c : t.children[static_cast<std::size_t>(t.top_down[i])]) t.top_down.push_back(c);
  }
  return t;
}

/// NCCL's second tree: the binary tree shifted by one position (n odd) or
/// mirrored (n even).
std::vector<std::optional<int>> second_tree_parents(int n) {
  const auto base = internal::btree_parents(n);
  std::vector<std::optional<int>> parents(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    if (n % 2 == 1) {
      const auto up = base[static_cast<std::size_t>((r - 1 + n) % n)];
      if (up) parents[static_cast<std::size_t>(r)] = (*up + 1) % n;
    } else {
      const auto up = base[static_cast<std::size_t>(n - 1 - r)];
      if (up) parents[static_cast<std::size_t>(r)] = n - 1 - *up;
    }
  }
  return parents;
}

/// Pipelined reduction of `pieces` up `tree` (position -> member via
/// `member`). Returns, per piece, the steps that deliver into the root.
std::vector<std::vector<std::uint32_t>> reduce_up(PlanBuilder& plan, const Tree& tree,
                                                  const std::vector<int>& member,
                                                  const std::vector<std::uint32_t>& pieces) {
  const std::size_t n = tree.parent.size();
  std::vector<std::vector<std::uint32_t>> into_root(pieces.size());
  std::vector<std::optional<std::uint32_t>> up(n), previous(n);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    for (auto it = tree.top_down.rbegin(); it != tree.top_down.rend(); ++it) {
      const int v = *it;
      if (!tree.parent[static_cast<std::size_t>(v)]) continue;
      std::vector<std::uint32_t> after;
      for (int c : tree.children[static_cast<std::size_t>(v)])
        after.push_back(*up[static_cast<std::size_t>(c)]);
      if (previous[static_cast<std::size_t>(v)])
        after.push_back(*previous[static_cast<std::size_t>(v)]);
      const std::uint32_t step = plan.add_step(std::move(after));
      const int p = *tree.parent[static_cast<std::size_t>(v)];
      plan.add_transfer(step, member[static_cast<std::size_t>(v)],
                        member[static_cast<std::size_t>(p)], TransferOp::kReduce, pieces[k]);
      up[static_cast<std::size_t>(v)] = previous[static_cast<std::size_t>(v)] = step;
      if (!tree.parent[static_cast<std::size_t>(p)]) into_root[k].push_back(step);
    }
  }
  return into_root;
}

/// Pipelined broadcast of `pieces` down `tree`; piece k starts after
/// `ready[k]` (empty: at once).
void broadcast_down(PlanBuilder& plan, const Tree& tree, const std::vector<int>& member,
                    const std::vector<std::uint32_t>& pieces,
                    const std::vector<std::vector<std::uint32_t>>& ready) {
  const std::size_t n = tree.parent.size();
  std::vector<std::optional<std::uint32_t>> down(n), previous(n);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    for (int v : tree.top_down) {
      if (!tree.parent[static_cast<std::size_t>(v)]) continue;
      const int p = *tree.parent[static_cast<std::size_t>(v)];
      std::vector<std::uint32_t> after;
      if (tree.parent[static_cast<std::size_t>(p)]) {
        after.push_back(*down[static_cast<std::size_t>(p)]);
      } else if (!ready.empty()) {
        after = ready[k];
      }
      if (previous[static_cast<std::size_t>(v)])
        after.push_back(*previous[static_cast<std::size_t>(v)]);
      const std::uint32_t step = plan.add_step(std::move(after));
      plan.add_transfer(step, member[static_cast<std::size_t>(p)],
                        member[static_cast<std::size_t>(v)], TransferOp::kCopy, pieces[k]);
      down[static_cast<std::size_t>(v)] = previous[static_cast<std::size_t>(v)] = step;
    }
  }
}

}  // namespace

TreeOptions parse_tree_options(json::ObjectReader& options) {
  TreeOptions out;
  options.read_int("chunks", out.chunks, {.min = 1, .max = 1024});
  return out;
}

CollectivePlan TreeAlgorithm::lower(const CollectiveRequest& request,
                                    const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const bool broadcast = request.kind == CollectiveKind::kBroadcast;
  // Position 0 (the tree's root) is the request's root.
  std::vector<int> member = topology.ring_order();
  std::rotate(member.begin(), std::find(member.begin(), member.end(), request.root), member.end());
  PlanBuilder plan(request.kind, n);
  std::vector<std::uint32_t> pieces;
  for (sim::Bytes size :
       split_bytes(request.bytes_per_rank, options_.chunks, size_bytes(request.dtype))) {
    pieces.push_back(plan.add_chunk(size,
                                    broadcast ? std::optional<int>(request.root) : std::nullopt,
                                    broadcast ? std::nullopt : std::optional<int>(request.root)));
  }
  const Tree tree = make_tree(internal::btree_parents(n));
  if (broadcast) {
    broadcast_down(plan, tree, member, pieces, {});
  } else {
    reduce_up(plan, tree, member, pieces);
  }
  return std::move(plan).finish();
}

DoubleBinaryTreeOptions parse_double_binary_tree_options(json::ObjectReader& options) {
  DoubleBinaryTreeOptions out;
  options.read_int("chunks", out.chunks, {.min = 1, .max = 1024});
  options.read_int("channels", out.channels, {.min = 1, .max = 64});
  std::string layout;
  if (options.read_enum("layout", layout, {"flat", "servers"})) {
    out.layout = layout == "flat" ? DoubleBinaryTreeOptions::Layout::kFlat : DoubleBinaryTreeOptions::Layout::kServers;
  }
  return out;
}

CollectivePlan DoubleBinaryTreeAlgorithm::lower(const CollectiveRequest& request,
                                                const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const int elem = size_bytes(request.dtype);
  PlanBuilder plan(request.kind, n);
  const int channels = options_.channels;
  const std::vector<std::vector<int>> servers = topology.members_by_server();
  const int num_servers = static_cast<int>(servers.size());
  // Tree t of channel c over group indices (positions are members).
  std::vector<int> identity(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) identity[static_cast<std::size_t>(i)] = i;
  const auto layout_tree = [&](int t, int c) {
    if (options_.layout == DoubleBinaryTreeOptions::Layout::kFlat) {
      const std::vector<int> order = topology.ring_order(c);  // position -> member
      const auto by_position = t == 0 ? internal::btree_parents(n) : second_tree_parents(n);
      std::vector<std::optional<int>> parents(static_cast<std::size_t>(n));
      for (int p = 0; p < n; ++p) {
        if (const auto up = by_position[static_cast<std::size_t>(p)]) {
          parents[static_cast<std::size_t>(order[static_cast<std::size_t>(p)])] = order[static_cast<std::size_t>(*up)];
        }
      }
      return make_tree(std::move(parents));
    }
    // Each server's chain, starting at its (c mod size)-th member; the
    // servers' trees join the chains' heads.
    const auto server_parent = t == 0 ? internal::btree_parents(num_servers) : second_tree_parents(num_servers);
    const auto head = [&](int s) {
      const std::vector<int>& m = servers[static_cast<std::size_t>(s)];
      return m[static_cast<std::size_t>(c) % m.size()];
    };
    std::vector<std::optional<int>> parents(static_cast<std::size_t>(n));
    for (int s = 0; s < num_servers; ++s) {
      const std::vector<int>& m = servers[static_cast<std::size_t>(s)];
      const std::size_t first = static_cast<std::size_t>(c) % m.size();
      for (std::size_t i = 1; i < m.size(); ++i) {
        parents[static_cast<std::size_t>(m[(first + i) % m.size()])] = m[(first + i - 1) % m.size()];
      }
      if (const auto up = server_parent[static_cast<std::size_t>(s)]) parents[static_cast<std::size_t>(head(s))] = head(*up);
    }
    return make_tree(std::move(parents));
  };
  // The buffer in halves, each half over the channels, each part in chunks.
  const auto halves = split_bytes(request.bytes_per_rank, 2, elem);
  std::vector<Tree> trees;
  std::vector<std::vector<std::uint32_t>> pieces;
  for (int t = 0; t < 2; ++t) {
    const auto parts = split_bytes(halves[static_cast<std::size_t>(t)], channels, elem);
    for (int c = 0; c < channels; ++c) {
      trees.push_back(layout_tree(t, c));
      pieces.emplace_back();
      for (sim::Bytes size : split_bytes(parts[static_cast<std::size_t>(c)], options_.chunks, elem)) {
        pieces.back().push_back(plan.add_chunk(size, {}, {}));
      }
    }
  }
  // Every tree reduces up first, then broadcasts down; the executor runs the
  // trees concurrently since their steps are independent.
  std::vector<std::vector<std::vector<std::uint32_t>>> into_root;
  for (std::size_t i = 0; i < trees.size(); ++i) into_root.push_back(reduce_up(plan, trees[i], identity, pieces[i]));
  for (std::size_t i = 0; i < trees.size(); ++i) broadcast_down(plan, trees[i], identity, pieces[i], into_root[i]);
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
