// File: models/network/bundle_builder_benchmark.cc
//
// Building the linkshare bundle of one all-to-all step on ZionEX: every
// ordered pair of GPUs (n(n-1) transfers of 1 MB, ECMP-keyed per pair),
// routed whole and added link by link (the second argument 0, as before
// BundleBuilder), or through BundleBuilder (1): its fixed ways out and in
// summed per GPU, the fabric between switches walked per pair. Both give the
// same bundle (bundle_builder_test). Real time per bundle, the counter
// transfers (per bundle) and items_per_second (transfers a second):
//
//   bazel build --config=opt //models/network:bundle_builder_benchmark
//   bazel-bin/models/network/bundle_builder_benchmark
//
// Measured 2026-12-07 on the 2-core build machine, opt build, two runs
// (real time per bundle, whole / builder):
//
//   nodes (transfers)    whole ms       builder ms     ratio
//   16 (16 K)            3.2 - 3.4      0.46 - 0.48    7x
//   64 (262 K)           59 - 60        11.7 - 12.9    4.6x - 5.1x
//   256 (4.2 M)          956 - 1,263    207 - 219      4.6x - 5.8x

#include <benchmark/benchmark.h>

#include <cstdint>

#include "models/network/bundle_builder.h"
#include "models/network/link_share.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::models {
namespace {

void BM_AllToAllBundle(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool builder = state.range(1) != 0;
  const topology::Topology topo = topology::build_cluster(topology::preset_spec("zionex", nodes));
  const topology::Router router(topo);
  sim::Simulator simulator;
  LinkShareNetwork share(simulator, link_params(topo));
  BundleBuilder b(router, share);
  RouteScratch scratch;
  const int gpus = topo.num_gpus();
  std::uint64_t transfers = 0;
  for (auto _ : state) {
    std::uint64_t key = 0;
    for (int s = 0; s < gpus; ++s) {
      for (int d = 0; d < gpus; ++d) {
        if (s == d) continue;
        ++key;
        if (builder) {
          b.add_gpu_transfer(s, d, sim::Bytes(1'000'000), key * 0x9E3779B97F4A7C15ULL, sim::Duration::ns(1200));
        } else {
          route_gpus(router, s, d, key * 0x9E3779B97F4A7C15ULL, scratch);
          share.add(scratch.links, sim::Bytes(1'000'000), 1.0, sim::Duration::ns(1200));
        }
      }
    }
    if (builder) b.flush();
    // Starting the bundle hands its parts over; they are never run here.
    benchmark::DoNotOptimize(share.start([] {}));
    transfers += static_cast<std::uint64_t>(gpus) * static_cast<std::uint64_t>(gpus - 1);
  }
  state.counters["transfers"] = static_cast<double>(gpus) * (gpus - 1);
  state.SetItemsProcessed(static_cast<std::int64_t>(transfers));
}
BENCHMARK(BM_AllToAllBundle)
    ->ArgsProduct({{16, 64, 256}, {0, 1}})
    ->ArgNames({"nodes", "builder"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace zx::models
