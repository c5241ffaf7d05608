// Tests of the Kineto importer: the two-rank example trace
// (testdata/kineto/rank{0,1}.json) imports into the expected graph and
// replays to its traced compute time; bad files give their exact errors.
//
// The example, per rank (durations in microseconds; rank 1's gemm is 38):
//   stream 7:  add 10, sgemm_128x64 40, sgemm_64x64 25, [cudaDeviceSynchronize], reduce 5
//   stream 20: cudaStreamWaitEvent on the event recorded after sgemm_128x64,
//              then ncclDevKernel_AllReduce (record_param_comms: allreduce,
//              Float, 1048576 elements, ranks [0, 1]).

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "base/input_file.h"
#include "base/testing/runfiles.h"
#include "models/execution/executor.h"
#include "models/execution/op_graph.h"
#include "workloads/kineto_import.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

using zx::testing::runfile;

// Every collective takes `collective` (zero: unlimited bandwidth).
class FixedBackend : public models::CommunicationBackend {
 public:
  FixedBackend(sim::Simulator& s, sim::Duration collective) : sim_(s), collective_(collective) {}
  void start_collective(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(collective_, std::move(done));
  }
  void start_transfer(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }
  void start_host_copy(const models::OpGraph&, std::uint32_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }

 private:
  sim::Simulator& sim_;
  sim::Duration collective_;
};

std::vector<std::string> example() {
  return {runfile("workloads/testdata/kineto/rank0.json"),
          runfile("workloads/testdata/kineto/rank1.json")};
}

sim::TimePoint at_us(std::int64_t us) { return sim::TimePoint::zero() + sim::Duration::us(us); }

// The ops of `rank` in graph order.
std::vector<std::uint32_t> ops_of(const models::OpGraph& g, int rank) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].rank == rank) out.push_back(i);
  }
  return out;
}

std::string temp_dir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/";
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::ofstream(temp_dir() + name) << text;
  return temp_dir() + name;
}

// Each diagnostic on a line, with the temporary directory left out of paths.
std::string error_of(const std::vector<std::string>& files) {
  try {
    import_kineto(files);
  } catch (const InputError& e) {
    std::string out;
    for (const Diagnostic& d : e.diagnostics()) out += d.to_string() + "\n";
    for (std::size_t at; (at = out.find(temp_dir())) != std::string::npos;) {
      out.erase(at, temp_dir().size());
    }
    return out;
  }
  return "no error";
}

// The op of `rank` whose name starts with `prefix`.
std::uint32_t op_named(const models::OpGraph& g, int rank, const std::string& prefix) {
  for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].rank == rank && g.ops[i].name.starts_with(prefix)) return i;
  }
  ADD_FAILURE() << "no op " << prefix << " on rank " << rank;
  return 0;
}

TEST(KinetoImportTest, ExampleGraph) {
  const models::OpGraph g = import_kineto(example());
  EXPECT_TRUE(models::validate(g).empty());
  EXPECT_EQ(g.num_ranks, 2);
  EXPECT_EQ(g.stream_names, (std::vector<std::string>{"stream7", "stream20"}));
  ASSERT_EQ(g.ops.size(), 10u);
  ASSERT_EQ(g.collectives.size(), 1u);
  const models::CollectiveCall& c = g.collectives[0];
  EXPECT_EQ(c.kind, mc::CollectiveKind::kAllReduce);
  EXPECT_EQ(c.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(c.bytes_per_rank, sim::Bytes(1048576 * 4));  // Float: 4 bytes
  EXPECT_EQ(c.dtype, mc::DataType::kFp32);

  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<std::uint32_t> ops = ops_of(g, rank);
    ASSERT_EQ(ops.size(), 5u);
    // GPU execution order: add, sgemm_128x64, then the all-reduce and
    // sgemm_64x64 (which starts first on rank 1: 158 us against 158.2 us), reduce.
    const std::uint32_t nccl_index = op_named(g, rank, "ncclDevKernel_AllReduce");
    const std::uint32_t gemm2_index = op_named(g, rank, "ampere_sgemm_64x64_nn");
    EXPECT_EQ(ops[0], op_named(g, rank, "void at::native::vectorized_elementwise_kernel"));
    EXPECT_EQ(ops[1], op_named(g, rank, "ampere_sgemm_128x64_tn"));
    EXPECT_EQ(rank == 0 ? ops[2] : ops[3], nccl_index);
    EXPECT_EQ(rank == 0 ? ops[3] : ops[2], gemm2_index);
    EXPECT_EQ(ops[4], op_named(g, rank, "void at::native::reduce_kernel"));
    const models::Op& add = g.ops[ops[0]];
    const models::Op& gemm = g.ops[ops[1]];
    const models::Op& nccl = g.ops[nccl_index];
    const models::Op& gemm2 = g.ops[gemm2_index];
    const models::Op& reduce = g.ops[ops[4]];
    EXPECT_EQ(add.kind, models::OpKind::kCompute);
    EXPECT_EQ(add.duration, sim::Duration::us(10));
    EXPECT_EQ(add.stream, 0);
    EXPECT_EQ(gemm.name, "ampere_sgemm_128x64_tn");
    EXPECT_EQ(gemm.duration, sim::Duration::us(rank == 0 ? 40 : 38));
    EXPECT_EQ(nccl.kind, models::OpKind::kCollective);
    EXPECT_EQ(nccl.collective, 0);
    EXPECT_EQ(nccl.stream, 1);
    EXPECT_EQ(nccl.category, "all_reduce");
    // Stream Wait Event: the all-reduce waits for the gemm before the cudaEventRecord.
    EXPECT_EQ(nccl.deps, (std::vector<std::uint32_t>{ops[1]}));
    EXPECT_TRUE(gemm2.deps.empty());
    EXPECT_EQ(gemm2.duration, sim::Duration::us(25));
    // cudaDeviceSynchronize: the reduce waits for the all-reduce (stream 7 by order).
    EXPECT_EQ(reduce.deps, (std::vector<std::uint32_t>{nccl_index}));
    EXPECT_EQ(reduce.duration, sim::Duration::us(5));
    EXPECT_EQ(reduce.category, "compute");
  }
}

// With zero-time collectives (unlimited bandwidth) each rank ends at its
// traced compute time on stream 7: rank 0: add 0-10, gemm 10-50, all-reduce
// at 50 (rank 1 is ready at 48), gemm2 50-75, reduce max(75, 50) = 75-80;
// rank 1: 0-10, 10-48, gemm2 48-73, reduce 73-78. Makespan 80 us = 10 + 40 +
// 25 + 5.
TEST(KinetoImportTest, ReplayWithUnlimitedBandwidthGivesTracedComputeTime) {
  const models::OpGraph g = import_kineto(example());
  sim::Simulator sim;
  FixedBackend backend(sim, sim::Duration::zero());
  const models::ExecutionResult r = models::execute(sim, g, backend);
  EXPECT_EQ(r.makespan, at_us(80));
  EXPECT_EQ(r.ops[ops_of(g, 0).back()].end, at_us(80));
  EXPECT_EQ(r.ops[ops_of(g, 1).back()].end, at_us(78));
  EXPECT_EQ(r.ops[op_named(g, 0, "ncclDevKernel")].start, at_us(50));
  EXPECT_EQ(r.ops[op_named(g, 1, "ncclDevKernel")].end, at_us(50));
  EXPECT_EQ(r.ranks[0].busy_by_stream[0], sim::Duration::us(80));
  EXPECT_EQ(r.ranks[1].busy_by_stream[0], sim::Duration::us(78));
}

// A 100 us all-reduce (50-150) holds back the reduce launched after the
// device synchronisation: 150-155 on both ranks.
TEST(KinetoImportTest, SynchronisationWaitsForTheCollective) {
  const models::OpGraph g = import_kineto(example());
  sim::Simulator sim;
  FixedBackend backend(sim, sim::Duration::us(100));
  const models::ExecutionResult r = models::execute(sim, g, backend);
  EXPECT_EQ(r.makespan, at_us(155));
  EXPECT_EQ(r.ops[op_named(g, 1, "ampere_sgemm_64x64_nn")].end,
            at_us(73));  // gemm2 overlaps the all-reduce
  EXPECT_EQ(r.ops[ops_of(g, 1).back()].start, at_us(150));
}

// Profiled without enable_cuda_sync_events there is no "Stream Wait Event";
// the cudaEventRecord / cudaStreamWaitEvent runtime calls of the launching
// thread give the same dependency.
TEST(KinetoImportTest, StreamWaitFromRuntimeCallsWithoutSyncEvents) {
  std::vector<std::string> files;
  for (int rank = 0; rank < 2; ++rank) {
    nlohmann::json trace = nlohmann::json::parse(zx::testing::read_file(example()[rank]));
    nlohmann::json& events = trace["traceEvents"];
    const std::size_t before = events.size();
    events.erase(
        std::remove_if(events.begin(), events.end(),
                       [](const nlohmann::json& e) { return e.value("cat", "") == "cuda_sync"; }),
        events.end());
    ASSERT_EQ(events.size(), before - 1);
    files.push_back(write_temp(fmt::format("nosync{}.json", rank), trace.dump()));
  }
  const models::OpGraph g = import_kineto(files);
  const models::OpGraph expected = import_kineto(example());
  ASSERT_EQ(g.ops.size(), expected.ops.size());
  for (std::size_t i = 0; i < g.ops.size(); ++i)
    EXPECT_EQ(g.ops[i].deps, expected.ops[i].deps) << i;
}

// Without record_param_comms: the kind from the kernel name (old and new
// NCCL naming), 0 bytes, fp32, every rank. A truncated rank list falls back
// to Global rank start / stride and Group size.
TEST(KinetoImportTest, CollectivesWithoutOrWithTruncatedParams) {
  const std::string old_name = R"js({"ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 5,
      "name": "ncclKernel_ReduceScatter_RING_LL_Sum_half(ncclWorkElem)", "ts": 1,
      "args": {"stream": 20, "correlation": 1}})js";
  const std::string a = write_temp("bare0.json", R"js({"traceEvents": [)js" + old_name + "]}");
  const std::string b = write_temp("bare1.json", R"js({"traceEvents": [)js" + old_name + "]}");
  const models::OpGraph g = import_kineto({a, b});
  ASSERT_EQ(g.collectives.size(), 1u);
  EXPECT_EQ(g.collectives[0].kind, mc::CollectiveKind::kReduceScatter);
  EXPECT_EQ(g.collectives[0].bytes_per_rank, sim::Bytes(0));
  EXPECT_EQ(g.collectives[0].dtype, mc::DataType::kFp32);
  EXPECT_EQ(g.collectives[0].ranks, (std::vector<int>{0, 1}));

  const std::string with_params = R"js({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 0,
     "dur": 4,
     "args": {"Collective name": "_allgather_base", "dtype": "BFloat16", "In msg nelems": 1000,
              "Out msg nelems": 2000, "Group size": 2, "Global rank start": 0,
              "Global rank stride": 1, "Process Group Ranks": "[0, ...]"}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 1,
     "dur": 1, "args": {"correlation": 1, "cbid": 211}},
    {"ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 5, "ts": 3,
     "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "args": {"stream": 20, "correlation": 1}}]})js";
  const models::OpGraph h =
      import_kineto({write_temp("ag0.json", with_params), write_temp("ag1.json", with_params)});
  ASSERT_EQ(h.collectives.size(), 1u);
  EXPECT_EQ(h.collectives[0].kind, mc::CollectiveKind::kAllGather);
  EXPECT_EQ(h.collectives[0].bytes_per_rank, sim::Bytes(4000));  // 2000 x bf16
  EXPECT_EQ(h.collectives[0].dtype, mc::DataType::kBf16);
  EXPECT_EQ(h.collectives[0].ranks, (std::vector<int>{0, 1}));
}

TEST(KinetoImportTest, RankFromDistributedInfoNotFileOrder) {
  const models::OpGraph g = import_kineto({example()[1], example()[0]});
  EXPECT_EQ(g.ops[ops_of(g, 1)[1]].duration, sim::Duration::us(38));
}

TEST(KinetoImportTest, Detector) {
  EXPECT_TRUE(looks_like_kineto(example()[0]));
  EXPECT_FALSE(looks_like_kineto(runfile("workloads/testdata/kineto/missing.json")));
}

TEST(KinetoImportTest, MissingTraceEvents) {
  EXPECT_FALSE(looks_like_kineto(write_temp("no_events.json", R"({"schemaVersion": 1})")));
  EXPECT_EQ(error_of({write_temp("no_events.json", R"({"schemaVersion": 1})")}),
            "no_events.json: missing required key 'traceEvents'\n");
}

TEST(KinetoImportTest, WrongTypes) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "soon", "dur": 1,
     "args": {"stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
     "args": {"stream": "seven"}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 0,
     "dur": 1, "args": {"dtype": "Quaternion", "Process Group Ranks": "all"}}
  ]})";
  EXPECT_EQ(
      error_of({write_temp("types.json", text)}),
      "types.json: /traceEvents/0/ts: expected a number, got the string \"soon\"\n"
      "types.json: /traceEvents/1/args: missing required key 'correlation'\n"
      "types.json: /traceEvents/1/args/stream: expected an integer >= 0, got the string \"seven\"\n"
      "types.json: /traceEvents/2/args/dtype: unknown dtype \"Quaternion\"\n"
      "types.json: /traceEvents/2/args/Process Group Ranks: expected a list of ranks like "
      "\"[0, 1]\", got \"all\"\n");
}

TEST(KinetoImportTest, InconsistentCollectiveCounts) {
  const std::string nccl = R"js({"ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 5,
      "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", )js";
  const std::string a =
      write_temp("a.json", R"js({"distributedInfo": {"rank": 0, "world_size": 2},
    "traceEvents": [)js" + nccl +
                               R"js("ts": 1, "args": {"stream": 20, "correlation": 1}},)js" + nccl +
                               R"js("ts": 9, "args": {"stream": 20, "correlation": 2}}]})js");
  const std::string b = write_temp("b.json", R"js({"distributedInfo": {"rank": 1, "world_size": 2},
    "traceEvents": [)js" + nccl + R"js("ts": 1, "args": {"stream": 20, "correlation": 1}}]})js");
  EXPECT_EQ(error_of({a, b}),
            "b.json: /traceEvents: 1 NCCL collective(s) in process group (all ranks), but a.json "
            "has 2\n");
  const std::string c = write_temp("c.json", R"js({"distributedInfo": {"rank": 1, "world_size": 2},
    "traceEvents": [)js" + nccl + R"js("ts": 1, "args": {"stream": 20, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 5, "ts": 9,
     "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "args": {"stream": 20, "correlation": 2}}]})js");
  EXPECT_EQ(error_of({a, c}),
            "c.json: /traceEvents/1: NCCL collective 1 of process group (all ranks) is all_gather, "
            "but in a.json it is all_reduce\n");
  EXPECT_EQ(error_of({a, a}), "a.json: /distributedInfo/rank: rank 0 already given by a.json\n");
}

}  // namespace
}  // namespace zx::workloads

namespace zx::workloads {
namespace {

// A two-rank all_to_allv: record_param_comms with split sizes (element
// counts per member, in group order) around the NCCL kernel.
std::string alltoallv_rank(const std::string& in_msg, const std::string& in_splits, const std::string& out_splits) {
  return R"js({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 0, "dur": 4,
     "args": {"Collective name": "all_to_allv", "dtype": "Float", "In msg nelems": )js" +
         in_msg + R"js(, "Out msg nelems": 6, "Group size": 2, "In split size": ")js" + in_splits +
         R"js(", "Out split size": ")js" + out_splits + R"js(", "Process Group Ranks": "[0, 1]"}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9, "ts": 1,
     "dur": 1, "args": {"correlation": 1, "cbid": 211}},
    {"ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 5, "ts": 3,
     "name": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
     "args": {"stream": 20, "correlation": 1}}]})js";
}

TEST(KinetoImportTest, AllToAllVFromSplitSizes) {
  const models::OpGraph g = import_kineto({write_temp("v0.json", alltoallv_rank("4", "[1, 3]", "[1, 2]")),
                                           write_temp("v1.json", alltoallv_rank("6", "[2, 4]", "[3, 4]"))});
  ASSERT_EQ(g.collectives.size(), 1u);
  EXPECT_EQ(g.collectives[0].kind, mc::CollectiveKind::kAllToAll);
  EXPECT_EQ(g.collectives[0].all_to_all_v_bytes, (std::vector<std::vector<std::int64_t>>{{4, 12}, {8, 16}}));
  // Truncated or empty splits: the even split of max(in, out) elements.
  const models::OpGraph h = import_kineto({write_temp("t0.json", alltoallv_rank("4", "[1, ...]", "[]")),
                                           write_temp("t1.json", alltoallv_rank("6", "[]", "[]"))});
  ASSERT_EQ(h.collectives.size(), 1u);
  EXPECT_TRUE(h.collectives[0].all_to_all_v_bytes.empty());
  EXPECT_EQ(h.collectives[0].bytes_per_rank, sim::Bytes(24));
}

TEST(KinetoImportTest, SplitSizesThatDisagreeAndHugeCountsAreErrors) {
  EXPECT_EQ(error_of({write_temp("w0.json", alltoallv_rank("4", "[1, 3]", "[1, 2]")),
                      write_temp("w1.json", alltoallv_rank("6", "[2, 4]", "[3, 5]"))}),
            "w1.json: /traceEvents/0: all_to_allv 0 of process group [0, 1]: Out split size gives bytes [12, 20] "
            "from the members, but their In split sizes send [12, 16]\n");
  EXPECT_EQ(error_of({write_temp("x0.json", alltoallv_rank("4611686018427387904", "[]", "[]")),
                      write_temp("x1.json", alltoallv_rank("6", "[]", "[]"))}),
            "x0.json: /traceEvents/0: max(In msg nelems, Out msg nelems) of 4611686018427387904 elements of 4 bytes "
            "is more than the limit of 1e15 bytes\n");
  EXPECT_NE(error_of({write_temp("y0.json", alltoallv_rank("4", "[1, x]", "[]")),
                      write_temp("y1.json", alltoallv_rank("6", "[]", "[]"))})
                .find("/traceEvents/0/args/In split size: expected a list of element counts"),
            std::string::npos);
}

TEST(KinetoImportTest, GzipCompressedTracesReadAsPlainOnes) {
  const auto packed = [](const std::string& from, const std::string& name) {
    std::ifstream in(from, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::ofstream(temp_dir() + name, std::ios::binary) << gzip(text.str());
    return temp_dir() + name;
  };
  const models::OpGraph plain = import_kineto(example());
  const models::OpGraph gz = import_kineto({packed(example()[0], "rank0.json.gz"), packed(example()[1], "rank1.json.gz")});
  ASSERT_EQ(plain.ops.size(), gz.ops.size());
  for (std::size_t i = 0; i < plain.ops.size(); ++i) {
    EXPECT_EQ(plain.ops[i].name, gz.ops[i].name);
    EXPECT_EQ(plain.ops[i].duration, gz.ops[i].duration);
  }
  EXPECT_EQ(plain.collectives.size(), gz.collectives.size());
}

}  // namespace
}  // namespace zx::workloads
