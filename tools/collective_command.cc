// `zionsim collective`: the nccl-tests table for simulated collectives.
// Sizes from --min-bytes to --max-bytes by --step-factor; for each, the time,
// algorithm bandwidth and bus bandwidth (nccl-tests' definitions) of every
// --algo, side by side, on the flow or analytical network model.

#include <CLI/CLI.hpp>

#include <cmath>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "experiments/interrupt.h"
#include "tools/cli_checks.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "experiments/parallel.h"
#include "tools/svg_plot.h"
#include "tools/variations.h"
#include "experiments/whatif_codec.h"
#include "experiments/distribution.h"
#include "topology/cluster_file.h"
#include "topology/degrade.h"
#include "topology/router.h"

namespace zx::tools {
namespace {

namespace coll = models::collectives;

// Columns whose rows say what ran: auto's pick, or NCCL's cost model's.
bool picks_per_call(const std::string& algorithm) {
  return models::backend_algorithm_role(algorithm).has_value();
}

struct Flags {
  std::string op = "all_reduce";
  std::vector<std::string> algorithms;
  std::string dtype = "fp32";
  std::string quantize;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double step_factor = 2;
  int max_points = 1000;
  int ranks = 0;
  std::string fidelity = "flow";
  double completion_quantum_ns = 0;  // exact: collective times are microseconds
  std::string format = "table";
  std::string gpu;
  std::string profile;
  std::vector<std::string> vary;
  std::set<std::string> given;  // flags on the command line that a --vary knob would contradict
  int threads = 0;  // rows simulated in parallel; 0: one per core
  std::string plot;
};

// One combination of --vary's values: the cluster and GPU it gives.
struct Variant {
  Settings settings;
  topology::ClusterRequest request;
  std::string gpu;
};

std::vector<Variant> variants_of(const topology::ClusterRequest& request, const Flags& f) {
  std::vector<Variation> variations;
  for (const std::string& text : f.vary) {
    variations.push_back(experiments::parse_knob_variation(text, experiments::Sweeper::kCollective));
  }
  experiments::check_knob_conflicts(variations, {f.given, {}, request.overrides});
  std::vector<Variant> out;
  for (Settings& settings : all_combinations(variations)) {
    experiments::Scenario s;
    s.cluster = request;
    s.gpu = f.gpu;
    for (const auto& [key, value] : settings) experiments::apply_knob(s, key, value, experiments::Sweeper::kCollective);
    std::vector<topology::Degradation> degradations;
    for (const std::string& d : s.cluster.degradations) degradations.push_back(topology::parse_degradation(d));
    if (topology::degrades_gpus(degradations) && !settings.empty()) {
      const auto degrade = std::find_if(settings.begin(), settings.end(), [](const auto& kv) { return kv.first == "degrade"; });
      if (degrade != settings.end()) {
        throw InputError(Diagnostic{"--vary", "degrade",
                                    fmt::format("'{}': `zionsim collective` runs no GPU kernels; a slow GPU is a "
                                                "what-if for whatif and run",
                                                degrade->second)});
      }
    }
    out.push_back(Variant{std::move(settings), s.cluster, s.gpu});
  }
  return out;
}

// "8", "64K", "1M", "2G": binary multiples, as nccl-tests reads -b/-e.
std::int64_t parse_size(const std::string& text, const char* flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::int64_t scale = 1;
  if (used + 1 == text.size()) {
    switch (text.back()) {
      case 'K': case 'k': scale = std::int64_t{1} << 10; break;
      case 'M': case 'm': scale = std::int64_t{1} << 20; break;
      case 'G': case 'g': scale = std::int64_t{1} << 30; break;
      default: used = 0;
    }
  } else if (used != text.size()) {
    used = 0;
  }
  if (used == 0 || !(value >= 0)) {
    throw InputError(Diagnostic{flag, "", fmt::format("expected a size such as 8, 64K, 1M or 1G, got '{}'", text)});
  }
  // 1e15 bytes at 1 GB/s is 1e18 ps, a tenth of the picosecond clock's range
  // (int64): larger messages could overflow simulated time.
  if (value * static_cast<double>(scale) > 1e15) {
    throw InputError(Diagnostic{flag, "", fmt::format("'{}' is more than the limit of 1e15 bytes per rank", text)});
  }
  return static_cast<std::int64_t>(value * static_cast<double>(scale));
}

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md of nccl-tests).
double bus_factor(coll::CollectiveKind kind, int n) {
  const double nn = n;
  switch (kind) {
    case coll::CollectiveKind::kAllReduce: return 2 * (nn - 1) / nn;
    case coll::CollectiveKind::kReduceScatter:
    case coll::CollectiveKind::kAllGather:
    case coll::CollectiveKind::kAllToAll: return (nn - 1) / nn;
    case coll::CollectiveKind::kBroadcast:
    case coll::CollectiveKind::kReduce: return 1;
  }
  return 1;
}

// The message sizes of the sweep, rounded down to whole elements. A sweep
// from 0 has a zero-byte row and continues from one element. Refuses more
// than `max_points` rows up front (a factor of 1.000001 would otherwise run
// for days).
std::vector<std::int64_t> sweep_sizes(std::int64_t lo, std::int64_t hi, double factor, int elem, int max_points) {
  std::vector<std::int64_t> sizes;
  double size = static_cast<double>(lo);
  if (lo == 0) {
    sizes.push_back(0);
    size = elem;
  }
  for (; size <= static_cast<double>(hi) * (1 + 1e-9); size *= factor) {
    if (static_cast<int>(sizes.size()) >= max_points) {
      throw InputError(Diagnostic{"--step-factor", "",
                                  fmt::format("the sweep from {} to {} bytes by a factor of {} has more than {} sizes; "
                                              "use a larger --step-factor or raise --max-points",
                                              lo, hi, factor, max_points)});
    }
    // Sizes round down to whole elements; a step that lands on the size
    // before it (small sizes, small factors) adds no row.
    const std::int64_t rounded = static_cast<std::int64_t>(std::llround(size)) / elem * elem;
    if (sizes.empty() || rounded != sizes.back()) sizes.push_back(rounded);
    if (lo == hi) break;
  }
  return sizes;
}

struct Row {
  std::size_t variant;
  int ranks;
  std::int64_t bytes;
  std::int64_t count;
  std::string algorithm;
  double time_us;
  double algbw;
  double busbw;
  std::string chosen;  // what "auto" or NCCL's model ran; empty for other columns
  std::vector<models::AutoChoice::Candidate> candidates;  // what they weighed
};

// A row as JSON and back, losslessly: what an MPI rank sends rank 0.
nlohmann::ordered_json encode_row(const Row& r) {
  return nlohmann::ordered_json{{"variant", r.variant},
                                {"ranks", r.ranks},
                                {"bytes", r.bytes},
                                {"count", r.count},
                                {"algorithm", r.algorithm},
                                {"time_us", encode_real(r.time_us)},
                                {"algbw", encode_real(r.algbw)},
                                {"busbw", encode_real(r.busbw)},
                                {"chosen", r.chosen},
                                {"candidates", encode_candidates(r.candidates)}};
}

Row decode_row(const nlohmann::json& j) {
  const std::string source = "an MPI rank's row";
  return Row{j.at("variant").get<std::size_t>(),
             j.at("ranks").get<int>(),
             j.at("bytes").get<std::int64_t>(),
             j.at("count").get<std::int64_t>(),
             j.at("algorithm").get<std::string>(),
             decode_real(j.at("time_us"), source, "/time_us"),
             decode_real(j.at("algbw"), source, "/algbw"),
             decode_real(j.at("busbw"), source, "/busbw"),
             j.at("chosen").get<std::string>(),
             decode_candidates(j.at("candidates"), source, "/candidates")};
}

// "1 KiB", "64 MiB": a size for the tuner's footnote.
std::string size_label(std::int64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (unit < 4 && value >= 1024 && std::fmod(value, 1024) == 0) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:g} {}", value, kUnits[unit]);
}

int run(const topology::ClusterRequest& base_request, const AlgorithmSources& sources, const Flags& f,
        std::ostream& out) {
  const auto kind = coll::parse_collective_kind(f.op);
  if (!kind) throw InputError(Diagnostic{"--op", "", fmt::format("unknown collective '{}'", f.op)});
  const auto dtype = coll::parse_data_type(f.dtype);
  const std::int64_t lo = parse_size(f.min_bytes, "--min-bytes");
  const std::int64_t hi = parse_size(f.max_bytes, "--max-bytes");
  if (lo > hi) throw InputError(Diagnostic{"--min-bytes", "", "expected --min-bytes <= --max-bytes"});
  if (!(f.step_factor > 1)) throw InputError(Diagnostic{"--step-factor", "", "expected a factor > 1"});
  const std::vector<Variant> variants = variants_of(base_request, f);
  const bool varied = !variants.front().settings.empty();
  const bool cluster_varied = std::any_of(variants.front().settings.begin(), variants.front().settings.end(),
                                          [](const auto& setting) { return setting.first == "cluster"; });

  std::vector<std::string> algorithms = f.algorithms;
  if (algorithms.empty()) {
    algorithms.push_back(*kind == coll::CollectiveKind::kAllToAll
                             ? models::default_collective_algorithms().at("all_to_all")
                             : std::string("ring"));
  }
  coll::CollectiveRegistry registry;
  fill_registry(sources, registry);
  // Quantized communication: the wire carries `quantize` elements; each rank
  // converts its buffer before and after (models/compute convert()).
  const int elem = coll::size_bytes(*dtype);
  std::optional<coll::DataType> wire;
  if (!f.quantize.empty()) {
    wire = coll::parse_data_type(f.quantize);
    if (!wire) throw InputError(Diagnostic{"--quantize", "", fmt::format("unknown type '{}'", f.quantize)});
  }
  const std::vector<std::int64_t> sizes = sweep_sizes(lo, hi, f.step_factor, elem, f.max_points);
  if (sizes.size() * variants.size() > static_cast<std::size_t>(f.max_points)) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} sizes x {} variants is more than --max-points {}",
                                                          sizes.size(), variants.size(), f.max_points)});
  }

  // Every variant's cluster, ranks and options, checked before anything runs.
  struct Setup {
    topology::LoadedCluster cluster;
    int ranks;
    models::DeviceProfile device;
    models::NetworkBackendOptions options;
  };
  std::vector<Setup> setups;
  for (const Variant& v : variants) {
    try {
      ClusterAndGpu system = load_cluster_and_gpu(v.request, v.gpu, f.profile);
      topology::LoadedCluster& cluster = system.cluster;
      const models::DeviceProfile& device = system.device;
      const int n = f.ranks > 0 ? f.ranks : cluster.topology.num_gpus();
      if (n > cluster.topology.num_gpus() || n < 1) {
        throw InputError(
            Diagnostic{"--ranks", "", fmt::format("expected 1 to {} ranks, got {}", cluster.topology.num_gpus(), n)});
      }
      models::NetworkBackendOptions options = backend_options(cluster, device, {});
      options.algorithm_options = parse_algorithm_options(sources.options);
      // Options only for the columns (and the tuner's candidates): one for
      // another algorithm is a typo.
      const bool tuned = std::any_of(algorithms.begin(), algorithms.end(), picks_per_call);
      if (tuned) check_algorithm_options_used(options.algorithm_options, algorithms);
      for (const auto& [name, text] : tuned ? std::map<std::string, std::string>{} : options.algorithm_options) {
        if (std::find(algorithms.begin(), algorithms.end(), name) == algorithms.end()) {
          std::string message = fmt::format("'{}={}': no --algo column runs '{}'", name, text, name);
          if (const auto guess = json::closest_match(name, algorithms)) message += fmt::format(" (did you mean '{}'?)", *guess);
          throw InputError(Diagnostic{"--options", "", message + fmt::format("; the columns: {}", fmt::join(algorithms, ", "))});
        }
      }
      for (const std::string& a : algorithms) check_algorithm_for(registry, "--algo", f.op, a);
      check_algorithm_options(options.algorithm_options, registry);
      setups.push_back(Setup{std::move(cluster), n, device, std::move(options)});
    } catch (const InputError& e) {
      if (!varied) throw;
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      for (Diagnostic& d : diagnostics) d.message += fmt::format(" (in the variant {})", settings_label(v.settings));
      throw InputError(std::move(diagnostics));
    }
  }

  // An unwritable --plot path must not cost the simulation.
  OutputFile plot_file;
  if (!f.plot.empty() && experiments::Mpi::rank() == 0) plot_file = open_output_file("--plot", f.plot);

  // Rows: sizes outermost, then variants, then algorithms (a table row's
  // columns). Each row is its own simulation, on a thread of its own, with
  // its own registry (a plug-in's factory need not be thread-safe).
  std::vector<std::unique_ptr<topology::Router>> routers;
  for (const Setup& s : setups) routers.push_back(std::make_unique<topology::Router>(s.cluster.topology));
  const std::size_t per_size = setups.size() * algorithms.size();
  std::vector<Row> rows(sizes.size() * per_size);
  const std::function<Row(std::size_t)> compute_row = [&](std::size_t i) {
    check_interrupt();
    const std::int64_t bytes = sizes[i / per_size];
    const std::size_t v = i % per_size / algorithms.size();
    const std::string& a = algorithms[i % algorithms.size()];
    const Setup& setup = setups[v];
    experiments::Stack stack(setup.cluster.topology, *routers[v],
                             {.fidelity = f.fidelity,
                              .completion_quantum_ns = f.completion_quantum_ns,
                              .plugins = sources.plugins,
                              .schedules = sources.schedules},
                             setup.options);
    coll::CollectiveRequest req;
    req.kind = *kind;
    req.ranks.resize(static_cast<std::size_t>(setup.ranks));
    for (int r = 0; r < setup.ranks; ++r) req.ranks[static_cast<std::size_t>(r)] = r;
    req.dtype = wire.value_or(*dtype);
    req.bytes_per_rank = sim::Bytes(wire ? bytes / elem * coll::size_bytes(*wire) : bytes);
    sim::Duration time = stack.run_collective(req, a);
    if (wire && bytes > 0) {
      const auto from = models::parse_data_type(f.dtype);
      const auto to = models::parse_data_type(f.quantize);
      time += models::convert(setup.device, bytes / elem, from, to).time +
              models::convert(setup.device, bytes / elem, to, from).time;
    }
    const double us = time.to_seconds() * 1e6;
    const double algbw = us > 0 ? static_cast<double>(bytes) / (us * 1e3) : 0;
    // nccl-tests' count is the element count each rank passes to NCCL: the
    // buffer's for all-reduce, broadcast and reduce, one rank's block for
    // all-gather and reduce-scatter, one peer's for all-to-all (its
    // *GetCollByteCount paramcount).
    const bool per_block = *kind == coll::CollectiveKind::kAllGather || *kind == coll::CollectiveKind::kReduceScatter ||
                           *kind == coll::CollectiveKind::kAllToAll;
    const std::int64_t count = bytes / elem / (per_block ? setup.ranks : 1);
    // What the tuner ran: auto's algorithm, or NCCL's algorithm/protocol.
    const std::vector<models::AutoChoice>& picks =
        models::is_nccl_cost_model(a) ? stack.backend().nccl_choices() : stack.backend().auto_choices();
    return Row{v,    setup.ranks, bytes, count, a, us, algbw, algbw * bus_factor(*kind, setup.ranks),
               picks.empty() ? std::string() : picks.front().chosen,
               picks.empty() ? std::vector<models::AutoChoice::Candidate>() : picks.front().candidates};
  };
  // Inside an MPI job the rows are spread over its ranks (docs/sweeps.md);
  // rank 0 alone goes on to print them.
  std::vector<double> costs;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double ranks = setups[i % per_size / algorithms.size()].ranks;
    costs.push_back(ranks * ranks * std::log2(2.0 + static_cast<double>(sizes[i / per_size])));
  }
  if (!parallel_map<Row>(rows.size(), f.threads, costs, compute_row, encode_row, decode_row, rows)) return kExitOk;

  // NCCL's graphs for variant v's group, for the NCCL cost-model columns:
  // nullopt when the group has fewer than 2 ranks or not the same number
  // on every server (the model needs both).
  std::vector<std::string> graph_algorithms;
  for (const std::string& a : algorithms) {
    if (models::is_nccl_cost_model(a) &&
        std::find(graph_algorithms.begin(), graph_algorithms.end(), a) == graph_algorithms.end()) {
      graph_algorithms.push_back(a);
    }
  }
  const auto graphs_of = [&](std::size_t v, const std::string& a) -> std::optional<NcclGraphs> {
    const topology::Topology& topo = setups[v].cluster.topology;
    std::map<int, int> on_server;  // server -> ranks of the group on it
    for (int r = 0; r < setups[v].ranks; ++r) ++on_server[topo.node(topo.gpu(r)).server];
    const int per_node = on_server.empty() ? 0 : on_server.begin()->second;
    const bool uniform = std::all_of(on_server.begin(), on_server.end(),
                                     [&](const auto& entry) { return entry.second == per_node; });
    if (!uniform || setups[v].ranks < 2) return std::nullopt;
    return nccl_graphs(setups[v].options, a, setups[v].ranks, per_node);
  };

  if (!f.plot.empty()) {
    // A curve per column: every algorithm of every variant.
    std::vector<CollectiveSeries> series(per_size);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      CollectiveSeries& s = series[i % per_size];
      const Row& r = rows[i];
      if (s.label.empty()) {
        s.label = varied ? r.algorithm + " " + settings_label(variants[r.variant].settings) : r.algorithm;
      }
      s.size_bytes.push_back(static_cast<double>(r.bytes));
      s.time_us.push_back(r.time_us);
      s.busbw_gbyte_per_s.push_back(r.busbw);
    }
    write_collective_svg(plot_file, series,
                         fmt::format("{} on {}, {}", f.op, setups.front().cluster.source, f.dtype));
    close_output_file("--plot", f.plot, plot_file);
  }

  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["cluster"] = setups.front().cluster.source;
    j["op"] = f.op;
    if (!varied) j["ranks"] = setups.front().ranks;
    j["dtype"] = f.dtype;
    if (wire) j["quantize"] = f.quantize;
    j["fidelity"] = f.fidelity;
    j["completion_quantum_ns"] = f.completion_quantum_ns;
    if (varied) j["vary"] = variations_json(f.vary);
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json result;
      if (varied) {
        result["variant"] = settings_json(variants[r.variant].settings);
        result["ranks"] = r.ranks;
      }
      result["size_bytes"] = r.bytes;
      result["count"] = r.count;
      result["algorithm"] = r.algorithm;
      result["time_us"] = r.time_us;
      result["algbw_gbyte_per_s"] = r.algbw;
      result["busbw_gbyte_per_s"] = r.busbw;
      if (picks_per_call(r.algorithm)) {
        result["chosen"] = r.chosen;
        result["candidates"] = candidates_json(r.candidates);
      }
      results.push_back(std::move(result));
    }
    j["results"] = std::move(results);
    if (!graph_algorithms.empty()) {
      nlohmann::ordered_json graphs = nlohmann::ordered_json::array();
      for (std::size_t v = 0; v < variants.size(); ++v) {
        for (const std::string& a : graph_algorithms) {
          const std::optional<NcclGraphs> g = graphs_of(v, a);
          if (!g) continue;
          nlohmann::ordered_json entry;
          if (varied) entry["variant"] = settings_json(variants[v].settings);
          entry["algorithm"] = a;
          entry.update(to_json(*g));
          graphs.push_back(std::move(entry));
        }
      }
      j["nccl_graphs"] = std::move(graphs);
    }
    out << j.dump(1) << '\n';
    return kExitOk;
  }
  if (f.format == "csv") {
    for (const auto& [key, value] : variants.front().settings) fmt::print(out, "{},", key);
    const bool tuned = std::any_of(algorithms.begin(), algorithms.end(), picks_per_call);
    fmt::print(out, "{}size_bytes,count,type,algorithm,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s{}\n",
               varied ? "ranks," : "", tuned ? ",chosen" : "");
    for (const Row& r : rows) {
      for (const auto& [key, value] : variants[r.variant].settings) fmt::print(out, "{},", csv_quoted(value));
      if (varied) fmt::print(out, "{},", r.ranks);
      fmt::print(out, "{},{},{},{},{:.3f},{:.4f},{:.4f}{}\n", r.bytes, r.count, f.dtype, csv_field(r.algorithm),
                 r.time_us, r.algbw, r.busbw, tuned ? "," + csv_field(r.chosen) : "");
    }
    return kExitOk;
  }
  // Columns: every algorithm of every variant, labelled "ALGO VARIANT" when varied.
  std::vector<std::string> labels;
  for (const Variant& v : variants) {
    for (const std::string& a : algorithms) labels.push_back(varied ? a + " " + settings_label(v.settings) : a);
  }
  std::vector<std::size_t> widths;
  for (const std::string& l : labels) widths.push_back(std::max<std::size_t>(33, l.size()));
  const std::string where =
      cluster_varied ? std::string("the ranks and cluster of each variant")
                     : fmt::format("{} of {}",
                                   varied ? std::string("the ranks of each variant")
                                          : fmt::format("{} ranks", setups.front().ranks),
                                   setups.front().cluster.source);
  fmt::print(out, "# zionsim collective: {} on {}, {}{}, fidelity {}\n", f.op, where, f.dtype,
             wire ? fmt::format(" (on the wire: {})", f.quantize) : "", f.fidelity);
  fmt::print(out, "#\n# {:>12} {:>12} {:>6}", "size", "count", "type");
  for (std::size_t c = 0; c < labels.size(); ++c) fmt::print(out, " | {:^{}}", labels[c], widths[c]);
  fmt::print(out, "\n# {:>12} {:>12} {:>6}", "(B)", "(elements)", "");
  for (std::size_t c = 0; c < labels.size(); ++c) {
    fmt::print(out, " | {:>{}} {:>10} {:>10}", "time(us)", widths[c] - 22, "algbw", "busbw");
  }
  fmt::print(out, "\n");
  for (std::size_t i = 0; i < rows.size(); i += labels.size()) {
    fmt::print(out, "  {:>12} {:>12} {:>6}", rows[i].bytes, rows[i].count, f.dtype);
    for (std::size_t c = 0; c < labels.size(); ++c) {
      const Row& r = rows[i + c];
      fmt::print(out, " | {:>{}.2f} {:>10.2f} {:>10.2f}", r.time_us, widths[c] - 22, r.algbw, r.busbw);
    }
    fmt::print(out, "\n");
  }
  if (varied) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      fmt::print(out, "# {}: {} ranks of {}\n", settings_label(variants[v].settings), setups[v].ranks,
                 setups[v].cluster.source);
    }
  }
  // What the tuner ran, as runs of sizes with one choice.
  for (std::size_t c = 0; c < labels.size(); ++c) {
    if (!picks_per_call(rows[c].algorithm)) continue;
    std::vector<std::string> spans;
    for (std::size_t i = c; i < rows.size();) {
      std::size_t j = i;
      while (j + labels.size() < rows.size() && rows[j + labels.size()].chosen == rows[i].chosen) j += labels.size();
      spans.push_back(i == j ? fmt::format("{} at {}", rows[i].chosen, size_label(rows[i].bytes))
                             : fmt::format("{} from {} to {}", rows[i].chosen, size_label(rows[i].bytes),
                                           size_label(rows[j].bytes)));
      i = j + labels.size();
    }
    fmt::print(out, "# {} ran {} ({})\n", labels[c], fmt::join(spans, "; "),
               models::is_nccl_cost_model(rows[c].algorithm)
                   ? "algorithm/protocol as NCCL's tuner picks them, by its cost model"
                   : "the fastest of its candidates, each alone on an idle network");
  }
  // NCCL's graphs behind the nccl columns, per variant, as NCCL_DEBUG=INFO
  // would list them: the numbers its tuner multiplies.
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (const std::string& a : graph_algorithms) {
      if (const std::optional<NcclGraphs> g = graphs_of(v, a)) {
        fmt::print(out, "# {}'s graphs (NCCL's topology search, replayed){}: {}\n", a,
                   varied ? ", " + settings_label(variants[v].settings) : "", to_string(*g));
      }
    }
  }
  fmt::print(out, "# algbw = size / time; busbw = algbw x {} (nccl-tests); GB/s\n",
             *kind == coll::CollectiveKind::kAllReduce ? "2(n-1)/n"
             : *kind == coll::CollectiveKind::kBroadcast || *kind == coll::CollectiveKind::kReduce ? "1"
                                                                                                   : "(n-1)/n");
  const topology::CommunicationLatencies& c = setups.front().cluster.communication;
  const bool nccl = std::any_of(algorithms.begin(), algorithms.end(), [](const std::string& a) { return models::is_nccl_cost_model(a); });
  fmt::print(out, "# communication library{}: launch {}, per transfer {} inside a server, {} between servers{}{}\n",
             varied ? " (first variant)" : "", c.launch.to_string(), c.transfer.to_string(),
             c.network_transfer.to_string(),
             c.peer_gap > sim::Duration::zero() ? fmt::format(", {} between a rank's peers", c.peer_gap.to_string())
                                                : "",
             nccl ? " (not in the nccl columns: NCCL's cost model has its own)" : "");
  // The ring's and the double binary tree's defaults, one channel (and, for
  // the trees, one unpipelined chunk), keep big groups cheap to simulate but
  // leave each server through one GPU and its NIC, where NCCL's rings and
  // trees use every NIC: say so, and how to ask for more, when it matters.
  const topology::Topology& t = setups.front().cluster.topology;
  std::map<int, int> members;  // server -> ranks of the group on it
  for (int r = 0; r < setups.front().ranks; ++r) ++members[t.node(t.gpu(r)).server];
  int most = 0;
  for (const auto& [server, count] : members) most = std::max(most, count);
  const auto defaults_used = [&](std::string_view name) {
    return members.size() > 1 && most > 1 && std::find(algorithms.begin(), algorithms.end(), name) != algorithms.end() &&
           !setups.front().options.algorithm_options.contains(std::string(name));
  };
  if (defaults_used("ring")) {
    fmt::print(out,
               "# ring: 1 channel (its default), so each ring leaves a server through one GPU and its NIC; NCCL's "
               "rings leave through all of them: --options 'ring={{\"channels\": {}}}' ({}x the steps to simulate)\n",
               most, most);
  }
  if (defaults_used("double_binary_tree")) {
    constexpr int kChunks = 16;  // pieces of 4 MiB per tree and channel at 1 GiB on 8 channels
    fmt::print(out,
               "# double_binary_tree: 1 channel and 1 chunk (its defaults), so each tree leaves a server through "
               "one GPU and its NIC and passes the whole buffer hop by hop; NCCL's trees use every NIC and "
               "pipeline: --options 'double_binary_tree={{\"channels\": {}, \"chunks\": {}}}' ({}x the steps to "
               "simulate)\n",
               most, kChunks, most * kChunks);
  }
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "collective", "Time collectives over a size sweep, algorithms side by side (the nccl-tests table)");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/true, DegradeFlag::kLinks);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--op", f->op, "The collective")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"}))
      ->capture_default_str();
  cmd->add_option("--algo", f->algorithms,
                  "Algorithm(s) to compare (zionsim list collectives); several give columns side by side")
      ->take_all();
  cmd->add_option("--dtype", f->dtype, "Element type")->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}))->capture_default_str();
  cmd->add_option("--quantize", f->quantize,
                  "Communicate in this type: fewer bytes on the wire, plus quantize/dequantize kernels")
      ->check(CLI::IsMember({"fp16", "bf16", "fp8"}));
  cmd->add_option("--min-bytes,-b", f->min_bytes, "Smallest size (8, 64K, 1M, 1G)")->capture_default_str();
  cmd->add_option("--max-bytes,-e", f->max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("--step-factor,-f", f->step_factor, "Multiply the size by this between rows")->capture_default_str();
  cmd->add_option("--max-points", f->max_points, "Refuse a sweep of more sizes than this")
      ->check(in_range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--ranks", f->ranks, "Use the first N GPUs (default: all)")->check(in_range(1, 1 << 20));
  cmd->add_option("--gpu", f->gpu, "GPU profile for reductions and quantization: a built-in or a .json profile file (default: the cluster's)");
  cmd->add_option("--profile", f->profile, "A GPU profile file (a calibration result) for reductions and quantization")
      ->option_text("FILE");
  add_network_flags(*cmd, f->fidelity, f->completion_quantum_ns);
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_option("--threads", f->threads, "Rows simulated in parallel (0: all cores)")->check(in_range(0, 1024));
  cmd->add_option("--plot", f->plot, "Write time and bus bandwidth against size as SVG, a curve per column")
      ->option_text("FILE.svg");
  cmd->add_option("--vary", f->vary,
                  fmt::format("Also sweep a knob: KEY=V1,V2,... (repeatable; every combination gets its columns). KEY: {}",
                              experiments::knob_help(experiments::Sweeper::kCollective)))
      ->option_text("KEY=V1,V2,...")
      ->take_all();
  cmd->parse_complete_callback([cmd, request, sources, f, action = context.action] {
    f->given = knob_flags_given(*cmd, experiments::Sweeper::kCollective);
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
