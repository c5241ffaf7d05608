// `zionsim calibrate-network`: the network model against nccl-tests runs of
// a real cluster. Each result row is simulated (the same collective, size,
// ranks and element type, with the algorithm whatif would use); the link
// parameters the rows determine are fitted (efficiency and latency of the
// RoCE fabric for runs across servers, plus the share all-to-all traffic
// gets when other collectives were measured too; of NVLink for runs inside
// one), and the fitted cluster file and a report are written.
// docs/network_calibration.md is the user's guide. The simulation and the
// fit are experiments/network_fit.h's; this file reads the flags and writes
// the report.

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/nccl_tests.h"
#include "experiments/network_fit.h"
#include "models/collectives/registry.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cli_checks.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "topology/cluster_file.h"

namespace zx::tools {
namespace {

struct Flags {
  std::vector<std::string> files;
  std::string op;
  std::vector<std::string> algorithms;  // KIND=NAME
  std::string fit = "auto";
  std::string out;
  std::string report;
  std::string format = "table";
  std::string gpu;
  int threads = 0;  // rows simulated in parallel; 0: one per core
};

// The fitted cluster file: the cluster with the fitted values, described.
void write_fitted_cluster(const experiments::NetworkFitReport& r, const std::string& path, OutputFile& file) {
  std::vector<std::string> sources_of_fit;
  for (const experiments::NetworkFitRun& run : r.runs) sources_of_fit.push_back(run.source);
  topology::ClusterRequest described = r.fitted_request;
  take_gpu_overrides(described);  // the GPU profile's, not the cluster file's
  described.overrides.push_back(fmt::format("description=zionsim calibrate-network ({}) fitted to {}", r.fit,
                                            fmt::join(sources_of_fit, ", ")));
  file << topology::preset_cluster_text(described);
  close_output_file("--out", path, file);
}

nlohmann::ordered_json report_json(const experiments::NetworkFitReport& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["cluster"] = r.cluster;
  j["nodes"] = r.nodes;
  j["fit"] = r.fit;
  nlohmann::ordered_json fitted_json = nlohmann::ordered_json::object();
  for (const experiments::FittedParameter& p : r.fitted) {
    fitted_json[p.key] = {{"value", p.value}, {"was", p.was}, {"at_bound", p.at_bound}};
  }
  j["fitted"] = fitted_json;
  j["evaluations"] = r.evaluations;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const experiments::NetworkFitRun& run : r.runs) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const experiments::NetworkFitRow& row : run.rows) {
      rows.push_back({{"size_bytes", row.size_bytes}, {"measured_us", row.measured_us},
                      {"model_before_us", row.before_us}, {"model_after_us", row.after_us}});
    }
    files.push_back({{"file", run.source}, {"collective", run.collective}, {"algorithm", run.algorithm},
                     {"ranks", run.ranks}, {"mape_before_percent", run.mape_before_percent},
                     {"mape_after_percent", run.mape_after_percent}, {"worst_after_percent", run.worst_after_percent},
                     {"rows", std::move(rows)}});
  }
  j["files"] = std::move(files);
  return j;
}

// The table (stdout unless --format json) and the Markdown report share
// their lines; the report adds Markdown around them.
std::string report_text(const experiments::NetworkFitReport& r) {
  std::string text;
  text += fmt::format("zionsim calibrate-network: {} file(s) on {} ({} servers of {} GPUs)\n", r.runs.size(),
                      r.cluster, r.nodes, r.gpus_per_node);
  if (r.fitted.empty()) {
    text += "fit: none (comparison only)\n";
  }
  for (const experiments::FittedParameter& p : r.fitted) {
    text += fmt::format("fitted {} = {:.4g} (was {:.4g}){}\n", p.key, p.value, p.was,
                        p.at_bound ? "  -- at the bound of its range: the model cannot match the rows here" : "");
  }
  text += "\n";
  for (const experiments::NetworkFitRun& run : r.runs) {
    text += fmt::format("# {}: {} on {} ranks, algorithm {}; MAPE {:.1f}% before, {:.1f}% after (worst {:.1f}% at {} B)\n",
                        run.source, run.collective, run.ranks, run.algorithm, run.mape_before_percent,
                        run.mape_after_percent, run.worst_after_percent, run.worst_size_bytes);
    text += fmt::format("# {:>12} {:>14} {:>14} {:>14} {:>9}\n", "size (B)", "measured (us)", "before (us)",
                        "after (us)", "error");
    for (const experiments::NetworkFitRow& row : run.rows) {
      text += fmt::format("  {:>12} {:>14.2f} {:>14.2f} {:>14.2f} {:>8.1f}%\n", row.size_bytes, row.measured_us,
                          row.before_us, row.after_us, row.error_percent);
    }
    text += "\n";
  }
  return text;
}

void write_report(const std::string& text, const Flags& f, OutputFile& file) {
  file << "# Network calibration\n\n```\n" << text << "```\n\n";
  file << "Fitted cluster: " << (f.out.empty() ? "not written (no --out)" : "`" + f.out + "`") << ".\n";
  file << "Command: `zionsim calibrate-network`; the model of each row is the same collective, size and "
          "ranks on the flow network model, with the algorithm named above.\n";
  close_output_file("--report", f.report, file);
}

// The algorithms the runs use against --plugin, --schedule and --options:
// the options, by algorithm.
std::map<std::string, std::string> checked_algorithm_options(const AlgorithmSources& sources,
                                                             const std::vector<std::string>& used) {
  models::collectives::CollectiveRegistry registry;
  fill_registry(sources, registry);
  const std::map<std::string, std::string> options = parse_algorithm_options(sources.options);
  check_algorithm_options(options, registry);
  check_algorithm_options_used(options, used);
  return options;
}

int run(const topology::ClusterRequest& given, const AlgorithmSources& sources, const Flags& f, std::ostream& out) {
  std::optional<std::string> op;
  if (!f.op.empty()) op = f.op;
  std::vector<calibration::NcclTestsRun> runs;
  for (const std::string& file : f.files) runs.push_back(calibration::load_nccl_tests(file, op));

  OutputFile out_file, report_file;
  const experiments::NetworkFitHooks hooks{
      .algorithms = [&] { return parse_algorithm_flags(f.algorithms); },
      .algorithm_options = [&](const std::vector<std::string>& used) { return checked_algorithm_options(sources, used); },
      // Output files first: an unwritable path costs no fit.
      .before_simulating =
          [&] {
            if (!f.out.empty()) out_file = open_output_file("--out", f.out);
            if (!f.report.empty()) report_file = open_output_file("--report", f.report);
          },
  };
  const experiments::NetworkFitOptions options{.fit = f.fit, .gpu = f.gpu, .threads = f.threads,
                                               .plugins = sources.plugins, .schedules = sources.schedules,
                                               .progress = [](const std::string& line) { write_progress(line); }};
  const experiments::NetworkFitReport report = experiments::fit_network(runs, given, options, hooks);

  if (!f.out.empty()) write_fitted_cluster(report, f.out, out_file);
  if (f.format == "json") out << report_json(report).dump(2) << "\n";
  const std::string text = report_text(report);
  if (f.format != "json") out << text;
  if (!f.report.empty()) write_report(text, f, report_file);
  return kExitOk;
}

}  // namespace

void add_calibrate_network_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate-network",
      "Compare the network model with nccl-tests runs of a real cluster and fit its link parameters");
  auto request = add_cluster_options(*cmd);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nccl-tests", f->files, "Output files of nccl-tests (all_reduce_perf, alltoall_perf, ...)")
      ->required()
      ->take_all()
      ->option_text("FILE...");
  cmd->add_option("--op", f->op, "The collective, for files of nccl-tests before 2.17 (e.g. all_reduce_perf)");
  cmd->add_option("--algo", f->algorithms, "Algorithm that models a kind (default: whatif's): KIND=NAME")->take_all();
  cmd->add_option("--fit", f->fit,
                  "What to fit: nic (RoCE efficiency, switch latency, all-to-all efficiency; to the runs across "
                  "servers), nvlink (efficiency, latency; to the runs inside one), none; auto: each that the runs "
                  "allow")
      ->check(CLI::IsMember({"auto", "nic", "nvlink", "none"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Write the cluster file with the fitted values")->option_text("CLUSTER.json");
  cmd->add_option("--report", f->report, "Write a Markdown report")->option_text("FILE.md");
  cmd->add_option("--gpu", f->gpu, "GPU profile for reductions: a built-in or a .json profile file (default: the cluster's)");
  cmd->add_option("--threads", f->threads, "Rows simulated in parallel (0: all cores)")->check(in_range(0, 1024));
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->parse_complete_callback([request, sources, f, action = context.action] {
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
