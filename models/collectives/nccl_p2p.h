// File: models/collectives/nccl_p2p.h
//
// All-to-all(-v) as NCCL runs it: every rank's grouped ncclSend/ncclRecv to
// every peer (ncclGroupStart; for each peer {ncclSend; ncclRecv};
// ncclGroupEnd), scheduled by NCCL's own rules into work items on its
// point-to-point channels. Read from NVIDIA/nccl at tags v2.13.4-1 and
// v2.20.3-1 (the file and line of each rule beside it in nccl_p2p.cc):
//
//   * Order. Each rank meets its peers in NCCL's p2p order (init.cc,
//     initTransportsRank, "Setup p2p structures"): node deltas 0, then for
//     d = 0..nNodes/4 the deltas d, -d, nNodes/2-d, -(nNodes/2-d) with
//     repeats left out; inside a node delta D, step s sends to local rank
//     (local + s) mod L of node (node + D) and receives from local rank
//     (local - s) mod L of node (node - D). L is the most GPUs any node of
//     the group has (2.13), rounded to a power of two or a multiple of 8
//     (2.20, whose order keeps holes where a node has fewer).
//   * Channels. An operation is cut into pieces (enqueue.cc,
//     calcP2pChunkSize): at least nChannelsMin, at most nChannelsMax of them,
//     each at most maxSize; piece k goes to channel
//     p2pChannels[base mod p2pnChannels] + k mod p2pnChannelsPerPeer, where
//     base is the node delta (plus the step / 8) across nodes and the step
//     inside one (channel.h, ncclChannelComputeBase), and p2pChannels
//     mirrors the bits of the index (paths.cc, ncclTopoComputeP2pChannels).
//     The receiver puts the matching receive on the same channel.
//   * Work items. A channel's pieces are fused into work items of at most 8
//     sends and 8 receives, never two with one peer in one item (2.20 also
//     starts a new item every 8 steps, at node boundaries:
//     appendWorkElemP2p). A channel's CTA runs its items one after another
//     and the elements of one item together; an item ends when its slowest
//     element does. So a rank has as many peers in flight as its channels
//     hold items at once: every peer while the node deltas get distinct
//     channels, and beyond that as many node groups of 8 peers as there
//     are channels (16 on ZionEX, whose NCCL search finds 16 channels
//     across servers).
//   * PXN (NCCL_PXN_DISABLE=0, NCCL_P2P_PXN_LEVEL=2, both versions:
//     search.cc, ncclTopoGetNetDev): a send to a GPU of another server goes
//     first over NVLink to the sender's server-mate with the receiver's
//     local index (its rail), whose NIC sends it; the receive uses the
//     receiver's own NIC. So inter-node traffic stays on its rail.
//
// The plan: one step per piece, holding its transfer (with the relay under
// PXN), after the work items that precede the piece's item on its channel
// at the sender and at the receiver; and one empty step per work item, after
// every piece (sent or received) of the item: the item's end. The
// executor's per-transfer software latencies charge each piece; a step's
// issue slot (plan.h) is the piece's place among its sender's sends, so a
// library issue gap (communication.peer_gap_ns) spaces a rank's operations
// as its proxy posts them. Left out: the proxy's limit of two or eight
// network chunks in flight per peer (a window of 256 KiB or more per peer
// against round trips of microseconds: it caps a peer at tens of GB/s,
// above a NIC's share), LL versus Simple protocol (2.20 sends pieces inside
// a server of at most NCCL_P2P_LL_THRESHOLD, 16 KiB, by LL: its latency is
// the transfer latency either way here), and zero-byte operations (PyTorch
// does not post them for all_to_all_single with splits).

#ifndef ZIONSIM_MODELS_COLLECTIVES_NCCL_P2P_H_
#define ZIONSIM_MODELS_COLLECTIVES_NCCL_P2P_H_

#include <cstdint>
#include <vector>

#include "base/json_reader.h"
#include "models/collectives/collective_algorithm.h"

namespace zx::models::collectives {

enum class NcclP2pVersion { kV2_13, kV2_20 };

/// NCCL's environment variables, by the same names in the JSON options
/// ({"NCCL_PXN_DISABLE": 1, "version": "2.13"}). Zero or -1 where NCCL's
/// own default is "decide from the version or the topology".
struct NcclP2pOptions {
  NcclP2pVersion version = NcclP2pVersion::kV2_20;
  int max_p2p_nchannels = 32;        ///< NCCL_MAX_P2P_NCHANNELS (MAXCHANNELS)
  int min_p2p_nchannels = 1;         ///< NCCL_MIN_P2P_NCHANNELS
  int nchannels_per_net_peer = -1;   ///< NCCL_NCHANNELS_PER_NET_PEER; -1: 2.13's 2, 2.20's auto
  std::int64_t buffsize = 1 << 22;   ///< NCCL_BUFFSIZE (Simple protocol buffer)
  std::int64_t p2p_net_chunksize = 1 << 17;  ///< NCCL_P2P_NET_CHUNKSIZE (2.20)
  std::int64_t p2p_nvl_chunksize = 1 << 19;  ///< NCCL_P2P_NVL_CHUNKSIZE (2.20)
  std::int64_t p2p_pci_chunksize = 1 << 17;  ///< NCCL_P2P_PCI_CHUNKSIZE (2.20)
  bool pxn_disable = false;          ///< NCCL_PXN_DISABLE
  int p2p_pxn_level = 2;             ///< NCCL_P2P_PXN_LEVEL: 0 never, 1 when needed, 2 always
};

/// Reads the options; an unknown name is an error with a suggestion, as are
/// values out of NCCL's ranges and 2.20's chunk sizes with version 2.13.
NcclP2pOptions parse_nccl_p2p_options(json::ObjectReader& options);

/// The group as NCCL's communicator sees it and the point-to-point
/// parameters it derives (comm->p2pnChannels and the rest).
struct NcclP2pLayout {
  int ranks = 0;
  int nodes = 0;            ///< nNodes: servers, numbered by their first member
  int max_local_ranks = 0;  ///< maxLocalRanks
  std::vector<int> node;    ///< per member
  std::vector<int> local;   ///< per member: its index among its node's members, by group index
  std::vector<std::vector<int>> node_members;  ///< per node, by local rank
  int p2p_channels = 0;       ///< comm->p2pnChannels (a power of two)
  int channels_per_peer = 0;  ///< comm->p2pnChannelsPerPeer (a power of two)
  int pieces_min = 0;         ///< nChannelsMin of scheduleP2pTasksToPlan
  int pieces_max = 0;         ///< nChannelsMax
  std::int64_t step_bytes = 0;       ///< stepSize (comm->p2pChunkSize in 2.20)
  std::int64_t min_piece_bytes = 0;  ///< minSize
  std::int64_t max_piece_bytes = 0;  ///< maxSize
};

/// Throws zx::InputError for an empty group.
NcclP2pLayout nccl_p2p_layout(const NcclP2pOptions& options, const TopologyView& view);

/// The peers (group indices) `rank` sends to, in NCCL's order, self
/// included; -1 for 2.20's holes. recv: the peers it receives from.
std::vector<int> nccl_p2p_order(const NcclP2pOptions& options, const NcclP2pLayout& layout, int rank,
                                bool recv);

/// The bytes of each piece an operation of `bytes` is cut into (calcP2pChunkSize).
std::int64_t nccl_p2p_piece_bytes(const NcclP2pLayout& layout, std::int64_t bytes);

/// The channel of piece `piece` of rank's send to `peer`.
int nccl_p2p_channel(const NcclP2pLayout& layout, int rank, int peer, int piece);

/// The relay of a send from `src` to `dst` under PXN (a group index), or -1
/// for a direct send.
int nccl_p2p_relay(const NcclP2pOptions& options, const NcclP2pLayout& layout, const TopologyView& view, int src,
                   int dst);

class NcclP2pAlgorithm : public CollectiveAlgorithm {
 public:
  explicit NcclP2pAlgorithm(NcclP2pOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "nccl_p2p"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllToAll; }
  CollectivePlan lower(const CollectiveRequest& request, const TopologyView& topology) const override;

 private:
  NcclP2pOptions options_;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_NCCL_P2P_H_
