// `zionsim plan`: the embedding sharding plan of one cluster size, as the
// planner (or a sharding file) makes it: where every table goes, how full
// each GPU's HBM is, how even the embedding work and the embedding exchange
// are; and, with --emit-sharding, the plan as a sharding file to edit and
// feed back to whatif --sharding. The report and its table, CSV and JSON
// are experiments/plan_report.h's; this file reads the flags, calls it and
// writes the file.

#include <CLI/CLI.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.h"
#include "experiments/plan_report.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cli_checks.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "tools/model_options.h"

namespace zx::tools {
namespace {

namespace ex = experiments;

struct Flags {
  int nodes = 0;
  std::string format = "table";
  std::string emit_sharding;
  bool per_gpu = false;
  bool per_table = false;
  bool search = false;
  std::vector<std::string> algorithms;
  bool unfused = false;
  bool skip_memory_check = false;
  bool no_pipeline = false;
  bool prefetch_cache = false;
};

int run(const WhatIfOptions& o, const Flags& f, std::ostream& out) {
  const ex::PlanReport report = ex::make_plan_report(o, f.nodes, f.search);
  if (!f.emit_sharding.empty() && !report.fits()) {
    throw InputError(Diagnostic{"--emit-sharding", "", fmt::format("the plan does not fit, nothing to write: {}",
                                                                   report.size.plan.reason)});
  }
  if (f.format == "json") {
    out << ex::plan_report_json(report).dump(2) << '\n';
  } else if (f.format == "csv") {
    ex::write_plan_csv(out, report, f.per_table);
  } else {
    ex::write_plan_table(out, report, f.per_gpu, f.per_table);
  }
  if (!f.emit_sharding.empty()) {
    OutputFile file = open_output_file("--emit-sharding", f.emit_sharding);
    file << ex::plan_sharding_file(report);
    close_output_file("--emit-sharding", f.emit_sharding, file);
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Show the embedding sharding plan of one cluster size: placements, HBM, balance; write it as a file");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/false, DegradeFlag::kLinksAndGpus);
  auto options = std::make_shared<WhatIfOptions>();
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nodes", f->nodes, "Cluster size in servers")->required()->check(in_range(1, 8192));
  auto model = add_model_options(*cmd, *options, /*with_search=*/false);
  cmd->add_option("--a2a-precision", options->a2a_forward_dtype,
                  "Element type of the pooled-embedding all-to-all (for the exchange volume)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--a2a-backward-precision", options->a2a_backward_dtype,
                  "Element type of the gradient all-to-all (default: as forward)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_flag("--per-gpu", f->per_gpu, "List every GPU (the table lists the busiest few)");
  cmd->add_flag("--per-table", f->per_table, "List every table: kind, memory, GPUs (csv: one row per table)");
  cmd->add_option("--all-reduce-precision", options->all_reduce_dtype, "Element type of the dense gradient all-reduce (for --search)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  add_network_flags(*cmd, options->fidelity, options->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms, "Collective algorithm per kind (for --search), e.g. --algo all_to_all=hierarchical; nccl or auto alone: every kind")
      ->option_text("KIND=NAME")
      ->take_all();
  cmd->add_flag("--unfused", f->unfused, "Unfused embedding kernels (for --search)");
  cmd->add_flag("--no-pipeline", f->no_pipeline, "Do not overlap the next batch's input distribution (for --search)");
  cmd->add_flag("--prefetch-cache", f->prefetch_cache,
                "Fetch host-memory tables' cache misses for the next batch beside the iteration (for --search)");
  cmd->add_flag("--search", f->search,
                "Search for the sharding that trains fastest in simulation: each table group's kinds are simulated "
                "in turn, heaviest first, and kept when faster (experiments/plan_search.h)");
  cmd->add_option("--search-budget", options->search_budget, "Most iterations --search simulates")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "Simulations run in parallel by --search (0: all cores)")
      ->check(in_range(0, 1024));
  cmd->add_flag("--skip-memory-check", f->skip_memory_check,
                "--search: simulate even when the estimated memory exceeds what this machine has available");
  cmd->add_option("--emit-sharding", f->emit_sharding,
                  "Write the plan as a sharding file that pins every table (edit it, then whatif --sharding FILE)")
      ->option_text("FILE");
  auto sources = add_algorithm_options(*cmd);
  cmd->parse_complete_callback([cmd, request, options, model, sources, f, action = context.action] {
    collect_knob_flags(*cmd, *model);
    *action = [request, options, model, sources, f](std::ostream& out) {
      WhatIfOptions o = *options;
      o.cluster = *request;
      o.plugins = sources->plugins;
      o.schedules = sources->schedules;
      o.algorithm_options = parse_algorithm_options(sources->options);
      apply_model_flags(*model, o, /*with_search=*/false);
      for (const auto& [kind, name] : parse_algorithm_flags(f->algorithms)) o.algorithms[kind] = name;
      std::vector<std::string> used;
      for (const auto& [kind, name] : o.algorithms) used.push_back(name);
      check_algorithm_options_used(o.algorithm_options, used);
      o.fused_embeddings = !f->unfused;
      o.memory_check = !f->skip_memory_check;
      o.pipeline_input = !f->no_pipeline;
      o.prefetch_cache = f->prefetch_cache;
      if (!o.cluster.degradations.empty() && !f->search) {
        // The planner plans for healthy hardware (as TorchRec's does): a
        // degraded part changes only what --search simulates.
        throw InputError(Diagnostic{"--degrade", "",
                                    "changes only simulated iterations, and the planner plans for healthy hardware: "
                                    "add --search (the plan that trains fastest on the degraded cluster), or use "
                                    "whatif"});
      }
      return run(o, *f, out);
    };
  });
}

}  // namespace zx::tools
