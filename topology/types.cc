// File: topology/types.cc
//
// Names of the topology enums, one table per enum so that to_string and parse
// cannot disagree.

#include "topology/types.h"

#include <array>
#include <utility>

#include "base/check.h"

namespace zx::topology {
namespace {

template <typename Enum, std::size_t N>
using NameTable = std::array<std::pair<Enum, std::string_view>, N>;

constexpr NameTable<NodeKind, 7> kNodeKindNames{{
    {NodeKind::kGpu, "gpu"},
    {NodeKind::kNvSwitch, "nvswitch"},
    {NodeKind::kPcieSwitch, "pcie_switch"},
    {NodeKind::kCpu, "cpu"},
    {NodeKind::kNic, "nic"},
    {NodeKind::kEthernetSwitch, "ethernet_switch"},
    {NodeKind::kNvme, "nvme"},
}};

constexpr NameTable<SwitchTier, 4> kSwitchTierNames{{
    {SwitchTier::kNone, "none"},
    {SwitchTier::kRack, "rack"},
    {SwitchTier::kSpine, "spine"},
    {SwitchTier::kFrontEnd, "front_end"},
}};

constexpr NameTable<LinkKind, 9> kLinkKindNames{{
    {LinkKind::kNvlink, "nvlink"},
    {LinkKind::kPcieGen3, "pcie_gen3"},
    {LinkKind::kPcieGen4, "pcie_gen4"},
    {LinkKind::kPcieGen5, "pcie_gen5"},
    {LinkKind::kPcieGen6, "pcie_gen6"},
    {LinkKind::kUpi, "upi"},
    {LinkKind::kRoce, "roce"},
    {LinkKind::kTcpFrontEnd, "tcp_front_end"},
    {LinkKind::kNvlinkC2c, "nvlink_c2c"},
}};

template <typename Enum, std::size_t N>
std::string_view name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  ZX_UNREACHABLE("enum value missing from its name table");
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse(const NameTable<Enum, N>& table, std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(NodeKind kind) { return name_of(kNodeKindNames, kind); }
std::string_view to_string(SwitchTier tier) { return name_of(kSwitchTierNames, tier); }
std::string_view to_string(LinkKind kind) { return name_of(kLinkKindNames, kind); }
std::optional<NodeKind> parse_node_kind(std::string_view name) {
  return parse(kNodeKindNames, name);
}
std::optional<SwitchTier> parse_switch_tier(std::string_view name) {
  return parse(kSwitchTierNames, name);
}
std::optional<LinkKind> parse_link_kind(std::string_view name) {
  return parse(kLinkKindNames, name);
}

}  // namespace zx::topology
