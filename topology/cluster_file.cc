// File: topology/cluster_file.cc
//
// Cluster files to ClusterSpec or Topology, and back (the explicit form).

#include "topology/cluster_file.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "topology/degrade.h"
#include "topology/types.h"

namespace zx::topology {
namespace {

using zx::json::ArrayReader;
using zx::json::Document;
using zx::json::IntRange;
using zx::json::NumberRange;
using zx::json::ObjectReader;
using nlohmann::json;
namespace jr = zx::json;

constexpr int kSchemaVersion = 1;

// Limits that keep a typo from asking for a cluster that cannot be built in
// memory; far above any real ZionEX deployment (16 to 256 nodes in Meta's papers).
constexpr IntRange kNodesRange{1, 8192};
constexpr IntRange kGpusPerNodeRange{1, 72};
constexpr IntRange kLanesRange{1, 64};
constexpr NumberRange kPositive{0.0, 1e6, /*exclusive=*/true};  // GB/s or Gb/s
constexpr NumberRange kLatencyNs{0.0, 1e9};                     // up to 1 s
constexpr NumberRange kHostMemoryGbyte{0.0, 1e6, /*exclusive=*/true};  // up to 1 PB a server

std::vector<std::string> names_of(std::initializer_list<LinkKind> kinds) {
  std::vector<std::string> out;
  for (LinkKind k : kinds) out.emplace_back(to_string(k));
  return out;
}

const std::vector<std::string>& pcie_generations() {
  static const std::vector<std::string> names =
      names_of({LinkKind::kPcieGen3, LinkKind::kPcieGen4, LinkKind::kPcieGen5, LinkKind::kPcieGen6});
  return names;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, description] : preset_descriptions()) names.push_back(name);
  return names;
}

// Reads an efficiency in [sim::kMinEfficiency, 1].
void read_efficiency(ObjectReader& o, std::string_view key, double& out) {
  double value = out;
  if (!o.read_number(key, value)) return;
  if (!(value >= sim::kMinEfficiency && value <= 1.0)) {
    o.error(key, fmt::format("expected a number in [{}, 1], got {}", sim::kMinEfficiency, value));
    return;
  }
  out = value;
}

// Reads NVLink SHARP's efficiency: 0 (none) or an efficiency.
void read_sharp_efficiency(ObjectReader& o, double& out) {
  double value = out;
  if (!o.read_number("sharp_efficiency", value)) return;
  if (!(value == 0.0 || (value >= sim::kMinEfficiency && value <= 1.0))) {
    o.error("sharp_efficiency",
            fmt::format("expected 0 (no NVLink SHARP) or a number in [{}, 1], got {}", sim::kMinEfficiency, value));
    return;
  }
  out = value;
}

void read_gbyte(ObjectReader& o, std::string_view key, sim::BytesPerSecond& out) {
  double value = 0;
  if (o.read_number(key, value, kPositive)) out = sim::BytesPerSecond::from_gbyte_per_s(value);
}

void read_gbit(ObjectReader& o, std::string_view key, sim::BytesPerSecond& out) {
  double value = 0;
  if (o.read_number(key, value, kPositive)) out = sim::BytesPerSecond::from_gbit_per_s(value);
}

void read_latency(ObjectReader& o, std::string_view key, sim::Duration& out) {
  double value = 0;
  if (o.read_number(key, value, kLatencyNs)) out = sim::Duration::from_ns_ceil(value);
}

void read_host_memory(ObjectReader& o, sim::Bytes& out) {
  double value = 0;
  if (o.read_number("memory_gbyte", value, kHostMemoryGbyte)) {
    out = sim::Bytes(static_cast<std::int64_t>(std::llround(value * 1e9)));
  }
}

void read_generation(ObjectReader& o, std::string_view key, LinkKind& out) {
  std::string value;
  if (o.read_enum(key, value, pcie_generations())) out = *parse_link_kind(value);
}

// The "communication" object, in either form.
void read_communication(ObjectReader& root, CommunicationLatencies& out) {
  if (auto o = root.object("communication")) {
    read_latency(*o, "launch_latency_ns", out.launch);
    read_latency(*o, "transfer_latency_ns", out.transfer);
    read_latency(*o, "network_transfer_latency_ns", out.network_transfer);
    read_latency(*o, "peer_gap_ns", out.peer_gap);
    o->finish();
  }
}

// --- preset plus overrides ----------------------------------------------------

ClusterSpec read_spec(ObjectReader& root) {
  std::string preset = "zionex";
  root.require("preset");
  root.read_enum("preset", preset, preset_names());
  ClusterSpec s = preset_spec(preset, 1);
  root.read_int("nodes", s.nodes, kNodesRange);
  root.read_int("gpus_per_node", s.gpus_per_node, kGpusPerNodeRange);
  root.read_string("gpu", s.gpu);
  root.allow("description");
  if (auto o = root.object("nvlink")) {
    read_gbyte(*o, "bandwidth_gbyte_per_s", s.nvlink_bandwidth);
    read_latency(*o, "latency_ns", s.nvlink_latency);
    read_efficiency(*o, "efficiency", s.nvlink_efficiency);
    read_sharp_efficiency(*o, s.nvlink_sharp_efficiency);
    o->finish();
  }
  if (auto o = root.object("pcie")) {
    o->read_int("gpus_per_switch", s.gpus_per_pcie_switch, kGpusPerNodeRange);
    read_generation(*o, "device_generation", s.device_pcie);
    o->read_int("device_lanes", s.device_pcie_lanes, kLanesRange);
    o->read_int("tray_uplink_lanes", s.tray_uplink_lanes, kLanesRange);
    read_generation(*o, "host_generation", s.host_pcie);
    o->read_int("host_lanes", s.host_pcie_lanes, kLanesRange);
    read_latency(*o, "latency_ns", s.pcie_latency);
    read_efficiency(*o, "efficiency", s.pcie_efficiency);
    o->finish();
  }
  if (auto o = root.object("nic")) {
    o->read_bool("backend", s.backend_network);
    read_gbit(*o, "bandwidth_gbit_per_s", s.nic_bandwidth);
    read_efficiency(*o, "efficiency", s.roce_efficiency);
    read_efficiency(*o, "all_to_all_efficiency", s.all_to_all_efficiency);
    std::string attach;
    if (o->read_enum("attach", attach, {"gpu_switch", "host"})) {
      s.nic_attach = attach == "gpu_switch" ? NicAttach::kGpuSwitch : NicAttach::kHost;
    }
    o->finish();
  }
  if (auto o = root.object("host")) {
    o->read_int("cpus_per_node", s.cpus_per_node, IntRange{1, 72});
    o->read_int("cpus_per_host", s.cpus_per_host, IntRange{0, 72});
    std::string attach;
    if (o->read_enum("attach", attach, {"nvlink_c2c", "pcie_switch"})) {
      s.host_attach = attach == "nvlink_c2c" ? HostAttach::kNvlinkC2c : HostAttach::kPcieSwitch;
    }
    read_gbyte(*o, "c2c_bandwidth_gbyte_per_s", s.c2c_bandwidth);
    read_gbyte(*o, "upi_bandwidth_gbyte_per_s", s.upi_bandwidth);
    read_latency(*o, "upi_latency_ns", s.upi_latency);
    read_efficiency(*o, "upi_efficiency", s.upi_efficiency);
    read_gbit(*o, "front_end_nic_bandwidth_gbit_per_s", s.front_end_nic_bandwidth);
    read_efficiency(*o, "tcp_efficiency", s.tcp_efficiency);
    read_host_memory(*o, s.host_memory);
    o->finish();
  }
  if (auto o = root.object("fabric")) {
    o->read_int("nodes_per_rack", s.nodes_per_rack, kNodesRange);
    o->read_int("spines", s.spines, IntRange{0, 4096});
    o->read_number("oversubscription", s.oversubscription, NumberRange{1.0, 1024.0});
    o->read_bool("rail_aligned", s.rail_aligned);
    read_latency(*o, "switch_latency_ns", s.switch_latency);
    read_latency(*o, "cable_latency_ns", s.cable_latency);
    o->finish();
  }
  read_communication(root, s.communication);
  return s;
}

// validate() of a spec read from a file: its problems (the ones between
// fields, which the readers cannot see one key at a time) at the file and
// the JSON pointer of the field.
void validate_read_spec(const ClusterSpec& spec, const std::string& source) {
  static const std::map<std::string, std::string, std::less<>> kPointers = {
      {"cpus_per_host", "/host/cpus_per_host"},
      {"cpus_per_node", "/host/cpus_per_node"},
      {"gpus_per_node", "/gpus_per_node"},
      {"gpus_per_pcie_switch", "/pcie/gpus_per_switch"},
      {"nodes", "/nodes"},
  };
  try {
    validate(spec);
  } catch (const InputError& e) {
    std::vector<Diagnostic> remapped;
    for (const Diagnostic& d : e.diagnostics()) {
      const auto it = kPointers.find(d.location);
      remapped.push_back(Diagnostic{source, it != kPointers.end() ? it->second : "/" + d.location, d.message});
    }
    throw InputError(std::move(remapped));
  }
}

// --- explicit graph -----------------------------------------------------------

std::vector<std::string> enum_names(auto first, auto last, auto to_name) {
  std::vector<std::string> out;
  for (auto k = first;; k = static_cast<decltype(k)>(static_cast<int>(k) + 1)) {
    out.emplace_back(to_name(k));
    if (k == last) break;
  }
  return out;
}

Topology read_graph(ObjectReader& root, ArrayReader nodes, jr::Diagnostics& diagnostics) {
  TopologyBuilder builder(diagnostics.source());
  root.allow("description");
  const std::vector<std::string> node_kinds = enum_names(
      NodeKind::kGpu, NodeKind::kNvme, [](NodeKind k) { return std::string(to_string(k)); });
  const std::vector<std::string> tiers = enum_names(
      SwitchTier::kNone, SwitchTier::kFrontEnd, [](SwitchTier k) { return std::string(to_string(k)); });
  const std::vector<std::string> link_kinds = enum_names(
      LinkKind::kNvlink, LinkKind::kNvlinkC2c, [](LinkKind k) { return std::string(to_string(k)); });

  std::map<std::string, std::size_t, std::less<>> by_name;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ObjectReader n = nodes.object(i);
    if (!n.valid()) continue;
    std::int64_t id = static_cast<std::int64_t>(i);
    if (n.read_int("id", id) && id != static_cast<std::int64_t>(i)) {
      n.error("id", fmt::format("expected {} (ids are the positions in the array), got {}", i, id));
    }
    NodeInfo info;
    n.require("name");
    n.read_string("name", info.name);
    std::string kind = "gpu";
    n.require("kind");
    if (n.read_enum("kind", kind, node_kinds)) info.kind = *parse_node_kind(kind);
    std::string tier = "none";
    if (n.read_enum("tier", tier, tiers)) info.tier = *parse_switch_tier(tier);
    n.read_int("server", info.server, IntRange{-1, 1 << 20});
    n.read_int("local_index", info.local_index, IntRange{0, 1 << 20});
    n.read_int("rank", info.rank, IntRange{-1, 1 << 24});
    n.finish();
    if (!info.name.empty() && !by_name.emplace(info.name, i).second) {
      n.error("name", fmt::format("duplicate node name '{}'", info.name));
    }
    builder.add_node(std::move(info), nodes.element_pointer(i));
  }

  root.require("links");
  std::optional<ArrayReader> links = root.array("links");
  for (std::size_t i = 0; links && i < links->size(); ++i) {
    ObjectReader l = links->object(i);
    if (!l.valid()) continue;
    l.allow("id");  // informational: the writer emits it; links are renumbered on reading
    std::optional<std::size_t> ends[2];
    for (int e = 0; e < 2; ++e) {
      const char* key = e == 0 ? "src" : "dst";
      if (!l.require(key)) continue;
      const json& v = *l.raw(key);
      if (v.is_string()) {
        const auto it = by_name.find(v.get<std::string>());
        if (it == by_name.end()) {
          l.error(key, fmt::format("unknown node '{}'", v.get<std::string>()));
        } else {
          ends[e] = it->second;
        }
      } else if (v.is_number_integer()) {
        const std::int64_t index = v.get<std::int64_t>();
        if (index < 0 || index >= static_cast<std::int64_t>(nodes.size())) {
          l.error(key, fmt::format("expected a node name or an id in [0, {}], got {}",
                                   static_cast<std::int64_t>(nodes.size()) - 1, index));
        } else {
          ends[e] = static_cast<std::size_t>(index);
        }
      } else {
        l.error(key, fmt::format("expected a node name or id, got {}", jr::describe(v)));
      }
    }
    LinkSpec spec;
    std::string kind;
    l.require("kind");
    if (l.read_enum("kind", kind, link_kinds)) spec.kind = *parse_link_kind(kind);
    const bool gbyte = l.has("bandwidth_gbyte_per_s");
    const bool gbit = l.has("bandwidth_gbit_per_s");
    if (gbyte == gbit) {
      l.error("", gbyte ? "give the bandwidth once: bandwidth_gbyte_per_s or bandwidth_gbit_per_s"
                        : "missing required key 'bandwidth_gbyte_per_s' (or 'bandwidth_gbit_per_s')");
    }
    bool bandwidth_ok = false;
    if (gbyte) {
      double v = 0;
      if (l.read_number("bandwidth_gbyte_per_s", v, kPositive)) {
        spec.bandwidth = sim::BytesPerSecond::from_gbyte_per_s(v);
        bandwidth_ok = true;
      }
    }
    if (gbit) {
      double v = 0;
      if (l.read_number("bandwidth_gbit_per_s", v, kPositive)) {
        spec.bandwidth = sim::BytesPerSecond::from_gbit_per_s(v);
        bandwidth_ok = true;
      }
    }
    l.allow("bandwidth_gbyte_per_s");
    l.allow("bandwidth_gbit_per_s");
    l.require("latency_ns");
    read_latency(l, "latency_ns", spec.latency);
    read_efficiency(l, "efficiency", spec.efficiency);
    bool duplex = false;
    l.read_bool("duplex", duplex);
    l.finish();
    if (!ends[0] || !ends[1] || !bandwidth_ok) continue;
    const NodeId src{static_cast<std::uint32_t>(*ends[0])};
    const NodeId dst{static_cast<std::uint32_t>(*ends[1])};
    if (duplex) {
      builder.add_cable(src, dst, spec, links->element_pointer(i));
    } else {
      builder.add_link(src, dst, spec, links->element_pointer(i));
    }
  }
  root.finish();
  diagnostics.throw_if_errors();
  return builder.build();
}

// Applies "a.b.c=value" to the document (--set).
void apply_override(json& doc, const std::string& assignment) {
  jr::apply_assignment(doc, assignment, "--set", "the cluster description");
}

// The file's "degrade" list (topology/degrade.h), each entry named by its
// pointer; a malformed entry is reported like any other value.
std::vector<Degradation> read_degradations(ObjectReader& root, jr::Diagnostics& diagnostics) {
  std::vector<Degradation> out;
  std::optional<ArrayReader> array = root.array("degrade");
  if (!array) return out;
  for (std::size_t i = 0; i < array->size(); ++i) {
    std::string text;
    if (!array->read_string(i, text)) continue;
    try {
      Degradation d = parse_degradation(text, diagnostics.source());
      d.source = diagnostics.source();
      d.location = array->element_pointer(i);
      out.push_back(std::move(d));
    } catch (const InputError& e) {
      diagnostics.error(array->element_pointer(i), e.diagnostics().front().message);
    }
  }
  return out;
}

LoadedCluster parse_document(Document& doc, std::optional<int> nodes_override,
                             std::vector<Degradation>& degradations) {
  ObjectReader root = doc.root();
  jr::Diagnostics& diagnostics = doc.diagnostics();
  if (!root.valid()) doc.throw_if_errors();
  doc.check_schema_version(root, {kSchemaVersion});
  degradations = read_degradations(root, diagnostics);
  const json* nodes = root.raw("nodes");
  if (nodes != nullptr && nodes->is_array()) {
    if (nodes_override) {
      throw InputError(Diagnostic{diagnostics.source(), "/nodes",
                                  "--nodes applies to presets; this file lists its nodes explicitly"});
    }
    std::optional<ArrayReader> array = root.array("nodes");
    std::string gpu;
    root.read_string("gpu", gpu);
    CommunicationLatencies communication;
    read_communication(root, communication);
    // The graph's CPUs carry no memory; the servers' host memory is one
    // value for all of them, as in the preset form.
    sim::Bytes host_memory = ClusterSpec{}.host_memory;
    if (auto o = root.object("host")) {
      read_host_memory(*o, host_memory);
      o->finish();
    }
    double sharp = 0.0;
    if (auto o = root.object("nvlink")) {
      read_sharp_efficiency(*o, sharp);
      o->finish();
    }
    Topology topology = read_graph(root, *array, diagnostics);
    doc.throw_if_errors();
    LoadedCluster loaded{std::move(topology), std::nullopt, diagnostics.source()};
    loaded.gpu = gpu;
    loaded.communication = communication;
    loaded.host_memory = host_memory;
    loaded.nvlink_sharp_efficiency = sharp;
    return loaded;
  }
  ClusterSpec spec = read_spec(root);
  root.finish();
  doc.throw_if_errors();
  if (nodes_override) spec.nodes = *nodes_override;
  validate_read_spec(spec, diagnostics.source());
  LoadedCluster loaded{build_cluster(spec), spec, diagnostics.source()};
  loaded.gpu = spec.gpu;
  loaded.communication = spec.communication;
  loaded.host_memory = spec.host_memory;
  loaded.nvlink_sharp_efficiency = spec.nvlink_sharp_efficiency;
  return loaded;
}

// Applies the file's degradations, then the request's (--degrade).
void apply_degradations(LoadedCluster& loaded, std::vector<Degradation> degradations,
                        const std::vector<std::string>& flags) {
  for (const std::string& d : flags) degradations.push_back(parse_degradation(d));
  if (degradations.empty()) return;
  loaded.topology = degrade_links(loaded.topology, degradations);
  loaded.gpu_speed = gpu_speeds(loaded.topology, degradations);
  for (const Degradation& d : degradations) loaded.degradations.push_back(d.text);
  loaded.source += fmt::format(", degraded: {}", fmt::join(loaded.degradations, ", "));
}

}  // namespace

bool is_cluster_path(std::string_view name) {
  return name.find('/') != std::string_view::npos || name.ends_with(".json");
}

bool is_explicit_graph(const ClusterRequest& request) {
  if (!is_cluster_path(request.cluster)) return false;
  const Document file = Document::load_file(request.cluster);
  const json& value = file.value();
  return value.is_object() && value.contains("nodes") && value["nodes"].is_array();
}

LoadedCluster parse_cluster(std::string_view text, const std::string& source) {
  Document doc = Document::parse(text, source);
  std::vector<Degradation> degradations;
  LoadedCluster loaded = parse_document(doc, std::nullopt, degradations);
  apply_degradations(loaded, std::move(degradations), {});
  return loaded;
}


LoadedCluster load_cluster(const ClusterRequest& request) {
  if (request.nodes && (*request.nodes < kNodesRange.min || *request.nodes > kNodesRange.max)) {
    throw InputError(Diagnostic{"--nodes", "",
                                fmt::format("expected an integer in [{}, {}], got {}",
                                            kNodesRange.min, kNodesRange.max, *request.nodes)});
  }
  std::string text;
  std::string source;
  if (is_cluster_path(request.cluster)) {
    Document file = Document::load_file(request.cluster);
    json value = file.value();
    for (const std::string& o : request.overrides) apply_override(value, o);
    source = request.cluster;
    text = value.dump();
  } else {
    const std::vector<std::string> names = preset_names();
    if (std::find(names.begin(), names.end(), request.cluster) == names.end()) {
      std::string message = fmt::format("unknown cluster '{}'", request.cluster);
      if (auto guess = jr::closest_match(request.cluster, names)) {
        message += fmt::format(" (did you mean '{}'?)", *guess);
      }
      message += fmt::format("; valid: {}, or the path of a .json cluster file",
                             fmt::join(names, ", "));
      throw InputError(Diagnostic{"--cluster", "", message});
    }
    json value = {{"schema_version", kSchemaVersion}, {"preset", request.cluster}};
    for (const std::string& o : request.overrides) apply_override(value, o);
    source = "preset " + request.cluster;
    text = value.dump();
  }
  if (!request.overrides.empty()) source += " with --set overrides";
  Document doc = Document::parse(text, source);
  std::vector<Degradation> degradations;
  LoadedCluster loaded = parse_document(doc, request.nodes, degradations);
  loaded.source = source;
  apply_degradations(loaded, std::move(degradations), request.degradations);
  return loaded;
}

std::string preset_cluster_text(const ClusterRequest& request) {
  const LoadedCluster loaded = load_cluster(request);  // validates everything first
  if (!loaded.spec) {
    throw InputError(Diagnostic{request.cluster, "/nodes",
                                "this file lists its nodes and links explicitly; a preset-based cluster is needed "
                                "to carry fitted values"});
  }
  json value = is_cluster_path(request.cluster)
                   ? Document::load_file(request.cluster).value()
                   : json{{"schema_version", kSchemaVersion}, {"preset", request.cluster}};
  for (const std::string& o : request.overrides) apply_override(value, o);
  if (request.nodes) value["nodes"] = *request.nodes;
  return value.dump(2) + "\n";
}

void write_cluster_json(std::ostream& out, const Topology& topology, std::string_view source,
                        const std::vector<std::string>& degradations, std::string_view gpu,
                        const CommunicationLatencies& communication, sim::Bytes host_memory,
                        double nvlink_sharp_efficiency) {
  using ordered = nlohmann::ordered_json;
  out << "{\n  \"schema_version\": " << kSchemaVersion << ",\n";
  out << "  \"description\": " << ordered(fmt::format("zionsim topology of {}", source)).dump()
      << ",\n";
  // The links carry their degradations in their bandwidths; slow GPUs have
  // no field in the graph, so they stay a "degrade" list.
  std::vector<std::string> gpus;
  for (const std::string& text : degradations) {
    if (degrades_gpus({parse_degradation(text)})) gpus.push_back(text);
  }
  if (!gpus.empty()) out << "  \"degrade\": " << ordered(gpus).dump() << ",\n";
  if (!gpu.empty()) out << "  \"gpu\": " << ordered(std::string(gpu)).dump() << ",\n";
  const auto ns = [](sim::Duration d) { return static_cast<double>(d.count_ps()) / 1e3; };
  ordered comm;
  comm["launch_latency_ns"] = ns(communication.launch);
  comm["transfer_latency_ns"] = ns(communication.transfer);
  comm["network_transfer_latency_ns"] = ns(communication.network_transfer);
  comm["peer_gap_ns"] = ns(communication.peer_gap);
  out << "  \"communication\": " << comm.dump() << ",\n";
  out << "  \"host\": " << ordered{{"memory_gbyte", static_cast<double>(host_memory.count()) / 1e9}}.dump() << ",\n";
  if (nvlink_sharp_efficiency > 0) {
    out << "  \"nvlink\": " << ordered{{"sharp_efficiency", nvlink_sharp_efficiency}}.dump() << ",\n";
  }
  out << "  \"nodes\": [\n";
  for (std::size_t i = 0; i < topology.num_nodes(); ++i) {
    const NodeInfo& n = topology.node(NodeId{static_cast<std::uint32_t>(i)});
    ordered o;
    o["id"] = i;
    o["name"] = n.name;
    o["kind"] = to_string(n.kind);
    if (n.tier != SwitchTier::kNone) o["tier"] = to_string(n.tier);
    o["server"] = n.server;
    o["local_index"] = n.local_index;
    if (n.rank >= 0) o["rank"] = n.rank;
    out << "    " << o.dump() << (i + 1 < topology.num_nodes() ? ",\n" : "\n");
  }
  out << "  ],\n  \"links\": [\n";
  for (std::size_t i = 0; i < topology.num_links(); ++i) {
    const LinkInfo& l = topology.link(LinkId{static_cast<std::uint32_t>(i)});
    ordered o;
    o["id"] = i;
    o["src"] = index(l.src);
    o["dst"] = index(l.dst);
    o["kind"] = to_string(l.kind);
    o["bandwidth_gbyte_per_s"] = static_cast<double>(l.bandwidth.count()) / 1e9;
    o["latency_ns"] = static_cast<double>(l.latency.count_ps()) / 1e3;
    o["efficiency"] = l.efficiency;
    out << "    " << o.dump() << (i + 1 < topology.num_links() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
}

}  // namespace zx::topology
