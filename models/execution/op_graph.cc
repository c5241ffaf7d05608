#include "models/execution/op_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"

namespace zx::models {

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kCompute: return "compute";
    case OpKind::kCollective: return "collective";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
    case OpKind::kDelay: return "delay";
    case OpKind::kHostCopy: return "host_copy";
  }
  return "unknown";
}

std::uint32_t OpGraph::add(Op op) {
  ops.push_back(std::move(op));
  return static_cast<std::uint32_t>(ops.size() - 1);
}

int OpGraph::stream(const std::string& name) {
  for (std::size_t i = 0; i < stream_names.size(); ++i) {
    if (stream_names[i] == name) return static_cast<int>(i);
  }
  stream_names.push_back(name);
  return static_cast<int>(stream_names.size() - 1);
}

namespace {

// How validate() names ops, collectives and transfers in its messages: by
// the ids of OpGraphNames where it has them, else by position.
class Naming {
 public:
  explicit Naming(const OpGraphNames* names) : names_(names) {}
  std::int64_t op(std::size_t i) const { return name_in(names_ ? &names_->op_ids : nullptr, i); }
  std::int64_t collective(std::size_t i) const { return name_in(names_ ? &names_->collective_ids : nullptr, i); }
  std::int64_t transfer(std::size_t i) const { return name_in(names_ ? &names_->transfer_ids : nullptr, i); }

 private:
  static std::int64_t name_in(const std::vector<std::int64_t>* ids, std::size_t i) {
    return ids != nullptr && i < ids->size() ? (*ids)[i] : static_cast<std::int64_t>(i);
  }
  const OpGraphNames* names_;
};

// The problems found so far: of an op, or of a collective or transfer that
// no one op is to blame for.
class Problems {
 public:
  void op(std::int64_t op, std::string message) { list_.push_back({op, std::move(message)}); }
  void about(std::int64_t collective, std::int64_t transfer, std::string message) {
    list_.push_back({-1, std::move(message), collective, transfer});
  }
  bool empty() const { return list_.empty(); }
  std::vector<OpGraphProblem> take() { return std::move(list_); }

 private:
  std::vector<OpGraphProblem> list_;
};

// Per collective / transfer: which ops issue it.
struct Issuers {
  std::vector<std::vector<std::uint32_t>> collective_ops;
  std::vector<std::vector<std::uint32_t>> transfer_ops;
};

// One op on its own: rank and stream in range, no negative duration or
// copy size, dependencies that exist, a collective or transfer that exists
// (then recorded among its issuers).
void check_op(const OpGraph& g, std::size_t i, const Naming& name, Problems& problems, Issuers& issuers) {
  const std::size_t n = g.ops.size();
  const Op& op = g.ops[i];
  const auto id = static_cast<std::int64_t>(i);
  if (op.rank < 0 || op.rank >= g.num_ranks) {
    problems.op(id, fmt::format("rank {} is outside [0, {})", op.rank, g.num_ranks));
  }
  if (op.stream < 0 || op.stream >= static_cast<int>(g.stream_names.size())) {
    problems.op(id, fmt::format("stream {} does not exist ({} streams)", op.stream, g.stream_names.size()));
  }
  if (op.duration < sim::Duration::zero()) {
    problems.op(id, fmt::format("negative duration {}", op.duration.to_string()));
  }
  for (std::uint32_t d : op.deps) {
    if (d >= n) problems.op(id, fmt::format("depends on op {}, which does not exist", name.op(d)));
    if (d == i) problems.op(id, "depends on itself");
  }
  switch (op.kind) {
    case OpKind::kCollective:
      if (op.collective < 0 || op.collective >= static_cast<std::int64_t>(g.collectives.size())) {
        problems.op(id, fmt::format("names collective {}, which does not exist", op.collective));
      } else {
        issuers.collective_ops[static_cast<std::size_t>(op.collective)].push_back(static_cast<std::uint32_t>(i));
      }
      break;
    case OpKind::kSend:
    case OpKind::kRecv:
      if (op.transfer < 0 || op.transfer >= static_cast<std::int64_t>(g.transfers.size())) {
        problems.op(id, fmt::format("names transfer {}, which does not exist", op.transfer));
      } else {
        issuers.transfer_ops[static_cast<std::size_t>(op.transfer)].push_back(static_cast<std::uint32_t>(i));
      }
      break;
    case OpKind::kHostCopy:
      if (op.bytes.count() < 0) problems.op(id, fmt::format("negative copy size {}", op.bytes.count()));
      break;
    case OpKind::kCompute:
    case OpKind::kDelay:
      break;
  }
}

// Every collective: a size of at least 0, issued exactly once by each
// member and by no one else.
void check_collectives(const OpGraph& g, const Issuers& issuers, const Naming& name, Problems& problems) {
  for (std::size_t c = 0; c < g.collectives.size(); ++c) {
    const CollectiveCall& call = g.collectives[c];
    if (call.bytes_per_rank.count() < 0) {
      problems.about(c, -1, fmt::format("collective {}: negative size", name.collective(c)));
    }
    std::map<int, int> issued;
    for (std::uint32_t i : issuers.collective_ops[c]) ++issued[g.ops[i].rank];
    for (int r : call.ranks) {
      if (issued[r] != 1) {
        problems.about(c, -1, fmt::format("collective {} ({}): member rank {} issues it {} times, expected once",
                                          name.collective(c), collectives::to_string(call.kind), r, issued[r]));
      }
    }
    for (const auto& [rank, count] : issued) {
      if (std::find(call.ranks.begin(), call.ranks.end(), rank) == call.ranks.end()) {
        problems.about(c, -1, fmt::format("collective {} ({}): rank {} issues it but is not a member",
                                          name.collective(c), collectives::to_string(call.kind), rank));
      }
    }
  }
}

// Every transfer: one send, on its source, one receive, on its destination,
// and a size of at least 0.
void check_transfers(const OpGraph& g, const Issuers& issuers, const Naming& name, Problems& problems) {
  for (std::size_t t = 0; t < g.transfers.size(); ++t) {
    const TransferCall& call = g.transfers[t];
    int sends = 0;
    int recvs = 0;
    for (std::uint32_t i : issuers.transfer_ops[t]) {
      const Op& op = g.ops[i];
      if (op.kind == OpKind::kSend) {
        ++sends;
        if (op.rank != call.src) {
          problems.op(i, fmt::format("sends transfer {} from rank {}, but its source is {}", name.transfer(t),
                                     op.rank, call.src));
        }
      } else {
        ++recvs;
        if (op.rank != call.dst) {
          problems.op(i, fmt::format("receives transfer {} on rank {}, but its destination is {}",
                                     name.transfer(t), op.rank, call.dst));
        }
      }
    }
    if (sends != 1 || recvs != 1) {
      problems.about(-1, t, fmt::format("transfer {} ({} -> {}): {} sends and {} receives, expected one of each",
                                        name.transfer(t), call.src, call.dst, sends, recvs));
    }
    if (call.size.count() < 0) problems.about(-1, t, fmt::format("transfer {}: negative size", name.transfer(t)));
  }
}

// The graph the cycle search walks. Ops of one collective or transfer start
// together, so they are one unit; edges run from deps and from the previous
// op of the stream.
struct UnitGraph {
  std::vector<std::uint32_t> unit;  // per op
  std::uint32_t units = 0;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> edges;  // per unit: (to, via op)
};

UnitGraph unit_graph(const OpGraph& g) {
  const std::size_t n = g.ops.size();
  UnitGraph u;
  u.unit.resize(n);
  std::vector<std::int64_t> collective_unit(g.collectives.size(), -1);
  std::vector<std::int64_t> transfer_unit(g.transfers.size(), -1);
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = g.ops[i];
    std::int64_t* shared = nullptr;
    if (op.kind == OpKind::kCollective) shared = &collective_unit[static_cast<std::size_t>(op.collective)];
    if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      shared = &transfer_unit[static_cast<std::size_t>(op.transfer)];
    }
    if (shared == nullptr) {
      u.unit[i] = u.units++;
    } else {
      if (*shared < 0) *shared = u.units++;
      u.unit[i] = static_cast<std::uint32_t>(*shared);
    }
  }
  u.edges.resize(u.units);
  std::map<std::pair<int, int>, std::uint32_t> last_on_stream;
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = g.ops[i];
    const auto self = static_cast<std::uint32_t>(i);
    for (std::uint32_t d : op.deps) u.edges[u.unit[d]].push_back({u.unit[i], self});
    auto [it, first] = last_on_stream.try_emplace({op.rank, op.stream}, self);
    if (!first) {
      u.edges[u.unit[it->second]].push_back({u.unit[i], self});
      it->second = self;
    }
  }
  return u;
}

// What is wrong with a cycle through the ops `cycle` (the lowest first).
std::string cycle_message(const OpGraph& g, const std::vector<std::uint32_t>& cycle, const Naming& name) {
  std::vector<std::int64_t> named;
  for (std::uint32_t i : cycle) named.push_back(name.op(i));
  // A cycle that passes through a collective or a transfer goes from
  // one rank to another there: the ranks meet at the shared calls in
  // different orders. Say so, naming them; that, not a dependency a
  // user wrote, is what makes such a cycle (a record missing from, or
  // misplaced in, one rank's profile shifts its calls).
  std::vector<std::string> shared;
  std::vector<int> ranks;
  for (std::uint32_t i : cycle) {
    const Op& op = g.ops[i];
    if (std::find(ranks.begin(), ranks.end(), op.rank) == ranks.end()) ranks.push_back(op.rank);
    std::string call;
    if (op.kind == OpKind::kCollective) {
      const auto c = static_cast<std::size_t>(op.collective);
      call = fmt::format("collective {} ({})", name.collective(c), collectives::to_string(g.collectives[c].kind));
    } else if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      const auto t = static_cast<std::size_t>(op.transfer);
      call = fmt::format("transfer {} ({} -> {})", name.transfer(t), g.transfers[t].src, g.transfers[t].dst);
    }
    if (!call.empty() && std::find(shared.begin(), shared.end(), call) == shared.end()) {
      shared.push_back(std::move(call));
    }
  }
  std::string why;
  if (!shared.empty() && ranks.size() > 1) {
    std::sort(ranks.begin(), ranks.end());
    why = fmt::format(
        "; ranks {} meet at {} in different orders: every member of a call must issue it in the same "
        "order relative to its other calls, or the calls wait for each other forever (NCCL would hang; "
        "in a profiled trace, a record missing from one rank or placed out of order does this)",
        fmt::join(ranks, ", "), fmt::join(shared, " and "));
  }
  return fmt::format("dependency cycle through ops {}{}", fmt::join(named, " -> "), why);
}

// The first cycle of the graph, by iterative DFS with colours: on a back
// edge, the stack gives the cycle. Only the first one found is reported.
void check_cycles(const OpGraph& g, const Naming& name, Problems& problems) {
  const UnitGraph u = unit_graph(g);
  std::vector<int> colour(u.units, 0);  // 0 new, 1 on stack, 2 done
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;  // (unit, next edge)
  std::vector<std::uint32_t> via;                            // op that led to stack[k]
  for (std::uint32_t start = 0; start < u.units; ++start) {
    if (colour[start] != 0) continue;
    stack.push_back({start, 0});
    via.push_back(0);
    colour[start] = 1;
    while (!stack.empty()) {
      auto& [unit, next] = stack.back();
      if (next == u.edges[unit].size()) {
        colour[unit] = 2;
        stack.pop_back();
        via.pop_back();
        continue;
      }
      const auto [v, op] = u.edges[unit][next++];
      if (colour[v] == 1) {
        // The cycle: from v's position on the stack to the top, then op.
        std::vector<std::uint32_t> cycle;
        std::size_t k = stack.size();
        while (k > 0 && stack[k - 1].first != v) --k;
        for (std::size_t j = k; j < stack.size(); ++j) cycle.push_back(via[j]);
        cycle.push_back(op);
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        problems.op(cycle.front(), cycle_message(g, cycle, name));
        return;
      }
      if (colour[v] == 0) {
        colour[v] = 1;
        stack.push_back({v, 0});
        via.push_back(op);
      }
    }
  }
}

}  // namespace

std::vector<OpGraphProblem> validate(const OpGraph& g, const OpGraphNames* names) {
  const Naming name(names);
  Problems problems;
  if (g.num_ranks < 1) problems.op(-1, fmt::format("expected at least one rank, got {}", g.num_ranks));
  Issuers issuers{.collective_ops = std::vector<std::vector<std::uint32_t>>(g.collectives.size()),
                  .transfer_ops = std::vector<std::vector<std::uint32_t>>(g.transfers.size())};
  for (std::size_t i = 0; i < g.ops.size(); ++i) check_op(g, i, name, problems, issuers);
  check_collectives(g, issuers, name, problems);
  check_transfers(g, issuers, name, problems);
  // Cycles only in a graph whose ops, calls and indices are sound.
  if (problems.empty()) check_cycles(g, name, problems);
  return problems.take();
}

void slow_compute(OpGraph& graph, std::span<const double> speed_by_rank) {
  for (const double speed : speed_by_rank) ZX_CHECK(speed > 0 && speed <= 1, fmt::format("GPU speed {} outside (0, 1]", speed));
  for (Op& op : graph.ops) {
    if (op.kind != OpKind::kCompute || op.rank < 0 || static_cast<std::size_t>(op.rank) >= speed_by_rank.size()) {
      continue;
    }
    const double speed = speed_by_rank[static_cast<std::size_t>(op.rank)];
    if (speed == 1) continue;
    const double ps = std::round(static_cast<double>(op.duration.count_ps()) / speed);
    ZX_CHECK(ps < static_cast<double>(std::numeric_limits<std::int64_t>::max() / 4),
             fmt::format("op '{}' on rank {} would take {} ps", op.name, op.rank, ps));
    op.duration = sim::Duration::ps(static_cast<std::int64_t>(ps));
  }
}

}  // namespace zx::models
