#include "tools/cli.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "base/check.h"
#include "base/error.h"
#include "tools/commands.h"
#include "tools/version.h"

namespace zx::tools {

std::ofstream open_output_file(const std::string& option, const std::string& path) {
  errno = 0;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
    throw InputError(Diagnostic{path, "", fmt::format("{}: cannot open the file for writing{}", option, why)});
  }
  return file;
}

void close_output_file(const std::string& option, const std::string& path, std::ofstream& file) {
  file.flush();
  file.close();
  if (!file) throw InputError(Diagnostic{path, "", fmt::format("{}: writing the file failed", option)});
}
namespace {

constexpr const char* kDescription =
    "zionsim: a discrete-event simulator and performance model of Meta's ZionEX "
    "platform for training deep learning recommendation models (DLRMs), and of its "
    "Neo software stack.";

std::string version_line() {
  return fmt::format("zionsim {} (C++ {}, {})", kVersion, __cplusplus,
#if defined(__clang__)
                     "clang " __clang_version__
#elif defined(__GNUC__)
                     "gcc " __VERSION__
#else
                     "unknown compiler"
#endif
  );
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app(kDescription, "zionsim");
  app.set_version_flag("--version", version_line(), "Print the version and exit");
  // At most one subcommand; "none" is reported below with the valid names,
  // so that an unknown first word is reported as itself.
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  app.footer("Run 'zionsim <command> --help' for the options of one command.\n");

  std::function<int(std::ostream&)> action;
  CommandContext context{&action};
  add_whatif_command(app, context);
  add_plan_command(app, context);
  add_run_command(app, context);
  add_topology_command(app, context);
  add_flows_command(app, context);
  add_collective_command(app, context);
  add_calibrate_command(app, context);
  add_calibrate_network_command(app, context);
  add_list_command(app, context);
  add_version_command(app, context, version_line());

  // CLI11 wants argv order reversed when given a vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << version_line() << '\n';
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    fmt::print(err, "zionsim: error: {}\n", e.what());
    fmt::print(err, "Run 'zionsim --help' for usage.\n");
    return kExitBadInput;
  }

  if (app.get_subcommands().empty()) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    fmt::print(err, "zionsim: error: expected a command, one of: {}\n", fmt::join(names, ", "));
    fmt::print(err, "Run 'zionsim --help' for usage.\n");
    return kExitBadInput;
  }
  ZX_CHECK(action != nullptr, "every subcommand sets an action");
  try {
    return action(out);
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) fmt::print(err, "zionsim: error: {}\n", d.to_string());
    return kExitBadInput;
  } catch (const InvariantError& e) {
    fmt::print(err, "zionsim: internal error (please report it): {}\n", e.what());
    return kExitInternalError;
  } catch (const std::exception& e) {
    fmt::print(err, "zionsim: error: {}\n", e.what());
    return kExitInternalError;
  }
}

}  // namespace zx::tools
