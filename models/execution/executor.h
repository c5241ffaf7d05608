// File: models/execution/executor.h
//
// Runs an OpGraph on the engine. Compute and delay ops occupy their stream
// for their duration; collectives and point-to-point transfers are handed to
// a CommunicationBackend (lowering to a collective plan on the network
// model, or anything else a test supplies) once every participant is ready.
// The semantics are those stated in op_graph.h.
//
// Afterwards it reports, per op, when it became ready (head of its stream,
// dependencies done), when it started (for a collective: when the last
// member arrived) and when it ended; per rank and stream, busy time; per
// rank, exposed and overlapped communication; the makespan; and the critical
// path: the chain of ops, each enabled last by the previous one, that ends
// with the last op to finish.

#ifndef ZIONSIM_MODELS_EXECUTION_EXECUTOR_H_
#define ZIONSIM_MODELS_EXECUTION_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/execution/op_graph.h"
#include "sim/callback.h"
#include "sim/simulator.h"
#include "sim/time.h"

namespace zx::models {

/// Carries out communication for the executor.
class CommunicationBackend {
 public:
  virtual ~CommunicationBackend() = default;
  /// Runs collective `index` of the graph, all members ready now; calls
  /// `on_done` from an engine event when every member has its result.
  virtual void start_collective(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) = 0;
  /// Runs transfer `index` (sender and receiver ready now).
  virtual void start_transfer(const OpGraph& graph, std::int64_t index, sim::EventCallback on_done) = 0;
};

struct OpTiming {
  sim::TimePoint ready = sim::TimePoint::max();
  sim::TimePoint start = sim::TimePoint::max();
  sim::TimePoint end = sim::TimePoint::max();
};

struct RankSummary {
  std::vector<sim::Duration> busy_by_stream;  ///< by stream index
  sim::Duration compute;                      ///< union of compute-op intervals
  sim::Duration communication;                ///< union of communication-op intervals
  sim::Duration exposed_communication;        ///< communication while no compute runs
  sim::Duration overlapped_communication;     ///< communication while compute runs
};

struct ExecutionResult {
  std::vector<OpTiming> ops;
  std::vector<RankSummary> ranks;
  sim::TimePoint makespan;
  /// Op indices from the first to the last op of the critical path.
  std::vector<std::uint32_t> critical_path;
  /// Time per op category (sum over ops, per rank averaged), for breakdowns.
  std::map<std::string, sim::Duration> time_by_category;
  /// Per communication category: time it runs while no compute op runs on
  /// the rank (union of its intervals minus compute), averaged over ranks.
  std::map<std::string, sim::Duration> exposed_by_category;
};

class Executor {
 public:
  /// The graph must be valid (validate() empty); throws zx::InputError
  /// listing its problems otherwise. `graph` and `backend` must outlive the run.
  Executor(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend);

  /// Schedules the first ops; then run the simulator.
  void start();
  /// True when every op has ended.
  bool finished() const { return ended_ == graph_.ops.size(); }
  /// How many ops have ended so far (of graph.ops.size()).
  std::size_t ops_ended() const { return ended_; }
  /// Timings and summaries; requires finished(). Throws zx::InvariantError
  /// naming a stuck op if the run ended with ops left (a deadlock the
  /// validator cannot see, e.g. a backend that never calls back).
  ExecutionResult result() const;

 private:
  void maybe_ready(std::uint32_t op);
  void begin(std::uint32_t op);
  void end(std::uint32_t op);

  sim::Simulator& sim_;
  const OpGraph& graph_;
  CommunicationBackend& backend_;
  std::vector<std::vector<std::uint32_t>> streams_;  // [rank * streams + stream] -> ops in order
  std::vector<std::size_t> stream_head_;
  std::vector<std::uint32_t> stream_of_op_;           // index into streams_
  std::vector<std::uint32_t> pending_deps_;
  std::vector<std::vector<std::uint32_t>> dependents_;
  std::vector<std::vector<std::uint32_t>> collective_members_;
  std::vector<int> collective_arrived_;
  std::vector<std::vector<std::uint32_t>> transfer_members_;
  std::vector<int> transfer_arrived_;
  std::vector<OpTiming> timing_;
  std::vector<std::int64_t> enabled_by_;  // op whose completion made this op ready last
  std::vector<std::uint8_t> readied_;
  std::size_t ended_ = 0;
};

/// Builds an executor, runs the simulator to completion and returns the result.
ExecutionResult execute(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend);

/// Where a long run stands, for progress reports.
struct ExecutionProgress {
  sim::TimePoint now;      ///< simulated time reached
  std::size_t ops_ended;   ///< ops that have ended
  std::size_t ops_total;
};

/// As execute(), but runs the simulation in slices of `slice` simulated time
/// and calls `progress` between them (and once at the end). The slices add no
/// events, so the result and the simulator's fingerprint are the same bits as
/// execute()'s (only now() may end later: at the end of the last slice);
/// `progress` must not touch the simulation. Requires slice > 0.
ExecutionResult execute(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
                        const std::function<void(const ExecutionProgress&)>& progress, sim::Duration slice);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_EXECUTOR_H_
