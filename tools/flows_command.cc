// `zionsim flows`: point-to-point flows on a cluster, from a file or a
// traffic pattern, at flow or analytical fidelity; per-flow times and
// routes, the makespan and the hottest links.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/error.h"
#include "base/text_out.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "tools/cli_checks.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "experiments/interrupt.h"
#include "topology/cluster_file.h"
#include "topology/router.h"
#include "workloads/flow_set.h"

namespace zx::tools {
namespace {

struct FlowsOptions {
  std::string flows_file;
  std::string pattern;
  std::int64_t size_bytes = 1 << 20;
  std::uint64_t seed = 1;
  std::string fidelity = "flow";
  double completion_quantum_ns = 0;  // exact: per-flow times are the output
  std::string format = "table";
  int top = 10;
};

struct FlowOutcome {
  workloads::FlowSpec spec;
  models::FlowId id;
};

std::string link_name(const topology::Topology& t, std::uint32_t link) {
  const topology::LinkInfo& l = t.link(topology::LinkId{link});
  return fmt::format("{}->{}", t.node(l.src).name, t.node(l.dst).name);
}

int run_flows(const topology::ClusterRequest& request, const FlowsOptions& o, std::ostream& out) {
  if (o.flows_file.empty() == o.pattern.empty()) {
    throw InputError(Diagnostic{"zionsim flows", "", "give exactly one of --flows FILE or --pattern NAME"});
  }
  const topology::LoadedCluster cluster = topology::load_cluster(request);
  const topology::Topology& topo = cluster.topology;
  const int gpus = topo.num_gpus();
  const std::vector<workloads::FlowSpec> specs =
      o.flows_file.empty() ? workloads::make_flow_pattern(o.pattern, gpus, sim::Bytes(o.size_bytes), o.seed)
                           : workloads::load_flow_file(o.flows_file, gpus);

  const topology::Router router(topo);
  sim::Simulator sim;
  const std::unique_ptr<models::FlowNetwork> owned_network = make_network(sim, topo, o.fidelity, o.completion_quantum_ns);
  models::FlowNetwork& network = *owned_network;
  std::vector<FlowOutcome> outcomes(specs.size());
  auto scratch = std::make_shared<models::RouteScratch>();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    outcomes[i].spec = specs[i];
    sim.schedule(specs[i].start, [&, i, scratch] {
      const workloads::FlowSpec& s = specs[i];
      outcomes[i].id = models::start_gpu_flow(network, router, s.src_rank, s.dst_rank, s.size,
                                              models::gpu_pair_flow_key(s.src_rank, s.dst_rank), {},
                                              *scratch);
    });
  }
  sim.run();
  check_interrupt();  // asked to stop while it ran: no output, exit 128 + the signal
  sim::TimePoint makespan = sim::TimePoint::zero();
  for (const FlowOutcome& f : outcomes) makespan = std::max(makespan, network.flow(f.id).finish);
  const std::vector<std::uint32_t> hottest = network.hottest_links(static_cast<std::size_t>(o.top));
  const auto utilization = [&](std::uint32_t l) {
    const double seconds = makespan.to_seconds();
    const models::LinkRecord r = network.link(l);
    return seconds > 0 ? r.busy_time.to_seconds() / seconds : 0.0;
  };

  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["cluster"] = cluster.source;
    j["fidelity"] = o.fidelity;
    j["completion_quantum_ns"] = o.completion_quantum_ns;
    j["makespan_ps"] = makespan.count_ps();
    j["resolves"] = network.resolves();
    // The flows stream out one row at a time (a million flows built as one
    // document took 223 s and 1.8 GiB to write): the rest of the document is
    // dumped with an empty "flows" array, and the rows go in its place, each
    // formatted as nlohmann's dump(1) indents it there (integers only), so
    // the bytes are the same.
    j["flows"] = nlohmann::ordered_json::array();
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (std::uint32_t l : hottest) {
      const models::LinkRecord r = network.link(l);
      links.push_back({{"id", l},
                       {"name", link_name(topo, l)},
                       {"bytes", r.bytes_carried.count()},
                       {"busy_ps", r.busy_time.count_ps()},
                       {"utilization", utilization(l)}});
    }
    j["hottest_links"] = std::move(links);
    const std::string document = j.dump(1);
    const std::string empty_flows = "\n \"flows\": []";
    const std::size_t at = document.find(empty_flows);
    ZX_CHECK(at != std::string::npos, "the flows document has its flows array");
    TextOut text(out);
    text.put(std::string_view(document).substr(0, at));
    text.put("\n \"flows\": [");
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const FlowOutcome& f = outcomes[i];
      const models::FlowRecord& r = network.flow(f.id);
      text.print("{}  {{\n   \"id\": {},\n   \"src_rank\": {},\n   \"dst_rank\": {},\n   \"size_bytes\": {},\n"
                 "   \"start_ps\": {},\n   \"first_byte_ps\": {},\n   \"finish_ps\": {},\n   \"route\": ",
                 i == 0 ? "\n" : ",\n", f.spec.id, f.spec.src_rank, f.spec.dst_rank, f.spec.size.count(),
                 r.start.count_ps(), r.first_byte.count_ps(), r.finish.count_ps());
      const auto route = network.route(f.id);
      if (route.empty()) {
        text.put("[]\n  }");
      } else {
        text.print("[\n    {}\n   ]\n  }}", fmt::join(route, ",\n    "));
      }
    }
    text.put(outcomes.empty() ? "]" : "\n ]");
    text.put(std::string_view(document).substr(at + empty_flows.size()));
    text.put('\n');
    return kExitOk;
  }
  if (o.format == "csv") {
    TextOut text(out);
    text.put("id,src_rank,dst_rank,size_bytes,start_ps,first_byte_ps,finish_ps,route\n");
    for (const FlowOutcome& f : outcomes) {
      const models::FlowRecord& r = network.flow(f.id);
      const auto route = network.route(f.id);
      text.print("{},{},{},{},{},{},{},{}\n", f.spec.id, f.spec.src_rank, f.spec.dst_rank,
                 f.spec.size.count(), r.start.count_ps(), r.first_byte.count_ps(), r.finish.count_ps(),
                 fmt::join(route, " "));
    }
    return kExitOk;
  }
  fmt::print(out, "cluster: {} ({} GPUs), {} flows, fidelity {}\n", cluster.source, gpus, outcomes.size(),
             o.fidelity);
  constexpr std::size_t kListed = 32;
  if (outcomes.size() <= kListed) {
    fmt::print(out, "\n{:>6} {:>5} {:>5} {:>14} {:>14} {:>14} {:>5}\n", "id", "src", "dst", "size", "start",
               "finish", "hops");
    for (const FlowOutcome& f : outcomes) {
      const models::FlowRecord& r = network.flow(f.id);
      fmt::print(out, "{:>6} {:>5} {:>5} {:>14} {:>14} {:>14} {:>5}\n", f.spec.id, f.spec.src_rank,
                 f.spec.dst_rank, f.spec.size.to_string(), r.start.since_start().to_string(),
                 r.finish.since_start().to_string(), network.route(f.id).size());
    }
  } else {
    std::vector<std::int64_t> durations;
    for (const FlowOutcome& f : outcomes) {
      const models::FlowRecord& r = network.flow(f.id);
      durations.push_back((r.finish - r.start).count_ps());
    }
    std::sort(durations.begin(), durations.end());
    const auto at = [&](double q) {
      return sim::Duration::ps(durations[static_cast<std::size_t>(q * static_cast<double>(durations.size() - 1))]);
    };
    fmt::print(out, "flow completion time: min {}, median {}, p99 {}, max {}\n", at(0).to_string(),
               at(0.5).to_string(), at(0.99).to_string(), at(1).to_string());
  }
  fmt::print(out, "\nmakespan: {}\n", makespan.since_start().to_string());
  fmt::print(out, "re-solves: {}\n", network.resolves());
  fmt::print(out, "\nhottest links (by bytes / capacity):\n");
  for (std::uint32_t l : hottest) {
    const models::LinkRecord r = network.link(l);
    fmt::print(out, "  {:>6}  {:<40} {:>14}  busy {:>5.1f}%\n", l, link_name(topo, l), r.bytes_carried.to_string(),
               100.0 * utilization(l));
  }
  return kExitOk;
}

}  // namespace

void add_flows_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "flows", "Simulate point-to-point flows between GPUs (a file or a traffic pattern)");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinks);
  auto o = std::make_shared<FlowsOptions>();
  cmd->add_option("--flows", o->flows_file,
                  "A flows file: {\"schema_version\": 1, \"flows\": [{\"id\", \"src_rank\", \"dst_rank\", "
                  "\"size_bytes\", \"start_ns\"}]}")
      ->option_text("FILE");
  cmd->add_option("--pattern", o->pattern, "A traffic pattern over all GPUs")
      ->check(CLI::IsMember(workloads::flow_pattern_names()))
      ->option_text("all_to_all|permutation|incast|ring");
  cmd->add_option("--size-bytes", o->size_bytes, "Bytes per flow of a pattern")
      ->check(in_range(std::int64_t{0}, std::int64_t{1} << 50))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the permutation pattern")
      ->check(in_range<std::uint64_t>(0, std::numeric_limits<std::uint64_t>::max()))
      ->capture_default_str();
  add_network_flags(*cmd, o->fidelity, o->completion_quantum_ns);
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--top", o->top, "Hottest links to list")->check(in_range(0, 100000))->capture_default_str();
  cmd->parse_complete_callback([request, o, action = context.action] {
    *action = [request, o](std::ostream& out) { return run_flows(*request, *o, out); };
  });
}

}  // namespace zx::tools
