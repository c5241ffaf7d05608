// File: models/collectives/hierarchical.h
//
// Two-level collectives for servers with a fast NVSwitch domain and a
// per-GPU RDMA NIC (ZionEX: 8 GPUs, 8 x 200 Gb/s RoCE per server). The group
// is seen as G servers of L members each (members_by_server(); every server
// must hold the same number of members). Member (g, l) is the l-th member of
// server g; the members (., l) of all servers form "rail" l.
//
//   all-reduce      ring reduce-scatter inside each server (L-1 steps), an
//                   all-reduce along each rail on the 1/L piece it owns,
//                   ring all-gather inside each server (L-1 steps): each
//                   rank sends 2(L-1)/L x S + 2(G-1)/(G L) x S, and only
//                   2(G-1)/(G L) x S crosses the fabric (NCCL's
//                   intra-node/inter-node split; Horovod's hierarchical
//                   all-reduce; Thakur et al. 2005 for the phases). Along
//                   the rails, by default, a ring per prime factor of G,
//                   smallest first, each over the servers differing in
//                   that digit of G's mixed radix (Ruefenacht et al. 2017's
//                   recursive multiplying): for G a power of two recursive
//                   halving then doubling (2 log2 G steps: on 256 servers
//                   16 where a ring takes 510, each paying the latency
//                   between servers), on 96 = 2^5 x 3 servers 2 x (5 + 2)
//                   steps. Where G's factors are large, recursive
//                   halving/doubling over the largest power of two P < G
//                   servers, the other G - P folding their whole buffer
//                   into them a step before and after, is cheaper for
//                   small buffers; an alpha-beta estimate picks
//                   (choose_rail_algorithm), or option "across" ("ring",
//                   "halving_doubling", "mixed_radix"). Each moves 2(G-1)
//                   x S / L across the fabric per rail (the folding
//                   unevenly: the extras' whole buffers).
//   reduce-scatter  intra-server ring reduce-scatter of the rail super-blocks,
//                   then a reduce-scatter along each rail (as above).
//   all-gather      an all-gather along each rail (as above), then an
//                   intra-server ring all-gather of the rail super-blocks.
//   all-to-all(-v)  aggregate inside the server over NVLink by destination
//                   rail, then cross the fabric once per rail pair (g, l) ->
//                   (g', l). Data is aggregated by the rail of its final
//                   destination, so the fabric step delivers it directly and
//                   the "distribute" phase is empty (NCCL's PXN, "PCI x
//                   NVLink", 2.12). Two steps.
//
// Pipelining (all-reduce, reduce-scatter, all-gather): the buffer may be
// cut into slices, each running all the phases, slice k's j-th step after
// slice k-1's j-th step, so that a slice's fabric phase runs while the next
// one's NVLink phase does (NCCL pipelines its chunks the same way). Each
// extra slice adds a step's latency and saves bandwidth time. By default,
// across servers, sqrt(bytes per rank / 4 MiB) slices, rounded, 1 to 16
// (kDefaultSliceScaleBytes): 2 at 16 MiB, 4 at 64, 8 at 256, where the
// all-reduce then lands within 13% of NCCL 2.20's cost model at 16 MiB and
// 7% at 64 and 256 MiB on 8 to 96 ZionEX servers (on 2, 16 to 25% below
// it) (`zionsim collective --nodes N -b 16M -e 256M -f 4 --algo
// hierarchical nccl`; 8 servers: 269, 881 and 3,028 us against NCCL's 299,
// 947 and 3,159; in one slice 323, 1,199 and 4,703), and a 1 GiB
// reduce-scatter on 16 servers takes 6,328 us (NCCL: 5,926; one slice:
// 10,946). Inside one server, one slice. Option "chunks" sets the number of
// slices (1: the phases one after the other over the whole buffer, the
// default until 2026-12-01); "chunk_bytes" sets their size instead:
// ceil(bytes per rank / chunk_bytes) slices, at most 64. The slices cost
// simulation: model A's whatif (64 MB buckets, 4 slices) takes 2.5 to 4.4
// times as long as in one slice (README, "How long a what-if takes").

#ifndef ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_
#define ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_

#include "models/collectives/collective_algorithm.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models::collectives {

/// How the phases across servers run along each rail.
enum class RailAlgorithm {
  kAuto,             ///< the default: whichever choose_rail_algorithm says
  kRing,             ///< a ring: 2(G-1) steps for an all-reduce
  kHalvingDoubling,  ///< recursive halving/doubling: 2 log2 G steps, 2 more for G not a power of two
  kMixedRadix,       ///< a ring per prime factor of G: 2 sum(f - 1) steps
};

struct HierarchicalOptions {
  int chunks = 0;                ///< > 0: this many pipelined slices, in [1, 64]
  std::int64_t chunk_bytes = 0;  ///< > 0: slices of about this size instead
  RailAlgorithm across = RailAlgorithm::kAuto;
};

/// An alpha-beta estimate of one phase along rails of `servers` servers
/// with `rail_bytes` per rail (a rail's share of a slice) by `algorithm`:
/// a reduce-scatter or an all-gather; `paired`: one of the two of an
/// all-reduce (halving/doubling's extras then fold in once each way). A
/// step costs kRailStepSeconds, a byte 1/kRailBytesPerSecond.
double rail_phase_seconds(RailAlgorithm algorithm, int servers, double rail_bytes, bool paired);
/// The choice "auto" makes: mixed radix, or halving/doubling where its
/// estimate is strictly lower. For a power of two they are the same plan;
/// otherwise halving/doubling's extra servers fold their whole buffer in
/// and out, which pays only for small buffers when G's factors are large
/// (paired: 65 servers, 5 x 13, up to 607 KB per rail; never for 96, 2^5 x
/// 3, nor 3). A ring is never faster than mixed radix by this estimate
/// (the same bytes in as many steps or more; for a prime, the same plan).
RailAlgorithm choose_rail_algorithm(int servers, double rail_bytes, bool paired);
/// For that choice only (the simulation itself runs on the cluster's links):
/// NCCL 2.20's per-step latency between servers for the LL protocol, 2.7 us
/// (hwLat[NET][Ring][LL], src/graph/tuning.cc; also the default links plus
/// communication library between two ZionEX servers), and a ZionEX NIC's
/// 200 Gb/s.
inline constexpr double kRailStepSeconds = 2.7e-6;
inline constexpr double kRailBytesPerSecond = 25e9;

/// The default slicing, when neither option is given, for a group spanning
/// two servers or more (inside one there is no fabric phase to overlap):
/// sqrt(bytes per rank / kDefaultSliceScaleBytes) slices, rounded, from 1 to
/// kDefaultMostSlices. The square root is the alpha-beta optimum of a
/// pipeline, whose k slices add k - 1 steps of latency and divide the time
/// of the phases off the bottleneck by k; the scale, 4 MiB, puts the
/// all-reduce where NCCL 2.20's cost model puts it at 16, 64 and 256 MiB
/// (2, 4 and 8 slices) on 8 to 96 ZionEX servers (see the header comment).
inline constexpr std::int64_t kDefaultSliceScaleBytes = std::int64_t{4} << 20;
inline constexpr int kDefaultMostSlices = 16;

/// The number of slices a request of `bytes_per_rank` runs in, on a group
/// spanning `servers` servers.
int hierarchical_slices(const HierarchicalOptions& options, sim::Bytes bytes_per_rank, int servers);

/// Reads {"chunks": int} or {"chunk_bytes": int} (not both), and "across":
/// "auto", "ring" or "halving_doubling"; problems go to the reader's
/// diagnostics.
HierarchicalOptions parse_hierarchical_options(json::ObjectReader& options);

class HierarchicalAlgorithm : public CollectiveAlgorithm {
 public:
  explicit HierarchicalAlgorithm(HierarchicalOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "hierarchical"; }
  bool supports(CollectiveKind kind) const override;
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;

 private:
  HierarchicalOptions options_;
};

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_HIERARCHICAL_H_
