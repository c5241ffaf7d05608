// File: models/collectives/tree.h
//
// Tree collectives on NCCL's binary tree (ncclGetBtree: position r with lowest
// set bit b has parent (r ^ b) | (b << 1), or r ^ b when that falls outside
// the group), over the group's members in ring_order() so that neighbours in
// the tree tend to share a server. Every transfer is pipelined in `chunks`
// pieces: a node forwards piece k as soon as it has it (one step per piece
// and tree edge), and sends its pieces in order.
//
//   tree                broadcast (root down the tree, copies) and reduce
//                       (leaves up to the root, reductions); the tree is
//                       rooted at the request's root.
//   double_binary_tree  all-reduce on two complementary binary trees, each
//                       carrying half the buffer: reduce up, broadcast down
//                       (P. Sanders, J. Speck, J. L. Träff, "Two-tree
//                       algorithms for full bandwidth broadcast, reduction and
//                       scan", Parallel Computing 35(12), 2009; NCCL 2.4's
//                       ncclGetDtree: the second tree is the first shifted by
//                       one position when n is odd, mirrored when n is even).
//                       Every tree edge carries each half twice, so all ranks
//                       together send 2(n-1) x S.
//
//                       Layout "servers" (the default), as NCCL builds them:
//                       the two trees span the servers, and inside each
//                       server the members form a chain whose head talks to
//                       the parent server's head and the child servers'
//                       heads (NCCL's TREE pattern), so each tree edge
//                       between servers carries each half twice: 2(N-1) x S
//                       crosses the fabric on N servers. Layout "flat": the
//                       trees span the members directly (ring order).
//                       Option "channels" K: the buffer splits over K tree
//                       pairs; channel c's chains start at each server's
//                       (c mod size)-th member, so the channels leave
//                       servers through different GPUs and NICs, as NCCL's
//                       do (the ring's channels likewise).

#ifndef ZIONSIM_MODELS_COLLECTIVES_TREE_H_
#define ZIONSIM_MODELS_COLLECTIVES_TREE_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models::collectives {

struct TreeOptions {
  int chunks = 1;  ///< pipeline pieces (per tree), in [1, 1024]
};

/// Reads {"chunks": int}; problems go to the reader's diagnostics.
TreeOptions parse_tree_options(json::ObjectReader& options);

class TreeAlgorithm : public CollectiveAlgorithm {
 public:
  explicit TreeAlgorithm(TreeOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "tree"; }
  bool supports(CollectiveKind kind) const override {
    return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
  }
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;

 private:
  TreeOptions options_;
};

struct DoubleBinaryTreeOptions {
  enum class Layout { kServers, kFlat };
  int chunks = 1;    ///< pipeline pieces per tree and channel, in [1, 1024]
  int channels = 1;  ///< tree pairs, in [1, 64]
  Layout layout = Layout::kServers;
};

/// Reads {"chunks": int, "channels": int, "layout": "servers"|"flat"};
/// problems go to the reader's diagnostics.
DoubleBinaryTreeOptions parse_double_binary_tree_options(json::ObjectReader& options);

class DoubleBinaryTreeAlgorithm : public CollectiveAlgorithm {
 public:
  explicit DoubleBinaryTreeAlgorithm(DoubleBinaryTreeOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "double_binary_tree"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllReduce; }
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;

 private:
  DoubleBinaryTreeOptions options_;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_TREE_H_
