// File: models/network/flow_network_benchmark.cc
//
// Cost of the flow-level network model on ZionEX clusters: a direct
// all-to-all between every GPU pair, and a long run of staggered random flows.
//
//   bazel run --config=opt //models/network:flow_network_benchmark --
//     --benchmark_filter='AllToAll/(16|32|64|128)/|Staggered'
// AllToAll/512 (4,096 GPUs, 16.77 M flows) is registered; it needs about
// 8.4 GiB. Run once after the per-flow work above (fuzzer on the other core):
//   bazel-bin/models/network/flow_network_benchmark --benchmark_filter='AllToAll/512/'
//   route 11.7 s, sim 34.8 s (CPU 34.6 s), 4 re-solves of 33.5 M flows in all,
//   peak RSS 8,391 MiB, makespan 174,898 us. 16x the flows of 1,024 GPUs
//   cost 30x the simulation time: the same linear work (every flow solved
//   about twice) with the working set now far beyond the caches.
//
// Figures on the 2-core development VM, opt build, with a fuzzer keeping
// one core busy (load 1.2-1.6). sim_s is the wall time of the simulation
// only (start_flow for every pair, then run); sim_cpu_s its CPU time, which
// swings far less than the wall time when builds share the machine (up to
// 2x there); here the two agree within 2%. Ranges are over three runs
// alternating the two binaries; peak RSS is the whole process (routes
// included), one size per process (after bazel build --config=opt):
//   for n in 16 32 64 128; do
//     bazel-bin/models/network/flow_network_benchmark --benchmark_filter="AllToAll/$n/"; done
//                                           before (commit 001dbc2)       now
//   AllToAll/16   128 GPUs, 16,256 flows    sim 10.5-10.8 ms, 14.7 MiB    6.6-6.9 ms,   12.5 MiB
//   AllToAll/32   256 GPUs, 65,280 flows    sim 86-101 ms,    45 MiB      43-46 ms,     34 MiB
//   AllToAll/64   512 GPUs, 261,632 flows   sim 0.46-0.49 s,  167-169 MiB 0.22-0.24 s,  124 MiB
//   AllToAll/128  1,024 GPUs, 1.05 M flows  sim 2.85-2.95 s,  645 MiB     1.11-1.16 s,  475 MiB
// The 2 s target at 128 nodes is met. With two builds on top (load 4-5 on
// the two cores) the same binary's wall time at 128 nodes reached 2.6-3.0 s
// (CPU time 1.15-1.5 s). Routing is unchanged (route_s 0.36-0.38 s at 128
// nodes), and so is everything the model computes: makespan (43,468.9 us
// at 128 nodes), engine events (3,064), re-solves (4) and flows re-solved
// (2.09 M).
//   Staggered/1000    1,988 re-solves, mean 244 flows each: 3,070 re-solves/s
//                     before (0.65 s CPU), 4,160 now (0.48 s)
//   Staggered/10000  19,898 re-solves, mean 772 flows each: 1,020 re-solves/s
//                     before (19.5 s CPU), 1,610 now (12.3 s)
//
// The four re-solves at 128 nodes: one component re-solve at each of the
// three first-byte instants (0.2 us: 7,168 intra-node flows; 1.5 us: 122,880
// flows; 2.6 us: the whole fabric, 1,040,384 flows) and one incremental
// re-solve at 43.46 ms of the 917,504 flows still in flight (all at or above
// the leavers' level). Every flow is thus solved about twice, and the run is
// linear in the flows: about 1.1 us per flow in all.
//
// What made it so (each measured on its own, CPU time at 128 nodes):
// per-flow state as arrays by flow id, with what finishing a flow touches
// (record, rate, level, callback index) in one 64-byte slot, routes as
// offsets into one shared array, callbacks in a side table, weights and caps
// only when some flow has one (the whole process over the flows: 645 bytes
// per flow before, 475 now); finished flows left in the links' lists and
// swept out in bulk by the next re-solve that walks a list (most lists are
// never walked again), instead of a swap-out per flow and link at random
// addresses; level buckets (one per distinct level) instead of a
// level max-heap of a million entries (2.9 -> 1.7 s together); the solver's
// per-link state in one record, unit weights summed as counts, and an
// indexed heap of links with in-place key updates, bottom-up pops and caps
// in a sorted list, instead of a lazily invalidated heap that grew to
// millions of stale entries (1.7 -> 1.4 s; most of Staggered's gain); new
// finish estimates pushed to the radix queue in one batch, earliest first
// (one re-bucketing per batch instead of one per new minimum: 1.46 -> 1.34
// s); finish_due prefetching the scattered slots and routes of one
// instant's flows (about 5%); flow slots in fixed chunks (no copying when
// growing: 3-4%); problems reserved at their size (5%); the solver writing
// rates in one pass after the filling instead of at each scattered freeze
// (3%; Staggered 1% slower, within the noise).
//
// What dominates now (perf, AllToAll/128, share of the simulation's
// samples): the solver 32% (building its link -> flows table and freezing
// flows, both a pass over every flow's route at scattered flows), the
// re-solves' own work 34% (component search, problem building, new rates
// and levels, the level buckets), finish_due 20%, start_flow and the joins
// 12%, the completion queue 6%. Spread over all of these, the kernel
// faulting in fresh pages takes about a sixth of the process's samples
// (450 MiB touched once, plus the growth of vectors whose final size is not
// known in advance). Tried and dropped (no gain measurable above the
// noise): prefetching in the solver's freeze_link, cache-line-aligned link
// state, one sum per link for the link being frozen, reserving the links'
// lists per join batch, and prefetching finish_due's pops through a
// run-of-equal-keys view of the radix queue.
//
// Earlier history (wall time): before the incremental re-solve, 32 nodes
// took 1.9 s (464 re-solves) and 64 nodes 18 s; 128 nodes over 600 s. What
// dominated then (callgrind, AllToAll/32): FlowNetwork::resolve at 97% of
// all instructions, re-solving the whole remaining fabric component at each
// of hundreds of distinct completion instants in the all-to-all's tail,
// where ECMP hash imbalance makes a few hundred uplinks and NICs distinct
// bottlenecks. The incremental re-solve (flow_network.h) re-fills only the
// flows at or above the leavers' smallest level; in this tail the leavers are
// almost always the fastest flows, so nobody else gains and nothing is
// re-solved at all: of the 464 instants at 32 nodes, 2 re-solve anything.
// Then finish estimates moved to the engine's radix heap, and joins were
// batched per instant (3,064 engine events instead of 1.05 M), which left
// 128 nodes at 2.7-4.2 s and 645 MiB.

#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

#include "base/testing/peak_memory.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/degrade.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::models {
namespace {

// Peak resident set of the whole process, in MiB (Linux reports kB).
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
void all_to_all(benchmark::State& state, const topology::Topology& topo,
                NetworkFidelity fidelity = NetworkFidelity::kFlow, bool history = false) {
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
    FlowNetwork net(sim, params, fidelity);
    net.record_link_history(history);
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
void BM_AllToAll(benchmark::State& state) {
  all_to_all(state, topology::build_cluster(topology::preset_spec("zionex", static_cast<int>(state.range(0)))));
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

// The same all-to-all with one spine at half speed (--degrade
// device:spine0=0.5): the flows it carries run slower than the rest, finish
// at other instants, and max-min couples the whole fabric, so each finish
// re-solves most of it (docs/cluster_files.md, "Simulation time"). The
// figure an exact incremental solver would have to improve.
void BM_AllToAllHalfSpeedSpine(benchmark::State& state) {
  const topology::Topology healthy =
      topology::build_cluster(topology::preset_spec("zionex", static_cast<int>(state.range(0))));
  all_to_all(state, topology::degrade_links(healthy, {topology::parse_degradation("device:spine0=0.5")}));
}
BENCHMARK(BM_AllToAllHalfSpeedSpine)->Arg(32)->Arg(64)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

// The all-to-all at the analytical fidelity with the links' utilisation
// recorded (what --timeline --fidelity analytical does): every flow joins
// and leaves on its own, and each link is sampled once per instant, not once
// per flow (a sum over its thousands of flows each time made model A's
// 64-node timeline take 39 s instead of 4).
//   AllToAllAnalyticalHistory/16  16,256 flows: sim 50 ms before, 18 ms after
//   AllToAllAnalyticalHistory/32  65,280 flows: sim 483 ms before, 47 ms after
// (one run each; before, 4x the flows cost 10x: each sample summed a NIC's
// flows).
void BM_AllToAllAnalyticalHistory(benchmark::State& state) {
  all_to_all(state, topology::build_cluster(topology::preset_spec("zionex", static_cast<int>(state.range(0)))),
             NetworkFidelity::kAnalytical, /*history=*/true);
}
BENCHMARK(BM_AllToAllAnalyticalHistory)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();

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
