// File: models/execution/network_backend.h
//
// The communication backend that carries collectives and transfers over the
// network model: a collective is lowered by its algorithm (a registry name)
// into a plan of point-to-point steps (models/collectives/plan.h), and the
// plan runs here: a step starts when the steps it comes after have
// finished; its transfers become flows between the member GPUs (routed by
// the topology's router, ECMP-keyed per transfer); when they have all
// arrived, the step's reduction work is charged (bytes / reduction
// bandwidth; members reduce in parallel), and the step is done. The
// collective is done when every step is. Adding an algorithm never touches
// this file.
//
// The communication library's own time, beyond the links' latencies
// (NetworkBackendOptions::software): a collective's first steps start
// `launch` after the call (kernel launch and channel setup), and every
// transfer's first byte waits `transfer` (inside a server) or
// `network_transfer` (between servers) more than its route's latency (the
// protocol's handshake: the receiver's credit, the sender's flag, the
// poll). A point-to-point transfer op pays both. Where a step has a rank
// send to several peers it issues them `peer_gap` apart (LogGP's gap): the
// step cannot end before the last is issued and its latency has passed.
// The flows themselves all start with the step: the issue time and the
// transfer overlap, and the step takes the longer (starting each peer's
// flow at its own instant would cost a re-solve of the bandwidth sharing
// per instant, and made model A on 64 nodes take minutes).
//
// "auto" (kAutoAlgorithm) is the backend's tuner: for each distinct call
// (kind, group, size, type, root) it runs every candidate algorithm alone
// on an idle copy of the network (the same links, fidelity and software
// latencies, no other traffic) and runs the call with the fastest; ties go
// to the candidate listed first. The choice is made once per distinct call
// and kept (auto_choices()). The trials race: all advance to a common
// horizon that doubles until one has finished, and a trial not finished
// by the first finish has lost and stops there (the choice is the one
// timing every candidate in full would make; option "exhaustive" times
// them all to the end). NCCL's tuner chooses per call too, from its
// closed-form cost model (models/nccl); this one times the plans the flow
// model would run, so a plug-in algorithm competes on the same terms as the
// built-in ones. Like NCCL's, it does not see the traffic the call will
// meet: a choice on an idle network can lose under contention.

#ifndef ZIONSIM_MODELS_EXECUTION_NETWORK_BACKEND_H_
#define ZIONSIM_MODELS_EXECUTION_NETWORK_BACKEND_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "models/collectives/plan.h"
#include "models/collectives/registry.h"
#include "models/execution/auto_tuner.h"
#include "models/execution/backend_algorithms.h"
#include "models/execution/executor.h"
#include "models/network/bundle_builder.h"
#include "models/network/flow_network.h"
#include "models/nccl/nccl_model.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/router.h"

namespace zx::models {

/// A communication library's costs on top of the links (see the file
/// comment); all >= 0. Zero here; the cluster file sets them
/// (topology::CommunicationLatencies).
struct SoftwareLatencies {
  sim::Duration launch = sim::Duration::zero();
  sim::Duration transfer = sim::Duration::zero();
  sim::Duration network_transfer = sim::Duration::zero();
  /// Between a rank's consecutive peers in one step: a step whose members
  /// send to k > 1 peers each ends no sooner than (k - 1) x peer_gap plus
  /// its transfers' largest software latency after it starts
  /// (topology::CommunicationLatencies).
  sim::Duration peer_gap = sim::Duration::zero();
};

/// The algorithm each collective kind runs when a call names none, in every
/// command (whatif, run, plan, collective, calibrate-network): the
/// hierarchical all-reduce, reduce-scatter and all-gather (NVLink inside a
/// server, every NIC across, as NCCL's multi-channel rings use them), the
/// direct all-to-all (every pair at once), rings for broadcast and reduce.
/// The one place these defaults are written. NCCL's own point-to-point
/// schedule ("nccl_p2p") is not yet the all-to-all's default: its work
/// items start flows at thousands of distinct instants, and the flow
/// model's re-solves then cost 12x direct's time on 32 ZionEX nodes and
/// over 100x on 64 (docs/network_model.md, "NCCL's point-to-point
/// schedule").
const std::map<std::string, std::string>& default_collective_algorithms();

struct NetworkBackendOptions {
  /// Algorithm per collective kind when a call names none.
  std::map<std::string, std::string> default_algorithms = {
      {"all_reduce", "ring"},     {"reduce_scatter", "ring"}, {"all_gather", "ring"},
      {"all_to_all", "direct"},   {"broadcast", "ring"},      {"reduce", "ring"}};
  /// JSON options per algorithm name ({"chunks": 4}).
  std::map<std::string, std::string> algorithm_options;
  /// How fast a GPU reduces received data into its buffer, bytes per second
  /// (reads two operands and writes one: about a third of the achieved HBM
  /// bandwidth; a parameter until calibration measures it).
  double reduction_bytes_per_s = 1555e9 * 0.836 / 3.0;
  /// All-to-all transfers between servers put size / this many bytes on the
  /// links (topology::ClusterSpec::all_to_all_efficiency); in (0, 1].
  double all_to_all_efficiency = 1.0;
  /// Transfers to and from the NVLink switch (NVLink SHARP's in-network
  /// reduction and multicast, collectives::kNvlinkSwitch) put size / this
  /// many bytes on the links: the share of the links' payload rate those
  /// operations achieve. 0: the switch does not reduce (an A100's NVSwitch),
  /// and plans using it are refused. From the cluster's
  /// topology::ClusterSpec::nvlink_sharp_efficiency.
  double nvls_efficiency = 0.0;

  /// The analytical algorithms "nccl" (nccl_version), "nccl-2.13" and
  /// "nccl-2.20" take no flows: NCCL's own cost model predicts the time
  /// (models/nccl), from these parameters of the machine.
  nccl::NcclVersion nccl_version = nccl::NcclVersion::kV2_20;
  nccl::GpuGeneration nccl_gpu = nccl::GpuGeneration::kAmpere;
  double nccl_intra_gbps = nccl::kA100NvlinkGbps;
  double nccl_inter_gbps = 25.0;
  /// The PCIe path from a GPU to its NIC as NCCL counts it
  /// (nccl::NcclInput::nic_pcie_gbps); 0: no narrower than the NIC.
  double nccl_nic_pcie_gbps = 0;
  /// NCCL's NVLS on one node (nccl::NcclInput::nvls): the NVLink switch
  /// reduces and the node is one OS image, not an MNNVL rack.
  bool nccl_nvls = false;
  /// The most a host copy moves per second (its DMA engine's achieved rate,
  /// the GPU profile's host-to-device bandwidth): the flow's rate cap below
  /// what the PCIe links it shares give it.
  double host_copy_bytes_per_s = 12e9;
  /// Software latencies of the plans' collectives and of transfer ops
  /// (the NCCL cost-model algorithms carry their own).
  SoftwareLatencies software;
};

/// The machine as NCCL's cost model `algorithm` sees it through these
/// options: GPU generation, NVLink, NIC and its PCIe path, NVLS, and the
/// algorithm's version (the options' when it names none) and NCCL_ALGO /
/// NCCL_PROTO. The call's collective, ranks and bytes are the caller's to
/// fill.
nccl::NcclInput nccl_machine_input(const NetworkBackendOptions& options, const NcclCostModelAlgorithm& algorithm);
/// The same for the NCCL cost-model algorithm registered as `name` ("nccl",
/// "nccl-2.13", "nccl-2.20"), with its options from algorithm_options[name].
/// Throws zx::InputError for another name or bad options.
nccl::NcclInput nccl_machine_input(const NetworkBackendOptions& options, const std::string& name);

class NetworkBackend : public CommunicationBackend {
 public:
  NetworkBackend(sim::Simulator& simulator, FlowNetwork& network, const topology::Router& router,
                 const collectives::CollectiveRegistry& registry, NetworkBackendOptions options = {});
  ~NetworkBackend() override;

  void start_collective(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) override;
  void start_transfer(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) override;
  /// A flow between the GPU and its host: the CPU of its server nearest to
  /// it (fewest links; the lowest node id on ties), over the server's PCIe
  /// links up to the GPU's own link (left out: see the .cc), capped at
  /// options.host_copy_bytes_per_s. A cluster graph without a CPU on the
  /// GPU's server copies at that rate on no link.
  void start_host_copy(const OpGraph& graph, std::uint32_t op, sim::EventCallback on_done) override;

  /// The host CPU of GPU `rank` (see start_host_copy); nullopt without one.
  std::optional<topology::NodeId> host_of(int rank);

  /// Runs one collective request with the named algorithm (empty: the
  /// default for its kind). Throws zx::InputError for an unknown algorithm
  /// or one that cannot lower the request.
  void run(const collectives::CollectiveRequest& request, const std::string& algorithm,
           sim::EventCallback on_done);
  /// Runs an already lowered plan over the global ranks `ranks`.
  void run_plan(collectives::CollectivePlan plan, std::vector<int> ranks, sim::EventCallback on_done);

  /// What one flow carried, for timelines (kept only after record_flows(true)).
  struct FlowTag {
    FlowId flow;
    int src_rank = 0;
    int dst_rank = 0;
    std::int64_t collective = -1;  ///< index into OpGraph::collectives, or -1
    std::int64_t transfer = -1;    ///< index into OpGraph::transfers, or -1
  };
  /// Off by default: a tag per flow costs memory on million-flow runs. At
  /// the linkshare fidelity a step's transfers are one bundle: each
  /// transfer gets a tag naming the bundle, whose record is the step's.
  /// Throws std::logic_error when the network recycles flow ids (the tags
  /// would then name other flows).
  void record_flows(bool on);
  /// Tags of the flows started since record_flows(true), in start order.
  const std::vector<FlowTag>& flow_tags() const { return flow_tags_; }
  /// The route of tag i's transfer, for a network that keeps no routes
  /// (linkshare's bundles); empty otherwise: the route is the network's
  /// FlowNetwork::route(tag.flow).
  std::span<const std::uint32_t> tag_route(std::size_t i) const {
    if (i + 1 >= tag_route_begin_.size()) return {};
    return std::span<const std::uint32_t>(tag_route_links_)
        .subspan(tag_route_begin_[i], tag_route_begin_[i + 1] - tag_route_begin_[i]);
  }

  /// The choices "auto" made, one per distinct call, in the order the
  /// calls first came.
  const std::vector<AutoChoice>& auto_choices() const { return tuner_.choices(); }
  /// What NCCL's cost model picked ("nccl", "nccl-2.13", "nccl-2.20"), per
  /// distinct call in the order the calls first came: `chosen` is
  /// "algorithm/protocol" ("ring/LL", "nvls/Simple"; "p2p/Simple" for an
  /// all-to-all, which NCCL runs as grouped send/recv), the candidates are
  /// the rows of NCCL's table by the same names, each with its predicted
  /// time or why NCCL does not weigh it for the call.
  const std::vector<AutoChoice>& nccl_choices() const { return nccl_log_.choices(); }
  /// The algorithm "auto" runs `request` with: the choice made for it
  /// before, else a new one among `options`' candidates, each simulated
  /// alone on an idle copy of this network (auto_tuner.h). Throws
  /// zx::InputError when no candidate can run it, with each one's reason.
  const std::string& choose_algorithm(const collectives::CollectiveRequest& request, const AutoOptions& options);

  /// Collectives and steps run so far.
  std::uint64_t collectives_run() const { return collectives_run_; }
  /// Plans lowered by an algorithm so far: collectives run, less those
  /// whose plan was lowered for an equal request before.
  std::uint64_t plans_lowered() const { return plans_lowered_; }
  std::uint64_t steps_run() const { return steps_run_; }

 private:
  struct PlanRun;
  struct StepLauncher;
  struct PreparedPlan;
  const collectives::CollectiveAlgorithm& algorithm(const std::string& name);
  void run_for(const collectives::CollectiveRequest& request, const std::string& algorithm,
               sim::EventCallback on_done, std::int64_t collective);
  /// A plan with what every run of it needs (its steps' dependents, its
  /// NVLink switch), made once.
  std::shared_ptr<const PreparedPlan> prepare(collectives::CollectivePlan plan, const std::vector<int>& ranks) const;
  /// `algorithm`'s plan for `request`: lowered, or the one lowered for an
  /// equal request before (a lowering is a pure function of the request
  /// and the group's view, collective_algorithm.h; an iteration's gradient
  /// buckets lower the same all-reduce over and over).
  std::shared_ptr<const PreparedPlan> plan_for(const collectives::CollectiveRequest& request, const std::string& algorithm);
  void run_plan_for(std::shared_ptr<const PreparedPlan> plan, std::vector<int> ranks, sim::EventCallback on_done,
                    std::int64_t collective, double between_servers_factor);
  int server_of(int gpu_rank) const;
  /// comm->nChannels of NCCL's communicator over the view's group, as its
  /// topology search would find it (models/nccl runtime_channels), cached
  /// by group shape; 0 for a group with unequal servers.
  int nccl_channels(const collectives::TopologyView& view);
  std::map<std::pair<int, int>, int> nccl_channels_;
  /// The NVLink switch node the plan's kNvlinkSwitch transfers go to and
  /// from; nullopt when it has none. Throws zx::InputError when the cluster's
  /// switch does not reduce or the ranks are not all in one NVLink domain.
  std::optional<topology::NodeId> nvlink_switch_for(const collectives::CollectivePlan& plan,
                                                    const std::vector<int>& ranks) const;
  /// The software latency of a transfer between two GPUs (none to itself).
  sim::Duration transfer_latency(int src_rank, int dst_rank) const;
  void run_nccl(const collectives::CollectiveRequest& request, const NcclCostModelAlgorithm& model,
                sim::EventCallback on_done);
  void finish(std::uint64_t run);

  sim::Simulator& sim_;
  FlowNetwork& network_;
  const topology::Router& router_;
  const collectives::CollectiveRegistry& registry_;
  NetworkBackendOptions options_;
  std::map<std::string, std::unique_ptr<collectives::CollectiveAlgorithm>> algorithms_;
  std::map<std::uint64_t, std::unique_ptr<PlanRun>> runs_;
  // The plans lowered last (plan_for), newest last: at most kCachedPlans,
  // of at most kCachedTransfers held transfers together (all-to-all-v
  // requests are not kept: their matrices make them rarely equal).
  struct CachedPlan;
  static constexpr std::size_t kCachedPlans = 4;
  static constexpr std::size_t kCachedTransfers = std::size_t{8} << 20;
  std::vector<CachedPlan> plan_cache_;
  std::uint64_t plans_lowered_ = 0;
  std::uint64_t next_run_ = 0;
  std::uint64_t collectives_run_ = 0;
  std::uint64_t steps_run_ = 0;
  RouteScratch scratch_;
  // Builds linkshare bundles when no flow is recorded (bundle_builder.h);
  // made on first use, for the network it was made for.
  BundleBuilder& bundle_builder(LinkShareNetwork& share);
  std::unique_ptr<BundleBuilder> bundle_builder_;
  const LinkShareNetwork* bundle_builder_share_ = nullptr;
  bool record_flows_ = false;
  std::vector<FlowTag> flow_tags_;
  // The route in scratch_.links as the newest tag's.
  void keep_tag_route();
  // tag_route(i) is tag_route_links_[tag_route_begin_[i] .. tag_route_begin_[i + 1]).
  std::vector<std::uint32_t> tag_route_links_;
  std::vector<std::uint32_t> tag_route_begin_;
  // host_of(), found once per rank: node index + 1, 0 before it is looked up.
  std::vector<std::uint32_t> host_of_rank_;
  std::vector<std::vector<topology::NodeId>> cpus_by_server_;
  bool cpus_indexed_ = false;
  // "auto": its choices, per distinct call (auto_tuner.h's call_key).
  AutoTuner tuner_;
  // NCCL's cost model's picks, kept the same way.
  ChoiceLog nccl_log_;
  std::map<std::string, nccl::NcclInput> nccl_machines_;  // by name, options parsed once
};

/// A CollectiveRequest from an op graph's collective call.
collectives::CollectiveRequest to_request(const CollectiveCall& call);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_NETWORK_BACKEND_H_
