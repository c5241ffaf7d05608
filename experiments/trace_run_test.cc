// Tests of experiments/trace_run.h: a trace's run adds up (per rank and in
// the means), --vary's combinations give a row each, the variants simulate to
// the same bits on one thread and on two, a summary survives its MPI
// encoding, and a trace the cluster cannot hold is refused with the exact
// error. `zionsim run`'s text, files and exit statuses are the CLI tests'
// (tests/cli_end_to_end_test.sh, tests/golden/run_two_ranks.json).

#include "experiments/trace_run.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "experiments/knobs.h"

namespace zx::experiments {
namespace {

// A zionsim trace of `ranks` GPUs: on each, a compute op, an all-reduce of
// all ranks overlapped with more compute, an all-to-all, then an optimizer
// step that waits for both (workloads/testdata/two_ranks.trace.json's shape);
// the collectives' ops have their kind as category, as whatif --emit-trace
// writes them.
std::string write_trace(const std::string& name, int ranks) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = (std::filesystem::path(tmp ? tmp : "/tmp") / name).string();
  std::string members;
  for (int r = 0; r < ranks; ++r) members += (r ? ", " : "") + std::to_string(r);
  std::ofstream out(path);
  out << "{\"schema_version\": 1, \"ranks\": " << ranks << ", \"streams\": [\"compute\", \"comm\"],\n"
      << "\"collectives\": [{\"id\": 0, \"kind\": \"all_reduce\", \"ranks\": [" << members
      << "], \"size_bytes\": 4194304, \"dtype\": \"fp32\"},\n"
      << "  {\"id\": 1, \"kind\": \"all_to_all\", \"ranks\": [" << members << "], \"size_bytes\": 1048576}],\n"
      << "\"ops\": [";
  for (int r = 0; r < ranks; ++r) {
    const int id = 10 * r;
    out << (r ? ",\n" : "\n")
        << "{\"id\": " << id << ", \"rank\": " << r
        << ", \"stream\": \"compute\", \"kind\": \"compute\", \"name\": \"backward.0\", \"duration_ns\": "
        << 100 + 50 * r << "},\n"
        << "{\"id\": " << id + 1 << ", \"rank\": " << r
        << ", \"stream\": \"comm\", \"kind\": \"collective\", \"collective\": 0, \"category\": \"all_reduce\", "
           "\"deps\": ["
        << id << "]},\n"
        << "{\"id\": " << id + 2 << ", \"rank\": " << r
        << ", \"stream\": \"compute\", \"kind\": \"compute\", \"name\": \"backward.1\", \"duration_ns\": 300, "
           "\"deps\": ["
        << id << "]},\n"
        << "{\"id\": " << id + 3 << ", \"rank\": " << r
        << ", \"stream\": \"comm\", \"kind\": \"collective\", \"collective\": 1, \"category\": \"all_to_all\", "
           "\"deps\": ["
        << id + 1 << "]},\n"
        << "{\"id\": " << id + 4 << ", \"rank\": " << r
        << ", \"stream\": \"compute\", \"kind\": \"compute\", \"name\": \"optimizer\", \"duration_ns\": 50, "
           "\"deps\": ["
        << id + 2 << ", " << id + 3 << "]}";
  }
  out << "\n]}\n";
  return path;
}

TraceRunRequest request_for(const std::string& trace, int nodes = 1) {
  TraceRunRequest r;
  r.trace = {trace};
  r.scenario.cluster.nodes = nodes;
  return r;
}

std::string error_of(const TraceRunRequest& request) {
  try {
    run_trace(request);
  } catch (const InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "no error";
}

TEST(TraceRun, OneRunAddsUpPerRankAndInTheMeans) {
  const std::optional<TraceRunReport> report = run_trace(request_for(write_trace("four.json", 4)));
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->variants.size(), 1u);
  ASSERT_TRUE(report->detail.has_value());
  const TraceRunSummary& s = report->variants.front().summary;
  const TraceRunDetail& d = *report->detail;
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.ops, 20u);
  ASSERT_EQ(d.ranks.size(), 4u);
  EXPECT_GT(s.iteration_ms, 0);
  // Per rank: compute and idle make the iteration; exposed and overlapped
  // make communication. The means are the ranks' means.
  double compute = 0, communication = 0, exposed = 0, overlapped = 0;
  for (const RankTimes& t : d.ranks) {
    EXPECT_NEAR(t.compute_ms + t.idle_ms, s.iteration_ms, 1e-12);
    EXPECT_NEAR(t.exposed_ms + t.overlapped_ms, t.communication_ms, 1e-12);
    EXPECT_GT(t.communication_ms, 0);
    EXPECT_LE(t.compute_ms + t.exposed_ms, s.iteration_ms + 1e-12);
    compute += t.compute_ms / 4;
    communication += t.communication_ms / 4;
    exposed += t.exposed_ms / 4;
    overlapped += t.overlapped_ms / 4;
  }
  EXPECT_NEAR(s.compute_ms, compute, 1e-12);
  EXPECT_NEAR(s.communication_ms, communication, 1e-12);
  EXPECT_NEAR(s.exposed_ms, exposed, 1e-12);
  EXPECT_NEAR(s.overlapped_ms, overlapped, 1e-12);
  EXPECT_NEAR(s.exposed_ms + s.overlapped_ms, s.communication_ms, 1e-12);
  // By category: the compute ops run one after another on one stream, so
  // their time is the union's; each collective kind is exposed at most as
  // long as all communication is, and the two kinds' exposure adds up to at
  // least the exposed time (they may be exposed at the same instant).
  ASSERT_TRUE(s.time_by_category_ms.contains("compute"));
  EXPECT_NEAR(s.time_by_category_ms.at("compute"), s.compute_ms, 1e-9);
  ASSERT_EQ(s.exposed_by_category_ms.size(), 2u);
  EXPECT_TRUE(s.exposed_by_category_ms.contains("all_to_all"));
  double exposed_by_kind = 0;
  for (const auto& [kind, ms] : s.exposed_by_category_ms) {
    EXPECT_LE(ms, s.exposed_ms + 1e-9) << kind;
    exposed_by_kind += ms;
  }
  EXPECT_GE(exposed_by_kind, s.exposed_ms - 1e-9);
  // The critical path ends with the iteration; the hottest links are named.
  ASSERT_FALSE(d.critical_path.empty());
  EXPECT_NEAR(d.critical_path.back().end.to_seconds() * 1e3, s.iteration_ms, 1e-12);
  ASSERT_FALSE(d.hottest_links.empty());
  EXPECT_EQ(d.hottest_links.front().name, s.busiest_link);
  EXPECT_FALSE(d.graph.has_value());  // no timeline asked for
}

TEST(TraceRun, VariantsGiveARowPerCombinationFirstKnobOutermost) {
  TraceRunRequest request = request_for(write_trace("vary.json", 2));
  request.vary = {parse_knob_variation("fidelity=flow,analytical", Sweeper::kRun),
                  parse_knob_variation("nic-gbit=100,200,400", Sweeper::kRun)};
  const std::optional<TraceRunReport> report = run_trace(request);
  ASSERT_TRUE(report.has_value());
  EXPECT_FALSE(report->detail.has_value());
  ASSERT_EQ(report->variants.size(), 6u);
  EXPECT_EQ(settings_label(report->variants[0].settings), "fidelity=flow nic-gbit=100");
  EXPECT_EQ(settings_label(report->variants[2].settings), "fidelity=flow nic-gbit=400");
  EXPECT_EQ(settings_label(report->variants[5].settings), "fidelity=analytical nic-gbit=400");
  EXPECT_EQ(report->variants[4].scenario.fidelity, "analytical");
  for (const TraceRunVariant& v : report->variants) {
    EXPECT_EQ(v.summary.ranks, 2);
    EXPECT_GT(v.summary.iteration_ms, 0);
    EXPECT_NEAR(v.summary.exposed_ms + v.summary.overlapped_ms, v.summary.communication_ms, 1e-12);
  }
}

TEST(TraceRun, VariantsAreTheSameBitsOnOneThreadAndOnTwo) {
  TraceRunRequest request = request_for(write_trace("threads.json", 16), 2);
  request.vary = {parse_knob_variation("nic-gbit=100,200,400", Sweeper::kRun),
                  parse_knob_variation("algo.all_to_all=direct,pairwise", Sweeper::kRun)};
  request.threads = 1;
  const std::optional<TraceRunReport> one = run_trace(request);
  request.threads = 2;
  const std::optional<TraceRunReport> two = run_trace(request);
  ASSERT_TRUE(one.has_value() && two.has_value());
  ASSERT_EQ(one->variants.size(), 6u);
  ASSERT_EQ(two->variants.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(encode_trace_summary(one->variants[i].summary).dump(),
              encode_trace_summary(two->variants[i].summary).dump())
        << i;
  }
  // A faster NIC makes another run (the ranks span two servers).
  EXPECT_NE(one->variants[0].summary.fingerprint, one->variants[4].summary.fingerprint);
  EXPECT_GT(one->variants[0].summary.iteration_ms, one->variants[4].summary.iteration_ms);
}

TEST(TraceRun, SummaryEncodingIsLossless) {
  const std::optional<TraceRunReport> report = run_trace(request_for(write_trace("codec.json", 2)));
  ASSERT_TRUE(report.has_value());
  const TraceRunSummary& s = report->variants.front().summary;
  const TraceRunSummary back = decode_trace_summary(nlohmann::json::parse(encode_trace_summary(s).dump()));
  EXPECT_EQ(encode_trace_summary(back).dump(), encode_trace_summary(s).dump());
  EXPECT_EQ(back.iteration_ms, s.iteration_ms);
  EXPECT_EQ(back.time_by_category_ms, s.time_by_category_ms);
  EXPECT_EQ(back.fingerprint, s.fingerprint);
}

TEST(TraceRun, RanksBeyondTheClusterAreRefused) {
  const std::string trace = write_trace("sixteen.json", 16);
  EXPECT_EQ(error_of(request_for(trace)),
            trace + ": /ranks: the trace has 16 ranks but the cluster has 8 GPUs (use --nodes)");
  TraceRunRequest varied = request_for(trace);
  varied.vary = {parse_knob_variation("nodes=2,1", Sweeper::kRun)};
  EXPECT_EQ(error_of(varied), trace +
                                  ": /ranks: the trace has 16 ranks but the cluster has 8 GPUs (use --nodes) (in "
                                  "the variant nodes=1)");
  EXPECT_EQ(run_trace(request_for(trace, 2))->variants.front().summary.ranks, 16);
}

TEST(TraceRun, ChecksBeforeSimulating) {
  const std::string trace = write_trace("checks.json", 2);
  TraceRunRequest timeline = request_for(trace);
  timeline.vary = {parse_knob_variation("nic-gbit=100,200", Sweeper::kRun)};
  timeline.timeline = true;
  EXPECT_EQ(error_of(timeline),
            "--timeline: writes one run; it cannot be combined with --vary (run that variant alone)");
  TraceRunRequest degraded = request_for(trace);
  degraded.scenario.cluster.degradations = {"gpu:5=0.5"};
  EXPECT_EQ(error_of(degraded), "--degrade: GPU rank 5 runs no part of the trace (2 ranks: 0..1)");
  EXPECT_EQ(error_of(request_for(trace + ".absent")).find(trace + ".absent: cannot open"), 0u);
  // A hook is asked where the run always asked for its flags: here, once the
  // inputs are checked.
  int simulations_opened = 0;
  const std::optional<TraceRunReport> report =
      run_trace(request_for(trace), {.before_simulating = [&] { ++simulations_opened; }});
  EXPECT_EQ(simulations_opened, 1);
  ASSERT_TRUE(report.has_value());
}

}  // namespace
}  // namespace zx::experiments
