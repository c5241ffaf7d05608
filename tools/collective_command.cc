// `zionsim collective`: the nccl-tests table for simulated collectives.
// Sizes from --min-bytes to --max-bytes by --step-factor; for each, the time,
// algorithm bandwidth and bus bandwidth (nccl-tests' definitions) of every
// --algo, side by side, on the flow or analytical network model. The sweep
// and its columns are experiments/collective_sweep.h's; this file reads the
// flags and writes the table (with its footnotes), CSV, JSON or plot.

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "experiments/collective_sweep.h"
#include "experiments/distribution.h"
#include "experiments/result_schema.h"
#include "models/execution/backend_algorithms.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cli_checks.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "experiments/svg_plot.h"
#include "tools/variations.h"

namespace zx::tools {
namespace {

namespace ex = experiments;
using ex::CollectiveSweepReport;

struct Flags {
  ex::CollectiveSweepRequest request;  // what the flags set as it is
  std::string op = "all_reduce";
  std::string dtype = "fp32";
  std::string quantize;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  std::string format = "table";
  std::string plot;
};

// Below the table: the variants, what NCCL's model and the tuner ran, NCCL's
// graphs (as NCCL_DEBUG=INFO lists them), the definitions, the latencies,
// and the channels the ring and the trees would need to be NCCL's.
void write_footnotes(std::ostream& out, const CollectiveSweepReport& report, const std::vector<std::string>& labels) {
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    if (report.varied()) fmt::print(out, "# {}: {} ranks of {}\n", settings_label(v.settings), v.ranks, v.cluster);
  }
  for (std::size_t c = 0; c < labels.size(); ++c) {
    const std::string& a = report.rows[c].algorithm;
    if (!ex::picks_per_call(a)) continue;
    fmt::print(out, "# {} ran {} ({})\n", labels[c], ex::describe_choices(ex::choice_spans(report, c)),
               models::is_nccl_cost_model(a) ? "algorithm/protocol as NCCL's tuner picks them, by its cost model"
                                             : "the fastest of its candidates, each alone on an idle network");
  }
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    for (const auto& [algorithm, graphs] : v.nccl_graphs) {
      fmt::print(out, "# {}'s graphs (NCCL's topology search, replayed){}: {}\n", algorithm,
                 report.varied() ? ", " + settings_label(v.settings) : "", to_string(graphs));
    }
  }
  fmt::print(out, "# algbw = size / time; busbw = algbw x {} (nccl-tests); GB/s\n",
             ex::bus_factor_formula(report.kind));
  const topology::CommunicationLatencies& c = report.communication;
  fmt::print(out, "# communication library{}: launch {}, per transfer {} inside a server, {} between servers{}{}\n",
             report.varied() ? " (first variant)" : "", c.launch.to_string(), c.transfer.to_string(),
             c.network_transfer.to_string(),
             c.peer_gap > sim::Duration::zero() ? fmt::format(", {} between a rank's peers", c.peer_gap.to_string())
                                                : "",
             report.has_nccl_columns() ? " (not in the nccl columns: NCCL's cost model has its own)" : "");
  for (const std::string& line : ex::channel_advice(report.default_channels)) fmt::print(out, "# {}\n", line);
}

void write_table(std::ostream& out, const Flags& f, const CollectiveSweepReport& report) {
  const ex::CollectiveSweepVariant& first = report.variants.front();
  const std::string ranks = report.varied() ? "the ranks of each variant" : fmt::format("{} ranks", first.ranks);
  const std::string where = report.varies("cluster") ? "the ranks and cluster of each variant"
                                                     : fmt::format("{} of {}", ranks, first.cluster);
  fmt::print(out, "# zionsim collective: {} on {}, {}{}, fidelity {}\n#\n", f.op, where, f.dtype,
             f.quantize.empty() ? "" : fmt::format(" (on the wire: {})", f.quantize), f.request.fidelity);
  const ex::TableGroups groups = ex::collective_sweep_groups(report);
  ex::write_table(out, ex::collective_sweep_schema(report), ex::collective_sweep_rows(report), groups,
                  {.header_prefix = "# ", .row_prefix = "  ", .fit = false});
  write_footnotes(out, report, groups.labels);
}

nlohmann::ordered_json report_json(const Flags& f, const CollectiveSweepReport& report) {
  nlohmann::ordered_json j = {{"schema_version", 1}, {"cluster", report.variants.front().cluster}, {"op", f.op}};
  if (!report.varied()) j["ranks"] = report.variants.front().ranks;
  j["dtype"] = f.dtype;
  if (!f.quantize.empty()) j["quantize"] = f.quantize;
  j["fidelity"] = f.request.fidelity;
  j["completion_quantum_ns"] = f.request.completion_quantum_ns;
  if (report.varied()) j["vary"] = variations_json(f.request.vary);
  j["results"] = ex::json_rows(ex::collective_sweep_schema(report), ex::collective_sweep_rows(report));
  if (!report.has_nccl_columns()) return j;
  nlohmann::ordered_json graphs = nlohmann::ordered_json::array();
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    for (const auto& [algorithm, g] : v.nccl_graphs) {
      nlohmann::ordered_json entry;
      if (report.varied()) entry["variant"] = settings_json(v.settings);
      entry["algorithm"] = algorithm;
      entry.update(to_json(g));
      graphs.push_back(std::move(entry));
    }
  }
  j["nccl_graphs"] = std::move(graphs);
  return j;
}

// A curve per column: every algorithm of every variant.
void write_plot(OutputFile& file, const Flags& f, const CollectiveSweepReport& report) {
  const std::vector<std::string> labels = ex::column_labels(report);
  std::vector<experiments::CollectiveSeries> series(labels.size());
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    experiments::CollectiveSeries& s = series[i % labels.size()];
    s.label = labels[i % labels.size()];
    s.size_bytes.push_back(static_cast<double>(report.rows[i].bytes));
    s.time_us.push_back(report.rows[i].time_us);
    s.busbw_gbyte_per_s.push_back(report.rows[i].busbw);
  }
  experiments::write_collective_svg(file, series, fmt::format("{} on {}, {}", f.op, report.variants.front().cluster, f.dtype));
  close_output_file("--plot", f.plot, file);
}

int run(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, Flags f, std::ostream& out) {
  ex::CollectiveSweepRequest& r = f.request;
  r.kind = *models::collectives::parse_collective_kind(f.op);  // CLI::IsMember takes only known names
  r.dtype = *models::collectives::parse_data_type(f.dtype);
  if (!f.quantize.empty()) r.wire = *models::collectives::parse_data_type(f.quantize);
  r.min_bytes = ex::parse_message_size(f.min_bytes, "--min-bytes");
  r.max_bytes = ex::parse_message_size(f.max_bytes, "--max-bytes");
  r.cluster = cluster;
  std::tie(r.plugins, r.schedules, r.options) = std::tie(sources.plugins, sources.schedules, sources.options);
  // An unwritable --plot path must not cost the simulation.
  OutputFile plot_file;
  const auto open_plot = [&] {
    if (!f.plot.empty() && ex::Mpi::rank() == 0) plot_file = open_output_file("--plot", f.plot);
  };
  const std::optional<CollectiveSweepReport> report = ex::run_collective_sweep(r, open_plot);
  if (!report) return kExitOk;  // an MPI rank other than 0
  if (!f.plot.empty()) write_plot(plot_file, f, *report);
  if (f.format == "json") out << report_json(f, *report).dump(1) << '\n';
  if (f.format == "csv") ex::write_csv(out, ex::collective_sweep_schema(*report), ex::collective_sweep_rows(*report));
  if (f.format == "table") write_table(out, f, *report);
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "collective", "Time collectives over a size sweep, algorithms side by side (the nccl-tests table)");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinks);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  ex::CollectiveSweepRequest& r = f->request;
  cmd->add_option("--op", f->op, "The collective")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"}))
      ->capture_default_str();
  cmd->add_option("--algo", r.algorithms,
                  "Algorithm(s) to compare (zionsim list collectives); several give columns side by side")
      ->take_all();
  cmd->add_option("--dtype", f->dtype, "Element type")->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}))->capture_default_str();
  cmd->add_option("--quantize", f->quantize,
                  "Communicate in this type: fewer bytes on the wire, plus quantize/dequantize kernels")
      ->check(CLI::IsMember({"fp16", "bf16", "fp8"}));
  cmd->add_option("--min-bytes,-b", f->min_bytes, "Smallest size (8, 64K, 1M, 1G)")->capture_default_str();
  cmd->add_option("--max-bytes,-e", f->max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("--step-factor,-f", r.step_factor, "Multiply the size by this between rows")->capture_default_str();
  cmd->add_option("--max-points", r.max_points, "Refuse a sweep of more sizes than this")
      ->check(in_range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--ranks", r.ranks, "Use the first N GPUs (default: all)")->check(in_range(1, 1 << 20));
  cmd->add_option("--gpu", r.gpu, "GPU profile for reductions and quantization: a built-in or a .json profile file (default: the cluster's)");
  cmd->add_option("--profile", r.profile, "A GPU profile file (a calibration result) for reductions and quantization")
      ->option_text("FILE");
  add_network_flags(*cmd, r.fidelity, r.completion_quantum_ns);
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--threads", r.threads, "Rows simulated in parallel (0: all cores)")->check(in_range(0, 1024));
  cmd->add_option("--plot", f->plot, "Write time and bus bandwidth against size as SVG, a curve per column")
      ->option_text("FILE.svg");
  cmd->add_option("--vary", r.vary,
                  fmt::format("Also sweep a knob: KEY=V1,V2,... (repeatable; every combination gets its columns). KEY: {}",
                              ex::knob_help(ex::Sweeper::kCollective)))
      ->option_text("KEY=V1,V2,...")
      ->take_all();
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action] {
    f->request.flags_given = knob_flags_given(*cmd, ex::Sweeper::kCollective);
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
