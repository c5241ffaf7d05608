// File: topology/cluster_file.h
//
// Clusters from names and files: the boundary where JSON becomes a
// ClusterSpec or a Topology. The schema is documented in docs/cluster_files.md.
//
// A cluster file (schema_version 1) takes one of two forms:
//
//   preset plus overrides   {"schema_version": 1, "preset": "zionex", "nodes": 16,
//                            "fabric": {"oversubscription": 2}}
//   explicit graph          {"schema_version": 1, "nodes": [{"name": ..., "kind": ...}],
//                            "links": [{"src": ..., "dst": ..., "kind": ..., ...}]}
//
// The explicit form is also what `zionsim topology --format json` writes, so
// a dumped cluster reads back as the same topology. Every problem in a file
// is reported at once (zx::InputError), each naming the file, the JSON
// pointer, what was expected and what was found; unknown keys are errors.

#ifndef ZIONSIM_TOPOLOGY_CLUSTER_FILE_H_
#define ZIONSIM_TOPOLOGY_CLUSTER_FILE_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/presets.h"
#include "topology/topology.h"

namespace zx::topology {

/// What a user asked for on the command line.
struct ClusterRequest {
  /// A preset name ("zionex", "zion", "hgx") or the path of a .json file.
  std::string cluster = "zionex";
  /// Overrides the node count of a preset (error for an explicit graph).
  std::optional<int> nodes;
  /// "key.path=value" overrides applied on top of the preset or file, with
  /// the file's key names: "fabric.oversubscription=2", "nic.bandwidth_gbit_per_s=400".
  std::vector<std::string> overrides;
  /// "SELECTOR=SPEED" parts running below their rated speed (--degrade;
  /// topology/degrade.h): links are scaled in the topology, GPU speeds land
  /// in LoadedCluster::gpu_speed.
  std::vector<std::string> degradations;

  bool operator==(const ClusterRequest&) const = default;
};

struct LoadedCluster {
  Topology topology;
  /// The spec the topology was built from; nullopt for an explicit graph.
  std::optional<ClusterSpec> spec;
  /// Where it came from, for printing: "preset zionex", "cluster.json".
  std::string source;
  /// Compute speed per GPU rank from the request's GPU degradations (1:
  /// healthy); empty when no GPU is degraded.
  std::vector<double> gpu_speed;
  /// The request's degradations as given ("gpu:3=0.5"), for printing.
  std::vector<std::string> degradations;
  /// The GPU profile the file names (its "gpu" key), or the preset's; empty
  /// for an explicit graph without one. Not validated here.
  std::string gpu;
  /// The file's "communication" object over the defaults (both forms).
  CommunicationLatencies communication;
  /// Each server's host memory: the spec's, or an explicit graph's
  /// host.memory_gbyte (ClusterSpec's default without one).
  sim::Bytes host_memory = ClusterSpec{}.host_memory;
  /// Whether the NVLink switch reduces (ClusterSpec::nvlink_sharp_efficiency):
  /// the spec's, or an explicit graph's nvlink.sharp_efficiency (0 without).
  double nvlink_sharp_efficiency = 0.0;
};

/// Resolves a request: a preset or a file, with overrides; validates
/// everything and builds the topology. Throws zx::InputError.
LoadedCluster load_cluster(const ClusterRequest& request);

/// Parses cluster-file text (from `source`, for messages) with no command
/// line overrides. Throws zx::InputError.
LoadedCluster parse_cluster(std::string_view text, const std::string& source);

/// True when `name` looks like a file path rather than a preset name.
bool is_cluster_path(std::string_view name);

/// True when the request names a cluster file in the explicit form (its
/// "nodes" is the array of devices): its size is fixed by the file, and
/// ClusterRequest::nodes must stay unset. Throws zx::InputError for a file
/// that cannot be read or parsed.
bool is_explicit_graph(const ClusterRequest& request);

/// The cluster file of a preset-based request: its preset (or its preset
/// file's content), the request's overrides applied, `nodes` set when the
/// request sets it; pretty-printed JSON that load_cluster reads back to the
/// same cluster. Throws zx::InputError for a file that lists its graph
/// explicitly (it has no preset fields to carry overrides).
std::string preset_cluster_text(const ClusterRequest& request);

/// Writes every node and link as the explicit form of a cluster file
/// (schema_version 1), ids included, 2-space indented, one line per record.
/// `degradations` (LoadedCluster::degradations): the GPU ones are written as
/// the file's "degrade" list; link ones are already in the bandwidths.
/// `gpu` (LoadedCluster::gpu), when not empty, is written as the file's
/// "gpu", so that the dump simulates the same GPUs; `communication` is
/// written as the file's "communication" object and `host_memory` as its
/// "host" object's memory_gbyte; `nvlink_sharp_efficiency`, when > 0, as
/// its "nvlink" object's sharp_efficiency.
void write_cluster_json(std::ostream& out, const Topology& topology, std::string_view source,
                        const std::vector<std::string>& degradations = {}, std::string_view gpu = {},
                        const CommunicationLatencies& communication = {},
                        sim::Bytes host_memory = ClusterSpec{}.host_memory,
                        double nvlink_sharp_efficiency = 0.0);

}  // namespace zx::topology

#endif  // ZIONSIM_TOPOLOGY_CLUSTER_FILE_H_
