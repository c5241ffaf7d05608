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

std::map<std::string, std::string> parse_algorithm_flags(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> out;
  // Each kind once: a second --algo for a kind would otherwise win silently.
  // A bare name (every kind) is the default that KIND=NAME flags refine, in
  // any order.
  std::map<std::string, std::string> given;  // kind -> its KIND=NAME flag
  std::string bare;
  for (const std::string& a : flags) {
    // NCCL's cost model and the tuner run every kind: a bare name sets them all.
    if (models::backend_algorithm_role(a).has_value()) {
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

void add_network_flags(CLI::App& cmd, std::string& fidelity, double& completion_quantum_ns) {
  cmd.add_option("--fidelity", fidelity,
                 "flow: max-min fair sharing of every link among the flows crossing it (the reference); coalesced: the same, with each flow's finish "
                 "rounded up by under 1e-3 of its transfer time so that nearby finishes share one re-solve "
                 "(several times faster where finishes are spread out); linkshare: each link shared among the "
                 "transfers on it, a collective step's transfers as one bundle, links independent (2x to 4x "
                 "faster than flow, 10x to 100x on an uneven fabric; within 1.4e-3 of flow on the zoo, "
                 "docs/network_model.md); analytical: no sharing, "
                 "each flow at its bottleneck")
      ->check(CLI::IsMember(std::vector<std::string>(kFidelities.begin(), kFidelities.end())))
      ->capture_default_str();
  cmd.add_option("--completion-quantum-ns", completion_quantum_ns,
                 "Round flow finish times up to a multiple of this, so that flows due within it finish "
                 "together (fewer re-solves); 0: exact to the picosecond")
      ->check(in_range(0.0, kMaxCompletionQuantumNs))
      ->capture_default_str();
}

}  // namespace zx::tools
