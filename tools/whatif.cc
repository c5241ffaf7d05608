#include "tools/whatif.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/network_activity.h"
#include "models/execution/network_backend.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/commands.h"
#include "topology/router.h"
#include "workloads/dlrm_iteration.h"

namespace zx::tools {
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

WhatIfPoint simulate_point(const WhatIfOptions& o, int nodes, bool keep, const RunningHook& running) {
  const auto wall_start = std::chrono::steady_clock::now();
  WhatIfPoint point;
  point.nodes = nodes;
  topology::ClusterRequest request = o.cluster;
  request.nodes = nodes;
  const topology::LoadedCluster cluster = topology::load_cluster(request);
  const topology::Topology& topo = cluster.topology;
  point.gpus = topo.num_gpus();
  const int gpn = cluster.spec ? cluster.spec->gpus_per_node : gpus_per_server(topo);

  const models::DeviceProfile device = device_for(cluster, o.gpu, o.profile);
  const models::DlrmModel model = models::load_model(o.model);

  std::int64_t batch = o.batch_per_gpu.value_or(512);
  if (o.global_batch) {
    if (*o.global_batch % point.gpus != 0) {
      throw InputError(Diagnostic{"--global-batch", "",
                                  fmt::format("{} samples do not split evenly over {} GPUs", *o.global_batch,
                                              point.gpus)});
    }
    batch = *o.global_batch / point.gpus;
  }
  point.global_batch = batch * point.gpus;

  const bool sharding_file = o.sharding.find('/') != std::string::npos || o.sharding.ends_with(".json");
  models::ShardingOptions sharding =
      sharding_file ? models::load_sharding_file(o.sharding, model, point.gpus, gpn) : models::ShardingOptions{};
  if (!sharding_file) sharding.scheme = o.sharding;
  sharding.batch_per_gpu = batch;
  const models::ShardingPlan plan = models::plan_sharding(model, point.gpus, gpn, device, sharding);
  point.load_imbalance = plan.load_imbalance();
  point.host_memory_tables = plan.host_memory_tables();
  point.max_hbm_gbyte = plan.max_hbm_bytes() / 1e9;
  if (!plan.fits) {
    point.fits = false;
    point.reason = plan.reason;
    return point;
  }

  workloads::IterationOptions io;
  io.batch_per_gpu = batch;
  io.a2a_forward_dtype = o.a2a_forward_dtype;
  io.a2a_backward_dtype = o.a2a_backward_dtype.empty() ? o.a2a_forward_dtype : o.a2a_backward_dtype;
  io.all_reduce_dtype = o.all_reduce_dtype;
  io.fused_embeddings = o.fused_embeddings;
  io.pipeline_input = o.pipeline_input;
  models::OpGraph graph = workloads::build_dlrm_iteration(model, plan, point.gpus, gpn, device, io);

  sim::Simulator sim;
  const topology::Router router(topo);
  const std::unique_ptr<models::FlowNetwork> owned_network = make_network(sim, topo, o.fidelity, o.completion_quantum_ns);
  models::FlowNetwork& network = *owned_network;
  if (keep) network.record_link_history(true);
  // Nothing reads a flow's record after it ends unless a timeline is kept:
  // memory then follows the flows in flight, not all the iteration's.
  if (!keep) network.recycle_flow_ids(true);
  models::collectives::CollectiveRegistry registry;
  fill_registry({o.plugins, o.schedules}, registry);
  models::NetworkBackend backend(sim, network, router, registry, backend_options(cluster, device, o.algorithms));
  if (keep) backend.record_flows(true);
  auto last_report = std::chrono::steady_clock::now();
  const auto report = [&](const models::ExecutionProgress& progress) {
    const auto now = std::chrono::steady_clock::now();
    if (!running || std::chrono::duration<double>(now - last_report).count() < kRunningReportSeconds) return;
    last_report = now;
    running(nodes, progress, std::chrono::duration<double>(now - wall_start).count());
  };
  models::ExecutionResult result = models::execute(sim, graph, backend, report, kProgressSlice);

  const double iteration_ms = ms(result.makespan.since_start());
  point.iteration_time_ms = iteration_ms;
  point.samples_per_s = static_cast<double>(point.global_batch) / (iteration_ms / 1e3);
  double compute = 0;
  double overlapped = 0;
  double exposed = 0;
  for (const models::RankSummary& r : result.ranks) {
    compute += ms(r.compute);
    overlapped += ms(r.overlapped_communication);
    exposed += ms(r.exposed_communication);
  }
  const double ranks = static_cast<double>(std::max<std::size_t>(1, result.ranks.size()));
  point.breakdown.compute_ms = compute / ranks;
  point.breakdown.overlapped_communication_ms = overlapped / ranks;
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
  point.breakdown.other_ms = std::max(0.0, iteration_ms - point.breakdown.compute_ms - exposed_total);
  const std::pair<double, const char*> parts[] = {{point.breakdown.compute_ms, "compute"},
                                                  {point.breakdown.exposed_all_to_all_ms, "exposed all-to-all"},
                                                  {point.breakdown.exposed_all_reduce_ms, "exposed all-reduce"},
                                                  {point.breakdown.other_ms, "other (waiting)"}};
  const auto largest = *std::max_element(std::begin(parts), std::end(parts));
  point.bottleneck = largest.second;
  if (const std::vector<std::uint32_t> hot = network.hottest_links(1); !hot.empty()) {
    const topology::LinkInfo& l = topo.link(topology::LinkId{hot.front()});
    const double busy = network.link(hot.front()).busy_time.to_seconds() * 1e3 / iteration_ms;
    point.bottleneck += fmt::format("; busiest link {}->{} ({:.0f}% busy)", topo.node(l.src).name,
                                    topo.node(l.dst).name, 100 * busy);
  }
  point.fingerprint = sim.fingerprint();
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

}  // namespace

std::vector<WhatIfPoint> run_whatif(const WhatIfOptions& o, std::optional<int> keep_trace_of,
                                    const std::function<void(const WhatIfPoint&, int, int)>& progress,
                                    const RunningHook& running) {
  if (o.nodes.empty()) throw InputError(Diagnostic{"--nodes", "", "expected at least one node count"});
  if (o.batch_per_gpu && o.global_batch) {
    throw InputError(Diagnostic{"--batch-per-gpu", "", "give --batch-per-gpu or --global-batch, not both"});
  }
  const int total = static_cast<int>(o.nodes.size());
  std::vector<WhatIfPoint> points(o.nodes.size());
  std::vector<std::exception_ptr> errors(o.nodes.size());
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  std::mutex progress_mutex;
  RunningHook locked_running;
  if (running) {
    locked_running = [&](int nodes, const models::ExecutionProgress& p, double seconds) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      running(nodes, p, seconds);
    };
  }
  const auto worker = [&] {
    for (int i = next++; i < total; i = next++) {
      try {
        const int nodes = o.nodes[static_cast<std::size_t>(i)];
        points[static_cast<std::size_t>(i)] = simulate_point(o, nodes, keep_trace_of && *keep_trace_of == nodes, locked_running);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
      const int finished = ++done;
      if (progress && !errors[static_cast<std::size_t>(i)]) {
        const std::lock_guard<std::mutex> lock(progress_mutex);
        progress(points[static_cast<std::size_t>(i)], finished, total);
      }
    }
  };
  const int threads = std::max(1, std::min(total, o.threads > 0 ? o.threads
                                                                 : static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  // Scaling efficiency: throughput per GPU against the smallest fitting size.
  const WhatIfPoint* base = nullptr;
  for (const WhatIfPoint& p : points) {
    if (p.fits && (base == nullptr || p.gpus < base->gpus)) base = &p;
  }
  for (WhatIfPoint& p : points) {
    if (p.fits && base != nullptr) {
      p.scaling_efficiency = (p.samples_per_s / p.gpus) / (base->samples_per_s / base->gpus);
    }
  }
  return points;
}

}  // namespace zx::tools
