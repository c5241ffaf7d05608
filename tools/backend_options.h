// File: tools/backend_options.h
//
// The network backend's options from what a command knows: the cluster (for
// NCCL's NIC bandwidth), the GPU (reduction bandwidth, NCCL's GPU
// generation and NVLink figure) and the user's --algo choices. Shared by
// whatif, run and collective so that they model communication the same way.

#ifndef ZIONSIM_TOOLS_BACKEND_OPTIONS_H_
#define ZIONSIM_TOOLS_BACKEND_OPTIONS_H_

#include <map>
#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "experiments/scenario.h"
#include "experiments/stack.h"
#include "models/collectives/registry.h"
#include "models/compute/device_profile.h"
#include "models/execution/executor.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "topology/topology.h"
#include "topology/cluster_file.h"
#include "experiments/report_format.h"

namespace zx::tools {

// The stack's setup (the GPU NCCL sees, the backend's options, the GPU
// profile, the network model) is experiments/stack.h's.
using experiments::backend_options;
using experiments::check_algorithm_for;
using experiments::ClusterAndGpu;
using experiments::device_for;
using experiments::kCoalescedTolerance;
using experiments::load_cluster_and_gpu;
using experiments::make_network;
using experiments::nccl_gpu_view;
using experiments::nccl_graphs;
using experiments::nccl_nic_pcie_gbps;
using experiments::NcclGpuView;
using experiments::NcclGraphs;
using experiments::sm_contention;
using experiments::take_gpu_overrides;

// The tuner's choices in reports (experiments/report_format.h).
using experiments::auto_choices_json;
using experiments::auto_choices_summary;
using experiments::candidates_json;
using experiments::kNcclChoicesTitle;

/// Parses --algo KIND=NAME flags. Throws zx::InputError for a malformed one.
std::map<std::string, std::string> parse_algorithm_flags(const std::vector<std::string>& flags);

/// The network fidelities the commands take (--fidelity, and --vary's
/// fidelity key; coalesced: finish times to within kCoalescedTolerance of
/// each flow's transfer time).
using experiments::kFidelities;

/// Adds the network model's knobs to `cmd`: --fidelity (one of kFidelities)
/// and --completion-quantum-ns (0 to 1e6; 0 is exact to the picosecond),
/// with the variables' values as the defaults shown.
void add_network_flags(CLI::App& cmd, std::string& fidelity, double& completion_quantum_ns);

/// The largest completion quantum the flags take, ns.
using experiments::kMaxCompletionQuantumNs;

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_BACKEND_OPTIONS_H_
