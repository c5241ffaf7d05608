#include "experiments/stack.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/plugins/plugin_loader.h"
#include "models/collectives/plugins/schedule_file.h"
#include "models/execution/backend_algorithms.h"
#include "models/network/topology_links.h"

namespace zx::experiments {

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

models::SmContention sm_contention(const models::DeviceProfile& device) {
  return models::SmContention{.sm_count = device.sm_count, .communication_sms = device.communication_sms};
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

std::unique_ptr<models::FlowNetwork> make_network(sim::Simulator& sim, const topology::Topology& topology,
                                                  const std::string& fidelity, double completion_quantum_ns) {
  auto network = std::make_unique<models::FlowNetwork>(
      sim, models::link_params(topology),
      fidelity == "analytical"  ? models::NetworkFidelity::kAnalytical
      : fidelity == "linkshare" ? models::NetworkFidelity::kLinkShare
                                : models::NetworkFidelity::kFlow);
  network->set_completion_quantum(sim::Duration::ps(std::llround(completion_quantum_ns * 1e3)));
  if (fidelity == "coalesced") network->set_completion_tolerance(kCoalescedTolerance);
  return network;
}

void fill_registry(const std::vector<std::string>& plugins, const std::vector<std::string>& schedules,
                   models::collectives::CollectiveRegistry& registry) {
  models::collectives::register_builtin_collectives(registry);
  models::register_backend_algorithms(registry);  // before plug-ins: their names are taken
  for (const std::string& path : plugins) models::collectives::load_collective_plugin(path, registry);
  for (const std::string& path : schedules) models::collectives::register_schedule_file(path, registry);
}

void check_algorithm_for(const models::collectives::CollectiveRegistry& registry, const std::string& flag,
                         const std::string& kind, const std::string& name) {
  const std::optional<models::collectives::CollectiveKind> k = models::collectives::parse_collective_kind(kind);
  ZX_CHECK(k.has_value(), "check_algorithm_for: kind " + kind);
  // NCCL's cost model prices every kind; the tuner's candidates are checked per call.
  if (registry.role(name).value_or(models::collectives::AlgorithmRole::kPlan) !=
      models::collectives::AlgorithmRole::kPlan) {
    return;
  }
  std::vector<std::string> runs_kind;  // in the registry's order: plan algorithms, cost models, the tuner
  for (const std::string& n : registry.names()) {
    if (registry.role(n) != models::collectives::AlgorithmRole::kPlan || registry.create(n)->supports(*k)) {
      runs_kind.push_back(n);
    }
  }
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

void check_algorithm_options(const std::map<std::string, std::string>& options,
                             const models::collectives::CollectiveRegistry& registry) {
  for (const auto& [name, text] : options) {
    const std::string flag = name + "=" + text;
    if (!registry.contains(name)) {
      const std::vector<std::string> names = registry.names();
      std::string message = fmt::format("'{}': unknown collective algorithm '{}'", flag, name);
      if (const auto guess = json::closest_match(name, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
      throw InputError(Diagnostic{"--options", "", message + fmt::format("; valid: {}", fmt::join(names, ", "))});
    }
    (void)registry.create(name, text);  // its own errors, before anything runs
  }
}

std::map<std::string, std::string> parse_algorithm_options(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> out;
  for (const std::string& flag : flags) {
    const auto eq = flag.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
      throw InputError(Diagnostic{"--options", "", fmt::format("expected NAME=JSON, got '{}'", flag)});
    }
    const std::string name = flag.substr(0, eq);
    json::check_json_depth(flag.substr(eq + 1), "--options " + name);  // before anything parses it
    if (!out.emplace(name, flag.substr(eq + 1)).second) {
      throw InputError(Diagnostic{
          "--options", "", fmt::format("'{}': options for {} given twice; give them in one JSON object", flag, name)});
    }
  }
  return out;
}

void check_algorithm_options_used(const std::map<std::string, std::string>& options,
                                  const std::vector<std::string>& used) {
  // "auto" runs its candidates: every algorithm of the registry unless its
  // options list them (malformed options are check_algorithm_options's to
  // report).
  std::vector<std::string> runs = used;
  if (std::find(used.begin(), used.end(), models::kAutoAlgorithm) != used.end()) {
    const auto it = options.find(models::kAutoAlgorithm);
    const nlohmann::json doc = it == options.end()                ? nlohmann::json::object()
                               : !json::json_depth_ok(it->second) ? nlohmann::json()
                                                                  : nlohmann::json::parse(it->second, nullptr, false);
    if (!doc.is_object() || !doc.contains("candidates")) return;
    if (doc["candidates"].is_array()) {
      for (const nlohmann::json& c : doc["candidates"]) {
        if (c.is_string()) runs.push_back(c.get<std::string>());
      }
    }
  }
  for (const auto& [name, text] : options) {
    if (std::find(runs.begin(), runs.end(), name) != runs.end()) continue;
    std::vector<std::string> sorted = used;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string message = fmt::format("'{}={}': no collective of this run uses {}", name, text, name);
    if (const auto guess = json::closest_match(name, sorted)) {
      message += fmt::format(" (did you mean '{}'?); they use {}", *guess, fmt::join(sorted, ", "));
    } else {
      message += fmt::format("; they use {} (--algo KIND={} picks it)", fmt::join(sorted, ", "), name);
    }
    throw InputError(Diagnostic{"--options", "", message});
  }
}

Stack::Stack(const topology::Topology& topology, const topology::Router& router, const Options& options,
             models::NetworkBackendOptions backend_options)
    : network_(make_network(sim_, topology, options.fidelity, options.completion_quantum_ns)) {
  if (!options.keep_flows) network_->recycle_flow_ids(true);
  fill_registry(options.plugins, options.schedules, registry_);
  backend_ = std::make_unique<models::NetworkBackend>(sim_, *network_, router, registry_, std::move(backend_options));
}

sim::Duration Stack::run_collective(const models::collectives::CollectiveRequest& request,
                                    const std::string& algorithm) {
  backend_->run(request, algorithm, {});
  sim_.run();
  return sim_.now().since_start();
}

Stack::Options stack_options(const Scenario& scenario, bool keep_flows) {
  return {.fidelity = scenario.fidelity,
          .completion_quantum_ns = scenario.completion_quantum_ns,
          .plugins = scenario.plugins,
          .schedules = scenario.schedules,
          .keep_flows = keep_flows};
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

}  // namespace zx::experiments
