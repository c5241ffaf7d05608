// File: models/collectives/nccl_p2p.cc
//
// NCCL's point-to-point schedule for all-to-all(-v) (see nccl_p2p.h). Every
// rule cites NVIDIA/nccl at v2.13.4-1 ("2.13") and v2.20.3-1 ("2.20"),
// file:line at those tags.

#include "models/collectives/nccl_p2p.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "base/check.h"
#include "base/error.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {
namespace {

// MAXCHANNELS (src/include/device.h in both).
constexpr int kMaxChannels = 32;
// NCCL_STEPS (src/include/device.h in both).
constexpr std::int64_t kNcclSteps = 8;
// NCCL_MAX_WORK_ELEMENTS_P2P: receives in even slots and sends in odd ones
// of one work item, so 8 of each (src/include/device.h in both).
constexpr int kElementsPerType = 8;
// SENDRECV_SLICEFACTOR (2.13 src/include/collectives.h:120): 2.13's p2p step
// across nodes is the Simple buffer's step divided by it.
constexpr std::int64_t kSendRecvSliceFactor = 4;
// ncclTopoGetNchannels (2.13 paths.cc:630, 2.20 paths.cc:703): an NVLink
// peer gets 2 x (path bandwidth / one NVLink's), 2 x 12 on an A100's
// NVSwitch (18 on H100 and B200). Any value of 16 or more gives the same
// p2pnChannelsPerPeer once rounded to a power of two with at most 32
// channels, so the GPU generation does not matter here.
constexpr int kNvlinkPeerChannels = 24;
// A local peer over PCIe or through the CPU: 2 channels (same lines).
constexpr int kPciePeerChannels = 2;
// NCCL_NCHANNELS_PER_NET_PEER's default in 2.13 (paths.cc:615); 2.20's is
// -1, auto (paths.cc:687, 714-728).
constexpr int kNetPeerChannels213 = 2;

int next_pow2(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// mirrorBits (2.20 src/graph/topo.h:217).
int mirror_bits(int value, int pow2) {
  int mirror = 0;
  for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1) {
    if (value & b) mirror |= mb;
  }
  return mirror;
}

// ALIGN_POWER (2.20 src/include/align.h:16).
int align_power(int x, int y) { return x > y ? (x + y - 1) / y * y : y / (y / x); }

std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

NcclP2pOptions parse_nccl_p2p_options(json::ObjectReader& o) {
  NcclP2pOptions out;
  std::string version = "2.20";
  o.read_enum("version", version, {"2.13", "2.20"});
  out.version = version == "2.13" ? NcclP2pVersion::kV2_13 : NcclP2pVersion::kV2_20;
  o.read_int("NCCL_MAX_P2P_NCHANNELS", out.max_p2p_nchannels, {.min = 1, .max = kMaxChannels});
  o.read_int("NCCL_MIN_P2P_NCHANNELS", out.min_p2p_nchannels, {.min = 1, .max = kMaxChannels});
  o.read_int("NCCL_NCHANNELS_PER_NET_PEER", out.nchannels_per_net_peer, {.min = 1, .max = kMaxChannels});
  // NCCL_BUFFSIZE: a Simple buffer of NCCL_STEPS slots; below 64 KiB a
  // slot could not hold the smallest piece.
  o.read_int("NCCL_BUFFSIZE", out.buffsize, {.min = 1 << 16, .max = std::int64_t{1} << 30});
  const char* chunk_names[] = {"NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_P2P_PCI_CHUNKSIZE"};
  std::int64_t* chunk_values[] = {&out.p2p_net_chunksize, &out.p2p_nvl_chunksize, &out.p2p_pci_chunksize};
  for (int i = 0; i < 3; ++i) {
    if (o.read_int(chunk_names[i], *chunk_values[i], {.min = 1 << 10, .max = std::int64_t{1} << 30}) &&
        out.version == NcclP2pVersion::kV2_13) {
      o.error(chunk_names[i], fmt::format("NCCL 2.13 has no {} (2.13's step is NCCL_BUFFSIZE / 8, a quarter of "
                                          "that across nodes); it came with 2.19",
                                          chunk_names[i]));
    }
  }
  int disable = 0;
  if (o.read_int("NCCL_PXN_DISABLE", disable, {.min = 0, .max = 1})) out.pxn_disable = disable == 1;
  o.read_int("NCCL_P2P_PXN_LEVEL", out.p2p_pxn_level, {.min = 0, .max = 2});
  if (out.min_p2p_nchannels > out.max_p2p_nchannels) {
    o.error("NCCL_MIN_P2P_NCHANNELS", fmt::format("expected at most NCCL_MAX_P2P_NCHANNELS ({}), got {}",
                                                  out.max_p2p_nchannels, out.min_p2p_nchannels));
  }
  return out;
}

NcclP2pLayout nccl_p2p_layout(const NcclP2pOptions& options, const TopologyView& view) {
  NcclP2pLayout l;
  l.ranks = view.size();
  if (l.ranks == 0) internal::throw_cannot_lower("nccl_p2p", "the group is empty");
  // Nodes are numbered in the order of their first rank, local ranks by
  // rank (init.cc: comm->nodeRanks from the ranks' host hashes).
  std::map<int, int> node_of_server;
  for (int m = 0; m < l.ranks; ++m) {
    const auto [it, added] = node_of_server.emplace(view.member(m).server, static_cast<int>(node_of_server.size()));
    if (added) l.node_members.emplace_back();
    l.node.push_back(it->second);
    l.local.push_back(static_cast<int>(l.node_members[it->second].size()));
    l.node_members[it->second].push_back(m);
  }
  l.nodes = static_cast<int>(l.node_members.size());
  for (const auto& members : l.node_members) l.max_local_ranks = std::max(l.max_local_ranks, static_cast<int>(members.size()));

  // ncclTopoComputeP2pChannels (2.13 paths.cc:650-679, 2.20 paths.cc:742-777).
  const int n_channels = view.nccl_channels() > 0 ? view.nccl_channels() : kMaxChannels;
  int p2p = std::max(std::min(n_channels, options.max_p2p_nchannels), options.min_p2p_nchannels);
  int min_channels = p2p;
  bool all_nvlink = true;
  for (const auto& members : l.node_members) {
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = a + 1; b < members.size(); ++b) {
        const bool nvlink = view.member(members[a]).nvlink_switch && view.member(members[b]).nvlink_switch;
        all_nvlink &= nvlink;
        min_channels = std::min(min_channels, nvlink ? kNvlinkPeerChannels : kPciePeerChannels);
        if (!nvlink) break;  // one pair decides the minimum
      }
    }
  }
  if (l.nodes > 1) {
    int net = options.nchannels_per_net_peer;
    if (net < 1) {
      if (options.version == NcclP2pVersion::kV2_13) {
        net = kNetPeerChannels213;
      } else {
        // 2.20 paths.cc:714-728: 2 per NIC, halved while 2 x ranks exceed 4
        // x the (unrounded) p2p channels; more when the GPU needs several
        // NICs for its bandwidth (one each here).
        int most = 2;
        while (most * l.ranks > p2p * 4 && most > 1) most /= 2;
        net = std::max(1, most);
      }
    }
    min_channels = std::min(min_channels, net);
  }
  l.channels_per_peer = next_pow2(min_channels);
  l.p2p_channels = next_pow2(p2p);

  // scheduleP2pTasksToPlan (2.13 enqueue.cc:628-637, 2.20 enqueue.cc:866-874).
  l.pieces_max = l.channels_per_peer;
  l.pieces_min = l.pieces_max;
  while (l.pieces_min * l.ranks > l.p2p_channels && l.pieces_min > 1) l.pieces_min /= 2;
  if (options.version == NcclP2pVersion::kV2_13) {
    while (l.pieces_max * l.ranks > l.p2p_channels * 4 && l.pieces_max > 1) l.pieces_max /= 2;
  }
  // The step: 2.13 enqueue.cc:629-630 (Simple buffer / NCCL_STEPS, / 4
  // across nodes); 2.20 init.cc:548-569 (computeBuffSizes:
  // NCCL_P2P_NET_CHUNKSIZE across nodes, NVL inside an all-NVLink node, PCI
  // otherwise, at most the Simple buffer / NCCL_STEPS).
  if (options.version == NcclP2pVersion::kV2_13) {
    l.step_bytes = options.buffsize / kNcclSteps;
    if (l.nodes > 1) l.step_bytes /= kSendRecvSliceFactor;
    l.min_piece_bytes = l.step_bytes / 8;  // enqueue.cc:664
  } else {
    l.step_bytes = l.nodes > 1 ? options.p2p_net_chunksize
                   : all_nvlink ? options.p2p_nvl_chunksize
                                : options.p2p_pci_chunksize;
    if (l.step_bytes * kNcclSteps > options.buffsize) l.step_bytes = options.buffsize / kNcclSteps;
    l.min_piece_bytes = l.nodes > 1 ? l.step_bytes / 2 : l.step_bytes / 8;  // enqueue.cc:903
  }
  l.max_piece_bytes = l.nodes > 1 ? l.step_bytes : l.step_bytes * 32;
  return l;
}

std::vector<int> nccl_p2p_order(const NcclP2pOptions& options, const NcclP2pLayout& l, int rank, bool recv) {
  // 2.13 init.cc:862-906, 2.20 init.cc:1256-1298.
  const int nodes = l.nodes;
  const int node = l.node[static_cast<std::size_t>(rank)];
  const int local = l.local[static_cast<std::size_t>(rank)];
  const bool holes = options.version == NcclP2pVersion::kV2_20;
  const int steps = holes ? align_power(l.max_local_ranks, kElementsPerType) : l.max_local_ranks;
  std::vector<int> out;
  for (int d = 0; d <= nodes / 4; ++d) {
    const int deltas[4] = {d, (nodes - d) % nodes, nodes / 2 - d, (nodes - (nodes / 2 - d)) % nodes};
    int index = 0;
    while (index < 4) {
      const int delta = deltas[index];
      const int peer_node = recv ? (node + nodes - delta) % nodes : (node + delta) % nodes;
      const std::vector<int>& members = l.node_members[static_cast<std::size_t>(peer_node)];
      for (int step = 0; step < steps; ++step) {
        const int i = recv ? (local - step + steps) % steps : (local + step) % steps;
        if (i < static_cast<int>(members.size())) {
          out.push_back(members[static_cast<std::size_t>(i)]);
        } else if (holes) {
          out.push_back(-1);
        }
      }
      ++index;
      if (index == 1 && deltas[1] == deltas[0]) ++index;
      if (index == 2 && deltas[2] == deltas[0]) ++index;
      if (index == 3 && deltas[3] == deltas[2]) ++index;
      if (index == 3 && deltas[3] == deltas[1]) ++index;
    }
  }
  ZX_CHECK(out.size() == static_cast<std::size_t>(holes ? nodes * steps : l.ranks),
           "NCCL's p2p order covers every peer once");
  return out;
}

std::int64_t nccl_p2p_piece_bytes(const NcclP2pLayout& l, std::int64_t bytes) {
  // calcP2pChunkSize (2.20 enqueue.cc:842; 2.13 the same).
  std::int64_t size = std::max(l.min_piece_bytes, div_up(bytes, l.pieces_min));
  int channels = l.pieces_min;
  while (size > l.max_piece_bytes && channels <= l.pieces_max / 2) {
    channels *= 2;
    size = div_up(bytes, channels);
  }
  return div_up(size, l.min_piece_bytes) * l.min_piece_bytes;
}

int nccl_p2p_channel(const NcclP2pLayout& l, int rank, int peer, int piece) {
  // ncclChannelComputeBase / FromBase (src/include/channel.h, 2.13:13-44,
  // 2.20:15-46); the piece's channelInc is piece mod p2pnChannelsPerPeer
  // (2.13 enqueue.cc:377, 2.20 enqueue.cc:523).
  const int nsteps = l.max_local_ranks;
  const auto r = static_cast<std::size_t>(rank);
  const auto p = static_cast<std::size_t>(peer);
  const int step = (nsteps + l.local[p] - l.local[r]) % nsteps;
  const int delta = (l.nodes + l.node[p] - l.node[r]) % l.nodes;
  const int base = l.nodes > 1 ? delta + step / kElementsPerType : step;
  return (mirror_bits(base % l.p2p_channels, l.p2p_channels) + piece % l.channels_per_peer) % l.p2p_channels;
}

int nccl_p2p_relay(const NcclP2pOptions& options, const NcclP2pLayout& l, const TopologyView& view, int src,
                   int dst) {
  // ncclTopoGetNetDev (2.13 search.cc:946-1008, 2.20 search.cc:1103-1167):
  // with PXN on (NCCL_PXN_DISABLE=0, paths.cc 2.13:427, 2.20:493) and
  // NCCL_P2P_PXN_LEVEL 2 (search.cc 2.13:943, 2.20:1101) the NIC is the one
  // of the sender's server-mate with the receiver's device index, sent by
  // that GPU when it is one NVLink hop away and near its NIC; at level 1
  // only when the sender's own path to a NIC is worse than PCIe switches.
  if (options.pxn_disable || options.p2p_pxn_level == 0) return -1;
  const auto s = static_cast<std::size_t>(src);
  if (l.node[s] == l.node[static_cast<std::size_t>(dst)]) return -1;
  const MemberLocation& from = view.member(src);
  if (!from.nvlink_switch || (options.p2p_pxn_level == 1 && from.rail_nic)) return -1;
  const int rail = view.member(dst).local_index;
  for (int m : l.node_members[static_cast<std::size_t>(l.node[s])]) {
    if (view.member(m).local_index != rail) continue;
    if (m == src || !view.member(m).rail_nic || !view.member(m).nvlink_switch) return -1;
    return m;
  }
  return -1;
}

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// The bytes of each pair, once (pair_size splits the buffer at every call).
struct PairBytes {
  const CollectiveRequest& request;
  std::vector<sim::Bytes> even;
  explicit PairBytes(const CollectiveRequest& r)
      : request(r), even(r.all_to_all_v_bytes.empty() ? block_sizes(r) : std::vector<sim::Bytes>()) {}
  std::int64_t operator()(int s, int d) const {
    return request.all_to_all_v_bytes.empty()
               ? even[static_cast<std::size_t>(d)].count()
               : request.all_to_all_v_bytes[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
  }
};

// The plan's chunks: one per piece of every pair that moves, one for the
// others; pair (s, d)'s pieces are chunks first[s n + d] onwards.
struct Pieces {
  std::vector<std::uint32_t> first;  // n x n + 1
  std::size_t count = 0;
  std::size_t n = 0;
  std::uint32_t index(int s, int d, int k) const {
    return first[static_cast<std::size_t>(s) * n + static_cast<std::size_t>(d)] + static_cast<std::uint32_t>(k);
  }
  // The pair (s, d) of piece p.
  std::pair<int, int> pair_of(std::size_t p) const {
    const auto pair = static_cast<std::size_t>(
        std::upper_bound(first.begin(), first.end(), static_cast<std::uint32_t>(p)) - first.begin() - 1);
    return {static_cast<int>(pair / n), static_cast<int>(pair % n)};
  }
};

Pieces add_pieces(internal::PlanBuilder& plan, int n, const NcclP2pLayout& l, const PairBytes& bytes_of) {
  Pieces pieces;
  pieces.n = static_cast<std::size_t>(n);
  pieces.first.resize(pieces.n * pieces.n + 1);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      pieces.first[static_cast<std::size_t>(s) * pieces.n + static_cast<std::size_t>(d)] = plan.num_chunks();
      std::int64_t left = bytes_of(s, d);
      if (s == d || left == 0) {
        plan.add_chunk(sim::Bytes(left), s, d);
        continue;
      }
      const std::int64_t piece = nccl_p2p_piece_bytes(l, left);
      for (; left > 0; left -= piece) plan.add_chunk(sim::Bytes(std::min(piece, left)), s, d);
    }
  }
  pieces.first[pieces.n * pieces.n] = plan.num_chunks();
  pieces.count = plan.num_chunks();
  return pieces;
}

// Every rank's work items, as scheduleP2pTasksToPlan and appendWorkElemP2p
// build them (2.13 enqueue.cc:616-711 and 230; 2.20 enqueue.cc:852-953 and
// 141): per piece, the work item that sends it and the one that receives
// it, and its place among its sender's operations; per work item, the one
// before it on its channel (kNone for a channel's first).
struct WorkItems {
  std::vector<std::uint32_t> send;
  std::vector<std::uint32_t> recv;
  std::vector<std::uint32_t> send_slot;
  std::vector<std::uint32_t> previous;
};

WorkItems schedule_work(const NcclP2pOptions& options, const NcclP2pLayout& l, int n, const Pieces& pieces,
                        const PairBytes& bytes_of) {
  WorkItems w{std::vector<std::uint32_t>(pieces.count, kNone), std::vector<std::uint32_t>(pieces.count, kNone),
              std::vector<std::uint32_t>(pieces.count, 0), {}};
  struct Tail {
    std::uint32_t work = kNone;
    std::vector<int> peers[2];  // receives, sends
  };
  std::vector<Tail> tails(static_cast<std::size_t>(l.p2p_channels));
  for (int r = 0; r < n; ++r) {
    for (Tail& t : tails) t = Tail{};
    const std::vector<int> send_order = nccl_p2p_order(options, l, r, false);
    const std::vector<int> recv_order = nccl_p2p_order(options, l, r, true);
    std::uint32_t slot = 0;
    bool fuse_ok = false;
    const auto append = [&](bool send, int peer, int channel) {
      Tail& t = tails[static_cast<std::size_t>(channel)];
      std::vector<int>& mine = t.peers[send ? 1 : 0];
      const bool fits = options.version == NcclP2pVersion::kV2_13 || fuse_ok;
      if (t.work == kNone || !fits || static_cast<int>(mine.size()) >= kElementsPerType ||
          std::find(mine.begin(), mine.end(), peer) != mine.end()) {
        const std::uint32_t fresh = static_cast<std::uint32_t>(w.previous.size());
        w.previous.push_back(t.work);
        t.work = fresh;
        t.peers[0].clear();
        t.peers[1].clear();
      }
      t.peers[send ? 1 : 0].push_back(peer);
      fuse_ok = true;
      return t.work;
    };
    for (std::size_t i = 0; i < send_order.size(); ++i) {
      const int sp = send_order[i];
      const int rp = recv_order[i];
      std::int64_t send_left = sp >= 0 ? bytes_of(r, sp) : 0;
      std::int64_t recv_left = rp >= 0 ? bytes_of(rp, r) : 0;
      if (send_left == 0 && recv_left == 0) continue;
      const std::int64_t send_piece = send_left > 0 ? nccl_p2p_piece_bytes(l, send_left) : 0;
      const std::int64_t recv_piece = recv_left > 0 ? nccl_p2p_piece_bytes(l, recv_left) : 0;
      int ks = 0;
      int kr = 0;
      do {
        if (i % kElementsPerType == 0) fuse_ok = false;  // 2.20 enqueue.cc:917
        if (recv_left > 0) {
          const std::uint32_t item = append(false, rp, nccl_p2p_channel(l, rp, r, kr));
          if (rp != r) w.recv[pieces.index(rp, r, kr)] = item;
          recv_left -= std::min(recv_left, recv_piece);
          ++kr;
        }
        if (send_left > 0) {
          const std::uint32_t item = append(true, sp, nccl_p2p_channel(l, r, sp, ks));
          if (sp != r) {
            w.send[pieces.index(r, sp, ks)] = item;
            w.send_slot[pieces.index(r, sp, ks)] = slot++;
          }
          send_left -= std::min(send_left, send_piece);
          ++ks;
        }
      } while (send_left > 0 || recv_left > 0);
    }
  }
  return w;
}

// The DAG: node v < W is work item v's end; node W + p is piece p's
// transfer. Piece p follows the items before its own at both ends; an item
// ends after all its pieces. Kahn's algorithm orders it (FIFO from the
// lowest ids, so the plan is the same on every run) into the plan's steps;
// a cycle would be a schedule NCCL itself could not finish.
void add_steps(internal::PlanBuilder& plan, const WorkItems& w, const Pieces& pieces, const NcclP2pOptions& options,
               const NcclP2pLayout& l, const TopologyView& topology) {
  const std::size_t works = w.previous.size();
  const std::size_t nodes = works + pieces.count;
  std::vector<std::uint32_t> indegree(nodes, 0);
  std::vector<std::uint32_t> out_offsets(nodes + 1, 0);
  const auto moves = [&](std::size_t p) { return w.send[p] != kNone; };
  for (std::size_t p = 0; p < pieces.count; ++p) {
    if (!moves(p)) continue;
    ZX_CHECK(w.recv[p] != kNone, "every piece sent is received");
    for (std::uint32_t v : {w.previous[w.send[p]], w.previous[w.recv[p]]}) {
      if (v == kNone) continue;
      ++indegree[works + p];
      ++out_offsets[v + 1];
    }
    indegree[w.send[p]] += 1;
    indegree[w.recv[p]] += 1;
    out_offsets[works + p + 1] += 2;
  }
  for (std::size_t v = 0; v < nodes; ++v) out_offsets[v + 1] += out_offsets[v];
  std::vector<std::uint32_t> out_edges(out_offsets.back());
  std::vector<std::uint32_t> fill(out_offsets.begin(), out_offsets.end() - 1);
  for (std::size_t p = 0; p < pieces.count; ++p) {
    if (!moves(p)) continue;
    const auto node = static_cast<std::uint32_t>(works + p);
    for (std::uint32_t v : {w.previous[w.send[p]], w.previous[w.recv[p]]}) {
      if (v != kNone) out_edges[fill[v]++] = node;
    }
    out_edges[fill[works + p]++] = w.send[p];
    out_edges[fill[works + p]++] = w.recv[p];
  }
  std::vector<std::vector<std::uint32_t>> after(nodes);
  std::deque<std::uint32_t> ready;
  std::size_t expected = works;
  for (std::size_t v = 0; v < nodes; ++v) {
    if (v >= works && moves(v - works)) ++expected;
    if (indegree[v] == 0 && (v < works || moves(v - works))) ready.push_back(static_cast<std::uint32_t>(v));
  }
  std::size_t placed = 0;
  while (!ready.empty()) {
    const std::uint32_t v = ready.front();
    ready.pop_front();
    const std::uint32_t step = plan.add_step(std::move(after[v]));
    ++placed;
    if (v >= works) {
      const std::size_t p = v - works;
      const auto [s, d] = pieces.pair_of(p);
      plan.add_transfer(step, s, d, TransferOp::kCopy, static_cast<std::uint32_t>(p));
      plan.set_relay(step, nccl_p2p_relay(options, l, topology, s, d));
      plan.set_issue_slot(step, w.send_slot[p]);
    }
    for (std::uint32_t e = out_offsets[v]; e < out_offsets[v + 1]; ++e) {
      const std::uint32_t next = out_edges[e];
      after[next].push_back(step);
      if (--indegree[next] == 0) ready.push_back(next);
    }
  }
  if (placed != expected) {
    internal::throw_cannot_lower(
        "nccl_p2p", fmt::format("NCCL's schedule for this group does not finish: {} of its {} work items and pieces "
                                "wait on each other in a cycle",
                                expected - placed, expected));
  }
}

}  // namespace

CollectivePlan NcclP2pAlgorithm::lower(const CollectiveRequest& request, const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  const NcclP2pLayout l = nccl_p2p_layout(options_, topology);
  const PairBytes bytes_of(request);
  internal::PlanBuilder plan(request.kind, n);
  const Pieces pieces = add_pieces(plan, n, l, bytes_of);
  const WorkItems work = schedule_work(options_, l, n, pieces, bytes_of);
  add_steps(plan, work, pieces, options_, l, topology);
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
