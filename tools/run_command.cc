// `zionsim run`: simulate a trace (the zionsim trace format) on a cluster:
// iteration time, per-rank busy and idle time, exposed communication, the
// critical path and the hottest links.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string_view>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/input_file.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/execution/executor.h"
#include "models/execution/network_activity.h"
#include "models/execution/network_backend.h"
#include "models/execution/timeline.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "tools/cli_checks.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "experiments/interrupt.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "experiments/memory_estimate.h"
#include "experiments/parallel.h"
#include "experiments/whatif_codec.h"
#include "tools/variations.h"
#include "topology/router.h"
#include "workloads/chakra_import.h"
#include "workloads/kineto_import.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

// Runs a trace's simulation. What it refuses on the way (an algorithm that
// cannot lower a collective's request) comes from the trace: the error
// names it, and the variant when several run (issue 41, class 9).
template <typename Run>
models::ExecutionResult in_trace(const std::string& trace_name, const std::string& variant, Run&& run) {
  try {
    return run();
  } catch (const InputError& e) {
    std::vector<Diagnostic> diagnostics = e.diagnostics();
    for (Diagnostic& d : diagnostics) {
      d.message += fmt::format(" in {}", trace_name);
      if (!variant.empty()) d.message += fmt::format(" (in the variant {})", variant);
    }
    throw InputError(std::move(diagnostics));
  }
}

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
  std::vector<std::string> vary;
  int threads = 0;  // --vary's variants run in parallel; 0: one per core
  bool skip_memory_check = false;
  std::set<std::string> given;  // flags on the command line that a --vary knob would contradict
};

struct Variant {
  Settings settings;
  topology::ClusterRequest request;
  Flags flags;
};

// What run's knobs set (experiments/knobs.h), as a scenario: the cluster,
// the GPU, the network model and the algorithms varied.
experiments::Scenario scenario_of(const topology::ClusterRequest& request, const Flags& f) {
  experiments::Scenario s;
  s.cluster = request;
  s.gpu = f.gpu;
  s.profile = f.profile;
  s.fidelity = f.fidelity;
  s.completion_quantum_ns = f.completion_quantum_ns;
  s.algorithms.clear();  // only the varied kinds, over --algo's
  return s;
}

// One combination's setup: the base with the knobs set.
Variant variant_of(Settings settings, const topology::ClusterRequest& request, const Flags& f) {
  experiments::Scenario s = scenario_of(request, f);
  for (const auto& [key, value] : settings) experiments::apply_knob(s, key, value, experiments::Sweeper::kRun);
  Variant v{std::move(settings), s.cluster, f};
  v.flags.gpu = s.gpu;
  v.flags.profile = s.profile;
  v.flags.fidelity = s.fidelity;
  v.flags.completion_quantum_ns = s.completion_quantum_ns;
  for (const auto& [kind, name] : s.algorithms) v.flags.algorithms.push_back(fmt::format("{}={}", kind, name));
  return v;
}

std::vector<Variant> variants_of(const topology::ClusterRequest& request, const Flags& f) {
  std::vector<Variation> variations;
  for (const std::string& text : f.vary) {
    variations.push_back(experiments::parse_knob_variation(text, experiments::Sweeper::kRun));
  }
  experiments::check_knob_conflicts(variations, {f.given, algorithm_kinds_named(f.algorithms), request.overrides});
  if (!variations.empty() && !f.timeline.empty()) {
    throw InputError(Diagnostic{"--timeline", "", "writes one run; it cannot be combined with --vary (run that variant alone)"});
  }
  std::vector<Variant> out;
  for (Settings& settings : all_combinations(variations)) out.push_back(variant_of(std::move(settings), request, f));
  if (out.size() > 1000) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} variants; at most 1000 per run", out.size())});
  }
  return out;
}

double ms(sim::Duration d) { return d.to_seconds() * 1e3; }

// The stack's network model and algorithms, as run's flags say.
experiments::Stack::Options stack_options(const Flags& f, const AlgorithmSources& sources, bool keep_flows) {
  return {.fidelity = f.fidelity,
          .completion_quantum_ns = f.completion_quantum_ns,
          .plugins = sources.plugins,
          .schedules = sources.schedules,
          .keep_flows = keep_flows};
}

// The files of a --trace argument: a file, or a directory's trace files
// (*.json, *.et, and either gzip-compressed, *.json.gz, *.et.gz) in name
// order (one per rank for Chakra and Kineto traces).
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (std::filesystem::is_directory(p)) {
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(p)) {
        const std::string name = entry.path().filename().string();
        const auto ends_with = [&name](std::string_view tail) {
          return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
        };
        if (ends_with(".json") || ends_with(".et") || ends_with(".json.gz") || ends_with(".et.gz")) {
          found.push_back(entry.path().string());
        }
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

// The keys of the root object that `head` (the start of a JSON document)
// shows, in order: strings followed by ':' at nesting depth 1. A scan, not
// a parse: the head may end anywhere.
std::vector<std::string> root_keys(std::string_view head) {
  std::vector<std::string> keys;
  int depth = 0;
  std::size_t i = 0;
  while (i < head.size()) {
    const char c = head[i];
    if (c == '"') {
      std::string text;
      ++i;
      while (i < head.size() && head[i] != '"') {
        if (head[i] == '\\') ++i;
        if (i < head.size()) text += head[i];
        ++i;
      }
      ++i;
      std::size_t j = i;
      while (j < head.size() && (head[j] == ' ' || head[j] == '\t' || head[j] == '\r' || head[j] == '\n')) ++j;
      if (depth == 1 && j < head.size() && head[j] == ':') keys.push_back(std::move(text));
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return keys;
}

models::OpGraph load_any_trace(const std::vector<std::string>& paths, const std::string& format,
                               const models::DeviceProfile& device, const std::vector<std::string>& algorithms) {
  const std::vector<std::string> files = expand(paths);
  if (files.empty()) throw InputError(Diagnostic{"--trace", "", "no trace files found"});
  std::string kind = format;
  if (kind == "detect") {
    // Sniff the head of the first file: parsing a 100 MB trace just to
    // guess its format would triple the load time.
    // Read as every reader reads (bounded, regular files only, gzip
    // inflated: base/input_file.h), sniffed by its head.
    // Only the root object's own keys count: a kernel or argument named
    // "schema_version" deep in a Kineto trace does not make it zionsim's.
    const std::string head = read_input_file(files.front()).substr(0, 64 * 1024);
    const std::vector<std::string> keys = root_keys(head);
    const auto has = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    if (has("traceEvents")) {
      kind = "kineto";
    } else if (has("schema_version")) {
      kind = "zionsim";
    } else {
      kind = workloads::looks_like_chakra(files.front()) ? "chakra" : "zionsim";
    }
  }
  if (kind == "zionsim" || kind == "kineto") {
    // Those are JSON: a binary first file is most likely a Chakra .et.
    const std::string bytes = read_input_file(files.front());
    const std::size_t first = bytes.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && bytes[first] != '{' && bytes[first] != '[' &&
        workloads::looks_like_chakra(files.front())) {
      throw InputError(Diagnostic{files.front(), "",
                                  fmt::format("not a {} trace (JSON) but a Chakra protobuf trace (.et); use "
                                              "--trace-format chakra (or detect)",
                                              kind == "zionsim" ? "zionsim" : "Kineto")});
    }
  }
  if (kind == "chakra") return workloads::import_chakra(files);
  if (kind == "kineto") return workloads::import_kineto(files);
  if (kind == "zionsim") {
    if (files.size() != 1) {
      throw InputError(Diagnostic{"--trace", "", fmt::format("a zionsim trace is one file, got {}", files.size())});
    }
    return workloads::load_trace(files.front(), &device, &algorithms);
  }
  throw InputError(Diagnostic{"--trace-format", "",
                              fmt::format("importing {} traces is not implemented yet", kind)});
}

// One variant's run, summed up.
struct Summary {
  int ranks = 0;
  std::size_t ops = 0;
  std::string cluster;
  double iteration_ms = 0;
  double compute_ms = 0;     // means over ranks
  double exposed_ms = 0;
  double overlapped_ms = 0;
  std::uint64_t fingerprint = 0;
  std::string busiest_link;
  std::vector<models::AutoChoice> auto_choices;
  std::vector<models::AutoChoice> nccl_choices;
};

// A summary as JSON and back, losslessly: what an MPI rank sends rank 0.
nlohmann::ordered_json encode_summary(const Summary& s) {
  return nlohmann::ordered_json{{"ranks", s.ranks},
                                {"ops", s.ops},
                                {"cluster", s.cluster},
                                {"iteration_ms", encode_real(s.iteration_ms)},
                                {"compute_ms", encode_real(s.compute_ms)},
                                {"exposed_ms", encode_real(s.exposed_ms)},
                                {"overlapped_ms", encode_real(s.overlapped_ms)},
                                {"fingerprint", s.fingerprint},
                                {"busiest_link", s.busiest_link},
                                {"auto_choices", encode_auto_choices(s.auto_choices)},
                                {"nccl_choices", encode_auto_choices(s.nccl_choices)}};
}

Summary decode_summary(const nlohmann::json& j) {
  const std::string source = "an MPI rank's summary";
  Summary s;
  s.ranks = j.at("ranks").get<int>();
  s.ops = j.at("ops").get<std::size_t>();
  s.cluster = j.at("cluster").get<std::string>();
  s.iteration_ms = decode_real(j.at("iteration_ms"), source, "/iteration_ms");
  s.compute_ms = decode_real(j.at("compute_ms"), source, "/compute_ms");
  s.exposed_ms = decode_real(j.at("exposed_ms"), source, "/exposed_ms");
  s.overlapped_ms = decode_real(j.at("overlapped_ms"), source, "/overlapped_ms");
  s.fingerprint = j.at("fingerprint").get<std::uint64_t>();
  s.busiest_link = j.at("busiest_link").get<std::string>();
  s.auto_choices = decode_auto_choices(j.at("auto_choices"), source, "/auto_choices");
  s.nccl_choices = decode_auto_choices(j.at("nccl_choices"), source, "/nccl_choices");
  return s;
}

// The trace on this cluster: its ranks must be GPUs of the cluster; GPUs
// the cluster degrades (--degrade gpu:R=SPEED) compute slower.
models::OpGraph load_run_graph(const Flags& f, const AlgorithmSources& sources, const std::string& trace_name,
                               const topology::LoadedCluster& cluster, const models::DeviceProfile& device) {
  // The algorithms a trace's collectives may name: the registry's (built-in,
  // plug-ins, schedules, NCCL's cost model and the tuner).
  models::collectives::CollectiveRegistry registry;
  fill_registry(sources, registry);
  check_algorithm_options(parse_algorithm_options(sources.options), registry);
  const std::vector<std::string> algorithms = registry.names();
  models::OpGraph graph = load_any_trace(f.trace, f.trace_format, device, algorithms);
  if (graph.num_ranks > cluster.topology.num_gpus()) {
    throw InputError(Diagnostic{trace_name, "/ranks",
                                fmt::format("the trace has {} ranks but the cluster has {} GPUs (use --nodes)",
                                            graph.num_ranks, cluster.topology.num_gpus())});
  }
  for (std::size_t r = static_cast<std::size_t>(graph.num_ranks); r < cluster.gpu_speed.size(); ++r) {
    if (cluster.gpu_speed[r] != 1) {
      throw InputError(Diagnostic{"--degrade", "",
                                  fmt::format("GPU rank {} runs no part of the trace ({} ranks: 0..{})", r,
                                              graph.num_ranks, graph.num_ranks - 1)});
    }
  }
  models::slow_compute(graph, cluster.gpu_speed);
  return graph;
}

// The GPUs of the trace's largest all-to-all: what a run's memory grows with
// (its flows, one per pair of members, are in flight together; other
// collectives start a few flows per member).
std::int64_t all_to_all_gpus(const models::OpGraph& graph) {
  std::size_t largest = 0;
  for (const models::CollectiveCall& c : graph.collectives) {
    if (c.kind == models::collectives::CollectiveKind::kAllToAll) largest = std::max(largest, c.ranks.size());
  }
  return static_cast<std::int64_t>(largest);
}

// Refuses, before anything runs, runs estimated to need more memory than
// this machine has (experiments/memory_estimate.h, fitted on DLRM iterations, whose
// all-to-alls keep a few flows in flight per pair of GPUs): per run, the GPUs
// of its largest all-to-all and whether it is analytical; the `threads`
// largest run at once.
void check_run_memory(const Flags& f, const std::vector<std::pair<std::int64_t, bool>>& runs, int threads) {
  if (f.skip_memory_check || runs.empty()) return;
  const std::optional<std::int64_t> available = available_memory_bytes();
  if (!available) return;
  const bool kept = !f.timeline.empty();
  std::vector<std::pair<std::int64_t, std::int64_t>> bytes;  // (estimate, ranks)
  for (const auto& [ranks, analytical] : runs) {
    bytes.emplace_back(estimated_simulation_bytes(ranks, analytical, kept), ranks);
  }
  std::sort(bytes.begin(), bytes.end(), std::greater<>());
  const std::string why = fmt::format(
      "about 1.3 KB per pair of GPUs for flows in flight{}, as a DLRM iteration's all-to-alls take; README, \"How "
      "long a what-if takes\"",
      kept ? " and 900 KB per GPU for the records --timeline keeps" : "");
  if (bytes.front().first > *available) {
    throw InputError(Diagnostic{
        "--trace", "",
        fmt::format("a run whose all-to-alls span {} GPUs would need about {} to simulate ({}), and this machine "
                    "has {} available; give "
                    "{}--skip-memory-check to try anyway",
                    bytes.front().second, gib_text(bytes.front().first), why, gib_text(*available),
                    kept ? "no --timeline (its records grow with every flow), or " : "")});
  }
  const std::size_t wanted =
      threads > 0 ? static_cast<std::size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t running = std::min(bytes.size(), wanted);
  std::int64_t together = 0;
  for (std::size_t k = 0; k < running; ++k) together += bytes[k].first;
  if (together > *available) {
    throw InputError(Diagnostic{
        "--threads", "",
        fmt::format("the {} largest variants, simulated at once, would need about {} together ({}), and this "
                    "machine has {} available; give --threads 1, or --skip-memory-check to try anyway",
                    running, gib_text(together), why, gib_text(*available))});
  }
}

// Every variant checked (cluster, profile, trace, ranks) before any runs,
// then run one after another.
int run_variants(const std::vector<Variant>& variants, const AlgorithmSources& sources, const Flags& f,
                 std::ostream& out) {
  struct Setup {
    topology::LoadedCluster cluster;
    models::DeviceProfile device;
    models::OpGraph graph;
  };
  std::vector<Setup> setups;
  const std::string trace_name = f.trace.size() == 1 ? f.trace.front() : fmt::format("{} files", f.trace.size());
  for (const Variant& v : variants) {
    try {
      ClusterAndGpu system = load_cluster_and_gpu(v.request, v.flags.gpu, v.flags.profile);
      topology::LoadedCluster& cluster = system.cluster;
      models::DeviceProfile& device = system.device;
      models::OpGraph graph = load_run_graph(f, sources, trace_name, cluster, device);
      models::collectives::CollectiveRegistry registry;
      fill_registry(sources, registry);
      for (const auto& [kind, name] : parse_algorithm_flags(v.flags.algorithms)) {
        check_algorithm_for(registry, "--algo", kind, name);
      }
      setups.push_back(Setup{std::move(cluster), std::move(device), std::move(graph)});
    } catch (const InputError& e) {
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      for (Diagnostic& d : diagnostics) d.message += fmt::format(" (in the variant {})", settings_label(v.settings));
      throw InputError(std::move(diagnostics));
    }
  }
  std::vector<std::pair<std::int64_t, bool>> runs;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    runs.emplace_back(all_to_all_gpus(setups[i].graph), variants[i].flags.fidelity == "analytical");
  }
  check_run_memory(f, runs, f.threads);
  // The variants run side by side, each on its own simulator and network.
  std::vector<Summary> summaries(variants.size());
  const std::function<Summary(std::size_t)> simulate = [&](std::size_t i) {
    const Flags& vf = variants[i].flags;
    const Setup& setup = setups[i];
    const topology::Router router(setup.cluster.topology);
    experiments::Stack stack(setup.cluster.topology, router, stack_options(vf, sources, false),
                             backend_options(setup.cluster, setup.device, parse_algorithm_flags(vf.algorithms),
                                             parse_algorithm_options(sources.options)));
    const models::ExecutionResult r = in_trace(trace_name, variants.size() > 1 ? settings_label(variants[i].settings) : "", [&] {
      return models::execute(stack.sim(), setup.graph, stack.backend(), sm_contention(setup.device));
    });
    Summary s;
    s.ranks = setup.graph.num_ranks;
    s.ops = setup.graph.ops.size();
    s.cluster = setup.cluster.source;
    s.iteration_ms = ms(r.makespan.since_start());
    for (const models::RankSummary& rank : r.ranks) {
      s.compute_ms += ms(rank.compute);
      s.exposed_ms += ms(rank.exposed_communication);
      s.overlapped_ms += ms(rank.overlapped_communication);
    }
    const double n = static_cast<double>(std::max<std::size_t>(1, r.ranks.size()));
    s.compute_ms /= n;
    s.exposed_ms /= n;
    s.overlapped_ms /= n;
    s.fingerprint = stack.sim().fingerprint();
    s.auto_choices = stack.backend().auto_choices();
    s.nccl_choices = stack.backend().nccl_choices();
    if (const std::vector<std::uint32_t> hot = stack.network().hottest_links(1); !hot.empty()) {
      const topology::LinkInfo& info = setup.cluster.topology.link(topology::LinkId{hot.front()});
      s.busiest_link = fmt::format("{}->{}", setup.cluster.topology.node(info.src).name,
                                   setup.cluster.topology.node(info.dst).name);
    }
    return s;
  };
  // Inside an MPI job the variants are spread over its ranks
  // (docs/sweeps.md); rank 0 alone goes on to print them.
  std::vector<double> costs;
  for (const auto& [gpus, analytical] : runs) costs.push_back(static_cast<double>(gpus) * static_cast<double>(gpus));
  if (!parallel_map<Summary>(variants.size(), f.threads, costs, simulate, encode_summary, decode_summary, summaries)) {
    return kExitOk;
  }
  // Speed-up of each variant over the first: its iteration time / this one's.
  const auto speedup = [&](std::size_t i) {
    return summaries[i].iteration_ms > 0 ? summaries.front().iteration_ms / summaries[i].iteration_ms : 0.0;
  };
  const Settings& keys = variants.front().settings;
  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["trace"] = trace_name;
    j["vary"] = variations_json(f.vary);
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const Summary& s = summaries[i];
      results.push_back({{"variant", settings_json(variants[i].settings)},
                         {"cluster", s.cluster},
                         {"fidelity", variants[i].flags.fidelity},
                         {"completion_quantum_ns", variants[i].flags.completion_quantum_ns},
                         {"iteration_time_ms", s.iteration_ms},
                         {"speedup_vs_first_variant", speedup(i)},
                         {"compute_ms_mean", s.compute_ms},
                         {"exposed_communication_ms_mean", s.exposed_ms},
                         {"overlapped_communication_ms_mean", s.overlapped_ms},
                         {"busiest_link", s.busiest_link},
                         {"fingerprint", fmt::format("{:016x}", s.fingerprint)}});
      if (!s.auto_choices.empty()) results.back()["auto_choices"] = auto_choices_json(s.auto_choices);
      if (!s.nccl_choices.empty()) results.back()["nccl_choices"] = auto_choices_json(s.nccl_choices);
    }
    j["results"] = std::move(results);
    out << j.dump(1) << '\n';
    return kExitOk;
  }
  if (f.format == "csv") {
    for (const auto& [key, value] : keys) fmt::print(out, "{},", key);
    fmt::print(out, "iteration_time_ms,speedup_vs_first_variant,compute_ms_mean,exposed_communication_ms_mean,"
                    "overlapped_communication_ms_mean,busiest_link\n");
    for (std::size_t i = 0; i < variants.size(); ++i) {
      const Summary& s = summaries[i];
      for (const auto& [key, value] : variants[i].settings) fmt::print(out, "{},", csv_quoted(value));
      fmt::print(out, "{:.6f},{:.4f},{:.6f},{:.6f},{:.6f},{}\n", s.iteration_ms, speedup(i), s.compute_ms, s.exposed_ms,
                 s.overlapped_ms, csv_quoted(s.busiest_link));
    }
    return kExitOk;
  }
  fmt::print(out, "trace {} ({} ranks, {} ops)\n\n", trace_name, summaries.front().ranks, summaries.front().ops);
  std::vector<std::size_t> width;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::size_t w = keys[k].first.size();
    for (const Variant& v : variants) w = std::max(w, v.settings[k].second.size());
    width.push_back(w);
  }
  for (std::size_t k = 0; k < keys.size(); ++k) fmt::print(out, "{:>{}} ", keys[k].first, width[k]);
  fmt::print(out, "| {:>12} {:>8} | {:>10} {:>10} {:>10} | {}\n", "iter (ms)", "speedup", "compute", "exposed",
             "overlap", "busiest link");
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const Summary& s = summaries[i];
    for (std::size_t k = 0; k < keys.size(); ++k) fmt::print(out, "{:>{}} ", variants[i].settings[k].second, width[k]);
    fmt::print(out, "| {:>12.6f} {:>7.3f}x | {:>10.3f} {:>10.3f} {:>10.3f} | {}\n", s.iteration_ms, speedup(i),
               s.compute_ms, s.exposed_ms, s.overlapped_ms, s.busiest_link);
  }
  fmt::print(out, "\ncompute, exposed and overlapped communication: ms, means over ranks; speedup: the first "
                  "variant's iteration time over this one's.\n");
  bool tuned = false;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (summaries[i].auto_choices.empty()) continue;
    if (!tuned) fmt::print(out, "auto ran (per distinct call, the fastest candidate alone on an idle network):\n");
    tuned = true;
    fmt::print(out, "  {}: {}\n", settings_label(variants[i].settings), auto_choices_summary(summaries[i].auto_choices));
  }
  bool priced = false;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (summaries[i].nccl_choices.empty()) continue;
    if (!priced) fmt::print(out, "{}:\n", kNcclChoicesTitle);
    priced = true;
    fmt::print(out, "  {}: {}\n", settings_label(variants[i].settings), auto_choices_summary(summaries[i].nccl_choices));
  }
  return kExitOk;
}

int run(const topology::ClusterRequest& request, const AlgorithmSources& sources, const Flags& f,
        std::ostream& out) {
  if (!f.vary.empty()) return run_variants(variants_of(request, f), sources, f, out);
  const ClusterAndGpu system = load_cluster_and_gpu(request, f.gpu, f.profile);
  const topology::LoadedCluster& cluster = system.cluster;
  const models::DeviceProfile& device = system.device;
  const std::string trace_name = f.trace.size() == 1 ? f.trace.front() : fmt::format("{} files", f.trace.size());
  const models::OpGraph graph = load_run_graph(f, sources, trace_name, cluster, device);
  check_run_memory(f, {{all_to_all_gpus(graph), f.fidelity == "analytical"}}, 1);
  OutputFile timeline_file;
  if (!f.timeline.empty()) timeline_file = open_output_file("--timeline", f.timeline);
  const topology::Router router(cluster.topology);
  // No flow's record is read after it ends unless a timeline is written.
  experiments::Stack stack(cluster.topology, router, stack_options(f, sources, !f.timeline.empty()),
                           backend_options(cluster, device, parse_algorithm_flags(f.algorithms),
                                           parse_algorithm_options(sources.options)));
  sim::Simulator& sim = stack.sim();
  models::FlowNetwork& network = stack.network();
  models::NetworkBackend& backend = stack.backend();
  if (!f.timeline.empty()) {
    network.record_link_history(true);
    backend.record_flows(true);
  }
  // Progress on stderr every 10 s of wall time (slices of simulated time
  // between looks at the clock add no events: the same run).
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_report = wall_start;
  const auto report = [&](const models::ExecutionProgress& p) {
    check_interrupt();
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report).count() < 10.0) return;
    last_report = now;
    write_progress(fmt::format("run: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)",
                               p.now.since_start().to_seconds() * 1e3, p.ops_ended, p.ops_total,
                               std::chrono::duration<double>(now - wall_start).count()));
  };
  const models::ExecutionResult r = in_trace(trace_name, "", [&] {
    return models::execute(sim, graph, backend, report, sim::Duration::us(100), sm_contention(device));
  });
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
                       {"overlapped_communication_ms", ms(s.overlapped_communication)},
                       {"compute_slowed_by_communication_ms", ms(s.compute_slowed_by_communication)}});
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
    if (!backend.auto_choices().empty()) j["auto_choices"] = auto_choices_json(backend.auto_choices());
    if (!backend.nccl_choices().empty()) j["nccl_choices"] = auto_choices_json(backend.nccl_choices());
    out << j.dump(1) << '\n';
    return kExitOk;
  }
  if (f.format == "csv") {
    fmt::print(out, "rank,compute_ms,idle_ms,exposed_communication_ms,overlapped_communication_ms,"
                    "compute_slowed_by_communication_ms\n");
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      const models::RankSummary& s = r.ranks[k];
      fmt::print(out, "{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", k, ms(s.compute), iteration - ms(s.compute),
                 ms(s.exposed_communication), ms(s.overlapped_communication), ms(s.compute_slowed_by_communication));
    }
    return kExitOk;
  }
  fmt::print(out, "trace {} ({} ranks, {} ops) on {}\n\n", trace_name, graph.num_ranks, graph.ops.size(), cluster.source);
  fmt::print(out, "iteration time: {:.6f} ms\n\n", iteration);
  fmt::print(out, "{:>6} {:>12} {:>12} {:>14} {:>14} {:>14}\n", "rank", "compute ms", "idle ms", "exposed comm",
             "overlapped", "slowed by comm");
  for (std::size_t k = 0; k < r.ranks.size(); ++k) {
    const models::RankSummary& s = r.ranks[k];
    (void)compute_stream;
    fmt::print(out, "{:>6} {:>12.3f} {:>12.3f} {:>14.3f} {:>14.3f} {:>14.3f}\n", k, ms(s.compute),
               iteration - ms(s.compute), ms(s.exposed_communication), ms(s.overlapped_communication),
               ms(s.compute_slowed_by_communication));
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
  if (!backend.auto_choices().empty()) {
    fmt::print(out, "\nauto ran (per distinct call, the fastest candidate alone on an idle network; --format json has "
                    "each one's time):\n  {}\n",
               auto_choices_summary(backend.auto_choices()));
  }
  if (!backend.nccl_choices().empty()) {
    fmt::print(out, "\n{}:\n  {}\n", kNcclChoicesTitle, auto_choices_summary(backend.nccl_choices()));
  }
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand("run", "Simulate a trace of a job (docs/traces.md) on a cluster");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinksAndGpus);
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
  cmd->add_option("--gpu", f->gpu, "GPU profile that prices kernels in the trace: a built-in or a .json profile file");
  cmd->add_option("--profile", f->profile, "A GPU profile file")->option_text("FILE");
  add_network_flags(*cmd, f->fidelity, f->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms, "Collective algorithm per kind: KIND=NAME; nccl (NCCL's cost model) or auto alone: every kind")->take_all();
  cmd->add_option("--timeline", f->timeline, "Write a Chrome/Perfetto trace of the run")->option_text("FILE");
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--vary", f->vary,
                  fmt::format("Run once per combination: KEY=V1,V2,... (repeatable), a summary row each. KEY: {}",
                              experiments::knob_help(experiments::Sweeper::kRun)))
      ->option_text("KEY=V1,V2,...")
      ->take_all();
  cmd->add_option("--threads", f->threads, "With --vary: variants simulated in parallel (0: all cores)")
      ->check(in_range(0, 1024));
  cmd->add_flag("--skip-memory-check", f->skip_memory_check,
                "Run even when the simulation is estimated to need more memory than this machine has available");
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action] {
    f->given = knob_flags_given(*cmd, experiments::Sweeper::kRun);
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
