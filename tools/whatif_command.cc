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
#include "tools/svg_plot.h"
#include "experiments/distribution.h"
#include "experiments/sweep_cache.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif.h"
#include "experiments/whatif_codec.h"
#include "topology/degrade.h"
#include "workloads/chakra_export.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

// --emit-trace X.et or X.et.gz: Chakra files, one per rank.
bool is_chakra_prefix(const std::string& path) {
  for (const std::string tail : {".et", ".et.gz"}) {
    if (path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) return true;
  }
  return false;
}

}  // namespace
namespace {

struct Flags {
  std::string nodes;  // empty: kDefaultNodes, or an explicit graph's own size
  std::shared_ptr<ModelFlags> batch;
  std::vector<std::string> algorithms;
  std::shared_ptr<KnobFlags> knobs;  ///< the flags the knob table declares (--a2a-precision, --unfused, ...)
  bool skip_memory_check = false;
  std::string format = "table";
  std::string timeline;
  std::string plot;
  std::string emit_trace;
  std::string emit_scenarios;  ///< --emit-scenarios FILE: each variant's scenario as JSON
  std::vector<std::string> vary;
  std::vector<std::string> scenarios;  ///< --scenario 'KEY=VALUE KEY=VALUE', each one variant
  std::string shard;       ///< --shard K/N; empty: the Slurm array's, or none
  std::string results;     ///< --results DIR: keep and reuse points (experiments/sweep_cache.h)
  double sensitivity = 0;  ///< 0: off
  /// Flags given on the command line that a --vary knob would contradict.
  std::set<std::string> given;
};

// The most points (variants x sizes) one whatif simulates.
constexpr std::size_t kMaxPoints = 1000;

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

// Throughput of each point against the first variant's at the same size;
// 0 where either does not fit (the outputs leave it out where the first
// does not).
double vs_first(const std::vector<std::vector<WhatIfPoint>>& points, std::size_t v, std::size_t i) {
  const WhatIfPoint& p = points[v][i];
  const WhatIfPoint& first = points.front()[i];
  return p.fits && first.fits ? p.samples_per_s / first.samples_per_s : 0.0;
}

void print_table(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
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

void print_csv(std::ostream& out, const std::vector<WhatIfVariant>& variants,
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

// Every setting of the run that changes its results, so that the JSON says
// what was simulated (and can be repeated); knobs that --vary changes are in
// each result's "variant" instead.
nlohmann::ordered_json settings_of(const WhatIfOptions& o) {
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
  if (o.all_reduce_bucket_bytes != experiments::Scenario{}.all_reduce_bucket_bytes) {
    s["all_reduce_bucket_mib"] = static_cast<double>(o.all_reduce_bucket_bytes) / 1048576.0;
  }
  return s;
}

void print_json(std::ostream& out, const WhatIfOptions& o, const std::vector<std::string>& degraded,
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
  j["settings"] = settings_of(o);
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

// An error about a knob that --scenario gave, said of --scenario.
InputError as_scenario_error(const InputError& e) {
  std::vector<Diagnostic> diagnostics = e.diagnostics();
  for (Diagnostic& d : diagnostics) {
    if (d.source == "--vary") d.source = "--scenario";
    for (std::size_t at = d.message.find("--vary"); at != std::string::npos; at = d.message.find("--vary", at)) {
      d.message.replace(at, 6, "--scenario");
    }
  }
  return InputError(std::move(diagnostics));
}

// --scenario 'KEY=VALUE KEY=VALUE ...': one variant each, every one setting
// the same knobs in the same order (the columns of the outputs), none of
// them a knob --vary sweeps too, no scenario twice.
std::vector<Settings> parse_scenarios(const std::vector<std::string>& texts,
                                      const std::vector<WhatIfVariation>& variations) {
  std::vector<Settings> out;
  for (const std::string& text : texts) {
    Settings scenario;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == word.size()) {
        throw InputError(Diagnostic{"--scenario", text, fmt::format("expected KEY=VALUE words, got '{}'", word)});
      }
      const std::string key = word.substr(0, eq);
      for (const auto& [k, v] : scenario) {
        if (k == key) throw InputError(Diagnostic{"--scenario", text, fmt::format("'{}' is given twice", key)});
      }
      for (const WhatIfVariation& v : variations) {
        if (v.key == key) {
          throw InputError(Diagnostic{"--scenario", text, fmt::format("'{}' is swept by --vary too; give it in one of them", key)});
        }
      }
      // The knob and its value, checked as --vary checks them.
      try {
        parse_whatif_variation(word);
      } catch (const InputError& e) {
        throw as_scenario_error(e);
      }
      scenario.emplace_back(key, word.substr(eq + 1));
    }
    if (scenario.empty()) throw InputError(Diagnostic{"--scenario", text, "expected KEY=VALUE words"});
    if (!out.empty()) {
      std::vector<std::string> want, got;
      for (const auto& [k, v] : out.front()) want.push_back(k);
      for (const auto& [k, v] : scenario) got.push_back(k);
      if (want != got) {
        throw InputError(Diagnostic{"--scenario", text,
                                    fmt::format("expected the knobs of the first scenario, {}, in that order (they "
                                                "are the outputs' columns); got {}",
                                                fmt::join(want, " "), fmt::join(got, " "))});
      }
    }
    if (std::find(out.begin(), out.end(), scenario) != out.end()) {
      throw InputError(Diagnostic{"--scenario", text, "given twice"});
    }
    out.push_back(std::move(scenario));
  }
  return out;
}

// The variants of --vary and --scenario, checked against the other flags;
// the base alone without either.
std::vector<WhatIfVariant> variants_of(const WhatIfOptions& o, const Flags& f) {
  if (f.sensitivity > 0) {
    if (!f.vary.empty() || !f.scenarios.empty()) {
      throw InputError(Diagnostic{"--sensitivity", "",
                                  fmt::format("varies one resource at a time itself; not with {}",
                                              f.vary.empty() ? "--scenario" : "--vary")});
    }
    if (!f.timeline.empty() || !f.emit_trace.empty()) {
      throw InputError(Diagnostic{!f.timeline.empty() ? "--timeline" : "--emit-trace", "",
                                  "writes one iteration; it cannot be combined with --sensitivity"});
    }
    return sensitivity_variants(o, f.sensitivity);
  }
  std::vector<WhatIfVariation> variations;
  for (const std::string& text : f.vary) variations.push_back(parse_whatif_variation(text));
  const std::vector<Settings> scenarios = parse_scenarios(f.scenarios, variations);
  // The scenarios' knobs are checked against the other flags as --vary's
  // are, with every value a scenario gives them.
  std::vector<WhatIfVariation> checked = variations;
  for (std::size_t k = 0; !scenarios.empty() && k < scenarios.front().size(); ++k) {
    WhatIfVariation v{scenarios.front()[k].first, {}};
    for (const Settings& scenario : scenarios) v.values.push_back(scenario[k].second);
    checked.push_back(std::move(v));
  }
  const experiments::GivenFlags given{f.given, algorithm_kinds_named(f.algorithms), o.cluster.overrides};
  // --vary's own first, then the scenarios' (said of --scenario).
  experiments::check_knob_conflicts(variations, given);
  try {
    experiments::check_knob_conflicts(checked, given);
  } catch (const InputError& e) {
    throw as_scenario_error(e);
  }
  if (!checked.empty() && (!f.timeline.empty() || !f.emit_trace.empty())) {
    throw InputError(Diagnostic{!f.timeline.empty() ? "--timeline" : "--emit-trace", "",
                                fmt::format("writes one iteration; it cannot be combined with {} (run that variant "
                                            "alone)", variations.empty() ? "--scenario" : "--vary")});
  }
  std::vector<WhatIfVariant> variants;
  if (scenarios.empty()) {
    variants = expand_whatif_variations(o, variations);
  } else {
    // Each scenario, then --vary's combinations inside it.
    for (const Settings& scenario : scenarios) {
      WhatIfOptions base = o;
      try {
        for (const auto& [key, value] : scenario) apply_whatif_variation(base, key, value);
      } catch (const InputError& e) {
        throw as_scenario_error(e);
      }
      for (WhatIfVariant& v : expand_whatif_variations(base, variations)) {
        v.settings.insert(v.settings.begin(), scenario.begin(), scenario.end());
        variants.push_back(std::move(v));
      }
    }
  }
  const std::size_t points = variants.size() * o.nodes.size();
  if (points > kMaxPoints) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} variants x {} sizes = {} points; at most {} per run",
                                                          variants.size(), o.nodes.size(), points, kMaxPoints)});
  }
  return variants;
}

// --emit-scenarios: each variant's knob settings, the scenario it simulated
// (experiments/scenario.h) and that scenario's hash.
nlohmann::ordered_json scenarios_json(const std::vector<WhatIfVariant>& variants) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const WhatIfVariant& v : variants) {
    const experiments::Scenario& s = v.options;
    list.push_back({{"variant", settings_json(v.settings)},
                    {"hash", experiments::scenario_hash(s)},
                    {"scenario", experiments::scenario_to_json(s)}});
  }
  return {{"schema_version", 1}, {"scenarios", std::move(list)}};
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
  if (f.shard == "off") {
    // The whole sweep here, even inside a Slurm job array.
  } else if (!f.shard.empty()) {
    placement.shard = experiments::parse_shard(f.shard, "--shard");
  } else {
    placement.shard = experiments::shard_from_environment();
  }
  placement.mpi = experiments::Mpi::active();
  return placement;
}

int run(const WhatIfOptions& base, const Flags& f, std::ostream& out, const std::vector<std::string>& args,
        const SweepPlacement* merged) {
  SweepPlacement placement = placement_of(f, merged);
  const bool placed = placement.shard || placement.mpi || placement.merged != nullptr || !f.results.empty();
  if (!f.results.empty() && placement.merged == nullptr && (!f.timeline.empty() || !f.emit_trace.empty())) {
    throw InputError(Diagnostic{!f.timeline.empty() ? "--timeline" : "--emit-trace", "",
                                "writes one size's whole simulation, which --results does not keep; run that size "
                                "without --results"});
  }
  if (placed && (placement.shard || placement.mpi || placement.merged != nullptr) &&
      (!f.timeline.empty() || !f.emit_trace.empty())) {
    throw InputError(Diagnostic{
        !f.timeline.empty() ? "--timeline" : "--emit-trace", "",
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
  // Who writes files: not a shard (merge does), not the MPI ranks but 0.
  const bool writes_files = !placement.shard && experiments::Mpi::rank() == 0;
  WhatIfOptions o = base;
  o.nodes = parse_nodes(f.nodes.empty() ? default_nodes(o.cluster) : f.nodes);
  apply_model_flags(*f.batch, o);
  apply_knob_flags(*f.knobs, o);
  for (const auto& [kind, name] : parse_algorithm_flags(f.algorithms)) o.algorithms[kind] = name;
  o.memory_check = !f.skip_memory_check;

  const std::vector<WhatIfVariant> variants = variants_of(o, f);
  std::shared_ptr<PointCache> cache;
  if (!f.results.empty() && placement.merged == nullptr) {
    cache = std::make_shared<PointCache>("--results", f.results, point_shaping_words(args));
    std::vector<std::pair<std::size_t, std::size_t>> where;  // task -> (variant, index)
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (std::size_t i = 0; i < variants[v].options.nodes.size(); ++i) where.emplace_back(v, i);
    }
    placement.kept = [cache, where, &variants](std::size_t t) {
      const auto [v, i] = where[t];
      return cache->load(variants[v].settings, variants[v].options.nodes[i]);
    };
    placement.keep = [cache, where, &variants](std::size_t t, const WhatIfPoint& point) {
      const auto [v, i] = where[t];
      cache->store(variants[v].settings, variants[v].options.nodes[i], point);
    };
  }
  std::vector<std::string> used;
  for (const WhatIfVariant& v : variants) {
    for (const auto& [kind, name] : v.options.algorithms) used.push_back(name);
  }
  check_algorithm_options_used(o.algorithm_options, used);

  // Output files first: an unwritable path must not cost the simulation.
  OutputFile timeline_file, trace_file, plot_file, scenarios_file;
  if (writes_files && !f.emit_scenarios.empty()) scenarios_file = open_output_file("--emit-scenarios", f.emit_scenarios);
  if (writes_files && !f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
  // A prefix ending in .et (or .et.gz) asks for Chakra files, one per rank
  // (PREFIX.<rank>.et); rank 0's is opened now, so that an unwritable
  // directory costs no simulation.
  const bool chakra_trace = is_chakra_prefix(f.emit_trace);
  if (writes_files && !f.emit_trace.empty()) {
    trace_file = open_output_file("--emit-trace", chakra_trace ? workloads::chakra_rank_path(f.emit_trace, 0) : f.emit_trace);
  }
  if (writes_files && !f.plot.empty()) plot_file = open_output_file("--plot", f.plot);
  std::optional<int> keep;
  if (!f.timeline.empty() || !f.emit_trace.empty()) keep = *std::max_element(o.nodes.begin(), o.nodes.end());
  const auto start = std::chrono::steady_clock::now();
  // "nic-gbit=400, 64 nodes" with --vary, "64 nodes" without.
  const auto point_name = [&variants](int variant, int nodes) {
    const std::string prefix =
        variants.size() > 1 ? variants[static_cast<std::size_t>(variant)].label() + ", " : "";
    return fmt::format("{}{} node{}", prefix, nodes, nodes == 1 ? "" : "s");
  };
  const auto finished = [&](const WhatIfPoint& p, int done, int total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > 2.0 || total > 4) {
      write_progress(
          fmt::format("whatif: {} done ({} of {}, {:.1f} s)", point_name(p.variant, p.nodes), done, total, elapsed));
    }
  };
  // Variants with a link or switch at partial speed: flows then finish at
  // many distinct rates and each finish re-solves most of the fabric
  // (docs/cluster_files.md, "Simulation time"); a long run says so once.
  std::vector<bool> partial_links;
  for (const WhatIfVariant& v : variants) {
    bool partial = false;
    std::vector<std::string> degradations;
    try {
      degradations = effective_degradations(v.options);
    } catch (const InputError&) {
      // The run reports it, naming the variant.
    }
    for (const std::string& text : degradations) {
      const topology::Degradation d = topology::parse_degradation(text);
      partial = partial || (!topology::degrades_gpus({d}) && d.speed > 0 && d.speed < 1);
    }
    partial_links.push_back(partial);
  }
  bool hinted = false;
  bool hinted_slices = false;
  const auto running = [&point_name, &partial_links, &hinted, &hinted_slices, &variants](
                           int variant, int nodes, const models::ExecutionProgress& p, double seconds) {
    write_progress(fmt::format("whatif: {} running: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)",
                               point_name(variant, nodes), p.now.since_start().to_seconds() * 1e3, p.ops_ended,
                               p.ops_total, seconds));
    const auto v = static_cast<std::size_t>(variant);
    if (!hinted && seconds >= 30 && variants[v].options.fidelity == "flow") {
      hinted = true;
      write_progress(fmt::format(
                 "whatif: {}; --fidelity coalesced lets finishes within 1e-3 of a flow's transfer time share one "
                 "re-solve, several times faster for an iteration under 6e-4 longer (model A, 32 nodes: a spine "
                 "at half speed 50 s -> 4.1 s, --oversubscription 2 55 s -> 10 s; docs/network_model.md, "
                 "\"Coalesced finishes\")\n",
                 partial_links[v] ? "a link or switch at partial speed spreads the flows' finishes over many instants"
                                  : "a long run: uneven bottlenecks (oversubscription, nccl_p2p) spread the flows' "
                                    "finishes over many instants"));
    }
    // The pipelined collectives (hierarchical's default slices) cost about 3x
    // the simulation time of one slice (README, "How long a what-if takes").
    const WhatIfOptions& vo = variants[v].options;
    const bool pipelined = !vo.algorithm_options.contains("hierarchical") &&
                           std::any_of(vo.algorithms.begin(), vo.algorithms.end(),
                                       [](const auto& a) { return a.second == "hierarchical"; });
    if (!hinted_slices && seconds >= 60 && pipelined) {
      hinted_slices = true;
      write_progress(fmt::format(
                 "whatif: the collectives across servers run pipelined (hierarchical, several slices), about 3x "
                 "the simulation time of one slice; --options 'hierarchical={{\"chunks\": 1}}' is the fast path "
                 "for large sweeps (iterations 1-5% longer; README, \"How long a what-if takes\")"));
    }
  };
  std::vector<std::vector<WhatIfPoint>> all;
  if (placed) {
    std::size_t tasks = 0;
    for (const WhatIfVariant& v : variants) tasks += v.options.nodes.size();
    if (placement.merged != nullptr && placement.merged->size() != tasks) {
      throw InputError(Diagnostic{
          "merge", "",
          fmt::format("{} hold {} points, and their command makes {} here: they were written by another version of "
                      "zionsim, or with other files behind the same names",
                      placement.merged_source, placement.merged->size(), tasks)});
    }
    PlacedSweep sweep = placement.merged != nullptr ? run_whatif_placed(variants, placement)
                                                    : run_whatif_placed(variants, placement, finished, running);
    if (!sweep.prints) return kExitOk;  // an MPI rank other than 0: rank 0 prints
    if (placement.shard) {
      std::vector<std::pair<std::size_t, nlohmann::ordered_json>> outcomes;
      std::vector<std::pair<std::size_t, std::size_t>> where;  // task -> (variant, index)
      for (std::size_t v = 0; v < variants.size(); ++v) {
        for (std::size_t i = 0; i < variants[v].options.nodes.size(); ++i) where.emplace_back(v, i);
      }
      for (const std::size_t t : sweep.computed) {
        const auto [v, i] = where[t];
        outcomes.emplace_back(t, task_outcome_to_json(&sweep.points[v][i], nullptr));
      }
      out << shard_document(command_without_shard(args), tasks, *placement.shard, std::move(outcomes)).dump()
          << '\n';
      return kExitOk;
    }
    all = std::move(sweep.points);
  } else if (variants.size() == 1 && variants.front().settings.empty()) {
    all.push_back(run_whatif(o, keep, finished, running));
  } else {
    all = run_whatif_variants(variants, finished, running);
  }
  const std::vector<WhatIfPoint>& points = all.front();

  if (f.format == "json") {
    print_json(out, o, effective_degradations(o), variants, all);
  } else if (f.format == "csv") {
    print_csv(out, variants, all);
  } else {
    print_table(out, o, effective_degradations(o), variants, all);
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
    if (chakra_trace) {
      // One rank at a time: its nodes, its encoding and its descriptor are
      // let go before the next rank's are made. Every file is written (to
      // its temporary path) before any is renamed into place, so a failure
      // at any rank leaves no partial trace.
      std::vector<OutputFile> outputs;
      std::vector<std::string> paths;
      const bool gz = f.emit_trace.size() > 3 && f.emit_trace.compare(f.emit_trace.size() - 3, 3, ".gz") == 0;
      workloads::export_chakra(*largest->graph, [&](int r, const workloads::chakra_et::File& file) {
        paths.push_back(workloads::chakra_rank_path(f.emit_trace, r));
        outputs.push_back(r == 0 ? std::move(trace_file) : open_output_file("--emit-trace", paths.back()));
        const std::string bytes = workloads::chakra_et::encode(file);
        const std::string out = gz ? gzip(bytes) : bytes;
        outputs.back().write(out.data(), static_cast<std::streamsize>(out.size()));
        finish_output_file("--emit-trace", paths.back(), outputs.back());
      });
      for (std::size_t r = 0; r < outputs.size(); ++r) close_output_file("--emit-trace", paths[r], outputs[r]);
    } else {
      workloads::write_trace(trace_file, *largest->graph);
      close_output_file("--emit-trace", f.emit_trace, trace_file);
    }
  }
  if (writes_files && !f.plot.empty()) {
    std::vector<PlotSeries> series;
    for (std::size_t v = 0; v < variants.size(); ++v) {
      series.push_back(PlotSeries{variants[v].settings.empty() ? "" : variants[v].label(), all[v]});
    }
    write_whatif_svg(plot_file, series, fmt::format("{} on {}", o.model, o.cluster.cluster));
    close_output_file("--plot", f.plot, plot_file);
  }
  if (writes_files && !f.emit_scenarios.empty()) {
    scenarios_file << scenarios_json(variants).dump(2) << '\n';
    close_output_file("--emit-scenarios", f.emit_scenarios, scenarios_file);
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
  f->batch = add_model_options(*cmd, *options, /*with_search=*/true);
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
  cmd->add_option("--results", f->results,
                  "Keep each point in DIR as it finishes and reuse the points kept there: a rerun simulates only "
                  "what is missing, so a stopped sweep resumes (docs/sweeps.md)")
      ->option_text("DIR");
  cmd->add_option("--shard", f->shard,
                  "Simulate only share K (from 0) of N of the sweep's points and write them as a shard file for "
                  "'zionsim merge' (default inside a Slurm job array: the array task's share; 'off': the whole "
                  "sweep, there too; docs/sweeps.md)")
      ->option_text("K/N");
  cmd->parse_complete_callback([cmd, request, sources, options, f, action = context.action, args = context.args,
                                merged = context.merged] {
    f->given = knob_flags_given(*cmd, experiments::Sweeper::kWhatif);
    collect_knob_flags(*cmd, experiments::Sweeper::kWhatif, *f->knobs);
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
