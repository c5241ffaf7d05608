// Tests of the network backend: collectives lowered to plans and run as
// flows. Without contention the simulated time equals the closed-form
// alpha-beta time to the picosecond; across servers the NIC bounds an
// all-to-all; a whole op graph runs through it on the executor.

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "base/error.h"
#include "models/collectives/all_to_all.h"
#include "models/collectives/hierarchical.h"
#include "models/collectives/registry.h"
#include "models/collectives/ring.h"
#include "models/collectives/topology_view.h"
#include "models/execution/executor.h"
#include "models/execution/network_backend.h"
#include "models/execution/testing/backend_rig.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "topology/presets.h"
#include "topology/router.h"
#include "topology/topology.h"

namespace zx::models {
namespace {

namespace mc = models::collectives;

using sim::Duration;

using Rig = testing::BackendRig;

// Ring all-reduce of S bytes on one ZionEX server: 2(n-1) = 14 steps, in
// each every GPU sends S/8 to the next over NVLink (GPU -> NVSwitch -> GPU:
// two links, 100 ns each, no link shared by two flows), the first 7 steps
// followed by a reduction of S/8 bytes. So the time is
// 14 x (200 ns + S/8 / (300 GB/s x 0.94)) + 7 x S/8 / reduction bandwidth,
// each term rounded up to the picosecond as the models do.
TEST(NetworkBackendTest, RingAllReduceMatchesAlphaBetaExactly) {
  for (std::int64_t size : {std::int64_t{8} << 10, std::int64_t{64} << 20}) {
    Rig rig(1);
    NetworkBackendOptions options;
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    collectives::CollectiveRequest request;
    request.kind = collectives::CollectiveKind::kAllReduce;
    for (int r = 0; r < 8; ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(size);
    bool done = false;
    backend.run(request, "ring", [&] { done = true; });
    rig.sim.run();
    ASSERT_TRUE(done);
    const double chunk = static_cast<double>(size / 8);
    const double nvlink = static_cast<double>(
        sim::BytesPerSecond::from_gbyte_per_s(300).scaled(0.94).count());
    const Duration step = Duration::ns(200) + transfer_time(chunk, nvlink);
    const Duration reduce = Duration::from_seconds_ceil(chunk / options.reduction_bytes_per_s);
    EXPECT_EQ(rig.sim.now().since_start(), step * 14 + reduce * 7) << size;
    EXPECT_EQ(backend.steps_run(), 14u * 8u);  // a step per ring step and position
  }
}

// A generated plan (the ring's: collectives::StepGenerator) runs to the
// same bits as the same plan held step by step: the executor launches
// step s of either with the same transfers, ECMP keys and dependencies.
// Four ZionEX servers (rings cross the fabric and its spines), pipelined
// slices on two channels, each kind the ring generates, with and without
// software latencies, at the flow and link-sharing fidelities.
TEST(NetworkBackendTest, GeneratedPlanRunsAsTheHeldPlan) {
  using collectives::CollectiveKind;
  for (const NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kLinkShare}) {
    for (const CollectiveKind kind :
         {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
      for (const bool software : {false, true}) {
        collectives::CollectiveRequest request;
        request.kind = kind;
        for (int r = 0; r < 32; ++r) request.ranks.push_back(r);
        request.bytes_per_rank = sim::Bytes(3 << 20);
        NetworkBackendOptions options;
        if (software) options.software = {.launch = Duration::us(5), .transfer = Duration::ns(700),
                                          .network_transfer = Duration::ns(2500), .peer_gap = Duration::ns(300)};
        const auto finish = [&](bool held) {
          Rig rig(4, "zionex", fidelity);
          NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
          collectives::CollectivePlan plan =
              collectives::RingAlgorithm({2, 2}).lower(request, collectives::make_topology_view(rig.topo, request.ranks));
          EXPECT_TRUE(plan.generator != nullptr);
          if (held) plan = collectives::materialize(std::move(plan));
          EXPECT_EQ(plan.generator == nullptr, held);
          std::optional<sim::TimePoint> done;
          backend.run_plan(std::move(plan), request.ranks, [&] { done = rig.sim.now(); });
          rig.sim.run();
          EXPECT_EQ(backend.steps_run(), 2u * 2u * 32u * (kind == CollectiveKind::kAllReduce ? 62u : 31u));
          return done.value_or(sim::TimePoint{});
        };
        const sim::TimePoint generated = finish(false);
        EXPECT_GT(generated.since_start(), Duration::us(10));
        EXPECT_EQ(generated, finish(true)) << to_string(fidelity) << " " << collectives::to_string(kind) << " "
                                           << software;
      }
    }
  }
}

// The direct all-to-all's generated plan, its one step's transfers visited
// one at a time and never held, runs to the same bits as the step held: an
// all-to-all-v with pairs that exchange nothing, on two servers, with and
// without a peer gap (whose floor the executor computes in a first pass
// over the transfers), at both fidelities.
TEST(NetworkBackendTest, GeneratedAllToAllRunsAsTheHeldOne) {
  for (const NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kLinkShare}) {
    for (const bool software : {false, true}) {
      collectives::CollectiveRequest request;
      request.kind = collectives::CollectiveKind::kAllToAll;
      const int n = 16;
      for (int r = 0; r < n; ++r) request.ranks.push_back(r);
      request.all_to_all_v_bytes.assign(n, std::vector<std::int64_t>(n, 0));
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          request.all_to_all_v_bytes[a][b] = (a * 7 + b * 13) % 5 == 0 ? 0 : 4096 * (1 + (a * 3 + b) % 11);
        }
      }
      NetworkBackendOptions options;
      if (software) options.software = {.launch = Duration::us(5), .transfer = Duration::ns(700),
                                        .network_transfer = Duration::ns(2500), .peer_gap = Duration::ns(300)};
      const auto finish = [&](bool held) {
        Rig rig(2, "zionex", fidelity);
        NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
        collectives::CollectivePlan plan = collectives::DirectAllToAllAlgorithm().lower(
            request, collectives::make_topology_view(rig.topo, request.ranks));
        EXPECT_TRUE(plan.generator != nullptr);
        EXPECT_TRUE(plan.chunks.empty());
        if (held) plan = collectives::materialize(std::move(plan));
        std::optional<sim::TimePoint> done;
        backend.run_plan(std::move(plan), request.ranks, [&] { done = rig.sim.now(); });
        rig.sim.run();
        return done.value_or(sim::TimePoint{});
      };
      const sim::TimePoint generated = finish(false);
      EXPECT_GT(generated.since_start(), Duration::us(1));
      EXPECT_EQ(generated, finish(true)) << to_string(fidelity) << " " << software;
    }
  }
}

// On one ZionEX server a pipelined ring all-reduce (16 chunks on 4
// channels, so reductions overlap transfers) of 256 MiB reaches a bus
// bandwidth (nccl-tests: algbw x 2(n-1)/n) within 5% of the effective
// NVLink bandwidth, 300 GB/s x 0.94.
TEST(NetworkBackendTest, IntraNodeAllReduceApproachesNvlink) {
  Rig rig(1);
  NetworkBackendOptions options;
  options.algorithm_options["ring"] = R"({"chunks": 16, "channels": 4})";
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllReduce;
  for (int r = 0; r < 8; ++r) request.ranks.push_back(r);
  const double size = 256.0 * 1024 * 1024;
  request.bytes_per_rank = sim::Bytes(static_cast<std::int64_t>(size));
  backend.run(request, "ring", {});
  rig.sim.run();
  const double busbw = size / rig.sim.now().to_seconds() * 2 * 7 / 8;
  const double nvlink = 300e9 * 0.94;
  EXPECT_GT(busbw, 0.95 * nvlink);
  EXPECT_LE(busbw, nvlink);
}

// Direct all-to-all between the 16 GPUs of two servers: each GPU sends 8
// blocks across the fabric through its own 200 Gb/s NIC, so the time is at
// least 8 x block / (25 GB/s x 0.98).
TEST(NetworkBackendTest, InterNodeAllToAllIsBoundedByTheNic) {
  Rig rig(2);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllToAll;
  for (int r = 0; r < 16; ++r) request.ranks.push_back(r);
  const std::int64_t per_rank = 16 << 20;  // 1 MiB to each of 16 ranks
  request.bytes_per_rank = sim::Bytes(per_rank);
  backend.run(request, "direct", {});
  rig.sim.run();
  const double crossing = 8.0 * per_rank / 16;
  const double nic = 25e9 * (4096.0 / 4178.0);
  EXPECT_GE(rig.sim.now().to_seconds(), crossing / nic);
  EXPECT_LT(rig.sim.now().to_seconds(), crossing / nic * 1.5);  // the NIC, not something slower, bounds it
}

// NCCL's p2p all-to-all on the flows: with PXN every flow between servers
// leaves its server through the NIC of its destination's rail (and enters
// the destination's through the destination's own), every byte arrives
// once, and the NIC still bounds the time as it bounds direct's.
TEST(NetworkBackendTest, NcclP2pAllToAllStaysOnTheDestinationsRail) {
  Rig rig(4);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  backend.record_flows(true);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllToAll;
  for (int r = 0; r < 32; ++r) request.ranks.push_back(r);
  const std::int64_t per_peer = 256 << 10;
  request.bytes_per_rank = sim::Bytes(per_peer * 32);
  backend.run(request, "nccl_p2p", {});
  rig.sim.run();
  const topology::Topology& t = rig.topo;
  // A NIC's local index is its GPU's: ZionEX's NIC i sits beside GPU i.
  const auto nic_rail = [&](std::uint32_t link) -> std::optional<std::pair<int, int>> {
    const topology::LinkInfo& l = t.link(topology::LinkId{link});
    for (topology::NodeId end : {l.src, l.dst}) {
      const topology::NodeInfo& node = t.node(end);
      if (node.kind == topology::NodeKind::kNic && l.kind == topology::LinkKind::kRoce) {
        return std::pair{node.server, node.local_index};
      }
    }
    return std::nullopt;
  };
  std::int64_t delivered = 0;
  std::int64_t crossing = 0;
  for (const NetworkBackend::FlowTag& tag : backend.flow_tags()) {
    const FlowRecord& record = rig.network.flow(tag.flow);
    ASSERT_TRUE(record.finished());
    delivered += record.size.count();
    const int src_server = tag.src_rank / 8;
    const int dst_server = tag.dst_rank / 8;
    if (src_server == dst_server) continue;
    crossing += record.size.count();  // in pieces of at most 128 KiB
    for (std::uint32_t link : rig.network.route(tag.flow)) {
      if (const auto rail = nic_rail(link)) {
        EXPECT_EQ(rail->second, tag.dst_rank % 8) << tag.src_rank << " -> " << tag.dst_rank;
        EXPECT_TRUE(rail->first == src_server || rail->first == dst_server);
      }
    }
  }
  EXPECT_EQ(crossing, per_peer * 32 * 24);
  EXPECT_EQ(delivered, per_peer * 32 * 31);
  // Each NIC sends its rail's share: 8 GPUs x 3 servers x 256 KiB.
  const double crossing_bytes = 24.0 * per_peer;
  const double nic = 25e9 * (4096.0 / 4178.0);
  EXPECT_GE(rig.sim.now().to_seconds(), crossing_bytes / nic);
  EXPECT_LT(rig.sim.now().to_seconds(), crossing_bytes / nic * 1.5);
}

// The all-to-all efficiency: with 0.25, every all-to-all transfer between
// servers puts 4x its bytes on the links (exactly: the links carry 4x the
// crossing bytes) and the NIC-bound all-to-all takes about 4x as long;
// transfers inside a server and other collectives are untouched; a value
// outside (0, 1] is refused.
TEST(NetworkBackendTest, AllToAllEfficiencyScalesTrafficBetweenServers) {
  const auto run = [](collectives::CollectiveKind kind, int nodes, double efficiency, std::int64_t* nic_bytes) {
    Rig rig(nodes);
    NetworkBackendOptions options;
    options.all_to_all_efficiency = efficiency;
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    collectives::CollectiveRequest request;
    request.kind = kind;
    for (int r = 0; r < 8 * nodes; ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(std::int64_t{16} << 20);
    backend.run(request, kind == collectives::CollectiveKind::kAllToAll ? "direct" : "ring", {});
    rig.sim.run();
    if (nic_bytes != nullptr) {
      *nic_bytes = 0;
      for (std::uint32_t l = 0; l < rig.topo.num_links(); ++l) {
        if (rig.topo.link(topology::LinkId{l}).kind == topology::LinkKind::kRoce) {
          *nic_bytes += rig.network.link(l).bytes_carried.count();
        }
      }
    }
    return rig.sim.now().since_start();
  };
  std::int64_t ideal_bytes = 0;
  std::int64_t lossy_bytes = 0;
  const Duration ideal = run(collectives::CollectiveKind::kAllToAll, 2, 1.0, &ideal_bytes);
  const Duration lossy = run(collectives::CollectiveKind::kAllToAll, 2, 0.25, &lossy_bytes);
  EXPECT_GT(ideal_bytes, 0);
  EXPECT_EQ(lossy_bytes, 4 * ideal_bytes);
  EXPECT_GT(lossy.to_seconds(), 3.5 * ideal.to_seconds());
  EXPECT_LT(lossy.to_seconds(), 4.1 * ideal.to_seconds());
  EXPECT_EQ(run(collectives::CollectiveKind::kAllToAll, 1, 0.25, nullptr),
            run(collectives::CollectiveKind::kAllToAll, 1, 1.0, nullptr));
  EXPECT_EQ(run(collectives::CollectiveKind::kAllReduce, 2, 0.25, nullptr),
            run(collectives::CollectiveKind::kAllReduce, 2, 1.0, nullptr));
  Rig rig(1);
  for (const double bad : {0.0, 1.5, -1.0}) {
    NetworkBackendOptions options;
    options.all_to_all_efficiency = bad;
    EXPECT_THROW(NetworkBackend(rig.sim, rig.network, rig.router, rig.registry, options), InputError);
  }
}

// An op graph of two ranks on two servers: compute, then an all-reduce, then
// compute, runs through the executor with this backend.
TEST(NetworkBackendTest, RunsOpGraphs) {
  Rig rig(2);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  OpGraph g;
  g.num_ranks = 16;
  const int s = g.stream("compute");
  std::vector<int> all;
  for (int r = 0; r < 16; ++r) all.push_back(r);
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = all, .bytes_per_rank = sim::Bytes(1 << 20)});
  for (int r = 0; r < 16; ++r) {
    Op c;
    c.rank = r;
    c.stream = s;
    c.duration = Duration::us(10);
    g.add(c);
    Op ar;
    ar.kind = OpKind::kCollective;
    ar.rank = r;
    ar.stream = s;
    ar.collective = 0;
    g.add(ar);
  }
  const ExecutionResult result = execute(rig.sim, g, backend);
  EXPECT_GT(result.makespan, sim::TimePoint::zero() + Duration::us(10));
  EXPECT_EQ(backend.collectives_run(), 1u);
  // Every GPU of the ring received data: the NVLink and NIC links carried bytes.
  EXPECT_FALSE(rig.network.hottest_links(1).empty());
}

// An algorithm's plan for a request equal to an earlier one's is the one
// lowered then (a lowering is a pure function of the request and the
// group's view): run by name, each collective finishes when the same plan,
// lowered by hand and run as a plan, does, to the picosecond; only a
// request that differs (size, kind, ranks, algorithm) is lowered again;
// the newest kCachedPlans (4) are kept; all-to-all-v requests never are.
TEST(NetworkBackendTest, EqualRequestsShareOneLoweredPlan) {
  const auto request = [](std::int64_t bytes, int ranks) {
    collectives::CollectiveRequest r;
    r.kind = collectives::CollectiveKind::kAllReduce;
    for (int i = 0; i < ranks; ++i) r.ranks.push_back(i);
    r.bytes_per_rank = sim::Bytes(bytes);
    return r;
  };
  const auto finishes = [](Rig& rig, const std::function<void(NetworkBackend&, sim::EventCallback)>& start) {
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
    std::vector<std::int64_t> at;
    for (int i = 0; i < 3; ++i) {
      start(backend, [&] { at.push_back(rig.sim.now().count_ps()); });
      rig.sim.run();
    }
    return std::pair(at, backend.plans_lowered());
  };
  const collectives::CollectiveRequest x = request(3 << 20, 32);
  Rig by_name_rig(4);
  const auto [by_name, lowered] =
      finishes(by_name_rig, [&](NetworkBackend& b, sim::EventCallback done) { b.run(x, "hierarchical", std::move(done)); });
  EXPECT_EQ(lowered, 1u);
  Rig by_plan_rig(4);
  const collectives::CollectivePlan plan = collectives::HierarchicalAlgorithm().lower(
      x, collectives::make_topology_view(by_plan_rig.topo, x.ranks));
  const auto [by_plan, none] = finishes(by_plan_rig, [&](NetworkBackend& b, sim::EventCallback done) {
    b.run_plan(plan, x.ranks, std::move(done));
  });
  EXPECT_EQ(none, 0u);
  ASSERT_EQ(by_name.size(), 3u);
  EXPECT_EQ(by_name, by_plan);
  EXPECT_LT(by_name[0], by_name[1]);

  Rig rig(4);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  const auto run = [&](const collectives::CollectiveRequest& r, const std::string& algorithm) {
    backend.run(r, algorithm, [] {});
    rig.sim.run();
    return backend.plans_lowered();
  };
  EXPECT_EQ(run(x, "hierarchical"), 1u);
  EXPECT_EQ(run(x, "ring"), 2u);
  EXPECT_EQ(run(request(2 << 20, 32), "hierarchical"), 3u);
  EXPECT_EQ(run(request(3 << 20, 16), "hierarchical"), 4u);
  collectives::CollectiveRequest gather = x;
  gather.kind = collectives::CollectiveKind::kAllGather;
  EXPECT_EQ(run(gather, "hierarchical"), 5u);  // x's hierarchical plan is now the oldest of 5
  EXPECT_EQ(run(request(2 << 20, 32), "hierarchical"), 5u);
  EXPECT_EQ(run(x, "hierarchical"), 6u);  // and was dropped
  EXPECT_EQ(run(x, "hierarchical"), 6u);
  collectives::CollectiveRequest v;
  v.kind = collectives::CollectiveKind::kAllToAll;
  v.ranks = x.ranks;
  v.all_to_all_v_bytes.assign(32, std::vector<std::int64_t>(32, 1024));
  EXPECT_EQ(run(v, "direct"), 7u);
  EXPECT_EQ(run(v, "direct"), 8u);
  EXPECT_EQ(backend.collectives_run(), 10u);
}

// "nccl" takes NCCL's predicted time and starts no flows: 8 A100s on one
// server, all-reduce 1 GiB with 2.13's constants, is 8051.950 us (the golden
// value of models/nccl's tests).
TEST(NetworkBackendTest, NcclAlgorithmUsesTheCostModel) {
  Rig rig(1);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllReduce;
  for (int r = 0; r < 8; ++r) request.ranks.push_back(r);
  request.bytes_per_rank = sim::Bytes(std::int64_t{1} << 30);
  backend.run(request, "nccl-2.13", {});
  rig.sim.run();
  EXPECT_NEAR(rig.sim.now().to_seconds() * 1e6, 8051.950, 0.001);
  EXPECT_EQ(rig.network.num_flows(), 0u);

  // What NCCL picked, once per distinct call: ring/Simple, the fastest of
  // its table's rows; NVLS and NVLS_TREE are not weighed (2.13 has none
  // and the call is inside one node), and neither is
  // anything for an auto column.
  backend.run(request, "nccl-2.13", {});
  request.bytes_per_rank = sim::Bytes(1024);
  backend.run(request, "nccl-2.13", {});
  rig.sim.run();
  EXPECT_TRUE(backend.auto_choices().empty());
  ASSERT_EQ(backend.nccl_choices().size(), 2u);
  const AutoChoice& big = backend.nccl_choices()[0];
  EXPECT_EQ(big.kind, collectives::CollectiveKind::kAllReduce);
  EXPECT_EQ(big.ranks, 8);
  EXPECT_EQ(big.bytes_per_rank, sim::Bytes(std::int64_t{1} << 30));
  EXPECT_EQ(big.chosen, "ring/Simple");
  ASSERT_EQ(big.candidates.size(), 8u);
  std::optional<sim::Duration> fastest;
  for (const AutoChoice::Candidate& c : big.candidates) {
    if (c.time && (!fastest || *c.time < *fastest)) fastest = c.time;
    EXPECT_EQ(c.time.has_value(), c.refused.empty()) << c.algorithm;
  }
  EXPECT_EQ(big.candidates[1].algorithm, "tree/LL128");
  EXPECT_EQ(big.candidates[5].algorithm, "ring/Simple");
  EXPECT_EQ(big.candidates[5].time, fastest);
  EXPECT_EQ(big.candidates[6].algorithm, "nvls/Simple");
  EXPECT_EQ(big.candidates[6].refused, "this version has no NVLS");
  EXPECT_EQ(big.candidates[7].algorithm, "nvls_tree/Simple");
  EXPECT_EQ(big.candidates[7].refused, "NVLS_TREE is for several nodes");
  EXPECT_EQ(backend.nccl_choices()[1].chosen, "ring/LL");
}

// Host copies on a ZionEX server. Each goes from the GPU's own socket
// (ranks 0 and 1 behind socket 0's PCIe switch, 2 and 3 behind socket 1's)
// over the socket's Gen3 x16 link (15.75 GB/s x 256/280 = 14.4 GB/s of
// payload, 150 ns) into the switch; the GPU's own link is left out (PCIe
// arbitrates per port, not per flow). Alone, a copy
// runs at its DMA cap, 12 GB/s; two behind one switch share the Gen3 link,
// 7.2 GB/s each; a device-to-host copy takes the link the other way and
// does not slow a host-to-device one. Bytes are conserved on the links,
// and none lands on the GPU's own link.
TEST(NetworkBackendTest, HostCopiesShareTheHostsPcieLinks) {
  const double gen3 = static_cast<double>(sim::BytesPerSecond::from_gbyte_per_s(16 * 8.0 * 128 / 130 / 8)
                                              .scaled(256.0 / 280.0)
                                              .count());
  const std::int64_t size = std::int64_t{64} << 20;
  const Duration latency = Duration::ns(150);
  const auto run = [&](const std::vector<std::pair<int, bool>>& copies) {
    Rig rig(1);
    NetworkBackendOptions options;
    options.host_copy_bytes_per_s = 12e9;
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    OpGraph g;
    g.num_ranks = 8;
    const int s = g.stream("h2d");
    for (const auto& [rank, to_device] : copies) {
      Op c;
      c.kind = OpKind::kHostCopy;
      c.rank = rank;
      c.stream = s;
      c.bytes = sim::Bytes(size);
      c.to_device = to_device;
      g.add(c);
    }
    const ExecutionResult r = execute(rig.sim, g, backend);
    std::vector<Duration> took;
    for (const OpTiming& t : r.ops) took.push_back(t.end - t.start);
    const topology::NodeId cpu0 = *rig.topo.find("node0/cpu0");
    EXPECT_EQ(backend.host_of(0), cpu0);
    EXPECT_EQ(backend.host_of(1), cpu0);
    EXPECT_EQ(backend.host_of(2), *rig.topo.find("node0/cpu1"));
    // What crossed socket 0's link toward its switch: the host-to-device copies of ranks 0 and 1.
    std::int64_t down = 0;
    for (std::size_t l = 0; l < rig.topo.num_links(); ++l) {
      const topology::LinkInfo& info = rig.topo.link(topology::LinkId{static_cast<std::uint32_t>(l)});
      const std::int64_t carried = rig.network.link(static_cast<std::uint32_t>(l)).bytes_carried.count();
      if (info.src == cpu0 && rig.topo.node(info.dst).name == "node0/pcie_gpu0") down = carried;
      if (rig.topo.node(info.src).kind == topology::NodeKind::kGpu ||
          rig.topo.node(info.dst).kind == topology::NodeKind::kGpu) {
        EXPECT_EQ(carried, 0) << rig.topo.node(info.src).name << " -> " << rig.topo.node(info.dst).name;
      }
    }
    std::int64_t want = 0;
    for (const auto& [rank, to_device] : copies) want += (rank < 2 && to_device) ? size : 0;
    EXPECT_EQ(down, want);
    return took;
  };
  const Duration alone = latency + transfer_time(static_cast<double>(size), 12e9);
  EXPECT_EQ(run({{0, true}}), (std::vector<Duration>{alone}));
  const Duration shared = latency + transfer_time(static_cast<double>(size), gen3 / 2);
  EXPECT_EQ(run({{0, true}, {1, true}}), (std::vector<Duration>{shared, shared}));
  EXPECT_EQ(run({{0, true}, {2, true}}), (std::vector<Duration>{alone, alone}));  // different sockets
  EXPECT_EQ(run({{0, true}, {1, false}}), (std::vector<Duration>{alone, alone}));  // opposite directions
}

// A cluster graph with no CPU on the GPU's server copies at the DMA rate.
TEST(NetworkBackendTest, HostCopyWithoutAHostRunsAtTheDmaRate) {
  topology::TopologyBuilder builder;
  const topology::NodeId a =
      builder.add_node({.kind = topology::NodeKind::kGpu, .name = "gpu0", .server = 0, .rank = 0});
  const topology::NodeId b =
      builder.add_node({.kind = topology::NodeKind::kGpu, .name = "gpu1", .server = 0, .local_index = 1, .rank = 1});
  builder.add_cable(a, b, {.kind = topology::LinkKind::kNvlink,
                           .bandwidth = sim::BytesPerSecond::from_gbyte_per_s(100),
                           .latency = Duration::ns(100)});
  const topology::Topology topo = builder.build();
  topology::Router router(topo);
  sim::Simulator simulator;
  FlowNetwork network(simulator, link_params(topo));
  collectives::CollectiveRegistry registry;
  NetworkBackendOptions options;
  options.host_copy_bytes_per_s = 10e9;
  NetworkBackend backend(simulator, network, router, registry, options);
  EXPECT_FALSE(backend.host_of(1).has_value());
  OpGraph g;
  g.num_ranks = 2;
  Op c;
  c.kind = OpKind::kHostCopy;
  c.rank = 1;
  c.stream = g.stream("h2d");
  c.bytes = sim::Bytes(1'000'000);
  g.add(c);
  const ExecutionResult r = execute(simulator, g, backend);
  EXPECT_EQ(r.ops[0].end - r.ops[0].start, Duration::us(100));
  EXPECT_EQ(network.flows_started(), 0u);
}

// The communication library's latencies are exact additions: on one
// server the ring's 14 ring steps each cost the in-server transfer latency
// more, plus one launch. On two servers (ring positions 7 and 15 send
// across) a position's transfer waits only for its predecessor's, so the
// last transfer ends a chain of 30 consecutive hops, of which at most 4
// cross servers: the launch, 4 network and 26 in-server transfer latencies
// are added (to within a nanosecond: transfers of 64 B that now overlap on
// a link share it). A collective of 0 bytes stays free.
TEST(NetworkBackendTest, SoftwareLatenciesAddExactly) {
  const SoftwareLatencies software{.launch = Duration::ns(6600), .transfer = Duration::ns(400),
                                   .network_transfer = Duration::ns(1200)};
  const auto time = [](int nodes, std::int64_t bytes, const SoftwareLatencies& l, std::uint64_t* steps) {
    Rig rig(nodes);
    NetworkBackendOptions options;
    options.software = l;
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    collectives::CollectiveRequest request;
    request.kind = collectives::CollectiveKind::kAllReduce;
    for (int r = 0; r < 8 * nodes; ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(bytes);
    bool done = false;
    backend.run(request, "ring", [&] { done = true; });
    rig.sim.run();
    EXPECT_TRUE(done);
    if (steps != nullptr) *steps = backend.steps_run();
    return rig.sim.now().since_start();
  };
  std::uint64_t steps = 0;
  EXPECT_EQ(time(1, 8 << 10, software, &steps), time(1, 8 << 10, {}, nullptr) + Duration::ns(6600) +
                                                    Duration::ns(400) * 14);
  EXPECT_EQ(steps, 14u * 8u);
  const Duration added = time(2, 1 << 10, software, &steps) - time(2, 1 << 10, {}, nullptr);
  EXPECT_NEAR(added.to_seconds() * 1e9, 6600 + 4 * 1200 + 26 * 400, 1.0);
  EXPECT_EQ(steps, 30u * 16u);
  EXPECT_EQ(time(2, 0, software, nullptr), Duration::zero());
  // 1 KiB on one server in closed form: 6.6 us + 14 x (0.2 us of links +
  // 0.4 us + 128 B over NVLink) + 7 reductions of 128 B.
  const double nvlink = static_cast<double>(sim::BytesPerSecond::from_gbyte_per_s(300).scaled(0.94).count());
  const Duration step = Duration::ns(600) + transfer_time(128, nvlink);
  const Duration reduce = Duration::from_seconds_ceil(128 / NetworkBackendOptions{}.reduction_bytes_per_s);
  EXPECT_EQ(time(1, 1 << 10, software, nullptr), Duration::ns(6600) + step * 14 + reduce * 7);

  Rig rig(1);
  NetworkBackendOptions negative;
  negative.software.transfer = Duration::ps(-1);
  EXPECT_THROW(NetworkBackend(rig.sim, rig.network, rig.router, rig.registry, negative), InputError);
}

// The gap between a rank's peers: a direct all-to-all of 16 ranks on two
// servers has each rank send to 15 peers in one step, which then takes at
// least 14 gaps and the network transfer latency after the launch. With 4 B
// per peer that floor is the time, exactly; with 1 MiB per peer the NIC
// takes longer and the gap changes nothing. A ring's steps (one peer
// each) never pay it; a negative gap is refused.
TEST(NetworkBackendTest, PeerGapFloorsStepsWithManyPeers) {
  const auto time = [](collectives::CollectiveKind kind, const std::string& algorithm, std::int64_t bytes,
                       Duration gap) {
    Rig rig(2);
    NetworkBackendOptions options;
    options.software = {.launch = Duration::ns(6600), .transfer = Duration::ns(400),
                        .network_transfer = Duration::ns(1200), .peer_gap = gap};
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    collectives::CollectiveRequest request;
    request.kind = kind;
    for (int r = 0; r < 16; ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(bytes);
    bool done = false;
    backend.run(request, algorithm, [&] { done = true; });
    rig.sim.run();
    EXPECT_TRUE(done);
    return rig.sim.now().since_start();
  };
  const auto a2a = collectives::CollectiveKind::kAllToAll;
  const Duration gap = Duration::ns(2000);
  EXPECT_EQ(time(a2a, "direct", 64, gap), Duration::ns(6600) + gap * 14 + Duration::ns(1200));
  EXPECT_LT(time(a2a, "direct", 64, Duration::zero()), Duration::ns(6600) + Duration::ns(5000));
  EXPECT_EQ(time(a2a, "direct", std::int64_t{16} << 20, gap), time(a2a, "direct", std::int64_t{16} << 20, {}));
  // Pairwise exchange: one peer per round, no floor.
  EXPECT_EQ(time(a2a, "pairwise", 64, gap), time(a2a, "pairwise", 64, {}));
  const auto ar = collectives::CollectiveKind::kAllReduce;
  EXPECT_EQ(time(ar, "ring", 1 << 10, gap), time(ar, "ring", 1 << 10, {}));

  Rig rig(1);
  NetworkBackendOptions negative;
  negative.software.peer_gap = Duration::ps(-1);
  EXPECT_THROW(NetworkBackend(rig.sim, rig.network, rig.router, rig.registry, negative), InputError);
}

// A point-to-point transfer op pays the launch and its path's transfer
// latency: between servers the network one, inside a server the other; one
// of 0 bytes pays nothing.
TEST(NetworkBackendTest, TransferOpsPayLaunchAndTransferLatency) {
  const auto time = [](int dst, std::int64_t bytes, const SoftwareLatencies& l) {
    Rig rig(2);
    NetworkBackendOptions options;
    options.software = l;
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    OpGraph g;
    g.num_ranks = 16;
    g.transfers.push_back({.src = 0, .dst = dst, .size = sim::Bytes(bytes)});
    bool done = false;
    backend.start_transfer(g, 0, [&] { done = true; });
    rig.sim.run();
    EXPECT_TRUE(done);
    return rig.sim.now().since_start();
  };
  const SoftwareLatencies l{.launch = Duration::us(5), .transfer = Duration::ns(300),
                            .network_transfer = Duration::us(2)};
  EXPECT_EQ(time(8, 1 << 20, l), time(8, 1 << 20, {}) + Duration::us(7));
  EXPECT_EQ(time(1, 1 << 20, l), time(1, 1 << 20, {}) + Duration::ns(5300));
  EXPECT_EQ(time(8, 0, l), time(8, 0, {}));
}

// NVLS all-reduce of S bytes on one HGX server, in one slice: four phases
// one after the other, each with one flow per GPU link, every flow one
// link (GPU -> NVSwitch or back, 100 ns) carrying its bytes / e at the
// link's 450 GB/s x 0.94: the whole slice up (S), each GPU's block down
// (S/8), the block up again (S/8), the other seven blocks down (7S/8). No
// GPU reduces anything.
TEST(NetworkBackendTest, NvlsAllReduceMatchesItsClosedForm) {
  for (std::int64_t size : {std::int64_t{8} << 10, std::int64_t{64} << 20}) {
    Rig rig(1, "hgx");
    NetworkBackendOptions options;
    options.nvls_efficiency = 0.5;
    options.algorithm_options["nvls"] = R"({"chunks": 1})";
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    collectives::CollectiveRequest request;
    request.kind = collectives::CollectiveKind::kAllReduce;
    for (int r = 0; r < 8; ++r) request.ranks.push_back(r);
    request.bytes_per_rank = sim::Bytes(size);
    bool done = false;
    backend.run(request, "nvls", [&] { done = true; });
    rig.sim.run();
    ASSERT_TRUE(done);
    const double link = static_cast<double>(sim::BytesPerSecond::from_gbyte_per_s(450).scaled(0.94).count());
    const auto phase = [&](std::int64_t bytes) {
      return Duration::ns(100) + transfer_time(static_cast<double>(bytes) / 0.5, link);
    };
    EXPECT_EQ(rig.sim.now().since_start(), phase(size) + phase(size / 8) * 2 + phase(size / 8 * 7)) << size;
    EXPECT_EQ(backend.steps_run(), 4u);
  }
}

// A cluster whose switch does not reduce (an A100's) refuses NVLS plans:
// the algorithm when lowering, the executor for a plan given whole.
TEST(NetworkBackendTest, NvlsNeedsASwitchThatReduces) {
  Rig rig(1);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllReduce;
  for (int r = 0; r < 8; ++r) request.ranks.push_back(r);
  request.bytes_per_rank = sim::Bytes(1024);
  EXPECT_THROW(backend.run(request, "nvls", {}), InputError);
  collectives::TopologyView view = collectives::TopologyView::packed(8, 8);
  view.set_switch_reduces(true);
  collectives::CollectivePlan plan = rig.registry.create("nvls")->lower(request, view);
  try {
    backend.run_plan(std::move(plan), request.ranks, {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("this cluster's switch does not"), std::string::npos) << e.what();
  }
}

TEST(NetworkBackendTest, UnknownAlgorithmIsAnInputError) {
  Rig rig(1);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
  collectives::CollectiveRequest request;
  request.kind = collectives::CollectiveKind::kAllReduce;
  request.ranks = {0, 1};
  request.bytes_per_rank = sim::Bytes(1024);
  EXPECT_THROW(backend.run(request, "rign", {}), InputError);
}

}  // namespace
}  // namespace zx::models
