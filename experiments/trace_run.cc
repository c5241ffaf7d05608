// File: experiments/trace_run.cc

#include "experiments/trace_run.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/input_file.h"
#include "experiments/interrupt.h"
#include "experiments/memory_estimate.h"
#include "experiments/parallel.h"
#include "experiments/placement.h"
#include "experiments/sweep_shards.h"
#include "experiments/stack.h"
#include "experiments/whatif.h"
#include "experiments/whatif_codec.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "topology/router.h"
#include "workloads/chakra_import.h"
#include "workloads/kineto_import.h"
#include "workloads/trace.h"

namespace zx::experiments {
namespace {

double ms(sim::Duration d) { return d.to_seconds() * 1e3; }

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

// --- loading ------------------------------------------------------------------

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

// The format of a trace whose first file is `first`. Sniffs the file's head:
// parsing a 100 MB trace just to guess its format would triple the load
// time. Read as every reader reads (bounded, regular files only, gzip
// inflated: base/input_file.h). Only the root object's own keys count: a
// kernel or argument named "schema_version" deep in a Kineto trace does not
// make it zionsim's.
std::string detect_trace_format(const std::string& first) {
  const std::string head = read_input_file(first).substr(0, 64 * 1024);
  const std::vector<std::string> keys = root_keys(head);
  const auto has = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  if (has("traceEvents")) return "kineto";
  if (has("schema_version")) return "zionsim";
  return workloads::looks_like_chakra(first) ? "chakra" : "zionsim";
}

// zionsim's and Kineto's traces are JSON: a binary first file is most likely
// a Chakra .et, which the error says.
void check_json_trace(const std::string& first, const std::string& kind) {
  const std::string bytes = read_input_file(first);
  const std::size_t start = bytes.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && bytes[start] != '{' && bytes[start] != '[' && workloads::looks_like_chakra(first)) {
    throw InputError(Diagnostic{first, "",
                                fmt::format("not a {} trace (JSON) but a Chakra protobuf trace (.et); use "
                                            "--trace-format chakra (or detect)",
                                            kind == "zionsim" ? "zionsim" : "Kineto")});
  }
}

// The algorithms the hooks or the scenario give: kind -> name, and name ->
// options.
std::map<std::string, std::string> algorithms_of(const TraceRunHooks& hooks, const Scenario& s) {
  return hooks.algorithms ? hooks.algorithms() : s.algorithms;
}
std::map<std::string, std::string> algorithm_options_of(const TraceRunHooks& hooks, const Scenario& s) {
  return hooks.algorithm_options ? hooks.algorithm_options() : s.algorithm_options;
}

// The trace on this cluster: its ranks must be GPUs of the cluster; GPUs
// the cluster degrades (--degrade gpu:R=SPEED) compute slower. The
// algorithms a trace's collectives may name are the registry's (built-in,
// plug-ins, schedules, NCCL's cost model and the tuner); the algorithms'
// options, asked for once the registry is filled, are checked against it
// and set in `options`.
models::OpGraph load_run_graph(const TraceRunRequest& request, const Scenario& s, const std::string& trace_name,
                               const ClusterAndGpu& system, const TraceRunHooks& hooks,
                               std::map<std::string, std::string>& options) {
  models::collectives::CollectiveRegistry registry;
  fill_registry(s.plugins, s.schedules, registry);
  options = algorithm_options_of(hooks, request.scenario);
  check_algorithm_options(options, registry);
  models::OpGraph graph = load_any_trace(request.trace, request.trace_format, system.device, registry.names());
  const topology::LoadedCluster& cluster = system.cluster;
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

// --- memory -------------------------------------------------------------------

// A run's size for the memory estimate: the GPUs of the trace's largest
// all-to-all, which its memory grows with (its flows, one per pair of
// members, are in flight together; other collectives start a few flows per
// member), and whether its network is analytical.
struct RunSize {
  std::int64_t gpus = 0;
  NetworkMemory memory = NetworkMemory::kFlows;
};

RunSize run_size(const models::OpGraph& graph, const Scenario& s) {
  std::size_t largest = 0;
  for (const models::CollectiveCall& c : graph.collectives) {
    if (c.kind == models::collectives::CollectiveKind::kAllToAll) largest = std::max(largest, c.ranks.size());
  }
  return {static_cast<std::int64_t>(largest), network_memory(s.fidelity)};
}

// Refuses, before anything runs, runs estimated to need more memory than
// this machine has (experiments/memory_estimate.h, fitted on DLRM
// iterations, whose all-to-alls keep a few flows in flight per pair of
// GPUs): the largest alone, then the `threads` largest at once.
void check_run_memory(const TraceRunRequest& request, const std::vector<RunSize>& runs, int threads) {
  if (!request.memory_check || runs.empty()) return;
  const std::optional<std::int64_t> available = available_memory_bytes();
  if (!available) return;
  const bool kept = request.timeline;
  std::vector<std::tuple<std::int64_t, std::int64_t, NetworkMemory>> bytes;  // (estimate, GPUs, fidelity's)
  for (const RunSize& run : runs) {
    bytes.emplace_back(estimated_simulation_bytes(run.gpus, run.memory, kept), run.gpus, run.memory);
  }
  std::sort(bytes.begin(), bytes.end(), std::greater<>());
  const std::string why = fmt::format(
      "{}{}, as a DLRM iteration's all-to-alls take; README, \"How long a what-if takes\"",
      per_pair_text(std::get<2>(bytes.front())), kept ? " and 900 KB per GPU for the records --timeline keeps" : "");
  if (std::get<0>(bytes.front()) > *available) {
    throw InputError(Diagnostic{
        "--trace", "",
        fmt::format("a run whose all-to-alls span {} GPUs would need about {} to simulate ({}), and this machine "
                    "has {} available; give {}--skip-memory-check to try anyway",
                    std::get<1>(bytes.front()), gib_text(std::get<0>(bytes.front())), why, gib_text(*available),
                    kept ? "no --timeline (its records grow with every flow), or " : "")});
  }
  const std::size_t wanted =
      threads > 0 ? static_cast<std::size_t>(threads) : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t running = std::min(bytes.size(), wanted);
  std::int64_t together = 0;
  for (std::size_t k = 0; k < running; ++k) together += std::get<0>(bytes[k]);
  if (together > *available) {
    throw InputError(Diagnostic{
        "--threads", "",
        fmt::format("the {} largest variants, simulated at once, would need about {} together ({}), and this "
                    "machine has {} available; give --threads 1, or --skip-memory-check to try anyway",
                    running, gib_text(together), why, gib_text(*available))});
  }
}

// --- results ------------------------------------------------------------------

std::string link_name(const topology::Topology& topology, std::uint32_t l) {
  const topology::LinkInfo& info = topology.link(topology::LinkId{l});
  return fmt::format("{}->{}", topology.node(info.src).name, topology.node(info.dst).name);
}

std::map<std::string, double> in_ms(const std::map<std::string, sim::Duration>& durations) {
  std::map<std::string, double> out;
  for (const auto& [key, d] : durations) out[key] = ms(d);
  return out;
}

// A run summed up, from its result and its stack after the run.
TraceRunSummary summarize(const models::OpGraph& graph, const topology::LoadedCluster& cluster,
                          const models::ExecutionResult& r, Stack& stack) {
  TraceRunSummary s;
  s.ranks = graph.num_ranks;
  s.ops = graph.ops.size();
  s.cluster = cluster.source;
  s.iteration_ms = ms(r.makespan.since_start());
  for (const models::RankSummary& rank : r.ranks) {
    s.compute_ms += ms(rank.compute);
    s.communication_ms += ms(rank.communication);
    s.exposed_ms += ms(rank.exposed_communication);
    s.overlapped_ms += ms(rank.overlapped_communication);
  }
  const double n = static_cast<double>(std::max<std::size_t>(1, r.ranks.size()));
  s.compute_ms /= n;
  s.communication_ms /= n;
  s.exposed_ms /= n;
  s.overlapped_ms /= n;
  s.time_by_category_ms = in_ms(r.time_by_category);
  s.exposed_by_category_ms = in_ms(r.exposed_by_category);
  s.fingerprint = stack.sim().fingerprint();
  s.auto_choices = stack.backend().auto_choices();
  s.nccl_choices = stack.backend().nccl_choices();
  if (const std::vector<std::uint32_t> hot = stack.network().hottest_links(1); !hot.empty()) {
    s.busiest_link = link_name(cluster.topology, hot.front());
  }
  return s;
}

// The one run in detail: per rank, the critical path, the hottest links.
TraceRunDetail detail_of(const models::OpGraph& graph, const topology::Topology& topology,
                         const models::ExecutionResult& r, const models::FlowNetwork& network) {
  TraceRunDetail d;
  const double iteration = ms(r.makespan.since_start());
  for (const models::RankSummary& s : r.ranks) {
    d.ranks.push_back({.rank = static_cast<int>(d.ranks.size()),
                       .compute_ms = ms(s.compute),
                       .idle_ms = iteration - ms(s.compute),
                       .communication_ms = ms(s.communication),
                       .exposed_ms = ms(s.exposed_communication),
                       .overlapped_ms = ms(s.overlapped_communication),
                       .slowed_by_communication_ms = ms(s.compute_slowed_by_communication)});
  }
  for (std::uint32_t i : r.critical_path) {
    const models::Op& op = graph.ops[i];
    d.critical_path.push_back({i, op.rank, graph.stream_names[static_cast<std::size_t>(op.stream)], op.name,
                               std::string(models::to_string(op.kind)), r.ops[i].start, r.ops[i].end});
  }
  for (std::uint32_t l : network.hottest_links(5)) {
    d.hottest_links.push_back({l, link_name(topology, l), network.link(l).bytes_carried, network.link(l).busy_time});
  }
  return d;
}

std::string trace_name_of(const TraceRunRequest& request) {
  return request.trace.size() == 1 ? request.trace.front() : fmt::format("{} files", request.trace.size());
}

// --- one run --------------------------------------------------------------------

// Progress on stderr every 10 s of wall time (slices of simulated time
// between looks at the clock add no events: the same run), and a look for
// an interrupt between slices.
std::function<void(const models::ExecutionProgress&)> progress_reporter() {
  const auto start = std::chrono::steady_clock::now();
  return [start, last = start](const models::ExecutionProgress& p) mutable {
    check_interrupt();
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last).count() < 10.0) return;
    last = now;
    write_progress(fmt::format("run: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)",
                               p.now.since_start().to_seconds() * 1e3, p.ops_ended, p.ops_total,
                               std::chrono::duration<double>(now - start).count()));
  };
}

TraceRunReport run_one(const TraceRunRequest& request, const TraceRunHooks& hooks) {
  TraceRunReport report{.trace_name = trace_name_of(request)};
  const Scenario& s = request.scenario;
  const ClusterAndGpu system = load_cluster_and_gpu(s.cluster, s.gpu, s.profile);
  std::map<std::string, std::string> options;
  models::OpGraph graph = load_run_graph(request, s, report.trace_name, system, hooks, options);
  check_run_memory(request, {run_size(graph, s)}, 1);
  if (hooks.before_simulating) hooks.before_simulating();
  const topology::Router router(system.cluster.topology);
  TraceRunVariant variant{.scenario = s};
  variant.scenario.algorithms = algorithms_of(hooks, s);
  // No flow's record is read after it ends unless a timeline is written.
  Stack stack(system.cluster.topology, router, stack_options(s, request.timeline),
              backend_options(system.cluster, system.device, variant.scenario.algorithms, options));
  if (request.timeline) {
    stack.network().record_link_history(true);
    stack.backend().record_flows(true);
  }
  models::ExecutionResult r = in_trace(report.trace_name, "", [&] {
    return models::execute(stack.sim(), graph, stack.backend(), progress_reporter(), sim::Duration::us(100),
                           sm_contention(system.device));
  });
  TraceRunDetail detail = detail_of(graph, system.cluster.topology, r, stack.network());
  if (request.timeline) {
    models::NetworkActivityOptions activity_options;
    activity_options.max_ranks = kTimelineRanks;
    detail.network_activity = models::collect_network_activity(graph, stack.backend(), stack.network(),
                                                               system.cluster.topology, activity_options);
  }
  variant.summary = summarize(graph, system.cluster, r, stack);
  if (request.timeline) {
    detail.graph = std::move(graph);
    detail.execution = std::move(r);
  }
  report.variants.push_back(std::move(variant));
  report.detail = std::move(detail);
  return report;
}

// --- variants -------------------------------------------------------------------

// Every combination of the varied knobs, each as the scenario it makes;
// the scenario's algorithms are the varied kinds alone (the base's go under
// them once asked for).
std::vector<TraceRunVariant> variants_of(const TraceRunRequest& request) {
  check_knob_conflicts(request.vary, request.given);
  if (request.timeline) {
    throw InputError(
        Diagnostic{"--timeline", "", "writes one run; it cannot be combined with --vary (run that variant alone)"});
  }
  std::vector<TraceRunVariant> out;
  for (Settings& settings : all_combinations(request.vary)) {
    TraceRunVariant v{.settings = std::move(settings), .scenario = request.scenario};
    v.scenario.algorithms.clear();
    for (const auto& [key, value] : v.settings) apply_knob(v.scenario, key, value, Sweeper::kRun);
    out.push_back(std::move(v));
  }
  if (out.size() > 1000) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} variants; at most 1000 per run", out.size())});
  }
  return out;
}

// A variant loaded and checked: what its simulation starts from.
struct Setup {
  ClusterAndGpu system;
  std::map<std::string, std::string> options;
  models::OpGraph graph;
};

// Loads a variant's cluster, GPU and trace and checks its algorithms; sets
// the variant's algorithms to the base's with the varied kinds over them.
Setup set_up(const TraceRunRequest& request, const TraceRunHooks& hooks, const std::string& trace_name,
             TraceRunVariant& v) {
  ClusterAndGpu system = load_cluster_and_gpu(v.scenario.cluster, v.scenario.gpu, v.scenario.profile);
  std::map<std::string, std::string> options;
  models::OpGraph graph = load_run_graph(request, v.scenario, trace_name, system, hooks, options);
  models::collectives::CollectiveRegistry registry;
  fill_registry(v.scenario.plugins, v.scenario.schedules, registry);
  std::map<std::string, std::string> algorithms = algorithms_of(hooks, request.scenario);
  for (const auto& [kind, name] : v.scenario.algorithms) algorithms[kind] = name;
  for (const auto& [kind, name] : algorithms) check_algorithm_for(registry, "--algo", kind, name);
  v.scenario.algorithms = std::move(algorithms);
  return Setup{std::move(system), std::move(options), std::move(graph)};
}

std::optional<TraceRunReport> run_variants(const TraceRunRequest& request, const TraceRunHooks& hooks) {
  TraceRunReport report{.trace_name = trace_name_of(request), .variants = variants_of(request)};
  std::vector<TraceRunVariant>& variants = report.variants;
  // Every variant is checked before any runs.
  std::vector<Setup> setups;
  std::vector<RunSize> sizes;
  for (TraceRunVariant& v : variants) {
    try {
      setups.push_back(set_up(request, hooks, report.trace_name, v));
    } catch (const InputError& e) {
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      for (Diagnostic& d : diagnostics) d.message += fmt::format(" (in the variant {})", settings_label(v.settings));
      throw InputError(std::move(diagnostics));
    }
    sizes.push_back(run_size(setups.back().graph, v.scenario));
  }
  check_run_memory(request, sizes, request.threads);
  if (hooks.before_simulating) hooks.before_simulating();
  // The variants run side by side, each on its own simulator and network.
  const std::function<TraceRunSummary(std::size_t)> simulate = [&](std::size_t i) {
    const Setup& setup = setups[i];
    const Scenario& s = variants[i].scenario;
    const topology::Router router(setup.system.cluster.topology);
    Stack stack(setup.system.cluster.topology, router, stack_options(s),
                backend_options(setup.system.cluster, setup.system.device, s.algorithms, setup.options));
    const std::string label = variants.size() > 1 ? settings_label(variants[i].settings) : "";
    const models::ExecutionResult r = in_trace(report.trace_name, label, [&] {
      return models::execute(stack.sim(), setup.graph, stack.backend(), sm_contention(setup.system.device));
    });
    return summarize(setup.graph, setup.system.cluster, r, stack);
  };
  // Inside an MPI job the variants are spread over its ranks
  // (docs/sweeps.md), the largest all-to-alls first; rank 0 alone goes on.
  std::vector<double> costs;
  for (const RunSize& size : sizes) costs.push_back(static_cast<double>(size.gpus) * static_cast<double>(size.gpus));
  const TaskPlacement placement = task_placement(
      request.placement, run_choosing_flags(),
      [&](std::size_t i) { return nlohmann::ordered_json{{"settings", settings_json(variants[i].settings)}}; },
      [&](std::size_t i) {
        std::vector<std::string> values;
        for (const auto& [key, value] : variants[i].settings) values.push_back(value);
        return values;
      });
  const std::function<nlohmann::ordered_json(const TraceRunSummary&)> encode = encode_trace_summary;
  PlacedResults<TraceRunSummary> placed = placed_map<TraceRunSummary>(variants.size(), request.threads, costs,
                                                                      placement, simulate, encode, decode_trace_summary);
  if (!placed.prints) return std::nullopt;
  if (request.placement.shard) {
    report.shard = shard_document(request.placement.command, variants.size(), *request.placement.shard,
                                  shard_outcomes(placed, encode));
    return report;
  }
  std::vector<TraceRunSummary>& summaries = placed.results;
  for (std::size_t i = 0; i < variants.size(); ++i) variants[i].summary = std::move(summaries[i]);
  return report;
}

nlohmann::ordered_json encode_ms_map(const std::map<std::string, double>& values) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : values) j[key] = encode_real(value);
  return j;
}

std::map<std::string, double> decode_ms_map(const nlohmann::json& j, const std::string& source,
                                            const std::string& where) {
  std::map<std::string, double> out;
  for (const auto& [key, value] : j.items()) out[key] = decode_real(value, source, where + "/" + key);
  return out;
}

}  // namespace

const std::map<std::string, int>& run_choosing_flags() {
  static const std::map<std::string, int> flags = {
      {"--vary", -1},   {"--threads", 1}, {"--format", 1},  {"--timeline", 1},
      {"--shard", 1},   {"--results", 1}, {"--skip-memory-check", 0},
  };
  return flags;
}

std::optional<TraceRunReport> run_trace(const TraceRunRequest& request, const TraceRunHooks& hooks) {
  if (request.vary.empty() && request.placement.placed()) {
    throw InputError(Diagnostic{request.placement.shard ? "--shard" : "--results", "",
                                "shares out or keeps the variants of a --vary sweep; a run without --vary is one "
                                "simulation"});
  }
  std::optional<TraceRunReport> report = request.vary.empty() ? run_one(request, hooks) : run_variants(request, hooks);
  if (!report || report->shard) return report;
  for (TraceRunVariant& v : report->variants) {
    const double mine = v.summary.iteration_ms;
    v.speedup = mine > 0 ? report->variants.front().summary.iteration_ms / mine : 0.0;
  }
  return report;
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (!std::filesystem::is_directory(p)) {
      files.push_back(p);
      continue;
    }
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
  }
  return files;
}

models::OpGraph load_any_trace(const std::vector<std::string>& paths, const std::string& format,
                               const models::DeviceProfile& device, const std::vector<std::string>& algorithms) {
  const std::vector<std::string> files = expand_trace_paths(paths);
  if (files.empty()) throw InputError(Diagnostic{"--trace", "", "no trace files found"});
  const std::string kind = format == "detect" ? detect_trace_format(files.front()) : format;
  if (kind == "zionsim" || kind == "kineto") check_json_trace(files.front(), kind);
  if (kind == "chakra") return workloads::import_chakra(files);
  if (kind == "kineto") return workloads::import_kineto(files);
  if (kind == "zionsim") {
    if (files.size() != 1) {
      throw InputError(Diagnostic{"--trace", "", fmt::format("a zionsim trace is one file, got {}", files.size())});
    }
    return workloads::load_trace(files.front(), &device, &algorithms);
  }
  throw InputError(Diagnostic{"--trace-format", "", fmt::format("importing {} traces is not implemented yet", kind)});
}

nlohmann::ordered_json encode_trace_summary(const TraceRunSummary& s) {
  return nlohmann::ordered_json{{"ranks", s.ranks},
                                {"ops", s.ops},
                                {"cluster", s.cluster},
                                {"iteration_ms", encode_real(s.iteration_ms)},
                                {"compute_ms", encode_real(s.compute_ms)},
                                {"communication_ms", encode_real(s.communication_ms)},
                                {"exposed_ms", encode_real(s.exposed_ms)},
                                {"overlapped_ms", encode_real(s.overlapped_ms)},
                                {"time_by_category_ms", encode_ms_map(s.time_by_category_ms)},
                                {"exposed_by_category_ms", encode_ms_map(s.exposed_by_category_ms)},
                                {"fingerprint", s.fingerprint},
                                {"busiest_link", s.busiest_link},
                                {"auto_choices", encode_auto_choices(s.auto_choices)},
                                {"nccl_choices", encode_auto_choices(s.nccl_choices)}};
}

TraceRunSummary decode_trace_summary(const nlohmann::json& j) {
  const std::string source = "an MPI rank's summary";
  TraceRunSummary s;
  s.ranks = j.at("ranks").get<int>();
  s.ops = j.at("ops").get<std::size_t>();
  s.cluster = j.at("cluster").get<std::string>();
  s.iteration_ms = decode_real(j.at("iteration_ms"), source, "/iteration_ms");
  s.compute_ms = decode_real(j.at("compute_ms"), source, "/compute_ms");
  s.communication_ms = decode_real(j.at("communication_ms"), source, "/communication_ms");
  s.exposed_ms = decode_real(j.at("exposed_ms"), source, "/exposed_ms");
  s.overlapped_ms = decode_real(j.at("overlapped_ms"), source, "/overlapped_ms");
  s.time_by_category_ms = decode_ms_map(j.at("time_by_category_ms"), source, "/time_by_category_ms");
  s.exposed_by_category_ms = decode_ms_map(j.at("exposed_by_category_ms"), source, "/exposed_by_category_ms");
  s.fingerprint = j.at("fingerprint").get<std::uint64_t>();
  s.busiest_link = j.at("busiest_link").get<std::string>();
  s.auto_choices = decode_auto_choices(j.at("auto_choices"), source, "/auto_choices");
  s.nccl_choices = decode_auto_choices(j.at("nccl_choices"), source, "/nccl_choices");
  return s;
}

}  // namespace zx::experiments
