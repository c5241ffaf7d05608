// File: topology/router_benchmark.cc
//
// Cost of building a ZionEX cluster and of routing every ordered GPU pair (an
// all-to-all's worth of routes) through Router, at 64 and 512 servers.
//
//   bazel run --config=opt //topology:router_benchmark
//
// Figures on the 2-core development VM, opt build, one run (Debian's
// libbenchmark warns it was built as DEBUG; that affects only its own timer
// loop). Routes are into a reused vector. Peak RSS is the whole process.
//   BM_BuildZionEx/64            2.2 ms   (2,132 nodes, 7,008 links)
//   BM_BuildZionEx/512          24.4 ms   (16,972 nodes, 56,064 links)
//   BM_RouteAllPairs/64         24 ms     262,144 routes, 10.7 M routes/s
//   BM_RouteAllPairs/512        1.7 s     16,773,120 routes, 10.1 M routes/s, peak RSS 28 MiB
//   BM_RouteAllToAllOrder/256/0  2.24 s   4,192,256 routes, 1.9 M routes/s (a table per NIC)
//   BM_RouteAllToAllOrder/256/1  0.43 s   9.8 M routes/s (NICs share their switch's table)
// Before NICs shared their switch's fabric table, BM_RouteAllPairs/512 peaked
// at 191 MiB.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "topology/presets.h"
#include "topology/router.h"

namespace zx::topology {
namespace {

// Resident set size in kB from /proc/self/status (Linux), 0 elsewhere.
long rss_peak_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

void BM_BuildZionEx(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Topology t = build_cluster(preset_spec("zionex", nodes));
    benchmark::DoNotOptimize(t.num_links());
  }
}
BENCHMARK(BM_BuildZionEx)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond);

// Routes all ordered GPU pairs with a fresh Router per iteration, so the
// per-destination tables are built inside the timed region.
void BM_RouteAllPairs(benchmark::State& state) {
  const Topology t = build_cluster(preset_spec("zionex", static_cast<int>(state.range(0))));
  const int gpus = t.num_gpus();
  std::int64_t routes = 0;
  std::int64_t links = 0;
  for (auto _ : state) {
    const Router router(t);
    Route r;
    for (int d = 0; d < gpus; ++d) {
      for (int s = 0; s < gpus; ++s) {
        if (s == d) continue;
        router.route_into(t.gpu(s), t.gpu(d), static_cast<std::uint64_t>(s) * 131 + d, r);
        links += static_cast<std::int64_t>(r.size());
        ++routes;
      }
    }
  }
  benchmark::DoNotOptimize(links);
  state.counters["routes"] =
      benchmark::Counter(static_cast<double>(routes), benchmark::Counter::kIsRate);
  state.counters["peak_rss_MiB"] = static_cast<double>(rss_peak_kb()) / 1024.0;
}
BENCHMARK(BM_RouteAllPairs)->Arg(64)->Arg(512)->Unit(benchmark::kMillisecond)->Iterations(1);

// All ordered GPU pairs source by source, the order an all-to-all starts its
// flows in: consecutive routes go to different destinations, so the tables
// they read change every route. One Router for all iterations (tables warm),
// as in a simulation. Arg 1: 1 = NICs share their switch's fabric table
// (the default), 0 = every NIC has its own.
void BM_RouteAllToAllOrder(benchmark::State& state) {
  const Topology t = build_cluster(preset_spec("zionex", static_cast<int>(state.range(0))));
  const Router router(t, state.range(1) != 0);
  const int gpus = t.num_gpus();
  std::int64_t routes = 0;
  std::int64_t links = 0;
  Route r;
  for (auto _ : state) {
    for (int s = 0; s < gpus; ++s) {
      for (int d = 0; d < gpus; ++d) {
        if (s == d) continue;
        router.route_into(t.gpu(s), t.gpu(d), static_cast<std::uint64_t>(routes), r);
        links += static_cast<std::int64_t>(r.size());
        ++routes;
      }
    }
  }
  benchmark::DoNotOptimize(links);
  state.counters["routes"] =
      benchmark::Counter(static_cast<double>(routes), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RouteAllToAllOrder)
    ->Args({64, 0})
    ->Args({64, 1})
    ->Args({256, 0})
    ->Args({256, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace zx::topology
