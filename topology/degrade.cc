#include "topology/degrade.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/json_reader.h"

namespace zx::topology {
namespace {

// A thousandth of the rated speed is the slowest a part may be: below it the
// what-if is a failure, not a slow part, and simulated times grow towards
// the int64 picosecond range.
constexpr double kMinSpeed = 1e-3;

[[noreturn]] void fail(std::string_view flag, std::string_view text, const std::string& message) {
  throw InputError(Diagnostic{std::string(flag), "", fmt::format("'{}': {}", text, message)});
}

// A problem with a parsed degradation: named where it was given (a cluster
// file and its JSON pointer) or, from the command line, by the flag.
[[noreturn]] void fail_at(std::string_view flag, const Degradation& d, const std::string& message) {
  if (d.source.empty()) fail(flag, d.text, message);
  throw InputError(Diagnostic{d.source, d.location, fmt::format("'{}': {}", d.text, message)});
}

std::optional<int> parse_rank(std::string_view s) {
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

constexpr std::string_view kExpected =
    "expected SELECTOR=SPEED with SELECTOR gpu:RANK, gpu:FIRST-LAST, node:N, node:FIRST-LAST, link:SRC->DST or "
    "device:NAME and "
    "SPEED the share of the rated speed left, in [0.001, 1] (0: a failed link or switch)";

// Every device name, for "did you mean".
std::vector<std::string> device_names(const Topology& t) {
  std::vector<std::string> names;
  names.reserve(t.num_nodes());
  for (std::uint32_t n = 0; n < t.num_nodes(); ++n) names.push_back(t.node(NodeId{n}).name);
  return names;
}

NodeId find_device(const Topology& t, const Degradation& d, const std::string& name, std::string_view flag,
                   std::vector<std::string>& names) {
  if (const std::optional<NodeId> id = t.find(name)) return *id;
  if (names.empty()) names = device_names(t);
  std::string message = fmt::format("no device '{}' in this cluster", name);
  if (const auto guess = json::closest_match(name, names)) {
    message += fmt::format(" (did you mean '{}'?)", *guess);
  }
  message += "; `zionsim topology --format json` lists the devices";
  fail_at(flag, d, message);
}

void check_ranks(const Topology& t, const Degradation& d, std::string_view flag) {
  if (d.target == Degradation::Target::kNode) {
    int servers = 0;
    for (int r = 0; r < t.num_gpus(); ++r) servers = std::max(servers, t.node(t.gpu(r)).server + 1);
    if (d.last_rank >= servers) {
      fail_at(flag, d,
           fmt::format("node {} does not exist: the cluster has {} nodes with GPUs (0..{})", d.last_rank, servers,
                       servers - 1));
    }
    return;
  }
  if (d.last_rank >= t.num_gpus()) {
    fail_at(flag, d,
         fmt::format("GPU rank {} does not exist: the cluster has {} GPUs (ranks 0..{})", d.last_rank,
                     t.num_gpus(), t.num_gpus() - 1));
  }
}

// After failures: every edge switch (one with links to NICs) must still
// reach, and be reached from, the first edge switch of its network (backend
// RoCE or front-end TCP) through switches alone, or some GPUs could not talk.
void check_fabric_connected(const Topology& t, const std::vector<Degradation>& degradations, std::string_view flag) {
  const auto is_switch = [&](NodeId n) { return t.node(n).kind == NodeKind::kEthernetSwitch; };
  std::map<LinkKind, std::vector<NodeId>> edges;  // NIC link kind -> edge switches, in id order
  for (std::uint32_t n = 0; n < t.num_nodes(); ++n) {
    const NodeId id{n};
    if (!is_switch(id)) continue;
    for (const LinkId l : t.out_links(id)) {
      if (t.node(t.link(l).dst).kind == NodeKind::kNic) {
        edges[t.link(l).kind].push_back(id);
        break;
      }
    }
  }
  const auto reach = [&](NodeId start, bool forward) {
    std::vector<bool> seen(t.num_nodes(), false);
    std::vector<NodeId> stack = {start};
    seen[index(start)] = true;
    while (!stack.empty()) {
      const NodeId n = stack.back();
      stack.pop_back();
      for (const LinkId l : forward ? t.out_links(n) : t.in_links(n)) {
        const NodeId next = forward ? t.link(l).dst : t.link(l).src;
        if (!is_switch(next) || seen[index(next)]) continue;
        seen[index(next)] = true;
        stack.push_back(next);
      }
    }
    return seen;
  };
  for (const auto& [kind, switches] : edges) {
    const std::vector<bool> from = reach(switches.front(), true);
    const std::vector<bool> to = reach(switches.front(), false);
    for (const NodeId s : switches) {
      if (from[index(s)] && to[index(s)]) continue;
      std::vector<std::string> failures;
      const Degradation* first = nullptr;
      for (const Degradation& d : degradations) {
        if (d.speed != 0) continue;
        failures.push_back(d.text);
        if (!first) first = &d;
      }
      const bool in_file = first && !first->source.empty();
      throw InputError(Diagnostic{
          in_file ? first->source : std::string(flag), in_file ? first->location : "",
          fmt::format("'{}': with these failed, {} and {} cannot reach each other (the servers below them could not "
                      "talk)",
                      fmt::join(failures, "', '"), t.node(switches.front()).name, t.node(s).name)});
    }
  }
}

}  // namespace

Degradation parse_degradation(std::string_view text, std::string_view flag) {
  Degradation d;
  d.text = std::string(text);
  const std::size_t eq = text.rfind('=');
  if (eq == std::string_view::npos) fail(flag, text, std::string(kExpected));
  const std::string_view selector = text.substr(0, eq);
  const std::string speed_text(text.substr(eq + 1));
  std::size_t used = 0;
  double speed = 0;
  try {
    speed = std::stod(speed_text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != speed_text.size() || !std::isfinite(speed)) {
    fail(flag, text, fmt::format("expected the speed after '=' as a number in [0.001, 1], got '{}'", speed_text));
  }
  if ((speed < kMinSpeed && speed != 0) || speed > 1) {
    fail(flag, text,
         fmt::format("expected the speed as the share of the rated speed left, in [0.001, 1] (0: failed), got "
                     "{}; a faster part is a --set (or --set gpu.KEY) what-if",
                     speed_text));
  }
  d.speed = speed;
  const std::size_t colon = selector.find(':');
  if (colon == std::string_view::npos) fail(flag, text, std::string(kExpected));
  const std::string_view kind = selector.substr(0, colon);
  const std::string_view what = selector.substr(colon + 1);
  if (what.empty()) fail(flag, text, std::string(kExpected));
  if (kind == "gpu" || kind == "node") {
    d.target = kind == "gpu" ? Degradation::Target::kGpu : Degradation::Target::kNode;
    const char* what_kind = kind == "gpu" ? "a GPU rank or a range FIRST-LAST of ranks"
                                          : "a node (server) index or a range FIRST-LAST of them";
    const std::size_t dash = what.find('-');
    const std::optional<int> first = parse_rank(what.substr(0, dash));
    const std::optional<int> last = dash == std::string_view::npos ? first : parse_rank(what.substr(dash + 1));
    if (!first || !last) fail(flag, text, fmt::format("expected {}, got '{}'", what_kind, what));
    if (*last < *first) fail(flag, text, fmt::format("the range {}-{} is empty (FIRST above LAST)", *first, *last));
    d.first_rank = *first;
    d.last_rank = *last;
    if (speed == 0) {
      fail(flag, text, "a GPU at speed 0 never finishes an iteration; give a speed in [0.001, 1]");
    }
  } else if (kind == "link") {
    d.target = Degradation::Target::kLink;
    const std::size_t arrow = what.find("->");
    if (arrow == std::string_view::npos || arrow == 0 || arrow + 2 == what.size()) {
      fail(flag, text, fmt::format("expected a link as SRC->DST (device names), got '{}'", what));
    }
    d.src = std::string(what.substr(0, arrow));
    d.dst = std::string(what.substr(arrow + 2));
  } else if (kind == "device") {
    d.target = Degradation::Target::kDevice;
    d.device = std::string(what);
  } else {
    std::string message = fmt::format("unknown selector '{}'", kind);
    if (const auto guess = json::closest_match(kind, {"gpu", "node", "link", "device"})) {
      message += fmt::format(" (did you mean '{}'?)", *guess);
    }
    fail(flag, text, message + "; " + std::string(kExpected));
  }
  return d;
}

bool degrades_gpus(const std::vector<Degradation>& degradations) {
  return std::any_of(degradations.begin(), degradations.end(),
                     [](const Degradation& d) { return d.target != Degradation::Target::kLink &&
                                                       d.target != Degradation::Target::kDevice; });
}

Topology degrade_links(const Topology& topology, const std::vector<Degradation>& degradations,
                       std::string_view flag) {
  std::map<std::uint32_t, double> speed;  // link index -> product of its degradations
  std::map<std::uint32_t, const Degradation*> failed_by;  // link index -> the first degradation at 0
  std::vector<std::string> names;         // filled on the first unknown name
  for (const Degradation& d : degradations) {
    switch (d.target) {
      case Degradation::Target::kGpu:
      case Degradation::Target::kNode:
        check_ranks(topology, d, flag);
        break;
      case Degradation::Target::kLink: {
        const NodeId src = find_device(topology, d, d.src, flag, names);
        const NodeId dst = find_device(topology, d, d.dst, flag, names);
        bool found = false;
        for (const LinkId l : topology.out_links(src)) {
          if (topology.link(l).dst != dst) continue;
          found = true;
          auto [it, added] = speed.try_emplace(index(l), 1.0);
          it->second *= d.speed;
          if (d.speed == 0) failed_by.try_emplace(index(l), &d);
        }
        if (!found) {
          std::vector<std::string> next;
          for (const LinkId l : topology.out_links(src)) next.push_back(topology.node(topology.link(l).dst).name);
          fail_at(flag, d,
               fmt::format("no link from '{}' to '{}'; links from '{}' go to: {}", d.src, d.dst, d.src,
                           next.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(next, ", "))));
        }
        break;
      }
      case Degradation::Target::kDevice: {
        const NodeId device = find_device(topology, d, d.device, flag, names);
        for (const auto links : {topology.out_links(device), topology.in_links(device)}) {
          for (const LinkId l : links) {
            auto [it, added] = speed.try_emplace(index(l), 1.0);
            it->second *= d.speed;
            if (d.speed == 0) failed_by.try_emplace(index(l), &d);
          }
        }
        break;
      }
    }
  }
  if (speed.empty()) return topology;
  // Failed links: only between Ethernet switches, where the fabric has
  // other paths (ECMP then spreads over the rest). A failed link of a NIC
  // would cut its GPU off: every GPU leaves through its own NIC.
  std::vector<bool> failed(topology.num_links(), false);
  for (const auto& [i, s] : speed) {
    if (s != 0) continue;
    const LinkInfo& l = topology.link(LinkId{i});
    if (topology.node(l.src).kind != NodeKind::kEthernetSwitch ||
        topology.node(l.dst).kind != NodeKind::kEthernetSwitch) {
      fail_at(flag, *failed_by.at(i),
           fmt::format("the link {}->{} cannot fail: only links between Ethernet switches can (every GPU leaves "
                       "through its own NIC, so a NIC's link at 0 would cut its GPU off); give it a speed in "
                       "[0.001, 1] instead",
                       topology.node(l.src).name, topology.node(l.dst).name));
    }
    failed[i] = true;
  }
  TopologyBuilder builder("<degraded cluster>");
  for (std::uint32_t n = 0; n < topology.num_nodes(); ++n) builder.add_node(topology.node(NodeId{n}));
  for (std::uint32_t i = 0; i < topology.num_links(); ++i) {
    if (failed[i]) continue;
    const LinkInfo& l = topology.link(LinkId{i});
    LinkSpec spec{.kind = l.kind, .bandwidth = l.bandwidth, .latency = l.latency, .efficiency = l.efficiency};
    if (const auto it = speed.find(i); it != speed.end()) {
      // A product of speeds in [0.001, 1] can fall below a thousandth; the
      // rate stays at least 1 B/s (BytesPerSecond::scaled).
      spec.bandwidth = l.bandwidth.scaled(it->second);
    }
    builder.add_link(l.src, l.dst, spec);
  }
  Topology degraded = builder.build();
  check_fabric_connected(degraded, degradations, flag);
  return degraded;
}

std::vector<double> gpu_speeds(const Topology& topology, const std::vector<Degradation>& degradations,
                               std::string_view flag) {
  if (!degrades_gpus(degradations)) return {};
  std::vector<double> speeds(static_cast<std::size_t>(topology.num_gpus()), 1.0);
  for (const Degradation& d : degradations) {
    if (d.target == Degradation::Target::kGpu) {
      check_ranks(topology, d, flag);
      for (int r = d.first_rank; r <= d.last_rank; ++r) speeds[static_cast<std::size_t>(r)] *= d.speed;
    } else if (d.target == Degradation::Target::kNode) {
      check_ranks(topology, d, flag);
      for (int r = 0; r < topology.num_gpus(); ++r) {
        const int server = topology.node(topology.gpu(r)).server;
        if (server >= d.first_rank && server <= d.last_rank) speeds[static_cast<std::size_t>(r)] *= d.speed;
      }
    }
  }
  return speeds;
}

}  // namespace zx::topology
