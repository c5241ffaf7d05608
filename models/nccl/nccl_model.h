// File: models/nccl/nccl_model.h
//
// NCCL's own cost model, as an analytical algorithm family. NCCL does not
// measure anything at run time to pick how a collective runs: at init it
// fills a table of (latency, bandwidth) per (collective, algorithm, protocol)
// from the topology it detected and hard-coded constants
// (ncclTopoTuneModel in src/graph/tuning.cc), and per call it takes the
// (algorithm, protocol) with the least `latency + bytes / bandwidth`
// (ncclTopoGetAlgoTime). This package redoes that arithmetic so that the
// simulator can both predict a collective's time the way NCCL predicts it
// and pick the algorithm the way NCCL would (`--algo nccl`).
//
// Two constant sets are supported (see nccl_versions()): NCCL 2.13, the
// A100 / ZionEX era (2022), and NCCL 2.20 (2024). Every constant in
// nccl_model.cc is cited with the file and commit it was read from.
//
// Scope: ring and tree, protocols LL, LL128 and Simple; with 2.20 also
// NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) inside one node
// of Hopper or later GPUs and NVLS_TREE (NVLS in every node, a tree across
// them) for all_reduce across such nodes, as NCCL 2.20 weighs them (see
// nvls_graph()). CollNet (SHARP in the network switches), NVLS across
// nodes (it needs CollNet) and PAT are not modelled: ZionEX has none of
// them, and they need more topology than this model's inputs carry. all_to_all
// is not a ring/tree collective in NCCL; it is modelled as NCCL runs it,
// grouped send/recv (see predict()).

#ifndef ZIONSIM_MODELS_NCCL_NCCL_MODEL_H_
#define ZIONSIM_MODELS_NCCL_NCCL_MODEL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace zx::models::nccl {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll };

/// kP2p is not one of NCCL's tuned algorithms: it labels all_to_all, which
/// NCCL runs as grouped send/recv outside the tuning table. kNvls: NCCL's
/// NVLS (NVLink SHARP) inside one node; kNvlsTree: NVLS inside each node
/// and a tree across them (all_reduce); both Simple only.
enum class Algorithm { kTree, kRing, kNvls, kNvlsTree, kP2p };

enum class Protocol { kLl, kLl128, kSimple };

/// Selects the architecture-dependent caps (NCCL indexes them by compute
/// capability: 7.x, 8.x, 9.x).
enum class GpuGeneration { kVolta, kAmpere, kHopper };

enum class NcclVersion { kV2_13, kV2_20 };

struct NcclVersionInfo {
  NcclVersion version;
  std::string_view name;         ///< "2.13", "2.20": what --nccl-version takes
  std::string_view description;  ///< one line: era and where the constants come from
};

/// The supported constant sets, oldest first.
std::vector<NcclVersionInfo> nccl_versions();
/// Looks a version up by name ("2.13", "2.20"); nullopt when unknown.
std::optional<NcclVersion> parse_nccl_version(std::string_view name);

std::string_view to_string(Collective c);
std::string_view to_string(Algorithm a);
std::string_view to_string(Protocol p);
std::string_view to_string(GpuGeneration g);
std::string_view to_string(NcclVersion v);

/// NVLink bandwidth per GPU per direction as NCCL's topology counts it
/// (links x per-link bandwidth). NCCL does not use the datasheet figure:
/// src/graph/topo.h at NVIDIA/nccl b6475625 (v2.20.3) has SM80_NVLINK_BW
/// 20.0 and SM90_NVLINK_BW 20.6 GB/s per link, against the datasheet's 25.
inline constexpr double kA100NvlinkGbps = 12 * 20.0;  // 12 NVLink3 links
inline constexpr double kH100NvlinkGbps = 18 * 20.6;  // 18 NVLink4 links
/// Blackwell: SM100_NVLINK_BW 40.1 GB/s per link in the topo.h of the NCCL
/// releases that know it (2.20 does not), 18 NVLink5 links.
inline constexpr double kB200NvlinkGbps = 18 * 40.1;

/// What NCCL_ALGO and NCCL_PROTO let NCCL pick (parse_nccl_algo(),
/// parse_nccl_proto()); the default: everything NCCL turns on by itself.
struct NcclAllowed {
  /// By Algorithm: tree, ring, nvls, nvls_tree.
  std::array<bool, 4> algorithms{true, true, true, true};
  /// By Protocol: LL, LL128, Simple.
  std::array<bool, 3> protocols{true, true, true};
  /// NCCL_PROTO was given: LL128 is then on or off as it says, even for a
  /// GPU whose default leaves it off (tuning.cc's "enabled by default only
  /// in certain cases" applies to the unset variable alone).
  bool protocols_set = false;
};

/// NCCL_ALGO's syntax ([2.20] tuning.cc, parseList): names joined by ",",
/// case-insensitive, from Tree, Ring, CollNetDirect, CollNetChain, NVLS,
/// NVLSTree; a leading "^" allows all but those. CollNet is accepted and
/// has nothing to turn off here (not modelled). Where NCCL ignores a name
/// it does not know, this throws zx::InputError naming it.
void parse_nccl_algo(std::string_view list, NcclAllowed& allowed);
/// NCCL_PROTO's: LL, LL128, Simple, the same way.
void parse_nccl_proto(std::string_view list, NcclAllowed& allowed);

/// One collective call, as NCCL's tuner sees it.
struct NcclInput {
  Collective collective = Collective::kAllReduce;
  int ranks = 8;           ///< communicator size
  int ranks_per_node = 8;  ///< GPUs of the communicator per node; nodes = ranks / ranks_per_node
  /// Message size as nccl-tests reports "size": the buffer of one rank.
  /// all_reduce, broadcast, reduce: the (in = out) buffer; all_gather: the
  /// output buffer (ranks x what each rank contributes); reduce_scatter: the
  /// input buffer (ranks x each rank's result); all_to_all: the send buffer
  /// (ranks equal chunks). That is also the nBytes NCCL's tuner is given.
  std::int64_t bytes = 0;
  GpuGeneration gpu = GpuGeneration::kAmpere;
  /// Intra-node (NVLink) bandwidth per GPU per direction, GB/s (1e9 B/s),
  /// as NCCL counts it: kA100NvlinkGbps, kH100NvlinkGbps.
  double intra_bw_gbps = kA100NvlinkGbps;
  /// Inter-node bandwidth per GPU per direction, GB/s: 25 for one 200 Gb/s
  /// NIC per GPU (ZionEX). Each node is assumed to have one NIC per GPU.
  double inter_bw_gbps = 25.0;
  /// The PCIe path between a GPU and its NIC, per direction, GB/s, as
  /// NCCL's topology counts it: its narrowest link, lanes x the rate NCCL
  /// gives the generation (kvDictPciGen: Gen4 x16 = 24, Gen5 x16 = 48), a
  /// link that several GPUs' NICs share counted at their share. 0: no
  /// narrower than the NIC.
  double nic_pcie_gbps = 0;
  /// Channels of NCCL's ring and tree graphs; 0: the ones NCCL's search
  /// finds (ring_graph(), tree_graph()). Set, the graphs' bandwidth is
  /// spread over this many (the per-channel caps then scale with it).
  int channels = 0;
  NcclVersion version = NcclVersion::kV2_13;
  /// The node's GPUs hang off NVSwitches that reduce (NVLink SHARP:
  /// third-generation NVSwitch and later, with Hopper and later GPUs), and
  /// the node is one OS image: NCCL 2.20 turns NVLS off on multi-node
  /// NVLink (MNNVL) domains such as GB200 NVL72 ("MNNVL: NVLS not yet
  /// supported", tuning.cc). NCCL then weighs NVLS for all_reduce,
  /// reduce_scatter and all_gather when the communicator is one node of
  /// more than 2 GPUs (nvls.cc: ncclNvlsInit needs more than 2 GPUs), and
  /// NVLS_TREE for all_reduce across several such nodes.
  bool nvls = false;
  /// NCCL_ALGO / NCCL_PROTO. An (algorithm, protocol) left out is off
  /// (tuning.cc zeroes its bandwidth); when that leaves a call nothing,
  /// NCCL falls back to the ring with every protocol ("at least set ring
  /// algo available", its bandwidths from before the switches).
  NcclAllowed allowed;
};

/// NCCL's NVLS graph (ncclTopoCompute, pattern NVLS): channels x
/// per-channel bandwidth inside the node (bwIntra) and to the NICs
/// (bwInter). Zero channels when NCCL would not run NVLS or NVLS_TREE for
/// this input (version 2.13, a GPU before Hopper, nvls false, 2 GPUs per
/// node or fewer).
struct NvlsGraph {
  int channels = 0;
  double bw_per_channel_gbps = 0;  ///< graph->bwIntra
  double bw_inter_gbps = 0;        ///< graph->bwInter
};

/// The NVLS graph's search redone in closed form ([2.20] src/graph/
/// search.cc, ncclTopoCompute and ncclTopoSearchTryNvls): a channel charges
/// its bandwidth once on every GPU's NVLink to and from the NVSwitch and
/// twice on its head's, every GPU heading one, so G channels fit when
/// (G + 1) x bw is within the GPU's NVLink bandwidth. One node (no NIC in
/// NCCL's trimmed topology): every GPU must head a channel, and bw is the
/// first of sm90SpeedArrayIntra that fits (H100, 18 x 20.6 GB/s: 8
/// channels of 40). Several nodes: each NIC leads to its GPU (one NIC per
/// GPU here, within the NIC and its PCIe path, nic_pcie_gbps), the
/// speeds are sm90SpeedArrayInter's within the NIC, the first pass takes
/// the most channels (H100: 8 of 40) and the second raises bwInter up to
/// the NIC (400 Gb/s: 48). Both passes are replayed as the search runs them.
NvlsGraph nvls_graph(const NcclInput& input);

/// One (algorithm, protocol) row of NCCL's table for this call.
struct AlgoProtoTime {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  /// False when NCCL would not consider it (LL128 off for the GPU, tree for
  /// a collective other than all_reduce, NVLS without an NVLS graph); the
  /// numbers below are then zero.
  bool enabled = false;
  /// Why it is off, when it is (one phrase: "tree is for all_reduce only").
  std::string_view off_reason;
  double latency_us = 0;      ///< NCCL's latency, with the per-size ring plateau applied
  double bandwidth_gbps = 0;  ///< NCCL's algorithm bandwidth, with the tree correction
  double time_us = 0;         ///< latency_us + bytes / bandwidth
};

struct NcclPrediction {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  sim::Duration time;     ///< NCCL's predicted time, rounded up to the picosecond
  double time_us = 0;     ///< the same, unrounded
  double algbw_gbps = 0;  ///< nccl-tests algbw: bytes / time
  double busbw_gbps = 0;  ///< nccl-tests busbw: algbw x bus_bw_factor()
  int channels = 0;       ///< the ring graph's channels (NcclInput::channels when set)
  /// Every (algorithm, protocol) NCCL weighed, in NCCL's order (tree,
  /// ring, each LL, LL128, Simple; then NVLS and NVLS_TREE, Simple only);
  /// empty for all_to_all.
  std::vector<AlgoProtoTime> table;
};

/// nccl-tests' busbw / algbw: 2(n-1)/n for all_reduce, (n-1)/n for
/// reduce_scatter, all_gather and all_to_all, 1 for broadcast and reduce.
double bus_bw_factor(Collective collective, int ranks);

/// A ring or tree graph of NCCL's topology search: nChannels channels of
/// bwIntra GB/s inside the node and bwInter to the NICs. NCCL's tuner
/// takes nChannels x bwIntra (2 nodes or fewer) or x bwInter as the bus
/// bandwidth before its caps, and the per-channel caps times nChannels.
struct ChannelGraph {
  int channels = 0;
  double bw_intra_gbps = 0;
  double bw_inter_gbps = 0;
};

/// The ring graph NCCL's search finds ([2.20] src/graph/search.cc,
/// ncclTopoCompute with ncclTopoDupChannels, replayed pass by pass on a
/// closed form of what fits), on this model's topology: the GPUs of a node
/// on one NVSwitch, each with one NIC across nodes. One 8-GPU node: A100
/// (240 GB/s) 6 rings of 40, split into 12 of 20; H100 (370.8) 6 of 60,
/// split into 12 of 30 (360 of the 370.8). Across nodes, one ring per NIC
/// at the fastest speed within the NIC and its PCIe path: ZionEX's A100s
/// (200 Gb/s NICs, PCIe Gen4 x16 = 24) 8 of 24, not split (under 25); H100
/// with 400 Gb/s NICs on Gen5 (48) 8 of 48, not split (Hopper splits under
/// 50 only up to 4 channels). The search is 2.20's for both constant sets
/// ([2.13]'s search.cc was not in the source index).
ChannelGraph ring_graph(const NcclInput& input);

/// The tree graph: the balanced-tree search with the ring graph's channel
/// count as both its minimum and maximum (init.cc), which inside one node
/// starts from NVLink x G / (G - 1): the same as the ring graph for the
/// presets' GPUs, but not always (an A100 counted at its datasheet 300
/// GB/s: ring 16 x 15 after the split, tree 16 x 18). Across nodes, taken
/// as the ring graph.
ChannelGraph tree_graph(const NcclInput& input);

/// The channels a communicator runs (comm->nChannels): the fewer of the
/// ring and tree graphs' channels, doubled by ncclTopoPostset, at most
/// MAXCHANNELS (32); the ring's latency plateau in 2.20 is indexed by it.
int runtime_channels(const NcclInput& input);

/// NCCL's choice and predicted time for one call. Throws zx::InputError for
/// ranks < 2, ranks not a multiple of ranks_per_node, negative bytes,
/// non-positive bandwidths or negative channels.
///
/// all_to_all: each rank sends bytes / ranks to every other rank as NCCL's
/// grouped send/recv does; the ranks_per_node - 1 intra-node peers share the
/// NVLink bandwidth and the ranks - ranks_per_node remote peers the NIC,
/// both at once, so time = p2p latency + max(intra bytes / intra bw, inter
/// bytes / inter bw), where the p2p latency is one ring/Simple step
/// (baseLat + hwLat of NVLink, or of the network when there are remote
/// peers): NCCL has no tuning entry for send/recv, so this is our choice.
NcclPrediction predict(const NcclInput& input);

}  // namespace zx::models::nccl

#endif  // ZIONSIM_MODELS_NCCL_NCCL_MODEL_H_
