#include "experiments/interrupt.h"
#include "tools/cli.h"
#include "sim/time.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>
#include <fmt/ostream.h>

#include "base/check.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "tools/commands.h"
#include "tools/version.h"

namespace zx::tools {

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

// The first word of `args` that looks like a long flag and is none of
// `command`'s, with the nearest of them: CLI11 itself reports an unknown
// flag only as "arguments were not expected", together with its value.
std::optional<std::string> unknown_flag(const CLI::App& command, const std::vector<std::string>& args) {
  std::vector<std::string> known;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) known.push_back("--" + name);
  }
  for (const std::string& arg : args) {
    if (!arg.starts_with("--") || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string message = fmt::format("{}: unknown flag '{}'", command.get_name(), name);
    if (const auto guess = json::closest_match(name, known)) message += fmt::format(" (did you mean '{}'?)", *guess);
    return message;
  }
  return std::nullopt;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            std::vector<Diagnostic>* diagnostics, const SweepPlacement* merged) {
  CLI::App app(kDescription, "zionsim");
  app.set_version_flag("--version", version_line(), "Print the version and exit");
  // At most one subcommand; "none" is reported below with the valid names,
  // so that an unknown first word is reported as itself.
  app.require_subcommand(0, 1);
  app.fallthrough(false);
  app.footer("Run 'zionsim <command> --help' for the options of one command.\n");

  std::function<int(std::ostream&)> action;
  CommandContext context{&action, args, merged};
  add_whatif_command(app, context);
  add_sweep_command(app, context);
  add_merge_command(app, context);
  add_plan_command(app, context);
  add_run_command(app, context);
  add_topology_command(app, context);
  add_flows_command(app, context);
  add_collective_command(app, context);
  add_calibrate_command(app, context);
  add_calibrate_network_command(app, context);
  add_validate_command(app, context);
  add_list_command(app, context);
  add_version_command(app, context, version_line());

  // An empty value after an option that takes one (--nodes "") is reported
  // as such before CLI11's own validators see it (they would say "'' not
  // in {...}" or take it as the option left out).
  if (!args.empty()) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() != args.front()) continue;
      for (std::size_t i = 1; i + 1 < args.size(); ++i) {
        if (!args[i + 1].empty() || !args[i].starts_with("--") || args[i].find('=') != std::string::npos) continue;
        const CLI::Option* option = sub->get_option_no_throw(args[i]);
        if (option == nullptr || option->get_type_size() == 0) continue;
        fmt::print(err, "zionsim: error: {}: expected a value, got an empty string\n", args[i]);
        fmt::print(err, "Run 'zionsim {} --help' for usage.\n", sub->get_name());
        return kExitBadInput;
      }
    }
  }

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
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    if (chosen.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !args.empty() &&
        !args.front().starts_with("-")) {
      // The first word is not a command.
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
      std::string message = fmt::format("unknown command '{}'", args.front());
      if (const auto guess = json::closest_match(args.front(), names)) message += fmt::format(" (did you mean '{}'?)", *guess);
      fmt::print(err, "zionsim: error: {}; one of: {}\n", message, fmt::join(names, ", "));
    } else if (const auto flag = !chosen.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr
                                     ? unknown_flag(*chosen.front(), args)
                                     : std::nullopt) {
      fmt::print(err, "zionsim: error: {}\n", *flag);
    } else {
      fmt::print(err, "zionsim: error: {}\n", e.what());
    }
    fmt::print(err, "Run 'zionsim{} --help' for usage.\n", chosen.empty() ? "" : " " + chosen.front()->get_name());
    return kExitBadInput;
  }

  // A value given empty (--nodes "", --timeline "", a positional "") is a
  // mistake, not the option left out: refused for every option that takes
  // a value, before anything runs (options are caught above already; this
  // catches positionals and any option whose validator let "" through).
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* option : sub->get_options()) {
      if (option->count() == 0 || option->get_type_size() == 0) continue;
      const std::vector<std::string>& values = option->results();
      if (std::any_of(values.begin(), values.end(), [](const std::string& v) { return v.empty(); })) {
        const std::string name = option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front();
        fmt::print(err, "zionsim: error: {}: expected a value, got an empty string\n", name);
        fmt::print(err, "Run 'zionsim {} --help' for usage.\n", sub->get_name());
        return kExitBadInput;
      }
    }
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
  } catch (const Interrupted&) {
    fmt::print(err, "zionsim: interrupted\n");
    return kExitInterrupted;
  } catch (const InputError& e) {
    for (const Diagnostic& d : e.diagnostics()) fmt::print(err, "zionsim: error: {}\n", d.to_string());
    if (diagnostics != nullptr) *diagnostics = e.diagnostics();
    return kExitBadInput;
  } catch (const sim::RangeError& e) {
    // A quantity past what the simulator represents: the inputs' doing (a
    // speed or efficiency near 0, a size far beyond the cluster's), not a bug.
    fmt::print(err,
               "zionsim: error: {}: the inputs ask for more than the simulator represents (simulated time up to "
               "about 106 days, rates of at least 1 B/s); look for a bandwidth, efficiency or speed near 0 or a "
               "size far beyond the cluster's\n",
               e.describe());
    return kExitBadInput;
  } catch (const InvariantError& e) {
    fmt::print(err, "zionsim: internal error (please report it): {}\n", e.what());
    return kExitInternalError;
  } catch (const std::exception& e) {
    fmt::print(err, "zionsim: error: {}\n", e.what());
    return kExitInternalError;
  }
}

void run_nested_cli(const std::vector<std::string>& args, std::ostream& out, const SweepPlacement* merged,
                    const std::string& note) {
  std::ostringstream err;
  std::vector<Diagnostic> diagnostics;
  const int status = run_cli(args, out, err, &diagnostics, merged);
  if (status == kExitOk) return;
  if (status == kExitInterrupted) throw Interrupted();
  if (status == kExitBadInput && !diagnostics.empty()) {
    for (Diagnostic& d : diagnostics) d.message += note;
    throw InputError(std::move(diagnostics));
  }
  // What the command said (a usage error, an internal one), without its
  // own "zionsim: error: " and usage hint.
  std::string said;
  std::istringstream lines(err.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Run 'zionsim")) continue;
    if (line.starts_with("zionsim: error: ")) line.erase(0, 16);
    said += (said.empty() ? "" : "; ") + line;
  }
  if (status == kExitBadInput) throw InputError(Diagnostic{"", "", said + note});
  throw std::runtime_error(said + note);
}

}  // namespace zx::tools
