// File: topology/presets.h
//
// Cluster presets: ZionEX (the ISCA 2022 platform), Zion (its predecessor,
// scale-out over the CPUs' front-end NICs), HGX H100-, B200- and B300-class
// servers and GB200 and GB300 NVL72 racks as one node each (superchips: see
// HostAttach; NICs beside the GPUs: see NicAttach), all from one parameter
// struct. Every default is cited where it is set; values
// marked "assumption" are placeholders for calibration, not facts.
//
// Server model (ZionEX block diagram, ../shared/ARCHITECTURE.md "GPU to NIC"
// and "hosts" rows):
//
//   gpu0 gpu1        nic0 nic1          every GPU -- nvswitch (NVLink domain)
//     \  /             \  /
//   pcie_gpu0 ====== pcie_nic0 -- ...   ====: 2 x16 links as one cable
//       |
//     cpu0 -- fe_nic0 -- front-end fabric      cpu0..cpu3 fully connected by UPI
//
// The NVLink fabric is one kNvSwitch node per server with one cable per GPU
// carrying the GPU's whole NVLink bandwidth per direction: A100 has 12
// NVLink3 links, 300 GB/s per direction, reaching all peers through six
// NVSwitch chips in HGX A100; a single non-blocking domain node captures that
// (any permutation runs at full rate) without modelling the chips.
//
// Backend fabric: a two-stage Clos. Servers are grouped nodes_per_rack to a
// rack. Non-rail: one rack switch per rack takes every NIC of its servers.
// Rail-aligned: each rack group has gpus_per_node rail switches, rail i
// taking NIC i of every server of the group. Every rack/rail switch connects
// to every spine with one cable of capacity downlink / (oversubscription *
// spines). A single rack needs no spines (its switch is non-blocking); a
// rail-aligned fabric needs spines whenever it has more than one rail switch,
// because traffic between rails has no other path. The front-end network is a
// Clos of the same shape over the front-end NICs (never rail-aligned).

#ifndef ZIONSIM_TOPOLOGY_PRESETS_H_
#define ZIONSIM_TOPOLOGY_PRESETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"
#include "topology/topology.h"
#include "topology/types.h"

namespace zx::topology {

// Calibrated achieved-vs-peak efficiencies of Meta's MAD-Max model of ZionEX
// (facebookresearch/ScaleExplorer madmax system configs; ARCHITECTURE.md,
// "calibrated efficiencies" row). They fold software and protocol losses into
// one factor and belong to the network model's calibration, not to LinkSpec
// efficiency (which is protocol overhead only); kept here as the reference.
inline constexpr double kMadMaxNvlinkEfficiency = 0.6667;
inline constexpr double kMadMaxRoceEfficiency = 0.56;

/// The communication library's own latencies, on top of the links' (which
/// are the hardware's: propagation, switching). Measured small collectives
/// take microseconds per step where the wires take a few hundred
/// nanoseconds: the GPU kernel's launch and setup, and per transfer the
/// protocol's handshake (the receiver's credit, the sender's data and flag,
/// the poll that sees it; between servers also the proxy thread that posts
/// the RDMA write and polls its completion). The collective layer charges
/// them (models/execution/network_backend.h); a cluster file's
/// "communication" object sets them, and `zionsim calibrate-network` fits
/// the two per-transfer values from nccl-tests runs.
///
/// Defaults from NCCL 2.20's own cost model (src/graph/tuning.cc), for the
/// LL protocol NCCL runs small messages with, whose latencies are the ones
/// that matter: baseLat[Ring][LL] = 6.6 us per collective; hwLat[NVLINK]
/// [Ring][LL] = 0.6 us and hwLat[NET][Ring][LL] = 2.7 us per ring step. The
/// links of a preset already take 0.2 us GPU to GPU inside a server (two
/// NVLink hops of 100 ns) and 1.5 us between two servers of one rack (six
/// PCIe hops, a switch, two cables), so the software adds 0.4 and 1.2 us;
/// a ring all-reduce of 8 B on 8 GPUs then takes 6.6 + 14 x 0.6 = 15.0 us,
/// as NCCL's model says. Measured for scale: 12.5 us on 8 NVLink-connected
/// H20s with a recent NCCL (nccl-tests all_reduce_perf, 8 B; deepseek-ai/
/// DeepEP issue #303).
struct CommunicationLatencies {
  /// Once per collective (and per send/recv op), before its first transfer.
  sim::Duration launch = sim::Duration::ns(6600);
  /// Per transfer between two GPUs of one server.
  sim::Duration transfer = sim::Duration::ns(400);
  /// Per transfer between GPUs of different servers.
  sim::Duration network_transfer = sim::Duration::ns(1200);
  /// Between a rank's consecutive peers in one step of a collective (LogGP's
  /// gap g): where a rank sends to k peers at once (an all-to-all's every
  /// pair), it issues them one after another, so the step takes at least
  /// (k - 1) x this plus a transfer's latency, however small its messages.
  /// NCCL's grouped send/recv works through a rank's peers a few channels
  /// at a time and its proxy posts each peer's network sends itself;
  /// measured small all-to-alls grow with the group for this (nccl-tests
  /// issue 78: 512 B on 128 ranks, 324 us with NCCL 2.8, about 2.5 us per
  /// peer). 0 by default: no preset has a measurement of its own to fit it
  /// to; `zionsim calibrate-network` fits it from all-to-all runs of two or
  /// more group sizes.
  sim::Duration peer_gap = sim::Duration::zero();
};

/// PCIe data rate per direction after line encoding (PCIe base spec: 8, 16,
/// 32 GT/s per lane with 128b/130b): Gen3 x16 ~15.75 GB/s, Gen4 x16 ~31.5,
/// Gen5 x16 ~63. Gen6 (64 GT/s, PAM4) carries 256-byte flits of which 242
/// bytes are TLP and data-link payload (the other 14: 8 of CRC, 6 of FEC;
/// PCIe 6.0 base spec): x16 ~121 GB/s.
sim::BytesPerSecond pcie_bandwidth(LinkKind generation, int lanes);

/// How a server's GPUs reach its CPU sockets and its backend NICs.
enum class HostAttach : std::uint8_t {
  /// Through PCIe switch trays (ZionEX, HGX): every tray switch takes
  /// gpus_per_pcie_switch GPUs, links to a NIC-tray switch holding as many
  /// NICs, and up to a socket.
  kPcieSwitch,
  /// Superchips (GB200): every socket carries gpus_per_node / cpus_per_node
  /// GPUs on NVLink-C2C links of its own and the backend NICs of those GPUs
  /// on its PCIe lanes, so a GPU reaches its NIC over C2C and through the
  /// CPU, as GPUDirect RDMA does on Grace Hopper (the NIC on Grace's PCIe).
  kNvlinkC2c,
};

std::string_view to_string(HostAttach attach);

/// Where a server's backend NICs sit on its PCIe (cluster key nic.attach).
enum class NicAttach : std::uint8_t {
  /// On the host side: with kPcieSwitch a NIC-tray switch of their own,
  /// linked to the GPU tray beside it (ZionEX's NIC trays); with
  /// kNvlinkC2c the socket's own PCIe lanes (GB200's ConnectX-7s on
  /// Grace), so a GPU's traffic to its NIC crosses C2C and the CPU.
  kHost,
  /// On the GPU's own PCIe switch: every switch of gpus_per_pcie_switch
  /// GPUs also carries their NICs and links up to a socket over the host
  /// link, so a GPU reaches its NIC in two PCIe hops, never through a CPU.
  /// ConnectX-8 has a PCIe Gen6 switch built in (48 lanes): in GB300 NVL72
  /// its Gen6 x16 goes to the GPU and a Gen5 x16 to Grace (NVIDIA at Hot
  /// Chips 2025); DGX B300 puts its eight on the GPU board the same way.
  kGpuSwitch,
};

std::string_view to_string(NicAttach attach);

struct ClusterSpec {
  /// Informational: which preset this spec came from ("zionex", "zion", "hgx", or custom).
  std::string preset = "zionex";
  /// The GPU profile (models/compute/device_profile.h) its servers carry, by
  /// built-in name: 8 x A100 40 GB per ZionEX node (ARCHITECTURE.md "GPUs per
  /// node"); hgx: H100 SXM. Validated where profiles are known (tools/).
  std::string gpu = "a100-40gb";
  /// 16 nodes is the paper's evaluation (ARCHITECTURE.md, first row); 1 is the default.
  int nodes = 1;
  /// 8 x A100 per ZionEX node (ARCHITECTURE.md, "GPUs per node").
  int gpus_per_node = 8;

  /// A100 NVLink3: 600 GB/s bidirectional = 300 GB/s per direction per GPU
  /// (ARCHITECTURE.md "intra-node GPU fabric"; NVIDIA A100 datasheet).
  sim::BytesPerSecond nvlink_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(300);
  /// Assumption: GPU <-> NVSwitch hop, ~100 ns; to be calibrated.
  sim::Duration nvlink_latency = sim::Duration::ns(100);
  /// Whether the NVLink switch reduces in the network (NVLink SHARP, the
  /// "nvls" collective algorithm), as the share of the links' payload rate
  /// its multimem operations achieve; 0: it does not. A100's NVSwitch
  /// (gen 2) has no SHARP (NVIDIA Hopper architecture whitepaper: NVLink
  /// SHARP is new in third-generation NVSwitch). Cluster key
  /// nvlink.sharp_efficiency; hgx and the Blackwell presets set it.
  double nvlink_sharp_efficiency = 0.0;

  /// 2 GPUs (and 2 NICs) per PCIe switch pair (ARCHITECTURE.md "GPU to NIC").
  int gpus_per_pcie_switch = 2;
  /// GPU <-> GPU-tray switch and NIC <-> NIC-tray switch: x16 Gen4 (A100 and
  /// ConnectX-6 are Gen4 x16 devices; ARCHITECTURE.md "GPU to NIC").
  LinkKind device_pcie = LinkKind::kPcieGen4;
  int device_pcie_lanes = 16;
  /// GPU-tray <-> NIC-tray uplink: 2 x16 Gen4, modelled as one x32 cable.
  int tray_uplink_lanes = 32;
  /// CPU socket <-> GPU-tray switch: x16 Gen3 (ARCHITECTURE.md "hosts").
  LinkKind host_pcie = LinkKind::kPcieGen3;
  int host_pcie_lanes = 16;
  /// Assumption: per PCIe hop including the switch's forwarding, ~150 ns
  /// (Gen4 switches are quoted around 100-150 ns port to port).
  sim::Duration pcie_latency = sim::Duration::ns(150);

  /// ZionEX has a dedicated RoCE backend; Zion does not (ARCHITECTURE.md, Zion row).
  bool backend_network = true;
  /// One 200 Gb/s RoCE NIC per GPU = 25 GB/s (ARCHITECTURE.md "scale-out").
  sim::BytesPerSecond nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(200);

  /// 4 sockets fully connected by UPI (ARCHITECTURE.md "hosts").
  int cpus_per_node = 4;
  /// How GPUs reach the sockets (see HostAttach).
  HostAttach host_attach = HostAttach::kPcieSwitch;
  /// Where the backend NICs sit (see NicAttach): ZionEX's NIC trays.
  NicAttach nic_attach = NicAttach::kHost;
  /// kNvlinkC2c: each GPU's NVLink-C2C link to its socket, per direction.
  /// Unused with kPcieSwitch; the gb200-nvl72 preset sets it. Latency and
  /// protocol efficiency are NVLink's (nvlink_latency, nvlink_efficiency).
  sim::BytesPerSecond c2c_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(225);
  /// Sockets are linked to each other (upi_* below) in consecutive groups of
  /// this many, one host (one OS image) each: a GB200 compute tray's two
  /// Graces. 0 links every socket of the server (ZionEX: 4, DGX: 2).
  int cpus_per_host = 0;
  /// Socket-to-socket link per direction (UPI; NVLink-C2C between the
  /// Graces of a kNvlinkC2c host). Assumption: two UPI links per socket
  /// pair at 10.4 GT/s, 20.8 GB/s per direction each (Intel 3rd-gen Xeon
  /// "Cooper Lake" 4-socket topology).
  sim::BytesPerSecond upi_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(41.6);
  /// Assumption: ~100 ns per socket hop.
  sim::Duration upi_latency = sim::Duration::ns(100);
  /// 100 Gb/s front-end NIC per socket (ARCHITECTURE.md "hosts").
  sim::BytesPerSecond front_end_nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(100);
  /// The server's host memory (DDR, all sockets together), where tables too
  /// large for HBM live behind an HBM cache (the sharding planner keeps 90%
  /// of it for tables): 1.5 TB per ZionEX node (ARCHITECTURE.md "host
  /// memory", a default rather than a fact). Cluster-file key
  /// host.memory_gbyte.
  sim::Bytes host_memory = sim::Bytes(1'500'000'000'000);

  /// Assumption: 16 servers (128 GPUs, the paper's cluster) per rack switch.
  int nodes_per_rack = 16;
  /// Spine switches; 0 derives one per NIC of a server (gpus_per_node for the
  /// backend, cpus_per_node for the front end). Assumption, not a Meta figure.
  int spines = 0;
  /// Downlink / uplink capacity of every rack (or rail) switch; 1 is
  /// non-blocking, 2 means uplinks carry half the downlink capacity.
  double oversubscription = 1.0;
  bool rail_aligned = false;
  /// Assumption: cut-through Ethernet switch forwarding, ~500 ns.
  sim::Duration switch_latency = sim::Duration::ns(500);
  /// ~10 m of fibre at ~5 ns/m (light in glass at ~2/3 c).
  sim::Duration cable_latency = sim::Duration::ns(50);

  // Protocol efficiencies (payload per wire byte), see LinkSpec.
  /// Assumption: NVLink3 flits carry ~94% payload for large transfers.
  double nvlink_efficiency = 0.94;
  /// 256 B max payload per TLP / (256 + ~24 B framing, sequence, header, LCRC).
  double pcie_efficiency = 256.0 / 280.0;
  /// Assumption: UPI, like PCIe, ~90% payload.
  double upi_efficiency = 0.9;
  /// RoCEv2 with 4096 B MTU: 4096 / (4096 + 82 B of preamble, IFG, Ethernet,
  /// IPv4, UDP, BTH, ICRC and FCS) = 0.980.
  double roce_efficiency = 4096.0 / 4178.0;
  /// TCP/IPv4 with 1500 B MTU and timestamps: 1448 / 1538 wire bytes = 0.941.
  double tcp_efficiency = 1448.0 / 1538.0;

  /// Share of the fabric's bandwidth that all-to-all traffic between servers
  /// achieves, on top of the protocol efficiency: many-to-many traffic on a
  /// real RoCE fabric loses bandwidth to incast, PFC pauses and congestion
  /// control, which the flow model does not simulate (docs/network_model.md).
  /// Not a link property: the collective layer sends 1/x the bytes of such
  /// transfers onto the links. 1 (the default) is the ideal fabric; Meta's
  /// MAD-Max figure for ZionEX (7 GB/s per GPU at 128 GPUs) corresponds to
  /// about 0.27; `zionsim calibrate-network` fits it from alltoall_perf runs.
  double all_to_all_efficiency = 1.0;

  /// The communication library's latencies (see CommunicationLatencies).
  CommunicationLatencies communication;
};

/// The most GPUs a cluster may have (nodes x gpus_per_node), and the most
/// cables between the leaf (rack or rail) switches and the spines of one
/// fabric: bounds on the graph's size, so that a cluster too large to build
/// is an error up front rather than minutes and tens of GB (presets.cc).
inline constexpr std::int64_t kMaxClusterGpus = 131'072;
inline constexpr std::int64_t kMaxSpineCables = 262'144;

/// Throws zx::InputError listing every out-of-range field.
void validate(const ClusterSpec& spec);

/// The spec of a named preset with `nodes` servers. Throws zx::InputError for
/// an unknown name, listing the valid ones.
ClusterSpec preset_spec(std::string_view name, int nodes);

/// (name, one-line description) of every preset, sorted by name.
std::vector<std::pair<std::string, std::string>> preset_descriptions();

/// Builds the cluster; validates the spec first.
Topology build_cluster(const ClusterSpec& spec);

/// Closed-form backend bisection bandwidth (wire rate): half the servers' NIC
/// injection, limited by the Clos uplinks: N * gpus * nic / (2 * max(1, oversub))
/// when there are spines. nullopt without a backend network.
std::optional<sim::BytesPerSecond> backend_bisection_bandwidth(const ClusterSpec& spec);

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_PRESETS_H_
