// `zionsim flows`: point-to-point flows on a cluster, from a file or a
// traffic pattern, at flow or analytical fidelity; per-flow times and
// routes, the makespan and the hottest links. The flags; the run and its
// report are experiments/flows_run.h's.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "experiments/flows_run.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cli_checks.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "workloads/flow_set.h"

namespace zx::tools {
namespace {

struct FlowsFlags {
  experiments::FlowsOptions run;
  std::string format = "table";
};

int run_flows(const topology::ClusterRequest& request, const FlowsFlags& o, std::ostream& out) {
  const std::unique_ptr<experiments::FlowsRun> run = experiments::run_flows(request, o.run);
  if (o.format == "json") {
    experiments::write_flows_json(out, *run);
  } else if (o.format == "csv") {
    experiments::write_flows_csv(out, *run);
  } else {
    experiments::write_flows_table(out, *run);
  }
  return kExitOk;
}

}  // namespace

void add_flows_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "flows", "Simulate point-to-point flows between GPUs (a file or a traffic pattern)");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinks);
  auto o = std::make_shared<FlowsFlags>();
  cmd->add_option("--flows", o->run.flows_file,
                  "A flows file: {\"schema_version\": 1, \"flows\": [{\"id\", \"src_rank\", \"dst_rank\", "
                  "\"size_bytes\", \"start_ns\"}]}")
      ->option_text("FILE");
  cmd->add_option("--pattern", o->run.pattern, "A traffic pattern over all GPUs")
      ->check(CLI::IsMember(workloads::flow_pattern_names()))
      ->option_text("all_to_all|permutation|incast|ring");
  cmd->add_option("--size-bytes", o->run.size_bytes, "Bytes per flow of a pattern")
      ->check(in_range(std::int64_t{0}, std::int64_t{1} << 50))
      ->capture_default_str();
  cmd->add_option("--seed", o->run.seed, "Seed of the permutation pattern")
      ->check(in_range<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  add_network_flags(*cmd, o->run.fidelity, o->run.completion_quantum_ns);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--top", o->run.top, "Hottest links to list")->check(in_range(0, 100000))->capture_default_str();
  cmd->parse_complete_callback([request, o, action = context.action] {
    *action = [request, o](std::ostream& out) { return run_flows(*request, *o, out); };
  });
}

}  // namespace zx::tools
