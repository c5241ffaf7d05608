// File: experiments/whatif_benchmark.cc
//
// The what-if simulation end to end, as `zionsim whatif --model dlrm-a
// --nodes N` runs one size: building the cluster, sharding, the iteration's
// graph, and the discrete-event run with max-min sharing on every link.
// One size per process gives honest peak memory:
//
//   bazel build --config=opt //tools:whatif_benchmark
//   for n in 16 24 32 48 64; do
//     bazel-bin/experiments/whatif_benchmark --benchmark_filter="ModelA/$n/"; done
//
// Counters: sim_s (the point's own wall time, what the CLI reports),
// iteration_ms (the simulated result: the same at every speed-up, or the
// change is not a speed-up) and peak_rss_MiB.
//
// Measured 2026-11-30 on the 2-core build machine, opt build, one run each,
// before -> after this session's network-model changes (per-link level
// groups for incremental re-solves, the class sort of fixed flows):
//
//   nodes (GPUs)   sim_s before   sim_s after   iteration_ms
//   16 (128)          0.28           0.26          89.053
//   24 (192)          7.27           1.66          93.136
//   32 (256)          1.79           1.73          93.277
//   48 (384)         47.1            9.6           96.600
//   64 (512)        > 489 *         97             97.313
//
// * 489 s with the class sort alone; the code before it was not run at 64.
// What is left is the number of re-solves: the all-to-all's flows finish at
// many distinct instants (at 24 nodes over 8,000, 70% of them within 1 ns of
// the one before), each an incremental re-solve of the flows at or above the
// leavers' level, a few thousand. perf at 64 nodes: the re-solve's own
// bookkeeping about a fifth, the solver a quarter, the completion queue a
// sixth.

#include <benchmark/benchmark.h>

#include "base/testing/peak_memory.h"
#include "experiments/whatif.h"

namespace zx::experiments {
namespace {

// Model A at state.range(0) nodes, one size on one thread.
WhatIfOptions model_a(const benchmark::State& state) {
  WhatIfOptions options;
  options.model = "dlrm-a";
  options.nodes = {static_cast<int>(state.range(0))};
  options.threads = 1;
  return options;
}

// Times the point and sets the counters.
void run_point(benchmark::State& state, const WhatIfOptions& options) {
  WhatIfPoint point;
  // No DoNotOptimize on the result: on the double field, with Debian's
  // libbenchmark 1.7.1 and GCC 12 -O2, it left 6.95e-310 there (its "+m,r"
  // asm constraint); the run has effects the compiler cannot drop anyway.
  for (auto _ : state) point = run_whatif(options).front();
  if (!point.fits) {
    state.SkipWithError(point.reason.c_str());
    return;
  }
  state.counters["sim_s"] = point.wall_seconds;
  state.counters["iteration_ms"] = point.iteration_time_ms;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

void BM_WhatIfModelA(benchmark::State& state) { run_point(state, model_a(state)); }
BENCHMARK(BM_WhatIfModelA)
    ->Arg(16)->Arg(24)->Arg(32)->Arg(48)->Arg(64)
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same with `auto` choosing every kind's algorithm per call: the
// candidates' trials race (second argument 0) or each runs to its end
// (1: {"exhaustive": true}); both choose alike, so iteration_ms must match.
// Measured 2026-12-03, 2-core machine, opt build, one run each:
//
//   nodes   defaults sim_s   raced sim_s   exhaustive sim_s   iteration_ms
//   32           1.01            1.38            1.98            70.301
//   64           4.67            6.16            8.86            70.901
void BM_WhatIfModelATuned(benchmark::State& state) {
  WhatIfOptions options = model_a(state);
  for (const char* kind : {"all_reduce", "all_to_all", "reduce_scatter", "all_gather"}) {
    options.algorithms[kind] = "auto";
  }
  if (state.range(1) != 0) options.algorithm_options["auto"] = R"({"exhaustive": true})";
  run_point(state, options);
}
BENCHMARK(BM_WhatIfModelATuned)
    ->Args({32, 0})->Args({32, 1})->Args({64, 0})->Args({64, 1})
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// Model A with the all-to-all as NCCL schedules it (second argument 1:
// nccl_p2p) against the ideal all pairs at once (0: direct, the default).
// nccl_p2p's work items run one after another on each channel once the node
// groups outnumber NCCL's 16 p2p channels (past 16 nodes), so its flows
// start at thousands of distinct instants, each a re-solve of the flows in
// flight: the cost the scale issue has to remove before it can be the
// default. Measured 2026-12-03, 2-core machine, opt build, one run each
// (this binary, --benchmark_filter=ModelAAllToAll):
//
//   nodes   direct sim_s   nccl_p2p sim_s   ratio   iteration_ms direct / nccl_p2p   peak_rss_MiB
//   16          0.36            0.48          1.3        68.959 / 68.959                 29 / 36
//   24          1.37           10.95          8.0        70.319 / 70.382                 57 / 61
//   32          1.43           11.04          7.7        70.301 / 70.412                 87 / 98
void BM_WhatIfModelAAllToAll(benchmark::State& state) {
  WhatIfOptions options = model_a(state);
  options.algorithms["all_to_all"] = state.range(1) != 0 ? "nccl_p2p" : "direct";
  run_point(state, options);
}
BENCHMARK(BM_WhatIfModelAAllToAll)
    ->Args({16, 0})->Args({16, 1})->Args({24, 0})->Args({24, 1})->Args({32, 0})->Args({32, 1})
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// What a what-if knob costs, at each network fidelity: model A at
// state.range(0) nodes with knob state.range(1) (0 none, 1
// --oversubscription 2, 2 --oversubscription 4, 3 one NIC's uplink at half
// speed, 4 a whole NIC at half speed, 5 a spine at half speed, 6 the
// nccl_p2p all-to-all) at fidelity state.range(2) (0 flow, 1 coalesced,
// 2 linkshare).
// Uneven bottlenecks spread the all-to-all's finishes over its whole
// duration, each instant a re-solve; coalesced lets finishes within 1e-4 of
// a flow's transfer time share one. The figures are in docs/network_model.md
// ("Coalesced finishes" and "Link sharing"), from this binary:
//   bazel-bin/experiments/whatif_benchmark --benchmark_filter='ModelAKnob/32/'
// linkshare serves each link on its own, so an uneven fabric costs it no
// more than a healthy one.
constexpr const char* kKnobFidelities[] = {"flow", "coalesced", "linkshare"};
void BM_WhatIfModelAKnob(benchmark::State& state) {
  WhatIfOptions options = model_a(state);
  switch (state.range(1)) {
    case 1: options.cluster.overrides.push_back("fabric.oversubscription=2"); break;
    case 2: options.cluster.overrides.push_back("fabric.oversubscription=4"); break;
    case 3: options.cluster.degradations.push_back("link:node0/nic0->rack0/rsw=0.5"); break;
    case 4: options.cluster.degradations.push_back("device:node0/nic0=0.5"); break;
    case 5: options.cluster.degradations.push_back("device:spine3=0.5"); break;
    case 6: options.algorithms["all_to_all"] = "nccl_p2p"; break;
    default: break;
  }
  options.fidelity = kKnobFidelities[state.range(2)];
  run_point(state, options);
}
// At 128 nodes only the base run under flow: a knob's flow run there takes
// many minutes.
BENCHMARK(BM_WhatIfModelAKnob)
    ->ArgsProduct({{32}, {0, 1, 2, 3, 4, 5, 6}, {0, 1, 2}})
    ->ArgsProduct({{128}, {0, 1, 2, 3, 4, 5, 6}, {1, 2}})
    ->Args({128, 0, 0})
    ->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace zx::experiments
