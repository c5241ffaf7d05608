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
// nothing where either does not fit.
Cell vs_first(const std::vector<std::vector<WhatIfPoint>>& points, std::size_t v, std::size_t i) {
  const WhatIfPoint& p = points[v][i];
  const WhatIfPoint& first = points.front()[i];
  return p.fits && first.fits ? Cell{p.samples_per_s / first.samples_per_s} : Cell{};
}

// Whether the variants set knobs (--vary, --scenario, --sensitivity): then
// their settings lead each row, and "vs first" follows the scaling.
bool is_varied(const std::vector<WhatIfVariant>& variants) { return !variants.front().settings.empty(); }

// A point's columns in the table, the CSV and the JSON (each result's
// object): the varied knobs (in JSON, the variant's settings), the size, its
// times and breakdown, and what bounds it; the JSON nests the breakdown and
// adds what the simulation ran and the plan it sharded with; "vs first"
// comes with varied knobs. A size that does not fit has its reason instead: the
// table's line ends with it, the CSV leaves the times empty and has it as
// the bottleneck, the JSON leaves them out.
Schema whatif_schema(const std::vector<WhatIfVariant>& variants) {
  constexpr unsigned kTableAndCsv = kTable | kCsv;
  constexpr unsigned kTableAndJson = kTable | kJson;
  constexpr Absent kOmitted = Absent::kOmitted;
  const bool varied = is_varied(variants);
  std::vector<Settings> settings;
  for (const WhatIfVariant& v : variants) settings.push_back(v.settings);
  Schema s{knob_columns(settings)};
  if (varied) s.columns.push_back({.name = "variant", .format = Format::kJson, .outputs = kJson});
  s.columns.insert(
      s.columns.end(),
      {{.name = "nodes", .format = Format::kInteger, .width = 5, .table_before = varied ? "| " : ""},
       {.name = "gpus", .header = "GPUs", .format = Format::kInteger, .width = 5},
       {.name = "gpu", .format = Format::kText, .outputs = kJson},
       {.name = "communication", .format = Format::kJson, .outputs = kJson},
       {.name = "global_batch", .header = "batch", .format = Format::kInteger, .width = 8},
       {.name = "fits", .format = Format::kJson, .outputs = kCsv | kJson},
       {.name = "reason", .format = Format::kText, .table_before = "  does not fit: ", .table_rest = true,
        .outputs = kTableAndJson, .absent = kOmitted},
       {.name = "iteration_time_ms", .header = "iter (ms)", .format = Format::kFixed, .decimals = 6,
        .table_decimals = 3, .width = 10, .absent = kOmitted},
       {.name = "samples_per_s", .header = "samples/s", .format = Format::kFixed, .decimals = 3,
        .table_decimals = 0, .width = 12, .absent = kOmitted},
       {.name = "scaling_efficiency", .header = "scaling", .format = Format::kPercent, .decimals = 4,
        .table_decimals = 0, .width = 7, .absent = kOmitted}});
  if (varied) {
    s.columns.push_back({.name = "throughput_vs_first_variant", .header = "vs first", .format = Format::kFixed,
                         .decimals = 4, .table_decimals = 3, .width = 8, .table_absent = "-", .absent = kOmitted});
  }
  s.columns.insert(
      s.columns.end(),
      {{.name = "compute_ms", .header = "compute", .format = Format::kFixed, .decimals = 6, .table_decimals = 3,
        .width = 8, .table_before = "| ", .outputs = kTableAndCsv},
       {.name = "exposed_all_to_all_ms", .header = "exp a2a", .format = Format::kFixed, .decimals = 6,
        .table_decimals = 3, .width = 8, .outputs = kTableAndCsv},
       {.name = "exposed_all_reduce_ms", .header = "exp AR", .format = Format::kFixed, .decimals = 6,
        .table_decimals = 3, .width = 8, .outputs = kTableAndCsv},
       {.name = "other_ms", .header = "other", .format = Format::kFixed, .decimals = 6, .table_decimals = 3,
        .width = 8, .outputs = kTableAndCsv},
       {.name = "overlapped_communication_ms", .header = "overlap", .format = Format::kFixed, .decimals = 6,
        .table_decimals = 3, .width = 8, .outputs = kTableAndCsv},
       {.name = "compute_slowed_by_communication_ms", .format = Format::kFixed, .decimals = 6, .outputs = kCsv},
       {.name = "breakdown_ms", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "bottleneck", .format = Format::kText, .table_before = "| ", .outputs = kTableAndJson,
        .absent = kOmitted},
       // The CSV's last column: the bottleneck, or why the size does not fit.
       {.name = "bottleneck", .format = Format::kQuotedText, .outputs = kCsv},
       {.name = "busiest_gpu", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "fingerprint", .format = Format::kText, .outputs = kJson, .absent = kOmitted},
       {.name = "simulation", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "sharding", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "auto_choices", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "nccl_choices", .format = Format::kJson, .outputs = kJson, .absent = kOmitted},
       {.name = "wall_seconds", .format = Format::kFixed, .outputs = kJson}});
  return s;
}

// The sharding plan a point ran: its balance and memory, and the search's
// figures where one ran.
nlohmann::ordered_json sharding_json(const WhatIfPoint& p) {
  nlohmann::ordered_json j{{"load_imbalance", p.load_imbalance},
                           {"balance_split_tables", p.balance_split_tables},
                           {"host_memory_tables", p.host_memory_tables},
                           {"max_hbm_gbyte", p.max_hbm_gbyte},
                           {"max_iteration_hbm_gbyte", p.max_iteration_hbm_gbyte},
                           {"hbm_reserve_fraction", p.hbm_reserve_fraction},
                           {"cache_hit_rate", p.cache_hit_rate}};
  if (p.search_simulations > 0) {
    j["search"] = {{"simulations", p.search_simulations},
                   {"start_iteration_time_ms", p.search_start_iteration_time_ms},
                   {"moves", p.search_moves}};
  }
  return j;
}

// A row per point, variant by variant, in whatif_schema's columns.
std::vector<Row> whatif_rows(const std::vector<WhatIfVariant>& variants,
                             const std::vector<std::vector<WhatIfPoint>>& points) {
  const bool varied = is_varied(variants);
  std::vector<Row> rows;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (std::size_t i = 0; i < points[v].size(); ++i) {
      const WhatIfPoint& p = points[v][i];
      const auto& b = p.breakdown;
      // A figure of a size that fits; nothing for one that does not.
      const auto fitting = [&p](Cell cell) { return p.fits ? std::move(cell) : Cell{}; };
      const auto choices = [](const std::vector<models::AutoChoice>& c) {
        return c.empty() ? Cell{} : Cell{auto_choices_json(c)};
      };
      Row& row = rows.emplace_back();
      for (const auto& [key, value] : variants[v].settings) row.emplace_back(value);
      if (varied) row.emplace_back(settings_json(variants[v].settings));
      row.insert(row.end(),
                 {std::int64_t{p.nodes}, std::int64_t{p.gpus}, p.gpu,
                  nlohmann::ordered_json{{"launch_latency_ns", p.communication.launch.count_ps() / 1e3},
                                         {"transfer_latency_ns", p.communication.transfer.count_ps() / 1e3},
                                         {"network_transfer_latency_ns",
                                          p.communication.network_transfer.count_ps() / 1e3},
                                         {"peer_gap_ns", p.communication.peer_gap.count_ps() / 1e3}},
                  p.global_batch, nlohmann::ordered_json(p.fits), p.fits ? Cell{} : Cell{p.reason},
                  fitting(p.iteration_time_ms), fitting(p.samples_per_s), fitting(p.scaling_efficiency)});
      if (varied) row.push_back(vs_first(points, v, i));
      row.insert(
          row.end(),
          {fitting(b.compute_ms), fitting(b.exposed_all_to_all_ms), fitting(b.exposed_all_reduce_ms),
           fitting(b.other_ms), fitting(b.overlapped_communication_ms), fitting(b.compute_slowed_by_communication_ms),
           fitting(nlohmann::ordered_json{{"compute", b.compute_ms},
                                          {"exposed_all_to_all", b.exposed_all_to_all_ms},
                                          {"exposed_all_reduce", b.exposed_all_reduce_ms},
                                          {"other", b.other_ms},
                                          {"overlapped_communication", b.overlapped_communication_ms},
                                          {"compute_slowed_by_communication", b.compute_slowed_by_communication_ms}}),
           fitting(p.bottleneck), p.fits ? p.bottleneck : p.reason,
           fitting(nlohmann::ordered_json{{"rank", p.busiest_gpu_rank}, {"compute_ms", p.busiest_gpu_compute_ms}}),
           fitting(fmt::format("{:016x}", p.fingerprint)),
           fitting(nlohmann::ordered_json{{"events", p.events},
                                          {"flows", p.flows},
                                          {"resolves", p.resolves},
                                          {"resolved_flows", p.resolved_flows}}),
           fitting(sharding_json(p)), choices(p.auto_choices), choices(p.nccl_choices), p.wall_seconds});
    }
  }
  return rows;
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
  const bool varied = is_varied(variants);
  write_table(out, whatif_schema(variants), whatif_rows(variants, points), TableStyle{.fit = false});
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
  write_csv(out, whatif_schema(variants), whatif_rows(variants, points));
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
  if (o.pooling_scale != 1) s["pooling_scale"] = o.pooling_scale;
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
  j["results"] = json_rows(whatif_schema(variants), whatif_rows(variants, points));
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
