// `zionsim calibrate`: fit the cost models to kernels_ref measurements and
// write a GPU profile (and a report) that --profile then uses.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "calibration/calibrate.h"
#include "tools/cli_checks.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace zx::tools {
namespace {

struct Flags {
  std::vector<std::string> measurements;
  std::string out;
  std::string report;
  std::string plots = "draw";
  calibration::CalibrationOptions options;
};

int run(const Flags& f, std::ostream& out) {
  // Opened before the fit (a path that cannot be written, or --out and
  // --report naming one file, costs nothing), put in place together once
  // both are complete: a failure leaves neither file changed.
  OutputFile profile_file = open_output_file("--out", f.out);
  OutputFile report_file;
  if (!f.report.empty()) report_file = open_output_file("--report", f.report);
  const calibration::CalibrationResult result = calibration::calibrate(f.measurements, f.options);
  const calibration::PlotMode plots = f.plots == "none"      ? calibration::PlotMode::kNone
                                     : f.plots == "scripts" ? calibration::PlotMode::kScripts
                                                            : calibration::PlotMode::kDraw;
  profile_file << result.profile_json;
  finish_output_file("--out", f.out, profile_file);
  if (!f.report.empty()) {
    report_file << calibration::report_with_plots(result, f.report, plots);
    finish_output_file("--report", f.report, report_file);
  }
  close_output_file("--out", f.out, profile_file);
  if (!f.report.empty()) close_output_file("--report", f.report, report_file);
  fmt::print(out, "calibrated {} from {} measurements -> {}\n", result.profile.name, result.measurements, f.out);
  std::size_t width = 6;  // the longest family name ("dot_interaction fp16 (validation)")
  for (const calibration::FamilyReport& r : result.families) width = std::max(width, r.family.size());
  fmt::print(out, "\n{:<{}} {:>7} {:>9} {:>12} {:>12}  {}\n", "family", width, "points", "R^2", "hold-out MAPE",
             "worst", "parameters");
  for (const calibration::FamilyReport& r : result.families) {
    fmt::print(out, "{:<{}} {:>7} {:>9.4f} {:>11.2f}% {:>11.2f}%  {}{}\n", r.family, width, r.fit_points,
               r.r_squared, 100 * r.holdout_mape, 100 * r.holdout_worst, r.validation ? "(validation) " : "",
               r.refused.empty() ? r.parameters
                                 : "refused: " + r.refused + (r.kept.empty() ? "" : "; kept " + r.kept));
  }
  if (!f.report.empty()) fmt::print(out, "\nreport: {}\n", f.report);
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Fit the cost models to kernels_ref measurements and write a GPU profile (docs/calibration.md)");
  auto f = std::make_shared<Flags>();
  cmd->add_option("--measurements", f->measurements, "JSON-lines files or directories of them (kernels_ref output)")
      ->required()
      ->take_all()
      ->option_text("DIR|FILE...");
  cmd->add_option("--out", f->out, "The profile to write (zionsim whatif --profile reads it)")->required()->option_text("PROFILE.json");
  cmd->add_option("--report", f->report, "Also write a Markdown report of every fit")->option_text("FILE.md");
  cmd->add_option("--plots", f->plots,
                  "With --report: per family a gnuplot script and its data beside the report, drawn as SVG "
                  "when gnuplot is on PATH (draw), only written (scripts), or none")
      ->check(CLI::IsMember({"draw", "scripts", "none"}))
      ->capture_default_str();
  cmd->add_option("--base", f->options.base_profile, "Built-in profile the fitted values override")->capture_default_str();
  cmd->add_option("--name", f->options.profile_name, "Name of the written profile");
  cmd->add_option("--gemm-dtype", f->options.gemm_dtype, "GEMM type whose fit sets the profile's efficiency")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}))
      ->capture_default_str();
  cmd->add_flag("--partial", f->options.partial,
               "Keep the base profile's value of a parameter whose kernels cannot be fitted (a run cut short, "
               "a kernel that failed its check), saying so, instead of refusing");
  cmd->add_option("--holdout-every", f->options.holdout_every, "Hold out every Nth point for validation")
      ->check(in_range(2, 1000))
      ->capture_default_str();
  cmd->parse_complete_callback([f, action = context.action] {
    *action = [f](std::ostream& out) { return run(*f, out); };
  });
}

}  // namespace zx::tools
