#include "models/execution/network_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/check.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/topology_view.h"

namespace zx::models {

struct NetworkBackend::PreparedPlan {
  collectives::CollectivePlan plan;
  // A held plan's steps that come after each step, and the steps that
  // wait for nothing; a generated plan's generator says.
  std::vector<std::vector<std::uint32_t>> dependents;
  std::vector<std::uint32_t> roots;
  // Whether it moves or reduces any byte (the software latencies apply).
  bool moves = false;
  // The NVLink switch of the group's domain, for transfers to and from
  // collectives::kNvlinkSwitch (NVLink SHARP); unset when the plan has none.
  std::optional<topology::NodeId> nvlink_switch;
  std::size_t held_transfers = 0;
};

struct NetworkBackend::CachedPlan {
  std::string algorithm;
  collectives::CollectiveKind kind;
  std::int64_t bytes_per_rank;
  collectives::DataType dtype;
  int root;
  std::vector<int> ranks;
  std::shared_ptr<const PreparedPlan> prepared;
  bool matches(const std::string& name, const collectives::CollectiveRequest& r) const {
    return kind == r.kind && bytes_per_rank == r.bytes_per_rank.count() && dtype == r.dtype && root == r.root &&
           algorithm == name && ranks == r.ranks;
  }
};

struct NetworkBackend::PlanRun {
  std::uint64_t id = 0;
  std::shared_ptr<const PreparedPlan> prepared;
  const collectives::CollectivePlan& plan() const { return prepared->plan; }
  std::vector<int> ranks;  // group index -> global GPU rank
  // Per step: the steps it waits for that are not done (for a generated
  // plan kUntouched until the first of them is), and its transfers not
  // yet delivered.
  std::vector<std::uint32_t> pending_after;
  std::vector<std::uint32_t> pending_transfers;
  // A generated plan's latest step made (its vectors reused from step to
  // step: see StepLauncher for why one suffices).
  collectives::Step made;
  std::size_t steps_left = 0;
  std::int64_t collective = -1;  // OpGraph collective index, for flow tags
  // Bytes on the links per byte of a transfer between servers: 1 / the
  // all-to-all efficiency for all-to-alls, 1 otherwise.
  double between_servers_factor = 1.0;
  // Whether the software latencies apply: not to a plan that moves and
  // reduces nothing (NCCL returns at once from a collective of 0 elements).
  bool charged = true;
  // When the plan's first steps start (after the launch latency): the
  // origin of the steps' issue slots (collectives::Step::issue_slot).
  sim::TimePoint started;
  sim::EventCallback on_done;

  static constexpr std::uint32_t kUntouched = std::numeric_limits<std::uint32_t>::max();
  // Step s: the held one, or the generated one's header (no transfers:
  // they are visited one at a time) made into `made`, valid until the next
  // call.
  const collectives::Step& header(std::uint32_t s) {
    if (!plan().generator) return plan().steps[s];
    plan().generator->step_header(s, made);
    return made;
  }
  // A generated step's senders and how many transfers each has, for the
  // peer gap: counts by group index, and the indices touched.
  std::vector<std::uint32_t> peers_of;
  std::vector<int> senders;
};

namespace {

const sim::EventLabel kReduceDone("coll/reduce_done");
const sim::EventLabel kCollectiveDone("coll/done");
const sim::EventLabel kLaunched("coll/launched");
const sim::EventLabel kIssued("coll/peers_issued");
const sim::EventLabel kIssueSlot("coll/issue_slot");


// SplitMix64's finaliser: spreads (run, step, transfer) over ECMP paths.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The most peers one member sends to in a step (transfers from the NVLink
// switch are the switch's, not a member's).
std::size_t most_peers(const collectives::Step& step) {
  if (step.transfers.size() < 2) return step.transfers.size();
  std::map<int, std::size_t> peers;
  std::size_t most = 0;
  for (const collectives::Transfer& x : step.transfers) {
    if (x.src != collectives::kNvlinkSwitch) most = std::max(most, ++peers[x.src]);
  }
  return most;
}

}  // namespace

collectives::CollectiveRequest to_request(const CollectiveCall& call) {
  collectives::CollectiveRequest r;
  r.kind = call.kind;
  r.ranks = call.ranks;
  r.bytes_per_rank = call.bytes_per_rank;
  r.all_to_all_v_bytes = call.all_to_all_v_bytes;
  r.dtype = call.dtype;
  r.root = call.root;
  return r;
}

NetworkBackend::NetworkBackend(sim::Simulator& simulator, FlowNetwork& network,
                               const topology::Router& router,
                               const collectives::CollectiveRegistry& registry,
                               NetworkBackendOptions options)
    : sim_(simulator), network_(network), router_(router), registry_(registry), options_(std::move(options)) {
  if (!(options_.reduction_bytes_per_s > 0)) {
    throw InputError(Diagnostic{"network backend", "", "expected a positive reduction bandwidth"});
  }
  if (!(options_.all_to_all_efficiency > 0 && options_.all_to_all_efficiency <= 1)) {
    throw InputError(Diagnostic{"network backend", "",
                                fmt::format("expected an all-to-all efficiency in (0, 1], got {}",
                                            options_.all_to_all_efficiency)});
  }
  if (!(options_.nvls_efficiency >= 0 && options_.nvls_efficiency <= 1)) {
    throw InputError(Diagnostic{"network backend", "",
                                fmt::format("expected an NVLink SHARP efficiency in [0, 1], got {}",
                                            options_.nvls_efficiency)});
  }
  const SoftwareLatencies& l = options_.software;
  if (l.launch < sim::Duration::zero() || l.transfer < sim::Duration::zero() ||
      l.network_transfer < sim::Duration::zero() || l.peer_gap < sim::Duration::zero()) {
    throw InputError(Diagnostic{"network backend", "", "expected software latencies >= 0"});
  }
}

NetworkBackend::~NetworkBackend() = default;

const collectives::CollectiveAlgorithm& NetworkBackend::algorithm(const std::string& name) {
  auto it = algorithms_.find(name);
  if (it == algorithms_.end()) {
    const auto opts = options_.algorithm_options.find(name);
    it = algorithms_
             .emplace(name, registry_.create(name, opts == options_.algorithm_options.end()
                                                       ? std::string_view{}
                                                       : std::string_view(opts->second)))
             .first;
  }
  return *it->second;
}

nccl::NcclInput nccl_machine_input(const NetworkBackendOptions& options, const NcclCostModelAlgorithm& algorithm) {
  nccl::NcclInput in;
  in.gpu = options.nccl_gpu;
  in.intra_bw_gbps = options.nccl_intra_gbps;
  in.inter_bw_gbps = options.nccl_inter_gbps;
  in.nic_pcie_gbps = options.nccl_nic_pcie_gbps;
  in.nvls = options.nccl_nvls;
  in.version = algorithm.version().value_or(options.nccl_version);
  in.allowed = algorithm.allowed();
  return in;
}

nccl::NcclInput nccl_machine_input(const NetworkBackendOptions& options, const std::string& name) {
  // The registry knows the names and their versions; a private one, so that
  // callers need not hold one.
  collectives::CollectiveRegistry registry;
  register_backend_algorithms(registry);
  if (registry.role(name) != collectives::AlgorithmRole::kCostModel) {
    throw InputError(Diagnostic{"collective", "", fmt::format("'{}' is not NCCL's cost model; those are: {}", name,
                                                              fmt::join(registry.names(
                                                                  collectives::AlgorithmRole::kCostModel), ", "))});
  }
  const auto opts = options.algorithm_options.find(name);
  const std::unique_ptr<collectives::CollectiveAlgorithm> algorithm = registry.create(
      name, opts == options.algorithm_options.end() ? std::string_view{} : std::string_view(opts->second));
  return nccl_machine_input(options, static_cast<const NcclCostModelAlgorithm&>(*algorithm));
}

void NetworkBackend::run_nccl(const collectives::CollectiveRequest& request, const NcclCostModelAlgorithm& model,
                              sim::EventCallback on_done) {
  const std::string name(model.name());
  collectives::validate(request);
  const int n = static_cast<int>(request.ranks.size());
  ++collectives_run_;
  if (n < 2) {
    sim_.schedule_after(sim::Duration::zero(), [done = std::move(on_done)]() mutable { if (done) done(); },
                        kCollectiveDone);
    return;
  }
  // The machine's part, once per name.
  auto machine = nccl_machines_.find(name);
  if (machine == nccl_machines_.end()) machine = nccl_machines_.emplace(name, nccl_machine_input(options_, model)).first;
  nccl::NcclInput in = machine->second;
  switch (request.kind) {
    case collectives::CollectiveKind::kAllReduce: in.collective = nccl::Collective::kAllReduce; break;
    case collectives::CollectiveKind::kReduceScatter: in.collective = nccl::Collective::kReduceScatter; break;
    case collectives::CollectiveKind::kAllGather: in.collective = nccl::Collective::kAllGather; break;
    case collectives::CollectiveKind::kAllToAll: in.collective = nccl::Collective::kAllToAll; break;
    case collectives::CollectiveKind::kBroadcast: in.collective = nccl::Collective::kBroadcast; break;
    case collectives::CollectiveKind::kReduce: in.collective = nccl::Collective::kReduce; break;
  }
  in.ranks = n;
  // NCCL's model assumes the same number of ranks on every node.
  const collectives::TopologyView view = collectives::make_topology_view(router_.topology(), request.ranks);
  const std::vector<std::vector<int>> servers = view.members_by_server();
  in.ranks_per_node = static_cast<int>(servers.front().size());
  for (const std::vector<int>& s : servers) {
    if (static_cast<int>(s.size()) != in.ranks_per_node) {
      throw InputError(Diagnostic{"--algo", "", fmt::format("{} needs the same number of group members on "
                                                             "every server", name)});
    }
  }
  std::int64_t bytes = request.bytes_per_rank.count();
  if (request.kind == collectives::CollectiveKind::kAllToAll && !request.all_to_all_v_bytes.empty()) {
    // The busiest sender's buffer (NCCL's grouped send/recv waits for it).
    bytes = 0;
    for (const auto& row : request.all_to_all_v_bytes) {
      std::int64_t total = 0;
      for (std::int64_t b : row) total += b;
      bytes = std::max(bytes, total);
    }
  }
  in.bytes = bytes;
  const nccl::NcclPrediction prediction = nccl::predict(in);
  std::string key = call_key(request);
  if (nccl_log_.find(key) == nullptr) {
    const auto label = [](nccl::Algorithm a, nccl::Protocol p) {
      return fmt::format("{}/{}", nccl::to_string(a), nccl::to_string(p));
    };
    AutoChoice choice = unchosen(request);
    choice.chosen = label(prediction.algorithm, prediction.protocol);
    for (const nccl::AlgoProtoTime& e : prediction.table) {
      choice.candidates.push_back(
          {label(e.algorithm, e.protocol),
           e.enabled ? std::optional(sim::Duration::from_ns_ceil(e.time_us * 1000.0)) : std::nullopt,
           std::string(e.off_reason)});
    }
    if (prediction.table.empty()) choice.candidates.push_back({choice.chosen, prediction.time, ""});
    nccl_log_.add(std::move(key), std::move(choice));
  }
  sim_.schedule_after(prediction.time, [done = std::move(on_done)]() mutable { if (done) done(); }, kCollectiveDone);
}

void NetworkBackend::run(const collectives::CollectiveRequest& request, const std::string& name,
                         sim::EventCallback on_done) {
  run_for(request, name, std::move(on_done), -1);
}

void NetworkBackend::run_for(const collectives::CollectiveRequest& request, const std::string& name,
                             sim::EventCallback on_done, std::int64_t collective) {
  std::string chosen = name;
  if (chosen.empty()) {
    const auto it = options_.default_algorithms.find(std::string(collectives::to_string(request.kind)));
    if (it == options_.default_algorithms.end()) {
      throw InputError(Diagnostic{"collective", "",
                                  fmt::format("no algorithm given for {}", collectives::to_string(request.kind))});
    }
    chosen = it->second;
  }
  // The registry says how the algorithm runs; the objects of the roles
  // other than kPlan are this backend's own (backend_algorithms.h).
  switch (registry_.role(chosen).value_or(collectives::AlgorithmRole::kPlan)) {
    case collectives::AlgorithmRole::kCostModel:
      run_nccl(request, dynamic_cast<const NcclCostModelAlgorithm&>(algorithm(chosen)), std::move(on_done));
      return;
    case collectives::AlgorithmRole::kTuner:
      chosen = choose_algorithm(request, dynamic_cast<const AutoTunerAlgorithm&>(algorithm(chosen)).options());
      break;
    case collectives::AlgorithmRole::kPlan:
      break;
  }
  run_plan_for(plan_for(request, chosen), request.ranks, std::move(on_done), collective,
               request.kind == collectives::CollectiveKind::kAllToAll ? 1.0 / options_.all_to_all_efficiency : 1.0);
}

std::shared_ptr<const NetworkBackend::PreparedPlan> NetworkBackend::plan_for(
    const collectives::CollectiveRequest& request, const std::string& name) {
  const bool keep = request.all_to_all_v_bytes.empty();
  if (keep) {
    for (auto it = plan_cache_.begin(); it != plan_cache_.end(); ++it) {
      if (!it->matches(name, request)) continue;
      std::shared_ptr<const PreparedPlan> hit = it->prepared;
      std::rotate(it, it + 1, plan_cache_.end());  // the newest use last
      return hit;
    }
  }
  collectives::TopologyView view = collectives::make_topology_view(router_.topology(), request.ranks);
  view.set_switch_reduces(options_.nvls_efficiency > 0);
  view.set_nccl_channels(nccl_channels(view));
  ++plans_lowered_;
  std::shared_ptr<const PreparedPlan> prepared = prepare(algorithm(name).lower(request, view), request.ranks);
  if (!keep || prepared->held_transfers > kCachedTransfers) return prepared;
  plan_cache_.push_back(CachedPlan{name, request.kind, request.bytes_per_rank.count(), request.dtype, request.root,
                                   request.ranks, prepared});
  const auto held = [&] {
    std::size_t n = 0;
    for (const CachedPlan& c : plan_cache_) n += c.prepared->held_transfers;
    return n;
  };
  while (plan_cache_.size() > kCachedPlans || held() > kCachedTransfers) plan_cache_.erase(plan_cache_.begin());
  return prepared;
}

std::shared_ptr<const NetworkBackend::PreparedPlan> NetworkBackend::prepare(collectives::CollectivePlan plan,
                                                                            const std::vector<int>& ranks) const {
  auto p = std::make_shared<PreparedPlan>();
  p->plan = std::move(plan);
  if (const collectives::StepGenerator* g = p->plan.generator.get()) {
    p->moves = g->moves_bytes();
    return p;
  }
  const std::vector<collectives::Step>& steps = p->plan.steps;
  p->dependents.resize(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const collectives::Step& step = steps[s];
    for (std::uint32_t a : step.after) p->dependents[a].push_back(static_cast<std::uint32_t>(s));
    for (const collectives::Transfer& x : step.transfers) p->moves |= x.size.count() > 0;
    for (const collectives::LocalWork& w : step.local_work) p->moves |= w.reduce_bytes.count() > 0;
    if (step.after.empty()) p->roots.push_back(static_cast<std::uint32_t>(s));
    p->held_transfers += step.transfers.size();
  }
  p->nvlink_switch = nvlink_switch_for(p->plan, ranks);
  return p;
}

const std::string& NetworkBackend::choose_algorithm(const collectives::CollectiveRequest& request,
                                                    const AutoOptions& options) {
  collectives::validate(request);
  std::vector<std::string> names = options.candidates;
  const bool listed = !names.empty();
  if (!listed) {
    // Every algorithm but NCCL's point-to-point schedule, whose trials cost
    // the flow model 10x to 100x the others' past 16 ZionEX nodes (model A's
    // `auto` on 32 nodes: 93 s with it, 1.4 without); a list may name it.
    names = registry_.names(collectives::AlgorithmRole::kPlan);
    std::erase(names, std::string("nccl_p2p"));
  }
  // A trial: this network's links, idle, with a backend of these options.
  struct TrialStack {
    std::unique_ptr<FlowNetwork> network;
    std::unique_ptr<NetworkBackend> backend;
  };
  const std::vector<LinkParams> links = network_.link_params();
  const auto start = [&](sim::Simulator& sim, const std::string& name, std::function<void()> finished) {
    auto stack = std::make_shared<TrialStack>();
    stack->network = std::make_unique<FlowNetwork>(sim, links, network_.fidelity());
    stack->network->set_completion_quantum(network_.completion_quantum());
    stack->backend = std::make_unique<NetworkBackend>(sim, *stack->network, router_, registry_, options_);
    stack->backend->run(request, name, [done = std::move(finished)] { done(); });
    return std::shared_ptr<void>(std::move(stack));
  };
  const auto supports = [&](const std::string& name) { return algorithm(name).supports(request.kind); };
  return tuner_.choose(request, names, listed, options.exhaustive, supports, start);
}

void NetworkBackend::run_plan(collectives::CollectivePlan plan, std::vector<int> ranks,
                              sim::EventCallback on_done) {
  std::shared_ptr<const PreparedPlan> prepared = prepare(std::move(plan), ranks);
  run_plan_for(std::move(prepared), std::move(ranks), std::move(on_done), -1, 1.0);
}

// Launches a plan's steps as their dependencies finish: a step's transfers
// start as flows (after its issue slot's gaps), its local work is charged
// when they are all delivered, and its dependents launch when it is done.
// A value (the backend and the run's id) that completion callbacks copy, so
// that it recurses through them.
struct NetworkBackend::StepLauncher {
  NetworkBackend* self;
  std::uint64_t id;
  // A generated plan's step is made again wherever it is needed, into the
  // run's one `made`: each use ends before the next step is made (a launch
  // that finishes a step at once, and so launches its dependents, has
  // done with its own step by then), and the dependents of a step are
  // copied out before any of them launches.
  void step_done(std::uint32_t s) const {
    auto it = self->runs_.find(id);
    PlanRun& r = *it->second;
    ++self->steps_run_;
    if (const collectives::StepGenerator* g = r.plan().generator.get()) {
      std::array<std::uint32_t, collectives::kMaxGeneratedDependents> next;
      const std::size_t k = g->dependents(s, next);
      for (std::size_t i = 0; i < k; ++i) {
        const std::uint32_t d = next[i];
        if (r.pending_after[d] == PlanRun::kUntouched) r.pending_after[d] = g->after_count(d);
        if (--r.pending_after[d] == 0) launch(d);
      }
    } else {
      for (std::uint32_t d : r.prepared->dependents[s]) {
        if (--r.pending_after[d] == 0) launch(d);
      }
    }
    if (--r.steps_left == 0) {
      self->sim_.schedule_after(sim::Duration::zero(), [self = self, id = id] { self->finish(id); },
                                kCollectiveDone);
    }
  }
  void transfers_done(std::uint32_t s) const {
    PlanRun& r = *self->runs_.at(id);
    sim::Bytes most;
    for (const collectives::LocalWork& w : r.header(s).local_work) most = std::max(most, w.reduce_bytes);
    if (most.count() == 0) {
      step_done(s);
      return;
    }
    const sim::Duration work = sim::Duration::from_seconds_ceil(static_cast<double>(most.count()) /
                                                                self->options_.reduction_bytes_per_s);
    self->sim_.schedule_after(work, [l = *this, s] { l.step_done(s); }, kReduceDone);
  }
  void launch(std::uint32_t s) const {
    PlanRun& r = *self->runs_.at(id);
    const collectives::Step& step = r.header(s);
    // A step that is its sender's k-th operation waits for k issue gaps
    // from the plan's start (the proxy posts one operation at a time).
    const sim::Duration gap = self->options_.software.peer_gap;
    if (r.charged && step.issue_slot > 0 && gap > sim::Duration::zero()) {
      const sim::TimePoint earliest = r.started + gap * static_cast<std::int64_t>(step.issue_slot);
      if (self->sim_.now() < earliest) {
        self->sim_.schedule(earliest, [l = *this, s] {
          PlanRun& later = *l.self->runs_.at(l.id);
          l.launch_now(later, s, later.header(s));
        }, kIssueSlot);
        return;
      }
    }
    launch_now(r, s, step);
  }
  void launch_now(PlanRun& r, std::uint32_t s, const collectives::Step& step) const {
    if (r.plan().generator) {
      launch_generated(r, s);
      return;
    }
    r.pending_transfers[s] = static_cast<std::uint32_t>(step.transfers.size());
    if (step.transfers.empty()) {
      transfers_done(s);
      return;
    }
    // Each transfer's flow counts down its step's transfers.
    const auto delivered = [l = *this, s] {
      PlanRun& run = *l.self->runs_.at(l.id);
      if (--run.pending_transfers[s] == 0) l.transfers_done(s);
    };
    // Issuing k peers one after another takes (k - 1) gaps: the step
    // ends no sooner than that and its last peer's software latency,
    // however fast its flows (a floor the step counts down like a flow).
    const sim::Duration gap = self->options_.software.peer_gap;
    if (r.charged && gap > sim::Duration::zero()) {
      if (const std::size_t k = most_peers(step); k > 1) {
        sim::Duration last = sim::Duration::zero();
        for (const collectives::Transfer& x : step.transfers) {
          if (x.src == collectives::kNvlinkSwitch || x.dst == collectives::kNvlinkSwitch) continue;
          last = std::max(last, self->transfer_latency(r.ranks[static_cast<std::size_t>(x.src)],
                                                       r.ranks[static_cast<std::size_t>(x.dst)]));
        }
        ++r.pending_transfers[s];
        self->sim_.schedule_after(gap * static_cast<std::int64_t>(k - 1) + last, delivered, kIssued);
      }
    }
    if (LinkShareNetwork* share = self->network_.link_share()) {
      r.pending_transfers[s] -= static_cast<std::uint32_t>(step.transfers.size()) - 1;
      start_bundle(*share, r, s, step, delivered);
      return;
    }
    for (std::size_t t = 0; t < step.transfers.size(); ++t) start_flow(r, s, t, step.transfers[t], delivered);
  }
  // launch_now for a generated step: the same, its transfers visited one
  // at a time (twice with a peer gap: first for the floor, which the held
  // path schedules before any flow starts).
  void launch_generated(PlanRun& r, std::uint32_t s) const {
    const collectives::StepGenerator& g = *r.plan().generator;
    const auto delivered = [l = *this, s] {
      PlanRun& run = *l.self->runs_.at(l.id);
      if (--run.pending_transfers[s] == 0) l.transfers_done(s);
    };
    const sim::Duration gap = self->options_.software.peer_gap;
    std::uint32_t pending = 0;
    if (r.charged && gap > sim::Duration::zero()) {
      r.peers_of.resize(static_cast<std::size_t>(r.plan().group_size), 0);
      std::size_t k = 0;
      std::uint64_t count = 0;
      sim::Duration last = sim::Duration::zero();
      g.for_each_transfer(s, [&](const collectives::Transfer& x) {
        ++count;
        std::uint32_t& peers = r.peers_of[static_cast<std::size_t>(x.src)];
        if (peers++ == 0) r.senders.push_back(x.src);
        k = std::max<std::size_t>(k, peers);
        last = std::max(last, self->transfer_latency(r.ranks[static_cast<std::size_t>(x.src)],
                                                     r.ranks[static_cast<std::size_t>(x.dst)]));
      });
      for (int sender : r.senders) r.peers_of[static_cast<std::size_t>(sender)] = 0;
      r.senders.clear();
      if (count == 0) {
        r.pending_transfers[s] = 0;
        transfers_done(s);
        return;
      }
      if (k > 1) {
        pending = 1;
        r.pending_transfers[s] = 1;
        self->sim_.schedule_after(gap * static_cast<std::int64_t>(k - 1) + last, delivered, kIssued);
      }
    }
    std::uint32_t t = 0;
    if (LinkShareNetwork* share = self->network_.link_share()) {
      const std::size_t tagged = self->flow_tags_.size();
      if (self->record_flows_) {
        g.for_each_transfer(s, [&](const collectives::Transfer& x) { add_to_bundle(*share, r, s, t++, x); });
      } else {
        BundleBuilder& builder = self->bundle_builder(*share);
        g.for_each_transfer(s, [&](const collectives::Transfer& x) { add_to_builder(builder, r, s, t++, x); });
        builder.flush();
      }
      if (t == 0) {
        r.pending_transfers[s] = 0;
        transfers_done(s);
        return;
      }
      r.pending_transfers[s] = pending + 1;
      start_bundle_of(*share, tagged, delivered);
      return;
    }
    // Each flow counts itself in before it starts (its delivery is an event,
    // never during start_flow).
    r.pending_transfers[s] = pending;
    g.for_each_transfer(s, [&](const collectives::Transfer& x) {
      ++r.pending_transfers[s];
      start_flow(r, s, t++, x, delivered);
    });
    if (t == 0) transfers_done(s);
  }
  // Routes transfer t of step s into self->scratch_.links: its size on
  // the wire, its software latency, and its GPUs (-1 for the switch).
  struct Routed {
    sim::Bytes size;
    sim::Duration latency;
    int src = -1;
    int dst = -1;
  };
  // Transfer t of step s's ECMP key.
  std::uint64_t key_of(std::uint32_t s, std::size_t t) const { return mix(mix(id) ^ (std::uint64_t{s} << 24) ^ t); }
  // A transfer's size on the wire: scaled between servers when the run's
  // data are quantized there.
  sim::Bytes wire_size(const PlanRun& r, int src, int dst, sim::Bytes size) const {
    if (r.between_servers_factor == 1.0 || self->server_of(src) == self->server_of(dst)) return size;
    return sim::Bytes(static_cast<std::int64_t>(std::ceil(static_cast<double>(size.count()) * r.between_servers_factor)));
  }
  Routed route(const PlanRun& r, std::uint32_t s, std::size_t t, const collectives::Transfer& x) const {
    const std::uint64_t key = key_of(s, t);
    if (x.src == collectives::kNvlinkSwitch || x.dst == collectives::kNvlinkSwitch) {
      // In-network reduction or multicast: GPU to switch or back, at
      // the share of the link NVLink SHARP's operations achieve.
      const auto gpu = [&](int member) {
        return self->router_.topology().gpu(r.ranks[static_cast<std::size_t>(member)]);
      };
      ZX_CHECK(r.prepared->nvlink_switch.has_value(), "a transfer to the NVLink switch in a plan that was not checked for it");
      const topology::NodeId src = x.src == collectives::kNvlinkSwitch ? *r.prepared->nvlink_switch : gpu(x.src);
      const topology::NodeId dst = x.dst == collectives::kNvlinkSwitch ? *r.prepared->nvlink_switch : gpu(x.dst);
      route_nodes(self->router_, src, dst, key, self->scratch_);
      return Routed{.size = sim::Bytes(static_cast<std::int64_t>(
                        std::ceil(static_cast<double>(x.size.count()) / self->options_.nvls_efficiency))),
                    .latency = r.charged ? self->options_.software.transfer : sim::Duration::zero()};
    }
    const int src = r.ranks[static_cast<std::size_t>(x.src)];
    const int dst = r.ranks[static_cast<std::size_t>(x.dst)];
    const sim::Bytes size = wire_size(r, src, dst, x.size);
    if (x.relay) {
      // PXN: over NVLink to the relay, then out of its NIC, one flow;
      // it pays the NVLink hop's handshake besides the network's.
      const int relay = r.ranks[static_cast<std::size_t>(*x.relay)];
      route_relayed_gpus(self->router_, src, relay, dst, key, self->scratch_);
      return Routed{size,
                    r.charged ? self->transfer_latency(src, relay) + self->transfer_latency(relay, dst)
                              : sim::Duration::zero(),
                    src, dst};
    }
    route_gpus(self->router_, src, dst, key, self->scratch_);
    return Routed{size, r.charged ? self->transfer_latency(src, dst) : sim::Duration::zero(), src, dst};
  }
  // Transfer t of step s as a flow, counting down `delivered` when it lands.
  template <typename Delivered>
  void start_flow(const PlanRun& r, std::uint32_t s, std::size_t t, const collectives::Transfer& transfer,
                  const Delivered& delivered) const {
    const Routed x = route(r, s, t, transfer);
    const FlowId flow =
        self->network_.start_flow(self->scratch_.links, x.size, delivered, FlowOptions{.added_latency = x.latency});
    if (self->record_flows_ && x.src >= 0) self->flow_tags_.push_back(FlowTag{flow, x.src, x.dst, r.collective, -1});
  }
  // The linkshare fidelity: the step's transfers as one bundle.
  template <typename Delivered>
  void start_bundle(LinkShareNetwork& share, const PlanRun& r, std::uint32_t s, const collectives::Step& step,
                    const Delivered& delivered) const {
    const std::size_t tagged = self->flow_tags_.size();
    // The builder pays off when a step has many transfers per GPU (an
    // all-to-all's n - 1 each): one sum per GPU side replaces them. Both
    // ways give the same bundle.
    if (self->record_flows_ || step.transfers.size() < 4 * r.ranks.size()) {
      for (std::size_t t = 0; t < step.transfers.size(); ++t) add_to_bundle(share, r, s, t, step.transfers[t]);
    } else {
      BundleBuilder& builder = self->bundle_builder(share);
      for (std::size_t t = 0; t < step.transfers.size(); ++t) add_to_builder(builder, r, s, t, step.transfers[t]);
      builder.flush();
    }
    start_bundle_of(share, tagged, delivered);
  }
  // As add_to_bundle, through the builder (no flow tags): a plain transfer
  // between GPUs is routed by its fixed parts.
  void add_to_builder(BundleBuilder& builder, const PlanRun& r, std::uint32_t s, std::size_t t,
                      const collectives::Transfer& x) const {
    if (x.relay || x.src == collectives::kNvlinkSwitch || x.dst == collectives::kNvlinkSwitch) {
      const Routed y = route(r, s, t, x);
      builder.add_routed(self->scratch_.links, y.size, y.latency);
      return;
    }
    const int src = r.ranks[static_cast<std::size_t>(x.src)];
    const int dst = r.ranks[static_cast<std::size_t>(x.dst)];
    builder.add_gpu_transfer(src, dst, wire_size(r, src, dst, x.size), key_of(s, t),
                             r.charged ? self->transfer_latency(src, dst) : sim::Duration::zero());
  }
  void add_to_bundle(LinkShareNetwork& share, const PlanRun& r, std::uint32_t s, std::size_t t,
                     const collectives::Transfer& transfer) const {
    const Routed x = route(r, s, t, transfer);
    share.add(self->scratch_.links, x.size, 1.0, x.latency);
    if (self->record_flows_ && x.src >= 0) {
      self->flow_tags_.push_back(FlowTag{FlowId{}, x.src, x.dst, r.collective, -1});
      self->keep_tag_route();
    }
  }
  // Starts the transfers added since flow tag `tagged` as one bundle. Each
  // transfer's tag names the step's bundle: a timeline draws it over the
  // step's time.
  template <typename Delivered>
  void start_bundle_of(LinkShareNetwork& share, std::size_t tagged, const Delivered& delivered) const {
    const FlowId bundle{share.start(delivered)};
    for (std::size_t i = tagged; i < self->flow_tags_.size(); ++i) self->flow_tags_[i].flow = bundle;
  }
};

void NetworkBackend::run_plan_for(std::shared_ptr<const PreparedPlan> plan, std::vector<int> ranks,
                                  sim::EventCallback on_done, std::int64_t collective,
                                  double between_servers_factor) {
  ++collectives_run_;
  auto run = std::make_unique<PlanRun>();
  PlanRun& r = *run;
  r.id = next_run_++;
  r.prepared = std::move(plan);
  r.ranks = std::move(ranks);
  r.collective = collective;
  r.between_servers_factor = between_servers_factor;
  r.on_done = std::move(on_done);
  r.charged = r.prepared->moves;
  const std::size_t steps = collectives::step_count(r.plan());
  r.pending_transfers.resize(steps);
  r.steps_left = steps;
  // Launching a step may finish it at once (no transfers, no work) and
  // launch its dependents; every step with nothing to wait for starts now.
  std::vector<std::uint32_t> ready;
  if (const collectives::StepGenerator* g = r.plan().generator.get()) {
    r.pending_after.assign(steps, PlanRun::kUntouched);
    ready = g->roots();
  } else {
    r.pending_after.resize(steps);
    for (std::size_t s = 0; s < steps; ++s) {
      r.pending_after[s] = static_cast<std::uint32_t>(r.plan().steps[s].after.size());
    }
    ready = r.prepared->roots;
  }
  const std::uint64_t id = r.id;
  runs_.emplace(id, std::move(run));
  if (steps == 0) {
    sim_.schedule_after(sim::Duration::zero(), [this, id] { finish(id); }, kCollectiveDone);
    return;
  }
  const StepLauncher launcher{this, id};
  r.started = sim_.now() + (r.charged ? options_.software.launch : sim::Duration::zero());
  if (!r.charged || options_.software.launch == sim::Duration::zero()) {
    for (std::uint32_t s : ready) launcher.launch(s);
    return;
  }
  sim_.schedule_after(options_.software.launch, [launcher, ready = std::move(ready)] {
    for (std::uint32_t s : ready) launcher.launch(s);
  }, kLaunched);
}

BundleBuilder& NetworkBackend::bundle_builder(LinkShareNetwork& share) {
  if (bundle_builder_share_ != &share) {
    bundle_builder_ = std::make_unique<BundleBuilder>(router_, share);
    bundle_builder_share_ = &share;
  }
  return *bundle_builder_;
}

void NetworkBackend::keep_tag_route() {
  tag_route_begin_.resize(flow_tags_.size(), static_cast<std::uint32_t>(tag_route_links_.size()));
  tag_route_links_.insert(tag_route_links_.end(), scratch_.links.begin(), scratch_.links.end());
  tag_route_begin_.push_back(static_cast<std::uint32_t>(tag_route_links_.size()));
}

void NetworkBackend::record_flows(bool on) {
  if (on && network_.recycles_flow_ids()) {
    throw std::logic_error("record_flows: the network recycles flow ids; the flows' records would not last");
  }
  record_flows_ = on;
}

std::optional<topology::NodeId> NetworkBackend::nvlink_switch_for(const collectives::CollectivePlan& plan,
                                                                   const std::vector<int>& ranks) const {
  bool uses = false;
  for (const collectives::Step& step : plan.steps) {
    for (const collectives::Transfer& x : step.transfers) {
      uses |= x.src == collectives::kNvlinkSwitch || x.dst == collectives::kNvlinkSwitch;
    }
  }
  if (!uses) return std::nullopt;
  if (!(options_.nvls_efficiency > 0)) {
    throw InputError(Diagnostic{"collective", "",
                                "the plan reduces in the NVLink switch, but this cluster's switch does not (NVLink "
                                "SHARP needs NVSwitch 3: H100 and later; cluster key nvlink.sharp_efficiency)"});
  }
  const topology::Topology& t = router_.topology();
  std::optional<topology::NodeId> domain;
  for (int rank : ranks) {
    std::optional<topology::NodeId> mine;
    for (topology::LinkId l : t.out_links(t.gpu(rank))) {
      if (t.node(t.link(l).dst).kind == topology::NodeKind::kNvSwitch) mine = t.link(l).dst;
    }
    if (!mine || (domain && *domain != *mine)) {
      throw InputError(Diagnostic{"collective", "",
                                  fmt::format("the plan reduces in the NVLink switch, but GPU {} is not in the "
                                              "NVLink domain of the group's first GPU",
                                              rank)});
    }
    domain = mine;
  }
  return domain;
}

sim::Duration NetworkBackend::transfer_latency(int src_rank, int dst_rank) const {
  if (src_rank == dst_rank) return sim::Duration::zero();
  return server_of(src_rank) == server_of(dst_rank) ? options_.software.transfer
                                                     : options_.software.network_transfer;
}

const std::map<std::string, std::string>& default_collective_algorithms() {
  static const std::map<std::string, std::string> defaults = {
      {"all_reduce", "hierarchical"}, {"reduce_scatter", "hierarchical"}, {"all_gather", "hierarchical"},
      {"all_to_all", "direct"},       {"broadcast", "ring"},              {"reduce", "ring"}};
  return defaults;
}

int NetworkBackend::nccl_channels(const collectives::TopologyView& view) {
  const std::vector<std::vector<int>> servers = view.members_by_server();
  std::size_t most = 0;
  for (const std::vector<int>& members : servers) most = std::max(most, members.size());
  const int ranks = view.size();
  const int per_node = static_cast<int>(most);
  // NCCL's search needs as many GPUs on every node; another group gets
  // MAXCHANNELS (0: the algorithm's default).
  if (ranks < 2 || per_node == 0 || static_cast<std::size_t>(ranks) != most * servers.size()) return 0;
  const std::pair<int, int> key{ranks, per_node};
  if (const auto it = nccl_channels_.find(key); it != nccl_channels_.end()) return it->second;
  nccl::NcclInput in = nccl_machine_input(options_, "nccl");
  in.collective = nccl::Collective::kAllToAll;
  in.ranks = ranks;
  in.ranks_per_node = per_node;
  int channels = 0;
  try {
    channels = nccl::runtime_channels(in);
  } catch (const InputError&) {
    channels = 0;
  }
  nccl_channels_.emplace(key, channels);
  return channels;
}

int NetworkBackend::server_of(int gpu_rank) const {
  const topology::Topology& t = router_.topology();
  return t.node(t.gpu(gpu_rank)).server;
}

void NetworkBackend::finish(std::uint64_t id) {
  auto it = runs_.find(id);
  ZX_CHECK(it != runs_.end(), "a collective finishes once");
  sim::EventCallback done = std::move(it->second->on_done);
  runs_.erase(it);
  if (done) done();
}

void NetworkBackend::start_collective(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) {
  const CollectiveCall& call = graph.collectives[static_cast<std::size_t>(index)];
  run_for(to_request(call), call.algorithm, std::move(on_done), index);
}

void NetworkBackend::start_transfer(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) {
  const TransferCall& t = graph.transfers[static_cast<std::size_t>(index)];
  // Like a collective, a transfer of nothing costs nothing.
  const FlowOptions options{.added_latency = t.size.count() == 0
                                                 ? sim::Duration::zero()
                                                 : options_.software.launch + transfer_latency(t.src, t.dst)};
  const FlowId flow = start_gpu_flow(network_, router_, t.src, t.dst, t.size,
                                     mix(0x5eedULL ^ static_cast<std::uint64_t>(index)), std::move(on_done), scratch_,
                                     options);
  if (record_flows_) {
    flow_tags_.push_back(FlowTag{flow, t.src, t.dst, -1, index});
    if (network_.link_share() != nullptr) keep_tag_route();
  }
}

std::optional<topology::NodeId> NetworkBackend::host_of(int rank) {
  const topology::Topology& t = router_.topology();
  ZX_CHECK(rank >= 0 && rank < t.num_gpus(), "host_of: rank out of range");
  if (!cpus_indexed_) {
    cpus_indexed_ = true;
    host_of_rank_.assign(static_cast<std::size_t>(t.num_gpus()), 0);
    for (std::size_t v = 0; v < t.num_nodes(); ++v) {
      const topology::NodeId id{static_cast<std::uint32_t>(v)};
      const topology::NodeInfo& n = t.node(id);
      if (n.kind != topology::NodeKind::kCpu || n.server < 0) continue;
      if (cpus_by_server_.size() <= static_cast<std::size_t>(n.server)) {
        cpus_by_server_.resize(static_cast<std::size_t>(n.server) + 1);
      }
      cpus_by_server_[static_cast<std::size_t>(n.server)].push_back(id);
    }
  }
  std::uint32_t& cached = host_of_rank_[static_cast<std::size_t>(rank)];
  if (cached == 0) {
    const topology::NodeId gpu = t.gpu(rank);
    const auto server = static_cast<std::size_t>(t.node(gpu).server);
    std::size_t best_hops = std::numeric_limits<std::size_t>::max();
    if (server < cpus_by_server_.size()) {
      for (const topology::NodeId cpu : cpus_by_server_[server]) {
        if (!router_.route_into(cpu, gpu, 0, scratch_.route) || scratch_.route.empty()) continue;
        if (scratch_.route.size() < best_hops) {
          best_hops = scratch_.route.size();
          cached = static_cast<std::uint32_t>(topology::index(cpu)) + 1;
        }
      }
    }
    if (cached == 0) cached = std::numeric_limits<std::uint32_t>::max();  // no host on the server
  }
  if (cached == std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return topology::NodeId{cached - 1};
}

void NetworkBackend::start_host_copy(const OpGraph& graph, std::uint32_t op, sim::EventCallback on_done) {
  const Op& o = graph.ops[op];
  const double cap = options_.host_copy_bytes_per_s;
  const std::optional<topology::NodeId> cpu = host_of(o.rank);
  if (!cpu) {
    sim_.schedule_after(transfer_time(static_cast<double>(o.bytes.count()), cap), std::move(on_done));
    return;
  }
  const topology::NodeId gpu = router_.topology().gpu(o.rank);
  const bool routed = o.to_device ? router_.route_into(*cpu, gpu, mix(0xc0b1ULL ^ op), scratch_.route)
                                  : router_.route_into(gpu, *cpu, mix(0xc0b1ULL ^ op), scratch_.route);
  ZX_CHECK(routed, "a host copy's CPU reaches its GPU");
  // The GPU's own PCIe link is left out: PCIe switches arbitrate between
  // their ports, not between flows, so per-flow max-min would hand a copy
  // 1/(k+1) of the link beside k NIC flows and starve it (a faster NIC
  // would then slow training). The copies contend where they queue with
  // each other: the host's link, shared by the GPUs behind one switch.
  if (scratch_.route.size() > 1) {
    if (o.to_device) {
      scratch_.route.pop_back();
    } else {
      scratch_.route.erase(scratch_.route.begin());
    }
  }
  to_link_indices(scratch_.route, scratch_.links);
  network_.start_flow(scratch_.links, o.bytes, std::move(on_done), FlowOptions{.weight = 1.0, .rate_cap_bytes_per_s = cap});
}

}  // namespace zx::models
