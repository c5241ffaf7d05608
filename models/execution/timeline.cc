#include "models/execution/timeline.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "base/text_out.h"

namespace zx::models {
namespace {

// Writes events as the elements of the "traceEvents" array, formatted
// straight into one bounded buffer (base/text_out.h).
class EventWriter {
 public:
  explicit EventWriter(TextOut& out) : out_(out) {}
  template <typename... Args>
  void emit(fmt::format_string<Args...> format, Args&&... args) {
    out_.put(first_ ? "  " : ",\n  ");
    out_.print(format, std::forward<Args>(args)...);
    first_ = false;
  }
  // A flow arrow from the slice enclosing (pid, tid, from_ps) to the one
  // enclosing (pid, tid, to_ps).
  void arrow(std::string_view name, std::string_view cat, int from_pid, int from_tid, std::int64_t from_ps,
             int to_pid, int to_tid, std::int64_t to_ps) {
    const std::uint64_t id = next_arrow_++;
    emit(R"({{"ph": "s", "id": {}, "name": "{}", "cat": "{}", "pid": {}, "tid": {}, "ts": {}}})", id, name, cat,
         from_pid, from_tid, Micros{from_ps});
    emit(R"({{"ph": "f", "bp": "e", "id": {}, "name": "{}", "cat": "{}", "pid": {}, "tid": {}, "ts": {}}})", id, name,
         cat, to_pid, to_tid, Micros{to_ps});
  }
  std::uint64_t next_async_id() { return next_async_++; }

 private:
  TextOut& out_;
  bool first_ = true;
  std::uint64_t next_arrow_ = 0;
  std::uint64_t next_async_ = 0;
};

}  // namespace

TimelineStats write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result,
                                 const NetworkActivity& network, const TimelineLimits& limits) {
  const int ranks = limits.max_ranks > 0 ? std::min(limits.max_ranks, graph.num_ranks) : graph.num_ranks;
  const auto shown = [&](std::int64_t op) {
    return op >= 0 && static_cast<std::size_t>(op) < graph.ops.size() && graph.ops[op].rank < ranks;
  };
  TimelineStats stats;
  TextOut text(out);
  text.put("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
  EventWriter w(text);

  // GPU processes, one thread per stream, one slice per op.
  for (int r = 0; r < ranks; ++r) {
    w.emit(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "GPU {}"}}}})", r, r);
    w.emit(R"({{"ph": "M", "name": "process_sort_index", "pid": {}, "args": {{"sort_index": {}}}}})", r,
                       r);
    for (std::size_t s = 0; s < graph.stream_names.size(); ++s) {
      w.emit(R"({{"ph": "M", "name": "thread_name", "pid": {}, "tid": {}, "args": {{"name": {}}}}})", r,
                         s, JsonString{graph.stream_names[s]});
    }
  }
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.rank >= ranks) continue;
    const OpTiming& t = result.ops[i];
    const std::string_view name = op.name.empty() ? std::string_view(to_string(op.kind)) : std::string_view(op.name);
    // A compute op that took longer than its duration ran beside
    // communication kernels holding SMs (SmContention).
    const std::int64_t slowed_ps =
        op.kind == OpKind::kCompute ? ((t.end - t.start) - op.duration).count_ps() : 0;
    const std::string slowed =
        slowed_ps > 0 ? fmt::format(R"(, "slowed_by_communication_ps": {})", slowed_ps) : std::string();
    w.emit(
        R"({{"ph": "X", "name": {}, "cat": {}, "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {{"op": {}, "start_ps": {}{}}}}})",
        JsonString{name}, JsonString{op.category.empty() ? std::string_view("op") : std::string_view(op.category)}, op.rank, op.stream,
        Micros{t.ready.count_ps()}, Micros{(t.end - t.ready).count_ps()}, i, t.start.count_ps(), slowed);
    ++stats.op_slices;
  }

  // The critical path as a chain of flow arrows.
  for (std::size_t k = 0; k + 1 < result.critical_path.size(); ++k) {
    const std::uint32_t a = result.critical_path[k];
    const std::uint32_t b = result.critical_path[k + 1];
    if (!shown(a) || !shown(b)) continue;
    w.arrow("critical path", "critical", graph.ops[a].rank, graph.ops[a].stream, result.ops[a].end.count_ps(),
            graph.ops[b].rank, graph.ops[b].stream, result.ops[b].start.count_ps());
    ++stats.critical_arrows;
  }

  // Dependencies that cross streams or ranks.
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.rank >= ranks) continue;
    for (std::uint32_t d : op.deps) {
      const Op& dep = graph.ops[d];
      if (dep.rank >= ranks || (dep.rank == op.rank && dep.stream == op.stream)) continue;
      if (stats.dependency_arrows >= limits.max_dependency_arrows) {
        ++stats.dependency_arrows_left_out;
        continue;
      }
      w.arrow("dependency", "dependency", dep.rank, dep.stream, result.ops[d].end.count_ps(), op.rank, op.stream,
              result.ops[i].ready.count_ps());
      ++stats.dependency_arrows;
    }
  }

  // Counter tracks (link utilisation) in their own process after the GPUs.
  const int counter_pid = graph.num_ranks;
  if (!network.counters.empty()) {
    w.emit(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "network links"}}}})",
                       counter_pid);
    for (const CounterSeries& c : network.counters) {
      for (const auto& [ps, value] : c.samples) {
        w.emit(R"({{"ph": "C", "name": {}, "pid": {}, "ts": {}, "args": {{"utilisation": {}}}}})",
                           JsonString{c.name}, counter_pid, Micros{ps}, value);
      }
    }
  }

  // NIC processes with one async slice per transfer crossing them, and an
  // arrow per transfer from the op that sent it to the op that received it.
  const int nic_pid0 = graph.num_ranks + 1;
  for (std::size_t k = 0; k < network.nic_names.size(); ++k) {
    const int pid = nic_pid0 + static_cast<int>(k);
    w.emit(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": {}}}}})", pid,
                       JsonString{"NIC " + network.nic_names[k]});
    w.emit(R"({{"ph": "M", "name": "process_sort_index", "pid": {}, "args": {{"sort_index": {}}}}})",
                       pid, pid);
  }
  std::size_t transfers_shown = 0;
  for (const TransferSlice& t : network.transfers) {
    if (t.src_rank >= ranks && t.dst_rank >= ranks) continue;
    if (transfers_shown >= limits.max_transfers) {
      ++stats.transfers_left_out;
      continue;
    }
    ++transfers_shown;
    const auto nic_slice = [&](int nic, std::string_view cat) {
      const int pid = nic_pid0 + nic;
      const std::uint64_t id = w.next_async_id();
      const JsonString name{t.name};
      w.emit(
          R"({{"ph": "b", "cat": "{}", "id": {}, "name": {}, "pid": {}, "tid": 0, "ts": {}, "args": {{"bytes": {}, "src_rank": {}, "dst_rank": {}, "start_ps": {}, "finish_ps": {}}}}})",
          cat, id, name, pid, Micros{t.start_ps}, t.bytes, t.src_rank, t.dst_rank, t.start_ps, t.finish_ps);
      w.emit(R"({{"ph": "e", "cat": "{}", "id": {}, "name": {}, "pid": {}, "tid": 0, "ts": {}}})", cat,
                         id, name, pid, Micros{t.finish_ps});
      ++stats.transfer_slices;
    };
    for (int nic : t.tx_nics) nic_slice(nic, "tx");
    for (int nic : t.rx_nics) nic_slice(nic, "rx");
    if (shown(t.from_op) && shown(t.to_op)) {
      const Op& from = graph.ops[t.from_op];
      const Op& to = graph.ops[t.to_op];
      w.arrow("transfer", "transfer", from.rank, from.stream, t.start_ps, to.rank, to.stream, t.finish_ps);
      ++stats.transfer_arrows;
    }
  }
  text.put("\n],\n");
  text.print(
      R"("otherData": {{"zionsim": {{"transfers_left_out": {}, "dependency_arrows_left_out": {}, "max_transfers": {}, "max_dependency_arrows": {}}}}})",
      stats.transfers_left_out, stats.dependency_arrows_left_out, limits.max_transfers,
      limits.max_dependency_arrows);
  text.put("}\n");
  return stats;
}

void write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result, int max_ranks,
                        const std::vector<CounterSeries>& counters) {
  NetworkActivity network;
  network.counters = counters;
  TimelineLimits limits;
  limits.max_ranks = max_ranks;
  write_chrome_trace(out, graph, result, network, limits);
}

}  // namespace zx::models
