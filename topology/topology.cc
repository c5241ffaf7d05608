// File: topology/topology.cc
//
// Topology storage on Boost.Graph and the builder's validation.

#include "topology/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>

#include "base/check.h"
#include "base/error.h"

// GCC 12 with -O1 and sanitizers flags boost::optional's empty state in
// named_graph.hpp as uninitialised (a false positive in Boost's headers).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/range/iterator_range.hpp>
#pragma GCC diagnostic pop

namespace zx::topology {
namespace internal {

struct NodeProps {
  NodeInfo info;
};
struct LinkProps {
  LinkInfo info;
};

// vecS/vecS: vertex descriptors are the dense NodeIds and iteration follows
// insertion order; bidirectionalS gives in-edges for reachability checks.
using Graph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, NodeProps, LinkProps>;

struct TopologyImpl {
  Graph graph;
  std::vector<Graph::edge_descriptor> edge_of;  // by LinkId
  // A flat copy of the link bundles: routing reads link(id) on every hop, and
  // bidirectionalS keeps edge properties in list nodes scattered in memory.
  std::vector<LinkInfo> links;
  // Compressed adjacency: links of node v are [offsets[v], offsets[v + 1]).
  std::vector<std::uint32_t> out_offsets, in_offsets;
  std::vector<LinkId> out_flat, in_flat;
  std::vector<NodeId> gpu_by_rank;
  std::map<std::string, NodeId, std::less<>> by_name;
};

}  // namespace internal

using internal::Graph;
using internal::TopologyImpl;

Topology::Topology(std::shared_ptr<const TopologyImpl> impl) : impl_(std::move(impl)) {}

std::size_t Topology::num_nodes() const { return boost::num_vertices(impl_->graph); }
std::size_t Topology::num_links() const { return impl_->edge_of.size(); }

const NodeInfo& Topology::node(NodeId id) const {
  ZX_CHECK(index(id) < num_nodes(), "node id out of range");
  return impl_->graph[index(id)].info;
}

const LinkInfo& Topology::link(LinkId id) const {
  ZX_CHECK(index(id) < num_links(), "link id out of range");
  return impl_->links[index(id)];
}

std::span<const LinkId> Topology::out_links(NodeId id) const {
  ZX_CHECK(index(id) < num_nodes(), "node id out of range");
  const auto& o = impl_->out_offsets;
  return {impl_->out_flat.data() + o[index(id)], o[index(id) + 1] - o[index(id)]};
}

std::span<const LinkId> Topology::in_links(NodeId id) const {
  ZX_CHECK(index(id) < num_nodes(), "node id out of range");
  const auto& o = impl_->in_offsets;
  return {impl_->in_flat.data() + o[index(id)], o[index(id) + 1] - o[index(id)]};
}

int Topology::num_gpus() const { return static_cast<int>(impl_->gpu_by_rank.size()); }

NodeId Topology::gpu(int rank) const {
  ZX_CHECK(rank >= 0 && rank < num_gpus(), fmt::format("GPU rank {} out of range", rank));
  return impl_->gpu_by_rank[static_cast<std::size_t>(rank)];
}

std::optional<NodeId> Topology::find(std::string_view name) const {
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

struct TopologyBuilder::Pending {
  std::vector<NodeInfo> nodes;
  std::vector<LinkInfo> links;
  std::vector<std::string> node_origins;  // parallel to nodes; may be empty strings
  std::vector<std::string> link_origins;
};

TopologyBuilder::TopologyBuilder(std::string source)
    : source_(std::move(source)), pending_(std::make_unique<Pending>()) {}
TopologyBuilder::~TopologyBuilder() = default;
TopologyBuilder::TopologyBuilder(TopologyBuilder&&) noexcept = default;
TopologyBuilder& TopologyBuilder::operator=(TopologyBuilder&&) noexcept = default;

NodeId TopologyBuilder::add_node(NodeInfo info, std::string origin) {
  pending_->nodes.push_back(std::move(info));
  pending_->node_origins.push_back(std::move(origin));
  return NodeId{static_cast<std::uint32_t>(pending_->nodes.size() - 1)};
}

LinkId TopologyBuilder::add_link(NodeId src, NodeId dst, const LinkSpec& spec,
                                 std::string origin) {
  const LinkId id{static_cast<std::uint32_t>(pending_->links.size())};
  pending_->link_origins.push_back(std::move(origin));
  pending_->links.push_back(LinkInfo{.id = id,
                                     .src = src,
                                     .dst = dst,
                                     .kind = spec.kind,
                                     .bandwidth = spec.bandwidth,
                                     .latency = spec.latency,
                                     .efficiency = spec.efficiency});
  return id;
}

std::pair<LinkId, LinkId> TopologyBuilder::add_cable(NodeId a, NodeId b, const LinkSpec& spec,
                                                    std::string origin) {
  const LinkId ab = add_link(a, b, spec, origin);
  const LinkId ba = add_link(b, a, spec, std::move(origin));
  return {ab, ba};
}

std::size_t TopologyBuilder::num_nodes() const { return pending_->nodes.size(); }
std::size_t TopologyBuilder::num_links() const { return pending_->links.size(); }

namespace {

// Marks every vertex that BFS from `start` reaches in `g`.
template <typename G>
std::vector<bool> reachable_from(const G& g, std::size_t start) {
  std::vector<boost::default_color_type> color(boost::num_vertices(g), boost::white_color);
  boost::breadth_first_search(g, boost::vertex(start, g),
                              boost::color_map(boost::make_iterator_property_map(
                                  color.begin(), boost::get(boost::vertex_index, g))));
  std::vector<bool> seen(color.size());
  for (std::size_t i = 0; i < color.size(); ++i) seen[i] = color[i] != boost::white_color;
  return seen;
}

// What a search from every CPU socket reaches without leaving the socket's
// server, passing only through switches and sockets (a GPU or a NIC may end
// a path, not carry it on): over `g`'s links forward, or backward when `g`
// is the reversed graph. `nodes` gives each vertex's NodeInfo.
template <class G>
std::vector<bool> reached_from_hosts(const G& g, const internal::Graph& nodes) {
  const std::size_t n = boost::num_vertices(nodes);
  std::vector<bool> seen(n, false);
  std::vector<std::size_t> queue;
  for (std::size_t i = 0; i < n; ++i) {
    const NodeInfo& info = nodes[i].info;
    if (info.kind == NodeKind::kCpu && info.server >= 0) {
      seen[i] = true;
      queue.push_back(i);
    }
  }
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const std::size_t v = queue[q];
    const NodeInfo& at = nodes[v].info;
    if (at.kind == NodeKind::kGpu || at.kind == NodeKind::kNic) continue;
    for (const auto e : boost::make_iterator_range(boost::out_edges(boost::vertex(v, g), g))) {
      const std::size_t w = boost::target(e, g);
      if (seen[w] || nodes[w].info.server != at.server) continue;
      seen[w] = true;
      queue.push_back(w);
    }
  }
  return seen;
}

}  // namespace

namespace {

// The problems build() finds, each at its node or link (as the file that
// made it names it, else by index).
class BuildChecks {
 public:
  BuildChecks(const std::string& source, const TopologyBuilder::Pending& p) : source_(source), p_(p) {
    // Node names are moved into the graph; keep them for messages.
    for (const NodeInfo& info : p.nodes) node_names_.push_back(info.name);
  }
  void error(std::string location, std::string message) {
    errors_.push_back(Diagnostic{source_, std::move(location), std::move(message)});
  }
  std::string node_where(std::size_t i) const {
    return p_.node_origins[i].empty() ? fmt::format("node {} '{}'", i, node_names_[i]) : p_.node_origins[i];
  }
  std::vector<Diagnostic>& errors() { return errors_; }

 private:
  const std::string& source_;
  const TopologyBuilder::Pending& p_;
  std::vector<std::string> node_names_;
  std::vector<Diagnostic> errors_;
};

// Nodes: unique names, rank only on GPUs, ranks dense. Returns how many GPUs
// hold each rank.
std::vector<int> check_nodes(const TopologyBuilder::Pending& p, TopologyImpl& impl, BuildChecks& checks) {
  std::vector<int> rank_count;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const NodeInfo& info = p.nodes[i];
    const std::string where = checks.node_where(i);
    if (info.name.empty()) checks.error(where, "expected a non-empty name");
    auto [it, inserted] = impl.by_name.emplace(info.name, NodeId{static_cast<std::uint32_t>(i)});
    if (!inserted) checks.error(where, fmt::format("duplicate name, first used by node {}", index(it->second)));
    if (info.kind == NodeKind::kGpu) {
      if (info.rank < 0) {
        checks.error(where, fmt::format("expected a GPU rank >= 0, got {}", info.rank));
      } else {
        if (static_cast<std::size_t>(info.rank) >= rank_count.size()) {
          rank_count.resize(static_cast<std::size_t>(info.rank) + 1);
        }
        ++rank_count[static_cast<std::size_t>(info.rank)];
      }
    } else if (info.rank != -1) {
      checks.error(where, fmt::format("expected rank -1 on a {}, got {}", to_string(info.kind), info.rank));
    }
    if ((info.tier != SwitchTier::kNone) != (info.kind == NodeKind::kEthernetSwitch)) {
      checks.error(where,
                   fmt::format("switch tier '{}' does not fit a {}", to_string(info.tier), to_string(info.kind)));
    }
  }
  for (std::size_t r = 0; r < rank_count.size(); ++r) {
    if (rank_count[r] != 1) {
      checks.error("gpu ranks",
                   fmt::format("expected ranks dense in 0..n-1, rank {} is used by {} GPUs", r, rank_count[r]));
    }
  }
  return rank_count;
}

// Links: endpoints that exist, no self loop, efficiency and latency in range.
void check_links(const TopologyBuilder::Pending& p, BuildChecks& checks) {
  const std::size_t n = p.nodes.size();
  for (const LinkInfo& l : p.links) {
    const std::string where =
        p.link_origins[index(l.id)].empty() ? fmt::format("link {}", index(l.id)) : p.link_origins[index(l.id)];
    bool endpoints_ok = true;
    for (NodeId end : {l.src, l.dst}) {
      if (index(end) >= n) {
        checks.error(where, fmt::format("endpoint node {} does not exist ({} nodes)", index(end), n));
        endpoints_ok = false;
      }
    }
    if (endpoints_ok && l.src == l.dst) {
      checks.error(where, fmt::format("self loop on node '{}'", p.nodes[index(l.src)].name));
    }
    if (!(l.efficiency >= sim::kMinEfficiency && l.efficiency <= 1.0)) {
      checks.error(where, fmt::format("expected efficiency in [{}, 1], got {}", sim::kMinEfficiency, l.efficiency));
    }
    if (l.latency < sim::Duration::zero()) {
      checks.error(where, fmt::format("expected latency >= 0, got {}", l.latency.to_string()));
    }
  }
}

// The graph proper, only from links whose endpoints exist.
void add_graph(TopologyBuilder::Pending& p, TopologyImpl& impl) {
  const std::size_t n = p.nodes.size();
  for (NodeInfo& info : p.nodes) boost::add_vertex(internal::NodeProps{std::move(info)}, impl.graph);
  for (const LinkInfo& l : p.links) {
    if (index(l.src) >= n || index(l.dst) >= n) continue;
    auto [e, added] = boost::add_edge(index(l.src), index(l.dst), internal::LinkProps{l}, impl.graph);
    ZX_CHECK(added, "vecS out-edge lists accept parallel edges");
    impl.edge_of.push_back(e);
    impl.links.push_back(l);
  }
}

// GPU ranks and all-pairs reachability (forward from GPU 0 and backward to
// it: together every GPU reaches every other).
void index_gpus(TopologyImpl& impl, std::size_t ranks, BuildChecks& checks) {
  impl.gpu_by_rank.resize(ranks);
  for (std::size_t i = 0; i < boost::num_vertices(impl.graph); ++i) {
    const NodeInfo& info = impl.graph[i].info;
    if (info.kind == NodeKind::kGpu) impl.gpu_by_rank[static_cast<std::size_t>(info.rank)] = NodeId{static_cast<std::uint32_t>(i)};
  }
  if (impl.gpu_by_rank.empty()) {
    // Every command simulates GPUs: a graph without one is refused here,
    // not found later as an empty rank range.
    checks.error("/nodes", "the cluster has no GPU: expected at least one node of kind \"gpu\"");
  }
  if (impl.gpu_by_rank.size() <= 1) return;
  const std::size_t g0 = index(impl.gpu_by_rank[0]);
  const std::vector<bool> fwd = reachable_from(impl.graph, g0);
  const std::vector<bool> bwd = reachable_from(boost::make_reverse_graph(impl.graph), g0);
  for (NodeId g : impl.gpu_by_rank) {
    if (!fwd[index(g)] || !bwd[index(g)]) {
      const NodeInfo& info = impl.graph[index(g)].info;
      checks.error(checks.node_where(index(g)),
                   fmt::format("GPU rank {} and GPU rank 0 cannot reach each other", info.rank));
    }
  }
}

// Host copies (input batches, host-memory tables' rows) run between a GPU
// and a CPU socket of its server, inside the server: on a server with
// sockets, every GPU needs such a path each way.
void check_host_paths(const TopologyImpl& impl, BuildChecks& checks) {
  std::vector<bool> has_host;
  for (std::size_t i = 0; i < boost::num_vertices(impl.graph); ++i) {
    const NodeInfo& info = impl.graph[i].info;
    if (info.kind != NodeKind::kCpu || info.server < 0) continue;
    if (has_host.size() <= static_cast<std::size_t>(info.server)) {
      has_host.resize(static_cast<std::size_t>(info.server) + 1, false);
    }
    has_host[static_cast<std::size_t>(info.server)] = true;
  }
  if (has_host.empty()) return;
  const std::vector<bool> down = reached_from_hosts(impl.graph, impl.graph);
  const std::vector<bool> up = reached_from_hosts(boost::make_reverse_graph(impl.graph), impl.graph);
  for (NodeId g : impl.gpu_by_rank) {
    const NodeInfo& info = impl.graph[index(g)].info;
    const auto server = static_cast<std::size_t>(info.server);
    if (info.server < 0 || server >= has_host.size() || !has_host[server]) continue;
    if (!down[index(g)] || !up[index(g)]) {
      checks.error(checks.node_where(index(g)),
                   fmt::format("GPU rank {} has no path {} a CPU socket of its server (server {}) inside the "
                               "server, through switches only: its host copies (input batches) need one each way; "
                               "link its PCIe switch to a socket",
                               info.rank, !down[index(g)] ? "from" : "to", info.server));
    }
  }
}

// Compressed adjacency in link insertion order.
void build_adjacency(const TopologyBuilder::Pending& p, TopologyImpl& impl) {
  const std::size_t n = p.nodes.size();
  impl.out_offsets.assign(n + 1, 0);
  impl.in_offsets.assign(n + 1, 0);
  for (const LinkInfo& l : p.links) {
    ++impl.out_offsets[index(l.src) + 1];
    ++impl.in_offsets[index(l.dst) + 1];
  }
  for (std::size_t i = 0; i < n; ++i) {
    impl.out_offsets[i + 1] += impl.out_offsets[i];
    impl.in_offsets[i + 1] += impl.in_offsets[i];
  }
  impl.out_flat.resize(p.links.size());
  impl.in_flat.resize(p.links.size());
  std::vector<std::uint32_t> out_next(impl.out_offsets.begin(), impl.out_offsets.end() - 1);
  std::vector<std::uint32_t> in_next(impl.in_offsets.begin(), impl.in_offsets.end() - 1);
  for (const LinkInfo& l : p.links) {
    impl.out_flat[out_next[index(l.src)]++] = l.id;
    impl.in_flat[in_next[index(l.dst)]++] = l.id;
  }
}

}  // namespace

Topology TopologyBuilder::build() {
  std::unique_ptr<Pending> p = std::exchange(pending_, std::make_unique<Pending>());
  BuildChecks checks(source_, *p);
  auto impl = std::make_shared<TopologyImpl>();
  const std::vector<int> rank_count = check_nodes(*p, *impl, checks);
  check_links(*p, checks);
  add_graph(*p, *impl);
  if (checks.errors().empty()) {
    index_gpus(*impl, rank_count.size(), checks);
    check_host_paths(*impl, checks);
  }
  if (!checks.errors().empty()) throw InputError(std::move(checks.errors()));
  build_adjacency(*p, *impl);
  return Topology(std::move(impl));
}

namespace {

const char* dot_shape(NodeKind kind) {
  switch (kind) {
    case NodeKind::kGpu: return "box";
    case NodeKind::kNvSwitch: return "hexagon";
    case NodeKind::kPcieSwitch: return "diamond";
    case NodeKind::kCpu: return "box3d";
    case NodeKind::kNic: return "ellipse";
    case NodeKind::kEthernetSwitch: return "octagon";
    case NodeKind::kNvme: return "cylinder";
  }
  return "ellipse";
}

}  // namespace

void write_graphviz(std::ostream& out, const Topology& topology) {
  const TopologyImpl& impl = *topology.impl_;
  // A cable is two directed links with the same parameters; draw it once.
  std::vector<bool> drawn(impl.links.size(), true);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint32_t>> by_ends;
  for (const LinkInfo& l : impl.links) by_ends[{index(l.src), index(l.dst)}].push_back(index(l.id));
  std::vector<bool> duplex(impl.links.size(), false);
  for (const LinkInfo& l : impl.links) {
    if (!drawn[index(l.id)]) continue;
    auto it = by_ends.find({index(l.dst), index(l.src)});
    if (it == by_ends.end()) continue;
    for (std::uint32_t twin : it->second) {
      const LinkInfo& t = impl.links[twin];
      if (drawn[twin] && twin != index(l.id) && t.kind == l.kind && t.bandwidth == l.bandwidth &&
          t.latency == l.latency && t.efficiency == l.efficiency) {
        drawn[twin] = false;
        duplex[index(l.id)] = true;
        break;
      }
    }
  }
  struct KeepDrawn {
    const Graph* g = nullptr;
    const std::vector<bool>* drawn = nullptr;
    bool operator()(Graph::edge_descriptor e) const { return (*drawn)[index((*g)[e].info.id)]; }
  };
  const boost::filtered_graph<Graph, KeepDrawn> view(impl.graph, KeepDrawn{&impl.graph, &drawn});
  boost::write_graphviz(
      out, view,
      [&](std::ostream& o, Graph::vertex_descriptor v) {
        const NodeInfo& n = impl.graph[v].info;
        // Node names come from cluster files: escape what ends a DOT string.
        std::string label;
        for (char c : n.name) {
          if (c == '"' || c == '\\') label += '\\';
          label += c == '\n' ? ' ' : c;
        }
        o << fmt::format("[label=\"{}\", shape={}]", label, dot_shape(n.kind));
      },
      [&](std::ostream& o, Graph::edge_descriptor e) {
        const LinkInfo& l = impl.graph[e].info;
        o << fmt::format("[label=\"{} {:g} GB/s\"{}]", to_string(l.kind),
                         static_cast<double>(l.bandwidth.count()) / 1e9,
                         duplex[index(l.id)] ? ", dir=both" : "");
      },
      [](std::ostream& o) { o << "rankdir=LR;\n"; });
}

}  // namespace zx::topology
