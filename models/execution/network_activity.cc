#include "models/execution/network_activity.h"

#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace zx::models {
namespace {

bool network_side(topology::NodeKind kind) {
  return kind == topology::NodeKind::kEthernetSwitch || kind == topology::NodeKind::kNic;
}

std::string link_name(const topology::Topology& topo, std::uint32_t l) {
  const topology::LinkInfo& info = topo.link(topology::LinkId{l});
  return fmt::format("{}->{}", topo.node(info.src).name, topo.node(info.dst).name);
}

}  // namespace

NetworkActivity collect_network_activity(const OpGraph& graph, const NetworkBackend& backend,
                                         const FlowNetwork& network, const topology::Topology& topology,
                                         const NetworkActivityOptions& options) {
  const int ranks = options.max_ranks > 0 ? options.max_ranks : graph.num_ranks;
  // (collective, rank) -> op, and transfer -> (send op, recv op).
  std::map<std::pair<std::int64_t, int>, std::int64_t> collective_op;
  std::vector<std::pair<std::int64_t, std::int64_t>> transfer_ops(graph.transfers.size(), {-1, -1});
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    const auto index = static_cast<std::int64_t>(i);
    if (op.kind == OpKind::kCollective) collective_op[{op.collective, op.rank}] = index;
    if (op.kind == OpKind::kSend) transfer_ops[static_cast<std::size_t>(op.transfer)].first = index;
    if (op.kind == OpKind::kRecv) transfer_ops[static_cast<std::size_t>(op.transfer)].second = index;
  }
  const auto op_of = [&](std::int64_t collective, int rank) -> std::int64_t {
    const auto it = collective_op.find({collective, rank});
    return it == collective_op.end() ? -1 : it->second;
  };

  NetworkActivity activity;
  std::map<std::uint32_t, int> nic_index;  // NIC node id -> index, filled in node order below
  std::vector<std::vector<std::uint32_t>> tx_nodes;
  std::vector<std::vector<std::uint32_t>> rx_nodes;
  for (const NetworkBackend::FlowTag& tag : backend.flow_tags()) {
    if (tag.src_rank >= ranks && tag.dst_rank >= ranks) continue;
    const FlowRecord& record = network.flow(tag.flow);
    TransferSlice t;
    t.src_rank = tag.src_rank;
    t.dst_rank = tag.dst_rank;
    t.bytes = record.size.count();
    t.start_ps = record.start.count_ps();
    t.finish_ps = record.finish.count_ps();
    if (tag.collective >= 0) {
      const CollectiveCall& call = graph.collectives[static_cast<std::size_t>(tag.collective)];
      t.name = fmt::format("{} GPU {} -> GPU {}", collectives::to_string(call.kind), tag.src_rank, tag.dst_rank);
      t.from_op = op_of(tag.collective, tag.src_rank);
      t.to_op = op_of(tag.collective, tag.dst_rank);
    } else if (tag.transfer >= 0) {
      t.name = fmt::format("send GPU {} -> GPU {}", tag.src_rank, tag.dst_rank);
      t.from_op = transfer_ops[static_cast<std::size_t>(tag.transfer)].first;
      t.to_op = transfer_ops[static_cast<std::size_t>(tag.transfer)].second;
    } else {
      t.name = fmt::format("GPU {} -> GPU {}", tag.src_rank, tag.dst_rank);
    }
    std::vector<std::uint32_t> tx;
    std::vector<std::uint32_t> rx;
    const std::size_t index = static_cast<std::size_t>(&tag - backend.flow_tags().data());
    const std::span<const std::uint32_t> kept = backend.tag_route(index);
    for (std::uint32_t l : network.link_share() == nullptr ? network.route(tag.flow) : kept) {
      const topology::LinkInfo& info = topology.link(topology::LinkId{l});
      const topology::NodeKind src = topology.node(info.src).kind;
      const topology::NodeKind dst = topology.node(info.dst).kind;
      const auto src_id = static_cast<std::uint32_t>(info.src);
      const auto dst_id = static_cast<std::uint32_t>(info.dst);
      if (src == topology::NodeKind::kNic && network_side(dst)) tx.push_back(src_id);
      if (dst == topology::NodeKind::kNic && network_side(src)) rx.push_back(dst_id);
      for (std::uint32_t n : {src_id, dst_id}) {
        if (topology.node(topology::NodeId{n}).kind == topology::NodeKind::kNic) nic_index.emplace(n, 0);
      }
    }
    tx_nodes.push_back(std::move(tx));
    rx_nodes.push_back(std::move(rx));
    activity.transfers.push_back(std::move(t));
  }
  // Number the NICs in node order (std::map iterates by node id).
  for (auto& [node, index] : nic_index) {
    index = static_cast<int>(activity.nic_names.size());
    activity.nic_names.push_back(topology.node(topology::NodeId{node}).name);
  }
  for (std::size_t k = 0; k < activity.transfers.size(); ++k) {
    for (std::uint32_t n : tx_nodes[k]) activity.transfers[k].tx_nics.push_back(nic_index.at(n));
    for (std::uint32_t n : rx_nodes[k]) activity.transfers[k].rx_nics.push_back(nic_index.at(n));
  }
  for (std::uint32_t l : network.hottest_links(options.counter_links)) {
    CounterSeries series{link_name(topology, l), {}};
    for (const auto& sample : network.link_history(l)) {
      series.samples.emplace_back(sample.time.count_ps(), sample.utilisation);
    }
    activity.counters.push_back(std::move(series));
  }
  return activity;
}

}  // namespace zx::models
