// `zionsim validate`: the validation suite (validation/case.h): every
// published measurement the repository carries, simulated by the scenario
// its case names, and the error of each; a summary per family. With
// --check, a case whose error has left its pinned band fails the command.
// The flags, and each scenario run through the command line in process;
// the cases and the report are experiments/validation_report.h's.

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/interrupt.h"
#include "experiments/validation_report.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "validation/case.h"

namespace zx::tools {
namespace {

struct ValidateOptions {
  std::vector<std::string> files;
  std::vector<std::string> only;
  int threads = 0;
  std::string format = "table";
  std::string plot;
  bool check = false;
};

// Runs one case's scenario in process and reads the simulated figure.
// A scenario the program refuses is the case file's error, at its
// arguments; anything else going wrong is internal.
double simulate(const validation::Case& c) {
  std::vector<std::string> args = {c.command};
  args.insert(args.end(), c.arguments.begin(), c.arguments.end());
  args.insert(args.end(), {"--format", "json"});
  std::ostringstream out;
  std::ostringstream err;
  std::vector<Diagnostic> diagnostics;
  const int status = run_cli(args, out, err, &diagnostics);
  if (status == kExitInterrupted) throw Interrupted();
  if (status != kExitOk) {
    std::string why = err.str();
    while (!why.empty() && why.back() == '\n') why.pop_back();
    throw InputError(Diagnostic{c.file, "/scenario/arguments",
                                fmt::format("the scenario of case '{}' failed (exit {}): {}", c.id, status, why)});
  }
  const nlohmann::json result = nlohmann::json::parse(out.str());
  const nlohmann::json::json_pointer pointer(c.pointer);
  if (!result.contains(pointer) || !result.at(pointer).is_number()) {
    throw InputError(Diagnostic{c.file, "/simulated/pointer",
                                fmt::format("the output of '{}' has no number at '{}'", c.command, c.pointer)});
  }
  return result.at(pointer).get<double>();
}

int run_validate(const ValidateOptions& o, std::ostream& out) {
  const std::vector<validation::Case> cases = experiments::load_validation_cases(o.files, o.only);
  OutputFile plot_file;
  if (!o.plot.empty()) plot_file = open_output_file("--plot", o.plot);
  const std::vector<validation::Outcome> outcomes = experiments::run_validation(cases, simulate, o.threads);
  const std::vector<validation::FamilySummary> summary = validation::summarize(outcomes);
  if (o.format == "json") {
    out << experiments::validation_report_json(outcomes, summary).dump(1) << '\n';
  } else if (o.format == "csv") {
    experiments::write_validation_csv(out, outcomes);
  } else {
    experiments::write_validation_table(out, outcomes, summary, o.check);
  }
  if (!o.plot.empty()) {
    experiments::write_validation_plot(plot_file, outcomes);
    close_output_file("--plot", o.plot, plot_file);
  }
  if (!o.check) return kExitOk;
  return experiments::check_validation_pins(std::cerr, outcomes) == 0 ? kExitOk : kExitInternalError;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Simulate every published measurement of the validation suite and print measured, simulated and error "
      "(docs/validation.md)");
  auto o = std::make_shared<ValidateOptions>();
  cmd->add_option("files", o->files,
                  "Case files to run instead of the built-in suite (validation/cases/*.json; docs/validation.md)");
  cmd->add_option("--case", o->only, "Only this case id or family (repeatable)");
  cmd->add_option("--threads", o->threads, "Cases simulated in parallel (0: all cores)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--plot", o->plot, "Write simulated against measured (log-log, with y = x) as SVG");
  cmd->add_flag("--check", o->check,
                "Fail (exit 1) when a case's error has left its pinned band (the test suite's regression guard)");
  cmd->parse_complete_callback([o, action = context.action] {
    *action = [o](std::ostream& out) { return run_validate(*o, out); };
  });
}

}  // namespace zx::tools
