// File: models/collectives/ring.h
//
// Ring collectives, as NCCL runs them (and as Thakur, Rabenseifner and Gropp,
// "Optimization of collective communication operations in MPICH", 2005,
// describe the ring all-gather and the bandwidth-optimal reduce-scatter +
// all-gather all-reduce, after Patarasuk and Yuan 2009).
//
// The ring visits the group's members server by server (TopologyView's
// ring_order), so it crosses the fabric once per server. The buffer is cut
// into `channels` x `chunks` slices; each slice is an independent chain of
// ring steps, and the slices of one channel follow each other hop by hop
// (slice k's step s waits for slice k-1's step s), which is NCCL's pipeline.
// Channel c's ring starts each server at its c-th member, so that it leaves
// the server from another GPU, through another NIC: with as many channels
// as NICs per server every NIC carries an equal share, as NCCL's rings do
// (2 ZionEX nodes, 256 MiB all-reduce: 23.8 GB/s bus bandwidth with 1
// channel, 187.5 with 8, NCCL's cost model 184.3).
//
//   all-reduce      reduce-scatter then all-gather: 2(n-1) steps per slice;
//                   each rank sends 2(n-1)/n x S
//   reduce-scatter  n-1 steps per slice; each rank sends (n-1)/n x S
//   all-gather      n-1 steps per slice; each rank sends (n-1)/n x S
//   broadcast       a pipelined chain from the root: n-1 hops per slice
//   reduce          a pipelined chain ending at the root: n-1 hops per slice

#ifndef ZIONSIM_MODELS_COLLECTIVES_RING_H_
#define ZIONSIM_MODELS_COLLECTIVES_RING_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models::collectives {

struct RingOptions {
  int chunks = 1;    ///< pipeline slices per channel, in [1, 1024]
  int channels = 1;  ///< parallel rings over disjoint parts of the buffer, in [1, 64]
};

/// Reads {"chunks": int, "channels": int}; problems go to the reader's diagnostics.
RingOptions parse_ring_options(json::ObjectReader& options);

class RingAlgorithm : public CollectiveAlgorithm {
 public:
  explicit RingAlgorithm(RingOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "ring"; }
  bool supports(CollectiveKind kind) const override;
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;

 private:
  RingOptions options_;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_RING_H_
