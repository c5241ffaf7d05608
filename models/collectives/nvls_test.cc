// Tests of the NVLink SHARP algorithm. For every kind it supports, n = 1, 2,
// 3, 8, 72 and 1, 3 or 4 slices, the symbolic checker proves the plan right
// (the switch a holder that starts empty), and the bytes each GPU sends and
// receives are NVLS's closed forms:
//   all-reduce: S + S/n up to the switch, S back (a ring's 2(n-1)/n S each way)
//   reduce-scatter: S up, S/n back; all-gather: S/n up, (n-1)/n S back.
// No GPU reduces (the switch does), the slices pipeline (critical path:
// phases + slices - 1 steps), and a group the switch cannot serve is
// refused with the reason.

#include "models/collectives/nvls.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

using testing::check_plan;

CollectiveRequest request(CollectiveKind kind, int n, std::int64_t bytes) {
  CollectiveRequest r{.kind = kind, .bytes_per_rank = sim::Bytes(bytes)};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

TopologyView one_domain(int n) {
  TopologyView v = TopologyView::packed(n, n);
  v.set_switch_reduces(true);
  return v;
}

TEST(NvlsTest, BytesPerGpuMatchClosedForms) {
  for (int n : {1, 2, 3, 8, 72}) {
    for (int chunks : {1, 3, 4}) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " chunks=" << chunks);
      // Divisible into n blocks of every slice, in fp32 elements.
      const std::int64_t s = std::int64_t{4} * n * chunks * 25;
      const NvlsAlgorithm nvls({.chunks = chunks});
      struct Case {
        CollectiveKind kind;
        std::int64_t sent;
        std::int64_t received;
        std::size_t phases;
      };
      for (const Case c : {Case{CollectiveKind::kAllReduce, s + s / n, s, 4},
                           Case{CollectiveKind::kReduceScatter, s, s / n, 2},
                           Case{CollectiveKind::kAllGather, s / n, s - s / n, 2}}) {
        const CollectiveRequest req = request(c.kind, n, s);
        const CollectivePlan plan = nvls.lower(req, one_domain(n));
        const auto report = check_plan(plan, req);
        ASSERT_TRUE(report.ok()) << to_string(c.kind) << "\n" << report.summary();
        EXPECT_TRUE(report.replayed);
        EXPECT_EQ(report.total_reduce_bytes.count(), 0) << "the switch reduces, no GPU";
        if (n == 1) {
          EXPECT_EQ(report.num_steps, 0u);
          continue;
        }
        for (int r = 0; r < n; ++r) {
          EXPECT_EQ(report.bytes_sent[static_cast<std::size_t>(r)].count(), c.sent) << to_string(c.kind);
          EXPECT_EQ(report.bytes_received[static_cast<std::size_t>(r)].count(), c.received) << to_string(c.kind);
        }
        EXPECT_EQ(report.num_steps, static_cast<std::size_t>(chunks) * c.phases);
        EXPECT_EQ(report.critical_path_steps, c.phases + static_cast<std::size_t>(chunks) - 1);
        for (const Step& step : plan.steps) {
          for (const Transfer& x : step.transfers) {
            EXPECT_TRUE(x.src == kNvlinkSwitch || x.dst == kNvlinkSwitch) << "every transfer crosses the switch";
          }
        }
      }
    }
  }
}

// The checker holds the switch to its semantics: a plan that reads the
// switch's value before any GPU has sent it, or counts a contribution
// twice there, is wrong.
TEST(NvlsTest, CheckerCatchesSwitchMistakes) {
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 2, 8);
  CollectivePlan plan = NvlsAlgorithm({.chunks = 1}).lower(req, one_domain(2));
  ASSERT_TRUE(check_plan(plan, req).ok());
  CollectivePlan early = plan;
  early.steps[1].after.clear();  // the switch hands blocks out before the reduce
  EXPECT_NE(check_plan(early, req).summary().find("the NVLink switch"), std::string::npos)
      << check_plan(early, req).summary();
  CollectivePlan twice = plan;
  twice.steps[0].transfers.push_back(twice.steps[0].transfers.front());  // member 0 reduces into it again
  EXPECT_NE(check_plan(twice, req).summary().find("counted twice"), std::string::npos)
      << check_plan(twice, req).summary();
  CollectivePlan reducing_copy = plan;
  reducing_copy.steps[1].transfers.front().op = TransferOp::kReduce;
  EXPECT_NE(check_plan(reducing_copy, req).summary().find("the NVLink switch delivers copies"), std::string::npos);
}

TEST(NvlsTest, RefusesWhatTheSwitchCannotServe) {
  const CollectiveRequest req = request(CollectiveKind::kAllReduce, 16, 1024);
  try {
    NvlsAlgorithm().lower(req, TopologyView::packed(16, 16));  // an A100's switch: no SHARP
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("needs an NVLink switch that reduces"), std::string::npos) << e.what();
  }
  TopologyView two = TopologyView::packed(16, 8);
  two.set_switch_reduces(true);
  try {
    NvlsAlgorithm().lower(req, two);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("it spans 2 servers"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(NvlsAlgorithm().supports(CollectiveKind::kAllToAll));
  EXPECT_FALSE(NvlsAlgorithm().supports(CollectiveKind::kBroadcast));
}

}  // namespace
}  // namespace zx::models::collectives
