// `zionsim version`: the version and the build.

#include <CLI/CLI.hpp>

#include <string>

#include "tools/cli.h"
#include "tools/commands.h"

namespace zx::tools {

void add_version_command(CLI::App& app, CommandContext& context, std::string version_line) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version of zionsim and how it was built");
  cmd->parse_complete_callback([action = context.action, line = std::move(version_line)] {
    *action = [line](std::ostream& out) {
      out << line << '\n';
      return kExitOk;
    };
  });
}

}  // namespace zx::tools
