// File: models/collectives/plugins/examples/bidirectional_ring.cc
//
// The worked example of a shared-library plug-in (../plugin_api.h): a
// bidirectional ring all-reduce, built as libbidirectional_ring.so and
// loaded with `zionsim ... --plugin libbidirectional_ring.so`.
//
// Why it is worth having: NCCL's ring sends every byte one way round the
// ring, so each link carries traffic in one direction only while the reverse
// direction of the same full-duplex link idles. Here the buffer is cut in
// two halves; the first half runs the ring all-reduce (reduce-scatter, then
// all-gather) clockwise and the second half counter-clockwise, at the same
// time. Each rank still sends 2(n-1)/n x S bytes in total, but over both
// directions, so on a ring of full-duplex links each direction carries half
// as much and the bandwidth term halves; the latency term is unchanged
// (2(n-1) hops per half).
//
// Ring positions follow TopologyView::ring_order(), as the built-in ring
// does, so the ring crosses the fabric once per server in each direction.
// Option "chunks" (1..1024) pipelines each half in that many slices, the
// slices of one half following each other hop by hop as NCCL's do.
//
// The plug-in uses only the public collectives API (plan.h, registry.h,
// collective_algorithm.h): the internal PlanBuilder is not available to
// code outside zionsim, so this file builds the plan itself.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/collective_algorithm.h"
#include "models/collectives/plan.h"
#include "models/collectives/plugins/plugin_api.h"
#include "models/collectives/registry.h"

namespace zx::models::collectives::examples {
namespace {

class BidirectionalRingAlgorithm : public CollectiveAlgorithm {
 public:
  explicit BidirectionalRingAlgorithm(int chunks) : chunks_(chunks) {}
  std::string_view name() const override { return "bidirectional_ring"; }
  bool supports(CollectiveKind kind) const override { return kind == CollectiveKind::kAllReduce; }

  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override {
    check_lowerable(*this, request, topology);
    const int n = static_cast<int>(request.ranks.size());
    const int elem = size_bytes(request.dtype);
    const std::vector<int> ring = topology.ring_order();
    const auto at = [&](int p) { return ring[static_cast<std::size_t>(((p % n) + n) % n)]; };
    CollectivePlan plan{.kind = request.kind, .group_size = n};

    // chunk(h, j, b): half h (0 clockwise, 1 counter-clockwise), slice j,
    // block b of the ring (the block that ring position b ends up reducing).
    const auto chunk = [&](int h, int j, int b) {
      return static_cast<std::uint32_t>(((h * chunks_ + j) * n) + ((b % n) + n) % n);
    };
    for (const sim::Bytes half : split_bytes(request.bytes_per_rank, 2, elem)) {
      for (const sim::Bytes slice : split_bytes(half, chunks_, elem)) {
        for (const sim::Bytes block : split_bytes(slice, n, elem)) {
          plan.chunks.push_back(Chunk{.size = block});
        }
      }
    }
    if (n == 1) return plan;

    // Step index of (half, slice, hop), for the pipeline dependencies.
    const int hops = 2 * (n - 1);
    const auto step_index = [&](int h, int j, int s) {
      return static_cast<std::uint32_t>((h * chunks_ + j) * hops + s);
    };
    plan.steps.resize(static_cast<std::size_t>(2 * chunks_ * hops));
    for (int h = 0; h < 2; ++h) {
      const int d = h == 0 ? 1 : -1;  // direction round the ring
      for (int j = 0; j < chunks_; ++j) {
        for (int s = 0; s < hops; ++s) {
          Step& step = plan.steps[step_index(h, j, s)];
          if (s > 0) step.after.push_back(step_index(h, j, s - 1));
          if (j > 0) step.after.push_back(step_index(h, j - 1, s));
          const bool reducing = s < n - 1;
          // Reduce-scatter hop s: position p sends block p - d(s+1) to p + d,
          // which reduces it; position p ends with block p reduced. All-gather
          // hop s: position p forwards block p - d*s, which p + d copies.
          const int t = reducing ? s + 1 : s - (n - 1);
          for (int p = 0; p < n; ++p) {
            const std::uint32_t c = chunk(h, j, p - d * t);
            const sim::Bytes size = plan.chunks[c].size;
            if (size == sim::Bytes(0)) continue;  // nothing to move
            step.transfers.push_back(Transfer{
                .src = at(p),
                .dst = at(p + d),
                .size = size,
                .op = reducing ? TransferOp::kReduce : TransferOp::kCopy,
                .chunks = {ChunkRange{c, c + 1}},
            });
            if (reducing)
              step.local_work.push_back(LocalWork{.rank = at(p + d), .reduce_bytes = size});
          }
          std::sort(step.local_work.begin(), step.local_work.end(),
                    [](const LocalWork& a, const LocalWork& b) { return a.rank < b.rank; });
        }
      }
    }
    return plan;
  }

 private:
  int chunks_;
};

}  // namespace
}  // namespace zx::models::collectives::examples

extern "C" int zionsim_collective_plugin_api_version(void) {
  return ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION;
}

extern "C" void zionsim_register_collectives(
    zx::models::collectives::CollectiveRegistry* registry) {
  using zx::models::collectives::examples::BidirectionalRingAlgorithm;
  registry->add("bidirectional_ring",
                "all-reduce: two half-buffer rings in opposite directions, using both directions "
                "of every link; option chunks",
                [](zx::json::ObjectReader& options) {
                  int chunks = 1;
                  options.read_int("chunks", chunks, {.min = 1, .max = 1024});
                  return std::make_unique<BidirectionalRingAlgorithm>(chunks);
                });
}
