// File: topology/topology.h
//
// An immutable cluster graph and the validating builder that makes one.
//
// Nodes are devices (GPUs, switches, CPUs, NICs); links are directed, and a
// full-duplex cable is two links, one per direction. Ids are dense and follow
// insertion order, so every iteration over nodes or links is deterministic.
// The graph is stored as a Boost.Graph adjacency_list with bundled properties
// (STYLE.md 10.6); Boost stays out of this header: callers see ids and spans.

#ifndef ZIONSIM_TOPOLOGY_TOPOLOGY_H_
#define ZIONSIM_TOPOLOGY_TOPOLOGY_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "topology/types.h"

namespace zx::topology {

namespace internal {
struct TopologyImpl;
}  // namespace internal

/// A frozen cluster graph. Cheap to copy (the graph is shared and immutable).
class Topology {
 public:
  std::size_t num_nodes() const;
  std::size_t num_links() const;
  const NodeInfo& node(NodeId id) const;
  const LinkInfo& link(LinkId id) const;
  /// Links leaving / entering `id`, in link insertion order.
  std::span<const LinkId> out_links(NodeId id) const;
  std::span<const LinkId> in_links(NodeId id) const;

  /// GPUs are numbered by rank 0..num_gpus()-1 (the builder checks density).
  int num_gpus() const;
  NodeId gpu(int rank) const;
  std::optional<NodeId> find(std::string_view name) const;

 private:
  friend class TopologyBuilder;
  friend void write_graphviz(std::ostream& out, const Topology& topology);
  explicit Topology(std::shared_ptr<const internal::TopologyImpl> impl);
  std::shared_ptr<const internal::TopologyImpl> impl_;
};

/// Accumulates nodes and links, then validates everything at once in build().
/// add_* never throw for bad input; build() throws one zx::InputError listing
/// every problem (duplicate names, dangling endpoints, self loops, efficiency
/// outside (0, 1], negative latency, GPU ranks not dense, GPUs that cannot
/// reach each other, a GPU with no path to or from a CPU socket of its
/// server inside the server when the server has sockets).
class TopologyBuilder {
 public:
  /// `source` names the input in diagnostics ("<preset zionex>", "cluster.json").
  explicit TopologyBuilder(std::string source = "<topology>");
  ~TopologyBuilder();
  TopologyBuilder(TopologyBuilder&&) noexcept;
  TopologyBuilder& operator=(TopologyBuilder&&) noexcept;

  /// `origin`, when given, is where the node or link came from (a JSON
  /// pointer such as "/links/3"); build() then reports its problems there
  /// instead of at "node 7 'name'" or "link 12".
  NodeId add_node(NodeInfo info, std::string origin = {});
  LinkId add_link(NodeId src, NodeId dst, const LinkSpec& spec, std::string origin = {});
  /// A full-duplex cable: the link a->b, then b->a, with the same parameters.
  std::pair<LinkId, LinkId> add_cable(NodeId a, NodeId b, const LinkSpec& spec,
                                      std::string origin = {});

  std::size_t num_nodes() const;
  std::size_t num_links() const;

  /// Validates and freezes. The builder is left empty.
  Topology build();

  /// The nodes and links added so far (opaque; topology.cc's build stages
  /// read it).
  struct Pending;

 private:
  std::string source_;
  std::unique_ptr<Pending> pending_;
};

/// Writes the graph in GraphViz DOT (Boost.Graph's writer): one vertex per
/// node labelled with its name and shaped by kind, one edge per full-duplex
/// cable (or directed link without a reverse twin) labelled with its kind and
/// bandwidth per direction.
void write_graphviz(std::ostream& out, const Topology& topology);

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_TOPOLOGY_H_
