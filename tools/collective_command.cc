// `zionsim collective`: the nccl-tests table for simulated collectives.
// Sizes from --min-bytes to --max-bytes by --step-factor; for each, the time,
// algorithm bandwidth and bus bandwidth (nccl-tests' definitions) of every
// --algo, side by side, on the flow or analytical network model.

#include <CLI/CLI.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "topology/cluster_file.h"
#include "topology/router.h"

namespace zx::tools {
namespace {

namespace coll = models::collectives;

struct Flags {
  std::string op = "all_reduce";
  std::vector<std::string> algorithms;
  std::vector<std::string> options;  // NAME=JSON
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
};

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
    sizes.push_back(static_cast<std::int64_t>(std::llround(size)) / elem * elem);
    if (lo == hi) break;
  }
  return sizes;
}

struct Row {
  std::int64_t bytes;
  std::int64_t count;
  std::string algorithm;
  double time_us;
  double algbw;
  double busbw;
};

int run(const topology::ClusterRequest& request, const AlgorithmSources& sources, const Flags& f,
        std::ostream& out) {
  const auto kind = coll::parse_collective_kind(f.op);
  if (!kind) throw InputError(Diagnostic{"--op", "", fmt::format("unknown collective '{}'", f.op)});
  const auto dtype = coll::parse_data_type(f.dtype);
  const topology::LoadedCluster cluster = topology::load_cluster(request);
  const topology::Topology& topo = cluster.topology;
  const int n = f.ranks > 0 ? f.ranks : topo.num_gpus();
  if (n > topo.num_gpus() || n < 1) {
    throw InputError(Diagnostic{"--ranks", "", fmt::format("expected 1 to {} ranks, got {}", topo.num_gpus(), n)});
  }
  const std::int64_t lo = parse_size(f.min_bytes, "--min-bytes");
  const std::int64_t hi = parse_size(f.max_bytes, "--max-bytes");
  if (lo > hi) throw InputError(Diagnostic{"--min-bytes", "", "expected --min-bytes <= --max-bytes"});
  if (!(f.step_factor > 1)) throw InputError(Diagnostic{"--step-factor", "", "expected a factor > 1"});

  std::vector<std::string> algorithms = f.algorithms;
  if (algorithms.empty()) algorithms.push_back(*kind == coll::CollectiveKind::kAllToAll ? "direct" : "ring");
  coll::CollectiveRegistry registry;
  fill_registry(sources, registry);
  const models::DeviceProfile device = device_for(cluster, f.gpu, "");
  models::NetworkBackendOptions options = backend_options(cluster, device, {});
  for (const std::string& o : f.options) {
    const auto eq = o.find('=');
    if (eq == std::string::npos) throw InputError(Diagnostic{"--options", "", fmt::format("expected NAME=JSON, got '{}'", o)});
    options.algorithm_options[o.substr(0, eq)] = o.substr(eq + 1);
  }
  for (const std::string& a : algorithms) {
    if (!models::is_nccl_algorithm(a)) (void)registry.create(a, options.algorithm_options[a]);  // fail early
  }
  // Quantized communication: the wire carries `quantize` elements; each rank
  // converts its buffer before and after (models/compute convert()).
  const int elem = coll::size_bytes(*dtype);
  std::optional<coll::DataType> wire;
  if (!f.quantize.empty()) {
    wire = coll::parse_data_type(f.quantize);
    if (!wire) throw InputError(Diagnostic{"--quantize", "", fmt::format("unknown type '{}'", f.quantize)});
  }

  const topology::Router router(topo);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
  std::vector<Row> rows;
  for (const std::int64_t bytes : sweep_sizes(lo, hi, f.step_factor, elem, f.max_points)) {
    for (const std::string& a : algorithms) {
      sim::Simulator sim;
      const std::unique_ptr<models::FlowNetwork> owned_network =
          make_network(sim, topo, f.fidelity, f.completion_quantum_ns);
      models::FlowNetwork& network = *owned_network;
      models::NetworkBackend backend(sim, network, router, registry, options);
      coll::CollectiveRequest req;
      req.kind = *kind;
      req.ranks = ranks;
      req.dtype = wire.value_or(*dtype);
      req.bytes_per_rank = sim::Bytes(wire ? bytes / elem * coll::size_bytes(*wire) : bytes);
      backend.run(req, a, {});
      sim.run();
      sim::Duration time = sim.now().since_start();
      if (wire && bytes > 0) {
        const auto from = models::parse_data_type(f.dtype);
        const auto to = models::parse_data_type(f.quantize);
        time += models::convert(device, bytes / elem, from, to).time + models::convert(device, bytes / elem, to, from).time;
      }
      const double us = time.to_seconds() * 1e6;
      const double algbw = us > 0 ? static_cast<double>(bytes) / (us * 1e3) : 0;
      rows.push_back({bytes, bytes / elem, a, us, algbw, algbw * bus_factor(*kind, n)});
    }
  }

  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["cluster"] = cluster.source;
    j["op"] = f.op;
    j["ranks"] = n;
    j["dtype"] = f.dtype;
    if (wire) j["quantize"] = f.quantize;
    j["fidelity"] = f.fidelity;
    j["completion_quantum_ns"] = f.completion_quantum_ns;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      results.push_back({{"size_bytes", r.bytes}, {"count", r.count}, {"algorithm", r.algorithm},
                         {"time_us", r.time_us}, {"algbw_gbyte_per_s", r.algbw}, {"busbw_gbyte_per_s", r.busbw}});
    }
    j["results"] = std::move(results);
    out << j.dump(1) << '\n';
    return kExitOk;
  }
  if (f.format == "csv") {
    fmt::print(out, "size_bytes,count,type,algorithm,time_us,algbw_gbyte_per_s,busbw_gbyte_per_s\n");
    for (const Row& r : rows) {
      fmt::print(out, "{},{},{},{},{:.3f},{:.4f},{:.4f}\n", r.bytes, r.count, f.dtype, r.algorithm, r.time_us, r.algbw, r.busbw);
    }
    return kExitOk;
  }
  fmt::print(out, "# zionsim collective: {} on {} ranks of {}, {}{}, fidelity {}\n", f.op, n, cluster.source, f.dtype,
             wire ? fmt::format(" (on the wire: {})", f.quantize) : "", f.fidelity);
  fmt::print(out, "#\n# {:>12} {:>12} {:>6}", "size", "count", "type");
  for (const std::string& a : algorithms) fmt::print(out, " | {:^33}", a);
  fmt::print(out, "\n# {:>12} {:>12} {:>6}", "(B)", "(elements)", "");
  for (std::size_t i = 0; i < algorithms.size(); ++i) {
    fmt::print(out, " | {:>11} {:>10} {:>10}", "time(us)", "algbw", "busbw");
  }
  fmt::print(out, "\n");
  for (std::size_t i = 0; i < rows.size(); i += algorithms.size()) {
    fmt::print(out, "  {:>12} {:>12} {:>6}", rows[i].bytes, rows[i].count, f.dtype);
    for (std::size_t k = 0; k < algorithms.size(); ++k) {
      const Row& r = rows[i + k];
      fmt::print(out, " | {:>11.2f} {:>10.2f} {:>10.2f}", r.time_us, r.algbw, r.busbw);
    }
    fmt::print(out, "\n");
  }
  fmt::print(out, "# algbw = size / time; busbw = algbw x {} (nccl-tests); GB/s\n",
             *kind == coll::CollectiveKind::kAllReduce ? "2(n-1)/n"
             : *kind == coll::CollectiveKind::kBroadcast || *kind == coll::CollectiveKind::kReduce ? "1"
                                                                                                   : "(n-1)/n");
  return kExitOk;
}

}  // namespace

void add_collective_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "collective", "Time collectives over a size sweep, algorithms side by side (the nccl-tests table)");
  auto request = add_cluster_options(*cmd);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--op", f->op, "The collective")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce"}))
      ->capture_default_str();
  cmd->add_option("--algo", f->algorithms,
                  "Algorithm(s) to compare (zionsim list collectives); several give columns side by side")
      ->take_all();
  cmd->add_option("--options", f->options, "Options of an algorithm as JSON, e.g. --options 'ring={\"chunks\": 4}'")
      ->option_text("NAME=JSON")
      ->take_all();
  cmd->add_option("--dtype", f->dtype, "Element type")->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}))->capture_default_str();
  cmd->add_option("--quantize", f->quantize,
                  "Communicate in this type: fewer bytes on the wire, plus quantize/dequantize kernels")
      ->check(CLI::IsMember({"fp16", "bf16", "fp8"}));
  cmd->add_option("--min-bytes,-b", f->min_bytes, "Smallest size (8, 64K, 1M, 1G)")->capture_default_str();
  cmd->add_option("--max-bytes,-e", f->max_bytes, "Largest size")->capture_default_str();
  cmd->add_option("--step-factor,-f", f->step_factor, "Multiply the size by this between rows")->capture_default_str();
  cmd->add_option("--max-points", f->max_points, "Refuse a sweep of more sizes than this")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--ranks", f->ranks, "Use the first N GPUs (default: all)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--gpu", f->gpu, "GPU profile for reductions and quantization (default: the cluster's)");
  add_network_flags(*cmd, f->fidelity, f->completion_quantum_ns);
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->parse_complete_callback([request, sources, f, action = context.action] {
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
