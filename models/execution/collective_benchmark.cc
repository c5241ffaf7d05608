// File: models/execution/collective_benchmark.cc
//
// One collective alone on an idle ZionEX fabric, as `zionsim collective
// --nodes N --op all_reduce --algo ring -b 1M -e 1M` runs it: lowering,
// the discrete-event run of its plan (a flow per transfer, max-min sharing
// on every link) and the plan's memory. The ring all-reduce of 1 MiB is the
// scale issue's target 3: its plan has 2(n-1) x n steps of one transfer,
// 33.5 M on 512 nodes. The second argument says how the plan is kept: 0
// generated (collectives::StepGenerator, what the ring lowers to), 1 held
// (the same steps made up front, collectives::materialize: the plan as it
// was before generation). One case per process gives honest peak memory:
//
//   bazel build --config=opt //models/execution:collective_benchmark
//   for a in 64/1 64/0 128/1 128/0 256/0 512/0; do
//     bazel-bin/models/execution/collective_benchmark --benchmark_filter="RingAllReduce/$a/"; done
//
// Reported: the real time (lowering and running), and counters time_us (the
// simulated collective: the same either way, or generation changed the
// result; the links' latencies only, where the command adds the cluster's
// software latencies), steps (run) and peak_rss_MiB.
//
// Measured 2026-12-07 on the 2-core build machine, opt build, one run each:
//
//   nodes (GPUs)   held s       generated s       ratio   held / generated peak_rss_MiB   time_us
//   64 (512)          1.30           0.84           1.5x         190 / 17                    924.94
//   128 (1024)        5.84           3.64           1.6x         663 / 35                   1809.02
//   256 (2048)          -           15.7              -             - / 96                   3585.81
//   512 (4096)          -           see docs/network_model.md, "Memory"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>

#include "base/testing/peak_memory.h"
#include "models/collectives/plan.h"
#include "models/collectives/ring.h"
#include "models/collectives/topology_view.h"
#include "models/execution/network_backend.h"
#include "models/execution/testing/backend_rig.h"

namespace zx::models {
namespace {

void BM_RingAllReduce(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool held = state.range(1) != 0;
  double time_us = 0;
  std::uint64_t steps = 0;
  for (auto _ : state) {
    testing::BackendRig rig(nodes);
    rig.network.recycle_flow_ids(true);  // as the commands run: memory follows the flows in flight
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
    collectives::CollectiveRequest request;
    request.kind = collectives::CollectiveKind::kAllReduce;
    for (int r = 0; r < rig.topo.num_gpus(); ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(1 << 20);
    collectives::CollectivePlan plan =
        collectives::RingAlgorithm().lower(request, collectives::make_topology_view(rig.topo, request.ranks));
    if (held) plan = collectives::materialize(std::move(plan));
    std::optional<sim::TimePoint> done;
    backend.run_plan(std::move(plan), request.ranks, [&] { done = rig.sim.now(); });
    rig.sim.run();
    if (!done) {
      state.SkipWithError("the collective did not finish");
      return;
    }
    time_us = done->since_start().to_seconds() * 1e6;
    steps = backend.steps_run();
  }
  state.counters["time_us"] = time_us;
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_RingAllReduce)
    ->Args({64, 1})->Args({64, 0})->Args({128, 1})->Args({128, 0})->Args({256, 0})->Args({512, 0})
    ->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace
}  // namespace zx::models
