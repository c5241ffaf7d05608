// `zionsim run`: simulate a trace (zionsim's format, Chakra or Kineto) on a
// cluster: iteration time, per-rank busy and idle time, exposed communication,
// the critical path and the hottest links; with --vary, a row per combination
// of knobs. The run is experiments/trace_run.h's; this file reads the flags
// and prints the report.

#include <CLI/CLI.hpp>

#include <algorithm>
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

#include "experiments/trace_run.h"
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

// The flags; the request's own are bound to it, request_of reads in the rest.
struct Flags {
  TraceRunRequest request;  // whatif's defaults (completion quantum): a whatif --emit-trace runs the same
  std::vector<std::string> algorithms;  // --algo KIND=NAME
  std::vector<std::string> vary;
  std::string timeline;
  std::string format = "table";
  bool skip_memory_check = false;
  std::set<std::string> given;  // flags on the command line that a --vary knob would contradict
};

constexpr std::size_t kCriticalOps = 20;  // of the critical path, the table's last
constexpr std::string_view kAutoRan = "auto ran (per distinct call, the fastest candidate alone on an idle network";

// The request the flags make. --algo and --options are parsed where the run
// asks for them (TraceRunHooks), as it always has.
TraceRunRequest request_of(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, const Flags& f) {
  TraceRunRequest r = f.request;
  for (const std::string& text : f.vary) r.vary.push_back(parse_knob_variation(text, Sweeper::kRun));
  r.scenario.cluster = cluster;
  r.scenario.plugins = sources.plugins;
  r.scenario.schedules = sources.schedules;
  r.given = {f.given, algorithm_kinds_named(f.algorithms), cluster.overrides};
  r.timeline = !f.timeline.empty();
  r.memory_check = !f.skip_memory_check;
  return r;
}

void print_run_json(const TraceRunReport& report, std::ostream& out) {
  const TraceRunVariant& v = report.variants.front();
  const TraceRunDetail& d = *report.detail;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (const RankTimes& t : d.ranks) {
    ranks.push_back({{"rank", t.rank}, {"compute_ms", t.compute_ms}, {"idle_ms", t.idle_ms},
                     {"exposed_communication_ms", t.exposed_ms}, {"overlapped_communication_ms", t.overlapped_ms},
                     {"compute_slowed_by_communication_ms", t.slowed_by_communication_ms}});
  }
  nlohmann::ordered_json path = nlohmann::ordered_json::array();
  for (const CriticalPathOp& op : d.critical_path) {
    path.push_back({{"op", op.op}, {"rank", op.rank}, {"name", op.name}, {"start_ps", op.start.count_ps()},
                    {"end_ps", op.end.count_ps()}});
  }
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const LinkLoad& l : d.hottest_links) {
    links.push_back({{"id", l.id}, {"name", l.name}, {"bytes", l.bytes.count()}, {"busy_ps", l.busy.count_ps()}});
  }
  nlohmann::ordered_json j{{"schema_version", 1}, {"trace", report.trace_name}, {"cluster", v.summary.cluster},
                           {"fidelity", v.scenario.fidelity},
                           {"completion_quantum_ns", v.scenario.completion_quantum_ns},
                           {"iteration_time_ms", v.summary.iteration_ms},
                           {"fingerprint", fmt::format("{:016x}", v.summary.fingerprint)}, {"ranks", std::move(ranks)},
                           {"critical_path", std::move(path)}, {"hottest_links", std::move(links)}};
  if (!v.summary.auto_choices.empty()) j["auto_choices"] = auto_choices_json(v.summary.auto_choices);
  if (!v.summary.nccl_choices.empty()) j["nccl_choices"] = auto_choices_json(v.summary.nccl_choices);
  out << j.dump(1) << '\n';
}

void print_run_csv(const TraceRunDetail& d, std::ostream& out) {
  fmt::print(out, "rank,compute_ms,idle_ms,exposed_communication_ms,overlapped_communication_ms,"
                  "compute_slowed_by_communication_ms\n");
  for (const RankTimes& t : d.ranks) {
    fmt::print(out, "{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", t.rank, t.compute_ms, t.idle_ms, t.exposed_ms,
               t.overlapped_ms, t.slowed_by_communication_ms);
  }
}

void print_run_table(const TraceRunReport& report, std::ostream& out) {
  const TraceRunSummary& s = report.variants.front().summary;
  const TraceRunDetail& d = *report.detail;
  fmt::print(out, "trace {} ({} ranks, {} ops) on {}\n\n", report.trace_name, s.ranks, s.ops, s.cluster);
  fmt::print(out, "iteration time: {:.6f} ms\n\n", s.iteration_ms);
  fmt::print(out, "{:>6} {:>12} {:>12} {:>14} {:>14} {:>14}\n", "rank", "compute ms", "idle ms", "exposed comm",
             "overlapped", "slowed by comm");
  for (const RankTimes& t : d.ranks) {
    fmt::print(out, "{:>6} {:>12.3f} {:>12.3f} {:>14.3f} {:>14.3f} {:>14.3f}\n", t.rank, t.compute_ms, t.idle_ms,
               t.exposed_ms, t.overlapped_ms, t.slowed_by_communication_ms);
  }
  const std::size_t n = d.critical_path.size();
  fmt::print(out, "\ncritical path ({} ops{}):\n", n, n > kCriticalOps ? fmt::format(", last {}", kCriticalOps) : "");
  for (std::size_t k = n > kCriticalOps ? n - kCriticalOps : 0; k < n; ++k) {
    const CriticalPathOp& op = d.critical_path[k];
    fmt::print(out, "  op {:>6}  rank {:>4}  {:<12} {:<28} {:>14} -> {:>14}\n", op.op, op.rank, op.stream,
               op.name.empty() ? op.kind : op.name, op.start.since_start().to_string(),
               op.end.since_start().to_string());
  }
  fmt::print(out, "\nhottest links:\n");
  for (const LinkLoad& l : d.hottest_links) {
    fmt::print(out, "  {:<40} {:>14}  busy {}\n", l.name, l.bytes.to_string(), l.busy.to_string());
  }
  if (!s.auto_choices.empty()) {
    fmt::print(out, "\n{}; --format json has each one's time):\n  {}\n", kAutoRan,
               auto_choices_summary(s.auto_choices));
  }
  if (!s.nccl_choices.empty()) {
    fmt::print(out, "\n{}:\n  {}\n", kNcclChoicesTitle, auto_choices_summary(s.nccl_choices));
  }
}

void print_variants_json(const TraceRunReport& report, const Flags& f, std::ostream& out) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (const TraceRunVariant& v : report.variants) {
    const TraceRunSummary& s = v.summary;
    results.push_back({{"variant", settings_json(v.settings)}, {"cluster", s.cluster},
                       {"fidelity", v.scenario.fidelity}, {"completion_quantum_ns", v.scenario.completion_quantum_ns},
                       {"iteration_time_ms", s.iteration_ms}, {"speedup_vs_first_variant", v.speedup},
                       {"compute_ms_mean", s.compute_ms}, {"exposed_communication_ms_mean", s.exposed_ms},
                       {"overlapped_communication_ms_mean", s.overlapped_ms}, {"busiest_link", s.busiest_link},
                       {"fingerprint", fmt::format("{:016x}", s.fingerprint)}});
    if (!s.auto_choices.empty()) results.back()["auto_choices"] = auto_choices_json(s.auto_choices);
    if (!s.nccl_choices.empty()) results.back()["nccl_choices"] = auto_choices_json(s.nccl_choices);
  }
  const nlohmann::ordered_json j{{"schema_version", 1}, {"trace", report.trace_name},
                                 {"vary", variations_json(f.vary)}, {"results", std::move(results)}};
  out << j.dump(1) << '\n';
}

void print_variants_csv(const TraceRunReport& report, std::ostream& out) {
  for (const auto& [key, value] : report.variants.front().settings) fmt::print(out, "{},", key);
  fmt::print(out, "iteration_time_ms,speedup_vs_first_variant,compute_ms_mean,exposed_communication_ms_mean,"
                  "overlapped_communication_ms_mean,busiest_link\n");
  for (const TraceRunVariant& v : report.variants) {
    for (const auto& [key, value] : v.settings) fmt::print(out, "{},", csv_quoted(value));
    fmt::print(out, "{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{}\n", v.summary.iteration_ms, v.speedup, v.summary.compute_ms,
               v.summary.exposed_ms, v.summary.overlapped_ms, csv_quoted(v.summary.busiest_link));
  }
}

// Per variant, its `choices`, under `title`; nothing where no variant has any.
void print_choices(const std::vector<TraceRunVariant>& variants, std::string_view title,
                   std::vector<models::AutoChoice> TraceRunSummary::*choices, std::ostream& out) {
  bool titled = false;
  for (const TraceRunVariant& v : variants) {
    if ((v.summary.*choices).empty()) continue;
    if (!std::exchange(titled, true)) fmt::print(out, "{}:\n", title);
    fmt::print(out, "  {}: {}\n", settings_label(v.settings), auto_choices_summary(v.summary.*choices));
  }
}

void print_variants_table(const TraceRunReport& report, std::ostream& out) {
  const std::vector<TraceRunVariant>& variants = report.variants;
  const Settings& keys = variants.front().settings;
  fmt::print(out, "trace {} ({} ranks, {} ops)\n\n", report.trace_name, variants.front().summary.ranks,
             variants.front().summary.ops);
  std::vector<std::size_t> width;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    width.push_back(keys[k].first.size());
    for (const TraceRunVariant& v : variants) width[k] = std::max(width[k], v.settings[k].second.size());
  }
  for (std::size_t k = 0; k < keys.size(); ++k) fmt::print(out, "{:>{}} ", keys[k].first, width[k]);
  fmt::print(out, "| {:>12} {:>8} | {:>10} {:>10} {:>10} | {}\n", "iter (ms)", "speedup", "compute", "exposed",
             "overlap", "busiest link");
  for (const TraceRunVariant& v : variants) {
    for (std::size_t k = 0; k < keys.size(); ++k) fmt::print(out, "{:>{}} ", v.settings[k].second, width[k]);
    fmt::print(out, "| {:>12.6f} {:>7.3f}x | {:>10.3f} {:>10.3f} {:>10.3f} | {}\n", v.summary.iteration_ms,
               v.speedup, v.summary.compute_ms, v.summary.exposed_ms, v.summary.overlapped_ms, v.summary.busiest_link);
  }
  fmt::print(out, "\ncompute, exposed and overlapped communication: ms, means over ranks; speedup: the first "
                  "variant's iteration time over this one's.\n");
  print_choices(variants, fmt::format("{})", kAutoRan), &TraceRunSummary::auto_choices, out);
  print_choices(variants, kNcclChoicesTitle, &TraceRunSummary::nccl_choices, out);
}

int run(const topology::ClusterRequest& cluster, const AlgorithmSources& sources, const Flags& f, std::ostream& out) {
  OutputFile timeline_file;
  const TraceRunHooks hooks{.algorithms = [&] { return parse_algorithm_flags(f.algorithms); },
                            .algorithm_options = [&] { return parse_algorithm_options(sources.options); },
                            .before_simulating = [&] {
                              if (!f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
                            }};
  const std::optional<TraceRunReport> report = run_trace(request_of(cluster, sources, f), hooks);
  if (!report) return kExitOk;  // an MPI rank other than 0
  if (const std::optional<TraceRunDetail>& d = report->detail; d && !f.timeline.empty()) {
    models::write_chrome_trace(timeline_file, *d->graph, *d->execution, *d->network_activity,
                               {.max_ranks = kTimelineRanks});
    close_output_file("--timeline", f.timeline, timeline_file);
  }
  if (f.format == "json") report->detail ? print_run_json(*report, out) : print_variants_json(*report, f, out);
  if (f.format == "csv") report->detail ? print_run_csv(*report->detail, out) : print_variants_csv(*report, out);
  if (f.format == "table") report->detail ? print_run_table(*report, out) : print_variants_table(*report, out);
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
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action] {
    f->given = knob_flags_given(*cmd, Sweeper::kRun);
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
