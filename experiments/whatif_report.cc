// File: experiments/whatif_report.cc
//
// A what-if sweep's results as a table, CSV and JSON (see whatif_report.h).

#include "experiments/whatif_report.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "experiments/report_format.h"
#include "experiments/result_schema.h"
#include "experiments/scenario.h"

namespace zx::experiments {
namespace {

// Throughput of each point against the first variant's at the same size;
// 0 where either does not fit (the outputs leave it out where the first
// does not).
double vs_first(const std::vector<std::vector<WhatIfPoint>>& points, std::size_t v, std::size_t i) {
  const WhatIfPoint& p = points[v][i];
  const WhatIfPoint& first = points.front()[i];
  return p.fits && first.fits ? p.samples_per_s / first.samples_per_s : 0.0;
}

}  // namespace

void write_whatif_table(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
                 const std::vector<WhatIfVariant>& variants, const std::vector<std::vector<WhatIfPoint>>& points) {
  // What was simulated; a knob --vary changes is named in each row instead.
  std::set<std::string> varied_keys;
  for (const auto& [key, value] : variants.front().settings) varied_keys.insert(key);
  std::set<std::string> gpus;
  for (const auto& variant_points : points) {
    for (const WhatIfPoint& p : variant_points) gpus.insert(p.gpu);
  }
  const std::string gpu = gpus.size() == 1 ? *gpus.begin() : "the GPUs of each variant";
  fmt::print(out, "zionsim whatif: model {} on {} with {}, fidelity {}{}\n\n",
             varied_keys.contains("model") ? "of each variant" : o.model,
             varied_keys.contains("cluster") ? "the cluster of each variant" : o.cluster.cluster, gpu,
             varied_keys.contains("fidelity") ? "of each variant" : o.fidelity,
             degraded.empty() ? "" : fmt::format(", degraded: {}", fmt::join(degraded, ", ")));
  // With --vary, one column per varied knob first, and throughput against
  // the first variant at the same size.
  const bool varied = !variants.front().settings.empty();
  std::vector<std::size_t> width;
  for (std::size_t k = 0; k < variants.front().settings.size(); ++k) {
    std::size_t w = variants.front().settings[k].first.size();
    for (const WhatIfVariant& v : variants) w = std::max(w, v.settings[k].second.size());
    width.push_back(w);
  }
  std::string header;
  for (std::size_t k = 0; k < width.size(); ++k) {
    header += fmt::format("{:>{}} ", variants.front().settings[k].first, width[k]);
  }
  if (varied) header += "| ";
  fmt::print(out, "{}{:>5} {:>5} {:>8} {:>10} {:>12} {:>7}{} | {:>8} {:>8} {:>8} {:>8} {:>8} | {}\n", header, "nodes",
             "GPUs", "batch", "iter (ms)", "samples/s", "scaling", varied ? " vs first" : "", "compute", "exp a2a",
             "exp AR", "other", "overlap", "bottleneck");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    std::string prefix;
    for (std::size_t k = 0; k < width.size(); ++k) {
      prefix += fmt::format("{:>{}} ", variants[v].settings[k].second, width[k]);
    }
    if (varied) prefix += "| ";
    for (std::size_t i = 0; i < points[v].size(); ++i) {
      const WhatIfPoint& p = points[v][i];
      if (!p.fits) {
        fmt::print(out, "{}{:>5} {:>5} {:>8}   does not fit: {}\n", prefix, p.nodes, p.gpus, p.global_batch, p.reason);
        continue;
      }
      const std::string relative =
          !varied ? "" : (points.front()[i].fits ? fmt::format(" {:>8.3f}", vs_first(points, v, i)) : fmt::format(" {:>8}", "-"));
      fmt::print(out,
                 "{}{:>5} {:>5} {:>8} {:>10.3f} {:>12.0f} {:>6.0f}%{} | {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} | "
                 "{}\n",
                 prefix, p.nodes, p.gpus, p.global_batch, p.iteration_time_ms, p.samples_per_s,
                 100 * p.scaling_efficiency, relative, p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms,
                 p.breakdown.exposed_all_reduce_ms, p.breakdown.other_ms, p.breakdown.overlapped_communication_ms,
                 p.bottleneck);
    }
  }
  fmt::print(out, "\nbreakdown in ms per iteration, averaged over GPUs: compute (any kernel running; kernels beside\n"
                  "communication run on the SMs NCCL leaves them), exposed communication (running while no kernel\n"
                  "runs), other (waiting), overlapped communication.\n");
  // Scaling is per GPU against the smallest size that fits; when that size
  // keeps tables in host memory the larger ones can beat linear, and say why.
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const auto base = std::find_if(points[v].begin(), points[v].end(), [](const WhatIfPoint& p) { return p.fits; });
    if (base == points[v].end() || base->host_memory_tables == 0) continue;
    const bool beats_linear = std::any_of(points[v].begin(), points[v].end(),
                                          [](const WhatIfPoint& p) { return p.fits && p.scaling_efficiency > 1.0; });
    if (!beats_linear) continue;
    fmt::print(out, "scaling{} is against {} node{}, where {} table{} live in host memory behind an HBM cache; larger "
                    "sizes that keep more in HBM scale past 100%.\n",
               varied ? fmt::format(" ({})", variants[v].label()) : "", base->nodes, base->nodes == 1 ? "" : "s",
               base->host_memory_tables, base->host_memory_tables == 1 ? "" : "s");
  }
  if (varied && variants.front().settings.front().first == "sensitivity") {
    fmt::print(out, "sensitivity: each row makes one resource better, the rest as the base; vs first: the speed-up "
                    "over the base at the same size.\n");
  } else if (varied) {
    fmt::print(out, "scaling is within each variant; vs first: samples/s against the first variant ({}) at the same "
                    "size.\n",
               variants.front().label());
  }
  bool tuned = false;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (const WhatIfPoint& p : points[v]) {
      if (p.auto_choices.empty()) continue;
      if (!tuned) {
        fmt::print(out, "auto ran (per distinct call, the fastest candidate alone on an idle network; --format json "
                        "has each one's time):\n");
      }
      tuned = true;
      fmt::print(out, "  {}{} node{}: {}\n", variants.size() > 1 ? variants[v].label() + ", " : "", p.nodes,
                 p.nodes == 1 ? "" : "s",
                 auto_choices_summary(p.auto_choices));
    }
  }
  bool priced = false;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (const WhatIfPoint& p : points[v]) {
      if (p.nccl_choices.empty()) continue;
      if (!priced) fmt::print(out, "{}:\n", kNcclChoicesTitle);
      priced = true;
      fmt::print(out, "  {}{} node{}: {}\n", variants.size() > 1 ? variants[v].label() + ", " : "", p.nodes,
                 p.nodes == 1 ? "" : "s", auto_choices_summary(p.nccl_choices));
    }
  }
  bool searched = false;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (const WhatIfPoint& p : points[v]) {
      if (p.search_simulations == 0) continue;
      if (!searched) fmt::print(out, "sharding search (zionsim plan --search shows the moves):\n");
      searched = true;
      fmt::print(out, "  {}{} nodes: {} simulations, {} move{}, {:.3f} ms with the planner's plan -> {:.3f} ms\n",
                 variants.size() > 1 ? variants[v].label() + ", " : "", p.nodes, p.search_simulations, p.search_moves,
                 p.search_moves == 1 ? "" : "s", p.search_start_iteration_time_ms, p.iteration_time_ms);
    }
  }
}

void write_whatif_csv(std::ostream& out, const std::vector<WhatIfVariant>& variants,
               const std::vector<std::vector<WhatIfPoint>>& points) {
  const bool varied = !variants.front().settings.empty();
  for (const auto& [key, value] : variants.front().settings) fmt::print(out, "{},", key);
  fmt::print(out, "nodes,gpus,global_batch,fits,iteration_time_ms,samples_per_s,scaling_efficiency,{}compute_ms,"
                  "exposed_all_to_all_ms,exposed_all_reduce_ms,other_ms,overlapped_communication_ms,"
                  "compute_slowed_by_communication_ms,bottleneck\n",
             varied ? "throughput_vs_first_variant," : "");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t i = 0; i < points[v].size(); ++i) {
      const WhatIfPoint& p = points[v][i];
      for (const auto& [key, value] : variants[v].settings) fmt::print(out, "{},", csv_quoted(value));
      if (!p.fits) {
        // A size that does not fit has no times: empty fields, not zeros
        // that a script would average.
        fmt::print(out, "{},{},{},{},,,,{},,,,,,,{}\n", p.nodes, p.gpus, p.global_batch, p.fits, varied ? "," : "",
                   csv_quoted(p.reason));
        continue;
      }
      // Empty where the first variant does not fit: nothing to compare with.
      const std::string relative =
          !varied ? "" : (points.front()[i].fits ? fmt::format("{:.4f},", vs_first(points, v, i)) : ",");
      fmt::print(out, "{},{},{},{},{:.6f},{:.3f},{:.4f},{}{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{}\n", p.nodes,
                 p.gpus, p.global_batch, p.fits, p.iteration_time_ms, p.samples_per_s, p.scaling_efficiency, relative,
                 p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms, p.breakdown.exposed_all_reduce_ms,
                 p.breakdown.other_ms, p.breakdown.overlapped_communication_ms,
                 p.breakdown.compute_slowed_by_communication_ms, csv_quoted(p.fits ? p.bottleneck : p.reason));
    }
  }
}

nlohmann::ordered_json whatif_settings_json(const WhatIfOptions& o) {
  nlohmann::ordered_json s;
  s["gpu"] = o.gpu.empty() ? "the cluster's" : o.gpu;
  if (!o.profile.empty()) s["profile"] = o.profile;
  s["set"] = o.cluster.overrides;
  if (o.batch_per_gpu) s["batch_per_gpu"] = *o.batch_per_gpu;
  if (o.global_batch) s["global_batch"] = *o.global_batch;
  s["sharding"] = o.sharding;
  s["a2a_forward_dtype"] = o.a2a_forward_dtype.empty() ? "the embeddings'" : o.a2a_forward_dtype;
  s["a2a_backward_dtype"] = o.a2a_backward_dtype.empty() ? "as forward" : o.a2a_backward_dtype;
  s["all_reduce_dtype"] = o.all_reduce_dtype;
  s["algorithms"] = o.algorithms;
  s["algorithm_options"] = nlohmann::ordered_json::object();
  for (const auto& [name, text] : o.algorithm_options) s["algorithm_options"][name] = nlohmann::json::parse(text);
  s["plugins"] = o.plugins;
  s["schedules"] = o.schedules;
  s["fused_embeddings"] = o.fused_embeddings;
  s["pipeline_input"] = o.pipeline_input;
  s["prefetch_cache"] = o.prefetch_cache;
  if (o.index_zipf_alpha) {
    s["index_zipf_alpha"] = *o.index_zipf_alpha;
  } else {
    s["cache_hit_rate"] = o.cache_hit_rate;
  }
  s["cache_fraction"] = o.cache_fraction;
  s["hbm_reserve"] = o.hbm_reserve;
  s["dense_optimizer"] = o.dense_optimizer == models::DenseOptimizer::kSgd       ? "sgd"
                         : o.dense_optimizer == models::DenseOptimizer::kAdagrad ? "adagrad"
                                                                                   : "adam";
  s["index_dtype"] = o.index_bytes == 4 ? "int32" : "int64";
  if (o.all_reduce_bucket_bytes != Scenario{}.all_reduce_bucket_bytes) {
    s["all_reduce_bucket_mib"] = static_cast<double>(o.all_reduce_bucket_bytes) / 1048576.0;
  }
  return s;
}

void write_whatif_json(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
                const std::vector<WhatIfVariant>& variants,
                const std::vector<std::vector<WhatIfPoint>>& points) {
  const bool varied = !variants.front().settings.empty();
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["model"] = o.model;
  j["cluster"] = o.cluster.cluster;
  j["fidelity"] = o.fidelity;
  j["completion_quantum_ns"] = o.completion_quantum_ns;
  if (!degraded.empty()) j["degrade"] = degraded;
  j["settings"] = whatif_settings_json(o);
  if (varied) {
    nlohmann::ordered_json vary = nlohmann::ordered_json::object();
    for (std::size_t k = 0; k < variants.front().settings.size(); ++k) {
      nlohmann::ordered_json values = nlohmann::ordered_json::array();
      for (const WhatIfVariant& v : variants) {
        const nlohmann::ordered_json value = knob_value_json(v.settings[k].second);
        if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
      }
      vary[variants.front().settings[k].first] = std::move(values);
    }
    j["vary"] = std::move(vary);
  }
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t i = 0; i < points[v].size(); ++i) {
      const WhatIfPoint& p = points[v][i];
      nlohmann::ordered_json r;
      if (varied) r["variant"] = settings_json(variants[v].settings);
      r["nodes"] = p.nodes;
      r["gpus"] = p.gpus;
      r["gpu"] = p.gpu;
      r["communication"] = {{"launch_latency_ns", p.communication.launch.count_ps() / 1e3},
                            {"transfer_latency_ns", p.communication.transfer.count_ps() / 1e3},
                            {"network_transfer_latency_ns", p.communication.network_transfer.count_ps() / 1e3},
                            {"peer_gap_ns", p.communication.peer_gap.count_ps() / 1e3}};
      r["global_batch"] = p.global_batch;
      r["fits"] = p.fits;
      if (!p.fits) {
        r["reason"] = p.reason;
      } else {
        r["iteration_time_ms"] = p.iteration_time_ms;
        r["samples_per_s"] = p.samples_per_s;
        r["scaling_efficiency"] = p.scaling_efficiency;
        if (varied && points.front()[i].fits) r["throughput_vs_first_variant"] = vs_first(points, v, i);
        r["breakdown_ms"] = {{"compute", p.breakdown.compute_ms},
                             {"exposed_all_to_all", p.breakdown.exposed_all_to_all_ms},
                             {"exposed_all_reduce", p.breakdown.exposed_all_reduce_ms},
                             {"other", p.breakdown.other_ms},
                             {"overlapped_communication", p.breakdown.overlapped_communication_ms},
                             {"compute_slowed_by_communication", p.breakdown.compute_slowed_by_communication_ms}};
        r["bottleneck"] = p.bottleneck;
        r["busiest_gpu"] = {{"rank", p.busiest_gpu_rank}, {"compute_ms", p.busiest_gpu_compute_ms}};
        r["fingerprint"] = fmt::format("{:016x}", p.fingerprint);
        r["simulation"] = {{"events", p.events},
                           {"flows", p.flows},
                           {"resolves", p.resolves},
                           {"resolved_flows", p.resolved_flows}};
        r["sharding"] = {{"load_imbalance", p.load_imbalance},
                         {"balance_split_tables", p.balance_split_tables},
                         {"host_memory_tables", p.host_memory_tables},
                         {"max_hbm_gbyte", p.max_hbm_gbyte},
                         {"max_iteration_hbm_gbyte", p.max_iteration_hbm_gbyte},
                         {"hbm_reserve_fraction", p.hbm_reserve_fraction},
                         {"cache_hit_rate", p.cache_hit_rate}};
        if (p.search_simulations > 0) {
          r["sharding"]["search"] = {{"simulations", p.search_simulations},
                                     {"start_iteration_time_ms", p.search_start_iteration_time_ms},
                                     {"moves", p.search_moves}};
        }
      }
      if (!p.auto_choices.empty()) r["auto_choices"] = auto_choices_json(p.auto_choices);
      if (!p.nccl_choices.empty()) r["nccl_choices"] = auto_choices_json(p.nccl_choices);
      r["wall_seconds"] = p.wall_seconds;
      results.push_back(std::move(r));
    }
  }
  j["results"] = std::move(results);
  out << j.dump(2) << '\n';
}

nlohmann::ordered_json whatif_scenarios_json(const std::vector<WhatIfVariant>& variants) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const WhatIfVariant& v : variants) {
    const Scenario& s = v.options;
    list.push_back({{"variant", settings_json(v.settings)},
                    {"hash", scenario_hash(s)},
                    {"scenario", scenario_to_json(s)}});
  }
  return {{"schema_version", 1}, {"scenarios", std::move(list)}};
}

}  // namespace zx::experiments
