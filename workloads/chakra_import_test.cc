// Tests of the Chakra importer: the two-rank example (testdata/chakra)
// imports into a valid graph with the expected ops, collective and transfer,
// and simulates to its hand-computed makespan; bad traces give their exact
// errors, naming the file and the JSON pointer.

#include "workloads/chakra_import.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "base/error.h"
#include "base/testing/runfiles.h"
#include "models/execution/executor.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

using zx::testing::runfile;

// Communication takes no time: only the ops' dependencies and durations count.
class ZeroTimeBackend : public models::CommunicationBackend {
 public:
  explicit ZeroTimeBackend(sim::Simulator& s) : sim_(s) {}
  void start_collective(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
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

std::vector<std::string> example() {
  return {runfile("workloads/testdata/chakra/chakra_trace.0.json"),
          runfile("workloads/testdata/chakra/chakra_trace.1.json")};
}

const models::Op& op_named(const models::OpGraph& g, int rank, const std::string& name) {
  for (const models::Op& op : g.ops) {
    if (op.rank == rank && op.name == name) return op;
  }
  throw std::runtime_error("no op " + name);
}

TEST(ChakraImportTest, ExampleImportsIntoTheExpectedGraph) {
  const models::OpGraph g = import_chakra(example());
  EXPECT_TRUE(models::validate(g).empty());
  EXPECT_EQ(g.num_ranks, 2);
  ASSERT_EQ(g.ops.size(), 11u);
  const models::Op& fwd = op_named(g, 0, "fwd");
  EXPECT_EQ(fwd.kind, models::OpKind::kCompute);
  EXPECT_EQ(g.stream_names[static_cast<std::size_t>(fwd.stream)], "compute");
  EXPECT_EQ(fwd.duration, sim::Duration::us(100));
  const models::Op& log = op_named(g, 0, "log_step");
  EXPECT_EQ(g.stream_names[static_cast<std::size_t>(log.stream)], "host");
  EXPECT_EQ(log.duration, sim::Duration::us(10));
  EXPECT_EQ(op_named(g, 1, "fwd").duration, sim::Duration::us(150));  // node id 0, left out
  // One all-reduce of 1 MiB over both ranks.
  ASSERT_EQ(g.collectives.size(), 1u);
  EXPECT_EQ(g.collectives[0].kind, mc::CollectiveKind::kAllReduce);
  EXPECT_EQ(g.collectives[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.collectives[0].bytes_per_rank, sim::Bytes(1048576));
  EXPECT_EQ(op_named(g, 0, "all_reduce_grads").collective, 0);
  EXPECT_EQ(op_named(g, 1, "all_reduce_grads").collective, 0);
  EXPECT_EQ(op_named(g, 1, "all_reduce_grads").category, "all_reduce");
  // One transfer of 4096 bytes from 0 to 1.
  ASSERT_EQ(g.transfers.size(), 1u);
  EXPECT_EQ(g.transfers[0].src, 0);
  EXPECT_EQ(g.transfers[0].dst, 1);
  EXPECT_EQ(g.transfers[0].size, sim::Bytes(4096));
  EXPECT_EQ(op_named(g, 0, "send_act").kind, models::OpKind::kSend);
  EXPECT_EQ(op_named(g, 1, "recv_act").kind, models::OpKind::kRecv);
  // The optimizer on rank 0 waits for the all-reduce (data) and the send (control).
  const models::Op& opt = op_named(g, 0, "optimizer");
  ASSERT_EQ(opt.deps.size(), 2u);
  EXPECT_EQ(g.ops[opt.deps[0]].name, "all_reduce_grads");
  EXPECT_EQ(g.ops[opt.deps[1]].name, "send_act");
  // Rank 1's bwd waits for its fwd and the receive.
  const models::Op& bwd = op_named(g, 1, "bwd");
  ASSERT_EQ(bwd.deps.size(), 2u);
  EXPECT_EQ(g.ops[bwd.deps[0]].name, "fwd");
  EXPECT_EQ(g.ops[bwd.deps[1]].name, "recv_act");
}

// Rank 1: fwd 0-150 us, the receive done at 100 us (rank 0's fwd), bwd
// 150-400; rank 0's bwd ends at 300, so the all-reduce runs at 400 (zero
// time) and both optimizers run 400-450 us.
TEST(ChakraImportTest, ExampleSimulatesToTheHandComputedMakespan) {
  const models::OpGraph g = import_chakra(example());
  sim::Simulator sim;
  ZeroTimeBackend backend(sim);
  const models::ExecutionResult r = models::execute(sim, g, backend);
  EXPECT_EQ(r.makespan, sim::TimePoint::zero() + sim::Duration::us(450));
  const auto index = [&](const models::Op& op) {
    return static_cast<std::size_t>(&op - g.ops.data());
  };
  EXPECT_EQ(r.ops[index(op_named(g, 1, "recv_act"))].end,
            sim::TimePoint::zero() + sim::Duration::us(100));
  EXPECT_EQ(r.ops[index(op_named(g, 0, "log_step"))].end,
            sim::TimePoint::zero() + sim::Duration::us(110));
  EXPECT_EQ(r.ops[index(op_named(g, 0, "all_reduce_grads"))].start,
            sim::TimePoint::zero() + sim::Duration::us(400));
}

TEST(ChakraImportTest, RecognisesChakraFiles) {
  EXPECT_TRUE(looks_like_chakra(example()[0]));
  EXPECT_FALSE(looks_like_chakra(runfile("workloads/testdata/two_ranks.trace.json")));
  EXPECT_FALSE(looks_like_chakra("no/such/file.json"));
}

// Writes `text` to a file named `name` in the test's temporary directory.
std::string write(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The errors of importing `ranks` (texts, written as r0.json, r1.json, ...),
// with the temporary directory left out of file names.
std::string errors_of(const std::vector<std::string>& ranks) {
  std::vector<std::string> files;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    files.push_back(write("r" + std::to_string(r) + ".json", ranks[r]));
  try {
    import_chakra(files);
  } catch (const InputError& e) {
    std::string out;
    for (const Diagnostic& d : e.diagnostics()) {
      Diagnostic short_name = d;
      short_name.source = d.source.substr(d.source.find_last_of('/') + 1);
      out += (out.empty() ? "" : "\n") + short_name.to_string();
    }
    return out;
  }
  return "(no error)";
}

const std::string kMeta = R"({"version": "0.0.4"})";
std::string comp(int id, int us, const std::string& extra = "") {
  return "{\"id\": \"" + std::to_string(id) + "\", \"name\": \"c" + std::to_string(id) +
         "\", \"type\": \"COMP_NODE\", \"durationMicros\": \"" + std::to_string(us) + "\"" + extra +
         "}";
}
std::string coll(int id, int type, int size, const std::string& extra = "") {
  return "{\"id\": \"" + std::to_string(id) + "\", \"type\": \"COMM_COLL_NODE\", \"attr\": [" +
         "{\"name\": \"comm_type\", \"int64Val\": \"" + std::to_string(type) + "\"}, " +
         "{\"name\": \"comm_size\", \"uint64Val\": \"" + std::to_string(size) + "\"}" + extra +
         "]}";
}

TEST(ChakraImportTest, BadTracesGiveExactErrors) {
  // A dependency on a node that is not in the file.
  EXPECT_EQ(errors_of({kMeta + comp(1, 5) + comp(2, 5, R"(, "dataDeps": ["1", "9"])")}),
            "r0.json: /2/dataDeps/1: node 9 does not exist in this rank's trace");
  // A dependency cycle.
  EXPECT_EQ(errors_of({kMeta + comp(1, 5, R"(, "ctrlDeps": ["2"])") +
                       comp(2, 5, R"(, "dataDeps": ["1"])")}),
            "r0.json: dependency cycle among nodes 1, 2");
  // Wrong types, an unknown key and an unknown node type.
  EXPECT_EQ(
      errors_of({kMeta +
                 R"({"id": "x", "type": "COMP_NODE", "durationMicros": true, "durationMicro": 1})" +
                 R"({"id": 3, "type": "GPU_NODE"})"}),
      "r0.json: /1/id: expected an integer in [0, 9007199254740992], got the string \"x\"\n"
      "r0.json: /1/durationMicros: expected an integer in [0, 1099511627776], got true\n"
      "r0.json: /1: unknown key 'durationMicro' (did you mean 'durationMicros'?)\n"
      "r0.json: /2/type: unknown node type the string \"GPU_NODE\"");
  // An unknown and an unsupported comm_type.
  EXPECT_EQ(
      errors_of({kMeta + coll(1, 42, 8) + coll(2, 3, 8)}),
      "r0.json: /1: comm_type 42 is not supported; supported: 0 (ALL_REDUCE), 1 (REDUCE), 2 "
      "(ALL_GATHER), "
      "5 (BROADCAST), 6 (ALL_TO_ALL), 7 (REDUCE_SCATTER), 8 (REDUCE_SCATTER_BLOCK), 9 (BARRIER)\n"
      "r0.json: /2: comm_type 3 (GATHER) is not supported; supported: 0 (ALL_REDUCE), 1 (REDUCE), "
      "2 (ALL_GATHER), 5 (BROADCAST), 6 (ALL_TO_ALL), 7 (REDUCE_SCATTER), 8 "
      "(REDUCE_SCATTER_BLOCK), "
      "9 (BARRIER)");
  // Ranks disagreeing on a collective's size; a collective one rank lacks.
  EXPECT_EQ(errors_of({kMeta + coll(1, 0, 4096), kMeta + coll(1, 0, 8192)}),
            "r1.json: /1: collective 0 of the default process group (ALL_REDUCE): comm_size 8192 "
            "here, but 4096 on "
            "rank 0 (" +
                write("r0.json", kMeta + coll(1, 0, 4096)) + ": /1)");
  EXPECT_EQ(errors_of({kMeta + coll(1, 0, 8) + coll(2, 2, 8), kMeta + coll(1, 0, 8)}),
            "r0.json: /2: collective 1 of the default process group (ALL_GATHER) has no "
            "counterpart on rank 1, "
            "which issues 1 collectives in that group (" +
                write("r1.json", kMeta + coll(1, 0, 8)) + ")");
  // A send with no receive; a receive missing its peer.
  const std::string send =
      R"({"id": "1", "type": "COMM_SEND_NODE", "attr": [{"name": "comm_dst", "int32Val": 1},
      {"name": "comm_size", "int64Val": "64"}, {"name": "comm_tag", "int32Val": 3}]})";
  const std::string recv =
      R"({"id": "1", "type": "COMM_RECV_NODE", "attr": [{"name": "comm_size", "int64Val": "64"}]})";
  EXPECT_EQ(errors_of({kMeta + send, kMeta + comp(1, 1)}),
            "r0.json: /1: send to rank 1 (tag 3) has no matching receive: rank 1 posts 0 receives "
            "from rank 0 "
            "with that tag (" +
                write("r1.json", kMeta + comp(1, 1)) + ")");
  EXPECT_EQ(errors_of({kMeta + comp(1, 1), kMeta + recv}),
            "r1.json: /1: COMM_RECV_NODE needs attribute 'comm_src'");
  // zionsim's own element-type attribute naming no element type: reported at
  // the node when the graph is built, not when the collective runs.
  const std::string fp64 = R"(, {"name": "zionsim_dtype", "stringVal": "fp64"})";
  EXPECT_EQ(errors_of({kMeta + coll(1, 0, 8, fp64), kMeta + coll(1, 0, 8, fp64)}),
            "r0.json: /1: zionsim_dtype 'fp64' is not an element type; valid: bf16, fp16, fp32, fp8");
  // Not JSON at all.
  EXPECT_EQ(errors_of({"{\"version\": "}).substr(0, 28), "r0.json: /0: not valid JSON:");
}

}  // namespace
}  // namespace zx::workloads
