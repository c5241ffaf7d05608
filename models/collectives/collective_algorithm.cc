// File: models/collectives/collective_algorithm.cc
//
// TopologyView and the common checks of lower().

#include "models/collectives/collective_algorithm.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "base/check.h"
#include "base/error.h"

namespace zx::models::collectives {

TopologyView::TopologyView(std::vector<MemberLocation> members) : members_(std::move(members)) {}

TopologyView TopologyView::packed(int n, int gpus_per_server) {
  ZX_CHECK(n >= 0 && gpus_per_server >= 1, "TopologyView::packed needs n >= 0, gpus >= 1");
  std::vector<MemberLocation> members;
  for (int i = 0; i < n; ++i) {
    members.push_back({.server = i / gpus_per_server, .local_index = i % gpus_per_server});
  }
  return TopologyView(std::move(members));
}

const MemberLocation& TopologyView::member(int index) const {
  ZX_CHECK(index >= 0 && index < size(), "TopologyView member index out of range");
  return members_[static_cast<std::size_t>(index)];
}

std::vector<std::vector<int>> TopologyView::members_by_server() const {
  std::map<int, std::vector<int>> by_server;
  for (int i = 0; i < size(); ++i)
    by_server[members_[static_cast<std::size_t>(i)].server].push_back(i);
  std::vector<std::vector<int>> out;
  for (auto& [server, list] : by_server) {
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return member(a).local_index < member(b).local_index; });
    out.push_back(std::move(list));
  }
  return out;
}

std::vector<int> TopologyView::ring_order(int rotation) const {
  std::vector<int> order;
  for (const std::vector<int>& server : members_by_server()) {
    const std::size_t first = static_cast<std::size_t>(rotation) % server.size();
    order.insert(order.end(), server.begin() + static_cast<std::ptrdiff_t>(first), server.end());
    order.insert(order.end(), server.begin(), server.begin() + static_cast<std::ptrdiff_t>(first));
  }
  return order;
}

void check_lowerable(const CollectiveAlgorithm& algorithm, const CollectiveRequest& request,
                     const TopologyView& topology) {
  validate(request);
  const std::string source = fmt::format("collective algorithm '{}'", algorithm.name());
  if (topology.size() != static_cast<int>(request.ranks.size())) {
    throw InputError(
        Diagnostic{.source = source,
                   .message = fmt::format("the topology view has {} members but the group has {}",
                                          topology.size(), request.ranks.size())});
  }
  if (!algorithm.supports(request.kind)) {
    std::vector<std::string> kinds;
    for (CollectiveKind k : all_collective_kinds()) {
      if (algorithm.supports(k)) kinds.emplace_back(to_string(k));
    }
    throw InputError(
        Diagnostic{.source = source,
                   .message = fmt::format("does not support {}; it supports: {}",
                                          to_string(request.kind), fmt::join(kinds, ", "))});
  }
}

}  // namespace zx::models::collectives
