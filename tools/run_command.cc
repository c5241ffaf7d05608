// `zionsim run`: simulate a trace (zionsim's format, Chakra or Kineto) on a
// cluster: iteration time, per-rank busy and idle time, exposed communication,
// the critical path and the hottest links; with --vary, a row per combination
// of knobs. The run is experiments/trace_run.h's; this file reads the flags
// and prints the report.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "experiments/report_format.h"
#include "experiments/result_schema.h"
#include "experiments/trace_run.h"
#include "experiments/trace_run_report.h"
#include "models/execution/timeline.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cli_checks.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "tools/variations.h"

namespace zx::tools {
namespace {

namespace ex = experiments;

// The flags; the request's own are bound to it, request_of reads in the rest.
struct Flags {
  TraceRunRequest request;  // whatif's defaults (completion quantum): a whatif --emit-trace runs the same
  std::vector<std::string> algorithms;  // --algo KIND=NAME
  std::vector<std::string> vary;
  std::string timeline;
  std::string format = "table";
  bool skip_memory_check = false;
  std::set<std::string> given;  // flags on the command line that a --vary knob would contradict
  PlacementFlags placement;
};

// The request the flags make. --algo and --options are parsed where the run
// asks for them (TraceRunHooks), as it always has.
TraceRunRequest request_of(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, const Flags& f,
                           const std::vector<std::string>& args, const SweepPlacement* merged) {
  TraceRunRequest r = f.request;
  // Without --vary a Slurm job array's share means nothing: one run.
  const PlacementFlags& p = f.placement;
  if (!f.vary.empty() || !p.shard.empty() || !p.results.empty() || merged != nullptr) {
    r.placement = placement_request(p, args, merged);
  }
  for (const std::string& text : f.vary) r.vary.push_back(parse_knob_variation(text, Sweeper::kRun));
  r.scenario.cluster = cluster;
  r.scenario.plugins = sources.plugins;
  r.scenario.schedules = sources.schedules;
  r.given = {f.given, algorithm_kinds_named(f.algorithms), cluster.overrides};
  r.timeline = !f.timeline.empty();
  r.memory_check = !f.skip_memory_check;
  return r;
}

int run(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, const Flags& f, std::ostream& out,
        const std::vector<std::string>& args, const SweepPlacement* merged) {
  OutputFile timeline_file;
  const TraceRunHooks hooks{.algorithms = [&] { return parse_algorithm_flags(f.algorithms); },
                            .algorithm_options = [&] { return parse_algorithm_options(sources.options); },
                            .before_simulating = [&] {
                              if (!f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
                            }};
  const std::optional<TraceRunReport> report = run_trace(request_of(cluster, sources, f, args, merged), hooks);
  if (!report) return kExitOk;  // an MPI rank other than 0
  if (report->shard) {
    out << report->shard->dump() << '\n';
    return kExitOk;
  }
  if (const std::optional<TraceRunDetail>& d = report->detail; d && !f.timeline.empty()) {
    models::write_chrome_trace(timeline_file, *d->graph, *d->execution, *d->network_activity,
                               {.max_ranks = kTimelineRanks});
    close_output_file("--timeline", f.timeline, timeline_file);
  }
  ex::write_trace_run_report(*report, f.format, f.vary, out);
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand("run", "Simulate a trace of a job (docs/traces.md) on a cluster");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinksAndGpus);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--trace", f->request.trace,
                  "The trace: a zionsim trace file, or Chakra / Kineto files (one per rank), or a directory of them")
      ->required()->take_all()->option_text("FILE|DIR...");
  cmd->add_option("--trace-format", f->request.trace_format, "detect, zionsim, chakra or kineto")
      ->check(CLI::IsMember({"detect", "zionsim", "kineto", "chakra"}))->capture_default_str();
  cmd->add_option("--gpu", f->request.scenario.gpu, "GPU profile that prices kernels in the trace: a built-in or a .json profile file");
  cmd->add_option("--profile", f->request.scenario.profile, "A GPU profile file")->option_text("FILE");
  add_network_flags(*cmd, f->request.scenario.fidelity, f->request.scenario.completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms, "Collective algorithm per kind: KIND=NAME; nccl (NCCL's cost model) or auto alone: every kind")->take_all();
  cmd->add_option("--timeline", f->timeline, "Write a Chrome/Perfetto trace of the run")->option_text("FILE");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--vary", f->vary,
                  fmt::format("Run once per combination: KEY=V1,V2,... (repeatable), a summary row each. KEY: {}",
                              experiments::knob_help(Sweeper::kRun)))
      ->option_text("KEY=V1,V2,...")->take_all();
  cmd->add_option("--threads", f->request.threads, "With --vary: variants simulated in parallel (0: all cores)")
      ->check(in_range(0, 1024));
  cmd->add_flag("--skip-memory-check", f->skip_memory_check,
                "Run even when the simulation is estimated to need more memory than this machine has available");
  add_placement_flags(*cmd, f->placement);
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action, args = context.args,
                                merged = context.merged] {
    f->given = knob_flags_given(*cmd, Sweeper::kRun);
    *action = [request, sources, f, args, merged](std::ostream& out) {
      return run(*request, *sources, *f, out, args, merged);
    };
  });
}

}  // namespace zx::tools
