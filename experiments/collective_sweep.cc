// File: experiments/collective_sweep.cc

#include "experiments/collective_sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "experiments/interrupt.h"
#include "experiments/parallel.h"
#include "experiments/placement.h"
#include "experiments/sweep_shards.h"
#include "experiments/scenario.h"
#include "experiments/whatif_codec.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"
#include "models/execution/backend_algorithms.h"
#include "topology/degrade.h"
#include "topology/router.h"

namespace zx::experiments {
namespace {

namespace coll = models::collectives;

// One combination of --vary's values: the cluster and GPU it gives.
struct Variant {
  Settings settings;
  topology::ClusterRequest request;
  std::string gpu;
};

// Refuses a varied GPU degradation: the sweep runs no GPU kernels.
void check_no_gpu_degradation(const Scenario& s, const Settings& settings) {
  std::vector<topology::Degradation> degradations;
  for (const std::string& d : s.cluster.degradations) degradations.push_back(topology::parse_degradation(d));
  if (!topology::degrades_gpus(degradations) || settings.empty()) return;
  const auto degrade =
      std::find_if(settings.begin(), settings.end(), [](const auto& kv) { return kv.first == "degrade"; });
  if (degrade != settings.end()) {
    throw InputError(Diagnostic{"--vary", "degrade",
                                fmt::format("'{}': `zionsim collective` runs no GPU kernels; a slow GPU is a "
                                            "what-if for whatif and run",
                                            degrade->second)});
  }
}

std::vector<Variant> variants_of(const CollectiveSweepRequest& r) {
  std::vector<Variation> variations;
  for (const std::string& text : r.vary) variations.push_back(parse_knob_variation(text, Sweeper::kCollective));
  check_knob_conflicts(variations, {r.flags_given, {}, r.scenario.cluster.overrides});
  std::vector<Variant> out;
  for (Settings& settings : all_combinations(variations)) {
    Scenario s = r.scenario;
    for (const auto& [key, value] : settings) apply_knob(s, key, value, Sweeper::kCollective);
    check_no_gpu_degradation(s, settings);
    out.push_back(Variant{std::move(settings), s.cluster, s.gpu});
  }
  return out;
}

// A variant's cluster, group, GPU and backend options, checked.
struct Setup {
  topology::LoadedCluster cluster;
  int ranks;
  models::DeviceProfile device;
  models::NetworkBackendOptions options;
};

// Options only for the columns (and the tuner's candidates): one for
// another algorithm is a typo.
void check_options_for_columns(const std::map<std::string, std::string>& options,
                               const std::vector<std::string>& algorithms) {
  const bool tuned = std::any_of(algorithms.begin(), algorithms.end(), picks_per_call);
  if (tuned) check_algorithm_options_used(options, algorithms);
  for (const auto& [name, text] : tuned ? std::map<std::string, std::string>{} : options) {
    if (std::find(algorithms.begin(), algorithms.end(), name) == algorithms.end()) {
      std::string message = fmt::format("'{}={}': no --algo column runs '{}'", name, text, name);
      if (const auto guess = json::closest_match(name, algorithms)) {
        message += fmt::format(" (did you mean '{}'?)", *guess);
      }
      message += fmt::format("; the columns: {}", fmt::join(algorithms, ", "));
      throw InputError(Diagnostic{"--options", "", message});
    }
  }
}

Setup setup_of(const CollectiveSweepRequest& r, const Variant& v, const std::vector<std::string>& algorithms,
               const coll::CollectiveRegistry& registry) {
  ClusterAndGpu system = load_cluster_and_gpu(v.request, v.gpu, r.scenario.profile);
  const int gpus = system.cluster.topology.num_gpus();
  const int n = r.ranks > 0 ? r.ranks : gpus;
  if (n > gpus || n < 1) {
    throw InputError(Diagnostic{"--ranks", "", fmt::format("expected 1 to {} ranks, got {}", gpus, n)});
  }
  models::NetworkBackendOptions options = backend_options(system.cluster, system.device, {});
  options.algorithm_options = parse_algorithm_options(r.options);
  check_options_for_columns(options.algorithm_options, algorithms);
  const std::string kind(coll::to_string(r.kind));
  for (const std::string& a : algorithms) check_algorithm_for(registry, "--algo", kind, a);
  check_algorithm_options(options.algorithm_options, registry);
  return Setup{std::move(system.cluster), n, system.device, std::move(options)};
}

// Every variant's setup, checked before anything runs; with --vary an
// error names its variant.
std::vector<Setup> setups_of(const CollectiveSweepRequest& r, const std::vector<Variant>& variants,
                             const std::vector<std::string>& algorithms, const coll::CollectiveRegistry& registry) {
  std::vector<Setup> setups;
  for (const Variant& v : variants) {
    try {
      setups.push_back(setup_of(r, v, algorithms, registry));
    } catch (const InputError& e) {
      if (variants.front().settings.empty()) throw;
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      for (Diagnostic& d : diagnostics) d.message += fmt::format(" (in the variant {})", settings_label(v.settings));
      throw InputError(std::move(diagnostics));
    }
  }
  return setups;
}

// A row as JSON and back, losslessly: what an MPI rank sends rank 0.
nlohmann::ordered_json encode_row(const CollectiveSweepRow& r) {
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

CollectiveSweepRow decode_row(const nlohmann::json& j) {
  const std::string source = "an MPI rank's row";
  return CollectiveSweepRow{j.at("variant").get<std::size_t>(),
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

struct RowKey {
  std::size_t variant = 0;
  const std::string& algorithm;
  std::int64_t bytes = 0;
};

std::vector<std::string> setting_values(const Settings& settings) {
  std::vector<std::string> out;
  for (const auto& [key, value] : settings) out.push_back(value);
  return out;
}

// The rows to simulate. Each row is its own simulation, on a thread of its
// own, with its own registry (a plug-in's factory need not be thread-safe).
class RowSimulator {
 public:
  RowSimulator(const CollectiveSweepRequest& request, const std::vector<std::string>& algorithms,
               const std::vector<std::int64_t>& sizes, const std::vector<Setup>& setups)
      : r_(request), algorithms_(algorithms), sizes_(sizes), setups_(setups) {
    for (const Setup& s : setups_) routers_.push_back(std::make_unique<topology::Router>(s.cluster.topology));
  }

  std::size_t count() const { return sizes_.size() * per_size(); }

  // What row i costs to simulate, relatively: an MPI job's ranks take the
  // largest first.
  double cost(std::size_t i) const {
    const double ranks = setups_[i % per_size() / algorithms_.size()].ranks;
    return ranks * ranks * std::log2(2.0 + static_cast<double>(sizes_[i / per_size()]));
  }

  CollectiveSweepRow row(std::size_t i) const;
  // What row i is: its variant, algorithm and size.
  RowKey key(std::size_t i) const {
    return RowKey{i % per_size() / algorithms_.size(), algorithms_[i % algorithms_.size()], sizes_[i / per_size()]};
  }

 private:
  std::size_t per_size() const { return setups_.size() * algorithms_.size(); }
  // The time of the collective of `bytes` per rank with `algorithm` on
  // `setup`, quantization included, and what NCCL's model or auto picked.
  sim::Duration time_of(const Setup& setup, Stack& stack, std::int64_t bytes, const std::string& algorithm) const;

  const CollectiveSweepRequest& r_;
  const std::vector<std::string>& algorithms_;
  const std::vector<std::int64_t>& sizes_;
  const std::vector<Setup>& setups_;
  std::vector<std::unique_ptr<topology::Router>> routers_;
};

sim::Duration RowSimulator::time_of(const Setup& setup, Stack& stack, std::int64_t bytes,
                                    const std::string& algorithm) const {
  const int elem = coll::size_bytes(r_.dtype);
  coll::CollectiveRequest req;
  req.kind = r_.kind;
  req.ranks.resize(static_cast<std::size_t>(setup.ranks));
  for (int k = 0; k < setup.ranks; ++k) req.ranks[static_cast<std::size_t>(k)] = k;
  req.dtype = r_.wire.value_or(r_.dtype);
  req.bytes_per_rank = sim::Bytes(r_.wire ? bytes / elem * coll::size_bytes(*r_.wire) : bytes);
  sim::Duration time = stack.run_collective(req, algorithm);
  if (r_.wire && bytes > 0) {
    // Quantized communication: each rank converts its buffer before and after.
    const auto from = models::parse_data_type(coll::to_string(r_.dtype));
    const auto to = models::parse_data_type(coll::to_string(*r_.wire));
    time += models::convert(setup.device, bytes / elem, from, to).time +
            models::convert(setup.device, bytes / elem, to, from).time;
  }
  return time;
}

CollectiveSweepRow RowSimulator::row(std::size_t i) const {
  check_interrupt();
  const std::int64_t bytes = sizes_[i / per_size()];
  const std::size_t v = i % per_size() / algorithms_.size();
  const std::string& a = algorithms_[i % algorithms_.size()];
  const Setup& setup = setups_[v];
  Stack stack(setup.cluster.topology, *routers_[v],
              {.fidelity = r_.scenario.fidelity,
               .completion_quantum_ns = r_.scenario.completion_quantum_ns,
               .plugins = r_.scenario.plugins,
               .schedules = r_.scenario.schedules},
              setup.options);
  const double us = time_of(setup, stack, bytes, a).to_seconds() * 1e6;
  const double algbw = us > 0 ? static_cast<double>(bytes) / (us * 1e3) : 0;
  // nccl-tests' count is the element count each rank passes to NCCL: the
  // buffer's for all-reduce, broadcast and reduce, one rank's block for
  // all-gather and reduce-scatter, one peer's for all-to-all (its
  // *GetCollByteCount paramcount).
  const bool per_block = r_.kind == coll::CollectiveKind::kAllGather ||
                         r_.kind == coll::CollectiveKind::kReduceScatter || r_.kind == coll::CollectiveKind::kAllToAll;
  const std::int64_t count = bytes / coll::size_bytes(r_.dtype) / (per_block ? setup.ranks : 1);
  // What the tuner ran: auto's algorithm, or NCCL's algorithm/protocol.
  const std::vector<models::AutoChoice>& picks =
      models::is_nccl_cost_model(a) ? stack.backend().nccl_choices() : stack.backend().auto_choices();
  return CollectiveSweepRow{v,    setup.ranks, bytes, count, a, us, algbw, algbw * bus_factor(r_.kind, setup.ranks),
                            picks.empty() ? std::string() : picks.front().chosen,
                            picks.empty() ? std::vector<models::AutoChoice::Candidate>() : picks.front().candidates};
}

// Servers of `setup`'s group -> its ranks on each.
std::map<int, int> ranks_per_server(const Setup& setup) {
  const topology::Topology& t = setup.cluster.topology;
  std::map<int, int> members;
  for (int r = 0; r < setup.ranks; ++r) ++members[t.node(t.gpu(r)).server];
  return members;
}

// NCCL's graphs for `setup`'s group, for NCCL cost-model `algorithm`:
// nullopt when the group has fewer than 2 ranks or not the same number on
// every server (the model needs both).
std::optional<NcclGraphs> graphs_of(const Setup& setup, const std::string& algorithm) {
  const std::map<int, int> on_server = ranks_per_server(setup);
  const int per_node = on_server.empty() ? 0 : on_server.begin()->second;
  const bool uniform = std::all_of(on_server.begin(), on_server.end(),
                                   [&](const auto& entry) { return entry.second == per_node; });
  if (!uniform || setup.ranks < 2) return std::nullopt;
  return nccl_graphs(setup.options, algorithm, setup.ranks, per_node);
}

DefaultChannels default_channels_of(const Setup& setup, const std::vector<std::string>& algorithms) {
  const std::map<int, int> members = ranks_per_server(setup);
  DefaultChannels out;
  for (const auto& [server, count] : members) out.ranks_per_server = std::max(out.ranks_per_server, count);
  const auto defaults_used = [&](const std::string& name) {
    return members.size() > 1 && out.ranks_per_server > 1 &&
           std::find(algorithms.begin(), algorithms.end(), name) != algorithms.end() &&
           !setup.options.algorithm_options.contains(name);
  };
  out.ring = defaults_used("ring");
  out.double_binary_tree = defaults_used("double_binary_tree");
  return out;
}

// What the report says of each variant besides its rows.
std::vector<CollectiveSweepVariant> describe_variants(const std::vector<Variant>& variants,
                                                      const std::vector<Setup>& setups,
                                                      const std::vector<std::string>& algorithms) {
  std::vector<std::string> nccl;  // the NCCL cost-model columns, once each
  for (const std::string& a : algorithms) {
    if (models::is_nccl_cost_model(a) && std::find(nccl.begin(), nccl.end(), a) == nccl.end()) nccl.push_back(a);
  }
  std::vector<CollectiveSweepVariant> out;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    CollectiveSweepVariant d{variants[v].settings, setups[v].cluster.source, setups[v].ranks, {}};
    for (const std::string& a : nccl) {
      if (std::optional<NcclGraphs> g = graphs_of(setups[v], a)) d.nccl_graphs.emplace_back(a, *g);
    }
    out.push_back(std::move(d));
  }
  return out;
}

// The sizes of the sweep, with the request's range and counts checked.
std::vector<std::int64_t> sizes_of(const CollectiveSweepRequest& r, std::size_t variants) {
  const std::vector<std::int64_t> sizes =
      sweep_sizes(r.min_bytes, r.max_bytes, r.step_factor, coll::size_bytes(r.dtype), r.max_points);
  if (sizes.size() * variants > static_cast<std::size_t>(r.max_points)) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} sizes x {} variants is more than --max-points {}",
                                                          sizes.size(), variants, r.max_points)});
  }
  return sizes;
}

// "1 KiB", "64 MiB": a size of a span of choices.
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

}  // namespace

std::int64_t parse_message_size(const std::string& text, const std::string& flag) {
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

double bus_factor(coll::CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case coll::CollectiveKind::kAllReduce: return 2 * (n - 1) / n;
    case coll::CollectiveKind::kReduceScatter:
    case coll::CollectiveKind::kAllGather:
    case coll::CollectiveKind::kAllToAll: return (n - 1) / n;
    case coll::CollectiveKind::kBroadcast:
    case coll::CollectiveKind::kReduce: return 1;
  }
  return 1;
}

std::string_view bus_factor_formula(coll::CollectiveKind kind) {
  switch (kind) {
    case coll::CollectiveKind::kAllReduce: return "2(n-1)/n";
    case coll::CollectiveKind::kBroadcast:
    case coll::CollectiveKind::kReduce: return "1";
    default: return "(n-1)/n";
  }
}

std::vector<std::int64_t> sweep_sizes(std::int64_t lo, std::int64_t hi, double factor, int element_bytes,
                                      int max_points) {
  std::vector<std::int64_t> sizes;
  double size = static_cast<double>(lo);
  if (lo == 0) {
    sizes.push_back(0);
    size = element_bytes;
  }
  for (; size <= static_cast<double>(hi) * (1 + 1e-9); size *= factor) {
    if (static_cast<int>(sizes.size()) >= max_points) {
      throw InputError(Diagnostic{"--step-factor", "",
                                  fmt::format("the sweep from {} to {} bytes by a factor of {} has more than {} sizes; "
                                              "use a larger --step-factor or raise --max-points",
                                              lo, hi, factor, max_points)});
    }
    const std::int64_t rounded = static_cast<std::int64_t>(std::llround(size)) / element_bytes * element_bytes;
    if (sizes.empty() || rounded != sizes.back()) sizes.push_back(rounded);
    if (lo == hi) break;
  }
  return sizes;
}

const std::map<std::string, int>& collective_choosing_flags() {
  static const std::map<std::string, int> flags = {
      {"--min-bytes", 1}, {"-b", 1},        {"--max-bytes", 1}, {"-e", 1},      {"--step-factor", 1},
      {"-f", 1},          {"--max-points", 1}, {"--algo", -1},   {"--vary", -1}, {"--threads", 1},
      {"--format", 1},    {"--plot", 1},     {"--shard", 1},     {"--results", 1},
  };
  return flags;
}

bool picks_per_call(const std::string& algorithm) { return models::backend_algorithm_role(algorithm).has_value(); }

std::optional<CollectiveSweepReport> run_collective_sweep(const CollectiveSweepRequest& r,
                                                          const std::function<void()>& before_simulating) {
  if (r.min_bytes > r.max_bytes) throw InputError(Diagnostic{"--min-bytes", "", "expected --min-bytes <= --max-bytes"});
  if (!(r.step_factor > 1)) throw InputError(Diagnostic{"--step-factor", "", "expected a factor > 1"});
  const std::vector<Variant> variants = variants_of(r);
  CollectiveSweepReport report;
  report.kind = r.kind;
  report.dtype = r.dtype;
  report.algorithms = r.algorithms;
  if (report.algorithms.empty()) {
    report.algorithms.push_back(r.kind == coll::CollectiveKind::kAllToAll
                                    ? models::default_collective_algorithms().at("all_to_all")
                                    : std::string("ring"));
  }
  coll::CollectiveRegistry registry;
  fill_registry(r.scenario.plugins, r.scenario.schedules, registry);
  report.sizes = sizes_of(r, variants.size());
  const std::vector<Setup> setups = setups_of(r, variants, report.algorithms, registry);
  if (before_simulating) before_simulating();

  // Inside an MPI job the rows are spread over its ranks (docs/sweeps.md);
  // rank 0 alone goes on to report them.
  const RowSimulator simulator(r, report.algorithms, report.sizes, setups);
  std::vector<double> costs;
  for (std::size_t i = 0; i < simulator.count(); ++i) costs.push_back(simulator.cost(i));
  const TaskPlacement placement = task_placement(
      r.placement, collective_choosing_flags(),
      [&](std::size_t i) {
        const RowKey key = simulator.key(i);
        return nlohmann::ordered_json{{"settings", settings_json(variants[key.variant].settings)},
                                      {"algorithm", key.algorithm},
                                      {"bytes", key.bytes}};
      },
      [&](std::size_t i) { return setting_values(variants[simulator.key(i).variant].settings); });
  const std::function<nlohmann::ordered_json(const CollectiveSweepRow&)> encode = encode_row;
  PlacedResults<CollectiveSweepRow> placed = placed_map<CollectiveSweepRow>(
      simulator.count(), r.threads, costs, placement, [&](std::size_t i) { return simulator.row(i); }, encode,
      decode_row);
  if (!placed.prints) return std::nullopt;
  if (r.placement.shard) {
    report.shard = shard_document(r.placement.command, simulator.count(), *r.placement.shard,
                                  shard_outcomes(placed, encode));
    return report;
  }
  report.rows = std::move(placed.results);
  report.variants = describe_variants(variants, setups, report.algorithms);
  report.communication = setups.front().cluster.communication;
  report.default_channels = default_channels_of(setups.front(), report.algorithms);
  return report;
}

bool CollectiveSweepReport::varies(std::string_view knob) const {
  const Settings& s = variants.front().settings;
  return std::any_of(s.begin(), s.end(), [&](const auto& setting) { return setting.first == knob; });
}

bool CollectiveSweepReport::has_nccl_columns() const {
  return std::any_of(algorithms.begin(), algorithms.end(), [](const auto& a) { return models::is_nccl_cost_model(a); });
}

std::vector<ChoiceSpan> choice_spans(const CollectiveSweepReport& report, std::size_t column) {
  const std::vector<CollectiveSweepRow>& rows = report.rows;
  const std::size_t step = report.columns();
  std::vector<ChoiceSpan> spans;
  for (std::size_t i = column; i < rows.size();) {
    std::size_t j = i;
    while (j + step < rows.size() && rows[j + step].chosen == rows[i].chosen) j += step;
    spans.push_back(ChoiceSpan{rows[i].chosen, rows[i].bytes, rows[j].bytes});
    i = j + step;
  }
  return spans;
}

std::string describe_choices(const std::vector<ChoiceSpan>& spans) {
  std::vector<std::string> words;
  for (const ChoiceSpan& s : spans) {
    words.push_back(s.from_bytes == s.to_bytes
                        ? fmt::format("{} at {}", s.chosen, size_label(s.from_bytes))
                        : fmt::format("{} from {} to {}", s.chosen, size_label(s.from_bytes), size_label(s.to_bytes)));
  }
  return fmt::format("{}", fmt::join(words, "; "));
}

std::vector<std::string> channel_advice(const DefaultChannels& d) {
  std::vector<std::string> lines;
  if (d.ring) {
    lines.push_back(fmt::format(
        "ring: 1 channel (its default), so each ring leaves a server through one GPU and its NIC; NCCL's rings leave "
        "through all of them: --options 'ring={{\"channels\": {}}}' ({}x the steps to simulate)",
        d.ranks_per_server, d.ranks_per_server));
  }
  if (d.double_binary_tree) {
    lines.push_back(fmt::format(
        "double_binary_tree: 1 channel and 1 chunk (its defaults), so each tree leaves a server through one GPU and "
        "its NIC and passes the whole buffer hop by hop; NCCL's trees use every NIC and pipeline: --options "
        "'double_binary_tree={{\"channels\": {}, \"chunks\": {}}}' ({}x the steps to simulate)",
        d.ranks_per_server, d.kTreeChunks, d.ranks_per_server * d.kTreeChunks));
  }
  return lines;
}

std::vector<std::string> column_labels(const CollectiveSweepReport& report) {
  std::vector<std::string> labels;
  for (const CollectiveSweepVariant& v : report.variants) {
    for (const std::string& a : report.algorithms) {
      labels.push_back(report.varied() ? a + " " + settings_label(v.settings) : a);
    }
  }
  return labels;
}

Schema collective_sweep_schema(const CollectiveSweepReport& report) {
  Schema s;
  for (const auto& setting : report.variants.front().settings) {
    s.columns.push_back({.name = setting.first, .format = Format::kQuotedText, .outputs = kCsv});
  }
  if (report.varied()) {
    s.columns.push_back({.name = "variant", .format = Format::kJson, .outputs = kJson});
    s.columns.push_back({.name = "ranks", .format = Format::kInteger, .outputs = kCsv | kJson});
  }
  // The widths are nccl-tests' (its table's time column is a little wider).
  s.columns.insert(
      s.columns.end(),
      {{.name = "size_bytes", .header = "size", .unit = "B", .format = Format::kInteger, .width = 12},
       {.name = "count", .header = "count", .unit = "elements", .format = Format::kInteger, .width = 12},
       {.name = "type", .format = Format::kText, .width = 6, .outputs = kTable | kCsv},
       {.name = "algorithm", .format = Format::kText, .outputs = kCsv | kJson},
       {.name = "time_us", .header = "time", .unit = "us", .format = Format::kFixed, .decimals = 3,
        .table_decimals = 2, .width = 11},
       {.name = "algbw_gbyte_per_s", .header = "algbw", .format = Format::kFixed, .decimals = 4,
        .table_decimals = 2, .width = 10},
       {.name = "busbw_gbyte_per_s", .header = "busbw", .format = Format::kFixed, .decimals = 4,
        .table_decimals = 2, .width = 10}});
  if (std::any_of(report.algorithms.begin(), report.algorithms.end(), picks_per_call)) {
    s.columns.push_back(
        {.name = "chosen", .format = Format::kText, .outputs = kCsv | kJson, .absent = Absent::kOmitted});
    s.columns.push_back(
        {.name = "candidates", .format = Format::kJson, .outputs = kJson, .absent = Absent::kOmitted});
  }
  return s;
}

std::vector<Row> collective_sweep_rows(const CollectiveSweepReport& report) {
  const bool tuned = std::any_of(report.algorithms.begin(), report.algorithms.end(), picks_per_call);
  const std::string dtype(coll::to_string(report.dtype));
  std::vector<Row> rows;
  for (const CollectiveSweepRow& r : report.rows) {
    Row& row = rows.emplace_back();
    const Settings& settings = report.variants[r.variant].settings;
    for (const auto& setting : settings) row.emplace_back(setting.second);
    if (report.varied()) row.insert(row.end(), {settings_json(settings), std::int64_t{r.ranks}});
    row.insert(row.end(), {r.bytes, r.count, dtype, r.algorithm, r.time_us, r.algbw, r.busbw});
    if (tuned && picks_per_call(r.algorithm)) row.insert(row.end(), {r.chosen, candidates_json(r.candidates)});
    if (tuned && !picks_per_call(r.algorithm)) row.resize(row.size() + 2);  // absent
  }
  return rows;
}

TableGroups collective_sweep_groups(const CollectiveSweepReport& report) {
  return TableGroups{.columns = {"time_us", "algbw_gbyte_per_s", "busbw_gbyte_per_s"}, .labels = column_labels(report)};
}

}  // namespace zx::experiments
