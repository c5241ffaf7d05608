#include "tools/backend_options.h"
#include "tools/cli_checks.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/plan.h"
#include "models/network/topology_links.h"

namespace zx::tools {

NcclGpuView nccl_gpu_view(std::string_view profile_name, bool has_fp8) {
  const auto starts = [&](std::string_view prefix) { return profile_name.substr(0, prefix.size()) == prefix; };
  // NCCL 2.20's tuner indexes every compute capability from 9.0 up as
  // Hopper, so Blackwell and Blackwell Ultra take Hopper's rows, with
  // their own NVLink bandwidth (models/nccl/nccl_model.h). Shares: NCCL's
  // per-link bandwidth over the datasheet's per direction (SM80 20.0 of
  // NVLink3's 25 GB/s, SM90 20.6 of NVLink4's 25, SM100 40.1 of NVLink5's 50).
  using models::nccl::GpuGeneration;
  for (std::string_view blackwell : {"b200", "gb200", "b300", "gb300"}) {
    if (starts(blackwell)) return {GpuGeneration::kHopper, models::nccl::kB200NvlinkGbps, 40.1 / 50.0};
  }
  const NcclGpuView hopper{GpuGeneration::kHopper, models::nccl::kH100NvlinkGbps, 20.6 / 25.0};
  const NcclGpuView ampere{GpuGeneration::kAmpere, models::nccl::kA100NvlinkGbps, 20.0 / 25.0};
  if (starts("h100") || starts("h200")) return hopper;
  if (starts("a100")) return ampere;
  return has_fp8 ? hopper : ampere;
}

double nccl_nic_pcie_gbps(const topology::ClusterSpec& spec) {
  if (!spec.backend_network) return 0;
  const auto lane_rate = [](topology::LinkKind kind) {
    switch (kind) {
      case topology::LinkKind::kPcieGen3: return 60.0;
      case topology::LinkKind::kPcieGen4: return 120.0;
      case topology::LinkKind::kPcieGen5: return 240.0;
      case topology::LinkKind::kPcieGen6: return 480.0;
      default: return 0.0;
    }
  };
  const double rate = lane_rate(spec.device_pcie);
  if (rate == 0) return 0;
  double path = spec.device_pcie_lanes * rate / 80.0;
  if (spec.host_attach == topology::HostAttach::kPcieSwitch && spec.nic_attach == topology::NicAttach::kHost) {
    path = std::min(path, spec.tray_uplink_lanes * rate / 80.0 / spec.gpus_per_pcie_switch);
  }
  return path;
}

NcclGraphs nccl_graphs(const models::NetworkBackendOptions& options, const std::string& algorithm, int ranks,
                       int ranks_per_node) {
  namespace nccl = models::nccl;
  nccl::NcclInput in = models::nccl_machine_input(options, algorithm);
  in.ranks = ranks;
  in.ranks_per_node = ranks_per_node;
  return {.ring = nccl::ring_graph(in),
          .tree = nccl::tree_graph(in),
          .nvls = nccl::nvls_graph(in),
          .channels_run = nccl::runtime_channels(in),
          .several_nodes = ranks > ranks_per_node};
}

std::string to_string(const NcclGraphs& g) {
  std::string line = fmt::format("ring {} x {:g} GB/s, tree {} x {:g}", g.ring.channels, g.ring.bw_intra_gbps,
                                 g.tree.channels, g.tree.bw_intra_gbps);
  if (g.nvls.channels > 0) {
    line += fmt::format(", nvls {} x {:g}", g.nvls.channels, g.nvls.bw_per_channel_gbps);
    if (g.several_nodes) line += fmt::format(" ({:g} to the NICs)", g.nvls.bw_inter_gbps);
  }
  return line + fmt::format("; {} channels run", g.channels_run);
}

nlohmann::ordered_json to_json(const NcclGraphs& g) {
  const auto graph = [](int channels, double bw) {
    return nlohmann::ordered_json{{"channels", channels}, {"bw_gbyte_per_s", bw}};
  };
  nlohmann::ordered_json j;
  j["ring"] = graph(g.ring.channels, g.ring.bw_intra_gbps);
  j["tree"] = graph(g.tree.channels, g.tree.bw_intra_gbps);
  if (g.nvls.channels > 0) {
    j["nvls"] = graph(g.nvls.channels, g.nvls.bw_per_channel_gbps);
    if (g.several_nodes) j["nvls"]["bw_to_nics_gbyte_per_s"] = g.nvls.bw_inter_gbps;
  }
  j["channels_run"] = g.channels_run;
  return j;
}

models::NetworkBackendOptions backend_options(const topology::LoadedCluster& cluster,
                                              const models::DeviceProfile& device,
                                              const std::map<std::string, std::string>& algorithms,
                                              const std::map<std::string, std::string>& algorithm_options) {
  models::NetworkBackendOptions o;
  o.algorithm_options = algorithm_options;
  o.default_algorithms = models::default_collective_algorithms();
  for (const auto& [kind, name] : algorithms) o.default_algorithms[kind] = name;
  // A reduction reads two operands and writes one.
  o.reduction_bytes_per_s = device.effective_hbm_bytes_per_s() / 3.0;
  o.host_copy_bytes_per_s = static_cast<double>(device.host_to_device_bandwidth.count());
  const NcclGpuView nccl = nccl_gpu_view(device.name, device.peak_fp8_flops > 0);
  o.nccl_gpu = nccl.generation;
  o.nccl_intra_gbps = nccl.nvlink_gbps;
  // The cluster's NVLink, as NCCL would count it: a what-if that changes
  // it (--set nvlink.bandwidth_gbyte_per_s, --sensitivity) reaches NCCL's
  // cost model too. The presets give NCCL's own figures (300 -> 240 GB/s,
  // 450 -> 370.8, 900 -> 721.8).
  if (cluster.spec) o.nccl_intra_gbps = cluster.spec->nvlink_bandwidth.to_gbyte_per_s() * nccl.nvlink_share;
  o.software = {.launch = cluster.communication.launch,
                .transfer = cluster.communication.transfer,
                .network_transfer = cluster.communication.network_transfer,
                .peer_gap = cluster.communication.peer_gap};
  o.nvls_efficiency = cluster.nvlink_sharp_efficiency;
  // NCCL runs NVLS where the switch reduces, but not on a multi-node
  // NVLink domain (several hosts in one server: the NVL72 racks).
  o.nccl_nvls = cluster.nvlink_sharp_efficiency > 0 &&
                !(cluster.spec && cluster.spec->cpus_per_host > 0 &&
                  cluster.spec->cpus_per_host < cluster.spec->cpus_per_node);
  if (cluster.spec) {
    o.nccl_inter_gbps = cluster.spec->nic_bandwidth.to_gbyte_per_s();
    o.nccl_nic_pcie_gbps = nccl_nic_pcie_gbps(*cluster.spec);
    o.all_to_all_efficiency = cluster.spec->all_to_all_efficiency;
  }
  return o;
}

namespace {

// "1 KiB", "25.5 MiB": binary units, three significant digits.
std::string binary_size(sim::Bytes bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes.count());
  int unit = 0;
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

}  // namespace

nlohmann::ordered_json candidates_json(const std::vector<models::AutoChoice::Candidate>& candidates) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const models::AutoChoice::Candidate& k : candidates) {
    nlohmann::ordered_json one;
    one["algorithm"] = k.algorithm;
    if (k.time) {
      one["time_us"] = k.time->to_seconds() * 1e6;
    } else if (k.slower_than) {
      one["slower_than_us"] = k.slower_than->to_seconds() * 1e6;
    } else {
      one["refused"] = k.refused;
    }
    out.push_back(std::move(one));
  }
  return out;
}

nlohmann::ordered_json auto_choices_json(const std::vector<models::AutoChoice>& choices) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const models::AutoChoice& c : choices) {
    nlohmann::ordered_json row;
    row["kind"] = models::collectives::to_string(c.kind);
    row["ranks"] = c.ranks;
    row["bytes_per_rank"] = c.bytes_per_rank.count();
    row["dtype"] = models::collectives::to_string(c.dtype);
    row["chosen"] = c.chosen;
    row["candidates"] = candidates_json(c.candidates);
    out.push_back(std::move(row));
  }
  return out;
}

std::string auto_choices_summary(const std::vector<models::AutoChoice>& choices) {
  // kind -> algorithm (in order of first choice) -> calls and size range.
  struct Use {
    std::string algorithm;
    int calls = 0;
    sim::Bytes least;
    sim::Bytes most;
  };
  std::map<int, std::vector<Use>> by_kind;
  for (const models::AutoChoice& c : choices) {
    std::vector<Use>& uses = by_kind[static_cast<int>(c.kind)];
    auto it = std::find_if(uses.begin(), uses.end(), [&](const Use& u) { return u.algorithm == c.chosen; });
    if (it == uses.end()) {
      uses.push_back(Use{c.chosen, 0, c.bytes_per_rank, c.bytes_per_rank});
      it = uses.end() - 1;
    }
    ++it->calls;
    it->least = std::min(it->least, c.bytes_per_rank);
    it->most = std::max(it->most, c.bytes_per_rank);
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, uses] : by_kind) {
    std::vector<std::string> parts;
    for (const Use& u : uses) {
      parts.push_back(fmt::format("{} x{} ({})", u.algorithm, u.calls,
                                  u.least == u.most ? binary_size(u.least)
                                                    : binary_size(u.least) + " to " + binary_size(u.most)));
    }
    kinds.push_back(fmt::format("{}: {}",
                                models::collectives::to_string(static_cast<models::collectives::CollectiveKind>(kind)),
                                fmt::join(parts, ", ")));
  }
  return fmt::format("{}", fmt::join(kinds, "; "));
}

models::SmContention sm_contention(const models::DeviceProfile& device) {
  return models::SmContention{.sm_count = device.sm_count, .communication_sms = device.communication_sms};
}

std::map<std::string, std::string> parse_algorithm_flags(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> out;
  // Each kind once: a second --algo for a kind would otherwise win silently.
  // A bare name (every kind) is the default that KIND=NAME flags refine, in
  // any order.
  std::map<std::string, std::string> given;  // kind -> its KIND=NAME flag
  std::string bare;
  for (const std::string& a : flags) {
    // NCCL's cost model and the tuner run every kind: a bare name sets them all.
    if (models::is_nccl_algorithm(a) || models::is_auto_algorithm(a)) {
      if (!bare.empty()) {
        throw InputError(Diagnostic{"--algo", "", fmt::format("'{}' and '{}' both set every kind; give one", bare, a)});
      }
      bare = a;
      for (std::string_view kind : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"}) {
        if (!given.contains(std::string(kind))) out[std::string(kind)] = a;
      }
      continue;
    }
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) {
      throw InputError(Diagnostic{
          "--algo", "",
          fmt::format("expected KIND=ALGORITHM (all_to_all=direct), or nccl, nccl-2.13, nccl-2.20 or auto alone "
                      "(for every kind), got '{}'",
                      a)});
    }
    // A misspelt kind would otherwise be a key no collective ever looks up.
    const auto kind = models::collectives::parse_collective_kind(a.substr(0, eq));
    if (!kind) {
      throw InputError(Diagnostic{
          "--algo", "",
          fmt::format("unknown collective kind '{}' in '{}'; valid: all_reduce, reduce_scatter, all_gather, "
                      "all_to_all, broadcast, reduce",
                      a.substr(0, eq), a)});
    }
    const std::string name(models::collectives::to_string(*kind));
    if (const auto it = given.find(name); it != given.end()) {
      throw InputError(Diagnostic{"--algo", "", fmt::format("{} is given twice ('{}' and '{}'); give it once", name,
                                                            it->second, a)});
    }
    given.emplace(name, a);
    out[name] = a.substr(eq + 1);
  }
  return out;
}

void check_algorithm_for(const models::collectives::CollectiveRegistry& registry, const std::string& flag,
                         const std::string& kind, const std::string& name) {
  if (models::is_nccl_algorithm(name)) return;  // NCCL's cost model prices every kind
  if (models::is_auto_algorithm(name)) return;   // its candidates are checked per call
  const std::optional<models::collectives::CollectiveKind> k = models::collectives::parse_collective_kind(kind);
  ZX_CHECK(k.has_value(), "check_algorithm_for: kind " + kind);
  std::vector<std::string> runs_kind;
  for (const std::string& n : registry.names()) {
    if (registry.create(n)->supports(*k)) runs_kind.push_back(n);
  }
  for (const std::string& n : models::nccl_algorithm_names()) runs_kind.push_back(n);
  runs_kind.push_back(models::kAutoAlgorithm);
  if (!registry.contains(name)) {
    std::string message = fmt::format("unknown collective algorithm '{}' for {}", name, kind);
    if (const auto guess = json::closest_match(name, runs_kind)) message += fmt::format(" (did you mean '{}'?)", *guess);
    throw InputError(Diagnostic{flag, "", message + fmt::format("; valid: {}", fmt::join(runs_kind, ", "))});
  }
  if (!registry.create(name)->supports(*k)) {
    throw InputError(Diagnostic{flag, "", fmt::format("collective algorithm '{}' does not run {}; those that do: {}",
                                                      name, kind, fmt::join(runs_kind, ", "))});
  }
}

models::DeviceProfile device_for(const topology::LoadedCluster& cluster, const std::string& gpu_flag,
                                 const std::string& profile_flag, const std::vector<std::string>& overrides) {
  // --gpu FILE.json is --profile FILE.json, so that one flag (and --vary
  // gpu=h200,measured.json) sets a built-in or a calibrated profile.
  const bool gpu_is_file = gpu_flag.size() > 5 && gpu_flag.ends_with(".json");
  const std::string gpu = gpu_is_file ? "" : gpu_flag;
  const std::string& profile = gpu_is_file && profile_flag.empty() ? gpu_flag : profile_flag;
  if (gpu_is_file && !profile_flag.empty()) {
    throw InputError(Diagnostic{"--profile", "",
                                fmt::format("give --gpu or --profile, not both (the profile {} is a GPU of its own; "
                                            "--gpu {} would be ignored)",
                                            profile_flag, gpu_flag)});
  }
  if (!gpu.empty() && !profile.empty()) {
    throw InputError(Diagnostic{"--profile", "",
                                fmt::format("give --gpu or --profile, not both (the profile {} is a GPU of its own; "
                                            "--gpu {} would be ignored)",
                                            profile, gpu)});
  }
  // --gpu, else the cluster's own (its file's "gpu" key or its preset's).
  if (gpu.empty() && !cluster.gpu.empty()) {
    std::vector<std::string> names;
    for (const auto& [name, description] : models::device_profile_descriptions()) names.push_back(name);
    if (std::find(names.begin(), names.end(), cluster.gpu) == names.end()) {
      std::string message = fmt::format("unknown GPU profile '{}'", cluster.gpu);
      if (const auto guess = json::closest_match(cluster.gpu, names)) {
        message += fmt::format(" (did you mean '{}'?)", *guess);
      }
      message += fmt::format("; valid: {}", fmt::join(names, ", "));
      throw InputError(Diagnostic{cluster.source, "/gpu", message});
    }
  }
  const std::string builtin = !gpu.empty() ? gpu : (!cluster.gpu.empty() ? cluster.gpu : "a100-40gb");
  // The profile alone first, so that its own errors name it.
  models::DeviceProfile device =
      !profile.empty() ? models::load_device_profile(profile) : models::builtin_device_profile(builtin);
  if (overrides.empty()) return device;
  // As if the file (or a file starting from the built-in) had the keys.
  nlohmann::json doc = !profile.empty() ? json::Document::load_file(profile).value()
                                        : nlohmann::json{{"schema_version", 1}, {"base", builtin}};
  for (const std::string& o : overrides) {
    json::apply_assignment(doc, o.substr(4), "--set", "the GPU profile");
  }
  return models::parse_device_profile(doc.dump(), fmt::format("--set {}", fmt::join(overrides, " --set ")));
}

std::vector<std::string> take_gpu_overrides(topology::ClusterRequest& request) {
  std::vector<std::string> gpu;
  std::vector<std::string> rest;
  for (std::string& o : request.overrides) (o.rfind("gpu.", 0) == 0 ? gpu : rest).push_back(std::move(o));
  request.overrides = std::move(rest);
  return gpu;
}

ClusterAndGpu load_cluster_and_gpu(topology::ClusterRequest request, const std::string& gpu,
                                   const std::string& profile) {
  const std::vector<std::string> gpu_overrides = take_gpu_overrides(request);
  topology::LoadedCluster cluster = topology::load_cluster(request);
  models::DeviceProfile device = device_for(cluster, gpu, profile, gpu_overrides);
  return ClusterAndGpu{std::move(cluster), std::move(device)};
}

void add_network_flags(CLI::App& cmd, std::string& fidelity, double& completion_quantum_ns) {
  cmd.add_option("--fidelity", fidelity,
                 "flow: max-min fair sharing of every link; coalesced: the same, with each flow's finish "
                 "rounded up by under 1e-3 of its transfer time so that nearby finishes share one re-solve "
                 "(several times faster where finishes are spread out); analytical: no sharing, each flow at "
                 "its bottleneck")
      ->check(CLI::IsMember(std::vector<std::string>(kFidelities.begin(), kFidelities.end())))
      ->capture_default_str();
  cmd.add_option("--completion-quantum-ns", completion_quantum_ns,
                 "Round flow finish times up to a multiple of this, so that flows due within it finish "
                 "together (fewer re-solves); 0: exact to the picosecond")
      ->check(in_range(0.0, kMaxCompletionQuantumNs))
      ->capture_default_str();
}

std::unique_ptr<models::FlowNetwork> make_network(sim::Simulator& sim, const topology::Topology& topology,
                                                  const std::string& fidelity, double completion_quantum_ns) {
  auto network = std::make_unique<models::FlowNetwork>(
      sim, models::link_params(topology),
      fidelity == "analytical" ? models::NetworkFidelity::kAnalytical : models::NetworkFidelity::kFlow);
  network->set_completion_quantum(sim::Duration::ps(std::llround(completion_quantum_ns * 1e3)));
  if (fidelity == "coalesced") network->set_completion_tolerance(kCoalescedTolerance);
  return network;
}

}  // namespace zx::tools
