// File: tools/cluster_options.h
//
// The cluster flags shared by every subcommand that simulates something:
// --cluster NAME|FILE, --nodes N, --set KEY=VALUE (repeatable), and where the
// command can use it --degrade SELECTOR=SPEED (repeatable).

#ifndef ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_
#define ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_

#include <memory>
#include <string>

#include "topology/cluster_file.h"

namespace CLI {
class App;
}

namespace zx::tools {

/// Which parts --degrade may slow in a command (topology/degrade.h): none
/// (no flag), links only (commands that run no GPU compute), or links and GPUs.
enum class DegradeFlag { kNone, kLinks, kLinksAndGpus };

/// Adds the cluster flags to `cmd`; the returned request is filled in when
/// the command line is parsed.
/// `with_nodes` false leaves --nodes to the command (whatif takes a list).
std::shared_ptr<topology::ClusterRequest> add_cluster_options(CLI::App& cmd, bool with_nodes = true,
                                                              DegradeFlag degrade = DegradeFlag::kNone);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_CLUSTER_OPTIONS_H_
