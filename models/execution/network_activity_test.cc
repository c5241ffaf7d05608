// Tests of collect_network_activity: a point-to-point transfer between two
// servers crosses exactly one NIC of the sending server (tx) and one of the
// receiving server (rx); one inside a server crosses none; the slices carry
// the network model's own times and sizes and the ops that sent and
// received them; max_ranks keeps only transfers touching the shown ranks.

#include "models/execution/network_activity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/collectives/registry.h"
#include "models/execution/executor.h"
#include "models/network/topology_links.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::models {
namespace {

namespace mc = models::collectives;

struct SmallRun {
  topology::Topology topo = topology::build_cluster(topology::preset_spec("zionex", 2));
  topology::Router router{topo};
  sim::Simulator sim;
  FlowNetwork network{sim, link_params(topo)};
  collectives::CollectiveRegistry registry;
  OpGraph graph;
  std::uint32_t send0 = 0, recv0 = 0, send1 = 0, recv1 = 0;
  std::uint32_t a2a_rank0 = 0, a2a_rank8 = 0;
  std::unique_ptr<NetworkBackend> backend;

  SmallRun() {
    collectives::register_builtin_collectives(registry);
    graph.num_ranks = 16;
    const int s = graph.stream("comm");
    graph.transfers.push_back({.src = 0, .dst = 8, .size = sim::Bytes(1 << 20)});  // across servers
    graph.transfers.push_back({.src = 1, .dst = 2, .size = sim::Bytes(1 << 20)});  // inside server 0
    graph.collectives.push_back({.kind = mc::CollectiveKind::kAllToAll, .ranks = {0, 8}, .bytes_per_rank = sim::Bytes(2 << 20),
                                 .algorithm = "direct"});
    const auto add = [&](OpKind kind, int rank, std::int64_t transfer, std::int64_t collective) {
      Op op;
      op.kind = kind;
      op.rank = rank;
      op.stream = s;
      op.transfer = transfer;
      op.collective = collective;
      return graph.add(op);
    };
    send0 = add(OpKind::kSend, 0, 0, -1);
    recv0 = add(OpKind::kRecv, 8, 0, -1);
    send1 = add(OpKind::kSend, 1, 1, -1);
    recv1 = add(OpKind::kRecv, 2, 1, -1);
    a2a_rank0 = add(OpKind::kCollective, 0, -1, 0);
    a2a_rank8 = add(OpKind::kCollective, 8, -1, 0);
    network.record_link_history(true);
    backend = std::make_unique<NetworkBackend>(sim, network, router, registry);
    backend->record_flows(true);
    (void)execute(sim, graph, *backend);
  }
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(NetworkActivityTest, TransfersCrossTheRightNics) {
  SmallRun run;
  const NetworkActivity a = collect_network_activity(run.graph, *run.backend, run.network, run.topo);
  ASSERT_EQ(a.transfers.size(), run.backend->flow_tags().size());
  // NICs: unique and in node order (the preset numbers nodes server by server).
  for (std::size_t k = 1; k < a.nic_names.size(); ++k) EXPECT_NE(a.nic_names[k - 1], a.nic_names[k]);
  bool saw_inter = false;
  bool saw_intra = false;
  std::size_t collective_flows = 0;
  for (std::size_t k = 0; k < a.transfers.size(); ++k) {
    const TransferSlice& t = a.transfers[k];
    const NetworkBackend::FlowTag& tag = run.backend->flow_tags()[k];
    const FlowRecord& record = run.network.flow(tag.flow);
    EXPECT_EQ(t.bytes, record.size.count());
    EXPECT_EQ(t.start_ps, record.start.count_ps());
    EXPECT_EQ(t.finish_ps, record.finish.count_ps());
    EXPECT_LT(t.start_ps, t.finish_ps);
    if (tag.transfer == 0) {
      saw_inter = true;
      EXPECT_EQ(t.from_op, run.send0);
      EXPECT_EQ(t.to_op, run.recv0);
      EXPECT_EQ(t.name, "send GPU 0 -> GPU 8");
      ASSERT_EQ(t.tx_nics.size(), 1u);
      ASSERT_EQ(t.rx_nics.size(), 1u);
      EXPECT_TRUE(starts_with(a.nic_names[t.tx_nics[0]], "node0/")) << a.nic_names[t.tx_nics[0]];
      EXPECT_TRUE(starts_with(a.nic_names[t.rx_nics[0]], "node1/")) << a.nic_names[t.rx_nics[0]];
    } else if (tag.transfer == 1) {
      saw_intra = true;
      EXPECT_EQ(t.from_op, run.send1);
      EXPECT_EQ(t.to_op, run.recv1);
      EXPECT_TRUE(t.tx_nics.empty());  // NVLink only
      EXPECT_TRUE(t.rx_nics.empty());
    } else {
      ASSERT_EQ(tag.collective, 0);
      ++collective_flows;
      EXPECT_EQ(t.from_op, tag.src_rank == 0 ? run.a2a_rank0 : run.a2a_rank8);
      EXPECT_EQ(t.to_op, tag.dst_rank == 0 ? run.a2a_rank0 : run.a2a_rank8);
      EXPECT_TRUE(starts_with(t.name, "all_to_all GPU "));
      if (tag.src_rank != tag.dst_rank) {
        EXPECT_EQ(t.tx_nics.size(), 1u);
        EXPECT_EQ(t.rx_nics.size(), 1u);
      }
    }
  }
  EXPECT_TRUE(saw_inter);
  EXPECT_TRUE(saw_intra);
  EXPECT_GE(collective_flows, 2u);  // at least 0 -> 8 and 8 -> 0
  // The busiest links as counters, utilisation within [0, 1].
  EXPECT_FALSE(a.counters.empty());
  EXPECT_LE(a.counters.size(), 16u);
  for (const CounterSeries& c : a.counters) {
    for (const auto& [ps, u] : c.samples) {
      EXPECT_GE(u, 0.0);
      EXPECT_LE(u, 1.0 + 1e-12);
    }
  }
}

TEST(NetworkActivityTest, MaxRanksKeepsTransfersTouchingShownRanks) {
  SmallRun run;
  NetworkActivityOptions options;
  options.max_ranks = 1;  // rank 0 only
  const NetworkActivity a = collect_network_activity(run.graph, *run.backend, run.network, run.topo, options);
  ASSERT_FALSE(a.transfers.empty());
  for (const TransferSlice& t : a.transfers) EXPECT_TRUE(t.src_rank == 0 || t.dst_rank == 0) << t.name;
  // The intra-server transfer 1 -> 2 is gone.
  EXPECT_TRUE(std::none_of(a.transfers.begin(), a.transfers.end(),
                           [](const TransferSlice& t) { return t.src_rank == 1; }));
}

TEST(NetworkActivityTest, NothingRecordedWithoutRecordFlows) {
  topology::Topology topo = topology::build_cluster(topology::preset_spec("zionex", 1));
  topology::Router router(topo);
  sim::Simulator sim;
  FlowNetwork network(sim, link_params(topo));
  collectives::CollectiveRegistry registry;
  collectives::register_builtin_collectives(registry);
  NetworkBackend backend(sim, network, router, registry);
  backend.run({.kind = collectives::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(1024)},
              "ring", {});
  sim.run();
  EXPECT_GT(network.num_flows(), 0u);
  EXPECT_TRUE(backend.flow_tags().empty());
}

}  // namespace
}  // namespace zx::models
