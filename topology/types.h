// File: topology/types.h
//
// The vocabulary of cluster graphs: dense node and link ids, the kinds of
// devices and links, and the plain records that describe one node and one
// directed link. Everything above topology (network models, collectives, the
// CLI) speaks these types; none of them mentions Boost.Graph.

#ifndef ZIONSIM_TOPOLOGY_TYPES_H_
#define ZIONSIM_TOPOLOGY_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.h"
#include "sim/units.h"

namespace zx::topology {

/// Dense node index, in insertion order (0, 1, ...).
enum class NodeId : std::uint32_t {};
/// Dense directed-link index, in insertion order.
enum class LinkId : std::uint32_t {};

constexpr std::uint32_t index(NodeId id) { return static_cast<std::uint32_t>(id); }
constexpr std::uint32_t index(LinkId id) { return static_cast<std::uint32_t>(id); }

enum class NodeKind : std::uint8_t {
  kGpu,
  kNvSwitch,  ///< an NVLink domain (all NVSwitch chips of a server as one node)
  kPcieSwitch,
  kCpu,             ///< one CPU socket
  kNic,             ///< backend RoCE NIC or front-end NIC (see its links' kinds)
  kEthernetSwitch,  ///< see SwitchTier
  kNvme,
};

/// Where an Ethernet switch sits; kNone for every other node kind.
enum class SwitchTier : std::uint8_t {
  kNone,
  kRack,      ///< backend rack (leaf) switch, or a backend rail switch
  kSpine,     ///< backend spine (Meta: cluster training switch)
  kFrontEnd,  ///< front-end (TCP, data ingestion) network, either stage
};

enum class LinkKind : std::uint8_t {
  kNvlink,
  kPcieGen3,
  kPcieGen4,
  kPcieGen5,
  kPcieGen6,
  kUpi,
  kRoce,         ///< backend Ethernet carrying RoCE
  kTcpFrontEnd,  ///< front-end Ethernet carrying TCP/IP
  kNvlinkC2c,    ///< NVLink-C2C: a Grace CPU to its GPUs (GB200) or to its peer Grace
};

std::string_view to_string(NodeKind kind);
std::string_view to_string(SwitchTier tier);
std::string_view to_string(LinkKind kind);
/// Inverse of to_string; nullopt for an unknown name.
std::optional<NodeKind> parse_node_kind(std::string_view name);
std::optional<SwitchTier> parse_switch_tier(std::string_view name);
std::optional<LinkKind> parse_link_kind(std::string_view name);

/// One device.
struct NodeInfo {
  NodeKind kind = NodeKind::kGpu;
  std::string name;  ///< unique: "node3/gpu5", "rack0/rsw", "spine2"
  SwitchTier tier = SwitchTier::kNone;
  int server = -1;      ///< server index; -1 for fabric switches
  int local_index = 0;  ///< index among same-kind devices of its server or tier
  int rank = -1;        ///< global GPU rank; -1 unless kind == kGpu
};

/// Parameters of one directed link (or of both directions of a cable).
///
/// `efficiency` is the *protocol* efficiency: payload bytes per wire byte, in
/// (0, 1] (headers, CRCs, flow-control and encoding overheads above the
/// quoted per-direction data rate). It is a property of the link layer, not a
/// calibrated achieved-vs-peak factor; calibrated deratings (MAD-Max's NVLink
/// 0.6667, RoCE 0.56) belong to the network model, see presets.h.
struct LinkSpec {
  LinkKind kind = LinkKind::kNvlink;
  /// Data rate per direction as vendors quote it (after line encoding).
  /// No meaningful default: 1 B/s marks "unset" because BytesPerSecond is positive.
  sim::BytesPerSecond bandwidth = sim::BytesPerSecond(1);
  sim::Duration latency = sim::Duration::zero();
  double efficiency = 1.0;
};

/// One directed link of a built topology.
struct LinkInfo {
  LinkId id{};
  NodeId src{};
  NodeId dst{};
  LinkKind kind = LinkKind::kNvlink;
  sim::BytesPerSecond bandwidth = sim::BytesPerSecond(1);
  sim::Duration latency = sim::Duration::zero();
  double efficiency = 1.0;

  /// Payload rate: bandwidth scaled by the protocol efficiency.
  sim::BytesPerSecond effective_bandwidth() const { return bandwidth.scaled(efficiency); }
};

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_TYPES_H_
