// `zionsim topology`: build a cluster and describe it (summary, json, dot).

#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "topology/cluster_file.h"
#include "topology/router.h"
#include "topology/summary.h"
#include "topology/topology.h"

namespace zx::tools {
namespace {

std::string gbyte(const sim::BytesPerSecond& rate) {
  return fmt::format("{:.2f} GB/s", static_cast<double>(rate.count()) / 1e9);
}

void print_summary(std::ostream& out, const topology::LoadedCluster& cluster) {
  const topology::Topology& t = cluster.topology;
  const topology::Router router(t);
  const topology::TopologySummary s = topology::summarize(t, router);
  fmt::print(out, "cluster: {}\n", cluster.source);
  if (cluster.spec) {
    const topology::ClusterSpec& spec = *cluster.spec;
    fmt::print(out, "preset: {}, {} nodes x {} GPUs, nodes per rack {}, oversubscription {:g}:1{}\n",
               spec.preset, spec.nodes, spec.gpus_per_node, spec.nodes_per_rack,
               spec.oversubscription, spec.rail_aligned ? ", rail-aligned" : "");
  }
  fmt::print(out, "GPUs: {}\n\n", s.gpus);
  fmt::print(out, "devices:\n");
  for (const auto& [kind, count] : s.nodes_by_kind) {
    fmt::print(out, "  {:<16} {:>8}\n", topology::to_string(kind), count);
  }
  fmt::print(out, "links (directed):\n");
  for (const auto& [kind, count] : s.links_by_kind) {
    fmt::print(out, "  {:<16} {:>8}\n", topology::to_string(kind), count);
  }
  fmt::print(out, "\n");
  fmt::print(out, "per-GPU scale-out injection: {}\n",
             s.gpu_injection_bandwidth ? gbyte(*s.gpu_injection_bandwidth) : "none (single server)");
  fmt::print(out, "backend bisection bandwidth: {}\n",
             s.backend_bisection ? gbyte(*s.backend_bisection) : "none (no backend network)");
  fmt::print(out, "longest GPU-to-GPU route: {} hops, {} (rank {} -> rank {})\n",
             s.longest_route_hops, s.longest_route_latency.to_string(), s.longest_route_src_rank,
             s.longest_route_dst_rank);
  fmt::print(out, "host memory: {:g} GB per server\n", static_cast<double>(cluster.host_memory.count()) / 1e9);
  if (cluster.spec && cluster.spec->host_attach == topology::HostAttach::kNvlinkC2c) {
    const topology::ClusterSpec& spec = *cluster.spec;
    fmt::print(out, "hosts: {} GPUs per CPU on NVLink-C2C ({} each), the CPUs in hosts of {}\n",
               spec.gpus_per_node / spec.cpus_per_node, gbyte(spec.c2c_bandwidth),
               spec.cpus_per_host > 0 ? spec.cpus_per_host : spec.cpus_per_node);
  }
  if (cluster.spec && cluster.spec->backend_network && cluster.spec->nic_attach == topology::NicAttach::kGpuSwitch) {
    const topology::ClusterSpec& spec = *cluster.spec;
    fmt::print(out, "NICs: on the GPUs' PCIe switches ({} GPU{} and NIC{} each, {} x{}), up to the host on {} x{}\n",
               spec.gpus_per_pcie_switch, spec.gpus_per_pcie_switch == 1 ? "" : "s",
               spec.gpus_per_pcie_switch == 1 ? "" : "s", topology::to_string(spec.device_pcie),
               spec.device_pcie_lanes, topology::to_string(spec.host_pcie), spec.host_pcie_lanes);
  }
  if (cluster.nvlink_sharp_efficiency > 0) {
    fmt::print(out, "NVLink SHARP: the switch reduces in the network at {:.3f} of the link (--algo nvls)\n",
               cluster.nvlink_sharp_efficiency);
  }
  const topology::CommunicationLatencies& c = cluster.communication;
  fmt::print(out, "communication library: launch {}, per transfer {} inside a server, {} between servers{}\n",
             c.launch.to_string(), c.transfer.to_string(), c.network_transfer.to_string(),
             c.peer_gap > sim::Duration::zero() ? fmt::format(", {} between a rank's peers", c.peer_gap.to_string())
                                                : "");
}

}  // namespace

void add_topology_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "topology", "Build a cluster (a preset or a file) and describe it: summary, json or dot");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinksAndGpus);
  auto format = std::make_shared<std::string>("summary");
  cmd->add_option("--format", *format,
                  "summary: counts, injection and bisection bandwidth, longest route; json: every "
                  "node and link (a valid cluster file); dot: GraphViz")
      ->check(CLI::IsMember({"summary", "json", "dot"}))
      ->capture_default_str();
  cmd->parse_complete_callback([request, format, action = context.action] {
    *action = [request, format](std::ostream& out) {
      const topology::LoadedCluster cluster = topology::load_cluster(*request);
      if (*format == "json") {
        topology::write_cluster_json(out, cluster.topology, cluster.source, cluster.degradations, cluster.gpu,
                                     cluster.communication, cluster.host_memory, cluster.nvlink_sharp_efficiency);
      } else if (*format == "dot") {
        topology::write_graphviz(out, cluster.topology);
      } else {
        print_summary(out, cluster);
      }
      return kExitOk;
    };
  });
}

}  // namespace zx::tools
