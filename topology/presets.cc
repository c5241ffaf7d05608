// File: topology/presets.cc
//
// Builds ZionEX, Zion and HGX-class clusters from a ClusterSpec. Insertion
// order (and so NodeId order): per server its GPUs, NVSwitch, GPU-tray
// switches, NIC-tray switches, NICs, CPUs, front-end NICs; then the backend
// fabric (rack/rail switches, spines), then the front-end fabric.

#include "topology/presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/check.h"
#include "base/error.h"

namespace zx::topology {

sim::BytesPerSecond pcie_bandwidth(LinkKind generation, int lanes) {
  // Per lane per direction after 128b/130b: 8 GT/s -> 0.984375 GB/s, doubling per generation.
  double per_lane_gbyte = 0;
  switch (generation) {
    case LinkKind::kPcieGen3:
      per_lane_gbyte = 8.0 * 128.0 / 130.0 / 8.0;
      break;
    case LinkKind::kPcieGen4:
      per_lane_gbyte = 16.0 * 128.0 / 130.0 / 8.0;
      break;
    case LinkKind::kPcieGen5:
      per_lane_gbyte = 32.0 * 128.0 / 130.0 / 8.0;
      break;
    case LinkKind::kPcieGen6:
      per_lane_gbyte = 64.0 * 242.0 / 256.0 / 8.0;
      break;
    default:
      ZX_UNREACHABLE("pcie_bandwidth: not a PCIe generation");
  }
  return sim::BytesPerSecond::from_gbyte_per_s(per_lane_gbyte * lanes);
}

void validate(const ClusterSpec& s) {
  std::vector<Diagnostic> errors;
  auto need = [&](bool ok, const char* field, std::string message) {
    if (!ok) errors.push_back(Diagnostic{"<cluster spec>", field, std::move(message)});
  };
  need(s.nodes >= 1, "nodes", fmt::format("expected >= 1, got {}", s.nodes));
  need(s.gpus_per_node >= 1, "gpus_per_node",
       fmt::format("expected >= 1, got {}", s.gpus_per_node));
  need(s.gpus_per_pcie_switch >= 1, "gpus_per_pcie_switch",
       fmt::format("expected >= 1, got {}", s.gpus_per_pcie_switch));
  need(s.cpus_per_node >= 1, "cpus_per_node",
       fmt::format("expected >= 1, got {}", s.cpus_per_node));
  need(s.cpus_per_host >= 0 && s.cpus_per_host <= s.cpus_per_node &&
           (s.cpus_per_host == 0 || s.cpus_per_node % s.cpus_per_host == 0),
       "cpus_per_host",
       fmt::format("expected 0 (all sockets) or a divisor of cpus_per_node ({}), got {}", s.cpus_per_node,
                   s.cpus_per_host));
  if (s.host_attach == HostAttach::kNvlinkC2c) {
    need(s.cpus_per_node >= 1 && s.gpus_per_node % s.cpus_per_node == 0, "cpus_per_node",
         fmt::format("with GPUs on NVLink-C2C every socket carries as many GPUs: expected a divisor of "
                     "gpus_per_node ({}), got {}",
                     s.gpus_per_node, s.cpus_per_node));
  }
  if (s.host_attach == HostAttach::kNvlinkC2c && s.nic_attach == NicAttach::kGpuSwitch && s.cpus_per_node >= 1 &&
      s.gpus_per_pcie_switch >= 1 && s.gpus_per_node % s.cpus_per_node == 0) {
    const int per_socket = s.gpus_per_node / s.cpus_per_node;
    need(per_socket % s.gpus_per_pcie_switch == 0, "gpus_per_pcie_switch",
         fmt::format("with the NICs on the GPUs' switches and GPUs on NVLink-C2C a switch's GPUs share a socket: "
                     "expected a divisor of the GPUs per socket ({}), got {}",
                     per_socket, s.gpus_per_pcie_switch));
  }
  need(s.nodes_per_rack >= 1, "nodes_per_rack",
       fmt::format("expected >= 1, got {}", s.nodes_per_rack));
  need(s.spines >= 0, "spines", fmt::format("expected >= 0 (0 derives), got {}", s.spines));
  // Bounds on the graph's size, checked before anything is built: a
  // cluster beyond them took minutes and tens of GB to build (8,192 GB200
  // NVL72 racks; 4,096 rail switches times 4,096 spines) where an error
  // costs nothing. Within them the largest graphs build in seconds and
  // about a GB (4,096 racks' switches times 4,096 spines, 1 M cables: 24 s,
  // 4.2 GB; 65,536 ZionEX GPUs: 7 s, 0.9 GB).
  if (s.nodes >= 1 && s.gpus_per_node >= 1) {
    const std::int64_t gpus = std::int64_t{s.nodes} * s.gpus_per_node;
    need(gpus <= kMaxClusterGpus, "nodes",
         fmt::format("expected at most {} GPUs in a cluster (nodes x gpus_per_node), got {} x {} = {}",
                     kMaxClusterGpus, s.nodes, s.gpus_per_node, gpus));
    if (s.nodes_per_rack >= 1 && s.spines >= 0 && s.cpus_per_node >= 1) {
      // Each fabric's leaves (a rack switch, or a rail switch per NIC of a
      // server, per rack) each take a cable to every spine.
      const std::int64_t racks = (s.nodes + s.nodes_per_rack - 1) / s.nodes_per_rack;
      struct Fabric {
        const char* leaf;
        std::int64_t leaves;
        std::int64_t spines;
      };
      const std::int64_t backend_leaves = racks * (s.rail_aligned ? s.gpus_per_node : 1);
      const Fabric fabrics[] = {
          {s.rail_aligned ? "rail" : "rack", s.backend_network ? backend_leaves : 0,
           s.spines > 0 ? s.spines : s.gpus_per_node},
          {"front-end rack", racks, s.spines > 0 ? s.spines : s.cpus_per_node}};
      for (const Fabric& f : fabrics) {
        const std::int64_t cables = f.leaves > 1 ? f.leaves * f.spines : 0;
        need(cables <= kMaxSpineCables, "spines",
             fmt::format("expected at most {} cables between leaf and spine switches in a fabric, got {} ({} {} "
                         "switches x {} spines); use fewer spines or larger racks",
                         kMaxSpineCables, cables, f.leaves, f.leaf, f.spines));
      }
    }
  }
  need(s.oversubscription >= 1.0 && std::isfinite(s.oversubscription), "oversubscription",
       fmt::format("expected a finite ratio >= 1, got {}", s.oversubscription));
  for (auto [lanes, field] : {std::pair{s.device_pcie_lanes, "device_pcie_lanes"},
                              std::pair{s.tray_uplink_lanes, "tray_uplink_lanes"},
                              std::pair{s.host_pcie_lanes, "host_pcie_lanes"}}) {
    need(lanes >= 1 && lanes <= 64, field, fmt::format("expected lanes in [1, 64], got {}", lanes));
  }
  for (auto [gen, field] :
       {std::pair{s.device_pcie, "device_pcie"}, std::pair{s.host_pcie, "host_pcie"}}) {
    need(gen == LinkKind::kPcieGen3 || gen == LinkKind::kPcieGen4 || gen == LinkKind::kPcieGen5 ||
             gen == LinkKind::kPcieGen6,
         field, fmt::format("expected a PCIe generation, got '{}'", to_string(gen)));
  }
  need(s.nvlink_sharp_efficiency == 0.0 ||
           (s.nvlink_sharp_efficiency >= sim::kMinEfficiency && s.nvlink_sharp_efficiency <= 1.0),
       "nvlink_sharp_efficiency",
       fmt::format("expected 0 (no NVLink SHARP) or a value in [{}, 1], got {}", sim::kMinEfficiency,
                   s.nvlink_sharp_efficiency));
  for (auto [eff, field] : {std::pair{s.nvlink_efficiency, "nvlink_efficiency"},
                            std::pair{s.pcie_efficiency, "pcie_efficiency"},
                            std::pair{s.upi_efficiency, "upi_efficiency"},
                            std::pair{s.roce_efficiency, "roce_efficiency"},
                            std::pair{s.tcp_efficiency, "tcp_efficiency"}}) {
    need(eff >= sim::kMinEfficiency && eff <= 1.0, field,
         fmt::format("expected a value in [{}, 1], got {}", sim::kMinEfficiency, eff));
  }
  for (auto [lat, field] :
       {std::pair{s.nvlink_latency, "nvlink_latency"}, std::pair{s.pcie_latency, "pcie_latency"},
        std::pair{s.upi_latency, "upi_latency"}, std::pair{s.switch_latency, "switch_latency"},
        std::pair{s.cable_latency, "cable_latency"},
        std::pair{s.communication.launch, "communication.launch"},
        std::pair{s.communication.transfer, "communication.transfer"},
        std::pair{s.communication.network_transfer, "communication.network_transfer"},
        std::pair{s.communication.peer_gap, "communication.peer_gap"}}) {
    need(lat >= sim::Duration::zero(), field,
         fmt::format("expected a latency >= 0, got {}", lat.to_string()));
  }
  if (!errors.empty()) throw InputError(std::move(errors));
}

std::string_view to_string(NicAttach attach) {
  switch (attach) {
    case NicAttach::kHost:
      return "host";
    case NicAttach::kGpuSwitch:
      return "gpu_switch";
  }
  return "unknown";
}

std::string_view to_string(HostAttach attach) {
  switch (attach) {
    case HostAttach::kPcieSwitch:
      return "pcie_switch";
    case HostAttach::kNvlinkC2c:
      return "nvlink_c2c";
  }
  return "unknown";
}

namespace {

struct PresetEntry {
  std::string_view name;
  std::string_view description;
  ClusterSpec (*make)();
};

ClusterSpec zionex() { return ClusterSpec{}; }

ClusterSpec zion() {
  // Zion: the same server without the NIC tray and backend NICs; scale-out
  // goes through the CPUs' front-end NICs over TCP (ARCHITECTURE.md, Zion row).
  ClusterSpec s;
  s.preset = "zion";
  s.backend_network = false;
  return s;
}

ClusterSpec dgx_a100() {
  // DGX A100 80 GB as MLPerf Training v2.0 ran it (mlcommons/
  // training_results_v2.0 8437fbb, NVIDIA/systems/dgxa100_*_merlin_hugectr.json:
  // 8 x A100-SXM4-80GB on NVLink 3.0 / NVSwitch, 8 x 200 Gb/s InfiniBand
  // for the compute fabric, 2 x AMD EPYC 7742). NVIDIA DGX A100 user
  // guide: four PCIe Gen4 switches, each with two GPUs and the two
  // ConnectX-6 NICs beside them (NicAttach::kGpuSwitch), up to the CPUs
  // over Gen4 x16; 2 TB of system memory. NVLink as ZionEX's (A100).
  ClusterSpec s;
  s.preset = "dgx-a100";
  s.gpu = "a100-80gb";
  s.nic_attach = NicAttach::kGpuSwitch;
  s.gpus_per_pcie_switch = 2;
  s.host_pcie = LinkKind::kPcieGen4;
  s.cpus_per_node = 2;
  // Assumption: the two EPYC sockets' Infinity Fabric (xGMI) link, ~4 x16
  // lanes at 16 GT/s, taken as 64 GB/s per direction.
  s.upi_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(64);
  s.host_memory = sim::Bytes(2'000'000'000'000);
  // Two ConnectX-6 ports for storage and in-band management, one per socket
  // (DGX A100 user guide); taken as the front end at 200 Gb/s each.
  s.front_end_nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(200);
  // InfiniBand HDR, 200 Gb/s of data per port after encoding; an RDMA write
  // packet of the 4096 B MTU carries 26 B of headers and CRCs besides its
  // payload (LRH 8, BTH 12, ICRC 4, VCRC 2; InfiniBand Architecture
  // Specification vol. 1, ch. 5 and 7): 4096 / 4122 = 0.994.
  s.roce_efficiency = 4096.0 / 4122.0;
  // DGX SuperPOD (A100) reference architecture: scalable units of 20
  // servers, rail-optimized (NIC i of every server of a unit on leaf i).
  s.nodes_per_rack = 20;
  s.rail_aligned = true;
  return s;
}

ClusterSpec hgx() {
  ClusterSpec s;
  s.preset = "hgx";
  s.gpu = "h100-sxm";  // HGX H100 (NVIDIA DGX H100 datasheet)
  // H100 SXM NVLink4: 900 GB/s bidirectional = 450 GB/s per direction (NVIDIA H100 datasheet).
  s.nvlink_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(450);
  // 400 Gb/s ConnectX-7 per GPU, PCIe Gen5 (NVIDIA DGX H100 datasheet).
  s.nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(400);
  s.device_pcie = LinkKind::kPcieGen5;
  s.tray_uplink_lanes = 32;  // assumption: same 2 x16 tray uplink as ZionEX, at Gen5
  // Two sockets (DGX H100: 2 x Xeon Platinum 8480C), Gen5 x16 to the GPU trays.
  s.cpus_per_node = 2;
  s.host_pcie = LinkKind::kPcieGen5;
  // Assumption: 4 UPI 2.0 links at 16 GT/s, ~32 GB/s per direction each, between the sockets.
  s.upi_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(128);
  // DGX H100: 2 TB of system memory (NVIDIA DGX H100 datasheet).
  s.host_memory = sim::Bytes(2'000'000'000'000);
  // NVLink SHARP on 8 x H100: NVLS all-reduce at 275 GB/s algorithm
  // bandwidth (480 bus; NCCL's maintainer in NVIDIA/nccl-tests issue 212,
  // and NVIDIA/nccl issue 2140), where ring reaches 370 bus. Each GPU's
  // link carries (1 + 1/8) x the buffer to the switch, so the multimem
  // operations run at 275 x 1.125 = 309 GB/s of the link's 450 x 0.94 =
  // 423 GB/s of payload: 0.731.
  s.nvlink_sharp_efficiency = 275.0 * 1.125 / (450.0 * 0.94);
  return s;
}

// NVLink SHARP on 8 x B300 (NVLink 5, the NVSwitch of B200 and GB200):
// NVLS all-reduce at 483 GB/s algorithm bandwidth (845 bus; NVIDIA/nccl
// issue 2140): 483 x 1.125 / (900 x 0.94) = 0.642 of the links' payload
// rate. Assumption: B200's and GB200's switches the same.
constexpr double kBlackwellSharpEfficiency = 483.0 * 1.125 / (900.0 * 0.94);

ClusterSpec hgx_b200() {
  // DGX B200 (NVIDIA DGX B200 datasheet and user guide): 8 B200 GPUs on two
  // NVSwitch chips, 14.4 TB/s of NVLink in all = 1.8 TB/s per GPU both ways,
  // 900 GB/s per direction; 8 single-port ConnectX-7 at 400 Gb/s for the
  // compute fabric; 2 x Xeon Platinum 8570; 2 TB of system memory (4 TB
  // optional); PCIe Gen5. The rest as hgx().
  ClusterSpec s = hgx();
  s.preset = "hgx-b200";
  s.gpu = "b200";
  s.nvlink_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(900);
  s.host_memory = sim::Bytes(2'000'000'000'000);
  s.nvlink_sharp_efficiency = kBlackwellSharpEfficiency;
  return s;
}

ClusterSpec gb200_nvl72() {
  // GB200 NVL72 (NVIDIA's GB200 NVL72 figures; the GB200 system description
  // of MLCommons inference v6.1, Crusoe): one rack is one NVLink domain of
  // 72 Blackwell GPUs on NVLink 5, 1.8 TB/s per GPU both ways = 900 GB/s per
  // direction (130 TB/s for 72), through 9 NVLink switch trays, modelled as
  // one non-blocking domain node like every NVSwitch. 36 GB200 superchips,
  // each one Grace and two GPUs on NVLink-C2C (900 GB/s both ways per
  // superchip); two superchips per compute tray, one OS over both Graces
  // (144 cores a tray), with four ConnectX-7 NICs (one per GPU) at 400 Gb/s.
  // Here a node is a rack.
  ClusterSpec s;
  s.preset = "gb200-nvl72";
  s.gpu = "gb200";
  s.gpus_per_node = 72;
  s.nvlink_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(900);
  s.nvlink_sharp_efficiency = kBlackwellSharpEfficiency;
  s.host_attach = HostAttach::kNvlinkC2c;
  s.cpus_per_node = 36;
  s.cpus_per_host = 2;
  // Assumption: the superchip's 900 GB/s (450 per direction) of C2C is split
  // evenly between its two GPUs: 225 GB/s per GPU per direction.
  s.c2c_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(225);
  // Assumption: a tray's two Graces are joined by NVLink-C2C as the two of a
  // Grace CPU Superchip are: 900 GB/s both ways, 450 per direction.
  s.upi_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(450);
  // ConnectX-7 is a PCIe Gen5 x16 device (NVIDIA ConnectX-7 user manual);
  // Grace's own I/O is PCIe Gen5 too (its front-end NIC).
  s.device_pcie = LinkKind::kPcieGen5;
  s.host_pcie = LinkKind::kPcieGen5;
  s.nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(400);
  // Assumption: one BlueField-3 at 400 Gb/s per Grace for the front end
  // (the trays' north-south DPUs).
  s.front_end_nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(400);
  // Up to 17 TB of LPDDR5X per rack: 480 GB per Grace (NVIDIA GB200 NVL72).
  s.host_memory = sim::Bytes(36LL * 480'000'000'000);
  // One rack switch stage over the racks' NICs as for the other presets
  // (16 racks, 1,152 NICs, to a leaf); spines derive one per NIC of a rack.
  return s;
}

// Blackwell Ultra's NIC: one 800 Gb/s ConnectX-8 per GPU, a PCIe Gen6
// switch with the NIC built in (48 lanes), Gen6 x16 to its GPU and Gen5 x16
// up to the host (NVIDIA's Hot Chips 2025 talk on ConnectX-8): NicAttach::
// kGpuSwitch with one GPU per switch.
void connectx8_beside_each_gpu(ClusterSpec& s) {
  s.nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(800);
  s.nic_attach = NicAttach::kGpuSwitch;
  s.gpus_per_pcie_switch = 1;
  s.device_pcie = LinkKind::kPcieGen6;
  s.host_pcie = LinkKind::kPcieGen5;
}

ClusterSpec hgx_b300() {
  // DGX B300 (NVIDIA DGX B300 datasheet and user guide): 8 Blackwell Ultra
  // GPUs on NVLink 5 as DGX B200's (900 GB/s per direction each), 8 ConnectX-8
  // at 800 Gb/s on the GPU board rather than the host's; 2 x Xeon 6776P
  // (PCIe Gen5); 2 TB of system memory. ConnectX-8's built-in PCIe Gen6
  // switch stands where DGX B200 had its PCIe switches: Gen6 x16 to its GPU,
  // and (assumption, as GB300's) a Gen5 x16 up to the host, GPUs 0-3 on the
  // first socket and 4-7 on the second. The NVLS efficiency is the one
  // measured on 8 x B300 (kBlackwellSharpEfficiency).
  ClusterSpec s = hgx_b200();
  s.preset = "hgx-b300";
  s.gpu = "b300";
  connectx8_beside_each_gpu(s);
  return s;
}

ClusterSpec gb300_nvl72() {
  // GB300 NVL72 (NVIDIA's enterprise reference architecture for it, and its
  // Hot Chips 2025 talk on ConnectX-8): GB200 NVL72's rack (72 GPUs on 9
  // NVLink switch trays, 130 TB/s; 18 compute trays of 2 Graces and 4 GPUs
  // on NVLink-C2C) with Blackwell Ultra GPUs and one ConnectX-8 SuperNIC at
  // 800 Gb/s per GPU, four per tray on two mezzanine boards. A ConnectX-8
  // is a PCIe Gen6 switch with the NIC built in: Gen6 x16 to its GPU, Gen5
  // x16 to its Grace (Grace's PCIe is Gen5), so the GPU reaches its NIC
  // without crossing C2C and Grace as on GB200.
  ClusterSpec s = gb200_nvl72();
  s.preset = "gb300-nvl72";
  s.gpu = "gb300";
  connectx8_beside_each_gpu(s);
  // 18 BlueField DPUs for the rack's 36 Graces (NVIDIA's GB300 NVL72
  // figures). Assumption: each at 400 Gb/s, half of it per Grace.
  s.front_end_nic_bandwidth = sim::BytesPerSecond::from_gbit_per_s(200);
  return s;
}

constexpr PresetEntry kPresets[] = {
    {"dgx-a100",
     "DGX A100 (MLPerf v2.0): 8 x A100 80GB on 300 GB/s NVSwitch, 200 Gb/s HDR InfiniBand NIC per GPU "
     "on its PCIe switch, rail-optimized",
     &dgx_a100},
    {"gb200-nvl72",
     "GB200 NVL72 rack as one node: 72 Blackwell GPUs on 900 GB/s NVLink, 36 Grace CPUs on NVLink-C2C, "
     "400 Gb/s NIC per GPU",
     &gb200_nvl72},
    {"gb300-nvl72",
     "GB300 NVL72 rack as one node: 72 Blackwell Ultra GPUs on 900 GB/s NVLink, 36 Grace CPUs on NVLink-C2C, "
     "800 Gb/s ConnectX-8 per GPU on PCIe Gen6",
     &gb300_nvl72},
    {"hgx", "HGX H100-class: 8 GPUs on 450 GB/s NVSwitch, 400 Gb/s RoCE NIC per GPU, PCIe Gen5",
     &hgx},
    {"hgx-b200", "HGX B200-class: 8 B200 GPUs on 900 GB/s NVSwitch, 400 Gb/s RoCE NIC per GPU, PCIe Gen5",
     &hgx_b200},
    {"hgx-b300",
     "HGX B300-class: 8 B300 GPUs on 900 GB/s NVSwitch, 800 Gb/s ConnectX-8 per GPU on PCIe Gen6, host PCIe Gen5",
     &hgx_b300},
    {"zion",
     "Zion: 8 x A100 on NVLink, no backend; scale-out via 4 x 100 Gb/s front-end NICs "
     "over TCP",
     &zion},
    {"zionex", "ZionEX (ISCA 2022): 8 x A100 on NVLink, 200 Gb/s RoCE NIC per GPU, 2-stage Clos",
     &zionex},
};

// A two-stage Clos over per-server endpoint NICs. endpoints[server][i] is
// NIC i of a server; `rails` groups leaf switches by NIC index when set.
struct ClosParams {
  std::string_view leaf_name;   // "rsw" or "fe_rsw"; rails use "rail{i}"
  std::string_view spine_name;  // "spine" or "fe_spine"
  SwitchTier leaf_tier;
  SwitchTier spine_tier;
  LinkKind kind;
  sim::BytesPerSecond endpoint_bandwidth;
  double efficiency;
  int spines;  // already derived
  bool rail_aligned;
};

void build_clos(TopologyBuilder& b, const ClusterSpec& s, const ClosParams& p,
                const std::vector<std::vector<NodeId>>& endpoints) {
  const int racks = (s.nodes + s.nodes_per_rack - 1) / s.nodes_per_rack;
  const int per_server = static_cast<int>(endpoints.front().size());
  const int leaves_per_rack = p.rail_aligned ? per_server : 1;
  const bool need_spines = racks * leaves_per_rack > 1;
  const LinkSpec to_switch{.kind = p.kind,
                           .bandwidth = p.endpoint_bandwidth,
                           .latency = s.cable_latency + s.switch_latency,
                           .efficiency = p.efficiency};
  const LinkSpec to_nic{.kind = p.kind,
                        .bandwidth = p.endpoint_bandwidth,
                        .latency = s.cable_latency,
                        .efficiency = p.efficiency};
  std::vector<NodeId> leaves;
  std::vector<int> leaf_endpoints;
  int local = 0;
  for (int r = 0; r < racks; ++r) {
    for (int l = 0; l < leaves_per_rack; ++l) {
      const std::string name = p.rail_aligned ? fmt::format("rack{}/rail{}", r, l)
                                              : fmt::format("rack{}/{}", r, p.leaf_name);
      const NodeId leaf = b.add_node({.kind = NodeKind::kEthernetSwitch,
                                      .name = name,
                                      .tier = p.leaf_tier,
                                      .local_index = local++});
      leaves.push_back(leaf);
      int attached = 0;
      for (int server = r * s.nodes_per_rack;
           server < std::min(s.nodes, (r + 1) * s.nodes_per_rack); ++server) {
        for (int i = 0; i < per_server; ++i) {
          if (p.rail_aligned && i != l) continue;
          const NodeId nic =
              endpoints[static_cast<std::size_t>(server)][static_cast<std::size_t>(i)];
          b.add_link(nic, leaf, to_switch);
          b.add_link(leaf, nic, to_nic);
          ++attached;
        }
      }
      leaf_endpoints.push_back(attached);
    }
  }
  if (!need_spines) return;
  std::vector<NodeId> spine_ids;
  for (int k = 0; k < p.spines; ++k) {
    spine_ids.push_back(b.add_node({.kind = NodeKind::kEthernetSwitch,
                                    .name = fmt::format("{}{}", p.spine_name, k),
                                    .tier = p.spine_tier,
                                    .local_index = k}));
  }
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    // Uplink capacity = downlink capacity / oversubscription, split evenly over spines.
    const double down = static_cast<double>(p.endpoint_bandwidth.count()) * leaf_endpoints[l];
    const auto up = sim::BytesPerSecond(
        std::max<std::int64_t>(1, std::llround(down / (s.oversubscription * p.spines))));
    const LinkSpec uplink{.kind = p.kind,
                          .bandwidth = up,
                          .latency = s.cable_latency + s.switch_latency,
                          .efficiency = p.efficiency};
    for (NodeId spine : spine_ids) b.add_cable(leaves[l], spine, uplink);
  }
}

}  // namespace

ClusterSpec preset_spec(std::string_view name, int nodes) {
  for (const PresetEntry& e : kPresets) {
    if (e.name != name) continue;
    ClusterSpec s = e.make();
    s.nodes = nodes;
    return s;
  }
  std::string valid;
  for (const PresetEntry& e : kPresets) valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  throw InputError(
      Diagnostic{"<preset>", "", fmt::format("unknown preset '{}'; valid: {}", name, valid)});
}

std::vector<std::pair<std::string, std::string>> preset_descriptions() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PresetEntry& e : kPresets) out.emplace_back(e.name, e.description);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The links inside one server of `s`.
struct ServerLinks {
  LinkSpec nvlink, device, tray, host, c2c, upi;
  int trays = 0;  // PCIe switches of GPUs per server
};

ServerLinks server_links(const ClusterSpec& s) {
  auto pcie = [&](LinkKind gen, int lanes) {
    return LinkSpec{.kind = gen,
                    .bandwidth = pcie_bandwidth(gen, lanes),
                    .latency = s.pcie_latency,
                    .efficiency = s.pcie_efficiency};
  };
  return ServerLinks{
      .nvlink = {.kind = LinkKind::kNvlink,
                 .bandwidth = s.nvlink_bandwidth,
                 .latency = s.nvlink_latency,
                 .efficiency = s.nvlink_efficiency},
      .device = pcie(s.device_pcie, s.device_pcie_lanes),
      .tray = pcie(s.device_pcie, s.tray_uplink_lanes),
      .host = pcie(s.host_pcie, s.host_pcie_lanes),
      .c2c = {.kind = LinkKind::kNvlinkC2c,
              .bandwidth = s.c2c_bandwidth,
              .latency = s.nvlink_latency,
              .efficiency = s.nvlink_efficiency},
      .upi = {.kind = s.host_attach == HostAttach::kNvlinkC2c ? LinkKind::kNvlinkC2c : LinkKind::kUpi,
              .bandwidth = s.upi_bandwidth,
              .latency = s.upi_latency,
              .efficiency = s.upi_efficiency},
      .trays = (s.gpus_per_node + s.gpus_per_pcie_switch - 1) / s.gpus_per_pcie_switch};
}

// Adds the nodes and cables of server `n`; its nodes are named
// "node<n>/<leaf>".
struct ServerBuilder {
  TopologyBuilder& b;
  const ClusterSpec& s;
  const ServerLinks& links;
  int n;

  NodeId add(NodeKind kind, std::string leaf, int local, int rank = -1) const {
    return b.add_node(
        {.kind = kind, .name = fmt::format("node{}/{}", n, leaf), .server = n, .local_index = local, .rank = rank});
  }
};

// Superchips: socket c carries GPUs [c * per, (c + 1) * per) on C2C links
// and their NICs on PCIe (see HostAttach). Returns the sockets.
std::vector<NodeId> add_superchip_host(const ServerBuilder& sb, const std::vector<NodeId>& gpus,
                                       std::vector<std::vector<NodeId>>& backend_nics) {
  const ClusterSpec& s = sb.s;
  const int per = s.gpus_per_node / s.cpus_per_node;
  std::vector<NodeId> nics, cpus;
  if (s.backend_network) {
    for (int i = 0; i < s.gpus_per_node; ++i) nics.push_back(sb.add(NodeKind::kNic, fmt::format("nic{}", i), i));
  }
  for (int c = 0; c < s.cpus_per_node; ++c) cpus.push_back(sb.add(NodeKind::kCpu, fmt::format("cpu{}", c), c));
  for (int g = 0; g < s.gpus_per_node; ++g) {
    const NodeId cpu = cpus[static_cast<std::size_t>(g / per)];
    sb.b.add_cable(gpus[static_cast<std::size_t>(g)], cpu, sb.links.c2c);
    if (s.backend_network && s.nic_attach == NicAttach::kHost) {
      sb.b.add_cable(nics[static_cast<std::size_t>(g)], cpu, sb.links.device);
    }
  }
  if (s.backend_network && s.nic_attach == NicAttach::kGpuSwitch) {
    // Switch t takes GPUs and NICs [t * k, (t + 1) * k), k =
    // gpus_per_pcie_switch, and links up to their socket (validate()
    // keeps a switch's GPUs on one socket).
    for (int t = 0; t < sb.links.trays; ++t) {
      const NodeId sw = sb.add(NodeKind::kPcieSwitch, fmt::format("pcie_gpu{}", t), t);
      sb.b.add_cable(sw, cpus[static_cast<std::size_t>(t * s.gpus_per_pcie_switch / per)], sb.links.host);
      for (int g = t * s.gpus_per_pcie_switch; g < std::min(s.gpus_per_node, (t + 1) * s.gpus_per_pcie_switch);
           ++g) {
        sb.b.add_cable(gpus[static_cast<std::size_t>(g)], sw, sb.links.device);
        sb.b.add_cable(nics[static_cast<std::size_t>(g)], sw, sb.links.device);
      }
    }
  }
  if (s.backend_network) backend_nics.push_back(std::move(nics));
  return cpus;
}

// GPUs behind PCIe switches (trays), NICs on trays of their own or on the
// GPUs', each GPU tray linked up to a socket. Returns the sockets.
std::vector<NodeId> add_pcie_host(const ServerBuilder& sb, const std::vector<NodeId>& gpus,
                                  std::vector<std::vector<NodeId>>& backend_nics) {
  const ClusterSpec& s = sb.s;
  const int trays = sb.links.trays;
  std::vector<NodeId> gpu_trays, nic_trays, cpus;
  for (int t = 0; t < trays; ++t) gpu_trays.push_back(sb.add(NodeKind::kPcieSwitch, fmt::format("pcie_gpu{}", t), t));
  for (int g = 0; g < s.gpus_per_node; ++g) {
    sb.b.add_cable(gpus[static_cast<std::size_t>(g)], gpu_trays[static_cast<std::size_t>(g / s.gpus_per_pcie_switch)],
                   sb.links.device);
  }
  if (s.backend_network) {
    // NIC trays of their own behind the GPU trays, or (kGpuSwitch) the
    // NICs on the GPU trays' switches.
    if (s.nic_attach == NicAttach::kHost) {
      for (int t = 0; t < trays; ++t) {
        nic_trays.push_back(sb.add(NodeKind::kPcieSwitch, fmt::format("pcie_nic{}", t), trays + t));
        sb.b.add_cable(gpu_trays[static_cast<std::size_t>(t)], nic_trays.back(), sb.links.tray);
      }
    }
    const std::vector<NodeId>& nic_switches = s.nic_attach == NicAttach::kHost ? nic_trays : gpu_trays;
    auto& nics = backend_nics.emplace_back();
    for (int i = 0; i < s.gpus_per_node; ++i) {
      nics.push_back(sb.add(NodeKind::kNic, fmt::format("nic{}", i), i));
      sb.b.add_cable(nics.back(), nic_switches[static_cast<std::size_t>(i / s.gpus_per_pcie_switch)],
                     sb.links.device);
    }
  }
  // Every GPU tray has its own x16 link up to a socket: with as many
  // sockets as trays or more (ZionEX: 4 and 4), socket c takes tray
  // c mod trays; with fewer, consecutive trays share a socket (DGX H100:
  // 2 sockets, GPUs 0-3 on the first, 4-7 on the second, as `nvidia-smi
  // topo -m` there gives their NUMA affinity), so that no GPU is cut off
  // from the host.
  for (int c = 0; c < s.cpus_per_node; ++c) {
    cpus.push_back(sb.add(NodeKind::kCpu, fmt::format("cpu{}", c), c));
    if (s.cpus_per_node >= trays) {
      sb.b.add_cable(cpus.back(), gpu_trays[static_cast<std::size_t>(c % trays)], sb.links.host);
    }
  }
  if (s.cpus_per_node < trays) {
    for (int t = 0; t < trays; ++t) {
      sb.b.add_cable(cpus[static_cast<std::size_t>(t * s.cpus_per_node / trays)],
                     gpu_trays[static_cast<std::size_t>(t)], sb.links.host);
    }
  }
  return cpus;
}

// Server n: its GPUs and NVLink switch, its host side, its sockets' links
// and front-end NICs.
void add_server(const ServerBuilder& sb, std::vector<std::vector<NodeId>>& backend_nics,
                std::vector<std::vector<NodeId>>& front_end_nics) {
  const ClusterSpec& s = sb.s;
  std::vector<NodeId> gpus;
  for (int g = 0; g < s.gpus_per_node; ++g) {
    gpus.push_back(sb.add(NodeKind::kGpu, fmt::format("gpu{}", g), g, sb.n * s.gpus_per_node + g));
  }
  if (s.gpus_per_node > 1) {
    const NodeId nvswitch = sb.add(NodeKind::kNvSwitch, "nvswitch", 0);
    for (NodeId g : gpus) sb.b.add_cable(g, nvswitch, sb.links.nvlink);
  }
  const std::vector<NodeId> cpus = s.host_attach == HostAttach::kNvlinkC2c
                                       ? add_superchip_host(sb, gpus, backend_nics)
                                       : add_pcie_host(sb, gpus, backend_nics);
  // Sockets of one host are fully linked; hosts of one server are not.
  const std::size_t host = s.cpus_per_host > 0 ? static_cast<std::size_t>(s.cpus_per_host) : cpus.size();
  for (std::size_t a = 0; a < cpus.size(); ++a) {
    for (std::size_t c = a + 1; c < cpus.size() && c / host == a / host; ++c) {
      sb.b.add_cable(cpus[a], cpus[c], sb.links.upi);
    }
  }
  auto& fe = front_end_nics.emplace_back();
  for (int c = 0; c < s.cpus_per_node; ++c) {
    // Assumption: the front-end NIC sits on its socket's x16 host PCIe link generation.
    fe.push_back(sb.add(NodeKind::kNic, fmt::format("fe_nic{}", c), s.gpus_per_node + c));
    sb.b.add_cable(cpus[static_cast<std::size_t>(c)], fe.back(), sb.links.host);
  }
}

}  // namespace

Topology build_cluster(const ClusterSpec& s) {
  validate(s);
  TopologyBuilder b(fmt::format("<preset {}>", s.preset));
  const ServerLinks links = server_links(s);
  std::vector<std::vector<NodeId>> backend_nics, front_end_nics;
  for (int n = 0; n < s.nodes; ++n) add_server(ServerBuilder{b, s, links, n}, backend_nics, front_end_nics);
  if (s.backend_network) {
    build_clos(b, s,
               ClosParams{.leaf_name = "rsw",
                          .spine_name = "spine",
                          .leaf_tier = SwitchTier::kRack,
                          .spine_tier = SwitchTier::kSpine,
                          .kind = LinkKind::kRoce,
                          .endpoint_bandwidth = s.nic_bandwidth,
                          .efficiency = s.roce_efficiency,
                          .spines = s.spines > 0 ? s.spines : s.gpus_per_node,
                          .rail_aligned = s.rail_aligned},
               backend_nics);
  }
  build_clos(b, s,
             ClosParams{.leaf_name = "fe_rsw",
                        .spine_name = "fe_spine",
                        .leaf_tier = SwitchTier::kFrontEnd,
                        .spine_tier = SwitchTier::kFrontEnd,
                        .kind = LinkKind::kTcpFrontEnd,
                        .endpoint_bandwidth = s.front_end_nic_bandwidth,
                        .efficiency = s.tcp_efficiency,
                        .spines = s.spines > 0 ? s.spines : s.cpus_per_node,
                        .rail_aligned = false},
             front_end_nics);
  return b.build();
}

std::optional<sim::BytesPerSecond> backend_bisection_bandwidth(const ClusterSpec& s) {
  if (!s.backend_network) return std::nullopt;
  const double injection = static_cast<double>(s.nic_bandwidth.count()) * s.nodes * s.gpus_per_node;
  const int racks = (s.nodes + s.nodes_per_rack - 1) / s.nodes_per_rack;
  const bool spines = racks * (s.rail_aligned ? s.gpus_per_node : 1) > 1;
  const double cut = spines ? injection / (2.0 * s.oversubscription) : injection / 2.0;
  return sim::BytesPerSecond(std::llround(cut));
}

}  // namespace zx::topology
