// File: topology/router.cc
//
// Equal-cost next-hop tables per (scope, destination) and the hashed walk.

#include "topology/router.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "base/check.h"

namespace zx::topology {

// For every slot of the scope (see Router::slot), the equal-cost next-hop
// links toward the destination, in out-link order; none when the node does
// not reach the destination within the scope.
struct Router::Table {
  // A candidate carries where its link leads (node index and slot), so the
  // walk reads neither the topology's link records nor the slot arrays.
  struct Hop {
    LinkId link;
    std::uint32_t node;
    std::uint32_t slot;
  };
  std::vector<std::uint32_t> offsets;  // candidates of slot i: [offsets[i], offsets[i + 1])
  std::vector<Hop> candidates;
};

namespace {

constexpr std::int32_t kUnseen = -1;

// splitmix64's finaliser: a fixed, well-mixed function of (flow key, node).
std::uint64_t mix(std::uint64_t key, std::uint32_t node) {
  std::uint64_t z = key + 0x9E3779B97F4A7C15ULL * (static_cast<std::uint64_t>(node) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

bool has_fabric_link(const Topology& t, NodeId nic) {
  for (LinkId l : t.out_links(nic)) {
    const LinkKind k = t.link(l).kind;
    if (k == LinkKind::kRoce || k == LinkKind::kTcpFrontEnd) return true;
  }
  return false;
}

}  // namespace

Router::Router(Topology topology) : Router(std::move(topology), /*share_switch_tables=*/true) {}

Router::Router(Topology topology, bool share_switch_tables)
    : topology_(std::move(topology)),
      scale_out_nic_(topology_.num_nodes(), kNone),
      server_slot_(topology_.num_nodes(), kNone),
      fabric_slot_(topology_.num_nodes(), kNone),
      fabric_last_hop_(topology_.num_nodes(), kNone),
      tables_(static_cast<std::size_t>(kNumScopes) * topology_.num_nodes()),
      once_(new std::once_flag[static_cast<std::size_t>(kNumScopes) * topology_.num_nodes()]) {
  const Topology& t = topology_;
  for (std::uint32_t i = 0; i < t.num_nodes(); ++i) {
    const NodeInfo& n = t.node(NodeId{i});
    if (n.server >= 0) {
      if (static_cast<std::size_t>(n.server) >= server_size_.size()) {
        server_size_.resize(static_cast<std::size_t>(n.server) + 1, 0);
      }
      server_slot_[i] = server_size_[static_cast<std::size_t>(n.server)]++;
    }
    if (n.server < 0 || n.kind == NodeKind::kNic) fabric_slot_[i] = fabric_size_++;
  }
  // The fabric scope enters a NIC only from switches and NICs (make_table's
  // node_ok); a single such in-link from a switch is the NIC's last hop.
  for (std::uint32_t i = 0; share_switch_tables && i < t.num_nodes(); ++i) {
    if (t.node(NodeId{i}).kind != NodeKind::kNic || t.node(NodeId{i}).server < 0) continue;
    std::uint32_t count = 0;
    LinkId last{kNone};
    for (LinkId l : t.in_links(NodeId{i})) {
      if (fabric_slot_[index(t.link(l).src)] == kNone) continue;
      ++count;
      last = l;
    }
    if (count == 1 && t.node(t.link(last).src).server < 0) fabric_last_hop_[i] = index(last);
  }
  // Backend NICs by (server, local index).
  std::map<std::pair<int, int>, NodeId> backend;
  for (std::uint32_t i = 0; i < t.num_nodes(); ++i) {
    const NodeInfo& n = t.node(NodeId{i});
    if (n.kind != NodeKind::kNic || n.server < 0) continue;
    for (LinkId l : t.out_links(NodeId{i})) {
      if (t.link(l).kind == LinkKind::kRoce)
        backend.emplace(std::pair{n.server, n.local_index}, NodeId{i});
    }
  }
  for (int r = 0; r < t.num_gpus(); ++r) {
    const NodeId g = t.gpu(r);
    const NodeInfo& gi = t.node(g);
    if (auto it = backend.find({gi.server, gi.local_index}); it != backend.end()) {
      scale_out_nic_[index(g)] = index(it->second);
      continue;
    }
    // Nearest NIC with a fabric link inside the server (BFS by hops, ties to
    // the lower id because BFS visits out-links in insertion order and we
    // take the minimum id at the first level that has one).
    std::vector<NodeId> frontier{g};
    std::map<std::uint32_t, bool> seen{{index(g), true}};
    while (!frontier.empty() && scale_out_nic_[index(g)] == kNone) {
      std::vector<NodeId> next;
      std::optional<NodeId> best;
      for (NodeId v : frontier) {
        if (v != g && (t.node(v).kind == NodeKind::kGpu || t.node(v).kind == NodeKind::kNic))
          continue;
        for (LinkId l : t.out_links(v)) {
          const NodeId w = t.link(l).dst;
          if (t.node(w).server != gi.server || seen.count(index(w))) continue;
          seen[index(w)] = true;
          if (t.node(w).kind == NodeKind::kNic && has_fabric_link(t, w)) {
            if (!best || index(w) < index(*best)) best = w;
          }
          next.push_back(w);
        }
      }
      if (best) scale_out_nic_[index(g)] = index(*best);
      frontier = std::move(next);
    }
  }
}

Router::~Router() = default;

std::optional<NodeId> Router::scale_out_nic(NodeId gpu) const {
  if (index(gpu) >= scale_out_nic_.size() || scale_out_nic_[index(gpu)] == kNone) {
    return std::nullopt;
  }
  return NodeId{scale_out_nic_[index(gpu)]};
}

std::uint32_t Router::slot(Scope scope, NodeId v) const {
  switch (scope) {
    case kNvlink:
    case kServer:
      return server_slot_[index(v)];
    case kFabric:
      return fabric_slot_[index(v)];
    case kGeneral:
    case kNumScopes:
      return index(v);
  }
  return kNone;
}

std::uint32_t Router::table_size(Scope scope, NodeId dst) const {
  switch (scope) {
    case kNvlink:
    case kServer: {
      const int server = topology_.node(dst).server;
      return server < 0 ? 0 : server_size_[static_cast<std::size_t>(server)];
    }
    case kFabric:
      return fabric_size_;
    case kGeneral:
    case kNumScopes:
      return static_cast<std::uint32_t>(topology_.num_nodes());
  }
  return 0;
}

const Router::Table& Router::table(Scope scope, NodeId dst) const {
  const std::size_t slot = static_cast<std::size_t>(scope) * topology_.num_nodes() + index(dst);
  std::call_once(once_[slot], [&] { tables_[slot] = make_table(scope, dst); });
  return *tables_[slot];
}

std::unique_ptr<Router::Table> Router::make_table(Scope scope, NodeId dst) const {
  const Topology& t = topology_;
  const int dst_server = t.node(dst).server;
  auto link_ok = [&](const LinkInfo& l) { return scope != kNvlink || l.kind == LinkKind::kNvlink; };
  auto node_ok = [&](NodeId v) {
    const NodeInfo& n = t.node(v);
    switch (scope) {
      case kNvlink:
      case kServer:
        return n.server == dst_server && dst_server >= 0;
      case kFabric:
        return n.server == -1 || n.kind == NodeKind::kNic;
      case kGeneral:
      case kNumScopes:
        return true;
    }
    return true;
  };
  auto transit = [&](NodeId v) {
    const NodeInfo& n = t.node(v);
    switch (scope) {
      case kServer:
        return n.kind != NodeKind::kGpu && n.kind != NodeKind::kNic;
      case kFabric:
        return n.server == -1;
      case kNvlink:
      case kGeneral:
      case kNumScopes:
        return n.kind != NodeKind::kGpu;
    }
    return false;
  };

  // Scratch arrays sized to the graph, reset through `order` after use.
  thread_local std::vector<std::int32_t> level;
  thread_local std::vector<std::int64_t> latency_ps;
  if (level.size() != t.num_nodes()) {
    level.assign(t.num_nodes(), kUnseen);
    latency_ps.assign(t.num_nodes(), 0);
  }

  // Reverse BFS: hop counts to dst, through transit nodes only.
  std::vector<std::uint32_t> order{index(dst)};
  level[index(dst)] = 0;
  for (std::size_t head = 0; head < order.size(); ++head) {
    const NodeId w{order[head]};
    if (w != dst && !transit(w)) continue;
    for (LinkId l : t.in_links(w)) {
      const LinkInfo& li = t.link(l);
      if (!link_ok(li) || !node_ok(li.src) || level[index(li.src)] != kUnseen) continue;
      level[index(li.src)] = level[index(w)] + 1;
      order.push_back(index(li.src));
    }
  }

  // Latency in BFS order (each node's next hops sit one level closer), then
  // the candidate links that achieve both minima.
  // Candidates of order[i] are flat[begin[i], begin[i + 1]).
  std::vector<LinkId> flat;
  std::vector<std::uint32_t> begin(order.size() + 1, 0);
  latency_ps[index(dst)] = 0;
  for (std::size_t i = 1; i < order.size(); ++i) {
    const NodeId u{order[i]};
    begin[i] = static_cast<std::uint32_t>(flat.size());
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    for (LinkId l : t.out_links(u)) {
      const LinkInfo& li = t.link(l);
      const NodeId w = li.dst;
      if (!link_ok(li) || level[index(w)] != level[index(u)] - 1) continue;
      if (w != dst && !transit(w)) continue;
      const std::int64_t c = latency_ps[index(w)] + li.latency.count_ps();
      if (c < best) {
        best = c;
        flat.resize(begin[i]);
      }
      if (c == best) flat.push_back(l);
    }
    latency_ps[index(u)] = best;
  }
  begin[order.size()] = static_cast<std::uint32_t>(flat.size());

  // Freeze densely by slot; unreached slots get no candidates.
  const std::uint32_t size = table_size(scope, dst);
  std::vector<std::uint32_t> at_slot(size, kNone);  // order position of each slot
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    const std::uint32_t sl = slot(scope, NodeId{order[i]});
    ZX_CHECK(sl < size, "router: a node outside the scope entered its table");
    at_slot[sl] = i;
  }
  auto table = std::make_unique<Table>();
  table->offsets.reserve(size + 1);
  table->candidates.reserve(flat.size());
  table->offsets.push_back(0);
  for (std::uint32_t i : at_slot) {
    for (std::uint32_t c = i == kNone ? 0 : begin[i]; i != kNone && c < begin[i + 1]; ++c) {
      const NodeId w = t.link(flat[c]).dst;
      table->candidates.push_back(Table::Hop{flat[c], index(w), slot(scope, w)});
    }
    table->offsets.push_back(static_cast<std::uint32_t>(table->candidates.size()));
  }
  for (std::uint32_t v : order) {
    level[v] = kUnseen;
    latency_ps[v] = 0;
  }
  return table;
}

bool Router::walk(Scope scope, NodeId src, NodeId dst, std::uint64_t flow_key, Route& out) const {
  const std::uint32_t size = table_size(scope, dst);
  if (slot(scope, src) >= size) return false;  // src outside the scope
  if ((scope == kServer || scope == kNvlink) &&
      topology_.node(src).server != topology_.node(dst).server) {
    return false;  // server-local slots of another server mean nothing here
  }
  if (scope == kFabric && fabric_last_hop_[index(dst)] != kNone && src != dst) {
    const LinkId last{fabric_last_hop_[index(dst)]};
    if (!walk(kFabric, src, topology_.link(last).src, flow_key, out)) return false;
    out.push_back(last);
    return true;
  }
  return follow(scope, src, dst, flow_key, /*fixed_only=*/false, out);
}

bool Router::follow(Scope scope, NodeId src, NodeId dst, std::uint64_t flow_key, bool fixed_only,
                    Route& out) const {
  const Table& tab = table(scope, dst);
  const std::size_t start = out.size();
  std::uint32_t v = index(src);
  std::uint32_t sl = slot(scope, src);
  while (v != index(dst)) {
    const std::uint32_t begin = tab.offsets[sl];
    const std::uint32_t count = tab.offsets[sl + 1] - begin;
    // v does not reach dst within the scope, or (fixed_only) the key would choose.
    if (count == 0 || (fixed_only && count > 1)) {
      out.resize(start);
      return false;
    }
    // Lemire's multiply-shift maps the hash onto [0, count) without a division.
    const std::uint64_t pick =
        count == 1 ? 0
                   : static_cast<std::uint64_t>(
                         (static_cast<unsigned __int128>(mix(flow_key, v)) * count) >> 64);
    const Table::Hop& hop = tab.candidates[begin + pick];
    out.push_back(hop.link);
    v = hop.node;
    sl = hop.slot;
  }
  return true;
}

bool Router::fixed_walk(Scope scope, NodeId src, NodeId dst, Route& out) const {
  ZX_CHECK(scope == kServer || scope == kNvlink, "fixed_walk: server scopes only");
  if (topology_.node(src).server != topology_.node(dst).server) return false;
  if (slot(scope, src) >= table_size(scope, dst)) return false;
  return follow(scope, src, dst, /*flow_key=*/0, /*fixed_only=*/true, out);
}

std::optional<LinkId> Router::only_fabric_exit(NodeId nic) const {
  std::optional<LinkId> exit;
  for (LinkId l : topology_.out_links(nic)) {
    if (fabric_slot_[index(topology_.link(l).dst)] == kNone) continue;
    if (exit) return std::nullopt;
    exit = l;
  }
  if (exit && topology_.node(topology_.link(*exit).dst).server >= 0) return std::nullopt;
  return exit;
}

std::optional<Router::FixedPath> Router::fixed_uplink(NodeId gpu) const {
  if (topology_.node(gpu).kind != NodeKind::kGpu) return std::nullopt;
  const std::optional<NodeId> nic = scale_out_nic(gpu);
  if (!nic) return std::nullopt;
  const std::optional<LinkId> exit = only_fabric_exit(*nic);
  if (!exit) return std::nullopt;
  FixedPath path{.links = {}, .fabric_switch = topology_.link(*exit).dst};
  if (!fixed_walk(kServer, gpu, *nic, path.links)) return std::nullopt;
  path.links.push_back(*exit);
  return path;
}

std::optional<Router::FixedPath> Router::fixed_downlink(NodeId gpu) const {
  if (topology_.node(gpu).kind != NodeKind::kGpu) return std::nullopt;
  const std::optional<NodeId> nic = scale_out_nic(gpu);
  if (!nic || fabric_last_hop_[index(*nic)] == kNone) return std::nullopt;
  const LinkId last{fabric_last_hop_[index(*nic)]};
  FixedPath path{.links = {last}, .fabric_switch = topology_.link(last).src};
  if (!fixed_walk(kServer, *nic, gpu, path.links)) return std::nullopt;
  return path;
}

bool Router::switch_route_into(NodeId from, NodeId to, std::uint64_t flow_key, Route& out) const {
  ZX_CHECK(index(from) < fabric_slot_.size() && index(to) < fabric_slot_.size(),
           "switch_route_into: node id out of range");
  if (from == to) return true;
  if (fabric_slot_[index(from)] == kNone || fabric_slot_[index(to)] == kNone) return false;
  return walk(kFabric, from, to, flow_key, out);
}

bool Router::route_into(NodeId src, NodeId dst, std::uint64_t flow_key, Route& out) const {
  out.clear();
  ZX_CHECK(index(src) < topology_.num_nodes() && index(dst) < topology_.num_nodes(),
           "route: node id out of range");
  if (src == dst) return true;
  const NodeInfo& s = topology_.node(src);
  const NodeInfo& d = topology_.node(dst);
  if (s.kind == NodeKind::kGpu && d.kind == NodeKind::kGpu) {
    if (s.server == d.server && walk(kNvlink, src, dst, flow_key, out)) return true;
    const auto sn = scale_out_nic(src);
    const auto dn = scale_out_nic(dst);
    if (s.server != d.server && sn && dn) {
      if (walk(kServer, src, *sn, flow_key, out) && walk(kFabric, *sn, *dn, flow_key, out) &&
          walk(kServer, *dn, dst, flow_key, out)) {
        return true;
      }
      out.clear();
    }
  }
  if (!(s.kind == NodeKind::kGpu && d.kind == NodeKind::kGpu) && s.server >= 0 && s.server == d.server) {
    if (walk(kServer, src, dst, flow_key, out)) return true;
    out.clear();
  }
  return walk(kGeneral, src, dst, flow_key, out);
}

Route Router::route(NodeId src, NodeId dst, std::uint64_t flow_key) const {
  Route r;
  route_into(src, dst, flow_key, r);
  return r;
}

}  // namespace zx::topology
