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

#include "experiments/collective_report.h"
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
  PlacementFlags placement;
};

int run(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, Flags f, std::ostream& out,
        const std::vector<std::string>& args, const ex::SweepPlacement* merged) {
  ex::CollectiveSweepRequest& r = f.request;
  r.placement = placement_request(f.placement, args, merged);
  r.kind = *models::collectives::parse_collective_kind(f.op);  // CLI::IsMember takes only known names
  r.dtype = *models::collectives::parse_data_type(f.dtype);
  if (!f.quantize.empty()) r.wire = *models::collectives::parse_data_type(f.quantize);
  r.min_bytes = ex::parse_message_size(f.min_bytes, "--min-bytes");
  r.max_bytes = ex::parse_message_size(f.max_bytes, "--max-bytes");
  r.scenario.cluster = cluster;
  std::tie(r.scenario.plugins, r.scenario.schedules, r.options) = std::tie(sources.plugins, sources.schedules, sources.options);
  // An unwritable --plot path must not cost the simulation.
  OutputFile plot_file;
  const auto open_plot = [&] {
    if (!f.plot.empty() && ex::Mpi::rank() == 0 && !r.placement.shard) plot_file = open_output_file("--plot", f.plot);
  };
  const std::optional<CollectiveSweepReport> report = ex::run_collective_sweep(r, open_plot);
  if (!report) return kExitOk;  // an MPI rank other than 0
  if (report->shard) {
    out << report->shard->dump() << '\n';
    return kExitOk;
  }
  if (!f.plot.empty()) {
    ex::write_collective_plot(plot_file, r, *report);
    close_output_file("--plot", f.plot, plot_file);
  }
  ex::write_collective_report(out, f.format, r, *report);
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
  cmd->add_option("--gpu", r.scenario.gpu, "GPU profile for reductions and quantization: a built-in or a .json profile file (default: the cluster's)");
  cmd->add_option("--profile", r.scenario.profile, "A GPU profile file (a calibration result) for reductions and quantization")
      ->option_text("FILE");
  add_network_flags(*cmd, r.scenario.fidelity, r.scenario.completion_quantum_ns);
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--threads", r.threads, "Rows simulated in parallel (0: all cores)")->check(in_range(0, 1024));
  cmd->add_option("--plot", f->plot, "Write time and bus bandwidth against size as SVG, a curve per column")
      ->option_text("FILE.svg");
  cmd->add_option("--vary", r.vary,
                  fmt::format("Also sweep a knob: KEY=V1,V2,... (repeatable; every combination gets its columns). KEY: {}",
                              ex::knob_help(ex::Sweeper::kCollective)))
      ->option_text("KEY=V1,V2,...")
      ->take_all();
  add_placement_flags(*cmd, f->placement);
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action, args = context.args,
                                merged = context.merged] {
    f->request.flags_given = knob_flags_given(*cmd, ex::Sweeper::kCollective);
    *action = [request, sources, f, args, merged](std::ostream& out) {
      return run(*request, *sources, *f, out, args, merged);
    };
  });
}

}  // namespace zx::tools
