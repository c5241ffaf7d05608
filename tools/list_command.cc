// `zionsim list`: what the registries hold.

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/algorithm_sources.h"
#include "tools/registries.h"

namespace zx::tools {

void add_list_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "list", "List what zionsim knows by name: cluster presets, collective algorithms, GPU profiles, models");
  auto what = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("table");
  auto sources = add_algorithm_options(*cmd, /*with_options=*/false);
  std::vector<std::string> categories;
  for (const RegistryListing& listing : all_registries()) categories.push_back(listing.category);
  categories.push_back("algorithms");  // issue texts and habit: an alias of collectives
  cmd->add_option("what", *what, "Only this registry")
      ->check(CLI::IsMember(categories))
      ->option_text("{" + fmt::format("{}", fmt::join(categories, ",")) + "}");
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->parse_complete_callback([what, format, sources, action = context.action] {
    *action = [what, format, sources](std::ostream& out) {
      const std::string wanted = *what == "algorithms" ? "collectives" : *what;
      if (*format == "json") {
        // {"schema_version": 1, "<category>": [{"name": ..., "description": ...}, ...], ...}
        nlohmann::ordered_json j;
        j["schema_version"] = 1;
        for (const RegistryListing& listing : all_registries(sources.get())) {
          if (!wanted.empty() && listing.category != wanted) continue;
          nlohmann::ordered_json entries = nlohmann::ordered_json::array();
          for (const auto& [name, description] : listing.entries) {
            entries.push_back({{"name", name}, {"description", description}});
          }
          j[listing.category] = std::move(entries);
        }
        out << j.dump(2) << '\n';
        return kExitOk;
      }
      bool first = true;
      for (const RegistryListing& listing : all_registries(sources.get())) {
        if (!wanted.empty() && listing.category != wanted) continue;
        if (!first) out << '\n';
        first = false;
        fmt::print(out, "{}:\n", listing.category);
        if (listing.entries.empty()) {
          fmt::print(out, "  (none registered yet)\n");
          continue;
        }
        std::size_t width = 0;
        for (const auto& [name, description] : listing.entries) width = std::max(width, name.size());
        for (const auto& [name, description] : listing.entries) {
          fmt::print(out, "  {:<{}}  {}\n", name, width, description);
        }
      }
      return kExitOk;
    };
  });
}

}  // namespace zx::tools
