// Tests of schedule files: the worked examples (a 4-rank halving-doubling
// all-reduce and a staggered 4-rank all-to-all) register, appear in the
// listing, and lower at any message size and data type into plans the
// checker proves right; requests they do not fit are input errors; and each
// file of the bad corpus (testdata/bad/) is refused with its exact errors,
// structural ones at their JSON pointers and semantic ones (a rank left
// without its data, a contribution counted twice) naming rank and chunk.

#include "models/collectives/plugins/schedule_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

std::string runfile(const std::string& name) {
  const std::string relative = "models/collectives/plugins/testdata/" + name;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return relative;
  return std::string(srcdir) + "/" + workspace + "/" + relative;
}

CollectiveRegistry builtins() {
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  return registry;
}

CollectiveRequest request(CollectiveKind kind, int n, std::int64_t bytes,
                          DataType dtype = DataType::kFp32) {
  CollectiveRequest r{.kind = kind, .bytes_per_rank = sim::Bytes(bytes), .dtype = dtype};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

// The error of registering testdata file `name`, with the runfiles prefix
// of the path cut to "testdata/" so the expected texts stay readable.
std::string register_error(const std::string& name) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile(name);
  try {
    register_schedule_file(path, registry);
  } catch (const InputError& e) {
    std::string text = e.what();
    const std::string prefix = path.substr(0, path.size() - name.size());
    for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) {
      text.replace(at, prefix.size(), "testdata/");
    }
    return text;
  }
  return "(no error)";
}

TEST(ScheduleFileTest, AllReduceExampleRegistersAndLowersCheckedPlans) {
  CollectiveRegistry registry = builtins();
  EXPECT_EQ(
      register_schedule_file(runfile("allreduce_4ranks_halving_doubling.schedule.json"), registry),
      "hd4_all_reduce");
  bool listed = false;
  for (const auto& [name, description] : registry.describe()) {
    if (name != "hd4_all_reduce") continue;
    listed = true;
    EXPECT_THAT(description, ::testing::StartsWith("4-rank all-reduce: reduce-scatter by"));
    EXPECT_THAT(description,
                ::testing::EndsWith(" [schedule allreduce_4ranks_halving_doubling.schedule.json]"));
  }
  EXPECT_TRUE(listed);
  const auto algorithm = registry.create("hd4_all_reduce");
  EXPECT_EQ(algorithm->name(), "hd4_all_reduce");
  EXPECT_TRUE(algorithm->supports(CollectiveKind::kAllReduce));
  EXPECT_FALSE(algorithm->supports(CollectiveKind::kAllGather));
  for (const DataType dtype : {DataType::kFp32, DataType::kBf16, DataType::kFp8}) {
    for (const std::int64_t bytes : {0, 1, 3, 4, 7, 64, 1000, 1 << 20, 1000003}) {
      const CollectiveRequest req = request(CollectiveKind::kAllReduce, 4, bytes, dtype);
      const CollectivePlan plan = algorithm->lower(req, TopologyView::packed(4, 2));
      const testing::PlanReport report = testing::check_plan(plan, req);
      EXPECT_TRUE(report.ok()) << bytes << " bytes, " << to_string(dtype) << "\n"
                               << report.summary();
      EXPECT_EQ(plan.steps.size(), 4u);
    }
  }
  // Halving-doubling moves 2 x (n-1)/n of the buffer per rank, like the built-in.
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 4, 4096);
  const testing::PlanReport report =
      testing::check_plan(algorithm->lower(req, TopologyView::packed(4, 8)), req);
  for (const sim::Bytes sent : report.bytes_sent) EXPECT_EQ(sent, sim::Bytes(2 * 3 * 1024));
  EXPECT_EQ(report.critical_path_steps, 4u);
}

TEST(ScheduleFileTest, AllToAllExampleScalesToAllToAllV) {
  CollectiveRegistry registry = builtins();
  register_schedule_file(runfile("alltoall_4ranks_staggered.schedule.json"), registry);
  const auto algorithm = registry.create("staggered4_all_to_all");
  for (const std::int64_t bytes : {0, 16, 100, 1 << 20}) {
    const CollectiveRequest req = request(CollectiveKind::kAllToAll, 4, bytes);
    const testing::PlanReport report =
        testing::check_plan(algorithm->lower(req, TopologyView::packed(4, 8)), req);
    EXPECT_TRUE(report.ok()) << bytes << "\n" << report.summary();
  }
  CollectiveRequest v = request(CollectiveKind::kAllToAll, 4, 0);
  v.all_to_all_v_bytes = {{1, 2, 3, 4}, {5, 0, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 1 << 20}};
  const CollectivePlan plan = algorithm->lower(v, TopologyView::packed(4, 8));
  EXPECT_TRUE(testing::check_plan(plan, v).ok()) << testing::check_plan(plan, v).summary();
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].transfers.at(0).size, sim::Bytes(3));  // 0 -> 2 first
}

TEST(ScheduleFileTest, WeightsShareTheBufferOnElementBoundaries) {
  Schedule s = parse_schedule(R"({"schema_version": 1, "name": "w", "collective": "broadcast",
      "group_size": 2,
      "chunks": [{"weight": 3, "origin": 1}, {"weight": 1, "origin": 1}],
      "steps": [{"transfers": [{"src": 1, "dst": 0, "chunks": [[0, 2]], "op": "copy"}]}]})",
                              "inline");
  validate_schedule(s);
  EXPECT_EQ(s.root, 1);
  EXPECT_EQ(s.description, "broadcast on 2 ranks from a schedule file");
  const ScheduleAlgorithm algorithm(std::make_shared<const Schedule>(s));
  CollectiveRequest req = request(CollectiveKind::kBroadcast, 2, 4 * 10 + 2);
  req.root = 1;
  const CollectivePlan plan = algorithm.lower(req, TopologyView::packed(2, 8));
  // 10 fp32 elements 3:1 -> 7 and 3 elements; the 2 trailing bytes go last.
  EXPECT_EQ(plan.chunks[0].size, sim::Bytes(28));
  EXPECT_EQ(plan.chunks[1].size, sim::Bytes(14));
  EXPECT_TRUE(testing::check_plan(plan, req).ok());
}

TEST(ScheduleFileTest, RequestsTheScheduleDoesNotFitAreInputErrors) {
  CollectiveRegistry registry = builtins();
  register_schedule_file(runfile("allreduce_4ranks_halving_doubling.schedule.json"), registry);
  const auto algorithm = registry.create("hd4_all_reduce");
  const std::string path = runfile("allreduce_4ranks_halving_doubling.schedule.json");
  try {
    algorithm->lower(request(CollectiveKind::kAllReduce, 8, 64), TopologyView::packed(8, 8));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "collective algorithm 'hd4_all_reduce' (schedule " + path +
                                         "): the schedule is for 4 ranks; the group has 8");
  }
  EXPECT_THROW(
      algorithm->lower(request(CollectiveKind::kAllGather, 4, 64), TopologyView::packed(4, 8)),
      InputError);
  EXPECT_THROW(registry.create("hd4_all_reduce", R"({"chunks": 2})"), InputError);
}

TEST(ScheduleFileTest, NameAlreadyTakenIsRefused) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("allreduce_4ranks_halving_doubling.schedule.json");
  register_schedule_file(path, registry);
  EXPECT_EQ(register_error("allreduce_4ranks_halving_doubling.schedule.json"), "(no error)");
  try {
    register_schedule_file(path, registry);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": /name: collective algorithm 'hd4_all_reduce' is already registered");
  }
}

TEST(ScheduleFileTest, MissingFile) {
  EXPECT_EQ(register_error("no_such.schedule.json"),
            "testdata/no_such.schedule.json: cannot open the file for reading: No such file or directory");
}

TEST(ScheduleFileTest, SyntaxError) {
  EXPECT_EQ(register_error("bad/syntax_error.schedule.json"),
            "testdata/bad/syntax_error.schedule.json: line 7, column 10: invalid JSON: syntax "
            "error while parsing object - unexpected string literal; expected '}'");
}

TEST(ScheduleFileTest, UnknownKeys) {
  EXPECT_EQ(register_error("bad/unknown_key.schedule.json"),
            "testdata/bad/unknown_key.schedule.json: missing required key 'steps'\n"
            "testdata/bad/unknown_key.schedule.json: unknown key 'step' (did you mean 'steps'?)");
  EXPECT_EQ(register_error("bad/unknown_transfer_key.schedule.json"),
            "testdata/bad/unknown_transfer_key.schedule.json: /steps/1/transfers/2: unknown key "
            "'bytes'; valid: chunks, dst, op, src");
}

TEST(ScheduleFileTest, DanglingAfter) {
  EXPECT_EQ(register_error("bad/dangling_after.schedule.json"),
            "testdata/bad/dangling_after.schedule.json: /steps/0/after/0: the first step cannot "
            "follow a step, got 0\n"
            "testdata/bad/dangling_after.schedule.json: /steps/1/after/1: expected an earlier step "
            "in [0, 0], got 3");
}

TEST(ScheduleFileTest, ChunkOutOfBounds) {
  EXPECT_EQ(register_error("bad/chunk_out_of_bounds.schedule.json"),
            "testdata/bad/chunk_out_of_bounds.schedule.json: /steps/0/transfers/0/chunks/0: chunk "
            "range [2, 6) is out of bounds: the schedule has 4 chunks\n"
            "testdata/bad/chunk_out_of_bounds.schedule.json: /steps/1/transfers/3/chunks/0: "
            "expected a chunk index in [0, 3], got 4");
}

TEST(ScheduleFileTest, FieldsThatDoNotFitTheKind) {
  EXPECT_EQ(register_error("bad/bad_fields.schedule.json"),
            "testdata/bad/bad_fields.schedule.json: /chunks/1/origin: all_reduce chunks start at "
            "every rank; remove 'origin'\n"
            "testdata/bad/bad_fields.schedule.json: /chunks/2/weight: expected an integer in [1, "
            "1000000], got 0\n"
            "testdata/bad/bad_fields.schedule.json: /steps/2/transfers/0/op: unknown value 'sum'; "
            "valid: copy, reduce\n"
            "testdata/bad/bad_fields.schedule.json: /steps/2/transfers/1: src and dst are both "
            "rank 0: a transfer joins two ranks");
  EXPECT_EQ(register_error("bad/alltoall_missing_pair.schedule.json"),
            "testdata/bad/alltoall_missing_pair.schedule.json: /chunks: no chunk goes from rank 1 "
            "to rank 2: every (origin, destination) pair of an all_to_all, a rank to itself "
            "included, needs at least one chunk\n"
            "testdata/bad/alltoall_missing_pair.schedule.json: /steps/0/transfers/0/op: all_to_all "
            "reduces nothing: expected 'copy'");
}

TEST(ScheduleFileTest, RankLeftWithoutItsData) {
  EXPECT_EQ(register_error("bad/rank_missing_chunk.schedule.json"),
            "testdata/bad/rank_missing_chunk.schedule.json: schedule 'hd4_all_reduce' (all_reduce "
            "on 4 ranks) fails its check: rank 3 ends with chunk 0 = {3}, expected {0,1,2,3}\n"
            "testdata/bad/rank_missing_chunk.schedule.json: schedule 'hd4_all_reduce' (all_reduce "
            "on 4 ranks) fails its check: rank 3 ends with chunk 1 = {3}, expected {0,1,2,3}");
}

TEST(ScheduleFileTest, ContributionCountedTwice) {
  EXPECT_EQ(register_error("bad/counted_twice.schedule.json"),
            "testdata/bad/counted_twice.schedule.json: /steps/1: schedule 'hd4_all_reduce' "
            "(all_reduce on 4 ranks) fails its check: step 1: rank 0 reduces chunk 0 holding {0,2} "
            "with {2}: a contribution counted twice\n"
            "testdata/bad/counted_twice.schedule.json: schedule 'hd4_all_reduce' (all_reduce on 4 "
            "ranks) fails its check: rank 0 ends with chunk 0 = {0,2}, expected {0,1,2,3}\n"
            "testdata/bad/counted_twice.schedule.json: schedule 'hd4_all_reduce' (all_reduce on 4 "
            "ranks) fails its check: rank 1 ends with chunk 0 = {0,2}, expected {0,1,2,3}\n"
            "testdata/bad/counted_twice.schedule.json: schedule 'hd4_all_reduce' (all_reduce on 4 "
            "ranks) fails its check: rank 2 ends with chunk 0 = {0,2}, expected {0,1,2,3}\n"
            "testdata/bad/counted_twice.schedule.json: schedule 'hd4_all_reduce' (all_reduce on 4 "
            "ranks) fails its check: rank 3 ends with chunk 0 = {0,2}, expected {0,1,2,3}");
}

}  // namespace
}  // namespace zx::models::collectives
