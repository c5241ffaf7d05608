// `zionsim validate`: the validation suite (validation/case.h): every
// published measurement the repository carries, simulated by the scenario
// its case names, and the error of each; a summary per family. With
// --check, a case whose error has left its pinned band fails the command.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "experiments/interrupt.h"
#include "experiments/parallel.h"
#include "experiments/svg_plot.h"
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

std::vector<validation::Case> load_cases(const ValidateOptions& o) {
  std::vector<validation::Case> cases;
  if (o.files.empty()) {
    cases = validation::builtin_cases();
  } else {
    for (const std::string& file : o.files) cases.push_back(validation::parse_case(read_input_file(file), file));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (cases[i].id == cases[j].id) {
          throw InputError(Diagnostic{cases[i].file, "/id",
                                      fmt::format("id '{}' is also the id of {}", cases[i].id, cases[j].file)});
        }
      }
    }
  }
  if (o.only.empty()) return cases;
  std::vector<validation::Case> chosen;
  for (const std::string& wanted : o.only) {
    bool found = false;
    for (const validation::Case& c : cases) {
      // An id, or a family: every case of it.
      if (c.id == wanted || c.family == wanted) {
        if (std::none_of(chosen.begin(), chosen.end(), [&](const validation::Case& k) { return k.id == c.id; })) {
          chosen.push_back(c);
        }
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> names;
      for (const validation::Case& c : cases) {
        names.push_back(c.id);
        names.push_back(c.family);
      }
      std::string message = fmt::format("no case or family '{}'", wanted);
      if (const auto guess = json::closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
      throw InputError(Diagnostic{"--case", "", message + "; zionsim validate --format csv lists them"});
    }
  }
  return chosen;
}

std::string percent(double error) { return fmt::format("{:+.1f}%", error * 100); }

std::string figure(double value) {
  if (std::abs(value) >= 1e6) return fmt::format("{:.4g}", value);
  return fmt::format("{:.2f}", value);
}

std::string pin_status(const validation::Case& c, double error) {
  if (!c.pinned) return "unpinned";
  return validation::within_pin(error, *c.pinned) ? "ok" : "moved";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char ch : s) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

void write_table(std::ostream& out, const std::vector<validation::Outcome>& outcomes,
                 const std::vector<validation::FamilySummary>& summary, bool check) {
  std::size_t width = 4;
  for (const validation::Outcome& o : outcomes) width = std::max(width, o.validation_case->id.size());
  fmt::print(out, "zionsim validate: {} case{}, error = (simulated - measured) / measured\n\n", outcomes.size(),
             outcomes.size() == 1 ? "" : "s");
  fmt::print(out, "{:<{}}  {:>12}  {:>12}  {:<9}  {:>7}{}\n", "case", width, "measured", "simulated", "unit",
             "error", check ? "  pin" : "");
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    fmt::print(out, "{:<{}}  {:>12}  {:>12}  {:<9}  {:>7}{}{}\n", c.id, width, figure(c.measured),
               figure(o.simulated), validation::unit_of(c.quantity), percent(o.error),
               check ? "  " + pin_status(c, o.error) : "", c.kind == "model" ? "  (measured: a model's figure)" : "");
  }
  fmt::print(out, "\n{:<28}  {:>5}  {:>12}  {}\n", "family", "cases", "mean |error|", "worst");
  for (const validation::FamilySummary& s : summary) {
    fmt::print(out, "{:<28}  {:>5}  {:>12}  {} ({})\n", s.family, s.cases,
               fmt::format("{:.1f}%", s.mean_abs_error * 100), percent(s.worst_error), s.worst_case);
  }
  fmt::print(out, "\nsources and what each error is explained by: docs/validation.md\n");
}

void write_json(std::ostream& out, const std::vector<validation::Outcome>& outcomes,
                const std::vector<validation::FamilySummary>& summary) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    nlohmann::ordered_json row;
    row["id"] = c.id;
    row["family"] = c.family;
    row["title"] = c.title;
    row["kind"] = c.kind;
    row["quantity"] = c.quantity;
    row["unit"] = validation::unit_of(c.quantity);
    row["measured"] = c.measured;
    row["simulated"] = o.simulated;
    row["error"] = o.error;
    if (c.pinned) {
      row["pinned_error"] = {{"value", c.pinned->value}, {"band", c.pinned->band}};
      row["within_pin"] = validation::within_pin(o.error, *c.pinned);
    }
    row["source"] = {{"url", c.source.url},
                     {"repository", c.source.repository},
                     {"path", c.source.path},
                     {"commit", c.source.commit},
                     {"reference", c.source.reference}};
    std::vector<std::string> command = {"zionsim", c.command};
    command.insert(command.end(), c.arguments.begin(), c.arguments.end());
    row["command"] = command;
    row["file"] = c.file;
    cases.push_back(std::move(row));
  }
  j["cases"] = std::move(cases);
  nlohmann::ordered_json families = nlohmann::ordered_json::array();
  for (const validation::FamilySummary& s : summary) {
    families.push_back({{"family", s.family},
                        {"cases", s.cases},
                        {"mean_abs_error", s.mean_abs_error},
                        {"worst_error", s.worst_error},
                        {"worst_case", s.worst_case}});
  }
  j["families"] = std::move(families);
  out << j.dump(1) << '\n';
}

void write_csv(std::ostream& out, const std::vector<validation::Outcome>& outcomes) {
  out << "id,family,kind,quantity,measured,simulated,error,pinned_error,band,source\n";
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    fmt::print(out, "{},{},{},{},{},{},{},{},{},{}\n", csv_field(c.id), csv_field(c.family), c.kind, c.quantity,
               c.measured, o.simulated, o.error, c.pinned ? fmt::format("{}", c.pinned->value) : "",
               c.pinned ? fmt::format("{}", c.pinned->band) : "", csv_field(c.source.url));
  }
}

int run_validate(const ValidateOptions& o, std::ostream& out) {
  const std::vector<validation::Case> cases = load_cases(o);
  OutputFile plot_file;
  if (!o.plot.empty()) plot_file = open_output_file("--plot", o.plot);
  std::vector<validation::Outcome> outcomes(cases.size());
  parallel_for(cases.size(), o.threads, [&](std::size_t i) {
    check_interrupt();
    const double simulated = simulate(cases[i]);
    outcomes[i] = validation::Outcome{&cases[i], simulated, validation::relative_error(simulated, cases[i].measured)};
  });
  const std::vector<validation::FamilySummary> summary = validation::summarize(outcomes);
  if (o.format == "json") {
    write_json(out, outcomes, summary);
  } else if (o.format == "csv") {
    write_csv(out, outcomes);
  } else {
    write_table(out, outcomes, summary, o.check);
  }
  if (!o.plot.empty()) {
    std::vector<experiments::ValidationPoint> points;
    for (const validation::Outcome& o2 : outcomes) {
      const validation::Case& c = *o2.validation_case;
      points.push_back(experiments::ValidationPoint{c.id, c.family, std::string(validation::unit_of(c.quantity)), c.measured,
                                       o2.simulated});
    }
    experiments::write_validation_svg(plot_file, points, "zionsim validate: simulated against measured");
    close_output_file("--plot", o.plot, plot_file);
  }
  if (!o.check) return kExitOk;
  int moved = 0;
  for (const validation::Outcome& oc : outcomes) {
    const validation::Case& c = *oc.validation_case;
    if (!c.pinned) {
      ++moved;
      fmt::print(std::cerr, "zionsim validate: case '{}' has no pinned_error (--check needs one)\n", c.id);
    } else if (!validation::within_pin(oc.error, *c.pinned)) {
      ++moved;
      fmt::print(std::cerr,
                 "zionsim validate: case '{}' moved: error {} is outside its pin {} +/- {:.1f} points ({}); "
                 "if the change is meant, move the pin and say why in docs/validation.md\n",
                 c.id, percent(oc.error), percent(c.pinned->value), c.pinned->band * 100, c.file);
    }
  }
  return moved == 0 ? kExitOk : kExitInternalError;
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
