// Tests of the trace format: a hand-made trace simulates to its hand-computed
// times and critical path; a generated DLRM iteration round-trips (same text,
// same picosecond); kernels are priced by the cost models; every bad trace of
// the corpus gives its exact errors.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/testing/runfiles.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/executor.h"
#include "workloads/dlrm_iteration.h"
#include "workloads/trace.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

// Collectives take 1 ns per KiB of bytes_per_rank.
class FixedBackend : public models::CommunicationBackend {
 public:
  explicit FixedBackend(sim::Simulator& s) : sim_(s) {}
  void start_collective(const models::OpGraph& g, std::int64_t i, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::ns(g.collectives[static_cast<std::size_t>(i)].bytes_per_rank.count() / 1024),
                        std::move(done));
  }
  void start_transfer(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }
  void start_host_copy(const models::OpGraph&, std::uint32_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }

 private:
  sim::Simulator& sim_;
};

using zx::testing::runfile;

// The example: rank 1's backward.0 ends at 150 ns, so the all-reduce (4 MiB:
// 4096 ns here) runs 150-4246 ns; both optimizers wait for it and end at
// 4296 ns. The critical path: rank 1's backward.0, the all-reduce, an optimizer.
TEST(TraceTest, HandMadeTraceMatchesHandComputation) {
  const models::OpGraph g = load_trace(runfile("workloads/testdata/two_ranks.trace.json"));
  ASSERT_EQ(g.ops.size(), 8u);
  sim::Simulator sim;
  FixedBackend backend(sim);
  const models::ExecutionResult r = models::execute(sim, g, backend);
  EXPECT_EQ(r.makespan, sim::TimePoint::zero() + sim::Duration::ns(4296));
  ASSERT_GE(r.critical_path.size(), 3u);
  EXPECT_EQ(g.ops[r.critical_path[0]].name, "backward.0");
  EXPECT_EQ(g.ops[r.critical_path[0]].rank, 1);
  EXPECT_EQ(g.ops[r.critical_path.back()].name, "optimizer");
  // Rank 0 waited 50 ns for its peer and then 4096 ns for the all-reduce,
  // 300 ns of which its compute hid.
  EXPECT_EQ(r.ranks[0].overlapped_communication, sim::Duration::ns(300));
}

// A generated DLRM iteration written and read back is the same graph: the
// same text when written again, the same makespan to the picosecond.
TEST(TraceTest, GeneratedIterationRoundTrips) {
  const models::DeviceProfile device = models::builtin_device_profile("a100-40gb");
  const models::DlrmModel m = models::load_model("dlrm-dcnv2");
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, device, {});
  IterationOptions o;
  o.a2a_forward_dtype = "fp16";
  const models::OpGraph g = build_dlrm_iteration(m, plan, 8, 8, device, o);
  std::ostringstream first;
  write_trace(first, g);
  const models::OpGraph back = parse_trace(first.str(), "emitted.json");
  std::ostringstream second;
  write_trace(second, back);
  EXPECT_EQ(first.str(), second.str());
  sim::Simulator a;
  sim::Simulator b;
  FixedBackend ba(a);
  FixedBackend bb(b);
  EXPECT_EQ(models::execute(a, g, ba).makespan, models::execute(b, back, bb).makespan);
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_FALSE(back.compute_durations_measured);
  EXPECT_EQ(first.str().find("compute_durations"), std::string::npos);
  // Measured durations survive the round trip (run does not slow them again).
  models::OpGraph measured = g;
  measured.compute_durations_measured = true;
  std::ostringstream third;
  write_trace(third, measured);
  EXPECT_NE(third.str().find(R"("compute_durations": "measured")"), std::string::npos);
  EXPECT_TRUE(parse_trace(third.str(), "measured.json").compute_durations_measured);
}

// Every optional field, written as nlohmann's compact dump() of each record
// would write it (the writer streams; the bytes are the format's).
TEST(TraceTest, WriterWritesEveryFieldExactly) {
  models::OpGraph g;
  g.num_ranks = 2;
  g.stream_names = {"comp\"ute", "comm"};
  models::CollectiveCall c;
  c.kind = mc::CollectiveKind::kAllToAll;
  c.ranks = {0, 1};
  c.bytes_per_rank = sim::Bytes(64);
  c.all_to_all_v_bytes = {{0, 32}, {16, 0}};
  c.dtype = mc::DataType::kFp16;
  c.algorithm = "direct";
  c.root = 1;
  g.collectives.push_back(c);
  g.transfers.push_back({0, 1, sim::Bytes(8)});
  models::Op compute;
  compute.name = "emb\u00e9\n";
  compute.category = "compute";
  compute.duration = sim::Duration::ps(1500);
  g.ops.push_back(compute);
  models::Op coll;
  coll.kind = models::OpKind::kCollective;
  coll.rank = 1;
  coll.stream = 1;
  coll.collective = 0;
  coll.deps = {0};
  g.ops.push_back(coll);
  models::Op copy;
  copy.kind = models::OpKind::kHostCopy;
  copy.bytes = sim::Bytes(4096);
  copy.to_device = false;
  copy.deps = {0, 1};
  g.ops.push_back(copy);
  models::Op send;
  send.kind = models::OpKind::kSend;
  send.transfer = 0;
  g.ops.push_back(send);
  std::ostringstream out;
  write_trace(out, g);
  EXPECT_EQ(out.str(), R"({
  "schema_version": 1,
  "ranks": 2,
  "streams": ["comp\"ute","comm"],
  "collectives": [
    {"id":0,"kind":"all_to_all","ranks":[0,1],"size_bytes":64,"all_to_all_v_bytes":[[0,32],[16,0]],"dtype":"fp16","algorithm":"direct","root":1}
  ],
  "transfers": [
    {"id":0,"src":0,"dst":1,"size_bytes":8}
  ],
  "ops": [
    {"id":0,"rank":0,"stream":"comp\"ute","kind":"compute","name":"embé\n","category":"compute","duration_ps":1500},
    {"id":1,"rank":1,"stream":"comm","kind":"collective","collective":0,"deps":[0]},
    {"id":2,"rank":0,"stream":"comp\"ute","kind":"host_copy","size_bytes":4096,"direction":"d2h","deps":[0,1]},
    {"id":3,"rank":0,"stream":"comp\"ute","kind":"send","transfer":0}
  ]
}
)");
}

// Kernels are priced by the cost models of the given GPU.
TEST(TraceTest, KernelsArePriced) {
  const models::DeviceProfile device = models::builtin_device_profile("a100-40gb");
  const std::string text = R"({"schema_version": 1, "ranks": 1, "streams": ["s"], "ops": [
      {"id": 0, "rank": 0, "stream": "s", "kind": "compute", "kernel": {"type": "gemm", "m": 512, "n": 1024, "k": 1024, "dtype": "bf16"}},
      {"id": 1, "rank": 0, "stream": "s", "kind": "compute", "kernel": {"type": "embedding_forward", "batch": 512, "tables": 8, "pooling": 20, "dim": 128}}]})";
  const models::OpGraph g = parse_trace(text, "k.json", &device);
  EXPECT_EQ(g.ops[0].duration, models::gemm(device, 512, 1024, 1024, models::DataType::kBf16).time);
  EXPECT_GT(g.ops[1].duration, sim::Duration::zero());
  EXPECT_THROW(parse_trace(text, "k.json"), InputError);  // no profile to price with
}

std::string errors_of(const std::string& text) {
  try {
    parse_trace(text, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TraceTest, BadTracesGiveExactErrors) {
  const std::string head = R"({"schema_version": 1, "ranks": 2, "streams": ["s", "c"], )";
  // A cycle through deps.
  EXPECT_EQ(errors_of(head + R"("ops": [
      {"id": 5, "rank": 0, "stream": "s", "kind": "compute", "duration_ns": 1, "deps": [6]},
      {"id": 6, "rank": 0, "stream": "c", "kind": "compute", "duration_ns": 1, "deps": [5]}]})"),
            "t.json: /ops/0: dependency cycle through ops 5 -> 6");
  // A missing dependency and a wrong type.
  EXPECT_EQ(errors_of(head + R"("ops": [
      {"id": 5, "rank": 0, "stream": "s", "kind": "compute", "duration_ns": "ten", "deps": [9]}]})"),
            "t.json: /ops/0/duration_ns: expected a number in [0, 1000000000000000], got the string \"ten\"");
  EXPECT_EQ(errors_of(head + R"("ops": [
      {"id": 5, "rank": 0, "stream": "s", "kind": "compute", "duration_ns": 1, "deps": [9]}]})"),
            "t.json: /ops/0/deps/0: op 9 does not exist");
  // An unmatched send.
  EXPECT_EQ(errors_of(head + R"("transfers": [{"id": 0, "src": 0, "dst": 1, "size_bytes": 8}], "ops": [
      {"id": 1, "rank": 0, "stream": "c", "kind": "send", "transfer": 0}]})"),
            "t.json: /transfers/0: transfer 0 (0 -> 1): 1 sends and 0 receives, expected one of each");
  // A collective whose group is not what its members issue.
  EXPECT_EQ(errors_of(head + R"("collectives": [{"id": 3, "kind": "all_reduce", "ranks": [0, 1], "size_bytes": 8}], "ops": [
      {"id": 1, "rank": 0, "stream": "c", "kind": "collective", "collective": 3}]})"),
            "t.json: /collectives/0: collective 3 (all_reduce): member rank 1 issues it 0 times, expected once");
  // With the known algorithms, a misspelt one is found with the rest of the file.
  const std::vector<std::string> algorithms = {"direct", "hierarchical", "ring"};
  try {
    parse_trace(head + R"("collectives": [{"id": 3, "kind": "all_reduce", "ranks": [0, 1], "size_bytes": 8,
        "algorithm": "rign"}], "ops": [{"id": 1, "rank": 0, "stream": "c", "kind": "collective", "collective": 3,
        "duraton_ns": 1}]})",
                "t.json", nullptr, &algorithms);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.json: /collectives/0/algorithm: unknown value 'rign' (did you mean 'ring'?); valid: direct, "
              "hierarchical, ring\n"
              "t.json: /ops/0: unknown key 'duraton_ns' (did you mean 'duration_ns'?)");
  }
  // A compute op or delay without a duration is not 0 ns; a kernel beside
  // a duration is not the kernel silently winning.
  EXPECT_EQ(errors_of(head + R"("ops": [{"id": 1, "rank": 0, "stream": "c", "kind": "compute"}]})"),
            "t.json: /ops/0: a compute op needs its duration: duration_ns, duration_ps or kernel");
  EXPECT_EQ(errors_of(head + R"("ops": [{"id": 1, "rank": 0, "stream": "c", "kind": "delay"}]})"),
            "t.json: /ops/0: a delay op needs its duration: duration_ns, duration_ps or kernel");
  EXPECT_NE(errors_of(head + R"("ops": [{"id": 1, "rank": 0, "stream": "c", "kind": "compute", "duration_ns": 5,
      "kernel": {"kind": "gemm", "m": 8, "n": 8, "k": 8}}]})")
                .find("/ops/0: give the duration once: a kernel (priced by the GPU profile) or duration_ns / duration_ps"),
            std::string::npos);
  // Unknown keys, streams and kinds.
  EXPECT_EQ(errors_of(head + R"("ops": [
      {"id": 1, "rank": 2, "stream": "x", "kind": "kernel", "duraton_ns": 1}]})"),
            "t.json: /ops/0/rank: expected an integer in [0, 1], got 2\n"
            "t.json: /ops/0/stream: unknown value 'x'; valid: c, s\n"
            "t.json: /ops/0/kind: unknown value 'kernel'; valid: collective, compute, delay, host_copy, recv, send\n"
            "t.json: /ops/0: unknown key 'duraton_ns' (did you mean 'duration_ns'?)");
  EXPECT_EQ(errors_of(R"({"schema_version": 1, "ranks": 1, "compute_durations": "profiled", "streams": ["s"], "ops": []})"),
            "t.json: /compute_durations: unknown value 'profiled'; valid: alone, measured");
  // A host copy takes a size and a direction, not a duration.
  EXPECT_EQ(errors_of(head + R"("ops": [
      {"id": 1, "rank": 0, "stream": "s", "kind": "host_copy"},
      {"id": 2, "rank": 0, "stream": "s", "kind": "host_copy", "size_bytes": 8, "direction": "up"},
      {"id": 3, "rank": 0, "stream": "s", "kind": "host_copy", "size_bytes": 8, "duration_ns": 5}]})"),
            "t.json: /ops/0: missing required key 'size_bytes'\n"
            "t.json: /ops/1/direction: unknown value 'up'; valid: d2h, h2d\n"
            "t.json: /ops/2: a host_copy takes size_bytes, not a duration or kernel");
  const models::OpGraph copies = parse_trace(head + R"("ops": [
      {"id": 1, "rank": 1, "stream": "c", "kind": "host_copy", "size_bytes": 4096, "direction": "d2h"}]})",
                                             "t.json");
  ASSERT_EQ(copies.ops.size(), 1u);
  EXPECT_EQ(copies.ops[0].kind, models::OpKind::kHostCopy);
  EXPECT_EQ(copies.ops[0].bytes, sim::Bytes(4096));
  EXPECT_FALSE(copies.ops[0].to_device);
}

}  // namespace
}  // namespace zx::workloads
