// File: models/execution/executor.h
//
// Runs an OpGraph on the engine. Compute and delay ops occupy their stream
// for their duration; collectives, point-to-point transfers and host copies
// are handed to a CommunicationBackend (lowering to a collective plan on the
// network model, or anything else a test supplies) once every participant
// is ready.
// The semantics are those stated in op_graph.h.
//
// Communication takes SMs from compute (SmContention). A running
// communication kernel (an op of a collective or a point-to-point transfer,
// from when it is ready, waiting for its peers included, to its end) holds
// `communication_sms` of the GPU's SMs, which compute kernels cannot use:
// NCCL runs one thread block per channel on an SM of its own. While k of
// them run on a rank, every compute op running there progresses at
// max(1, sm_count - k x communication_sms) / sm_count of its speed alone (a
// kernel's work is spread over the SMs it gets; the HBM bandwidth that
// communication uses is not modelled). A compute op's duration is its work
// at full speed; its end moves when k changes on its rank, to now + the
// remaining work / the new speed, rounded up to the picosecond. Delay and
// host copy ops (host gaps, DMA) take no SMs and are not slowed. Off (every compute
// op takes exactly its duration) when either count is 0 or the graph's
// durations were measured alongside communication
// (OpGraph::compute_durations_measured).
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
  /// Runs host copy op `op` of the graph (OpKind::kHostCopy, ready now).
  virtual void start_host_copy(const OpGraph& graph, std::uint32_t op, sim::EventCallback on_done) = 0;
};

/// SMs that communication kernels take from compute (see the header comment).
struct SmContention {
  int sm_count = 0;           ///< the GPU's SMs; 0: no contention
  int communication_sms = 0;  ///< SMs each running communication kernel holds; 0: no contention
  bool enabled() const { return sm_count > 0 && communication_sms > 0; }
  /// Speed of compute while `kernels` communication kernels run: in (0, 1].
  double compute_speed(int kernels) const;
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
  /// Compute time added by communication holding SMs: the sum over the
  /// rank's compute ops of (end - start) - duration (SmContention).
  sim::Duration compute_slowed_by_communication;
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
  Executor(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
           SmContention contention = {});

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
  /// A communication op on `rank` started (+1) or ended (-1) holding SMs.
  void communication_changed(int rank, int delta);

  // A compute op in progress while contention is on: its work left (in
  // picoseconds at full speed) as of `since`, its current speed and its end event.
  struct RunningCompute {
    std::uint32_t op;
    double work_left_ps;
    sim::TimePoint since;
    double speed;
    sim::EventId end_event;
  };
  void schedule_compute_end(RunningCompute& c);

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
  SmContention contention_;
  bool contended_ = false;                                  // contention on for this graph
  std::vector<int> communication_running_;                  // per rank
  std::vector<std::vector<RunningCompute>> running_compute_;  // per rank
};

/// Builds an executor, runs the simulator to completion and returns the result.
ExecutionResult execute(sim::Simulator& simulator, const OpGraph& graph, CommunicationBackend& backend,
                        SmContention contention = {});

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
                        const std::function<void(const ExecutionProgress&)>& progress, sim::Duration slice,
                        SmContention contention = {});

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_EXECUTOR_H_
