// Tests of the op graph and its executor, with a stand-in communication
// backend whose collectives and transfers take fixed, known times.

#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"
#include "models/execution/executor.h"
#include "models/execution/op_graph.h"

namespace zx::models {
namespace {

namespace mc = models::collectives;

using sim::Duration;
using sim::TimePoint;

// Collectives take 1 ns per KB of bytes_per_rank; transfers 1 ns per KB.
class FixedBackend : public CommunicationBackend {
 public:
  explicit FixedBackend(sim::Simulator& s) : sim_(s) {}
  void start_collective(const OpGraph& g, std::int64_t index, sim::EventCallback done) override {
    ++collectives;
    sim_.schedule_after(Duration::ns(g.collectives[static_cast<std::size_t>(index)].bytes_per_rank.count() / 1000),
                        std::move(done));
  }
  void start_transfer(const OpGraph& g, std::int64_t index, sim::EventCallback done) override {
    ++transfers;
    sim_.schedule_after(Duration::ns(g.transfers[static_cast<std::size_t>(index)].size.count() / 1000),
                        std::move(done));
  }
  // Host copies: 1 ns per KB too.
  void start_host_copy(const OpGraph& g, std::uint32_t op, sim::EventCallback done) override {
    ++host_copies;
    sim_.schedule_after(Duration::ns(g.ops[op].bytes.count() / 1000), std::move(done));
  }
  int collectives = 0;
  int transfers = 0;
  int host_copies = 0;

 private:
  sim::Simulator& sim_;
};

Op compute(int rank, int stream, std::int64_t ns, std::vector<std::uint32_t> deps = {}) {
  Op op;
  op.kind = OpKind::kCompute;
  op.rank = rank;
  op.stream = stream;
  op.duration = Duration::ns(ns);
  op.deps = std::move(deps);
  op.category = "compute";
  return op;
}

Op collective(int rank, int stream, std::int64_t index, std::vector<std::uint32_t> deps = {}) {
  Op op;
  op.kind = OpKind::kCollective;
  op.rank = rank;
  op.stream = stream;
  op.collective = index;
  op.deps = std::move(deps);
  op.category = "all_reduce";
  return op;
}

TimePoint at_ns(std::int64_t ns) { return TimePoint::zero() + Duration::ns(ns); }

// Three ops on one stream run back to back: 10 + 20 + 30 ns, all on the
// critical path, the stream busy the whole time.
TEST(ExecutorTest, StreamOrder) {
  OpGraph g;
  g.num_ranks = 1;
  const int s = g.stream("compute");
  g.add(compute(0, s, 10));
  g.add(compute(0, s, 20));
  g.add(compute(0, s, 30));
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend);
  EXPECT_EQ(r.makespan, at_ns(60));
  EXPECT_EQ(r.ops[1].start, at_ns(10));
  EXPECT_EQ(r.critical_path, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(r.ranks[0].busy_by_stream[0], Duration::ns(60));
  EXPECT_EQ(r.ranks[0].compute, Duration::ns(60));
}

// Overlap: A (10 ns) then, on the compute stream, B (30 ns); on the comm
// stream an all-reduce of 50 ns that needs A. B runs 10-40, the all-reduce
// 10-60: 30 ns of it overlapped, 20 ns exposed.
TEST(ExecutorTest, OverlapAndExposedCommunication) {
  OpGraph g;
  g.num_ranks = 1;
  const int cs = g.stream("compute");
  const int ms = g.stream("comm");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0}, .bytes_per_rank = sim::Bytes(50'000)});
  const std::uint32_t a = g.add(compute(0, cs, 10));
  g.add(collective(0, ms, 0, {a}));
  g.add(compute(0, cs, 30));
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend);
  EXPECT_EQ(r.makespan, at_ns(60));
  EXPECT_EQ(r.ranks[0].communication, Duration::ns(50));
  EXPECT_EQ(r.ranks[0].overlapped_communication, Duration::ns(30));
  EXPECT_EQ(r.ranks[0].exposed_communication, Duration::ns(20));
  EXPECT_EQ(r.critical_path, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(r.time_by_category.at("all_reduce"), Duration::ns(50));
  EXPECT_EQ(r.exposed_by_category.at("all_reduce"), Duration::ns(20));
}

// A collective starts when its last member arrives: rank 0 is ready at
// 10 ns, rank 1 at 50 ns; the 20 ns collective ends at 70 ns for both, and
// the critical path runs through rank 1's compute.
TEST(ExecutorTest, CollectiveWaitsForTheLastMember) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("compute");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(20'000)});
  g.add(compute(0, s, 10));   // 0
  g.add(compute(1, s, 50));   // 1
  g.add(collective(0, s, 0));  // 2
  g.add(collective(1, s, 0));  // 3
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend);
  EXPECT_EQ(backend.collectives, 1);
  EXPECT_EQ(r.ops[2].ready, at_ns(10));
  EXPECT_EQ(r.ops[2].start, at_ns(50));
  EXPECT_EQ(r.ops[2].end, at_ns(70));
  EXPECT_EQ(r.ops[3].end, at_ns(70));
  EXPECT_EQ(r.makespan, at_ns(70));
  EXPECT_EQ(r.critical_path.front(), 1u);
  // Rank 0 waited 40 ns for its peer: exposed communication.
  EXPECT_EQ(r.ranks[0].exposed_communication, Duration::ns(60));
  EXPECT_EQ(r.ranks[1].exposed_communication, Duration::ns(20));
}

// An algorithm that refuses a collective's request names itself; the
// executor adds which collective of the graph it was, so the error leads back
// to the trace.
class RefusingBackend : public FixedBackend {
 public:
  using FixedBackend::FixedBackend;
  void start_collective(const OpGraph&, std::int64_t, sim::EventCallback) override {
    throw InputError(Diagnostic{.source = "collective algorithm 'x'", .message = "the schedule is for 4 ranks; the group has 2"});
  }
};

TEST(ExecutorTest, RefusedCollectiveNamesTheCall) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("comm");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(4096)});
  g.add(collective(0, s, 0));
  Op last = collective(1, s, 0);
  last.name = "dense_allreduce";
  g.add(last);
  sim::Simulator sim;
  RefusingBackend backend(sim);
  try {
    execute(sim, g, backend);
    FAIL() << "expected the refusal";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].source, "collective algorithm 'x'");
    EXPECT_EQ(e.diagnostics()[0].message,
              "the schedule is for 4 ranks; the group has 2 (the all_reduce over ranks [0, 1], 4096 bytes per rank, "
              "whose last member to arrive was op 'dense_allreduce' on rank 1)");
  }
}

// A straggler (slow_compute): rank 0 at speed 0.25 takes 4 x 10 ns for its
// compute; the collective waits for it (ends at 40 + 20 ns), rank 1's
// compute and every delay op keep their time, and ranks past the speed
// list's end are healthy.
TEST(ExecutorTest, SlowComputeStretchesOnlyTheStragglersKernels) {
  OpGraph g;
  g.num_ranks = 3;
  const int s = g.stream("compute");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(20'000)});
  g.add(compute(0, s, 10));    // 0
  g.add(compute(1, s, 30));    // 1
  g.add(collective(0, s, 0));  // 2
  g.add(collective(1, s, 0));  // 3
  Op delay = compute(0, s, 7);
  delay.kind = OpKind::kDelay;
  g.add(delay);               // 4
  g.add(compute(2, s, 15));   // 5
  const std::vector<double> speed = {0.25, 1.0};
  slow_compute(g, speed);
  EXPECT_EQ(g.ops[0].duration, Duration::ns(40));
  EXPECT_EQ(g.ops[1].duration, Duration::ns(30));
  EXPECT_EQ(g.ops[4].duration, Duration::ns(7));
  EXPECT_EQ(g.ops[5].duration, Duration::ns(15));
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend);
  EXPECT_EQ(r.ops[3].start, at_ns(40));
  EXPECT_EQ(r.ops[3].end, at_ns(60));
  EXPECT_EQ(r.makespan, at_ns(67));
  // Rounded to the nearest picosecond: 1 ns at speed 3/7 is 2333.33 ps.
  OpGraph one;
  one.num_ranks = 1;
  one.add(compute(0, one.stream("compute"), 1));
  slow_compute(one, std::vector<double>{3.0 / 7.0});
  EXPECT_EQ(one.ops[0].duration, Duration::ps(2333));
  // No speeds: nothing changes; a speed outside (0, 1] is a bug of the caller.
  slow_compute(one, {});
  EXPECT_EQ(one.ops[0].duration, Duration::ps(2333));
  EXPECT_THROW(slow_compute(one, std::vector<double>{1.5}), InvariantError);
}

// A send and a receive form one transfer that starts when both are ready.
TEST(ExecutorTest, SendRecvPairs) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("main");
  g.transfers.push_back({.src = 0, .dst = 1, .size = sim::Bytes(5'000)});
  g.add(compute(1, s, 8));
  Op send;
  send.kind = OpKind::kSend;
  send.rank = 0;
  send.stream = s;
  send.transfer = 0;
  g.add(send);
  Op recv = send;
  recv.kind = OpKind::kRecv;
  recv.rank = 1;
  g.add(recv);
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend);
  EXPECT_EQ(backend.transfers, 1);
  EXPECT_EQ(r.ops[1].start, at_ns(8));
  EXPECT_EQ(r.makespan, at_ns(13));
}

// Running in slices of simulated time, with progress reports between them,
// gives the same timings and the same engine fingerprint as one run; the
// reports come in order, about one per slice, and the last one has every op
// ended.
TEST(ExecutorTest, SlicedRunWithProgressIsTheSameRun) {
  OpGraph g;
  g.num_ranks = 2;
  const int cs = g.stream("compute");
  const int ms = g.stream("comm");
  for (int i = 0; i < 20; ++i) {
    g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(3'000 + 1'000 * i)});
  }
  std::vector<std::uint32_t> last(2);
  for (int i = 0; i < 20; ++i) {
    for (int r = 0; r < 2; ++r) {
      const std::uint32_t c = g.add(compute(r, cs, 5 + 3 * r + i, i > 0 ? std::vector<std::uint32_t>{last[r]} : std::vector<std::uint32_t>{}));
      last[r] = g.add(collective(r, ms, i, {c}));
    }
  }
  sim::Simulator whole_sim;
  FixedBackend whole_backend(whole_sim);
  const ExecutionResult whole = execute(whole_sim, g, whole_backend);
  for (const Duration slice : {Duration::ps(1), Duration::ns(7), Duration::ns(100), Duration::ms(1)}) {
    sim::Simulator sim;
    FixedBackend backend(sim);
    std::vector<ExecutionProgress> reports;
    const ExecutionResult sliced =
        execute(sim, g, backend, [&](const ExecutionProgress& p) { reports.push_back(p); }, slice);
    EXPECT_EQ(sliced.makespan, whole.makespan) << slice.count_ps();
    ASSERT_EQ(sliced.ops.size(), whole.ops.size());
    for (std::size_t i = 0; i < whole.ops.size(); ++i) {
      EXPECT_EQ(sliced.ops[i].start, whole.ops[i].start) << i;
      EXPECT_EQ(sliced.ops[i].end, whole.ops[i].end) << i;
    }
    EXPECT_EQ(sliced.critical_path, whole.critical_path);
    EXPECT_EQ(sim.fingerprint(), whole_sim.fingerprint()) << slice.count_ps();
    EXPECT_EQ(sim.executed(), whole_sim.executed());
    ASSERT_FALSE(reports.empty());
    for (std::size_t i = 1; i < reports.size(); ++i) {
      EXPECT_GE(reports[i].now - reports[i - 1].now, slice);
      EXPECT_GE(reports[i].ops_ended, reports[i - 1].ops_ended);
    }
    EXPECT_EQ(reports.back().ops_ended, g.ops.size());
    EXPECT_EQ(reports.back().ops_total, g.ops.size());
    // At most one report per slice up to the last event (slices start at
    // the next event, so idle time has none).
    const std::int64_t slices = (whole.makespan.since_start().count_ps() + slice.count_ps() - 1) / slice.count_ps();
    EXPECT_LE(static_cast<std::int64_t>(reports.size()), std::max<std::int64_t>(slices, 1)) << slice.count_ps();
    if (slice == Duration::ps(1)) {
      // Every picosecond slice holds an event: as many reports as the
      // distinct instants events run at, fewer than the picoseconds.
      EXPECT_LT(static_cast<std::int64_t>(reports.size()), slices);
    }
  }
}

// Idle simulated time costs no slices: an op of 1e15 ns under slices of
// 100 us is a report or two (the slice at its start, if anything runs
// there, and the one at its end), not ten billion (a run of such a trace
// took minutes).
TEST(ExecutorTest, SlicesSkipIdleTime) {
  OpGraph g;
  g.num_ranks = 1;
  const int cs = g.stream("compute");
  g.add(compute(0, cs, 1'000'000'000'000'000));
  sim::Simulator sim;
  FixedBackend backend(sim);
  std::vector<ExecutionProgress> reports;
  const ExecutionResult r =
      execute(sim, g, backend, [&](const ExecutionProgress& p) { reports.push_back(p); }, Duration::us(100));
  EXPECT_EQ(r.makespan, sim::TimePoint::zero() + Duration::ns(1'000'000'000'000'000));
  ASSERT_GE(reports.size(), 1u);
  EXPECT_LE(reports.size(), 2u);
  EXPECT_EQ(reports.back().now, r.makespan + Duration::us(100));
  EXPECT_EQ(reports.back().ops_ended, 1u);
}

std::string problems_of(const OpGraph& g) {
  std::string out;
  for (const OpGraphProblem& p : validate(g)) {
    out += fmt::format("[{}] {}\n", p.op, p.message);
  }
  return out;
}

// Bad graphs: every problem is listed; cycles are reported by their ops,
// including a deadlock made by two ranks issuing two collectives in
// opposite orders on one stream.
// SmContention on a GPU of 100 SMs whose communication kernels hold 20
// each. Rank 0 computes 1,000 ns of work from 0 while a single-rank
// collective of 500 ns runs from 0: at 80% speed it does 400 ns of work by
// 500 ns, then the last 600 at full speed, ending at 1,100 ns (closed form).
TEST(ExecutorTest, CommunicationKernelsTakeSmsFromCompute) {
  OpGraph g;
  g.num_ranks = 1;
  const int s = g.stream("compute");
  const int c = g.stream("comm");
  g.add(compute(0, s, 1'000));
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0}, .bytes_per_rank = sim::Bytes(500'000)});
  g.add(collective(0, c, 0));
  const SmContention contention{.sm_count = 100, .communication_sms = 20};
  EXPECT_DOUBLE_EQ(contention.compute_speed(0), 1.0);
  EXPECT_DOUBLE_EQ(contention.compute_speed(1), 0.8);
  EXPECT_DOUBLE_EQ(contention.compute_speed(2), 0.6);
  EXPECT_DOUBLE_EQ(contention.compute_speed(5), 0.01);  // at least one SM is left
  {
    sim::Simulator sim;
    FixedBackend backend(sim);
    const ExecutionResult r = execute(sim, g, backend, contention);
    EXPECT_EQ(r.ops[0].end, at_ns(1'100));
    EXPECT_EQ(r.ops[1].end, at_ns(500));  // communication keeps its time
    EXPECT_EQ(r.ranks[0].compute_slowed_by_communication, Duration::ns(100));
    EXPECT_EQ(r.ranks[0].overlapped_communication, Duration::ns(500));
  }
  // Durations measured beside the job's communication are not slowed again,
  // and no contention is the plain run, to the bit.
  for (const bool measured : {true, false}) {
    OpGraph h = g;
    h.compute_durations_measured = measured;
    sim::Simulator sim;
    FixedBackend backend(sim);
    const ExecutionResult r =
        execute(sim, h, backend, measured ? contention : SmContention{.sm_count = 100, .communication_sms = 0});
    EXPECT_EQ(r.ops[0].end, at_ns(1'000));
    EXPECT_EQ(r.ranks[0].compute_slowed_by_communication, Duration::zero());
    sim::Simulator plain_sim;
    FixedBackend plain_backend(plain_sim);
    (void)execute(plain_sim, g, plain_backend);
    EXPECT_EQ(sim.fingerprint(), plain_sim.fingerprint());
  }
}

// Two communication kernels at once leave 60% of the SMs; a kernel waiting
// for its peer holds its SMs too; another rank's communication does not
// slow this rank. Rank 0: compute of 1,200 ns from 0; a two-rank collective
// on its stream "a" is ready at 0 but rank 1 joins at 300 ns (after 300 ns
// of compute on rank 1), then runs 200 ns (to 500); a one-rank collective
// on stream "b" runs 0-100. Work on rank 0: 0-100 at 0.6 (60), 100-500 at
// 0.8 (320), then 820 left at 1.0: ends at 1,320. Rank 1's compute runs
// alone before its collective: 300 ns exactly.
TEST(ExecutorTest, ConcurrentAndWaitingCommunicationKernels) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("compute");
  const int a = g.stream("a");
  const int b = g.stream("b");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(200'000)});
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0}, .bytes_per_rank = sim::Bytes(100'000)});
  g.add(compute(0, s, 1'200));
  g.add(collective(0, a, 0));
  g.add(collective(0, b, 1));
  const std::uint32_t rank1_compute = g.add(compute(1, s, 300));
  g.add(collective(1, a, 0, {rank1_compute}));
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend, SmContention{.sm_count = 100, .communication_sms = 20});
  EXPECT_EQ(r.ops[0].end, at_ns(1'320));
  EXPECT_EQ(r.ops[1].end, at_ns(500));
  EXPECT_EQ(r.ops[2].end, at_ns(100));
  EXPECT_EQ(r.ops[rank1_compute].end, at_ns(300));
  EXPECT_EQ(r.ranks[0].compute_slowed_by_communication, Duration::ns(120));
  EXPECT_EQ(r.ranks[1].compute_slowed_by_communication, Duration::zero());
}

// A host copy is handed to the backend (1 ns per KB here: 300 ns), runs
// beside compute without taking SMs from it, and counts as neither compute
// nor communication.
TEST(ExecutorTest, HostCopiesGoToTheBackendAndTakeNoSms) {
  OpGraph g;
  g.num_ranks = 1;
  const int s = g.stream("compute");
  const int h = g.stream("h2d");
  g.add(compute(0, s, 1'000));
  Op copy;
  copy.kind = OpKind::kHostCopy;
  copy.stream = h;
  copy.bytes = sim::Bytes(300'000);
  copy.category = "input_copy";
  g.add(copy);
  g.add(compute(0, s, 100, {1}));
  sim::Simulator sim;
  FixedBackend backend(sim);
  const ExecutionResult r = execute(sim, g, backend, SmContention{.sm_count = 100, .communication_sms = 20});
  EXPECT_EQ(backend.host_copies, 1);
  EXPECT_EQ(r.ops[1].end, at_ns(300));
  EXPECT_EQ(r.ops[0].end, at_ns(1'000));
  EXPECT_EQ(r.ops[2].end, at_ns(1'100));
  EXPECT_EQ(r.ranks[0].compute, Duration::ns(1'100));
  EXPECT_EQ(r.ranks[0].communication, Duration::zero());
  EXPECT_EQ(r.ranks[0].compute_slowed_by_communication, Duration::zero());
  OpGraph bad = g;
  bad.ops[1].bytes = sim::Bytes(-1);
  EXPECT_EQ(validate(bad).size(), 1u);
}

TEST(OpGraphTest, ValidationFindsEveryProblem) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("compute");
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(1)});
  g.add(compute(0, s, 1, {7}));
  g.add(compute(3, s, -1));
  g.add(collective(0, s, 0));
  g.add(collective(0, s, 0));
  g.add(collective(1, s, 4));
  EXPECT_EQ(problems_of(g),
            "[0] depends on op 7, which does not exist\n"
            "[1] rank 3 is outside [0, 2)\n"
            "[1] negative duration -1 ns\n"
            "[4] names collective 4, which does not exist\n"
            "[-1] collective 0 (all_reduce): member rank 0 issues it 2 times, expected once\n"
            "[-1] collective 0 (all_reduce): member rank 1 issues it 0 times, expected once\n");

  OpGraph cycle;
  cycle.num_ranks = 1;
  const int a = cycle.stream("a");
  const int b = cycle.stream("b");
  cycle.add(compute(0, a, 1, {1}));
  cycle.add(compute(0, b, 1, {0}));
  EXPECT_EQ(problems_of(cycle), "[0] dependency cycle through ops 0 -> 1\n");

  OpGraph deadlock;
  deadlock.num_ranks = 2;
  const int d = deadlock.stream("comm");
  deadlock.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(1)});
  deadlock.collectives.push_back({.kind = mc::CollectiveKind::kAllToAll, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(1)});
  deadlock.add(collective(0, d, 0));
  deadlock.add(collective(0, d, 1));
  deadlock.add(collective(1, d, 1));
  deadlock.add(collective(1, d, 0));
  const std::string text = problems_of(deadlock);
  EXPECT_NE(text.find("dependency cycle through ops"), std::string::npos) << text;
  // It names the shared calls and the ranks that meet them in different orders.
  EXPECT_NE(text.find("ranks 0, 1 meet at collective "), std::string::npos) << text;
  EXPECT_NE(text.find("(all_reduce)"), std::string::npos) << text;
  EXPECT_NE(text.find("(all_to_all)"), std::string::npos) << text;
  EXPECT_NE(text.find("in different orders"), std::string::npos) << text;
  // A cycle within one rank's own dependencies gets no such explanation.
  EXPECT_EQ(problems_of(cycle).find("different orders"), std::string::npos);

  sim::Simulator sim;
  FixedBackend backend(sim);
  EXPECT_THROW(Executor(sim, deadlock, backend), InputError);
}

// validate()'s check of point-to-point transfers: each has one send, on its
// source, and one receive, on its destination, and a size of at least 0.
// Problems of a call with no op to blame name the transfer (or collective)
// in their own field; with OpGraphNames the messages use the file's ids.
TEST(OpGraphTest, ValidationOfTransfersAndNames) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("p2p");
  g.transfers.push_back({.src = 0, .dst = 1, .size = sim::Bytes(4)});
  g.transfers.push_back({.src = 1, .dst = 0, .size = sim::Bytes(-1)});
  g.collectives.push_back({.kind = mc::CollectiveKind::kBroadcast, .ranks = {0, 1}, .bytes_per_rank = sim::Bytes(-2)});
  Op send;
  send.kind = OpKind::kSend;
  send.rank = 1;  // transfer 0 is sent from rank 0
  send.stream = s;
  send.transfer = 0;
  g.add(send);
  Op recv = send;
  recv.kind = OpKind::kRecv;
  recv.rank = 0;  // and received on rank 1
  g.add(recv);
  Op lone = recv;  // transfer 1 has a receive and no send
  lone.transfer = 1;
  g.add(lone);
  g.add(collective(0, s, 0));
  g.add(collective(1, s, 0));

  const auto text = [](const std::vector<OpGraphProblem>& problems) {
    std::string out;
    for (const OpGraphProblem& p : problems) {
      out += fmt::format("[{} c{} t{}] {}\n", p.op, p.collective, p.transfer, p.message);
    }
    return out;
  };
  EXPECT_EQ(text(validate(g)),
            "[-1 c0 t-1] collective 0: negative size\n"
            "[0 c-1 t-1] sends transfer 0 from rank 1, but its source is 0\n"
            "[1 c-1 t-1] receives transfer 0 on rank 0, but its destination is 1\n"
            "[-1 c-1 t1] transfer 1 (1 -> 0): 0 sends and 1 receives, expected one of each\n"
            "[-1 c-1 t1] transfer 1: negative size\n");
  const OpGraphNames names{.op_ids = {10, 11, 12, 13, 14}, .collective_ids = {70}, .transfer_ids = {40, 41}};
  EXPECT_EQ(text(validate(g, &names)),
            "[-1 c0 t-1] collective 70: negative size\n"
            "[0 c-1 t-1] sends transfer 40 from rank 1, but its source is 0\n"
            "[1 c-1 t-1] receives transfer 40 on rank 0, but its destination is 1\n"
            "[-1 c-1 t1] transfer 41 (1 -> 0): 0 sends and 1 receives, expected one of each\n"
            "[-1 c-1 t1] transfer 41: negative size\n");

  // Cycles are looked for only in a graph with no other problem; they are
  // named by the file's ids too.
  OpGraph cycle;
  cycle.num_ranks = 1;
  const int a = cycle.stream("a");
  const int b = cycle.stream("b");
  cycle.add(compute(0, a, 1, {1}));
  cycle.add(compute(0, b, 1, {0}));
  const OpGraphNames ids{.op_ids = {5, 9}};
  EXPECT_EQ(text(validate(cycle, &ids)), "[0 c-1 t-1] dependency cycle through ops 5 -> 9\n");
}

}  // namespace
}  // namespace zx::models
