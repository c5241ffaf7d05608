// `zionsim whatif`: how a DLRM trains on a cluster of each given size, and why.

#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"
#include "models/collectives/plan.h"
#include "models/dlrm/sharding.h"
#include "models/execution/timeline.h"
#include "tools/cli_checks.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "experiments/interrupt.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "tools/model_options.h"
#include "experiments/svg_plot.h"
#include "experiments/distribution.h"
#include "experiments/scenario.h"
#include "experiments/sweep_cache.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif.h"
#include "experiments/whatif_codec.h"
#include "experiments/whatif_outputs.h"
#include "experiments/whatif_progress.h"
#include "experiments/whatif_report.h"
#include "experiments/whatif_variants.h"
#include "topology/degrade.h"
#include "workloads/chakra_export.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

}  // namespace
namespace {

struct Flags {
  std::string nodes;  // empty: kDefaultNodes, or an explicit graph's own size
  std::shared_ptr<KnobFlags> model;  ///< the model flags (tools/model_options.h)
  std::vector<std::string> algorithms;
  std::shared_ptr<KnobFlags> knobs;  ///< the flags the knob table declares (--a2a-precision, --unfused, ...)
  bool skip_memory_check = false;
  std::string format = "table";
  std::string timeline;
  std::string plot;
  std::string emit_trace;
  std::string emit_scenarios;  ///< --emit-scenarios FILE: each variant's scenario as JSON
  std::string scenario_file;   ///< --scenario-file FILE: the scenario to simulate, every setting
  std::string json_out;        ///< --json FILE: --format json's document, whatever --format prints
  /// With --scenario-file: the flags given that set what the file sets.
  std::vector<std::string> beside_scenario_file;
  std::vector<std::string> vary;
  std::vector<std::string> scenarios;  ///< --scenario 'KEY=VALUE KEY=VALUE', each one variant
  PlacementFlags placement;  ///< --shard, --results (experiments/sweep_cache.h)
  double sensitivity = 0;  ///< 0: off
  /// Flags given on the command line that a --vary knob would contradict.
  std::set<std::string> given;
};

std::vector<int> parse_nodes(const std::string& text) {
  std::vector<int> nodes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::size_t used = 0;
      const int n = std::stoi(item, &used);
      if (used != item.size() || n < 1) throw std::invalid_argument("");
      nodes.push_back(n);
    } catch (const std::exception&) {
      throw InputError(Diagnostic{"--nodes", "", fmt::format("expected a comma-separated list of positive node "
                                                             "counts, got '{}'", text)});
    }
    // As --vary refuses a value twice: a size given twice is a typo.
    if (std::find(nodes.begin(), nodes.end() - 1, nodes.back()) != nodes.end() - 1) {
      throw InputError(Diagnostic{"--nodes", "", fmt::format("{} is given twice in '{}'", nodes.back(), text)});
    }
  }
  if (nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  return nodes;
}

constexpr const char* kDefaultNodes = "1,2,4,8,16";

// Without --nodes: a preset sweeps kDefaultNodes; a file that lists its
// graph explicitly has one size, its own.
std::string default_nodes(const topology::ClusterRequest& cluster) {
  if (!topology::is_explicit_graph(cluster)) return kDefaultNodes;
  const topology::Topology t = topology::load_cluster(cluster).topology;
  std::set<int> servers;
  for (int r = 0; r < t.num_gpus(); ++r) servers.insert(t.node(t.gpu(r)).server);
  return std::to_string(servers.size());
}

// Where the points run: a share (--shard, or the Slurm job array's), over
// the MPI job's ranks, or (zionsim merge) read back from shards.
SweepPlacement placement_of(const Flags& f, const SweepPlacement* merged) {
  if (merged != nullptr) return *merged;
  SweepPlacement placement;
  placement.shard = experiments::shard_of(f.placement.shard);
  placement.mpi = experiments::Mpi::active();
  return placement;
}

// --timeline and --emit-trace write one size's whole simulation, which
// --results does not keep and a shard, MPI rank or merge does not carry back.
void check_one_iteration_outputs(const Flags& f, const SweepPlacement& placement) {
  if (f.timeline.empty() && f.emit_trace.empty()) return;
  const char* flag = !f.timeline.empty() ? "--timeline" : "--emit-trace";
  if (!f.placement.results.empty() && placement.merged == nullptr) {
    throw InputError(Diagnostic{flag, "",
                                "writes one size's whole simulation, which --results does not keep; run that size "
                                "without --results"});
  }
  if (placement.shard || placement.mpi || placement.merged != nullptr) {
    throw InputError(Diagnostic{
        flag, "",
        fmt::format("writes one size's whole simulation, which a sweep {} does not carry back; run that size "
                    "alone, without {}",
                    placement.shard    ? "split into shards"
                    : placement.mpi    ? "spread over MPI ranks"
                                       : "merged from shards",
                    placement.shard ? "--shard (or outside the Slurm job array)"
                    : placement.mpi ? "mpirun"
                                    : "the shards"),
    });
  }
}

// --scenario-file: the file's scenario, every setting; of the flags, only
// those that choose points or outputs (sweep_cache.h's non-shaping flags):
// --nodes replaces the file's sizes, --vary and the like vary it.
WhatIfOptions options_from_scenario_file(const WhatIfOptions& base, const Flags& f) {
  if (!f.beside_scenario_file.empty()) {
    throw InputError(Diagnostic{
        f.beside_scenario_file.front(), "",
        fmt::format("given with --scenario-file {}, which holds every setting: change it in the file, or vary it "
                    "(--vary, --scenario)",
                    f.scenario_file)});
  }
  json::Document doc = json::Document::load_file(f.scenario_file);
  if (doc.value().is_object() && doc.value().contains("scenarios") && doc.value()["scenarios"].is_array()) {
    throw InputError(Diagnostic{
        f.scenario_file, "/scenarios",
        fmt::format("an --emit-scenarios document ({} scenarios): give one of them, its /scenarios/K/scenario "
                    "object, in a file of its own",
                    doc.value()["scenarios"].size())});
  }
  WhatIfOptions o;
  static_cast<experiments::Scenario&>(o) = experiments::scenario_from_json(doc.value(), f.scenario_file);
  o.threads = base.threads;
  if (!f.nodes.empty()) o.nodes = parse_nodes(f.nodes);
  o.memory_check = !f.skip_memory_check;
  return o;
}

// The options the flags give on top of the command's own.
WhatIfOptions options_of(const WhatIfOptions& base, const Flags& f) {
  if (!f.scenario_file.empty()) return options_from_scenario_file(base, f);
  WhatIfOptions o = base;
  o.nodes = parse_nodes(f.nodes.empty() ? default_nodes(o.cluster) : f.nodes);
  apply_model_flags(*f.model, o, /*with_search=*/true);
  apply_knob_flags(*f.knobs, o);
  for (const auto& [kind, name] : parse_algorithm_flags(f.algorithms)) o.algorithms[kind] = name;
  o.memory_check = !f.skip_memory_check;
  return o;
}

// Each task's (variant, index into its sizes), in task order.
std::vector<std::pair<std::size_t, std::size_t>> task_points(const std::vector<WhatIfVariant>& variants) {
  std::vector<std::pair<std::size_t, std::size_t>> where;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t i = 0; i < variants[v].options.nodes.size(); ++i) where.emplace_back(v, i);
  }
  return where;
}

// --results DIR: points found there are not simulated again, and each new
// one is kept there as it finishes.
void keep_points_in_results(const Flags& f, const std::vector<std::string>& args,
                            const std::vector<WhatIfVariant>& variants, SweepPlacement& placement) {
  if (f.placement.results.empty() || placement.merged != nullptr) return;
  std::vector<std::string> words = point_shaping_words(args);
  if (!f.scenario_file.empty()) {
    // The files the scenario names (a cluster, a model, ...) are part of a
    // point's identity, as they are when flags name them.
    words.push_back("--scenario-file-names");
    const auto add_strings = [&words](const auto& self, const nlohmann::ordered_json& j) -> void {
      if (j.is_string()) words.push_back(j.get<std::string>());
      if (j.is_structured()) {
        for (const auto& item : j) self(self, item);
      }
    };
    add_strings(add_strings, experiments::scenario_to_json(variants.front().options));
  }
  auto cache = std::make_shared<PointCache>("--results", f.placement.results, std::move(words));
  const auto where = task_points(variants);
  placement.kept = [cache, where, &variants](std::size_t t) {
    const auto [v, i] = where[t];
    return cache->load(variants[v].settings, variants[v].options.nodes[i]);
  };
  placement.keep = [cache, where, &variants](std::size_t t, const WhatIfPoint& point) {
    const auto [v, i] = where[t];
    cache->store(variants[v].settings, variants[v].options.nodes[i], point);
  };
}

// The files the run writes, opened before anything is simulated: an
// unwritable path must not cost the simulation.
struct Outputs {
  OutputFile timeline, trace, plot, scenarios, json;
  bool chakra_trace = false;  ///< --emit-trace names Chakra files (PREFIX.<rank>.et)
};

Outputs open_outputs(const Flags& f, bool writes_files) {
  Outputs o;
  if (!writes_files) return o;
  if (!f.emit_scenarios.empty()) o.scenarios = open_output_file("--emit-scenarios", f.emit_scenarios);
  if (!f.json_out.empty()) o.json = open_output_file("--json", f.json_out);
  if (!f.timeline.empty()) o.timeline = open_output_file("--timeline", f.timeline);
  // A prefix ending in .et (or .et.gz) asks for Chakra files, one per rank
  // (PREFIX.<rank>.et); rank 0's is opened now, so that an unwritable
  // directory costs no simulation.
  o.chakra_trace = experiments::is_chakra_prefix(f.emit_trace);
  if (!f.emit_trace.empty()) {
    o.trace = open_output_file("--emit-trace",
                               o.chakra_trace ? workloads::chakra_rank_path(f.emit_trace, 0) : f.emit_trace);
  }
  if (!f.plot.empty()) o.plot = open_output_file("--plot", f.plot);
  return o;
}

// The points of every variant; nullopt when this process prints nothing
// more (an MPI rank other than 0) or has printed its shard.
std::optional<std::vector<std::vector<WhatIfPoint>>> simulate(const WhatIfOptions& o, const Flags& f,
                                                              const std::vector<std::string>& args,
                                                              const std::vector<WhatIfVariant>& variants,
                                                              const SweepPlacement& placement, bool placed,
                                                              std::ostream& out) {
  experiments::WhatIfProgress progress(variants);
  const auto finished = [&progress](const WhatIfPoint& p, int done, int total) { progress.finished(p, done, total); };
  const auto running = [&progress](int variant, int nodes, const models::ExecutionProgress& p, double seconds) {
    progress.running(variant, nodes, p, seconds);
  };
  if (!placed) {
    if (variants.size() == 1 && variants.front().settings.empty()) {
      std::optional<int> keep;
      if (!f.timeline.empty() || !f.emit_trace.empty()) keep = *std::max_element(o.nodes.begin(), o.nodes.end());
      return std::vector<std::vector<WhatIfPoint>>{run_whatif(o, keep, finished, running)};
    }
    return run_whatif_variants(variants, finished, running);
  }
  const auto where = task_points(variants);
  if (placement.merged != nullptr && placement.merged->size() != where.size()) {
    throw InputError(Diagnostic{
        "merge", "",
        fmt::format("{} hold {} points, and their command makes {} here: they were written by another version of "
                    "zionsim, or with other files behind the same names",
                    placement.merged_source, placement.merged->size(), where.size())});
  }
  PlacedSweep sweep = placement.merged != nullptr ? run_whatif_placed(variants, placement)
                                                  : run_whatif_placed(variants, placement, finished, running);
  if (!sweep.prints) return std::nullopt;  // an MPI rank other than 0: rank 0 prints
  if (placement.shard) {
    std::vector<std::pair<std::size_t, nlohmann::ordered_json>> outcomes;
    for (const std::size_t t : sweep.computed) {
      const auto [v, i] = where[t];
      outcomes.emplace_back(t, task_outcome_to_json(&sweep.points[v][i], nullptr));
    }
    out << shard_document(command_without_shard(args), where.size(), *placement.shard, std::move(outcomes)).dump()
        << '\n';
    return std::nullopt;
  }
  return std::move(sweep.points);
}

int run(const WhatIfOptions& base, const Flags& f, std::ostream& out, const std::vector<std::string>& args,
        const SweepPlacement* merged) {
  SweepPlacement placement = placement_of(f, merged);
  const bool placed = placement.shard || placement.mpi || placement.merged != nullptr || !f.placement.results.empty();
  check_one_iteration_outputs(f, placement);
  // Who writes files: not a shard (merge does), not the MPI ranks but 0.
  const bool writes_files = !placement.shard && experiments::Mpi::rank() == 0;
  const WhatIfOptions o = options_of(base, f);
  const std::vector<WhatIfVariant> variants = whatif_variants(
      o, {.vary = f.vary,
          .scenarios = f.scenarios,
          .sensitivity = f.sensitivity,
          .given = f.scenario_file.empty()
                       ? experiments::GivenFlags{f.given, algorithm_kinds_named(f.algorithms), o.cluster.overrides}
                       : experiments::GivenFlags{},
          .one_iteration_flag = !f.timeline.empty() ? "--timeline" : !f.emit_trace.empty() ? "--emit-trace" : ""});
  keep_points_in_results(f, args, variants, placement);
  std::vector<std::string> used;
  for (const WhatIfVariant& v : variants) {
    for (const auto& [kind, name] : v.options.algorithms) used.push_back(name);
  }
  check_algorithm_options_used(o.algorithm_options, used);
  Outputs files = open_outputs(f, writes_files);

  const std::optional<std::vector<std::vector<WhatIfPoint>>> all =
      simulate(o, f, args, variants, placement, placed, out);
  if (!all) return kExitOk;
  if (f.format == "json") {
    write_whatif_json(out, o, effective_degradations(o), variants, *all);
  } else if (f.format == "csv") {
    write_whatif_csv(out, variants, *all);
  } else {
    write_whatif_table(out, o, effective_degradations(o), variants, *all);
  }
  if (!f.timeline.empty()) experiments::write_whatif_timeline(all->front(), f.timeline, files.timeline);
  if (!f.emit_trace.empty()) experiments::write_whatif_trace(all->front(), f.emit_trace, files.chakra_trace, files.trace);
  if (writes_files && !f.plot.empty()) {
    std::vector<experiments::PlotSeries> series;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      series.push_back(experiments::PlotSeries{variants[v].settings.empty() ? "" : variants[v].label(), (*all)[v]});
    }
    experiments::write_whatif_svg(files.plot, series, fmt::format("{} on {}", o.model, o.cluster.cluster));
    close_output_file("--plot", f.plot, files.plot);
  }
  if (writes_files && !f.emit_scenarios.empty()) {
    files.scenarios << whatif_scenarios_json(variants).dump(2) << '\n';
    close_output_file("--emit-scenarios", f.emit_scenarios, files.scenarios);
  }
  if (writes_files && !f.json_out.empty()) {
    write_whatif_json(files.json, o, effective_degradations(o), variants, *all);
    close_output_file("--json", f.json_out, files.json);
  }
  return kExitOk;
}

}  // namespace

void add_whatif_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "whatif", "Simulate DLRM training over cluster sizes: iteration time, throughput, scaling, breakdown");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/false, DegradeFlag::kLinksAndGpus);
  auto options = std::make_shared<WhatIfOptions>();
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nodes", f->nodes,
                  fmt::format("Cluster sizes in servers, comma-separated (default: {}; a cluster file that lists its "
                              "graph explicitly: its own size)",
                              kDefaultNodes))
      ->option_text("N,N,...");
  f->model = add_model_options(*cmd, *options, /*with_search=*/true);
  f->knobs = add_knob_flags(*cmd, experiments::Sweeper::kWhatif);
  add_network_flags(*cmd, options->fidelity, options->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms,
                  "Collective algorithm per kind, e.g. --algo all_reduce=nccl --algo all_to_all=hierarchical; nccl (NCCL's cost model) or auto alone: every kind")
      ->option_text("KIND=NAME")
      ->take_all();
  cmd->add_option("--threads", options->threads, "Sweep points simulated in parallel (0: all cores)")
      ->check(in_range(0, 1024));
  cmd->add_flag("--skip-memory-check", f->skip_memory_check,
                "Simulate even sizes whose estimated memory exceeds what this machine has available (refused by "
                "default, before they start)");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--timeline", f->timeline, "Write the largest size's iteration as a Chrome/Perfetto trace")
      ->option_text("FILE");
  cmd->add_option("--plot", f->plot, "Write the scaling curve and breakdown as SVG")->option_text("FILE");
  cmd->add_option("--emit-trace", f->emit_trace,
                  "Write the largest size's iteration as a zionsim trace (zionsim run --trace reads it); a FILE "
                  "ending in .et or .et.gz writes Chakra execution traces instead, one per rank (FILE.0.et, ...)")
      ->option_text("FILE");
  cmd->add_option("--emit-scenarios", f->emit_scenarios,
                  "Write each variant's scenario as JSON: its knob settings, every setting it simulated and the "
                  "scenario's hash (docs/sweeps.md, \"The knobs\")")
      ->option_text("FILE");
  cmd->add_option("--scenario-file", f->scenario_file,
                  "Simulate the scenario FILE holds: every setting, as --emit-scenarios writes each variant's under "
                  "/scenarios/K/scenario (docs/sweeps.md, \"Scenario files\"). Only flags that choose points or "
                  "outputs may be added: --nodes replaces its sizes; --vary, --scenario and --sensitivity vary it")
      ->option_text("FILE");
  cmd->add_option("--json", f->json_out,
                  "Also write --format json's document to FILE (put in place once the run succeeds), whatever "
                  "--format prints")
      ->option_text("FILE");
  cmd->add_option("--sensitivity", f->sensitivity,
                  "Which resource matters: also simulate each of NIC, NVLink, HBM bandwidth, GPU FLOP/s, "
                  "host-to-device bandwidth (and rack uplinks when oversubscribed) FACTOR times better, one at a "
                  "time; vs first is the speed-up")
      ->option_text("FACTOR")
      ->check(in_range(1.0, 1000.0));
  cmd->add_option("--vary", f->vary,
                  fmt::format("Also sweep a knob: KEY=V1,V2,... (repeatable; every combination runs at every size). "
                              "KEY: {}",
                              experiments::knob_help(experiments::Sweeper::kWhatif)))
      ->option_text("KEY=V1,V2,...")
      ->take_all();
  cmd->add_option("--scenario", f->scenarios,
                  "One variant to simulate at every size: 'KEY=VALUE KEY=VALUE ...' with --vary's knobs "
                  "(repeatable; every scenario sets the same knobs, in the same order; --vary's combinations run "
                  "inside each)")
      ->option_text("'KEY=VALUE ...'");
  add_placement_flags(*cmd, f->placement);
  cmd->parse_complete_callback([cmd, request, sources, options, f, action = context.action, args = context.args,
                                merged = context.merged] {
    f->given = knob_flags_given(*cmd, experiments::Sweeper::kWhatif);
    f->beside_scenario_file.clear();
    if (!f->scenario_file.empty()) {
      for (const CLI::Option* option : cmd->get_options()) {
        const std::string name = option->get_name();
        if (option->count() > 0 && name != "--scenario-file" && !experiments::chooses_points_or_outputs(name)) {
          f->beside_scenario_file.push_back(name);
        }
      }
    }
    collect_knob_flags(*cmd, *f->knobs);
    collect_knob_flags(*cmd, *f->model);
    *action = [request, sources, options, f, args, merged](std::ostream& out) {
      WhatIfOptions o = *options;
      o.cluster = *request;
      o.plugins = sources->plugins;
      o.schedules = sources->schedules;
      o.algorithm_options = parse_algorithm_options(sources->options);
      return run(o, *f, out, args, merged);
    };
  });
}

}  // namespace zx::tools
