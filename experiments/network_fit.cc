// File: experiments/network_fit.cc

#include "experiments/network_fit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"
#include "experiments/parallel.h"
#include "experiments/stack.h"
#include "models/collectives/plan.h"
#include "models/execution/network_backend.h"
#include "sim/units.h"
#include "topology/router.h"

namespace zx::experiments {
namespace {

namespace coll = models::collectives;

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

// The cluster the rows run on: the request's, with --nodes, else as many
// servers as the runs used hosts.
struct FitCluster {
  topology::ClusterRequest request;
  topology::LoadedCluster cluster;
};

FitCluster fit_cluster(const std::vector<calibration::NcclTestsRun>& runs, const topology::ClusterRequest& given) {
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
  topology::LoadedCluster cluster = topology::load_cluster(cluster_request);
  if (!cluster.spec) {
    throw InputError(Diagnostic{request.cluster, "", "calibrate-network needs a preset-based cluster (an explicit graph "
                                                     "has per-link values and no preset fields to fit)"});
  }
  return {std::move(request), std::move(cluster)};
}

// Every row of every run, in order, with what the fit selects rows by.
struct Rows {
  std::vector<Case> cases;
  std::vector<double> measured;
  std::vector<std::int64_t> sizes;
  std::vector<bool> all_to_all;
  std::vector<bool> across;  // the row's run spans servers

  std::size_t size() const { return measured.size(); }

  std::vector<bool> mask(RowSet set) const {
    std::vector<bool> use(size());
    for (std::size_t i = 0; i < size(); ++i) {
      switch (set) {
        case RowSet::kInside:
          use[i] = !across[i];
          break;
        case RowSet::kAcross:
          use[i] = across[i];
          break;
        case RowSet::kAcrossOthers:
          use[i] = across[i] && !all_to_all[i];
          break;
        case RowSet::kAcrossAllToAll:
          use[i] = across[i] && all_to_all[i];
          break;
      }
    }
    return use;
  }
};

Rows rows_of(const std::vector<calibration::NcclTestsRun>& runs, const topology::ClusterSpec& spec,
             const std::map<std::string, std::string>& algorithms, const std::string& fit) {
  const int nodes = spec.nodes;
  const int gpn = spec.gpus_per_node;
  Rows rows;
  for (const calibration::NcclTestsRun& r : runs) {
    Case c{.run = &r, .kind = *coll::parse_collective_kind(r.collective), .dtype = dtype_of(r.rows.front(), r.source),
           .ranks = ranks_of(r, nodes, gpn), .algorithm = algorithms.at(r.collective)};
    for (const calibration::NcclTestsRow& row : r.rows) {
      if (dtype_of(row, r.source) != c.dtype) {
        throw InputError(Diagnostic{r.source, fmt::format("line {}", row.line),
                                    fmt::format("type: every row of a file must have one type, found '{}' after '{}'",
                                                row.type, r.rows.front().type)});
      }
      rows.measured.push_back(row.time_us);
      rows.sizes.push_back(row.size_bytes);
      rows.all_to_all.push_back(c.kind == coll::CollectiveKind::kAllToAll);
    }
    bool across = false;
    for (int g : c.ranks) across |= g / gpn != c.ranks.front() / gpn;
    rows.across.resize(rows.measured.size(), across);
    if (models::is_nccl_cost_model(c.algorithm) && fit != "none") {
      throw InputError(Diagnostic{"--algo", "", fmt::format("{} is NCCL's closed-form cost model, which does not run on "
                                                            "the links a fit moves; use a flow algorithm or --fit none",
                                                            c.algorithm)});
    }
    rows.cases.push_back(std::move(c));
  }
  return rows;
}

// What the fit moves: the parameters, the rows each is fitted to, and what
// the report calls the fit.
struct FitPlan {
  std::vector<NetworkParameter> params;
  std::vector<std::vector<bool>> masks;  // per parameter
  std::string fit;
};

bool any(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }

// Each parameter needs rows of its own to pin it: k parameters fitted to
// one row set need at least k distinct sizes there (a bandwidth and a
// latency fitted to one size trade against each other freely).
void check_distinct_sizes(const Rows& rows, const std::vector<NetworkParameter>& params) {
  std::map<RowSet, std::vector<std::string>> by_set;
  for (const NetworkParameter& p : params) by_set[p.rows].push_back(p.fit.name);
  for (const auto& [set, keys] : by_set) {
    const std::vector<bool> use = rows.mask(set);
    std::set<std::int64_t> sizes;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (use[i]) sizes.insert(rows.sizes[i]);
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

FitPlan plan_fit(const Rows& rows, const std::string& fit) {
  const bool some_inside = any(rows.mask(RowSet::kInside));
  const bool some_across = any(rows.mask(RowSet::kAcross));
  // auto: NVLink from the runs inside a server, the fabric from those
  // across, whichever the files have (both when they have both).
  const bool fit_nvlink = fit == "nvlink" || (fit == "auto" && some_inside);
  const bool fit_nic = fit == "nic" || (fit == "auto" && some_across);
  if (fit == "nvlink" && !some_inside) {
    throw InputError(Diagnostic{"--fit", "", "nvlink is fitted to runs inside one server, and every run spans servers"});
  }
  if (fit == "nic" && !some_across) {
    throw InputError(Diagnostic{"--fit", "", "nic is fitted to runs across servers, and every run is inside one"});
  }
  FitPlan plan;
  plan.fit = fit != "auto" ? fit : fit_nvlink && fit_nic ? "nvlink and nic" : fit_nic ? "nic" : "nvlink";
  // Across servers, all-to-all rows next to others get their own share of
  // the fabric (nic.all_to_all_efficiency); inside a server it plays no part.
  const bool separate =
      fit_nic && any(rows.mask(RowSet::kAcrossAllToAll)) && any(rows.mask(RowSet::kAcrossOthers));
  std::set<std::size_t> all_to_all_groups;  // group sizes of the all-to-all runs across servers
  std::size_t at = 0;
  for (const Case& c : rows.cases) {
    if (c.kind == coll::CollectiveKind::kAllToAll && rows.across[at]) all_to_all_groups.insert(c.ranks.size());
    at += c.run->rows.size();
  }
  plan.params = network_parameters(fit_nvlink, fit_nic, separate, fit_nic && all_to_all_groups.size() >= 2);
  for (const NetworkParameter& p : plan.params) plan.masks.push_back(rows.mask(p.rows));
  check_distinct_sizes(rows, plan.params);
  return plan;
}

// Simulated times (us) of every row of every case, on the cluster of
// `request` with `assignments` ("key=value") on top; rows that `only`
// (when given) leaves out are not simulated and read 0.
struct Simulation {
  const topology::ClusterRequest& request;
  const std::vector<Case>& cases;
  const NetworkFitOptions& options;
  std::map<std::string, std::string> algorithm_options;

  std::vector<double> operator()(const std::vector<std::string>& assignments,
                                 const std::vector<bool>* only = nullptr) const {
    topology::ClusterRequest r = request;
    r.overrides.insert(r.overrides.end(), assignments.begin(), assignments.end());
    const ClusterAndGpu system = load_cluster_and_gpu(r, options.gpu, "");
    const topology::LoadedCluster& cluster = system.cluster;
    const models::DeviceProfile& device = system.device;
    const topology::Router router(cluster.topology);
    const models::NetworkBackendOptions backend = backend_options(cluster, device, {}, algorithm_options);
    // Every row is its own simulation: on threads, each with its own registry
    // (a plug-in's factory need not be thread-safe).
    std::vector<std::pair<const Case*, const calibration::NcclTestsRow*>> rows;
    for (const Case& c : cases) {
      for (const calibration::NcclTestsRow& row : c.run->rows) rows.emplace_back(&c, &row);
    }
    std::vector<double> times(rows.size(), 0.0);
    parallel_for(rows.size(), options.threads, [&](std::size_t i) {
      if (only != nullptr && !(*only)[i]) return;
      const Case& c = *rows[i].first;
      Stack stack(cluster.topology, router,
                  {.fidelity = "flow", .plugins = options.plugins, .schedules = options.schedules}, backend);
      coll::CollectiveRequest req;
      req.kind = c.kind;
      req.ranks = c.ranks;
      req.dtype = c.dtype;
      req.bytes_per_rank = sim::Bytes(rows[i].second->size_bytes);
      times[i] = stack.run_collective(req, c.algorithm).to_seconds() * 1e6;
    });
    return times;
  }
};

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

// See its call in fit_network(): starting values for
// communication.peer_gap_ns (and the latency per transfer, when it is
// fitted to the same rows) from the smallest all-to-all row of each run
// across servers. Leaves `values` alone without a gap to fit.
void seed_peer_gap(const std::vector<NetworkParameter>& params, std::vector<double>& values, const Rows& rows,
                   const std::vector<double>& simulated) {
  std::optional<std::size_t> gap, latency;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].fit.name == "communication.peer_gap_ns") gap = i;
    if (params[i].fit.name == "communication.network_transfer_latency_ns" && params[i].rows == RowSet::kAcross) {
      latency = i;
    }
  }
  if (!gap) return;
  // (n - 2, excess in ns) of each run's smallest row.
  std::vector<std::pair<double, double>> points;
  std::size_t at = 0;
  for (const Case& c : rows.cases) {
    if (c.kind == coll::CollectiveKind::kAllToAll && rows.across[at]) {
      std::size_t smallest = at;
      for (std::size_t i = at; i < at + c.run->rows.size(); ++i) {
        if (c.run->rows[i - at].size_bytes < c.run->rows[smallest - at].size_bytes) smallest = i;
      }
      points.emplace_back(static_cast<double>(c.ranks.size()) - 2,
                          (rows.measured[smallest] - simulated[smallest]) * 1e3);
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
  const calibration::FitParameter& g = params[*gap].fit;
  const double new_gap = std::clamp(values[*gap] + slope, g.lo, g.hi);
  if (latency) {
    const calibration::FitParameter& l = params[*latency].fit;
    // The intercept: what the rows' excess leaves at n - 2 = 0 after the gap.
    values[*latency] = std::clamp(values[*latency] + (my - (new_gap - values[*gap]) * mx), l.lo, l.hi);
  }
  values[*gap] = new_gap;
}

// "key=value" of each parameter, as --set takes them.
std::vector<std::string> assignments_of(const std::vector<NetworkParameter>& params, const std::vector<double>& v) {
  std::vector<std::string> a;
  for (std::size_t i = 0; i < params.size(); ++i) a.push_back(fmt::format("{}={:.6g}", params[i].fit.name, v[i]));
  return a;
}

// Coordinate descent from the cluster's values: each parameter by golden
// section with the others held, three rounds (bandwidth and latency barely
// interact: one sets the large rows, the other the small ones); each
// parameter's misfit is over its own rows only.
calibration::DescentResult descend(const FitPlan& plan, const Rows& rows, const Simulation& simulate,
                                   const std::vector<double>& before, std::vector<double> values,
                                   const std::function<void(const std::string&)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  // The gap between peers and the latency per transfer, fitted to the same
  // all-to-all rows (no other collective across servers), trade against
  // each other, and coordinate descent from the defaults would let the
  // latency take the whole group-size effect first and crawl back. So both
  // start from a line through the smallest rows: there a row's excess over
  // the model (measured - simulated) is about extra latency + (n - 2) x
  // gap, n its group's ranks (its last peer starts n - 2 gaps after its
  // first); least squares over the groups.
  seed_peer_gap(plan.params, values, rows, before);
  std::vector<calibration::FitParameter> fit;
  for (const NetworkParameter& p : plan.params) fit.push_back(p.fit);
  const calibration::DescentOptions descent{.rounds = 3, .golden_steps = calibration::kGoldenSteps};
  const auto objective = [&](std::size_t moved, const std::vector<double>& v) {
    const std::vector<bool>& use = plan.masks[moved];
    return misfit(simulate(assignments_of(plan.params, v), &use), rows.measured, use);
  };
  const auto after_step = [&](const calibration::DescentStep& step) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (seconds > 2.0 && progress) {
      progress(fmt::format("calibrate-network: round {} of {}: {} = {:.4g} ({} evaluations of the rows, {:.0f} s)",
                           step.round + 1, descent.rounds, fit[step.moved].name, step.values[step.moved],
                           step.evaluations, seconds));
    }
  };
  return calibration::coordinate_descent(fit, std::move(values), objective, descent, after_step);
}

// Per run: MAPE before and after, the worst row after, and the rows.
std::vector<NetworkFitRun> compare_runs(const Rows& rows, const std::vector<double>& before,
                                        const std::vector<double>& after) {
  std::vector<NetworkFitRun> out;
  std::size_t begin = 0;
  for (const Case& c : rows.cases) {
    const std::size_t end = begin + c.run->rows.size();
    NetworkFitRun s{.source = c.run->source, .collective = c.run->collective, .algorithm = c.algorithm,
                    .ranks = c.ranks.size()};
    s.mape_before_percent = mape_percent(before, rows.measured, begin, end);
    s.mape_after_percent = mape_percent(after, rows.measured, begin, end);
    for (std::size_t i = begin; i < end; ++i) {
      const double measured = rows.measured[i];
      const std::int64_t size = c.run->rows[i - begin].size_bytes;
      const double e = 100.0 * std::abs(after[i] - measured) / measured;
      if (e >= s.worst_after_percent) {
        s.worst_after_percent = e;
        s.worst_size_bytes = size;
      }
      s.rows.push_back({.size_bytes = size, .measured_us = measured, .before_us = before[i], .after_us = after[i],
                        .error_percent = 100.0 * (after[i] - measured) / measured});
    }
    out.push_back(std::move(s));
    begin = end;
  }
  return out;
}

}  // namespace

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

// What a row set determines: bandwidth (an efficiency) and latency, of the
// fabric across servers or of NVLink inside one. Across servers, with
// all-to-all rows next to rows of other collectives, the all-to-alls'
// own share of the bandwidth too (nic.all_to_all_efficiency): the others
// set the links, the all-to-alls what many-to-many traffic gets of them.
// With all-to-alls across servers of two or more group sizes, also the gap
// between a rank's peers (communication.peer_gap_ns): it grows a small
// all-to-all with the group, where the per-transfer latency adds the same
// at every size of group, so one group size cannot tell them apart.
//
// At the end of its range, the fit wanted to go further (at_bound). An
// efficiency of 1 (no loss) is a real answer, not a bound hit; so is no gap
// between peers: a library that issues them at once.
std::vector<NetworkParameter> network_parameters(bool nvlink, bool nic, bool separate_all_to_all, bool peer_gap) {
  const auto efficiency = [](const char* key, RowSet rows) {
    return NetworkParameter{{.name = key, .lo = 0.02, .hi = 1.0, .log_scale = true, .hi_is_answer = true}, rows};
  };
  const auto latency_ns = [](const char* key, RowSet rows, bool zero_is_answer = false) {
    return NetworkParameter{{.name = key, .lo = 0.0, .hi = 20'000.0, .lo_is_answer = zero_is_answer}, rows};
  };
  std::vector<NetworkParameter> p;
  if (nvlink) {
    p.push_back(efficiency("nvlink.efficiency", RowSet::kInside));
    p.push_back(latency_ns("communication.transfer_latency_ns", RowSet::kInside));
  }
  if (nic) {
    const RowSet links = separate_all_to_all ? RowSet::kAcrossOthers : RowSet::kAcross;
    p.push_back(efficiency("nic.efficiency", links));
    p.push_back(latency_ns("communication.network_transfer_latency_ns", links));
    if (separate_all_to_all) p.push_back(efficiency("nic.all_to_all_efficiency", RowSet::kAcrossAllToAll));
    if (peer_gap) p.push_back(latency_ns("communication.peer_gap_ns", RowSet::kAcrossAllToAll, true));
  }
  return p;
}

double network_parameter_value(const topology::ClusterSpec& spec, const std::string& key) {
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

NetworkFitReport fit_network(const std::vector<calibration::NcclTestsRun>& runs,
                             const topology::ClusterRequest& given, const NetworkFitOptions& options,
                             const NetworkFitHooks& hooks) {
  const FitCluster fc = fit_cluster(runs, given);
  const topology::ClusterSpec& spec = *fc.cluster.spec;
  std::map<std::string, std::string> algorithms = models::default_collective_algorithms();
  if (hooks.algorithms) {
    for (const auto& [kind, name] : hooks.algorithms()) algorithms[kind] = name;
  }
  const Rows rows = rows_of(runs, spec, algorithms, options.fit);
  std::vector<std::string> used;
  for (const Case& c : rows.cases) used.push_back(c.algorithm);
  Simulation simulate{fc.request, rows.cases, options, {}};
  if (hooks.algorithm_options) simulate.algorithm_options = hooks.algorithm_options(used);
  const FitPlan plan = plan_fit(rows, options.fit);
  if (hooks.before_simulating) hooks.before_simulating();

  const std::vector<double> before = simulate({});
  std::vector<double> start;
  for (const NetworkParameter& p : plan.params) start.push_back(network_parameter_value(spec, p.fit.name));
  const calibration::DescentResult descent = descend(plan, rows, simulate, before, start, options.progress);
  const std::vector<std::string> fitted = assignments_of(plan.params, descent.values);
  const std::vector<double> after = plan.params.empty() ? before : simulate(fitted);

  NetworkFitReport report{.cluster = fc.cluster.source, .nodes = spec.nodes, .gpus_per_node = spec.gpus_per_node,
                          .fit = plan.fit, .evaluations = descent.evaluations};
  for (std::size_t i = 0; i < plan.params.size(); ++i) {
    const calibration::FitParameter& p = plan.params[i].fit;
    report.fitted.push_back({.key = p.name, .value = descent.values[i], .was = start[i],
                             .at_bound = calibration::at_bound(p, descent.values[i])});
  }
  report.runs = compare_runs(rows, before, after);
  report.fitted_request = fc.request;
  report.fitted_request.overrides.insert(report.fitted_request.overrides.end(), fitted.begin(), fitted.end());
  return report;
}

}  // namespace zx::experiments
