#include "experiments/interrupt.h"
#include "experiments/whatif.h"
#include "experiments/stack.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/network_activity.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "experiments/memory_estimate.h"
#include "experiments/plan_search.h"
#include "experiments/whatif_codec.h"
#include "base/check.h"
#include "experiments/distribution.h"
#include "topology/router.h"
#include "workloads/dlrm_iteration.h"

namespace zx::experiments {
namespace {

double ms(sim::Duration d) { return d.to_seconds() * 1e3; }

int gpus_per_server(const topology::Topology& t) {
  std::map<int, int> per_server;
  for (int r = 0; r < t.num_gpus(); ++r) ++per_server[t.node(t.gpu(r)).server];
  int most = 1;
  for (const auto& [server, count] : per_server) most = std::max(most, count);
  return most;
}

// Simulated time between two looks at the wall clock (no events are added:
// models::execute's slices), and the wall time between two reports of a
// size still running.
constexpr sim::Duration kProgressSlice = sim::Duration::us(100);
constexpr double kRunningReportSeconds = 10.0;

// The cluster and GPU at `nodes` servers: a preset (or a preset-based file)
// is built at that size; a file that lists its graph explicitly has one
// size, which `nodes` must name.
ClusterAndGpu load_at_size(const WhatIfOptions& o, int nodes) {
  topology::ClusterRequest request = o.cluster;
  const bool explicit_graph = topology::is_explicit_graph(request);
  if (!explicit_graph) request.nodes = nodes;
  ClusterAndGpu system = load_cluster_and_gpu(request, o.gpu, o.profile);
  if (explicit_graph) {
    std::set<int> servers;
    const topology::Topology& t = system.cluster.topology;
    for (int r = 0; r < t.num_gpus(); ++r) servers.insert(t.node(t.gpu(r)).server);
    if (static_cast<int>(servers.size()) != nodes) {
      throw InputError(Diagnostic{"--nodes", "",
                                  fmt::format("{} lists its graph explicitly, with GPUs on {} servers: give --nodes {} "
                                              "(got {})",
                                              o.cluster.cluster, servers.size(), servers.size(), nodes)});
    }
  }
  return system;
}

// One GPU's rate for the embedding exchange, for the planner's balancing
// (models::ShardingOptions::exchange_bytes_per_second): NVLink inside one
// server; across servers its backend NIC (one per GPU), or without a backend
// its share of the front-end NICs (one per socket). Unknown (0) for a cluster
// file that lists its graph.
double exchange_rate(const topology::LoadedCluster& cluster, int nodes) {
  if (!cluster.spec) return 0;
  const topology::ClusterSpec& s = *cluster.spec;
  if (nodes <= 1) return static_cast<double>(s.nvlink_bandwidth.count());
  if (s.backend_network) return static_cast<double>(s.nic_bandwidth.count());
  return static_cast<double>(s.front_end_nic_bandwidth.count()) * s.cpus_per_node / s.gpus_per_node;
}

}  // namespace

PlannedSize plan_whatif_size(const WhatIfOptions& o, int nodes) {
  ClusterAndGpu system = load_at_size(o, nodes);
  topology::LoadedCluster& cluster = system.cluster;
  models::DeviceProfile& device = system.device;
  const topology::Topology& topo = cluster.topology;
  const int gpus = topo.num_gpus();
  const int gpn = cluster.spec ? cluster.spec->gpus_per_node : gpus_per_server(topo);
  models::DlrmModel model = scenario_model(o);

  std::int64_t batch = o.batch_per_gpu.value_or(512);
  if (o.global_batch) {
    if (*o.global_batch % gpus != 0) {
      throw InputError(Diagnostic{"--global-batch", "",
                                  fmt::format("{} samples do not split evenly over {} GPUs", *o.global_batch,
                                              gpus)});
    }
    batch = *o.global_batch / gpus;
  }
  const bool sharding_file = o.sharding.find('/') != std::string::npos || o.sharding.ends_with(".json");
  models::ShardingOptions sharding =
      sharding_file ? models::load_sharding_file(o.sharding, model, gpus, gpn) : models::ShardingOptions{};
  if (!sharding_file) sharding.scheme = o.sharding;
  sharding.overrides.insert(sharding.overrides.end(), o.sharding_overrides.begin(), o.sharding_overrides.end());
  sharding.batch_per_gpu = batch;
  sharding.host_cache_hit_rate = o.cache_hit_rate;
  sharding.index_zipf_alpha = o.index_zipf_alpha;
  sharding.host_cache_fraction = o.cache_fraction;
  sharding.hbm_reserve_fraction = o.hbm_reserve;
  sharding.dense_optimizer = o.dense_optimizer;
  sharding.index_bytes = o.index_bytes;
  sharding.exchange_bytes_per_second = exchange_rate(cluster, nodes);
  sharding.host_memory_bytes_per_node = static_cast<double>(cluster.host_memory.count());
  if (!o.a2a_forward_dtype.empty()) {
    sharding.exchange_forward_bytes = models::element_bytes(models::parse_data_type(o.a2a_forward_dtype));
  }
  const std::string& backward = o.a2a_backward_dtype.empty() ? o.a2a_forward_dtype : o.a2a_backward_dtype;
  if (!backward.empty()) sharding.exchange_backward_bytes = models::element_bytes(models::parse_data_type(backward));
  models::ShardingPlan plan = models::plan_sharding(model, gpus, gpn, device, sharding);
  return PlannedSize{.cluster = std::move(cluster),
                     .nodes = nodes,
                     .gpus = gpus,
                     .gpus_per_node = gpn,
                     .batch_per_gpu = batch,
                     .device = std::move(device),
                     .model = std::move(model),
                     .plan = std::move(plan)};
}

models::DenseOptimizer parse_dense_optimizer(const std::string& name) {
  return experiments::parse_dense_optimizer_name(name).value_or(models::DenseOptimizer::kAdagrad);
}

workloads::IterationOptions iteration_options(const WhatIfOptions& o, std::int64_t batch_per_gpu) {
  workloads::IterationOptions io;
  io.batch_per_gpu = batch_per_gpu;
  io.a2a_forward_dtype = o.a2a_forward_dtype;
  io.a2a_backward_dtype = o.a2a_backward_dtype.empty() ? o.a2a_forward_dtype : o.a2a_backward_dtype;
  io.all_reduce_dtype = o.all_reduce_dtype;
  io.fused_embeddings = o.fused_embeddings;
  io.pipeline_input = o.pipeline_input;
  io.prefetch_cache = o.prefetch_cache;
  io.dense_optimizer = o.dense_optimizer;
  io.index_bytes = o.index_bytes;
  io.all_reduce_bucket_bytes = o.all_reduce_bucket_bytes;
  return io;
}

namespace {

WhatIfPoint simulate_point(const WhatIfOptions& o, int variant, int nodes, bool keep, const RunningHook& running);

// --sharding search: search from the planner's plan (on this thread: the
// sizes of a sweep already share the cores), then simulate the best plan.
WhatIfPoint simulate_searched_point(const WhatIfOptions& o, int variant, int nodes, bool keep,
                                    const RunningHook& running) {
  const auto wall_start = std::chrono::steady_clock::now();
  WhatIfOptions start = o;
  start.sharding = "auto";
  start.threads = 1;
  if (!plan_whatif_size(start, nodes).plan.fits) return simulate_point(start, variant, nodes, keep, running);
  const SearchResult searched = search_sharding(start, nodes, SearchOptions{.max_simulations = o.search_budget});
  start.sharding_overrides.insert(start.sharding_overrides.end(), searched.overrides.begin(), searched.overrides.end());
  WhatIfPoint point = simulate_point(start, variant, nodes, keep, running);
  point.search_simulations = searched.simulations;
  point.search_start_iteration_time_ms = searched.start_iteration_time_ms;
  point.search_moves = static_cast<int>(searched.moves.size());
  point.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return point;
}

WhatIfPoint simulate_point(const WhatIfOptions& o, int variant, int nodes, bool keep, const RunningHook& running) {
  if (o.sharding == "search") return simulate_searched_point(o, variant, nodes, keep, running);
  const auto wall_start = std::chrono::steady_clock::now();
  WhatIfPoint point;
  point.nodes = nodes;
  const PlannedSize planned = plan_whatif_size(o, nodes);
  const topology::Topology& topo = planned.cluster.topology;
  const topology::LoadedCluster& cluster = planned.cluster;
  const models::DeviceProfile& device = planned.device;
  const models::DlrmModel& model = planned.model;
  const models::ShardingPlan& plan = planned.plan;
  const int gpn = planned.gpus_per_node;
  const std::int64_t batch = planned.batch_per_gpu;
  point.gpus = planned.gpus;
  point.gpu = device.name;
  point.communication = cluster.communication;
  point.global_batch = batch * point.gpus;
  point.load_imbalance = plan.load_imbalance();
  point.balance_split_tables = plan.balance_split_tables;
  point.host_memory_tables = plan.host_memory_tables();
  point.max_hbm_gbyte = plan.max_hbm_bytes() / 1e9;
  for (const models::GpuLoad& g : plan.gpus) {
    point.max_iteration_hbm_gbyte = std::max(point.max_iteration_hbm_gbyte, g.iteration_bytes / 1e9);
  }
  point.hbm_reserve_fraction = plan.hbm_reserve_fraction;
  point.cache_hit_rate = plan.host_memory_tables() > 0 ? plan.host_cache_hit_rate : 1.0;
  if (!plan.fits) {
    point.fits = false;
    point.reason = plan.reason;
    return point;
  }

  models::OpGraph graph =
      workloads::build_dlrm_iteration(model, plan, point.gpus, gpn, device, iteration_options(o, batch));
  models::slow_compute(graph, cluster.gpu_speed);  // --degrade gpu:R=SPEED

  const topology::Router router(topo);
  // Nothing reads a flow's record after it ends unless a timeline is kept:
  // memory then follows the flows in flight, not all the iteration's.
  experiments::Stack stack(topo, router, experiments::stack_options(o, /*keep_flows=*/keep),
                           backend_options(cluster, device, o.algorithms, o.algorithm_options));
  sim::Simulator& sim = stack.sim();
  models::FlowNetwork& network = stack.network();
  models::NetworkBackend& backend = stack.backend();
  if (keep) {
    network.record_link_history(true);
    backend.record_flows(true);
  }
  auto last_report = std::chrono::steady_clock::now();
  const auto report = [&](const models::ExecutionProgress& progress) {
    check_interrupt();
    const auto now = std::chrono::steady_clock::now();
    if (!running || std::chrono::duration<double>(now - last_report).count() < kRunningReportSeconds) return;
    last_report = now;
    running(variant, nodes, progress, std::chrono::duration<double>(now - wall_start).count());
  };
  models::ExecutionResult result = models::execute(sim, graph, backend, report, kProgressSlice, sm_contention(device));

  const double iteration_ms = ms(result.makespan.since_start());
  point.iteration_time_ms = iteration_ms;
  point.samples_per_s = static_cast<double>(point.global_batch) / (iteration_ms / 1e3);
  double compute = 0;
  double overlapped = 0;
  double exposed = 0;
  double slowed = 0;
  for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const models::RankSummary& r = result.ranks[rank];
    if (ms(r.compute) > point.busiest_gpu_compute_ms) {
      point.busiest_gpu_compute_ms = ms(r.compute);
      point.busiest_gpu_rank = static_cast<int>(rank);
    }
    compute += ms(r.compute);
    overlapped += ms(r.overlapped_communication);
    exposed += ms(r.exposed_communication);
    slowed += ms(r.compute_slowed_by_communication);
  }
  const double ranks = static_cast<double>(std::max<std::size_t>(1, result.ranks.size()));
  point.breakdown.compute_ms = compute / ranks;
  point.breakdown.overlapped_communication_ms = overlapped / ranks;
  point.breakdown.compute_slowed_by_communication_ms = slowed / ranks;
  // The parts add up to the iteration time: exposed communication is the
  // union over all collectives; when embedding exchanges and all-reduces are
  // exposed at the same moment, the moment counts as all-to-all.
  double a2a = 0;
  for (const char* category : {"all_to_all", "reduce_scatter", "all_gather", "input_all_to_all"}) {
    if (auto it = result.exposed_by_category.find(category); it != result.exposed_by_category.end()) {
      a2a += ms(it->second);
    }
  }
  const double exposed_total = exposed / ranks;
  point.breakdown.exposed_all_to_all_ms = std::min(a2a, exposed_total);
  point.breakdown.exposed_all_reduce_ms = exposed_total - point.breakdown.exposed_all_to_all_ms;
  point.breakdown.other_ms = iteration_ms - point.breakdown.compute_ms - exposed_total;
  // Below a picosecond it is the rounding of the per-rank means.
  if (point.breakdown.other_ms < 1e-9) point.breakdown.other_ms = 0;
  const std::pair<double, const char*> parts[] = {{point.breakdown.compute_ms, "compute"},
                                                  {point.breakdown.exposed_all_to_all_ms, "exposed all-to-all"},
                                                  {point.breakdown.exposed_all_reduce_ms, "exposed all-reduce"},
                                                  {point.breakdown.other_ms, "other (waiting)"}};
  const auto largest = *std::max_element(std::begin(parts), std::end(parts));
  point.bottleneck = largest.second;
  // An iteration that ends with a host copy waits for its next batch (its
  // input, or the embedding cache's rows): the copy bounds it, whatever the
  // largest part of the breakdown. Waiting on the critical path for the
  // cache misses of this batch shows as "other".
  const auto on_cache = [&](std::uint32_t op) {
    return graph.ops[op].kind == models::OpKind::kHostCopy && graph.ops[op].category == "embedding_cache";
  };
  if (!result.critical_path.empty() &&
      graph.ops[result.critical_path.back()].kind == models::OpKind::kHostCopy) {
    point.bottleneck = on_cache(result.critical_path.back()) ? "embedding cache misses (host memory over PCIe)"
                                                             : "input copy (host to GPU)";
  } else if (largest.second == parts[3].second &&
             std::any_of(result.critical_path.begin(), result.critical_path.end(), on_cache)) {
    point.bottleneck = "other (waiting: embedding cache misses, host memory over PCIe)";
  }
  if (const std::vector<std::uint32_t> hot = network.hottest_links(1); !hot.empty()) {
    const topology::LinkInfo& l = topo.link(topology::LinkId{hot.front()});
    const double busy = network.link(hot.front()).busy_time.to_seconds() * 1e3 / iteration_ms;
    point.bottleneck += fmt::format("; busiest link {}->{} ({:.0f}% busy)", topo.node(l.src).name,
                                    topo.node(l.dst).name, 100 * busy);
  }
  point.auto_choices = backend.auto_choices();
  point.nccl_choices = backend.nccl_choices();
  point.fingerprint = sim.fingerprint();
  point.events = sim.executed();
  point.flows = network.flows_started();
  point.resolves = network.resolves();
  point.resolved_flows = network.resolved_flows();
  if (keep) {
    models::NetworkActivityOptions activity_options;
    activity_options.max_ranks = kTimelineRanks;
    point.network_activity = models::collect_network_activity(graph, backend, network, topo, activity_options);
    point.graph = std::move(graph);
    point.execution = std::move(result);
  }
  point.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return point;
}

// The same InputError with `context` after each message.
InputError with_context(const InputError& e, const std::string& context) {
  std::vector<Diagnostic> out = e.diagnostics();
  for (Diagnostic& d : out) d.message += context;
  return InputError(std::move(out));
}

// Every (variant, size) point of a sweep, on a pool of threads; scaling
// within each variant.
// The GPUs of `o`'s cluster at `nodes` servers, without building it: a
// preset's servers times its GPUs per server, an explicit graph's own;
// nullopt when the cluster cannot be read (its run reports why).
std::optional<std::int64_t> gpus_at(const WhatIfOptions& o, int nodes) {
  try {
    topology::ClusterRequest request = o.cluster;
    if (topology::is_explicit_graph(request)) return topology::load_cluster(request).topology.num_gpus();
    request.nodes = 1;
    const topology::LoadedCluster one = topology::load_cluster(request);
    return static_cast<std::int64_t>(one.topology.num_gpus()) * nodes;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// Refuses, before any size runs, a sweep whose largest `threads` sizes
// together are estimated to need more memory than the machine has
// (experiments/memory_estimate.h): the kernel would kill the run minutes in.
// The size `kept_nodes`, if any, keeps every flow's record for a timeline or
// a trace.
void check_memory(const std::vector<WhatIfOptions>& variants,
                  const std::vector<std::pair<std::size_t, std::size_t>>& tasks, int threads,
                  std::optional<int> kept_nodes) {
  const std::optional<std::int64_t> available = available_memory_bytes();
  if (!available) return;
  struct Need {
    std::int64_t bytes;
    std::int64_t gpus;
    int nodes;
    bool kept;
    NetworkMemory memory;
  };
  std::vector<Need> needs;
  std::map<std::pair<std::size_t, int>, std::optional<std::int64_t>> gpus_of;  // (variant, nodes)
  for (const auto& [v, i] : tasks) {
    const WhatIfOptions& o = variants[v];
    if (!o.memory_check) continue;
    const int nodes = o.nodes[i];
    auto it = gpus_of.find({v, nodes});
    if (it == gpus_of.end()) it = gpus_of.emplace(std::pair{v, nodes}, gpus_at(o, nodes)).first;
    if (!it->second) continue;
    const bool kept = kept_nodes && *kept_nodes == nodes;
    needs.push_back(
        {estimated_simulation_bytes(*it->second, network_memory(o.fidelity), kept), *it->second, nodes, kept,
         network_memory(o.fidelity)});
  }
  if (needs.empty()) return;
  std::stable_sort(needs.begin(), needs.end(), [](const Need& a, const Need& b) { return a.bytes > b.bytes; });
  const Need& largest = needs.front();
  const bool any_kept = std::any_of(needs.begin(), needs.end(), [](const Need& n) { return n.kept; });
  std::string why = per_pair_text(largest.memory) + "; README, \"How long a what-if takes\"";
  if (any_kept) {
    why.insert(why.find(';'), ", and for the size written as a timeline or trace about 900 KB more per GPU: "
                              "every flow's record is kept");
  }
  if (largest.bytes > *available) {
    throw InputError(Diagnostic{
        "--nodes", "",
        largest.kept
            ? fmt::format("{} nodes ({} GPUs) would need about {} to simulate and write as a timeline or trace "
                          "({}), and this machine has {} available; write a smaller size (the largest of --nodes "
                          "is the one written), or give --skip-memory-check to try anyway",
                          largest.nodes, largest.gpus, gib_text(largest.bytes), why, gib_text(*available))
            : fmt::format("{} nodes ({} GPUs) would need about {} to simulate ({}), and this machine has {} "
                          "available; give fewer nodes, {}or --skip-memory-check to try anyway",
                          largest.nodes, largest.gpus, gib_text(largest.bytes), why, gib_text(*available),
                          largest.memory == NetworkMemory::kLinkShare
                              ? ""
                              : "--fidelity linkshare (about a sixteenth of the memory, iterations within "
                                "1.4e-3 of flow's on the zoo: docs/network_model.md), ")});
  }
  std::int64_t together = 0;
  const auto running = std::min<std::size_t>(needs.size(), static_cast<std::size_t>(std::max(1, threads)));
  for (std::size_t k = 0; k < running; ++k) together += needs[k].bytes;
  if (together > *available) {
    throw InputError(Diagnostic{
        "--threads", "",
        fmt::format("the {} largest sizes, simulated at once on {} threads, would need about {} together ({}), and "
                    "this machine has {} available; give --threads 1 (or fewer sizes), or --skip-memory-check to "
                    "try anyway",
                    running, threads, gib_text(together), why, gib_text(*available))});
  }
}

// The first failing task's error (in task order), with the variant's
// context; then the scaling efficiency within each variant, when every
// point is there.
void finish_points(std::vector<std::vector<WhatIfPoint>>& points,
                   const std::vector<std::pair<std::size_t, std::size_t>>& tasks,
                   const std::vector<std::exception_ptr>& errors, bool all_points,
                   const std::function<std::string(std::size_t)>& context) {
  check_interrupt();  // before the points' errors: an interrupted point's is Interrupted
  for (std::size_t t = 0; t < errors.size(); ++t) {
    if (!errors[t]) continue;
    if (!context) std::rethrow_exception(errors[t]);
    try {
      std::rethrow_exception(errors[t]);
    } catch (const InputError& e) {
      throw with_context(e, context(tasks[t].first));
    }
  }
  if (!all_points) return;
  // Scaling efficiency: throughput per GPU against the smallest fitting size.
  for (std::vector<WhatIfPoint>& variant : points) {
    const WhatIfPoint* base = nullptr;
    for (const WhatIfPoint& p : variant) {
      if (p.fits && (base == nullptr || p.gpus < base->gpus)) base = &p;
    }
    for (WhatIfPoint& p : variant) {
      if (p.fits && base != nullptr) {
        p.scaling_efficiency = (p.samples_per_s / p.gpus) / (base->samples_per_s / base->gpus);
      }
    }
  }
}

// One sweep's points as they are read back, found kept, or simulated here,
// over MPI or on this process's threads; errors held per task until the
// end, which reports the first in task order (finish_points).
class SweepRun {
 public:
  SweepRun(const std::vector<WhatIfOptions>& variants, std::optional<int> keep_trace_of,
           const std::function<void(const WhatIfPoint&, int, int)>& progress, const RunningHook& running,
           const SweepPlacement& placement)
      : variants_(variants), keep_trace_of_(keep_trace_of), progress_(progress), placement_(placement) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      for (std::size_t i = 0; i < variants[v].nodes.size(); ++i) tasks_.emplace_back(v, i);
    }
    out_.points.resize(variants.size());
    for (std::size_t v = 0; v < variants.size(); ++v) out_.points[v].resize(variants[v].nodes.size());
    errors_.resize(tasks_.size());
    if (running) {
      running_ = [this, running](int variant, int nodes, const models::ExecutionProgress& p, double seconds) {
        const std::lock_guard<std::mutex> lock(progress_mutex_);
        running(variant, nodes, p, seconds);
      };
    }
  }

  PlacedSweep run(const std::function<std::string(std::size_t)>& context) {
    if (placement_.merged != nullptr) {
      read_merged();
      finish_points(out_.points, tasks_, errors_, true, context);
      return std::move(out_);
    }
    // The tasks this process runs (or, over MPI, this job): all, or a share.
    const bool over_mpi = placement_.mpi && experiments::Mpi::active();
    costs_ = placement_.shard || over_mpi ? sweep_task_costs(variants_) : std::vector<double>(tasks_.size(), 1.0);
    std::vector<std::size_t> here;
    if (placement_.shard) {
      here = experiments::shard_tasks(costs_, *placement_.shard);
    } else {
      for (std::size_t t = 0; t < tasks_.size(); ++t) here.push_back(t);
    }
    out_.computed = here;
    total_ = static_cast<int>(here.size());
    wanted_ = variants_.front().threads > 0 ? variants_.front().threads : experiments::available_cpus();
    // Points kept by an earlier run are read, not simulated (on rank 0 alone
    // over MPI: it hands out what is left).
    if (placement_.kept && experiments::Mpi::rank() == 0) here = read_kept(here);
    if (over_mpi) {
      simulate_over_mpi(here);
      if (experiments::Mpi::rank() != 0) {
        out_.prints = false;
        return std::move(out_);
      }
    } else {
      simulate_on_threads(here);
    }
    finish_points(out_.points, tasks_, errors_, !placement_.shard, context);
    return std::move(out_);
  }

 private:
  WhatIfPoint& point(std::size_t t) { return out_.points[tasks_[t].first][tasks_[t].second]; }

  // Read back, not simulated: every task's outcome, in task order.
  void read_merged() {
    for (std::size_t t = 0; t < tasks_.size(); ++t) {
      const auto it = placement_.merged->find(t);
      ZX_CHECK(it != placement_.merged->end(), "merge hands over every task of the sweep");
      try {
        point(t) = point_or_rethrow(it->second, placement_.merged_source, fmt::format("/tasks/{}", t));
      } catch (...) {
        errors_[t] = std::current_exception();
      }
      out_.computed.push_back(t);
    }
  }

  // The tasks of `here` that no earlier run kept.
  std::vector<std::size_t> read_kept(const std::vector<std::size_t>& here) {
    std::vector<std::size_t> left;
    for (const std::size_t t : here) {
      try {
        if (std::optional<WhatIfPoint> kept = placement_.kept(t)) {
          point(t) = std::move(*kept);
          point(t).variant = static_cast<int>(tasks_[t].first);
          report(point(t), false);
          continue;
        }
      } catch (...) {
        errors_[t] = std::current_exception();
        continue;
      }
      left.push_back(t);
    }
    return left;
  }

  void simulate_task(std::size_t t, WhatIfPoint& p) {
    const auto [v, i] = tasks_[t];
    const int nodes = variants_[v].nodes[i];
    p = simulate_point(variants_[v], static_cast<int>(v), nodes, keep_trace_of_ && *keep_trace_of_ == nodes,
                       running_);
    p.variant = static_cast<int>(v);
  }

  void report(const WhatIfPoint& p, bool failed) {
    const int finished = ++done_;
    if (progress_ && !failed) {
      const std::lock_guard<std::mutex> lock(progress_mutex_);
      progress_(p, finished, total_);
    }
  }

  std::vector<std::pair<std::size_t, std::size_t>> tasks_of(const std::vector<std::size_t>& here) const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (const std::size_t t : here) out.push_back(tasks_[t]);
    return out;
  }

  // Handed out over the MPI job's ranks, largest first; rank 0 collects.
  void simulate_over_mpi(const std::vector<std::size_t>& here) {
    const int to_simulate = static_cast<int>(here.size());
    // Each rank checks the memory of the sizes it may get, on its threads.
    check_memory(variants_, tasks_of(here), std::max(1, std::min(to_simulate, wanted_)), keep_trace_of_);
    std::vector<double> here_costs;
    for (const std::size_t t : here) here_costs.push_back(costs_[t]);
    std::vector<std::size_t> order;
    for (const std::size_t k : experiments::largest_first(here_costs)) order.push_back(here[k]);
    const experiments::TaskFunction run_task = [&](std::size_t t) {
      WhatIfPoint p;
      std::exception_ptr error;
      try {
        if (interrupt_requested()) check_interrupt();
        simulate_task(t, p);
      } catch (...) {
        error = std::current_exception();
      }
      return task_outcome_to_json(error ? nullptr : &p, error).dump();
    };
    const experiments::ResultFunction arrived = [&](std::size_t t, std::string bytes) {
      bool failed = false;
      try {
        point(t) = point_or_rethrow(nlohmann::json::parse(bytes), "an MPI rank's result", "");
        if (placement_.keep) placement_.keep(t, point(t));
      } catch (...) {
        errors_[t] = std::current_exception();
        failed = true;
      }
      report(point(t), failed);
    };
    experiments::run_over_mpi(order, std::max(1, wanted_), run_task, arrived);
  }

  // On this process's threads, each taking the next task.
  void simulate_on_threads(const std::vector<std::size_t>& here) {
    const int to_simulate = static_cast<int>(here.size());
    std::atomic<int> next{0};
    const auto worker = [&] {
      for (int k = next++; k < to_simulate && !interrupt_requested(); k = next++) {
        const std::size_t t = here[static_cast<std::size_t>(k)];
        WhatIfPoint& p = point(t);
        try {
          simulate_task(t, p);
          if (placement_.keep) placement_.keep(t, p);
        } catch (...) {
          errors_[t] = std::current_exception();
        }
        report(p, errors_[t] != nullptr);
      }
    };
    const int threads = std::max(1, std::min(to_simulate, wanted_));
    check_memory(variants_, tasks_of(here), threads, keep_trace_of_);
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
  }

  const std::vector<WhatIfOptions>& variants_;
  std::optional<int> keep_trace_of_;
  const std::function<void(const WhatIfPoint&, int, int)>& progress_;
  RunningHook running_;
  const SweepPlacement& placement_;
  std::vector<std::pair<std::size_t, std::size_t>> tasks_;  // (variant, index into its nodes)
  PlacedSweep out_;
  std::vector<std::exception_ptr> errors_;
  std::vector<double> costs_;
  int total_ = 0;
  int wanted_ = 1;
  std::atomic<int> done_{0};
  std::mutex progress_mutex_;
};

PlacedSweep run_points(const std::vector<WhatIfOptions>& variants, std::optional<int> keep_trace_of,
                       const std::function<void(const WhatIfPoint&, int, int)>& progress,
                       const RunningHook& running, const std::function<std::string(std::size_t)>& context = {},
                       const SweepPlacement& placement = {}) {
  return SweepRun(variants, keep_trace_of, progress, running, placement).run(context);
}

}  // namespace

std::vector<WhatIfPoint> run_whatif(const WhatIfOptions& o, std::optional<int> keep_trace_of,
                                    const std::function<void(const WhatIfPoint&, int, int)>& progress,
                                    const RunningHook& running) {
  check_whatif_options(o);
  return run_points({o}, keep_trace_of, progress, running).points.front();
}

std::vector<std::vector<WhatIfPoint>> run_whatif_variants(
    const std::vector<WhatIfVariant>& variants, const std::function<void(const WhatIfPoint&, int, int)>& progress,
    const RunningHook& running) {
  return run_whatif_placed(variants, SweepPlacement{}, progress, running).points;
}

std::vector<double> sweep_task_costs(const std::vector<WhatIfOptions>& variants) {
  std::vector<double> costs;
  std::map<std::pair<std::size_t, int>, double> known;  // (variant, nodes)
  for (std::size_t v = 0; v < variants.size(); ++v) {
    for (const int nodes : variants[v].nodes) {
      auto it = known.find({v, nodes});
      if (it == known.end()) {
        const std::optional<std::int64_t> gpus = gpus_at(variants[v], nodes);
        it = known.emplace(std::pair{v, nodes}, gpus ? static_cast<double>(*gpus) * static_cast<double>(*gpus) : 1.0)
                 .first;
      }
      costs.push_back(it->second);
    }
  }
  return costs;
}

PlacedSweep run_whatif_placed(const std::vector<WhatIfVariant>& variants, const SweepPlacement& placement,
                              const std::function<void(const WhatIfPoint&, int, int)>& progress,
                              const RunningHook& running) {
  if (variants.empty()) throw InputError(Diagnostic{"--vary", "", "expected at least one variant"});
  std::vector<WhatIfOptions> options;
  for (const WhatIfVariant& v : variants) {
    try {
      check_whatif_options(v.options);
    } catch (const InputError& e) {
      if (v.settings.empty()) throw;
      throw with_context(e, fmt::format(" (in the variant {})", v.label()));
    }
    options.push_back(v.options);
  }
  const auto context = [&variants](std::size_t v) {
    return variants[v].settings.empty() ? std::string() : fmt::format(" (in the variant {})", variants[v].label());
  };
  return run_points(options, std::nullopt, progress, running, context, placement);
}

std::vector<std::string> effective_degradations(const WhatIfOptions& o) {
  if (o.nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  return load_at_size(o, o.nodes.front()).cluster.degradations;
}

void check_whatif_options(const WhatIfOptions& o) {
  if (o.nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  if (o.batch_per_gpu && o.global_batch) {
    throw InputError(Diagnostic{"--batch-per-gpu", "", "give --batch-per-gpu or --global-batch, not both"});
  }
  for (int nodes : o.nodes) (void)load_at_size(o, nodes);
  (void)scenario_model(o);
  const bool sharding_file = o.sharding.find('/') != std::string::npos || o.sharding.ends_with(".json");
  if (o.search_budget < 1) {
    throw InputError(Diagnostic{"--search-budget", "", fmt::format("expected at least 1, got {}", o.search_budget)});
  }
  if (!sharding_file && o.sharding != "search") {
    const std::vector<std::string> names = models::sharding_scheme_names();
    if (std::find(names.begin(), names.end(), o.sharding) == names.end()) {
      throw InputError(Diagnostic{"--sharding", "", fmt::format("unknown sharding scheme '{}'; valid: {}, search, or a "
                                                                ".json sharding file",
                                                                o.sharding, fmt::join(names, ", "))});
    }
  }
  models::collectives::CollectiveRegistry registry;
  fill_registry(o.plugins, o.schedules, registry);
  for (const auto& [kind, name] : o.algorithms) {
    check_algorithm_for(registry, "--algo", kind, name);
  }
  check_algorithm_options(o.algorithm_options, registry);
}

WhatIfVariation parse_whatif_variation(const std::string& text) {
  return experiments::parse_knob_variation(text, experiments::Sweeper::kWhatif);
}

void apply_whatif_variation(WhatIfOptions& o, const std::string& key, const std::string& value) {
  experiments::apply_knob(o, key, value, experiments::Sweeper::kWhatif);
}

std::string WhatIfVariant::label() const { return settings_label(settings); }

std::vector<WhatIfVariant> expand_whatif_variations(const WhatIfOptions& base,
                                                    const std::vector<WhatIfVariation>& variations) {
  std::vector<WhatIfVariant> out;
  for (Settings& settings : all_combinations(variations)) {
    WhatIfVariant v{std::move(settings), base};
    for (const auto& [key, value] : v.settings) apply_whatif_variation(v.options, key, value);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<WhatIfVariant> sensitivity_variants(const WhatIfOptions& base, double factor) {
  if (!(factor > 1 && factor <= 1000)) {
    throw InputError(Diagnostic{"--sensitivity", "", fmt::format("expected a factor in (1, 1000], got {}", factor)});
  }
  if (base.nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  const ClusterAndGpu system = load_at_size(base, base.nodes.front());
  if (!system.cluster.spec) {
    throw InputError(Diagnostic{"--sensitivity", "",
                                "needs a preset-based cluster (an explicit graph has no preset fields to scale)"});
  }
  const topology::ClusterSpec& spec = *system.cluster.spec;
  const models::DeviceProfile& gpu = system.device;
  std::vector<WhatIfVariant> out;
  out.push_back(WhatIfVariant{{{"sensitivity", "base"}}, base});
  // One variant: a label and the --set assignments that make it.
  const auto add = [&](const std::string& label, const std::vector<std::string>& sets) {
    WhatIfVariant v{{{"sensitivity", label}}, base};
    v.options.cluster.overrides.insert(v.options.cluster.overrides.end(), sets.begin(), sets.end());
    out.push_back(std::move(v));
  };
  const auto set = [](const std::string& key, double value) { return fmt::format("{}={}", key, value); };
  if (spec.backend_network) {
    const std::string s = set("nic.bandwidth_gbit_per_s", static_cast<double>(spec.nic_bandwidth.count()) * 8 / 1e9 * factor);
    add(s, {s});
  } else {
    const std::string s = set("host.front_end_nic_bandwidth_gbit_per_s", static_cast<double>(spec.front_end_nic_bandwidth.count()) * 8 / 1e9 * factor);
    add(s, {s});
  }
  {
    const std::string s = set("nvlink.bandwidth_gbyte_per_s", static_cast<double>(spec.nvlink_bandwidth.count()) / 1e9 * factor);
    add(s, {s});
  }
  {
    const std::string s =
        set("gpu.hbm.bandwidth_gbyte_per_s", static_cast<double>(gpu.hbm_bandwidth.count()) / 1e9 * factor);
    add(s, {s});
  }
  {
    std::vector<std::string> sets;
    const std::pair<const char*, double> peaks[] = {{"fp32", gpu.peak_fp32_flops},
                                                    {"tf32", gpu.peak_tf32_flops},
                                                    {"fp16", gpu.peak_fp16_flops},
                                                    {"bf16", gpu.peak_bf16_flops},
                                                    {"fp8", gpu.peak_fp8_flops}};
    for (const auto& [type, flops] : peaks) {
      if (flops > 0) sets.push_back(set(fmt::format("gpu.peak_tflops.{}", type), flops / 1e12 * factor));
    }
    add(fmt::format("gpu.peak_tflops.*={:g}x", factor), sets);
  }
  {
    // A host copy runs at the DMA rate (the profile's) unless the host's
    // link gives it less: the PCIe link up from the GPUs' switch (shared by
    // the GPUs behind it), or on superchips the GPU's own NVLink-C2C link.
    // Faster copies need both.
    std::vector<std::string> sets = {set("gpu.host_to_device_gbyte_per_s",
                                         static_cast<double>(gpu.host_to_device_bandwidth.count()) / 1e9 * factor)};
    if (spec.host_attach == topology::HostAttach::kNvlinkC2c) {
      sets.push_back(set("host.c2c_bandwidth_gbyte_per_s", static_cast<double>(spec.c2c_bandwidth.count()) / 1e9 * factor));
    } else {
      const int lanes = static_cast<int>(std::min(64.0, std::round(spec.host_pcie_lanes * factor)));
      if (lanes != spec.host_pcie_lanes) sets.push_back(fmt::format("pcie.host_lanes={}", lanes));
    }
    add(fmt::format("host-to-device={:g}x", factor), sets);
  }
  if (spec.oversubscription > 1) {
    const std::string s = set("fabric.oversubscription", std::max(1.0, spec.oversubscription / factor));
    add(s, {s});
  }
  // The servers' host memory, where the planner put tables at some size (or
  // could not place them all): with more of it the planner keeps tables in
  // one node's memory instead of spreading them row-wise over every GPU
  // (model F on 16 ZionEX nodes: 15.5 -> 9.4 ms with 3 TB).
  const bool host_bound = std::any_of(base.nodes.begin(), base.nodes.end(), [&](int nodes) {
    const models::ShardingPlan plan = plan_whatif_size(base, nodes).plan;
    return !plan.fits || plan.host_memory_tables() > 0;
  });
  if (host_bound) {
    const std::string s = set("host.memory_gbyte", static_cast<double>(spec.host_memory.count()) / 1e9 * factor);
    add(s, {s});
  }
  return out;
}

}  // namespace zx::experiments
