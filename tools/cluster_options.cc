#include "tools/cluster_options.h"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include "topology/presets.h"

namespace zx::tools {

std::shared_ptr<topology::ClusterRequest> add_cluster_options(CLI::App& cmd, bool with_nodes) {
  auto request = std::make_shared<topology::ClusterRequest>();
  std::string presets;
  for (const auto& [name, description] : topology::preset_descriptions()) {
    presets += fmt::format("{}{}", presets.empty() ? "" : ", ", name);
  }
  cmd.add_option("--cluster", request->cluster,
                 fmt::format("A preset ({}) or the path of a .json cluster file "
                             "(docs/cluster_files.md)",
                             presets))
      ->capture_default_str()
      ->option_text("NAME|FILE");
  if (with_nodes) {
    cmd.add_option_function<int>(
           "--nodes", [request](int n) { request->nodes = n; },
           "Servers in the cluster (presets only; default 1)")
        ->option_text("N");
  }
  cmd.add_option("--set", request->overrides,
                 "Override one field of the cluster, with the cluster file's key names: "
                 "--set fabric.oversubscription=2 --set nic.bandwidth_gbit_per_s=400")
      ->option_text("KEY=VALUE")
      ->take_all();
  return request;
}

}  // namespace zx::tools
