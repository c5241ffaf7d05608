// File: tools/cluster_options.h
//
// The cluster flags shared by every subcommand that simulates something:
// --cluster NAME|FILE, --nodes N, --set KEY=VALUE (repeatable).

#ifndef ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_
#define ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_

#include <memory>

#include "topology/cluster_file.h"

namespace CLI {
class App;
}

namespace zx::tools {

/// Adds the cluster flags to `cmd`; the returned request is filled in when
/// the command line is parsed.
/// `with_nodes` false leaves --nodes to the command (whatif takes a list).
std::shared_ptr<topology::ClusterRequest> add_cluster_options(CLI::App& cmd, bool with_nodes = true);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_
