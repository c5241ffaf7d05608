#include "models/execution/executor.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"

namespace zx::models {
namespace {

const sim::EventLabel kOpEnd("exec/op_end");

using Interval = std::pair<std::int64_t, std::int64_t>;

// Merges intervals into a sorted disjoint union.
std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t length(const std::vector<Interval>& v) {
  std::int64_t total = 0;
  for (const Interval& i : v) total += i.second - i.first;
  return total;
}

// Length of the intersection of two sorted disjoint unions.
std::int64_t overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].first, b[j].first);
    const std::int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

bool is_communication(OpKind kind) {
  return kind == OpKind::kCollective || kind == OpKind::kSend || kind == OpKind::kRecv;
}

}  // namespace

double SmContention::compute_speed(int kernels) const {
  if (!enabled() || kernels <= 0) return 1.0;
  const std::int64_t held = static_cast<std::int64_t>(kernels) * communication_sms;
  const std::int64_t left = std::max<std::int64_t>(1, sm_count - held);
  return static_cast<double>(left) / static_cast<double>(sm_count);
}

Executor::Executor(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
                   SmContention contention)
    : sim_(simulator), graph_(graph), backend_(backend), contention_(contention) {
  const std::vector<OpGraphProblem> problems = validate(graph);
  if (!problems.empty()) {
    std::vector<Diagnostic> diagnostics;
    for (const OpGraphProblem& p : problems) {
      diagnostics.push_back({"op graph", p.op >= 0 ? fmt::format("op {}", p.op) : "", p.message});
    }
    throw InputError(std::move(diagnostics));
  }
  const std::size_t n = graph.ops.size();
  const std::size_t streams = graph.stream_names.size();
  streams_.resize(static_cast<std::size_t>(graph.num_ranks) * streams);
  stream_head_.assign(streams_.size(), 0);
  stream_of_op_.resize(n);
  pending_deps_.resize(n);
  dependents_.resize(n);
  collective_members_.resize(graph.collectives.size());
  collective_arrived_.assign(graph.collectives.size(), 0);
  transfer_members_.resize(graph.transfers.size());
  transfer_arrived_.assign(graph.transfers.size(), 0);
  timing_.resize(n);
  enabled_by_.assign(n, -1);
  readied_.assign(n, 0);
  contended_ = contention.enabled() && !graph.compute_durations_measured;
  if (contended_) {
    communication_running_.assign(static_cast<std::size_t>(graph.num_ranks), 0);
    running_compute_.resize(static_cast<std::size_t>(graph.num_ranks));
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const Op& op = graph.ops[i];
    const std::size_t s = static_cast<std::size_t>(op.rank) * streams + static_cast<std::size_t>(op.stream);
    stream_of_op_[i] = static_cast<std::uint32_t>(s);
    streams_[s].push_back(i);
    pending_deps_[i] = static_cast<std::uint32_t>(op.deps.size());
    for (std::uint32_t d : op.deps) dependents_[d].push_back(i);
    if (op.kind == OpKind::kCollective) collective_members_[static_cast<std::size_t>(op.collective)].push_back(i);
    if (op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
      transfer_members_[static_cast<std::size_t>(op.transfer)].push_back(i);
    }
  }
}

void Executor::start() {
  for (const std::vector<std::uint32_t>& s : streams_) {
    if (!s.empty()) maybe_ready(s.front());
  }
}

void Executor::maybe_ready(std::uint32_t i) {
  if (readied_[i] || pending_deps_[i] != 0) return;
  const std::size_t s = stream_of_op_[i];
  if (streams_[s][stream_head_[s]] != i) return;
  readied_[i] = 1;
  timing_[i].ready = sim_.now();
  const Op& op = graph_.ops[i];
  if (contended_ && is_communication(op.kind)) communication_changed(op.rank, +1);
  switch (op.kind) {
    case OpKind::kCompute:
      if (contended_) {
        begin(i);
        const auto r = static_cast<std::size_t>(op.rank);
        running_compute_[r].push_back(RunningCompute{.op = i,
                                                     .work_left_ps = static_cast<double>(op.duration.count_ps()),
                                                     .since = sim_.now(),
                                                     .speed = contention_.compute_speed(communication_running_[r]),
                                                     .end_event = {}});
        schedule_compute_end(running_compute_[r].back());
        break;
      }
      [[fallthrough]];
    case OpKind::kDelay:
      begin(i);
      sim_.schedule_after(op.duration, [this, i] { end(i); }, kOpEnd);
      break;
    case OpKind::kHostCopy:
      begin(i);
      backend_.start_host_copy(graph_, i, [this, i] { end(i); });
      break;
    case OpKind::kCollective: {
      const auto c = static_cast<std::size_t>(op.collective);
      if (++collective_arrived_[c] < static_cast<int>(collective_members_[c].size())) break;
      // The last member to arrive starts the collective for everyone.
      for (std::uint32_t m : collective_members_[c]) {
        begin(m);
        if (m != i) enabled_by_[m] = i;
      }
      try {
        backend_.start_collective(graph_, op.collective, [this, c] {
          for (std::uint32_t m : collective_members_[c]) end(m);
        });
      } catch (const InputError& e) {
        // An algorithm that refuses the request names itself, not the call:
        // say which collective of the graph it was (issue 41, class 9).
        const CollectiveCall& call = graph_.collectives[c];
        std::vector<Diagnostic> diagnostics = e.diagnostics();
        for (Diagnostic& d : diagnostics) {
          // A group of thousands is named by its ends and size.
          const std::string ranks =
              call.ranks.size() <= 16
                  ? fmt::format("[{}]", fmt::join(call.ranks, ", "))
                  : fmt::format("[{}, ..., {}] ({} ranks)",
                                fmt::join(call.ranks.begin(), call.ranks.begin() + 4, ", "),
                                fmt::join(call.ranks.end() - 2, call.ranks.end(), ", "), call.ranks.size());
          d.message += fmt::format(" (the {} over ranks {}, {} bytes per rank, whose last member to arrive was "
                                   "{} on rank {})",
                                   collectives::to_string(call.kind), ranks, call.bytes_per_rank.count(),
                                   op.name.empty() ? std::string("an op") : fmt::format("op '{}'", op.name),
                                   op.rank);
        }
        throw InputError(std::move(diagnostics));
      }
      break;
    }
    case OpKind::kSend:
    case OpKind::kRecv: {
      const auto t = static_cast<std::size_t>(op.transfer);
      if (++transfer_arrived_[t] < 2) break;
      for (std::uint32_t m : transfer_members_[t]) {
        begin(m);
        if (m != i) enabled_by_[m] = i;
      }
      backend_.start_transfer(graph_, op.transfer, [this, t] {
        for (std::uint32_t m : transfer_members_[t]) end(m);
      });
      break;
    }
  }
}

void Executor::begin(std::uint32_t i) { timing_[i].start = sim_.now(); }

void Executor::schedule_compute_end(RunningCompute& c) {
  // The remaining work at the current speed, rounded up to the picosecond;
  // at full speed exactly the op's duration.
  const double ps = std::ceil(c.work_left_ps / c.speed);
  const std::uint32_t i = c.op;
  c.end_event = sim_.schedule(
      sim_.now() + sim::Duration::ps(static_cast<std::int64_t>(ps)),
      [this, i] {
        std::vector<RunningCompute>& running = running_compute_[static_cast<std::size_t>(graph_.ops[i].rank)];
        const auto it = std::find_if(running.begin(), running.end(), [i](const RunningCompute& c) { return c.op == i; });
        ZX_CHECK(it != running.end(), "a contended compute op ends while running");
        running.erase(it);
        end(i);
      },
      kOpEnd);
}

void Executor::communication_changed(int rank, int delta) {
  const auto r = static_cast<std::size_t>(rank);
  communication_running_[r] += delta;
  ZX_CHECK(communication_running_[r] >= 0, "communication ends after it starts");
  const double speed = contention_.compute_speed(communication_running_[r]);
  for (RunningCompute& c : running_compute_[r]) {
    if (c.speed == speed) continue;
    const double elapsed_ps = static_cast<double>((sim_.now() - c.since).count_ps());
    c.work_left_ps = std::max(0.0, c.work_left_ps - elapsed_ps * c.speed);
    c.since = sim_.now();
    c.speed = speed;
    sim_.cancel(c.end_event);
    schedule_compute_end(c);
  }
}

void Executor::end(std::uint32_t i) {
  ZX_CHECK(timing_[i].end.is_max(), "an op ends once");
  if (contended_ && is_communication(graph_.ops[i].kind)) communication_changed(graph_.ops[i].rank, -1);
  timing_[i].end = sim_.now();
  ++ended_;
  const std::size_t s = stream_of_op_[i];
  ++stream_head_[s];
  if (stream_head_[s] < streams_[s].size()) {
    const std::uint32_t next = streams_[s][stream_head_[s]];
    enabled_by_[next] = i;  // overwritten below if a dependency finishes later
    maybe_ready(next);
  }
  for (std::uint32_t d : dependents_[i]) {
    --pending_deps_[d];
    if (pending_deps_[d] == 0) enabled_by_[d] = i;
    maybe_ready(d);
  }
}

ExecutionResult Executor::result() const {
  if (!finished()) {
    for (std::size_t i = 0; i < timing_.size(); ++i) {
      if (timing_[i].end.is_max()) {
        const Op& op = graph_.ops[i];
        ZX_CHECK(false, fmt::format("the run ended with op {} ('{}', rank {}) unfinished: {}", i, op.name,
                                    op.rank,
                                    readied_[i] ? "it waits for its peers or its communication"
                                                : "it never became ready"));
      }
    }
  }
  ExecutionResult r;
  r.ops = timing_;
  r.makespan = sim::TimePoint::zero();
  std::int64_t last = -1;
  for (std::size_t i = 0; i < timing_.size(); ++i) {
    if (last < 0 || timing_[i].end > timing_[static_cast<std::size_t>(last)].end) last = static_cast<std::int64_t>(i);
    r.makespan = std::max(r.makespan, timing_[i].end);
  }
  // Critical path: from the last op back through what enabled each op last.
  for (std::int64_t i = last; i >= 0; i = enabled_by_[static_cast<std::size_t>(i)]) {
    r.critical_path.push_back(static_cast<std::uint32_t>(i));
    if (r.critical_path.size() > timing_.size()) break;  // defensive: enabled_by_ is acyclic
  }
  std::reverse(r.critical_path.begin(), r.critical_path.end());

  const std::size_t streams = graph_.stream_names.size();
  r.ranks.resize(static_cast<std::size_t>(graph_.num_ranks));
  std::vector<std::vector<Interval>> compute(r.ranks.size());
  std::vector<std::vector<Interval>> comm(r.ranks.size());
  for (RankSummary& rank : r.ranks) rank.busy_by_stream.assign(streams, sim::Duration::zero());
  std::map<std::string, std::int64_t> category_ps;
  // Per rank, per communication category: its intervals.
  std::vector<std::map<std::string, std::vector<Interval>>> comm_by_category(r.ranks.size());
  for (std::size_t i = 0; i < timing_.size(); ++i) {
    const Op& op = graph_.ops[i];
    const OpTiming& t = timing_[i];
    RankSummary& rank = r.ranks[static_cast<std::size_t>(op.rank)];
    // A stream is busy from when its op is ready (a collective kernel waits
    // for its peers on the stream) until it ends.
    rank.busy_by_stream[static_cast<std::size_t>(op.stream)] += t.end - t.ready;
    const Interval interval{t.ready.count_ps(), t.end.count_ps()};
    if (is_communication(op.kind)) {
      comm[static_cast<std::size_t>(op.rank)].push_back(interval);
      comm_by_category[static_cast<std::size_t>(op.rank)][op.category.empty() ? std::string(to_string(op.kind))
                                                                              : op.category]
          .push_back(interval);
    } else if (op.kind == OpKind::kCompute) {
      compute[static_cast<std::size_t>(op.rank)].push_back(interval);
      rank.compute_slowed_by_communication += (t.end - t.start) - op.duration;
    }
    category_ps[op.category.empty() ? std::string(to_string(op.kind)) : op.category] +=
        (t.end - t.ready).count_ps();
  }
  std::map<std::string, std::int64_t> exposed_ps;
  for (std::size_t k = 0; k < r.ranks.size(); ++k) {
    const std::vector<Interval> c = merge(std::move(compute[k]));
    for (auto& [category, intervals] : comm_by_category[k]) {
      const std::vector<Interval> m = merge(std::move(intervals));
      exposed_ps[category] += length(m) - overlap(c, m);
    }
    const std::vector<Interval> m = merge(std::move(comm[k]));
    const std::int64_t both = overlap(c, m);
    r.ranks[k].compute = sim::Duration::ps(length(c));
    r.ranks[k].communication = sim::Duration::ps(length(m));
    r.ranks[k].overlapped_communication = sim::Duration::ps(both);
    r.ranks[k].exposed_communication = sim::Duration::ps(length(m) - both);
  }
  for (const auto& [category, ps] : category_ps) {
    r.time_by_category[category] = sim::Duration::ps(ps / std::max(1, graph_.num_ranks));
  }
  for (const auto& [category, ps] : exposed_ps) {
    r.exposed_by_category[category] = sim::Duration::ps(ps / std::max(1, graph_.num_ranks));
  }
  return r;
}

ExecutionResult execute(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
                        SmContention contention) {
  Executor executor(simulator, graph, backend, contention);
  executor.start();
  simulator.run();
  return executor.result();
}

ExecutionResult execute(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
                        const std::function<void(const ExecutionProgress&)>& progress, sim::Duration slice,
                        SmContention contention) {
  ZX_CHECK(slice > sim::Duration::zero(), "execute: the progress slice must be positive");
  Executor executor(simulator, graph, backend, contention);
  executor.start();
  // run(until) stops before the first event past `until` and leaves now() at
  // `until`; the next slice resumes with that event, so slicing changes
  // nothing but now() between slices (nothing is scheduled there). A slice
  // starts at the next event, not where the last ended: idle simulated time
  // (an op of 1e15 ns) costs no slices.
  while (simulator.pending() > 0) {
    const sim::TimePoint from = std::max(simulator.now(), simulator.next_event_bound());
    const sim::TimePoint until = from <= sim::TimePoint::max() - slice ? from + slice : sim::TimePoint::max();
    const sim::RunStats stats = simulator.run(until);
    if (progress) progress(ExecutionProgress{simulator.now(), executor.ops_ended(), graph.ops.size()});
    if (stats.stop_reason == sim::RunStats::StopReason::kStopRequested) break;
  }
  return executor.result();
}

}  // namespace zx::models
