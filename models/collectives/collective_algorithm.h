// File: models/collectives/collective_algorithm.h
//
// The interface of a collective algorithm: a pure function from a request and
// a small read-only view of where the group's members sit (server, index in
// the server) to a CollectivePlan (STYLE.md 10.5). Algorithms hold only their
// options; the same request and view always give the same plan. This turns
// ASTRA-sim's stateful Algorithm::run(EventType, CallData*) inside out.
//
// TopologyView keeps topology types out of the algorithms: topology_view.h
// builds one from a topology::Topology and the group's global ranks.

#ifndef ZIONSIM_MODELS_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
#define ZIONSIM_MODELS_COLLECTIVES_COLLECTIVE_ALGORITHM_H_

#include <string_view>
#include <vector>

#include "models/collectives/plan.h"

namespace zx::models::collectives {

/// Where one group member sits.
struct MemberLocation {
  int server = 0;       ///< server index in the cluster
  int local_index = 0;  ///< GPU index inside its server
  /// The GPU is on its server's NVLink switch and has a NIC of the backend
  /// network behind PCIe switches alone (no CPU on the way: NCCL's
  /// PATH_PXB or better), the NIC of its rail: what NCCL's PXN needs of a
  /// relay (NVIDIA/nccl, src/graph/search.cc, ncclTopoGetNetDev).
  bool rail_nic = false;
  /// The GPU is on its server's NVLink switch (every server-mate one hop away).
  bool nvlink_switch = false;
};

/// For each group member (group index 0..n-1), its server and local index.
class TopologyView {
 public:
  explicit TopologyView(std::vector<MemberLocation> members);

  /// n members on servers of `gpus_per_server` GPUs, in rank order
  /// (member i on server i / gpus_per_server): for tests and quick estimates.
  static TopologyView packed(int n, int gpus_per_server);

  int size() const { return static_cast<int>(members_.size()); }
  const MemberLocation& member(int index) const;

  /// The group's members per server: servers ascending, members of each
  /// sorted by local index. The shape hierarchical algorithms work on.
  std::vector<std::vector<int>> members_by_server() const;

  /// Group indices ordered so that members of one server are adjacent
  /// (servers ascending, local index ascending): NCCL's ring order, which
  /// crosses the fabric once per server. With `rotation` r, each server's
  /// members start at its (r mod size)-th: the ring then leaves each server
  /// from another GPU, and so through another NIC, as NCCL's channels do.
  std::vector<int> ring_order(int rotation = 0) const;

  /// Whether the NVLink switch of the members' servers reduces in the
  /// network (NVLink SHARP, NVSwitch 3 and later: H100, B200, GB200), so
  /// that plans may send to kNvlinkSwitch. False unless the executor says
  /// so (the cluster's nvlink.sharp_efficiency > 0).
  bool switch_reduces() const { return switch_reduces_; }
  void set_switch_reduces(bool on) { switch_reduces_ = on; }

  /// The channels NCCL's communicator of this group would run
  /// (comm->nChannels, from its topology search: models/nccl
  /// runtime_channels), which bound its point-to-point channels; 0 when the
  /// executor does not say (algorithms then assume NCCL's MAXCHANNELS, 32).
  int nccl_channels() const { return nccl_channels_; }
  void set_nccl_channels(int channels) { nccl_channels_ = channels; }

 private:
  std::vector<MemberLocation> members_;
  bool switch_reduces_ = false;
  int nccl_channels_ = 0;
};

/// Lowers a collective into point-to-point steps.
class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;

  /// The registry name ("ring", "halving_doubling", ...).
  virtual std::string_view name() const = 0;
  virtual bool supports(CollectiveKind kind) const = 0;

  /// The plan for `request` on `topology` (whose size is the group's).
  /// Throws zx::InputError for a malformed request, a kind this algorithm
  /// does not support, or a group shape it cannot handle (saying why).
  virtual CollectivePlan lower(const CollectiveRequest& request,
                               const TopologyView& topology) const = 0;
};

/// The checks every lower() starts with: validate(request), the view's size
/// equals the group's, and algorithm.supports(request.kind). Throws
/// zx::InputError.
void check_lowerable(const CollectiveAlgorithm& algorithm, const CollectiveRequest& request,
                     const TopologyView& topology);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
