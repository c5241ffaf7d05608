// `zionsim run`: simulate a trace (the zionsim trace format) on a cluster:
// iteration time, per-rank busy and idle time, exposed communication, the
// critical path and the hottest links.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/execution/executor.h"
#include "models/execution/network_activity.h"
#include "models/execution/network_backend.h"
#include "models/execution/timeline.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "topology/router.h"
#include "workloads/chakra_import.h"
#include "workloads/kineto_import.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

struct Flags {
  std::vector<std::string> trace;
  std::string trace_format = "detect";
  std::string gpu;
  std::string profile;
  std::string fidelity = "flow";
  double completion_quantum_ns = 10.0;  // as whatif's, so that a whatif --emit-trace runs the same
  std::vector<std::string> algorithms;
  std::string timeline;
  std::string format = "table";
  int critical_ops = 20;
};

double ms(sim::Duration d) { return d.to_seconds() * 1e3; }

// The files of a --trace argument: a file, or a directory's *.json files in
// name order (one per rank for Chakra and Kineto traces).
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (std::filesystem::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(p)) {
        if (entry.path().extension() == ".json") found.push_back(entry.path().string());
      }
      // Natural order, so that rank 10 comes after rank 9.
      std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
      });
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

models::OpGraph load_any_trace(const std::vector<std::string>& paths, const std::string& format,
                               const models::DeviceProfile& device) {
  const std::vector<std::string> files = expand(paths);
  if (files.empty()) throw InputError(Diagnostic{"--trace", "", "no trace files found"});
  std::string kind = format;
  if (kind == "detect") {
    // Sniff the head of the first file: parsing a 100 MB trace just to
    // guess its format would triple the load time.
    std::ifstream in(files.front(), std::ios::binary);
    std::string head(64 * 1024, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (head.find("\"schema_version\"") != std::string::npos) {
      kind = "zionsim";
    } else if (head.find("\"traceEvents\"") != std::string::npos) {
      kind = "kineto";
    } else {
      kind = workloads::looks_like_chakra(files.front()) ? "chakra" : "zionsim";
    }
  }
  if (kind == "chakra") return workloads::import_chakra(files);
  if (kind == "kineto") return workloads::import_kineto(files);
  if (kind == "zionsim") {
    if (files.size() != 1) {
      throw InputError(Diagnostic{"--trace", "", fmt::format("a zionsim trace is one file, got {}", files.size())});
    }
    return workloads::load_trace(files.front(), &device);
  }
  throw InputError(Diagnostic{"--trace-format", "",
                              fmt::format("importing {} traces is not implemented yet", kind)});
}

int run(const topology::ClusterRequest& request, const AlgorithmSources& sources, const Flags& f,
        std::ostream& out) {
  const topology::LoadedCluster cluster = topology::load_cluster(request);
  const models::DeviceProfile device = device_for(cluster, f.gpu, f.profile);
  const models::OpGraph graph = load_any_trace(f.trace, f.trace_format, device);
  const std::string trace_name = f.trace.size() == 1 ? f.trace.front() : fmt::format("{} files", f.trace.size());
  if (graph.num_ranks > cluster.topology.num_gpus()) {
    throw InputError(Diagnostic{trace_name, "/ranks",
                                fmt::format("the trace has {} ranks but the cluster has {} GPUs (use --nodes)",
                                            graph.num_ranks, cluster.topology.num_gpus())});
  }
  std::ofstream timeline_file;
  if (!f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
  sim::Simulator sim;
  const topology::Router router(cluster.topology);
  const std::unique_ptr<models::FlowNetwork> owned_network =
      make_network(sim, cluster.topology, f.fidelity, f.completion_quantum_ns);
  models::FlowNetwork& network = *owned_network;
  if (!f.timeline.empty()) network.record_link_history(true);
  if (f.timeline.empty()) network.recycle_flow_ids(true);  // no flow's record is read after it ends
  models::collectives::CollectiveRegistry registry;
  fill_registry(sources, registry);
  models::NetworkBackend backend(sim, network, router, registry,
                                 backend_options(cluster, device, parse_algorithm_flags(f.algorithms)));
  if (!f.timeline.empty()) backend.record_flows(true);
  // Progress on stderr every 10 s of wall time (slices of simulated time
  // between looks at the clock add no events: the same run).
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_report = wall_start;
  const auto report = [&](const models::ExecutionProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report).count() < 10.0) return;
    last_report = now;
    fmt::print(std::cerr, "run: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)\n",
               p.now.since_start().to_seconds() * 1e3, p.ops_ended, p.ops_total,
               std::chrono::duration<double>(now - wall_start).count());
  };
  const models::ExecutionResult r = models::execute(sim, graph, backend, report, sim::Duration::us(100));
  const double iteration = ms(r.makespan.since_start());

  if (!f.timeline.empty()) {
    models::NetworkActivityOptions activity_options;
    activity_options.max_ranks = kTimelineRanks;
    models::TimelineLimits limits;
    limits.max_ranks = kTimelineRanks;
    models::write_chrome_trace(timeline_file, graph, r,
                               models::collect_network_activity(graph, backend, network, cluster.topology,
                                                                activity_options),
                               limits);
    close_output_file("--timeline", f.timeline, timeline_file);
  }
  const std::vector<std::uint32_t> hot = network.hottest_links(5);
  const auto link_name = [&](std::uint32_t l) {
    const topology::LinkInfo& info = cluster.topology.link(topology::LinkId{l});
    return fmt::format("{}->{}", cluster.topology.node(info.src).name, cluster.topology.node(info.dst).name);
  };
  const int compute_stream = static_cast<int>(
      std::find(graph.stream_names.begin(), graph.stream_names.end(), "compute") - graph.stream_names.begin());

  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["trace"] = trace_name;
    j["cluster"] = cluster.source;
    j["fidelity"] = f.fidelity;
    j["completion_quantum_ns"] = f.completion_quantum_ns;
    j["iteration_time_ms"] = iteration;
    j["fingerprint"] = fmt::format("{:016x}", sim.fingerprint());
    nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      const models::RankSummary& s = r.ranks[k];
      ranks.push_back({{"rank", k},
                       {"compute_ms", ms(s.compute)},
                       {"idle_ms", iteration - ms(s.compute)},
                       {"exposed_communication_ms", ms(s.exposed_communication)},
                       {"overlapped_communication_ms", ms(s.overlapped_communication)}});
    }
    j["ranks"] = std::move(ranks);
    nlohmann::ordered_json path = nlohmann::ordered_json::array();
    for (std::uint32_t i : r.critical_path) {
      path.push_back({{"op", i}, {"rank", graph.ops[i].rank}, {"name", graph.ops[i].name},
                      {"start_ps", r.ops[i].start.count_ps()}, {"end_ps", r.ops[i].end.count_ps()}});
    }
    j["critical_path"] = std::move(path);
    nlohmann::ordered_json links = nlohmann::ordered_json::array();
    for (std::uint32_t l : hot) {
      links.push_back({{"id", l}, {"name", link_name(l)}, {"bytes", network.link(l).bytes_carried.count()},
                       {"busy_ps", network.link(l).busy_time.count_ps()}});
    }
    j["hottest_links"] = std::move(links);
    out << j.dump(1) << '\n';
    return kExitOk;
  }
  if (f.format == "csv") {
    fmt::print(out, "rank,compute_ms,idle_ms,exposed_communication_ms,overlapped_communication_ms\n");
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      const models::RankSummary& s = r.ranks[k];
      fmt::print(out, "{},{:.6f},{:.6f},{:.6f},{:.6f}\n", k, ms(s.compute), iteration - ms(s.compute),
                 ms(s.exposed_communication), ms(s.overlapped_communication));
    }
    return kExitOk;
  }
  fmt::print(out, "trace {} ({} ranks, {} ops) on {}\n\n", trace_name, graph.num_ranks, graph.ops.size(), cluster.source);
  fmt::print(out, "iteration time: {:.6f} ms\n\n", iteration);
  fmt::print(out, "{:>6} {:>12} {:>12} {:>14} {:>14}\n", "rank", "compute ms", "idle ms", "exposed comm", "overlapped");
  for (std::size_t k = 0; k < r.ranks.size(); ++k) {
    const models::RankSummary& s = r.ranks[k];
    (void)compute_stream;
    fmt::print(out, "{:>6} {:>12.3f} {:>12.3f} {:>14.3f} {:>14.3f}\n", k, ms(s.compute), iteration - ms(s.compute),
               ms(s.exposed_communication), ms(s.overlapped_communication));
  }
  fmt::print(out, "\ncritical path ({} ops{}):\n", r.critical_path.size(),
             static_cast<int>(r.critical_path.size()) > f.critical_ops ? fmt::format(", last {}", f.critical_ops) : "");
  const std::size_t first =
      r.critical_path.size() > static_cast<std::size_t>(f.critical_ops) ? r.critical_path.size() - f.critical_ops : 0;
  for (std::size_t k = first; k < r.critical_path.size(); ++k) {
    const std::uint32_t i = r.critical_path[k];
    const models::Op& op = graph.ops[i];
    fmt::print(out, "  op {:>6}  rank {:>4}  {:<12} {:<28} {:>14} -> {:>14}\n", i, op.rank,
               graph.stream_names[static_cast<std::size_t>(op.stream)],
               op.name.empty() ? std::string(models::to_string(op.kind)) : op.name,
               r.ops[i].start.since_start().to_string(), r.ops[i].end.since_start().to_string());
  }
  fmt::print(out, "\nhottest links:\n");
  for (std::uint32_t l : hot) {
    fmt::print(out, "  {:<40} {:>14}  busy {}\n", link_name(l), network.link(l).bytes_carried.to_string(),
               network.link(l).busy_time.to_string());
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand("run", "Simulate a trace of a job (docs/traces.md) on a cluster");
  auto request = add_cluster_options(*cmd);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--trace", f->trace,
                  "The trace: a zionsim trace file, or Chakra / Kineto files (one per rank), or a directory of them")
      ->required()
      ->take_all()
      ->option_text("FILE|DIR...");
  cmd->add_option("--trace-format", f->trace_format, "detect, zionsim, chakra or kineto")
      ->check(CLI::IsMember({"detect", "zionsim", "kineto", "chakra"}))
      ->capture_default_str();
  cmd->add_option("--gpu", f->gpu, "GPU profile that prices kernels in the trace");
  cmd->add_option("--profile", f->profile, "A GPU profile file")->option_text("FILE");
  add_network_flags(*cmd, f->fidelity, f->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms, "Collective algorithm per kind: KIND=NAME")->take_all();
  cmd->add_option("--timeline", f->timeline, "Write a Chrome/Perfetto trace of the run")->option_text("FILE");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->parse_complete_callback([request, sources, f, action = context.action] {
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
