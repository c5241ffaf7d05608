// File: kernels_ref/harness_util_test.cc
//
// Tests of the harness's host code: order statistics (numpy's linear
// interpolation, worked by hand below) and the JSON lines it writes.

#include "kernels_ref/harness_util.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace kref {
namespace {

// 1..10 unsorted: median = (5 + 6) / 2 = 5.5; p10 at position 0.9 -> 1.9;
// p90 at position 8.1 -> 9.1 (numpy.percentile gives the same).
TEST(TimingStats, InterpolatedPercentiles) {
  const TimingStats s = timing_stats({10, 3, 1, 2, 9, 8, 4, 7, 6, 5});
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(s.count, 10);
  const TimingStats one = timing_stats({42});
  EXPECT_EQ(one.median, 42);
  EXPECT_EQ(one.p90, 42);
  EXPECT_THROW(timing_stats({}), std::invalid_argument);
}

TEST(Json, QuotesAndNumbers) {
  EXPECT_EQ(json_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(json_quote(std::string(1, '\x01')), "\"\\u0001\"");
  EXPECT_EQ(json_number(0.1), "0.10000000000000001");  // reads back to the same double
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
}

TEST(Json, ObjectsKeepInsertionOrderOnOneLine) {
  JsonObject inner;
  inner.add("m", std::int64_t{4096}).add("dtype", "bf16");
  JsonObject o;
  o.add("record", "measurement").add("params", inner).add("ok", true).add("reps", 20);
  EXPECT_EQ(o.str(),
            "{\"record\":\"measurement\",\"params\":{\"m\":4096,\"dtype\":\"bf16\"},"
            "\"ok\":true,\"reps\":20}");
  EXPECT_EQ(JsonObject().str(), "{}");
}

}  // namespace
}  // namespace kref
