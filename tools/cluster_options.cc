#include "tools/cluster_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "topology/cluster_file.h"
#include "topology/degrade.h"
#include "topology/presets.h"

namespace zx::tools {

std::shared_ptr<topology::ClusterRequest> add_cluster_options(CLI::App& cmd, bool with_nodes, DegradeFlag degrade) {
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
  if (degrade != DegradeFlag::kNone) {
    const bool gpus = degrade == DegradeFlag::kLinksAndGpus;
    const std::string name = cmd.get_name();
    cmd.add_option("--degrade", request->degradations,
                   gpus ? "A part running below its rated speed (repeatable): gpu:RANK=SPEED, gpu:FIRST-LAST=SPEED "
                          "(a straggler: its kernels take 1/SPEED as long), node:N=SPEED (every GPU of server N), link:SRC->DST=SPEED, device:NAME=SPEED "
                          "(every link of a NIC or switch); SPEED in [0.001, 1], or 0 for a failed switch or link "
                          "between switches (docs/cluster_files.md)"
                        : "A link running below its rated speed (repeatable): link:SRC->DST=SPEED, "
                          "device:NAME=SPEED (every link of a NIC or switch); SPEED in [0.001, 1], or 0 for a failed "
                          "switch or link between switches (docs/cluster_files.md)")
        ->option_text("SELECTOR=SPEED")
        ->take_all()
        ->check([gpus, name](const std::string& text) -> std::string {
          try {
            const topology::Degradation d = topology::parse_degradation(text);
            if (!gpus && topology::degrades_gpus({d})) {
              return fmt::format("'{}': `zionsim {}` runs no GPU kernels; a slow GPU is a what-if for "
                                 "whatif and run",
                                 text, name);
            }
          } catch (const InputError& e) {
            return e.diagnostics().front().message;
          }
          return {};
        });
  }
  return request;
}

}  // namespace zx::tools
