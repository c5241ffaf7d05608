#include "tools/algorithm_sources.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/stack.h"
#include "base/json_reader.h"
#include "models/execution/network_backend.h"

#include "models/collectives/plugins/plugin_loader.h"
#include "models/collectives/plugins/schedule_file.h"

namespace zx::tools {

std::shared_ptr<AlgorithmSources> add_algorithm_options(CLI::App& cmd, bool with_options) {
  auto sources = std::make_shared<AlgorithmSources>();
  cmd.add_option("--plugin", sources->plugins,
                 "Load collective algorithms from a plug-in library (docs/collective_schedules.md)")
      ->option_text("LIB.so")
      ->take_all();
  cmd.add_option("--schedule", sources->schedules,
                 "Add a collective algorithm from a schedule file (docs/collective_schedules.md)")
      ->option_text("FILE.json")
      ->take_all();
  if (with_options) {
    cmd.add_option("--options", sources->options,
                   "Options of an algorithm as JSON, for every collective it runs (zionsim list collectives "
                   "names them), e.g. --options 'hierarchical={\"chunk_bytes\": 1048576}'")
        ->option_text("NAME=JSON")
        ->take_all();
  }
  return sources;
}

void fill_registry(const AlgorithmSources& sources, models::collectives::CollectiveRegistry& registry) {
  experiments::fill_registry(sources.plugins, sources.schedules, registry);
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

}  // namespace zx::tools
