// `zionsim calibrate-network`: the network model against nccl-tests runs of
// a real cluster. Each result row is simulated (the same collective, size,
// ranks and element type, with the algorithm whatif would use); the link
// parameters the rows determine are fitted (efficiency and latency of the
// RoCE fabric for runs across servers, plus the share all-to-all traffic
// gets when other collectives were measured too; of NVLink for runs inside
// one), and the fitted cluster file and a report are written.
// docs/network_calibration.md is the user's guide.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/error.h"
#include "calibration/nccl_tests.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/compute/device_profile.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "sim/simulator.h"
#include "experiments/interrupt.h"
#include "tools/cli_checks.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "experiments/parallel.h"
#include "topology/cluster_file.h"
#include "topology/router.h"

namespace zx::tools {
namespace {

namespace coll = models::collectives;

struct Flags {
  std::vector<std::string> files;
  std::string op;
  std::vector<std::string> algorithms;  // KIND=NAME
  std::string fit = "auto";
  std::string out;
  std::string report;
  std::string format = "table";
  std::string gpu;
  int threads = 0;  // rows simulated in parallel; 0: one per core
};

// The rows a parameter is fitted to: NVLink's to the runs inside one
// server, the fabric's to the runs across servers (with all-to-alls next to
// other collectives, the links' to the others and the all-to-all share to
// the all-to-alls).
enum class RowSet { kInside, kAcross, kAcrossOthers, kAcrossAllToAll };

std::string_view describe(RowSet rows) {
  switch (rows) {
    case RowSet::kInside:
      return "the runs inside one server";
    case RowSet::kAcross:
      return "the runs across servers";
    case RowSet::kAcrossOthers:
      return "the runs across servers other than all-to-alls";
    case RowSet::kAcrossAllToAll:
      return "the all-to-all runs across servers";
  }
  return "";
}

// One parameter of the cluster file that the fit may move: its key, its
// range, whether it is searched on a log scale, and its rows.
struct Parameter {
  std::string key;
  double lo;
  double hi;
  bool log_scale;
  RowSet rows;  // the rows it is fitted to
};

// What a row set determines: bandwidth (an efficiency) and latency, of the
// fabric across servers or of NVLink inside one. Across servers, with
// all-to-all rows next to rows of other collectives, the all-to-alls'
// own share of the bandwidth too (nic.all_to_all_efficiency): the others
// set the links, the all-to-alls what many-to-many traffic gets of them.
// With all-to-alls across servers of two or more group sizes, also the gap
// between a rank's peers (communication.peer_gap_ns): it grows a small
// all-to-all with the group, where the per-transfer latency adds the same
// at every size of group, so one group size cannot tell them apart.
std::vector<Parameter> parameters_for(bool nvlink, bool nic, bool separate_all_to_all, bool peer_gap) {
  std::vector<Parameter> p;
  if (nvlink) {
    p.push_back({"nvlink.efficiency", 0.02, 1.0, true, RowSet::kInside});
    p.push_back({"communication.transfer_latency_ns", 0.0, 20'000.0, false, RowSet::kInside});
  }
  if (nic) {
    const RowSet links = separate_all_to_all ? RowSet::kAcrossOthers : RowSet::kAcross;
    p.push_back({"nic.efficiency", 0.02, 1.0, true, links});
    p.push_back({"communication.network_transfer_latency_ns", 0.0, 20'000.0, false, links});
    if (separate_all_to_all) p.push_back({"nic.all_to_all_efficiency", 0.02, 1.0, true, RowSet::kAcrossAllToAll});
    if (peer_gap) p.push_back({"communication.peer_gap_ns", 0.0, 20'000.0, false, RowSet::kAcrossAllToAll});
  }
  return p;
}

// The current value of a parameter in a cluster spec.
double current_value(const topology::ClusterSpec& spec, const std::string& key) {
  if (key == "nic.efficiency") return spec.roce_efficiency;
  if (key == "nic.all_to_all_efficiency") return spec.all_to_all_efficiency;
  if (key == "communication.network_transfer_latency_ns") {
    return static_cast<double>(spec.communication.network_transfer.count_ps()) / 1e3;
  }
  if (key == "communication.peer_gap_ns") return static_cast<double>(spec.communication.peer_gap.count_ps()) / 1e3;
  if (key == "nvlink.efficiency") return spec.nvlink_efficiency;
  if (key == "communication.transfer_latency_ns") {
    return static_cast<double>(spec.communication.transfer.count_ps()) / 1e3;
  }
  ZX_CHECK(false, "unknown fitted parameter " + key);
  return 0;
}

// One run to simulate: its rows, on which GPUs, with which algorithm.
struct Case {
  const calibration::NcclTestsRun* run;
  coll::CollectiveKind kind;
  coll::DataType dtype;
  std::vector<int> ranks;
  std::string algorithm;
};

coll::DataType dtype_of(const calibration::NcclTestsRow& row, const std::string& source) {
  if (row.type == "float") return coll::DataType::kFp32;
  if (row.type == "half") return coll::DataType::kFp16;
  if (row.type == "bfloat16") return coll::DataType::kBf16;
  throw InputError(Diagnostic{source, fmt::format("line {}", row.line),
                              fmt::format("type: expected float, half or bfloat16, found '{}'", row.type)});
}

// The GPUs a run used: rank r on its host's next GPU, hosts in the order
// the file lists them as servers 0, 1, ...; all GPUs without rank lines.
std::vector<int> ranks_of(const calibration::NcclTestsRun& run, int nodes, int gpus_per_node) {
  std::vector<int> ranks;
  if (run.ranks == 0) {
    for (int r = 0; r < nodes * gpus_per_node; ++r) ranks.push_back(r);
    return ranks;
  }
  if (static_cast<int>(run.hosts.size()) > nodes) {
    throw InputError(Diagnostic{run.source, "", fmt::format("the run spans {} hosts but the cluster has {} server{} "
                                                            "(use --nodes)", run.hosts.size(), nodes, nodes == 1 ? "" : "s")});
  }
  std::vector<int> used(run.hosts.size(), 0);
  for (const int h : run.rank_host) {
    const int local = used[static_cast<std::size_t>(h)]++;
    if (local >= gpus_per_node) {
      throw InputError(Diagnostic{run.source, "", fmt::format("host {} runs more than {} ranks, the GPUs of a server",
                                                              run.hosts[static_cast<std::size_t>(h)], gpus_per_node)});
    }
    ranks.push_back(h * gpus_per_node + local);
  }
  return ranks;
}

// Simulated times (us) of every row of every case, on the cluster of
// `request` with `assignments` ("key=value") on top; rows that `only`
// (when given) leaves out are not simulated and read 0.
std::vector<double> simulate(const topology::ClusterRequest& request, const std::vector<std::string>& assignments,
                             const std::vector<Case>& cases, const AlgorithmSources& sources, const std::string& gpu,
                             int threads, const std::vector<bool>* only = nullptr) {
  topology::ClusterRequest r = request;
  r.overrides.insert(r.overrides.end(), assignments.begin(), assignments.end());
  const ClusterAndGpu system = load_cluster_and_gpu(r, gpu, "");
  const topology::LoadedCluster& cluster = system.cluster;
  const models::DeviceProfile& device = system.device;
  const topology::Router router(cluster.topology);
  const models::NetworkBackendOptions options =
      backend_options(cluster, device, {}, parse_algorithm_options(sources.options));
  // Every row is its own simulation: on threads, each with its own registry
  // (a plug-in's factory need not be thread-safe).
  std::vector<std::pair<const Case*, const calibration::NcclTestsRow*>> rows;
  for (const Case& c : cases) {
    for (const calibration::NcclTestsRow& row : c.run->rows) rows.emplace_back(&c, &row);
  }
  std::vector<double> times(rows.size(), 0.0);
  parallel_for(rows.size(), threads, [&](std::size_t i) {
    if (only != nullptr && !(*only)[i]) return;
    const Case& c = *rows[i].first;
    experiments::Stack stack(cluster.topology, router,
                             {.fidelity = "flow", .plugins = sources.plugins, .schedules = sources.schedules}, options);
    coll::CollectiveRequest req;
    req.kind = c.kind;
    req.ranks = c.ranks;
    req.dtype = c.dtype;
    req.bytes_per_rank = sim::Bytes(rows[i].second->size_bytes);
    times[i] = stack.run_collective(req, c.algorithm).to_seconds() * 1e6;
  });
  return times;
}

// Mean squared log ratio of simulated to measured times over the rows
// `use` marks: scale-free, so that microsecond and second rows weigh alike.
double misfit(const std::vector<double>& simulated, const std::vector<double>& measured,
              const std::vector<bool>& use) {
  double sum = 0;
  int rows = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (!use[i]) continue;
    const double r = std::log(std::max(simulated[i], 1e-9) / measured[i]);
    sum += r * r;
    ++rows;
  }
  return rows > 0 ? sum / rows : 0.0;
}

double mape_percent(const std::vector<double>& simulated, const std::vector<double>& measured, std::size_t begin,
                    std::size_t end) {
  double sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += std::abs(simulated[i] - measured[i]) / measured[i];
  return end > begin ? 100.0 * sum / static_cast<double>(end - begin) : 0.0;
}

// Golden-section steps per parameter and round: the bracket shrinks by
// 0.618^24 (about 1e-5 of the range).
constexpr int kGoldenSteps = 24;

// Golden-section search for the minimum of f on [lo, hi].
template <typename F>
double golden_minimum(F f, double lo, double hi, int iterations) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo;
  double b = hi;
  double c = b - g * (b - a);
  double d = a + g * (b - a);
  double fc = f(c);
  double fd = f(d);
  for (int i = 0; i < iterations; ++i) {
    if (fc <= fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return fc <= fd ? c : d;
}

// See its call in run(): starting values for communication.peer_gap_ns (and
// the latency per transfer, when it is fitted to the same rows) from the
// smallest all-to-all row of each run across servers. Leaves `values` alone
// without a gap to fit.
void seed_peer_gap(const std::vector<Parameter>& params, std::vector<double>& values, const std::vector<Case>& cases,
                   const std::vector<double>& measured, const std::vector<double>& simulated,
                   const std::vector<bool>& across_row) {
  std::optional<std::size_t> gap, latency;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].key == "communication.peer_gap_ns") gap = i;
    if (params[i].key == "communication.network_transfer_latency_ns" && params[i].rows == RowSet::kAcross) latency = i;
  }
  if (!gap) return;
  // (n - 2, excess in ns) of each run's smallest row.
  std::vector<std::pair<double, double>> points;
  std::size_t at = 0;
  for (const Case& c : cases) {
    if (c.kind == coll::CollectiveKind::kAllToAll && across_row[at]) {
      std::size_t smallest = at;
      for (std::size_t i = at; i < at + c.run->rows.size(); ++i) {
        if (c.run->rows[i - at].size_bytes < c.run->rows[smallest - at].size_bytes) smallest = i;
      }
      points.emplace_back(static_cast<double>(c.ranks.size()) - 2, (measured[smallest] - simulated[smallest]) * 1e3);
    }
    at += c.run->rows.size();
  }
  double mx = 0, my = 0;
  for (const auto& [x, y] : points) {
    mx += x / static_cast<double>(points.size());
    my += y / static_cast<double>(points.size());
  }
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
  }
  if (!(sxx > 0)) return;
  const double slope = sxy / sxx;  // extra gap, ns
  const Parameter& g = params[*gap];
  const double new_gap = std::clamp(values[*gap] + slope, g.lo, g.hi);
  if (latency) {
    const Parameter& l = params[*latency];
    // The intercept: what the rows' excess leaves at n - 2 = 0 after the gap.
    values[*latency] = std::clamp(values[*latency] + (my - (new_gap - values[*gap]) * mx), l.lo, l.hi);
  }
  values[*gap] = new_gap;
}

std::string assignment(const Parameter& p, double value) { return fmt::format("{}={:.6g}", p.key, value); }

int run(const topology::ClusterRequest& given, const AlgorithmSources& sources, const Flags& f, std::ostream& out) {
  std::optional<std::string> op;
  if (!f.op.empty()) op = f.op;
  std::vector<calibration::NcclTestsRun> runs;
  for (const std::string& file : f.files) runs.push_back(calibration::load_nccl_tests(file, op));

  // The cluster: --nodes, else as many servers as the runs used hosts.
  topology::ClusterRequest request = given;
  if (!request.nodes && !topology::is_cluster_path(request.cluster)) {
    std::size_t hosts = 0;
    for (const auto& r : runs) hosts = std::max(hosts, r.hosts.size());
    if (hosts == 0) {
      throw InputError(Diagnostic{"--nodes", "", "the files list no ranks and hosts: give the cluster's --nodes"});
    }
    request.nodes = static_cast<int>(hosts);
  }
  // The cluster alone: `--set gpu.KEY` overrides are the GPU profile's.
  topology::ClusterRequest cluster_request = request;
  take_gpu_overrides(cluster_request);
  const topology::LoadedCluster cluster = topology::load_cluster(cluster_request);
  if (!cluster.spec) {
    throw InputError(Diagnostic{request.cluster, "", "calibrate-network needs a preset-based cluster (an explicit graph "
                                                     "has per-link values and no preset fields to fit)"});
  }
  const int nodes = cluster.spec->nodes;
  const int gpn = cluster.spec->gpus_per_node;

  std::map<std::string, std::string> algorithms = models::default_collective_algorithms();
  for (const auto& [kind, name] : parse_algorithm_flags(f.algorithms)) algorithms[kind] = name;

  std::vector<Case> cases;
  std::vector<double> measured;
  std::vector<std::int64_t> row_sizes;
  std::vector<bool> all_to_all_row;
  std::vector<bool> across_row;  // the row's run spans servers
  for (const calibration::NcclTestsRun& r : runs) {
    Case c{.run = &r, .kind = *coll::parse_collective_kind(r.collective), .dtype = dtype_of(r.rows.front(), r.source),
           .ranks = ranks_of(r, nodes, gpn), .algorithm = algorithms.at(r.collective)};
    for (const calibration::NcclTestsRow& row : r.rows) {
      if (dtype_of(row, r.source) != c.dtype) {
        throw InputError(Diagnostic{r.source, fmt::format("line {}", row.line),
                                    fmt::format("type: every row of a file must have one type, found '{}' after '{}'",
                                                row.type, r.rows.front().type)});
      }
      measured.push_back(row.time_us);
      row_sizes.push_back(row.size_bytes);
      all_to_all_row.push_back(c.kind == coll::CollectiveKind::kAllToAll);
    }
    bool across = false;
    for (int g : c.ranks) across |= g / gpn != c.ranks.front() / gpn;
    across_row.resize(measured.size(), across);
    if (models::is_nccl_cost_model(c.algorithm) && f.fit != "none") {
      throw InputError(Diagnostic{"--algo", "", fmt::format("{} is NCCL's closed-form cost model, which does not run on "
                                                            "the links a fit moves; use a flow algorithm or --fit none",
                                                            c.algorithm)});
    }
    cases.push_back(std::move(c));
  }
  {
    coll::CollectiveRegistry registry;
    fill_registry(sources, registry);
    const std::map<std::string, std::string> options = parse_algorithm_options(sources.options);
    check_algorithm_options(options, registry);
    std::vector<std::string> used;
    for (const Case& c : cases) used.push_back(c.algorithm);
    check_algorithm_options_used(options, used);
  }
  const std::size_t rows = measured.size();
  const auto row_mask = [&](RowSet set) {
    std::vector<bool> use(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      switch (set) {
        case RowSet::kInside:
          use[i] = !across_row[i];
          break;
        case RowSet::kAcross:
          use[i] = across_row[i];
          break;
        case RowSet::kAcrossOthers:
          use[i] = across_row[i] && !all_to_all_row[i];
          break;
        case RowSet::kAcrossAllToAll:
          use[i] = across_row[i] && all_to_all_row[i];
          break;
      }
    }
    return use;
  };
  const auto any = [](const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); };
  const bool some_inside = any(row_mask(RowSet::kInside));
  const bool some_across = any(row_mask(RowSet::kAcross));
  // auto: NVLink from the runs inside a server, the fabric from those
  // across, whichever the files have (both when they have both).
  const bool fit_nvlink = f.fit == "nvlink" || (f.fit == "auto" && some_inside);
  const bool fit_nic = f.fit == "nic" || (f.fit == "auto" && some_across);
  if (f.fit == "nvlink" && !some_inside) {
    throw InputError(Diagnostic{"--fit", "", "nvlink is fitted to runs inside one server, and every run spans servers"});
  }
  if (f.fit == "nic" && !some_across) {
    throw InputError(Diagnostic{"--fit", "", "nic is fitted to runs across servers, and every run is inside one"});
  }
  const std::string fit = f.fit != "auto" ? f.fit : fit_nvlink && fit_nic ? "nvlink and nic" : fit_nic ? "nic" : "nvlink";
  // Across servers, all-to-all rows next to others get their own share of
  // the fabric (nic.all_to_all_efficiency); inside a server it plays no part.
  const bool separate =
      fit_nic && any(row_mask(RowSet::kAcrossAllToAll)) && any(row_mask(RowSet::kAcrossOthers));
  std::set<std::size_t> all_to_all_groups;  // group sizes of the all-to-all runs across servers
  {
    std::size_t at = 0;
    for (const Case& c : cases) {
      if (c.kind == coll::CollectiveKind::kAllToAll && across_row[at]) all_to_all_groups.insert(c.ranks.size());
      at += c.run->rows.size();
    }
  }
  const std::vector<Parameter> params =
      parameters_for(fit_nvlink, fit_nic, separate, fit_nic && all_to_all_groups.size() >= 2);
  std::vector<std::vector<bool>> masks;  // per parameter
  for (const Parameter& p : params) masks.push_back(row_mask(p.rows));
  std::vector<bool> fitted_rows(rows, false);
  for (const std::vector<bool>& m : masks) {
    for (std::size_t i = 0; i < rows; ++i) fitted_rows[i] = fitted_rows[i] || m[i];
  }
  // Each parameter needs rows of its own to pin it: k parameters fitted to
  // one row set need at least k distinct sizes there (a bandwidth and a
  // latency fitted to one size trade against each other freely).
  {
    std::map<RowSet, std::vector<std::string>> by_set;
    for (const Parameter& p : params) by_set[p.rows].push_back(p.key);
    for (const auto& [set, keys] : by_set) {
      const std::vector<bool> use = row_mask(set);
      std::set<std::int64_t> sizes;
      for (std::size_t i = 0; i < rows; ++i) {
        if (use[i]) sizes.insert(row_sizes[i]);
      }
      if (sizes.size() < keys.size()) {
        throw InputError(Diagnostic{
            "--nccl-tests", "",
            fmt::format("fitting {} ({} parameter{}) needs rows of at least {} distinct sizes in {}; the files give "
                        "{}: measure a sweep (nccl-tests -b 8 -e 1G -f 2), or fit fewer (--fit)",
                        fmt::join(keys, " and "), keys.size(), keys.size() == 1 ? "" : "s", keys.size(),
                        describe(set), sizes.size())});
      }
    }
  }

  // Output files first: an unwritable path costs no fit.
  OutputFile out_file, report_file;
  if (!f.out.empty()) out_file = open_output_file("--out", f.out);
  if (!f.report.empty()) report_file = open_output_file("--report", f.report);

  const std::vector<double> before = simulate(request, {}, cases, sources, f.gpu, f.threads);
  std::vector<double> values;
  for (const Parameter& p : params) values.push_back(current_value(*cluster.spec, p.key));
  const auto assignments_of = [&](const std::vector<double>& v) {
    std::vector<std::string> a;
    for (std::size_t i = 0; i < params.size(); ++i) a.push_back(assignment(params[i], v[i]));
    return a;
  };
  // Coordinate descent: each parameter by golden section with the others
  // held, three rounds (bandwidth and latency barely interact: one sets the
  // large rows, the other the small ones).
  int evaluations = 0;
  const auto started = std::chrono::steady_clock::now();
  // The gap between peers and the latency per transfer, fitted to the same
  // all-to-all rows (no other collective across servers), trade against
  // each other, and coordinate descent from the defaults would let the
  // latency take the whole group-size effect first and crawl back. So both
  // start from a line through the smallest rows: there a row's excess over
  // the model (measured - simulated) is about extra latency + (n - 2) x
  // gap, n its group's ranks (its last peer starts n - 2 gaps after its
  // first); least squares over the groups.
  seed_peer_gap(params, values, cases, measured, before, across_row);
  for (int round = 0; round < 3 && !params.empty(); ++round) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Parameter& p = params[i];
      const auto objective = [&](double x) {
        std::vector<double> v = values;
        v[i] = p.log_scale ? std::exp(x) : x;
        ++evaluations;
        const std::vector<bool>& use = masks[i];
        return misfit(simulate(request, assignments_of(v), cases, sources, f.gpu, f.threads, &use), measured, use);
      };
      const double lo = p.log_scale ? std::log(p.lo) : p.lo;
      const double hi = p.log_scale ? std::log(p.hi) : p.hi;
      const double best = golden_minimum(objective, lo, hi, kGoldenSteps);
      values[i] = p.log_scale ? std::exp(best) : best;
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (seconds > 2.0) {
        write_progress(fmt::format("calibrate-network: round {} of 3: {} = {:.4g} ({} evaluations of the rows, {:.0f} s)",
                                   round + 1, p.key, values[i], evaluations, seconds));
      }
    }
  }
  const std::vector<std::string> fitted = assignments_of(values);
  const std::vector<double> after = params.empty() ? before : simulate(request, fitted, cases, sources, f.gpu, f.threads);

  // Per file: MAPE before and after, the worst row after.
  struct Summary {
    std::size_t begin, end;
    double mape_before, mape_after, worst_after;
    std::int64_t worst_size;
  };
  std::vector<Summary> summaries;
  std::size_t at = 0;
  for (const Case& c : cases) {
    Summary s{at, at + c.run->rows.size(), 0, 0, 0, 0};
    s.mape_before = mape_percent(before, measured, s.begin, s.end);
    s.mape_after = mape_percent(after, measured, s.begin, s.end);
    for (std::size_t i = s.begin; i < s.end; ++i) {
      const double e = 100.0 * std::abs(after[i] - measured[i]) / measured[i];
      if (e >= s.worst_after) {
        s.worst_after = e;
        s.worst_size = c.run->rows[i - s.begin].size_bytes;
      }
    }
    summaries.push_back(s);
    at = s.end;
  }

  topology::ClusterRequest fitted_request = request;
  fitted_request.overrides.insert(fitted_request.overrides.end(), fitted.begin(), fitted.end());
  if (!f.out.empty()) {
    std::vector<std::string> sources_of_fit;
    for (const Case& c : cases) sources_of_fit.push_back(c.run->source);
    topology::ClusterRequest described = fitted_request;
    take_gpu_overrides(described);  // the GPU profile's, not the cluster file's
    described.overrides.push_back(fmt::format("description=zionsim calibrate-network ({}) fitted to {}", fit,
                                              fmt::join(sources_of_fit, ", ")));
    out_file << topology::preset_cluster_text(described);
    close_output_file("--out", f.out, out_file);
  }

  // At the end of its range, the fit wanted to go further. An efficiency of
  // 1 (no loss) is a real answer, not a bound hit.
  // "At the end" is within the golden-section search's final bracket,
  // measured where it searched (in log for a log-scale parameter), with a
  // margin.
  const auto at_bound = [&](std::size_t i) {
    const Parameter& p = params[i];
    const auto coordinate = [&](double v) { return p.log_scale ? std::log(v) : v; };
    const double tolerance = 4 * std::pow((std::sqrt(5.0) - 1) / 2, kGoldenSteps) * (coordinate(p.hi) - coordinate(p.lo));
    // No gap between peers is an answer too: a library that issues them at once.
    const bool floor_is_answer = p.key == "communication.peer_gap_ns";
    return (!floor_is_answer && coordinate(values[i]) - coordinate(p.lo) <= tolerance) ||
           (!p.log_scale && coordinate(p.hi) - coordinate(values[i]) <= tolerance);
  };
  if (f.format == "json") {
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["cluster"] = cluster.source;
    j["nodes"] = nodes;
    j["fit"] = fit;
    nlohmann::ordered_json fitted_json = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < params.size(); ++i) {
      fitted_json[params[i].key] = {{"value", values[i]},
                                    {"was", current_value(*cluster.spec, params[i].key)},
                                    {"at_bound", at_bound(i)}};
    }
    j["fitted"] = fitted_json;
    j["evaluations"] = evaluations;
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      const Summary& s = summaries[k];
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (std::size_t i = s.begin; i < s.end; ++i) {
        rows.push_back({{"size_bytes", c.run->rows[i - s.begin].size_bytes}, {"measured_us", measured[i]},
                        {"model_before_us", before[i]}, {"model_after_us", after[i]}});
      }
      files.push_back({{"file", c.run->source}, {"collective", c.run->collective}, {"algorithm", c.algorithm},
                       {"ranks", c.ranks.size()}, {"mape_before_percent", s.mape_before},
                       {"mape_after_percent", s.mape_after}, {"worst_after_percent", s.worst_after},
                       {"rows", std::move(rows)}});
    }
    j["files"] = std::move(files);
    out << j.dump(2) << "\n";
  }

  // The table (stdout unless --format json) and the Markdown report share
  // their lines; the report adds Markdown around them.
  std::string text;
  text += fmt::format("zionsim calibrate-network: {} file(s) on {} ({} servers of {} GPUs)\n", cases.size(),
                      cluster.source, nodes, gpn);
  if (params.empty()) {
    text += "fit: none (comparison only)\n";
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    text += fmt::format("fitted {} = {:.4g} (was {:.4g}){}\n", params[i].key, values[i],
                        current_value(*cluster.spec, params[i].key),
                        at_bound(i) ? "  -- at the bound of its range: the model cannot match the rows here" : "");
  }
  text += "\n";
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    const Summary& s = summaries[k];
    text += fmt::format("# {}: {} on {} ranks, algorithm {}; MAPE {:.1f}% before, {:.1f}% after (worst {:.1f}% at {} B)\n",
                        c.run->source, c.run->collective, c.ranks.size(), c.algorithm, s.mape_before, s.mape_after,
                        s.worst_after, s.worst_size);
    text += fmt::format("# {:>12} {:>14} {:>14} {:>14} {:>9}\n", "size (B)", "measured (us)", "before (us)",
                        "after (us)", "error");
    for (std::size_t i = s.begin; i < s.end; ++i) {
      text += fmt::format("  {:>12} {:>14.2f} {:>14.2f} {:>14.2f} {:>8.1f}%\n", c.run->rows[i - s.begin].size_bytes,
                          measured[i], before[i], after[i], 100.0 * (after[i] - measured[i]) / measured[i]);
    }
    text += "\n";
  }
  if (f.format != "json") out << text;
  if (!f.report.empty()) {
    report_file << "# Network calibration\n\n```\n" << text << "```\n\n";
    report_file << "Fitted cluster: " << (f.out.empty() ? "not written (no --out)" : "`" + f.out + "`") << ".\n";
    report_file << "Command: `zionsim calibrate-network`; the model of each row is the same collective, size and "
                   "ranks on the flow network model, with the algorithm named above.\n";
    close_output_file("--report", f.report, report_file);
  }
  return kExitOk;
}

}  // namespace

void add_calibrate_network_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "calibrate-network",
      "Compare the network model with nccl-tests runs of a real cluster and fit its link parameters");
  auto request = add_cluster_options(*cmd);
  auto sources = add_algorithm_options(*cmd);
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nccl-tests", f->files, "Output files of nccl-tests (all_reduce_perf, alltoall_perf, ...)")
      ->required()
      ->take_all()
      ->option_text("FILE...");
  cmd->add_option("--op", f->op, "The collective, for files of nccl-tests before 2.17 (e.g. all_reduce_perf)");
  cmd->add_option("--algo", f->algorithms, "Algorithm that models a kind (default: whatif's): KIND=NAME")->take_all();
  cmd->add_option("--fit", f->fit,
                  "What to fit: nic (RoCE efficiency, switch latency, all-to-all efficiency; to the runs across "
                  "servers), nvlink (efficiency, latency; to the runs inside one), none; auto: each that the runs "
                  "allow")
      ->check(CLI::IsMember({"auto", "nic", "nvlink", "none"}))
      ->capture_default_str();
  cmd->add_option("--out", f->out, "Write the cluster file with the fitted values")->option_text("CLUSTER.json");
  cmd->add_option("--report", f->report, "Write a Markdown report")->option_text("FILE.md");
  cmd->add_option("--gpu", f->gpu, "GPU profile for reductions: a built-in or a .json profile file (default: the cluster's)");
  cmd->add_option("--threads", f->threads, "Rows simulated in parallel (0: all cores)")->check(in_range(0, 1024));
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->parse_complete_callback([request, sources, f, action = context.action] {
    *action = [request, sources, f](std::ostream& out) { return run(*request, *sources, *f, out); };
  });
}

}  // namespace zx::tools
