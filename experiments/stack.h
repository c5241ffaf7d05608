// File: experiments/stack.h
//
// What one simulation runs on: the cluster and its GPU profile, the network
// model, the collective algorithms and the backend that runs collectives
// over the network (NCCL's cost model sees the same machine). Every command
// that simulates builds it here, so that they model communication the same
// way:
//
//   const ClusterAndGpu loaded = load_cluster_and_gpu(request, gpu, profile);
//   const topology::Router router(loaded.cluster.topology);
//   Stack stack(loaded.cluster.topology, router, {.fidelity = "flow"},
//               backend_options(loaded.cluster, loaded.device, algorithms));
//   models::execute(stack.sim(), graph, stack.backend(), sm_contention(loaded.device));
//
// A Stack runs once: its simulator's clock only moves forward.

#ifndef ZIONSIM_EXPERIMENTS_STACK_H_
#define ZIONSIM_EXPERIMENTS_STACK_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/scenario.h"
#include "models/collectives/registry.h"
#include "models/compute/device_profile.h"
#include "models/execution/executor.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "topology/cluster_file.h"
#include "topology/router.h"
#include "topology/topology.h"

namespace zx::experiments {

/// How NCCL's cost model (models/nccl) sees a GPU profile, by its name (a
/// calibrated profile keeps its base's name as prefix): the generation
/// whose constants its tuner reads and the NVLink bandwidth its topology
/// counts, which is below the datasheet's (nvlink_share of it: NCCL's
/// per-link figure over the datasheet's). A name it does not know (a
/// hand-written profile) is taken for Hopper when the profile has fp8
/// (`has_fp8`: Hopper and later do), else for an A100.
struct NcclGpuView {
  models::nccl::GpuGeneration generation = models::nccl::GpuGeneration::kAmpere;
  double nvlink_gbps = models::nccl::kA100NvlinkGbps;  ///< the preset's NVLink as NCCL counts it
  double nvlink_share = models::nccl::kA100NvlinkGbps / 300.0;
};
NcclGpuView nccl_gpu_view(std::string_view profile_name, bool has_fp8 = false);

/// The PCIe path from a GPU to its NIC as NCCL's topology counts it, GB/s
/// per direction (models::nccl::NcclInput::nic_pcie_gbps): its narrowest
/// link at NCCL's rate for the generation, lanes x {60, 120, 240, 480} /
/// 80 for Gen3 to Gen6 (kvDictPciGen in src/graph/topo.cc, x100 Mb/s per
/// lane: Gen4 x16 = 24, Gen5 x16 = 48). With NIC trays (ZionEX) the path
/// also crosses the GPU tray's uplink, shared by the tray's NICs; a NIC on
/// the GPU's switch or on the socket (GB200) has its own x16 alone. 0 for
/// a cluster without a backend network.
double nccl_nic_pcie_gbps(const topology::ClusterSpec& spec);

/// NCCL's graphs for a communicator of `ranks` GPUs, `ranks_per_node` on
/// each node, as the backend's NCCL model sees the machine (`options`) in
/// the version `algorithm` names ("nccl", "nccl-2.13", "nccl-2.20"): the
/// numbers NCCL_DEBUG=INFO's graph lines give and its tuner multiplies.
struct NcclGraphs {
  models::nccl::ChannelGraph ring;
  models::nccl::ChannelGraph tree;
  models::nccl::NvlsGraph nvls;  ///< no channels where NCCL runs no NVLS
  int channels_run = 0;          ///< the communicator's channels
  bool several_nodes = false;
};

/// One line: "ring 12 x 30 GB/s, tree 12 x 30, nvls 8 x 40; 24 channels run".
std::string to_string(const NcclGraphs& graphs);
/// {"ring": {"channels", "bw_gbyte_per_s"}, "tree": ..., "nvls": ... (with
/// "bw_to_nics_gbyte_per_s" across nodes; absent without NVLS),
/// "channels_run"}.
nlohmann::ordered_json to_json(const NcclGraphs& graphs);
NcclGraphs nccl_graphs(const models::NetworkBackendOptions& options, const std::string& algorithm, int ranks,
                       int ranks_per_node);

/// The backend's options on `cluster` with `device`: the collective
/// algorithms models::default_collective_algorithms() names, `algorithms`
/// (kind -> name) on top; `algorithm_options` (name -> JSON, from
/// --options) for the algorithms they name.
models::NetworkBackendOptions backend_options(const topology::LoadedCluster& cluster,
                                              const models::DeviceProfile& device,
                                              const std::map<std::string, std::string>& algorithms,
                                              const std::map<std::string, std::string>& algorithm_options = {});

/// What communication kernels take from compute on `device`: its SM count
/// and the SMs each communication kernel holds (models/execution/executor.h).
models::SmContention sm_contention(const models::DeviceProfile& device);

/// The GPU profile a command uses: --profile FILE (or --gpu FILE.json: a
/// name ending in .json is a file), else --gpu NAME, else the
/// cluster's own (H100 for hgx, A100 40GB otherwise); then `overrides`
/// ("gpu.KEY=VALUE" from --set, KEY a profile file key such as
/// hbm.bandwidth_gbyte_per_s), applied as if the profile file had them.
/// Throws zx::InputError naming the file or the --set.
models::DeviceProfile device_for(const topology::LoadedCluster& cluster, const std::string& gpu,
                                 const std::string& profile, const std::vector<std::string>& overrides = {});

/// Removes the "gpu.KEY=VALUE" entries from request.overrides (--set with
/// a gpu. prefix: the GPU profile's keys, not the cluster's) and returns them.
std::vector<std::string> take_gpu_overrides(topology::ClusterRequest& request);

/// A command's cluster and GPU: --cluster with its --set keys, and the GPU
/// profile (device_for) with the --set gpu.* keys.
struct ClusterAndGpu {
  topology::LoadedCluster cluster;
  models::DeviceProfile device;
};
ClusterAndGpu load_cluster_and_gpu(topology::ClusterRequest request, const std::string& gpu,
                                   const std::string& profile);

/// The relative completion tolerance of --fidelity coalesced
/// (FlowNetwork::set_completion_tolerance). Chosen from measurements of
/// model A on 32 nodes (--oversubscription 2 and 4, a spine at half speed,
/// the nccl_p2p all-to-all), not fitted to a result: 1e-4 moved the
/// iteration by at most 4e-5 of itself for runs 1.5x to 6x shorter than
/// flow's, 1e-3 by at most 3.3e-4 for 4x to 23x, 3e-3 by up to 9e-4 for
/// little more (docs/network_model.md, "Coalesced finishes").
constexpr double kCoalescedTolerance = 1e-3;

/// The network model of `topology` on `sim` at `fidelity` (one of
/// kFidelities) and the completion quantum.
std::unique_ptr<models::FlowNetwork> make_network(sim::Simulator& sim, const topology::Topology& topology,
                                                  const std::string& fidelity, double completion_quantum_ns);


/// The built-in collective algorithms, then those of the plug-in libraries
/// and schedule files. Throws zx::InputError for one that cannot be used.
void fill_registry(const std::vector<std::string>& plugins, const std::vector<std::string>& schedules,
                   models::collectives::CollectiveRegistry& registry);

/// Checks that `name` (from `flag`) is an algorithm of `registry`, or NCCL's
/// cost model, that runs collectives of `kind` ("all_reduce"): else an
/// InputError naming the flag, with a suggestion and the algorithms that
/// do run `kind`.
void check_algorithm_for(const models::collectives::CollectiveRegistry& registry, const std::string& flag,
                         const std::string& kind, const std::string& name);

/// Checks parsed --options against `registry`: every name one of its
/// algorithms (NCCL's cost model takes none), and the options ones it
/// accepts (checked by creating it). Throws zx::InputError naming --options.
void check_algorithm_options(const std::map<std::string, std::string>& options,
                             const models::collectives::CollectiveRegistry& registry);

/// Algorithm name -> options JSON from --options flags (NAME=JSON, each
/// NAME at most once). Throws zx::InputError naming --options otherwise.
std::map<std::string, std::string> parse_algorithm_options(const std::vector<std::string>& flags);

/// Checks that every algorithm given --options is among `used` (what the
/// run picks, in any of its variants; "auto" runs its candidates too):
/// options that nothing would read are a mistake. Throws zx::InputError
/// naming --options.
void check_algorithm_options_used(const std::map<std::string, std::string>& options,
                                  const std::vector<std::string>& used);

/// A simulator, the network model of a topology on it, the collective
/// algorithms and the backend that runs collectives with them.
class Stack {
 public:
  struct Options {
    std::string fidelity = "flow";      ///< one of kFidelities
    double completion_quantum_ns = 0;   ///< 0: exact
    std::vector<std::string> plugins;   ///< collective plug-in libraries
    std::vector<std::string> schedules; ///< collective schedule files
    /// Keep every flow's record after it ends (a timeline reads them); by
    /// default flow ids are recycled and memory follows the flows in flight.
    bool keep_flows = false;
  };

  /// `topology` and `router` must outlive the stack. Throws zx::InputError
  /// for a plug-in or schedule that cannot be used.
  Stack(const topology::Topology& topology, const topology::Router& router, const Options& options,
        models::NetworkBackendOptions backend_options);
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  sim::Simulator& sim() { return sim_; }
  models::FlowNetwork& network() { return *network_; }
  models::NetworkBackend& backend() { return *backend_; }
  const models::collectives::CollectiveRegistry& registry() const { return registry_; }

  /// Runs one collective alone, from time zero to its end, with `algorithm`
  /// (empty: the backend's default for its kind): how long it took.
  sim::Duration run_collective(const models::collectives::CollectiveRequest& request, const std::string& algorithm);

 private:
  sim::Simulator sim_;
  std::unique_ptr<models::FlowNetwork> network_;
  models::collectives::CollectiveRegistry registry_;
  std::unique_ptr<models::NetworkBackend> backend_;
};

/// A scenario's network model and collective algorithm sources.
Stack::Options stack_options(const Scenario& scenario, bool keep_flows = false);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_STACK_H_
