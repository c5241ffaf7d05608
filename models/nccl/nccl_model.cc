// File: models/nccl/nccl_model.cc
//
// The arithmetic of NCCL's tuner (ncclTopoTuneModel and ncclTopoGetAlgoTime
// in src/graph/tuning.cc), written afresh from reading it, with the constant
// sets of two versions. Sources, cited next to each constant as [2.13] and
// [2.20]:
//
//   [2.13] src/graph/tuning.cc of Oneflow-Inc/occl at commit
//          2f7b9326e58479dbf64a742766cc94e6edc11ef2, a fork of NVIDIA NCCL
//          2.13.2 (its makefiles/version.mk, commit 76384598, says 2.13.2)
//          whose tuning constants are NCCL's unchanged; the NVIDIA/nccl tag
//          itself was not in the source index this was written from. The
//          same llMaxBws / perChMaxTreeBws / ll128MaxBwPerCh = 20.0 appear in
//          ROCm's 2022 copy of the file, which corroborates them.
//   [2.20] src/graph/tuning.cc of NVIDIA/nccl at commit
//          b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2 (makefiles/version.mk at
//          that commit: 2.20.3).
//
// Units follow NCCL: latencies in microseconds, bandwidths in GB/s (1e9
// B/s), so bytes / (1000 * GB/s) is microseconds. NCCL computes in float;
// this file computes in double, which moves results by parts in 1e7.
//
// What NCCL reads from its topology and this model assumes instead:
// intra-node links are NVLink (hwLat row NVLINK, LL128 allowed); each GPU's
// NIC sits on its PCIe switch (typeInter <= PATH_PXB, LL128 allowed); the
// CPU is Intel x86 (ZionEX: Cooper Lake), which picks llMaxBws' Intel row
// across nodes and a 1 us network overhead in 2.20; the network plugin
// reports no extra latency (graph->latencyInter = 0); the ring and tree
// graphs are what search.cc finds on a node whose GPUs share one NVSwitch,
// each with its own NIC (ring_graph(), tree_graph()), and the tree keeps
// the balanced-tree pattern (so 2.20's 0.85 penalty for the plain tree
// pattern does not apply); one node's
// channels are all the same ring order (sameChannels) and several nodes'
// are not, because each ring enters through a different NIC.
//
// NVLS ([2.20] only; NCCL added it in 2.17): inside one node the
// NVSwitches count as NCCL's NVS node, every GPU's NVLinks as one link to
// it of intra_bw_gbps, and the topology holds no NIC (ncclTopoTrimSystem
// drops them when all ranks are local), so the NVLS graph's search is the
// intra-node one of src/graph/search.cc at the [2.20] commit; nvls_graph()
// redoes it in closed form.

#include "models/nccl/nccl_model.h"

#include <algorithm>
#include <cctype>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include <fmt/format.h>

#include "base/error.h"

namespace zx::models::nccl {
namespace {

constexpr int kTree = 0;
constexpr int kRing = 1;
constexpr int kLl = 0;
constexpr int kLl128 = 1;
constexpr int kSimple = 2;
constexpr int kNvlink = 0;
constexpr int kNet = 1;

using Row3 = std::array<double, 3>;
using Table3x3 = std::array<Row3, 3>;  // [architecture row][scale: 1 node, 2 nodes, more]

struct Constants {
  // [algorithm: tree, ring][protocol: LL, LL128, Simple], microseconds.
  std::array<Row3, 2> base_lat;
  // [hardware: NVLink, network][algorithm][protocol], microseconds. NCCL's
  // PCI row is left out: the model assumes NVLink inside a node.
  std::array<std::array<Row3, 2>, 2> hw_lat;
  // LL's bus bandwidth cap, GB/s. Rows: one node, by GPU (Volta, Ampere,
  // Hopper); several nodes, by CPU (row 0 Intel, row 1 AMD).
  Table3x3 ll_max_bw;
  // Per-channel caps, GB/s, rows by GPU.
  Table3x3 ring_ll128_per_ch;
  Table3x3 tree_ll128_per_ch;
  Table3x3 tree_per_ch;
  // Tree bandwidth correction by log2(bytes / 64), 64 B to 256 MiB.
  std::array<std::array<double, 23>, 3> tree_correction;
};

// [2.13] and [2.20] treeCorrectionFactor[3][23] (LL, LL128, Simple): the
// same values in both versions.
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

// ---- NCCL 2.13 --------------------------------------------------------------
constexpr Constants kV2_13 = {
    // [2.13] baseLat: Tree { 4.4, 4.4, 0 }, Ring { 3.6, 10.0, 8.4 }.
    .base_lat = {{{4.4, 4.4, 0}, {3.6, 10.0, 8.4}}},
    .hw_lat =
        {{
            // [2.13] hwLat NVLINK: Tree { .52, 1.25, 28 }, Ring { .47, 1.9, 3.4 }.
            {{{.52, 1.25, 28}, {.47, 1.9, 3.4}}},
            // [2.13] hwLat NET: Tree { 5.0, 8.5, 28 }, Ring { 2.7, 4.0, 28 }.
            {{{5.0, 8.5, 28}, {2.7, 4.0, 28}}},
        }},
    // [2.13] llMaxBws[2][3]: Volta-N1/Intel-N2/Intel-N4 {39.0, 39.0, 20.4},
    // Ampere-N1/AMD-N2/AMD-N4 {87.7, 22.5, 19.0}. 2.13 has no Hopper row: it
    // indexes by "compCap80", so a Hopper GPU reads the Volta row (row 2 is
    // never used; arch_row() maps Hopper to 0 for this version).
    .ll_max_bw = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {0, 0, 0}}},
    // [2.13] ll128MaxBwPerCh = 20.0, one value for every GPU and scale; the
    // tree's LL128 cap uses the same constant.
    .ring_ll128_per_ch = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {0, 0, 0}}},
    .tree_ll128_per_ch = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {0, 0, 0}}},
    // [2.13] perChMaxTreeBws[2][3]: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8}.
    .tree_per_ch = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 0, 0}}},
    .tree_correction = kTreeCorrection,
};

// ---- NCCL 2.20 --------------------------------------------------------------
constexpr Constants kV2_20 = {
    // [2.20] baseLat: Tree { 6.8, 14.0, 0 }, Ring { 6.6, 14.0, 8.4 }.
    .base_lat = {{{6.8, 14.0, 0}, {6.6, 14.0, 8.4}}},
    .hw_lat =
        {{
            // [2.20] hwLat NVLINK: Tree { .6, 1.25, 28 }, Ring { .6, 1.9, 3.4 }.
            {{{.6, 1.25, 28}, {.6, 1.9, 3.4}}},
            // [2.20] hwLat NET: Tree { 5.0, 8.5, 28 }, Ring { 2.7, 4.0, 14.0 }.
            {{{5.0, 8.5, 28}, {2.7, 4.0, 14.0}}},
        }},
    // [2.20] llMaxBws[3][3]: Volta {39.0, 39.0, 20.4}, Ampere {87.7, 22.5, 19.0},
    // Hopper {87.7, 22.5, 19.0}.
    .ll_max_bw = {{{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}}},
    // [2.20] perChMaxRingLL128Bws: Volta and Ampere 20.0, Hopper 36.7.
    .ring_ll128_per_ch = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}}},
    // [2.20] perChMaxTreeLL128Bws: Volta and Ampere 20.0, Hopper {36.7, 36.7, 29.0}.
    .tree_ll128_per_ch = {{{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}}},
    // [2.20] perChMaxTreeBws: Volta {26.5, 18.5, 10.0}, Ampere {24.0, 23.6, 17.8},
    // Hopper {38.7, 41.4, 36.0}.
    .tree_per_ch = {{{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}}},
    .tree_correction = kTreeCorrection,
};

// Constants that sit in the code of tuning.cc rather than in its tables.
// Both versions:
constexpr double kRingLlShare = 1.0 / 4.0;     // ring LL bus bw share, several nodes or reducing
constexpr double kRingLlShareCopy = 1.0 / 3.0;  // ... one node, not reducing
constexpr double kRingLl128Share = 0.92;        // ring LL128, 2+ GPUs per node
constexpr double kRingLl128ShareOnePpn = 0.7;   // ring LL128, 1 GPU per node
constexpr double kTreeShare = 0.92;             // tree, any protocol
constexpr double kTreeLlShare = 1.0 / 3.8;      // tree LL, on top of kTreeShare
constexpr double kTreeLl128ShareOneNode = 7.0 / 9.0;
constexpr double kTreeLl128ShareNodes = 120.0 / 128.0;
constexpr double kTreeAlgbwRatio = 0.5;  // tree all_reduce: algbw = busBw / 2
// [2.13] only: "if (compCap80) busBw = std::min(busBw, 235.0f)".
constexpr double kV2_13AmpereBusBwCap = 235.0;
// [2.13] only: "if (nNodes > 1 && p == NCCL_PROTO_LL) intraLat *= 1.8".
constexpr double kV2_13LlIntraLatMultiNode = 1.8;
// [2.13] ring plateau: lat *= 1.9 once nBytes >= nRanks / 16.0 * 65536.
constexpr double kV2_13PlateauFactor = 1.9;
// [2.20] ring plateau: lat *= (minCompCap < 80 ? 1.9 : 1.4) once
// nBytes / (nChannels * nRanks) >= 64.
constexpr double kV2_20PlateauFactorVolta = 1.9;
constexpr double kV2_20PlateauFactor = 1.4;
// [2.20] getNetOverhead(): 1.0 us on Intel x86 (2.0 on AMD), times 3 for
// Simple; a ring's intra-node step costs at least this across nodes.
constexpr double kV2_20NetOverheadIntelUs = 1.0;
constexpr double kV2_20NetOverheadSimpleFactor = 3.0;

const Constants& constants(NcclVersion v) { return v == NcclVersion::kV2_13 ? kV2_13 : kV2_20; }

// NVLS, [2.20]. tuning.cc: baseLat[NVLS] = 0 and hwLat[NVLINK][NVLS][Simple]
// = 23 us, the whole latency inside one node ("latencies = intraLat");
// the graph's nChannels x min(bwIntra, bwInter) bus bandwidth becomes
// algorithm bandwidth at 5/6 (the ratio NCCL applies to NVLS and
// NVLS_TREE); protocols other than Simple are skipped.
constexpr double kV2_20NvlsLatencyUs = 23.0;
// NVLS_TREE: hwLat[NVLINK][NVLSTree][Simple] = 23 us, once, and
// hwLat[NET][NVLSTree][Simple] = 14 us per tree level up and down:
// latency = intraLat + 2 x log2i(nNodes) x interLat.
constexpr double kV2_20NvlsTreeLatencyUs = 23.0;
constexpr double kV2_20NvlsTreeNetLatencyUs = 14.0;
constexpr double kV2_20NvlsAlgbwRatio = 5.0 / 6.0;
// search.cc: sm90SpeedArrayIntra, the per-channel bandwidths (GB/s) the
// search tries on compute capability 9.0 and up with no NIC, fastest first.
constexpr std::array<double, 10> kSm90SpeedArrayIntra = {60.0, 50.0, 40.0, 30.0, 24.0,
                                                         20.0, 15.0, 12.0, 6.0,  3.0};
// ... and sm90SpeedArrayInter, the ones it tries when the topology has NICs.
constexpr std::array<double, 17> kSm90SpeedArrayInter = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                                         15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// nvls.cc (ncclNvlsInit): no NVLS for 2 GPUs or fewer.
constexpr int kNvlsMinGpus = 3;

// The row of the per-GPU tables: 2.13 knows only "Ampere or not"; 2.20
// indexes Volta, Ampere, Hopper.
int arch_row(NcclVersion v, GpuGeneration g) {
  if (v == NcclVersion::kV2_13) return g == GpuGeneration::kAmpere ? 1 : 0;
  switch (g) {
    case GpuGeneration::kVolta: return 0;
    case GpuGeneration::kAmpere: return 1;
    case GpuGeneration::kHopper: return 2;
  }
  return 0;
}

// LL128 on by default: [2.13] only sm70 and sm80; [2.20] sm70, sm80, sm90.
bool ll128_enabled(NcclVersion v, GpuGeneration g) {
  return v == NcclVersion::kV2_20 || g != GpuGeneration::kHopper;
}

// NCCL's log2i: floor(log2(n)), 0 for n <= 1.
int log2i(std::int64_t n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

void fail(const std::string& message) {
  throw InputError(Diagnostic{.source = "nccl model", .message = message});
}

void validate(const NcclInput& in) {
  if (in.ranks < 2) fail("ranks must be at least 2, got " + std::to_string(in.ranks));
  if (in.ranks_per_node < 1 || in.ranks % in.ranks_per_node != 0) {
    fail("ranks (" + std::to_string(in.ranks) +
         ") must be a positive multiple of ranks_per_node (" +
         std::to_string(in.ranks_per_node) + ")");
  }
  if (in.bytes < 0) fail("bytes must not be negative, got " + std::to_string(in.bytes));
  if (!(in.intra_bw_gbps > 0) || !std::isfinite(in.intra_bw_gbps)) {
    fail("intra_bw_gbps must be positive, got " + std::to_string(in.intra_bw_gbps));
  }
  if (!(in.inter_bw_gbps > 0) || !std::isfinite(in.inter_bw_gbps)) {
    fail("inter_bw_gbps must be positive, got " + std::to_string(in.inter_bw_gbps));
  }
  if (!(in.nic_pcie_gbps >= 0) || !std::isfinite(in.nic_pcie_gbps)) {
    fail("nic_pcie_gbps must not be negative, got " + std::to_string(in.nic_pcie_gbps));
  }
  if (in.channels < 0) fail("channels must not be negative, got " + std::to_string(in.channels));
}

// ---- The ring and tree graphs (ncclTopoCompute, [2.20] search.cc) ----------

// MAXCHANNELS (src/include/device.h, 32 in the releases both constant
// sets come from); init.cc gives the ring graph maxChannels = MAXCHANNELS / 2
// and the tree graph exactly the ring graph's channel count.
constexpr int kMaxChannels = 32;
constexpr int kRingMaxChannels = kMaxChannels / 2;
// search.cc: speedArrayIntra / speedArrayInter, the per-channel speeds
// (GB/s) tried below compute capability 9.0, fastest first.
constexpr std::array<double, 13> kSpeedArrayIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                     9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr std::array<double, 19> kSpeedArrayInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                     12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                     3.0,  2.4,  1.2,  0.24, 0.12};
// ncclTopoDupChannels: graphs of 25 GB/s per channel or more are split
// into twice the channels at half the speed, except on Hopper when the
// speed is under 50 and there are more than 4 channels.
constexpr double kDupMinSpeed = 25.0;
constexpr double kDupHopperMinSpeed = 50.0;
constexpr int kDupHopperMaxChannels = 4;
// Pass 1 steps down to the next speed only while it is above this share
// of the best graph's.
constexpr double kNextSpeedShare = .49;
// Link bandwidths are decremented in thousandths (SUB_ROUND): compare with
// that slack so that an exact fit is a fit in double too.
constexpr double kSearchSlack = 1e-3;

// The bandwidth from a GPU to its NIC as the search sees it: the NIC's
// (net.bw, and its NET link) and the PCIe links on the way.
double nic_path_gbps(const NcclInput& in) {
  return in.nic_pcie_gbps > 0 ? std::min(in.inter_bw_gbps, in.nic_pcie_gbps) : in.inter_bw_gbps;
}

// How many channels of `speed` GB/s the search fits, under this model's
// topology: every GPU on one NVSwitch (its NVLinks one link of
// intra_bw_gbps each way) and, across nodes, one NIC per GPU behind PCIe.
//  - One node, ring or tree: a channel visits every GPU and charges speed
//    once on each GPU's link to the switch and once on the link back (the
//    tree's chain skips the last GPU's, the same GPU in every channel), so
//    floor(NVLink / speed) fit.
//  - Several nodes: a channel enters from a NIC, visits every GPU and
//    leaves through a NIC; each NIC takes floor(path / speed) channels
//    (ncclTopoSearchRecNet debits net.bw; the PCIe links are debited each
//    way), and the G - 1 NVLink hops of a channel start at distinct GPUs,
//    the channels spread over the NICs, so each GPU's NVLink carries
//    (G - 1) / G of them.
int channels_fitting(const NcclInput& in, double speed) {
  const int gpus = in.ranks_per_node;
  const bool one_node = in.ranks == gpus;
  const auto fit = [](double capacity, double per) {
    return static_cast<int>(std::floor((capacity + kSearchSlack) / per));
  };
  if (one_node) return fit(in.intra_bw_gbps, speed);
  int channels = gpus * fit(nic_path_gbps(in), speed);
  if (gpus > 1) {
    channels = std::min(channels, fit(in.intra_bw_gbps, speed * (gpus - 1) / gpus));
  }
  return channels;
}

// ncclTopoCompute for the ring (tree false) or the balanced tree (tree
// true, with tree_channels = the ring graph's channels as its minimum and
// maximum), replayed pass by pass on channels_fitting(): pass 1 from the
// fastest speed within maxBw (and minChannels x speed within totalBw),
// stepping down while the next speed is above .49 of the best graph's,
// stopping at a perfect graph (maxChannels) or once channels x speed
// reaches totalBw; then ncclTopoDupChannels; then pass 2, with the channel
// count as the minimum, tries each faster speed and keeps a graph that
// carries more. Across nodes the tree graph is taken as the ring graph:
// NCCL's balanced tree debits its NIC half on each of two GPUs, which
// this model's topology does not tell apart.
ChannelGraph search_ring_or_tree(const NcclInput& in, bool tree, int tree_channels) {
  const int gpus = in.ranks_per_node;
  const bool one_node = in.ranks == gpus;
  if (tree && !one_node) return search_ring_or_tree(in, false, 0);
  const bool sm90 = in.gpu == GpuGeneration::kHopper;
  const std::span<const double> speeds =
      one_node ? (sm90 ? std::span<const double>(kSm90SpeedArrayIntra) : std::span<const double>(kSpeedArrayIntra))
               : (sm90 ? std::span<const double>(kSm90SpeedArrayInter) : std::span<const double>(kSpeedArrayInter));
  const int min_channels = tree ? tree_channels : 1;
  const int max_channels = tree ? tree_channels : kRingMaxChannels;
  // totalBw: the GPU's NVLink; maxBw: the best path to another GPU (one
  // node) or to a NIC (several).
  const double total_bw = in.intra_bw_gbps;
  const double max_bw = one_node ? in.intra_bw_gbps : nic_path_gbps(in);
  // Patterns other than the ring start from totalBw x G / (G - 1).
  const double start_total = tree && gpus > 1 ? total_bw * gpus / (gpus - 1) : total_bw;
  const auto found = [&](double speed) { return std::min(max_channels, channels_fitting(in, speed)); };

  ChannelGraph best;
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > max_bw || speeds[i] * min_channels > start_total + kSearchSlack)) ++i;
  for (;;) {
    const int k = found(speeds[i]);
    bool perfect = false;
    // ncclTopoCompareGraphs: a graph replaces the saved one when it has
    // at least minChannels and carries more (channels x speed).
    if (k >= min_channels && k * speeds[i] > best.channels * best.bw_intra_gbps + kSearchSlack) {
      best = {.channels = k, .bw_intra_gbps = speeds[i], .bw_inter_gbps = speeds[i]};
      perfect = k == max_channels;
    }
    if (perfect || best.channels * best.bw_inter_gbps >= total_bw - kSearchSlack) break;
    if (i + 1 < speeds.size() &&
        (best.channels == 0 || speeds[i + 1] / best.bw_inter_gbps > kNextSpeedShare)) {
      ++i;
      continue;
    }
    break;
  }
  if (best.channels == 0) {
    // "Could not find a path ... falling back to simple order": one
    // channel at 0.1 GB/s.
    return {.channels = 1, .bw_intra_gbps = 0.1, .bw_inter_gbps = 0.1};
  }
  if (best.bw_intra_gbps >= kDupMinSpeed &&
      !(sm90 && best.bw_intra_gbps < kDupHopperMinSpeed && best.channels > kDupHopperMaxChannels)) {
    const int dup = std::min(2 * best.channels, max_channels);
    const int divisor = (dup + best.channels - 1) / best.channels;
    best = {.channels = dup, .bw_intra_gbps = best.bw_intra_gbps / divisor,
            .bw_inter_gbps = best.bw_inter_gbps / divisor};
  }
  // Pass 2, the channel count now the minimum: the ring tries every
  // faster speed (both speeds at once); the tree raises bwIntra alone,
  // one speed at a time while each try fits and bwIntra is under twice
  // bwInter.
  i = 0;
  while (i + 1 < speeds.size() && speeds[i] > best.bw_inter_gbps) ++i;
  const int fixed = best.channels;
  while (i > 0) {
    const double speed = speeds[--i];
    const int k = found(speed);
    if (tree) {
      if (k < fixed || !(best.bw_intra_gbps < 2 * best.bw_inter_gbps)) break;
      best.bw_intra_gbps = speed;
    } else if (k >= fixed && k * speed > best.channels * best.bw_intra_gbps + kSearchSlack) {
      best = {.channels = k, .bw_intra_gbps = speed, .bw_inter_gbps = speed};
    }
  }
  return best;
}

// NCCL's per-call table entry for one (algorithm, protocol): the
// ncclTopoTuneModel part (bandwidth, latency) then ncclTopoGetAlgoTime.
AlgoProtoTime tuned_entry(const NcclInput& in, const ChannelGraph& ring, const ChannelGraph& tree,
                          int comm_channels, int a, int p, bool ring_fallback = false) {
  const Constants& k = constants(in.version);
  const NcclVersion v = in.version;
  const Collective coll = in.collective;
  const int n = in.ranks;
  const int nodes = in.ranks / in.ranks_per_node;
  const double ppn = static_cast<double>(n) / nodes;
  const int scale = nodes <= 2 ? nodes - 1 : 2;
  const int arch = arch_row(v, in.gpu);

  AlgoProtoTime e{.algorithm = a == kTree ? Algorithm::kTree : Algorithm::kRing,
                  .protocol = static_cast<Protocol>(p)};
  // Only all_reduce has a tree; LL128 only where NCCL turns it on.
  if (a == kTree && coll != Collective::kAllReduce) {
    e.off_reason = "NCCL's tree runs all_reduce only";
    return e;
  }
  if (!ring_fallback) {
    if (p == kLl128 && !in.allowed.protocols_set && !ll128_enabled(v, in.gpu)) {
      e.off_reason = "LL128 is off by default for this GPU in this version";
      return e;
    }
    // [2.13] "Only disable algo for Allreduce since others only have one".
    if ((v == NcclVersion::kV2_20 || coll == Collective::kAllReduce) &&
        !in.allowed.algorithms[static_cast<std::size_t>(e.algorithm)]) {
      e.off_reason = "NCCL_ALGO leaves it out";
      return e;
    }
    if (!in.allowed.protocols[static_cast<std::size_t>(p)]) {
      e.off_reason = "NCCL_PROTO leaves it out";
      return e;
    }
  }
  e.enabled = true;

  // The graph (ring_graph(), tree_graph()): nChannels x bw per channel,
  // bwIntra up to 2 nodes and bwInter beyond (equal for these graphs).
  // NcclInput::channels spreads the same bandwidth over that many.
  const ChannelGraph& graph = a == kTree ? tree : ring;
  const double graph_bw = graph.channels * (nodes <= 2 ? graph.bw_intra_gbps : graph.bw_inter_gbps);
  const int channels = in.channels > 0 ? in.channels : graph.channels;
  double bus_bw = graph_bw;

  if (v == NcclVersion::kV2_13 && in.gpu == GpuGeneration::kAmpere) {
    bus_bw = std::min(bus_bw, kV2_13AmpereBusBwCap);
  }
  // Across nodes, llMaxBws is indexed by CPU vendor: Intel, row 0.
  const double ll_max_bw = k.ll_max_bw[nodes == 1 ? arch : 0][scale];
  if (a == kRing && p == kLl) {
    const bool quarter =
        nodes > 1 || coll == Collective::kAllReduce || coll == Collective::kReduce;
    bus_bw = std::min(ll_max_bw, bus_bw * (quarter ? kRingLlShare : kRingLlShareCopy));
  }
  if (a == kRing && p == kLl128) {
    bus_bw = std::min(bus_bw * (ppn < 2 ? kRingLl128ShareOnePpn : kRingLl128Share),
                      channels * k.ring_ll128_per_ch[arch][scale]);
  }
  if (a == kTree) bus_bw = std::min(bus_bw * kTreeShare, channels * k.tree_per_ch[arch][scale]);
  if (a == kTree && p == kLl) bus_bw = std::min(bus_bw * kTreeLlShare, ll_max_bw);
  if (a == kTree && p == kLl128) {
    bus_bw = std::min(bus_bw * (nodes == 1 ? kTreeLl128ShareOneNode : kTreeLl128ShareNodes),
                      channels * k.tree_ll128_per_ch[arch][scale]);
  }

  // Steps of the ring, and how many of them cross nodes.
  int nsteps = n;
  int inter_steps = nodes;
  if (coll == Collective::kAllReduce) {
    nsteps = 2 * (n - 1);
    inter_steps = nodes > 1 ? 2 * nodes : 0;
  } else if (coll == Collective::kReduceScatter || coll == Collective::kAllGather) {
    nsteps = n - 1;
    inter_steps = nodes - 1;
  }
  // Bus bandwidth to algorithm bandwidth: a ring moves nsteps / n of the
  // buffer through each link, a tree all_reduce twice the buffer.
  double bw = bus_bw * (a == kRing ? static_cast<double>(n) / nsteps : kTreeAlgbwRatio);

  double lat = k.base_lat[a][p];
  double intra_lat = k.hw_lat[kNvlink][a][p];
  const double inter_lat = k.hw_lat[kNet][a][p];
  if (v == NcclVersion::kV2_13 && nodes > 1 && p == kLl) intra_lat *= kV2_13LlIntraLatMultiNode;
  if (a == kRing) {
    const int hw = nodes == 1 ? kNvlink : kNet;
    if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
      const bool same_channels = nodes == 1;
      if (same_channels) {
        lat += k.hw_lat[hw][kRing][p];
      } else {
        // NCCL charges Simple a tree chunk's latency per step here.
        lat += nsteps * (p == kSimple ? k.hw_lat[hw][kTree][p] : k.hw_lat[hw][kRing][p]);
      }
    } else {
      if (v == NcclVersion::kV2_20 && nodes > 1) {
        const double overhead =
            kV2_20NetOverheadIntelUs * (p == kSimple ? kV2_20NetOverheadSimpleFactor : 1.0);
        intra_lat = std::max(intra_lat, overhead);
      }
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
  } else {
    lat += 2 * ((n / nodes - 1) * intra_lat + log2i(nodes) * inter_lat);
  }

  // ncclTopoGetAlgoTime: the tree's per-size correction and the ring's
  // latency plateau for large multi-node all_reduce.
  const int log_size = log2i(in.bytes >> 6);
  if (a == kTree && log_size < 23) bw *= k.tree_correction[p][log_size];
  if (a == kRing && p == kSimple && nodes > 1 && coll == Collective::kAllReduce) {
    if (v == NcclVersion::kV2_13) {
      if (static_cast<double>(in.bytes) >= n / 16.0 * 65536) lat *= kV2_13PlateauFactor;
    } else if (in.bytes / (static_cast<std::int64_t>(comm_channels) * n) >= 64) {
      lat *= in.gpu == GpuGeneration::kVolta ? kV2_20PlateauFactorVolta : kV2_20PlateauFactor;
    }
  }
  e.latency_us = lat;
  e.bandwidth_gbps = bw;
  e.time_us = lat + static_cast<double>(in.bytes) / (1000.0 * bw);
  return e;
}

// Why NCCL has no NVLS graph for this input (nvls_graph() is empty).
std::string_view no_nvls_graph_reason(const NcclInput& in) {
  return in.version != NcclVersion::kV2_20   ? "this version has no NVLS"
         : in.gpu != GpuGeneration::kHopper ? "NVLS needs Hopper or later"
         : !in.nvls                          ? "the NVLink switch does not reduce here (or an MNNVL domain)"
                                             : "NVLS needs more than 2 GPUs per node";
}

// NCCL's NVLS (one node) or NVLS_TREE (several) entry, Simple: the
// graph's bandwidth at 5/6.
AlgoProtoTime nvls_entry(const NcclInput& in, bool tree) {
  AlgoProtoTime e{.algorithm = tree ? Algorithm::kNvlsTree : Algorithm::kNvls, .protocol = Protocol::kSimple};
  const int nodes = in.ranks / in.ranks_per_node;
  if (tree && in.collective != Collective::kAllReduce) {
    e.off_reason = "NVLS_TREE runs all_reduce only";
    return e;
  }
  if (!tree && in.collective != Collective::kAllReduce && in.collective != Collective::kReduceScatter &&
      in.collective != Collective::kAllGather) {
    e.off_reason = "NVLS runs all_reduce, reduce_scatter and all_gather only";
    return e;
  }
  if (!tree && nodes > 1) {
    e.off_reason = "NVLS across nodes needs CollNet";
    return e;
  }
  if (tree && nodes == 1) {
    e.off_reason = "NVLS_TREE is for several nodes";
    return e;
  }
  const NvlsGraph graph = nvls_graph(in);
  if (graph.channels == 0) {
    e.off_reason = no_nvls_graph_reason(in);
    return e;
  }
  if (!in.allowed.algorithms[static_cast<std::size_t>(e.algorithm)]) {
    e.off_reason = "NCCL_ALGO leaves it out";
    return e;
  }
  if (!in.allowed.protocols[static_cast<std::size_t>(Protocol::kSimple)]) {
    e.off_reason = "NCCL_PROTO leaves it out";
    return e;
  }
  e.enabled = true;
  // tuning.cc: NVLS takes min(bwIntra, bwInter); NVLS_TREE halves bwInter
  // beyond 2 nodes (a tree node sends up and down over its NICs).
  const double bw = tree ? std::min(graph.bw_per_channel_gbps,
                                    nodes <= 2 ? graph.bw_inter_gbps : graph.bw_inter_gbps / 2)
                         : std::min(graph.bw_per_channel_gbps, graph.bw_inter_gbps);
  e.bandwidth_gbps = graph.channels * bw * kV2_20NvlsAlgbwRatio;
  // NVLS: the NVLink latency alone. NVLS_TREE: that plus a network
  // latency per tree level each way (latencyInter 0, so no flush extra).
  e.latency_us = tree ? kV2_20NvlsTreeLatencyUs + 2 * log2i(nodes) * kV2_20NvlsTreeNetLatencyUs
                      : kV2_20NvlsLatencyUs;
  e.time_us = e.latency_us + static_cast<double>(in.bytes) / (1000.0 * e.bandwidth_gbps);
  return e;
}

// all_to_all as grouped send/recv (see the header).
double all_to_all_us(const NcclInput& in) {
  const Constants& k = constants(in.version);
  const int remote = in.ranks - in.ranks_per_node;
  const double chunk = static_cast<double>(in.bytes) / in.ranks;
  const double intra_us = (in.ranks_per_node - 1) * chunk / (1000.0 * in.intra_bw_gbps);
  const double inter_us = remote * chunk / (1000.0 * in.inter_bw_gbps);
  const int hw = remote > 0 ? kNet : kNvlink;
  const double lat = k.base_lat[kRing][kSimple] + k.hw_lat[hw][kRing][kSimple];
  return lat + std::max(intra_us, inter_us);
}

}  // namespace

std::vector<NcclVersionInfo> nccl_versions() {
  return {
      {NcclVersion::kV2_13, "2.13",
       "NCCL 2.13 (2022, A100/ZionEX era): tuning.cc of Oneflow-Inc/occl 2f7b9326, a 2.13.2 fork"},
      {NcclVersion::kV2_20, "2.20",
       "NCCL 2.20 (2024, Hopper caps, NVLS and NVLS_TREE): tuning.cc and search.cc of NVIDIA/nccl b6475625 (v2.20.3)"},
  };
}

std::optional<NcclVersion> parse_nccl_version(std::string_view name) {
  for (const NcclVersionInfo& info : nccl_versions()) {
    if (info.name == name) return info.version;
  }
  return std::nullopt;
}

std::string_view to_string(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kAllGather: return "all_gather";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllToAll: return "all_to_all";
  }
  return "?";
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kTree: return "tree";
    case Algorithm::kRing: return "ring";
    case Algorithm::kNvls: return "nvls";
    case Algorithm::kNvlsTree: return "nvls_tree";
    case Algorithm::kP2p: return "p2p";
  }
  return "?";
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::kLl: return "LL";
    case Protocol::kLl128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

std::string_view to_string(GpuGeneration g) {
  switch (g) {
    case GpuGeneration::kVolta: return "volta";
    case GpuGeneration::kAmpere: return "ampere";
    case GpuGeneration::kHopper: return "hopper";
  }
  return "?";
}

std::string_view to_string(NcclVersion v) { return v == NcclVersion::kV2_13 ? "2.13" : "2.20"; }

namespace {

// parseList: "A,B" sets those, "^A,B" all but those; case-insensitive.
// `names[i]` is NCCL's name of slot i (nullopt: accepted, nothing here).
template <std::size_t N>
void parse_nccl_list(std::string_view variable, std::string_view list,
                     const std::array<std::pair<std::string_view, int>, N>& names, bool* slots, int slot_count) {
  bool exclude = false;
  if (!list.empty() && list.front() == '^') {
    exclude = true;
    list.remove_prefix(1);
  }
  for (int i = 0; i < slot_count; ++i) slots[i] = exclude;
  const auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::size_t start = 0;
  bool any = false;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view original = list.substr(start, comma - start);
    const std::string token = lower(original);
    start = comma + 1;
    if (token.empty()) continue;
    const auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return lower(n.first) == token; });
    if (it == names.end()) {
      std::string valid;
      for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + std::string(n.first);
      fail(fmt::format("{}: unknown name '{}'; valid: {} (joined by commas, '^' first to leave them out)", variable,
                       std::string(original), valid));
    }
    any = true;
    if (it->second >= 0) slots[it->second] = !exclude;
  }
  if (!any) fail(fmt::format("{}: expected at least one name, got '{}'", variable, std::string(list)));
}

}  // namespace

void parse_nccl_algo(std::string_view list, NcclAllowed& allowed) {
  // [2.20] ncclAlgoStr, with Algorithm's slots (CollNet: none).
  static constexpr std::array<std::pair<std::string_view, int>, 6> kNames = {{{"Tree", 0},
                                                                             {"Ring", 1},
                                                                             {"CollNetDirect", -1},
                                                                             {"CollNetChain", -1},
                                                                             {"NVLS", 2},
                                                                             {"NVLSTree", 3}}};
  bool slots[4];
  parse_nccl_list("NCCL_ALGO", list, kNames, slots, 4);
  for (int i = 0; i < 4; ++i) allowed.algorithms[static_cast<std::size_t>(i)] = slots[i];
}

void parse_nccl_proto(std::string_view list, NcclAllowed& allowed) {
  // [2.20] ncclProtoStr.
  static constexpr std::array<std::pair<std::string_view, int>, 3> kNames = {{{"LL", 0}, {"LL128", 1}, {"Simple", 2}}};
  bool slots[3];
  parse_nccl_list("NCCL_PROTO", list, kNames, slots, 3);
  for (int i = 0; i < 3; ++i) allowed.protocols[static_cast<std::size_t>(i)] = slots[i];
  allowed.protocols_set = true;
}

double bus_bw_factor(Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce: return 2 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce: return 1;
  }
  return 1;
}

NvlsGraph nvls_graph(const NcclInput& input) {
  validate(input);
  const int gpus = input.ranks_per_node;
  const bool one_node = input.ranks == gpus;
  if (input.version != NcclVersion::kV2_20 || !input.nvls || input.gpu != GpuGeneration::kHopper ||
      gpus < kNvlsMinGpus) {
    return {};
  }
  // One node: the topology has no NIC and the search uses the intra-node
  // speeds and needs every GPU to head a channel (minChannels = GPUs).
  // Several: the NIC speeds, channels from 1 up to one per NIC (one NIC per
  // GPU here), each NIC leading to its GPU, the channel's head.
  const std::span<const double> speeds =
      one_node ? std::span<const double>(kSm90SpeedArrayIntra) : std::span<const double>(kSm90SpeedArrayInter);
  const double link = input.intra_bw_gbps;  // each GPU's NVLinks to the NVSwitch, each way
  const double nic = nic_path_gbps(input);  // the GPU's NIC and the PCIe path to it
  const int min_channels = one_node ? gpus : 1;
  // Link bandwidths are decremented in thousandths (SUB_ROUND); compare
  // with that slack so that an exact fit is a fit in double too.
  constexpr double kSlack = 1e-3;
  // ncclTopoSearchTryNvls: channel k (from 0) charges bwIntra on every
  // GPU's NVLink both ways and twice on its head's, a GPU not yet a head,
  // so it fits when (k + 2) x bwIntra is within the link.
  const auto channels_fitting = [&](double intra) {
    return std::min(gpus, static_cast<int>(std::floor((link + kSlack) / intra)) - 1);
  };
  const auto fits = [&](int channels, double intra, double inter) {
    return (channels + 1) * intra <= link + kSlack && (one_node || inter <= nic + kSlack);
  };

  // Pass 1. maxBw: the best path from a GPU to a NIC (several nodes) or
  // to another GPU (one node); totalBw: the GPU's NVLink, times G/(G-1)
  // for patterns other than the ring. Start at the first speed within
  // both, then step down while no graph has every channel and the next
  // speed is above .49 of the best graph's.
  const double max_bw = one_node ? link : std::min(link, nic);
  const double total = link * gpus / (gpus - 1);
  std::size_t i = 0;
  while (i + 1 < speeds.size() && (speeds[i] > max_bw || speeds[i] * min_channels > total)) ++i;
  NvlsGraph best;
  for (;;) {
    const double bw = speeds[i];
    // The search saves a graph after each channel it adds (ncclTopo-
    // CompareGraphs for NVLS: more channels, or more channels x bwInter).
    for (int k = 1; k <= channels_fitting(bw); ++k) {
      if (k < min_channels) continue;
      if (k > best.channels || k * bw > best.channels * best.bw_inter_gbps) {
        best = {.channels = k, .bw_per_channel_gbps = bw, .bw_inter_gbps = bw};
      }
    }
    if (best.channels == gpus) break;                     // every channel: optimal, stop
    if (best.channels * best.bw_inter_gbps >= link) break;  // as much as the GPU's links carry
    if (i + 1 < speeds.size() && (best.channels == 0 || speeds[i + 1] / best.bw_inter_gbps > .49)) {
      ++i;
      continue;
    }
    break;
  }
  if (best.channels == 0) return {};

  // Pass 2, with the channels fixed: raise bwInter while below twice
  // bwIntra, and bwIntra when bwInter has got there, one speed at a time;
  // a search that fits with a higher bwInter replaces the graph.
  i = 0;
  while (i + 1 < speeds.size() && speeds[i] > best.bw_inter_gbps) ++i;
  double tmp_intra = speeds[i];
  double tmp_inter = speeds[i];
  while (i > 0) {
    if (tmp_inter == best.bw_inter_gbps && tmp_inter < 2 * tmp_intra) {
      tmp_inter = speeds[--i];
    } else if (tmp_intra == best.bw_per_channel_gbps && tmp_intra < 2 * tmp_inter) {
      tmp_intra = speeds[--i];
    } else {
      break;
    }
    if (fits(best.channels, tmp_intra, tmp_inter) && tmp_inter > best.bw_inter_gbps) {
      best.bw_per_channel_gbps = tmp_intra;
      best.bw_inter_gbps = tmp_inter;
    }
  }
  return best;
}

ChannelGraph ring_graph(const NcclInput& input) {
  validate(input);
  return search_ring_or_tree(input, /*tree=*/false, 0);
}

ChannelGraph tree_graph(const NcclInput& input) {
  validate(input);
  const ChannelGraph ring = search_ring_or_tree(input, /*tree=*/false, 0);
  return search_ring_or_tree(input, /*tree=*/true, ring.channels);
}

int runtime_channels(const NcclInput& input) {
  if (input.channels > 0) return std::min(kMaxChannels, 2 * input.channels);
  const ChannelGraph ring = ring_graph(input);
  const ChannelGraph tree = tree_graph(input);
  // init.cc: comm->nChannels = min(tree, ring) channels; connect.cc
  // (ncclTopoPostset) doubles them, up to MAXCHANNELS.
  return std::min(kMaxChannels, 2 * std::min(ring.channels, tree.channels));
}

namespace {

// The switches tuning.cc applies after NCCL_ALGO: NVLS_TREE off on one
// node and NVLS off across nodes ([2.20]); then, when nothing is left
// ("If user has hard set NCCL_ALGO=COLLNET, ignore it"), ring and tree
// back on.
NcclAllowed effective_allowed(const NcclInput& in) {
  NcclAllowed a = in.allowed;
  const std::size_t tree = static_cast<std::size_t>(Algorithm::kTree);
  const std::size_t ring = static_cast<std::size_t>(Algorithm::kRing);
  const std::size_t nvls = static_cast<std::size_t>(Algorithm::kNvls);
  const std::size_t nvls_tree = static_cast<std::size_t>(Algorithm::kNvlsTree);
  if (in.version == NcclVersion::kV2_20) {
    const bool one_node = in.ranks == in.ranks_per_node;
    if (one_node) a.algorithms[nvls_tree] = false;
    if (!one_node) a.algorithms[nvls] = false;
  } else {
    a.algorithms[nvls] = a.algorithms[nvls_tree] = false;  // 2.13 has no NVLS
  }
  if (!a.algorithms[tree] && !a.algorithms[ring] && !a.algorithms[nvls] && !a.algorithms[nvls_tree]) {
    a.algorithms[tree] = a.algorithms[ring] = true;
  }
  return a;
}

}  // namespace

NcclPrediction predict(const NcclInput& raw_input) {
  validate(raw_input);
  NcclInput input = raw_input;
  input.allowed = effective_allowed(raw_input);
  NcclPrediction out;
  const ChannelGraph ring = ring_graph(input);
  const ChannelGraph tree = tree_graph(input);
  out.channels = input.channels > 0 ? input.channels : ring.channels;
  const int comm_channels = runtime_channels(input);

  if (input.collective == Collective::kAllToAll) {
    out.algorithm = Algorithm::kP2p;
    out.protocol = Protocol::kSimple;
    out.time_us = all_to_all_us(input);
  } else {
    // NCCL's loop order, keeping the first strict minimum as NCCL does.
    double best = std::numeric_limits<double>::infinity();
    for (int a : {kTree, kRing}) {
      for (int p : {kLl, kLl128, kSimple}) {
        AlgoProtoTime e = tuned_entry(input, ring, tree, comm_channels, a, p);
        if (e.enabled && e.time_us < best) {
          best = e.time_us;
          out.algorithm = e.algorithm;
          out.protocol = e.protocol;
        }
        out.table.push_back(e);
      }
    }
    // NVLS and NVLS_TREE come after tree, ring and CollNet in NCCL's
    // algorithm order: on a tie the ring stays.
    for (bool tree : {false, true}) {
      AlgoProtoTime e = nvls_entry(input, tree);
      if (e.enabled && e.time_us < best) {
        best = e.time_us;
        out.algorithm = e.algorithm;
        out.protocol = e.protocol;
      }
      out.table.push_back(e);
    }
    if (best == std::numeric_limits<double>::infinity() && input.version == NcclVersion::kV2_13) {
      fail("NCCL 2.13 has no algorithm and protocol left for this call (NCCL_PROTO leaves none of it): NCCL "
           "fails it with \"no algorithm/protocol available\"");
    }
    if (best == std::numeric_limits<double>::infinity()) {
      // [2.20] Nothing left on: the ring's bandwidths come back for every
      // protocol, as computed before NCCL_ALGO / NCCL_PROTO ("at least
      // set ring algo available").
      for (AlgoProtoTime& e : out.table) {
        if (e.algorithm != Algorithm::kRing) continue;
        e = tuned_entry(input, ring, tree, comm_channels, kRing, static_cast<int>(e.protocol), true);
        e.off_reason = "";
        if (e.time_us < best) {
          best = e.time_us;
          out.algorithm = e.algorithm;
          out.protocol = e.protocol;
        }
      }
    }
    out.time_us = best;
  }
  out.time = sim::Duration::from_ns_ceil(out.time_us * 1000.0);
  out.algbw_gbps = static_cast<double>(input.bytes) / (out.time_us * 1000.0);
  out.busbw_gbps = out.algbw_gbps * bus_bw_factor(input.collective, input.ranks);
  return out;
}

}  // namespace zx::models::nccl
