// File: models/collectives/nvls.h
//
// NVLink SHARP collectives ("NVLS", as NCCL names them since 2.17): the
// NVLink switch reduces in the network. Inside one NVLink domain whose
// switch can (NVSwitch 3 and later: H100, B200, GB200; TopologyView::
// switch_reduces), each GPU owns one block of every slice of the buffer:
//
//   reduce   every GPU sends the slice to the switch (multimem reduce),
//            and the switch hands each GPU its block reduced over all;
//   gather   each GPU sends its (reduced) block to the switch, which
//            multicasts it to every other GPU.
//
//   all-reduce      reduce then gather: each GPU's link carries S + S/n to
//                   the switch and S back (a ring: 2(n-1)/n S each way)
//   reduce-scatter  reduce: S up, S/n down
//   all-gather      gather: S/n up, (n-1)/n S down
//
// The slices follow each other phase by phase (slice k's reduce after
// slice k-1's, and so on), so one slice's reduce overlaps the previous
// slice's delivery: the links' two directions work at once, as NCCL's
// pipelined NVLS kernels keep them busy. The executor runs the switch's
// share at the cluster's nvlink.sharp_efficiency of the link (fitted to
// NCCL's measured NVLS bandwidth, topology/presets.cc).
//
// What NCCL does that this does not: NVLS across servers (NVLS_TREE, with
// the network between the domains), and the choice between NVLS and ring by
// size (NCCL runs small all-reduces as ring/LL).

#ifndef ZIONSIM_MODELS_COLLECTIVES_NVLS_H_
#define ZIONSIM_MODELS_COLLECTIVES_NVLS_H_

#include <cstdint>

#include "models/collectives/collective_algorithm.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models::collectives {

struct NvlsOptions {
  int chunks = 0;                ///< > 0: this many pipelined slices, in [1, 64]
  std::int64_t chunk_bytes = 0;  ///< > 0: slices of about this size instead
};

/// Default slice size: 1 MiB, at most 64 slices (a 1 MiB all-reduce is one
/// slice; 64 MiB and more, 64). Assumption, shaped like NCCL's pipelined
/// NVLS chunks (NCCL_NVLS_CHUNKSIZE, 128 KiB) but coarser, so that a 4 GiB
/// all-reduce stays 256 steps; its fill and drain then cost 1-2% of the time.
inline constexpr std::int64_t kNvlsDefaultChunkBytes = std::int64_t{1} << 20;

/// Reads {"chunks": int} or {"chunk_bytes": int} (not both); problems go to
/// the reader's diagnostics.
NvlsOptions parse_nvls_options(json::ObjectReader& options);

/// The slices a buffer of `bytes` per rank is cut into.
int nvls_slices(const NvlsOptions& options, std::int64_t bytes);

class NvlsAlgorithm : public CollectiveAlgorithm {
 public:
  explicit NvlsAlgorithm(NvlsOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "nvls"; }
  bool supports(CollectiveKind kind) const override;
  /// Throws zx::InputError unless the group is inside one server whose
  /// NVLink switch reduces (topology.switch_reduces()).
  CollectivePlan lower(const CollectiveRequest& request, const TopologyView& topology) const override;

 private:
  NvlsOptions options_;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_NVLS_H_
