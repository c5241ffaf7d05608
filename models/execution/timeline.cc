#include "models/execution/timeline.h"

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zx::models {
namespace {

// Microseconds as a decimal with picosecond precision, exactly.
std::string micros(std::int64_t ps) { return fmt::format("{}.{:06}", ps / 1'000'000, ps % 1'000'000); }

}  // namespace

void write_chrome_trace(std::ostream& out, const OpGraph& graph, const ExecutionResult& result, int max_ranks,
                        const std::vector<CounterSeries>& counters) {
  const int ranks = max_ranks > 0 ? std::min(max_ranks, graph.num_ranks) : graph.num_ranks;
  out << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  bool first = true;
  const auto emit = [&](const std::string& event) {
    out << (first ? "  " : ",\n  ") << event;
    first = false;
  };
  for (int r = 0; r < ranks; ++r) {
    emit(fmt::format(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "GPU {}"}}}})", r, r));
    for (std::size_t s = 0; s < graph.stream_names.size(); ++s) {
      emit(fmt::format(R"({{"ph": "M", "name": "thread_name", "pid": {}, "tid": {}, "args": {{"name": {}}}}})", r, s,
                       nlohmann::json(graph.stream_names[s]).dump()));
    }
  }
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.rank >= ranks) continue;
    const OpTiming& t = result.ops[i];
    const std::string name = op.name.empty() ? std::string(to_string(op.kind)) : op.name;
    emit(fmt::format(R"({{"ph": "X", "name": {}, "cat": {}, "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {{"op": {}, "start_ps": {}}}}})",
                     nlohmann::json(name).dump(), nlohmann::json(op.category.empty() ? "op" : op.category).dump(),
                     op.rank, op.stream, micros(t.ready.count_ps()), micros((t.end - t.ready).count_ps()), i,
                     t.start.count_ps()));
  }
  // The critical path as a chain of flow arrows.
  for (std::size_t k = 0; k + 1 < result.critical_path.size(); ++k) {
    const std::uint32_t a = result.critical_path[k];
    const std::uint32_t b = result.critical_path[k + 1];
    const Op& from = graph.ops[a];
    const Op& to = graph.ops[b];
    if (from.rank >= ranks || to.rank >= ranks) continue;
    emit(fmt::format(R"({{"ph": "s", "id": {}, "name": "critical path", "cat": "critical", "pid": {}, "tid": {}, "ts": {}}})",
                     k, from.rank, from.stream, micros(result.ops[a].end.count_ps())));
    emit(fmt::format(R"({{"ph": "f", "bp": "e", "id": {}, "name": "critical path", "cat": "critical", "pid": {}, "tid": {}, "ts": {}}})",
                     k, to.rank, to.stream, micros(result.ops[b].start.count_ps())));
  }
  // Counter tracks (link utilisation) in their own process after the GPUs.
  if (!counters.empty()) {
    const int pid = graph.num_ranks;
    emit(fmt::format(R"({{"ph": "M", "name": "process_name", "pid": {}, "args": {{"name": "network links"}}}})", pid));
    for (const CounterSeries& c : counters) {
      for (const auto& [ps, value] : c.samples) {
        emit(fmt::format(R"({{"ph": "C", "name": {}, "pid": {}, "ts": {}, "args": {{"utilisation": {}}}}})",
                         nlohmann::json(c.name).dump(), pid, micros(ps), value));
      }
    }
  }
  out << "\n]}\n";
}

}  // namespace zx::models
