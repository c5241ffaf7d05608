// Tests of Duration and TimePoint: exact integer arithmetic, rounding up from
// floating-point seconds, checked overflow and exact printing.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "sim/time.h"

namespace zx::sim {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

// The named constructors scale to picoseconds exactly, and are constexpr.
TEST(DurationTest, UnitsScaleToPicoseconds) {
  static_assert(Duration::ns(1).count_ps() == 1'000);
  EXPECT_EQ(Duration::us(3).count_ps(), 3'000'000);
  EXPECT_EQ(Duration::ms(2).count_ps(), 2'000'000'000);
  EXPECT_EQ(Duration::s(5).count_ps(), 5'000'000'000'000);
  EXPECT_EQ(Duration::ps(-7).count_ps(), -7);
  EXPECT_EQ(Duration().count_ps(), 0);
  EXPECT_EQ(Duration::zero(), Duration::ps(0));
}

// Sums, differences, integer multiples and quotients are exact.
TEST(DurationTest, ArithmeticIsExact) {
  EXPECT_EQ(Duration::ns(1) + Duration::ps(1), Duration::ps(1'001));
  EXPECT_EQ(Duration::ns(1) - Duration::ns(3), Duration::ps(-2'000));
  EXPECT_EQ(Duration::ns(3) * 4, Duration::ns(12));
  EXPECT_EQ(4 * Duration::ns(3), Duration::ns(12));
  EXPECT_EQ(Duration::ps(7) / 2, Duration::ps(3));    // truncates toward zero
  EXPECT_EQ(Duration::ps(-7) / 2, Duration::ps(-3));  // truncates toward zero
  EXPECT_EQ(Duration::us(1) / Duration::ns(3), 333);
  EXPECT_EQ(-Duration::ns(2), Duration::ps(-2'000));
  EXPECT_LT(Duration::ps(999), Duration::ns(1));
  // 0.1 s + 0.2 s is exactly 0.3 s: integer time has no representation error.
  EXPECT_EQ(Duration::ms(100) + Duration::ms(200), Duration::ms(300));
}

// Every operation that leaves the int64 range throws; none wraps.
TEST(DurationTest, OverflowIsDetected) {
  EXPECT_THROW(Duration::ps(kMax) + Duration::ps(1), std::overflow_error);
  EXPECT_THROW(Duration::ps(kMin) - Duration::ps(1), std::overflow_error);
  EXPECT_THROW(-Duration::ps(kMin), std::overflow_error);
  EXPECT_THROW(Duration::ps(kMax / 2 + 1) * 2, std::overflow_error);
  EXPECT_THROW(Duration::s(10'000'000), std::overflow_error);  // 1e19 ps > 2^63
  EXPECT_THROW(Duration::ps(1) / 0, std::overflow_error);
  EXPECT_THROW(Duration::ps(kMin) / -1, std::overflow_error);
  EXPECT_THROW(Duration::ps(1) / Duration::zero(), std::overflow_error);
  EXPECT_THROW(Duration::ps(kMin) / Duration::ps(-1), std::overflow_error);
  EXPECT_THROW(TimePoint::from_ps(kMax - 5) + Duration::ps(6), std::overflow_error);
  // The largest values themselves are fine.
  EXPECT_EQ((Duration::ps(kMax - 1) + Duration::ps(1)).count_ps(), kMax);
  EXPECT_EQ(Duration::s(9'000'000).count_ps(), 9'000'000'000'000'000'000);
}

// From seconds, values round up to the next picosecond: a modelled delay never
// shrinks. Decimal inputs that are whole picoseconds stay exact despite binary
// representation error (1e-9 * 1e12 is 1000.0000000000001 in double).
TEST(DurationTest, FromSecondsRoundsUp) {
  EXPECT_EQ(Duration::from_seconds_ceil(1e-9), Duration::ns(1));
  EXPECT_EQ(Duration::from_seconds_ceil(1.5e-12), Duration::ps(2));
  EXPECT_EQ(Duration::from_seconds_ceil(1.0001e-12), Duration::ps(2));
  EXPECT_EQ(Duration::from_seconds_ceil(0.3), Duration::ms(300));
  EXPECT_EQ(Duration::from_seconds_ceil(0.1 + 0.2), Duration::ms(300));
  EXPECT_EQ(Duration::from_seconds_ceil(0.0), Duration::zero());
  EXPECT_EQ(Duration::from_seconds_ceil(-1.5e-12), Duration::ps(-1));  // ceil, toward +inf
  EXPECT_EQ(Duration::from_seconds_ceil(1e-13), Duration::ps(1));
  EXPECT_EQ(Duration::from_ns_ceil(2.5), Duration::ps(2'500));
  EXPECT_EQ(Duration::from_ns_ceil(0.0001), Duration::ps(1));
  // 25 GB in 1 s at 1 B per 40 ps: whole seconds stay whole.
  EXPECT_EQ(Duration::from_seconds_ceil(3600.0), Duration::s(3600));
}

TEST(DurationTest, FromSecondsRejectsNanAndOutOfRange) {
  EXPECT_THROW(Duration::from_seconds_ceil(std::nan("")), std::invalid_argument);
  EXPECT_THROW(Duration::from_seconds_ceil(1e7), std::overflow_error);
  EXPECT_THROW(Duration::from_seconds_ceil(-1e7), std::overflow_error);
  EXPECT_THROW(Duration::from_seconds_ceil(INFINITY), std::overflow_error);
  EXPECT_THROW(Duration::from_ns_ceil(1e19), std::overflow_error);
}

// Printing is exact, in the largest unit not above the magnitude.
TEST(DurationTest, PrintsExactHumanUnits) {
  EXPECT_EQ(Duration::zero().to_string(), "0 s");
  EXPECT_EQ(Duration::ps(750).to_string(), "750 ps");
  EXPECT_EQ(Duration::ps(1'500).to_string(), "1.5 ns");
  EXPECT_EQ(Duration::ps(1'000).to_string(), "1 ns");
  EXPECT_EQ(Duration::ps(12'000'001'000).to_string(), "12.000001 ms");
  EXPECT_EQ(Duration::ps(1'234'567).to_string(), "1.234567 us");
  EXPECT_EQ(Duration::s(90).to_string(), "90 s");
  EXPECT_EQ(Duration::ps(-2'500'000).to_string(), "-2.5 us");
  EXPECT_EQ(Duration::infinite().to_string(), "inf");
  EXPECT_EQ(Duration::ps(kMin).to_string(), "-9223372.036854775808 s");
  std::ostringstream os;
  os << Duration::ns(3) << " " << TimePoint::from_ps(1'500'000);
  EXPECT_EQ(os.str(), "3 ns t=1.5 us");
  EXPECT_EQ(TimePoint::max().to_string(), "t=never");
}

// TimePoint and Duration combine as instants and spans do.
TEST(TimePointTest, InstantSpanAlgebra) {
  const TimePoint t = TimePoint::zero() + Duration::us(2);
  EXPECT_EQ(t.count_ps(), 2'000'000);
  EXPECT_EQ(t - TimePoint::zero(), Duration::us(2));
  EXPECT_EQ(TimePoint::zero() - t, Duration::us(-2));
  EXPECT_EQ(t - Duration::us(1), TimePoint::from_ps(1'000'000));
  EXPECT_EQ(Duration::ns(1) + t, TimePoint::from_ps(2'001'000));
  EXPECT_LT(TimePoint::zero(), t);
  EXPECT_LT(t, TimePoint::max());
  EXPECT_TRUE(TimePoint::max().is_max());
  EXPECT_FALSE(t.is_max());
  EXPECT_DOUBLE_EQ(t.to_seconds(), 2e-6);
}

}  // namespace
}  // namespace zx::sim
