// File: models/network/flow_network_benchmark.cc
//
// Cost of the flow-level network model on ZionEX clusters: a direct
// all-to-all between every GPU pair, and a long run of staggered random flows.
//
//   bazel run --config=opt //models/network:flow_network_benchmark --
//     --benchmark_filter='AllToAll/(16|32|64|128)/|Staggered'
// (AllToAll/512, 16 M flows, is registered but needs far more than 1 GB; not run.)
//
// Figures on the 2-core development VM, opt build, shared with another build
// (noisy: sim_s is wall time of the simulation only, the lower of 2 runs;
// CPU time for Staggered). Peak RSS is the whole process.
//   AllToAll/16   128 GPUs, 16,256 flows:   sim 16 ms, 2 re-solves, 15 MiB
//   AllToAll/32   256 GPUs, 65,280 flows:   route 14 ms, sim 94 ms, 4 re-solves
//                 (128,768 flows re-solved in total), 48 MiB   [before: 1.9 s, 464 re-solves]
//   AllToAll/64   512 GPUs, 261,632 flows:  route 54 ms, sim 0.50 s, 4 re-solves
//                 (519,680 flows), 181 MiB                    [before: 18 s, 241 re-solves]
//   AllToAll/128  1,024 GPUs, 1,047,552 flows: route 0.34 s, sim 3.0 s, 4 re-solves
//                 (2.09 M flows), 710 MiB   [before: over 600 s; target 2 s: not met yet]
//                 With finish estimates in the engine's radix heap (sim::RadixEventQueue)
//                 instead of a binary heap: sim 2.87 s, route 0.38 s, 767 MiB (load 2.6).
//                 With joins batched per instant (3,064 engine events instead of 1.05 M)
//                 and seeds deduplicated: sim 3.2-4.2 s over three runs on an idle
//                 machine, 645 MiB. At this size the run is memory bound (about 600
//                 bytes per flow; 64 nodes takes 0.50 s, so 4x the flows cost 6-8x the
//                 time) and noisy; the 2 s target needs a leaner per-flow layout.
//   Staggered/1000    1,988 re-solves, mean 244 flows each, 0.65 s CPU   [before: 0.8-1.0 s]
//   Staggered/10000  19,898 re-solves, mean 772 flows each, 19.8 s CPU   [before: 26 s]
// Makespan and event counts are unchanged by the incremental re-solve (32 nodes:
// 10,611.6 us, 66,211 events, before and after).
//
// What dominated before (callgrind, AllToAll/32): FlowNetwork::resolve at 97%
// of all instructions, re-solving the whole remaining fabric component (tens
// of thousands of flows at 32 nodes, ~900,000 at 128) at each of hundreds of
// distinct completion instants in the all-to-all's tail, where ECMP hash
// imbalance makes a few hundred uplinks and NICs distinct bottlenecks. The
// incremental re-solve (flow_network.h) re-fills only the flows at or above
// the leavers' smallest level; in this tail the leavers are almost always the
// fastest flows, so nobody else gains and nothing is re-solved at all: of the
// 464 instants at 32 nodes, 2 re-solve anything. What remains is linear in the
// flows (callgrind, AllToAll/64, opt): completions (finish_due, its heap) 10%,
// the solver 17% (two solves of the whole fabric: the joins' component and
// the one incremental re-solve that covers the cross-rack flows), building
// problems 13%, start_flow and the per-flow join events 11%, the level heap
// 5%, routing the rest. Reaching 2 s at 128 nodes needs those per-flow
// constants (about 3 us per flow) cut further: batching the joins of one
// instant into one event, a completion structure cheaper than a binary heap of
// a million entries, and incremental re-solves that skip flows of components
// no leaver touched.

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::models {
namespace {

// Peak resident set of the whole process, in MiB (Linux reports kB).
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU time of the whole process, in seconds: on a shared machine the wall
// time of a phase swings with the load; its CPU time much less.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Direct all-to-all of 1 MiB between all GPUs of an n-node ZionEX, every flow
// started at t = 0, ECMP key from the (src, dst) pair. The router is built
// once outside the timed region (its tables fill lazily, inside routing).
// Routing (route_into for every pair, into one flat array) and simulation
// (start_flow for every pair, then run to the end) are timed separately.
void BM_AllToAll(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const topology::Topology topo = topology::build_cluster(topology::preset_spec("zionex", nodes));
  const std::vector<LinkParams> params = link_params(topo);
  const int gpus = topo.num_gpus();
  const sim::Bytes size = sim::Bytes::mib(1);
  double route_s = 0.0;
  double sim_s = 0.0;
  double sim_cpu_s = 0.0;
  std::uint64_t resolves = 0;
  std::uint64_t resolved_flows = 0;
  std::uint64_t events = 0;
  std::int64_t makespan_ps = 0;
  for (auto _ : state) {
    const topology::Router router(topo);
    // Routes of all pairs, flat: offsets[i] .. offsets[i + 1] in `links`.
    auto start = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> links;
    std::vector<std::uint32_t> offsets{0};
    offsets.reserve(static_cast<std::size_t>(gpus) * gpus);
    topology::Route route;
    for (int s = 0; s < gpus; ++s) {
      for (int d = 0; d < gpus; ++d) {
        if (s == d) continue;
        router.route_into(topo.gpu(s), topo.gpu(d), gpu_pair_flow_key(s, d), route);
        for (topology::LinkId l : route) links.push_back(topology::index(l));
        offsets.push_back(static_cast<std::uint32_t>(links.size()));
      }
    }
    route_s += seconds_since(start);

    start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    sim::Simulator sim;
    FlowNetwork net(sim, params);
    const std::span<const std::uint32_t> all(links);
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
      net.start_flow(all.subspan(offsets[i], offsets[i + 1] - offsets[i]), size, {});
    }
    sim.run();
    sim_s += seconds_since(start);
    sim_cpu_s += cpu_seconds() - cpu_start;
    resolves = net.resolves();
    resolved_flows = net.resolved_flows();
    events = sim.executed();
    makespan_ps = sim.now().count_ps();
  }
  const double iterations = static_cast<double>(state.iterations());
  state.counters["flows"] = static_cast<double>(gpus) * (gpus - 1);
  state.counters["route_s"] = route_s / iterations;
  state.counters["sim_s"] = sim_s / iterations;
  state.counters["sim_cpu_s"] = sim_cpu_s / iterations;
  state.counters["resolves"] = static_cast<double>(resolves);
  state.counters["resolved_flows"] = static_cast<double>(resolved_flows);
  state.counters["events"] = static_cast<double>(events);
  state.counters["makespan_us"] = static_cast<double>(makespan_ps) * 1e-6;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_AllToAll)
    ->Arg(16)
    ->Arg(32)
    ->Arg(64)
    ->Arg(128)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// n (10,000) flows between random GPU pairs of a 64-node ZionEX, each starting
// at a random instant in the first n microseconds (fixed seed), of 64 KiB to 16 MiB: many
// joins and leaves, each re-solving a component. Routing is outside the timed
// region.
void BM_StaggeredRandomFlows(benchmark::State& state) {
  const topology::Topology topo = topology::build_cluster(topology::preset_spec("zionex", 64));
  const topology::Router router(topo);
  const int gpus = topo.num_gpus();
  const int flows = static_cast<int>(state.range(0));
  struct Spec {
    std::int64_t start_ps;
    sim::Bytes size;
    std::vector<std::uint32_t> route;
  };
  std::vector<Spec> specs;
  std::mt19937_64 rng(20260401);
  topology::Route route;
  for (int i = 0; i < flows; ++i) {
    const int src = static_cast<int>(rng() % static_cast<std::uint64_t>(gpus));
    int dst = static_cast<int>(rng() % static_cast<std::uint64_t>(gpus - 1));
    if (dst >= src) ++dst;
    Spec spec{.start_ps = static_cast<std::int64_t>(rng() % (static_cast<std::uint64_t>(flows) * 1'000'000)),
              .size = sim::Bytes(static_cast<std::int64_t>(64 * 1024 + rng() % (16 << 20))),
              .route = {}};
    router.route_into(topo.gpu(src), topo.gpu(dst), gpu_pair_flow_key(src, dst), route);
    to_link_indices(route, spec.route);
    specs.push_back(std::move(spec));
  }
  const std::vector<LinkParams> params = link_params(topo);
  std::uint64_t resolves = 0;
  std::uint64_t resolved_flows = 0;
  double sim_s = 0.0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    sim::Simulator sim;
    FlowNetwork net(sim, params);
    for (const Spec& spec : specs) {
      sim.schedule(sim::TimePoint::from_ps(spec.start_ps),
                   [&net, &spec] { net.start_flow(spec.route, spec.size, {}); });
    }
    sim.run();
    sim_s += seconds_since(start);
    resolves = net.resolves();
    resolved_flows = net.resolved_flows();
  }
  state.counters["resolves"] = static_cast<double>(resolves);
  state.counters["resolves_per_s"] =
      static_cast<double>(resolves) * static_cast<double>(state.iterations()) / sim_s;
  state.counters["mean_component_flows"] =
      static_cast<double>(resolved_flows) / static_cast<double>(resolves);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_StaggeredRandomFlows)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace zx::models
