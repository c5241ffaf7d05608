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

}  // namespace zx::tools
