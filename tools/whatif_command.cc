// `zionsim whatif`: how a DLRM trains on a cluster of each given size, and why.

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/dlrm/sharding.h"
#include "models/execution/timeline.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "tools/svg_plot.h"
#include "tools/whatif.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

struct Flags {
  std::string nodes = "1,2,4,8,16";
  std::int64_t batch_per_gpu = 0;
  std::int64_t global_batch = 0;
  std::string a2a_precision;
  std::string a2a_backward_precision;
  std::string all_reduce_precision = "fp32";
  double nic_gbit = 0;
  double oversubscription = 0;
  std::vector<std::string> algorithms;
  bool unfused = false;
  bool no_pipeline = false;
  std::string format = "table";
  std::string timeline;
  std::string plot;
  std::string emit_trace;
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
  }
  if (nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  return nodes;
}

void print_table(std::ostream& out, const WhatIfOptions& o, const std::vector<WhatIfPoint>& points) {
  fmt::print(out, "zionsim whatif: model {} on {}, fidelity {}\n\n", o.model, o.cluster.cluster, o.fidelity);
  fmt::print(out, "{:>5} {:>5} {:>8} {:>10} {:>12} {:>7} | {:>8} {:>8} {:>8} {:>8} {:>8} | {}\n", "nodes", "GPUs",
             "batch", "iter (ms)", "samples/s", "scaling", "compute", "exp a2a", "exp AR", "other", "overlap",
             "bottleneck");
  for (const WhatIfPoint& p : points) {
    if (!p.fits) {
      fmt::print(out, "{:>5} {:>5} {:>8}   does not fit: {}\n", p.nodes, p.gpus, p.global_batch, p.reason);
      continue;
    }
    fmt::print(out, "{:>5} {:>5} {:>8} {:>10.3f} {:>12.0f} {:>6.0f}% | {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} | {}\n",
               p.nodes, p.gpus, p.global_batch, p.iteration_time_ms, p.samples_per_s, 100 * p.scaling_efficiency,
               p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms, p.breakdown.exposed_all_reduce_ms,
               p.breakdown.other_ms, p.breakdown.overlapped_communication_ms, p.bottleneck);
  }
  fmt::print(out, "\nbreakdown in ms per iteration, averaged over GPUs: compute (any kernel running), exposed\n"
                  "communication (running while no kernel runs), other (waiting), overlapped communication.\n");
}

int run(const WhatIfOptions& base, const Flags& f, std::ostream& out) {
  WhatIfOptions o = base;
  o.nodes = parse_nodes(f.nodes);
  if (f.batch_per_gpu > 0) o.batch_per_gpu = f.batch_per_gpu;
  if (f.global_batch > 0) o.global_batch = f.global_batch;
  o.a2a_forward_dtype = f.a2a_precision;
  o.a2a_backward_dtype = f.a2a_backward_precision;
  o.all_reduce_dtype = f.all_reduce_precision;
  if (f.nic_gbit > 0) o.cluster.overrides.push_back(fmt::format("nic.bandwidth_gbit_per_s={}", f.nic_gbit));
  if (f.oversubscription > 0) {
    o.cluster.overrides.push_back(fmt::format("fabric.oversubscription={}", f.oversubscription));
  }
  for (const auto& [kind, name] : parse_algorithm_flags(f.algorithms)) o.algorithms[kind] = name;
  o.fused_embeddings = !f.unfused;
  o.pipeline_input = !f.no_pipeline;

  // Output files first: an unwritable path must not cost the simulation.
  std::ofstream timeline_file, trace_file, plot_file;
  if (!f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
  if (!f.emit_trace.empty()) trace_file = open_output_file("--emit-trace", f.emit_trace);
  if (!f.plot.empty()) plot_file = open_output_file("--plot", f.plot);
  std::optional<int> keep;
  if (!f.timeline.empty() || !f.emit_trace.empty()) keep = *std::max_element(o.nodes.begin(), o.nodes.end());
  const auto start = std::chrono::steady_clock::now();
  const auto finished = [&](const WhatIfPoint& p, int done, int total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > 2.0 || total > 4) {
      fmt::print(std::cerr, "whatif: {} nodes done ({} of {}, {:.1f} s)\n", p.nodes, done, total, elapsed);
    }
  };
  const auto running = [](int nodes, const models::ExecutionProgress& p, double seconds) {
    fmt::print(std::cerr, "whatif: {} nodes running: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)\n", nodes,
               p.now.since_start().to_seconds() * 1e3, p.ops_ended, p.ops_total, seconds);
  };
  const std::vector<WhatIfPoint> points = run_whatif(o, keep, finished, running);

  if (f.format == "json" || f.format == "csv") {
    if (f.format == "csv") {
      fmt::print(out, "nodes,gpus,global_batch,fits,iteration_time_ms,samples_per_s,scaling_efficiency,compute_ms,"
                      "exposed_all_to_all_ms,exposed_all_reduce_ms,other_ms,overlapped_communication_ms,bottleneck\n");
      for (const WhatIfPoint& p : points) {
        fmt::print(out, "{},{},{},{},{:.6f},{:.3f},{:.4f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},\"{}\"\n", p.nodes, p.gpus,
                   p.global_batch, p.fits, p.iteration_time_ms, p.samples_per_s, p.scaling_efficiency,
                   p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms, p.breakdown.exposed_all_reduce_ms,
                   p.breakdown.other_ms, p.breakdown.overlapped_communication_ms, p.fits ? p.bottleneck : p.reason);
      }
    } else {
      nlohmann::ordered_json j;
      j["schema_version"] = 1;
      j["model"] = o.model;
      j["cluster"] = o.cluster.cluster;
      j["fidelity"] = o.fidelity;
      j["completion_quantum_ns"] = o.completion_quantum_ns;
      nlohmann::ordered_json results = nlohmann::ordered_json::array();
      for (const WhatIfPoint& p : points) {
        nlohmann::ordered_json r;
        r["nodes"] = p.nodes;
        r["gpus"] = p.gpus;
        r["global_batch"] = p.global_batch;
        r["fits"] = p.fits;
        if (!p.fits) {
          r["reason"] = p.reason;
        } else {
          r["iteration_time_ms"] = p.iteration_time_ms;
          r["samples_per_s"] = p.samples_per_s;
          r["scaling_efficiency"] = p.scaling_efficiency;
          r["breakdown_ms"] = {{"compute", p.breakdown.compute_ms},
                               {"exposed_all_to_all", p.breakdown.exposed_all_to_all_ms},
                               {"exposed_all_reduce", p.breakdown.exposed_all_reduce_ms},
                               {"other", p.breakdown.other_ms},
                               {"overlapped_communication", p.breakdown.overlapped_communication_ms}};
          r["bottleneck"] = p.bottleneck;
          r["fingerprint"] = fmt::format("{:016x}", p.fingerprint);
        }
        r["sharding"] = {{"load_imbalance", p.load_imbalance},
                         {"host_memory_tables", p.host_memory_tables},
                         {"max_hbm_gbyte", p.max_hbm_gbyte}};
        r["wall_seconds"] = p.wall_seconds;
        results.push_back(std::move(r));
      }
      j["results"] = std::move(results);
      out << j.dump(2) << '\n';
    }
  } else {
    print_table(out, o, points);
  }

  if (!f.timeline.empty()) {
    const WhatIfPoint* largest = nullptr;
    for (const WhatIfPoint& p : points) {
      if (p.graph && p.execution && p.network_activity) largest = &p;
    }
    if (largest == nullptr) {
      throw InputError(Diagnostic{"--timeline", "", "the largest cluster size does not fit; no timeline to write"});
    }
    models::TimelineLimits limits;
    limits.max_ranks = kTimelineRanks;
    models::write_chrome_trace(timeline_file, *largest->graph, *largest->execution, *largest->network_activity, limits);
    close_output_file("--timeline", f.timeline, timeline_file);
  }
  if (!f.emit_trace.empty()) {
    const WhatIfPoint* largest = nullptr;
    for (const WhatIfPoint& p : points) {
      if (p.graph) largest = &p;
    }
    if (largest == nullptr) {
      throw InputError(Diagnostic{"--emit-trace", "", "the largest cluster size does not fit; no trace to write"});
    }
    workloads::write_trace(trace_file, *largest->graph);
    close_output_file("--emit-trace", f.emit_trace, trace_file);
  }
  if (!f.plot.empty()) {
    write_whatif_svg(plot_file, points, fmt::format("{} on {}", o.model, o.cluster.cluster));
    close_output_file("--plot", f.plot, plot_file);
  }
  return kExitOk;
}

}  // namespace

void add_whatif_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "whatif", "Simulate DLRM training over cluster sizes: iteration time, throughput, scaling, breakdown");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/false);
  auto options = std::make_shared<WhatIfOptions>();
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nodes", f->nodes, "Cluster sizes in servers, comma-separated")->capture_default_str()->option_text("N,N,...");
  cmd->add_option("--model", options->model, "A zoo model (zionsim list models) or a .json model file")
      ->capture_default_str();
  cmd->add_option("--batch-per-gpu", f->batch_per_gpu, "Samples per GPU per iteration (default 512)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 24));
  cmd->add_option("--global-batch", f->global_batch, "Samples per iteration over all GPUs (instead of --batch-per-gpu)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--sharding", options->sharding,
                  "Embedding sharding: a scheme (auto, table_wise, row_wise, column_wise, table_row_wise, "
                  "data_parallel) or a sharding file (docs/sharding_files.md)")
      ->check([](const std::string& v) -> std::string {
        const auto names = models::sharding_scheme_names();
        if (v.find('/') != std::string::npos || v.ends_with(".json")) return "";
        if (std::find(names.begin(), names.end(), v) != names.end()) return "";
        return fmt::format("unknown sharding scheme '{}'; valid: {}, or a .json sharding file", v,
                           fmt::join(names, ", "));
      })
      ->option_text("SCHEME|FILE")
      ->capture_default_str();
  cmd->add_option("--a2a-precision", f->a2a_precision,
                  "Element type of the pooled-embedding all-to-all (quantized communication)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--a2a-backward-precision", f->a2a_backward_precision,
                  "Element type of the gradient all-to-all (default: as forward)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--all-reduce-precision", f->all_reduce_precision, "Element type of the dense gradient all-reduce")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--gpu", options->gpu, "GPU profile (zionsim list gpus); default: the cluster's");
  cmd->add_option("--profile", options->profile, "A GPU profile file (a calibration result)")->option_text("FILE");
  cmd->add_option("--nic-gbit", f->nic_gbit, "What if the NICs were this fast (Gb/s)")->check(CLI::PositiveNumber);
  cmd->add_option("--oversubscription", f->oversubscription, "What if the racks were oversubscribed N:1")
      ->check(CLI::Range(1.0, 1024.0));
  add_network_flags(*cmd, options->fidelity, options->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms,
                  "Collective algorithm per kind, e.g. --algo all_reduce=nccl --algo all_to_all=hierarchical")
      ->option_text("KIND=NAME")
      ->take_all();
  cmd->add_flag("--unfused", f->unfused, "Unfused embedding kernels (one per table, separate optimizer)");
  cmd->add_flag("--no-pipeline", f->no_pipeline, "Do not overlap the next batch's input distribution");
  cmd->add_option("--threads", options->threads, "Sweep points simulated in parallel (0: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--timeline", f->timeline, "Write the largest size's iteration as a Chrome/Perfetto trace")
      ->option_text("FILE");
  cmd->add_option("--plot", f->plot, "Write the scaling curve and breakdown as SVG")->option_text("FILE");
  cmd->add_option("--emit-trace", f->emit_trace,
                  "Write the largest size's iteration as a zionsim trace (zionsim run --trace reads it)")
      ->option_text("FILE");
  cmd->parse_complete_callback([request, sources, options, f, action = context.action] {
    *action = [request, sources, options, f](std::ostream& out) {
      WhatIfOptions o = *options;
      o.cluster = *request;
      o.plugins = sources->plugins;
      o.schedules = sources->schedules;
      return run(o, *f, out);
    };
  });
}

}  // namespace zx::tools
