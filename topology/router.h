// File: topology/router.h
//
// Shortest-path routing with deterministic ECMP.
//
// Cost model: a path's cost is (hop count, total link latency), compared
// lexicographically; every path of minimum cost is kept, and a flow's route
// picks among them hop by hop with a hash of (flow_key, node): the same key
// always gets the same route, different keys spread over all equal-cost
// branches (e.g. every spine of a Clos).
//
// Endpoint rules, because plain shortest paths are wrong on these servers
// (ties and shortcuts through devices that do not forward traffic):
//   * GPUs never forward: a GPU may only be the first or last node of a route.
//   * Two GPUs of one server talk over NVLink only (the NCCL default; PCIe
//     peer-to-peer through a shared tray switch would tie on hop count).
//   * GPUs on different servers talk through their scale-out NICs:
//       GPU -> (server-local path) -> its NIC -> (fabric path) -> peer's NIC -> GPU
//     A GPU's scale-out NIC is the backend NIC of its server with the same
//     local index (ZionEX, HGX); without one, the nearest NIC of its server
//     with a fabric link (Zion: its socket's front-end NIC). Server-local
//     paths stay inside the server and do not cross other NICs; fabric paths
//     cross only fabric switches (server -1), so traffic never transits another
//     server, another NIC, or the front-end network when a backend exists.
//   * Any other pair of one server (a CPU to a GPU, say: a host copy) gets
//     the server-local shortest path, GPUs non-transit; any other pair at
//     all, the plain shortest path with GPUs non-transit.
//
// Per destination (and per rule above) the router computes, lazily and once,
// the equal-cost next-hop links of every node: a reverse BFS over in-links for
// hop counts, then a pass in BFS order for latency. Tables are cached for the
// router's lifetime; route() is safe to call from several threads.
//
// A NIC whose only way in from the fabric is one link from one switch (every
// NIC of the presets: its ToR or rail switch) gets no fabric table of its own:
// every route to it ends with that link, and its equal-cost choices before it
// are exactly those toward the switch (same hops and latency, one link less;
// same candidates in the same order; same hash per node). So the walk goes to
// the switch and appends the link, which picks the same route to the bit while
// a whole all-to-all touches one table per switch instead of one per NIC.

#ifndef ZIONSIM_TOPOLOGY_ROUTER_H_
#define ZIONSIM_TOPOLOGY_ROUTER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "topology/topology.h"
#include "topology/types.h"

namespace zx::topology {

/// Links from source to destination, in order.
using Route = std::vector<LinkId>;

class Router {
 public:
  explicit Router(Topology topology);
  /// As above; `share_switch_tables = false` gives every NIC its own fabric
  /// table (the same routes, slower; for tests that prove they are the same).
  Router(Topology topology, bool share_switch_tables);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  /// The route from `src` to `dst`; empty when src == dst or dst is unreachable.
  Route route(NodeId src, NodeId dst, std::uint64_t flow_key) const;
  /// As route(), into `out` (cleared first), reusing its storage. Returns false
  /// when `dst` is unreachable from `src`.
  bool route_into(NodeId src, NodeId dst, std::uint64_t flow_key, Route& out) const;

  /// The NIC a GPU uses to leave its server; nullopt for a server without one.
  std::optional<NodeId> scale_out_nic(NodeId gpu) const;

  /// The part of a GPU's routes to other servers that no flow key changes:
  /// `links` from the GPU to the fabric switch `fabric_switch` (its NIC's
  /// only way into the fabric), or, for the way in, from that switch to the
  /// GPU. For GPUs a and b of different servers whose paths both exist,
  ///   route(a, b, key) == uplink(a).links + (the switch route from
  ///   uplink(a).fabric_switch to downlink(b).fabric_switch for key)
  ///   + downlink(b).links
  /// whenever the switch route exists (switch_route_into), so a caller that
  /// routes many pairs walks only the fabric between switches per pair.
  /// nullopt when some hop of the GPU's path has a choice, or when a NIC has
  /// several ways into or out of the fabric (routes are then found whole).
  struct FixedPath {
    Route links;
    NodeId fabric_switch;
  };
  std::optional<FixedPath> fixed_uplink(NodeId gpu) const;
  std::optional<FixedPath> fixed_downlink(NodeId gpu) const;
  /// Appends to `out` the fabric route from switch `from` to switch `to`
  /// for `flow_key` (nothing when they are the same); false, with `out` as
  /// it was, when `to` is unreachable through fabric switches.
  bool switch_route_into(NodeId from, NodeId to, std::uint64_t flow_key, Route& out) const;

  const Topology& topology() const { return topology_; }

 private:
  enum Scope : int { kNvlink = 0, kServer, kFabric, kGeneral, kNumScopes };
  struct Table;

  const Table& table(Scope scope, NodeId dst) const;
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  std::unique_ptr<Table> make_table(Scope scope, NodeId dst) const;
  // Appends the walk from src to dst to `out`; false if src is not in the table.
  bool walk(Scope scope, NodeId src, NodeId dst, std::uint64_t flow_key, Route& out) const;
  // The walk's loop over dst's table from src; with `fixed_only`, false
  // (and `out` as it was) also at a hop with more than one choice.
  bool follow(Scope scope, NodeId src, NodeId dst, std::uint64_t flow_key, bool fixed_only, Route& out) const;
  // As walk, with no key: false also when some hop has more than one choice.
  bool fixed_walk(Scope scope, NodeId src, NodeId dst, Route& out) const;
  // A NIC's only out-link into the fabric scope, when it leads to a switch.
  std::optional<LinkId> only_fabric_exit(NodeId nic) const;

  // Tables are dense over the nodes a scope can ever reach, so the walk finds
  // a node's entry by index: kNvlink and kServer tables span the destination's
  // server, kFabric tables the fabric switches and all NICs, kGeneral all nodes.
  std::uint32_t slot(Scope scope, NodeId v) const;
  std::uint32_t table_size(Scope scope, NodeId dst) const;

  Topology topology_;
  std::vector<std::uint32_t> scale_out_nic_;  // by node index; kNone when absent
  std::vector<std::uint32_t> server_slot_;    // index of a node among its server's nodes
  std::vector<std::uint32_t> server_size_;    // nodes per server
  std::vector<std::uint32_t> fabric_slot_;    // index among fabric switches and NICs, or kNone
  std::uint32_t fabric_size_ = 0;
  // By node index: a NIC's only in-link from the fabric, when it comes from a
  // switch; kNone otherwise (and for every node with the sharing off).
  std::vector<std::uint32_t> fabric_last_hop_;
  mutable std::vector<std::unique_ptr<Table>> tables_;  // [scope * num_nodes + dst]
  std::unique_ptr<std::once_flag[]> once_;
};

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_ROUTER_H_
