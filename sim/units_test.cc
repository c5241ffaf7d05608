// Tests of Bytes and BytesPerSecond and the arithmetic between them and time.

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include "sim/units.h"

namespace zx::sim {
namespace {

TEST(BytesTest, ArithmeticIsExactAndChecked) {
  EXPECT_EQ(Bytes::kib(2).count(), 2048);
  EXPECT_EQ(Bytes::mib(1).count(), 1 << 20);
  EXPECT_EQ(Bytes::gib(3).count(), 3LL << 30);
  EXPECT_EQ(Bytes(10) + Bytes(5), Bytes(15));
  EXPECT_EQ(Bytes(10) - Bytes(15), Bytes(-5));
  EXPECT_EQ(Bytes(10) * 3, Bytes(30));
  EXPECT_EQ(Bytes(10) / 3, Bytes(3));
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW(Bytes(max) + Bytes(1), std::overflow_error);
  EXPECT_THROW(Bytes(max / 2 + 1) * 2, std::overflow_error);
  EXPECT_THROW(Bytes(1) / 0, std::overflow_error);
  EXPECT_THROW(Bytes::gib(std::int64_t{1} << 34), std::overflow_error);
}

TEST(BytesTest, PrintsExactDecimalUnits) {
  EXPECT_EQ(Bytes(0).to_string(), "0 B");
  EXPECT_EQ(Bytes(512).to_string(), "512 B");
  EXPECT_EQ(Bytes(1'500).to_string(), "1.5 kB");
  EXPECT_EQ(Bytes(25'000'000'000).to_string(), "25 GB");
  EXPECT_EQ(Bytes::mib(1).to_string(), "1.048576 MB");
  EXPECT_EQ(BytesPerSecond::from_gbit_per_s(200).to_string(), "25 GB/s");
}

// Vendors' Gb/s are 10^9 bits: a 200 Gb/s RoCE NIC moves 25 GB/s.
TEST(BytesPerSecondTest, ConversionsFromVendorUnits) {
  EXPECT_EQ(BytesPerSecond::from_gbit_per_s(200).count(), 25'000'000'000);
  EXPECT_EQ(BytesPerSecond::from_gbyte_per_s(300).count(), 300'000'000'000);
  EXPECT_EQ(BytesPerSecond::from_gbyte_per_s(1e-9).count(), 1);
  EXPECT_DOUBLE_EQ(BytesPerSecond::from_gbit_per_s(100).to_gbyte_per_s(), 12.5);
  // MAD-Max's RoCE efficiency of 0.56 applied to 25 GB/s.
  EXPECT_EQ(BytesPerSecond::from_gbit_per_s(200).scaled(0.56).count(), 14'000'000'000);
}

TEST(BytesPerSecondTest, RejectsNonPositiveRates) {
  EXPECT_THROW(BytesPerSecond(0), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond(-5), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond::from_gbyte_per_s(0.0), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond::from_gbyte_per_s(-1.0), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond::from_gbit_per_s(std::numeric_limits<double>::quiet_NaN()),
               std::invalid_argument);
  EXPECT_THROW(BytesPerSecond::from_gbyte_per_s(1e12), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond(10).scaled(0.0), std::invalid_argument);
  EXPECT_THROW(BytesPerSecond(10).scaled(-2.0), std::invalid_argument);
}

// bytes / rate = duration, rounded up to the picosecond.
TEST(SerializationDelayTest, RoundsUpToWholePicoseconds) {
  const BytesPerSecond nic = BytesPerSecond::from_gbit_per_s(200);  // 25 GB/s: 40 ps per byte
  EXPECT_EQ(Bytes(1) / nic, Duration::ps(40));
  EXPECT_EQ(Bytes(1'000'000) / nic, Duration::us(40));
  EXPECT_EQ(Bytes(0) / nic, Duration::zero());
  // 1 byte at 3 B/s is 333333333333.33 ps: rounds up.
  EXPECT_EQ(Bytes(1) / BytesPerSecond(3), Duration::ps(333'333'333'334));
  EXPECT_EQ(Bytes(3) / BytesPerSecond(3), Duration::s(1));
  // Large sizes stay exact (128-bit intermediate): 1 TiB at 300 GB/s.
  EXPECT_EQ(serialization_delay(Bytes::gib(1024), BytesPerSecond::from_gbyte_per_s(300)),
            Duration::ps(3'665'038'759'254));
  EXPECT_THROW(Bytes(-1) / nic, std::invalid_argument);
  EXPECT_THROW(Bytes(std::numeric_limits<std::int64_t>::max()) / BytesPerSecond(1),
               std::overflow_error);
}

// rate * duration = bytes (rounded down), bytes / duration = rate (rounded down).
TEST(RateTimeTest, InverseOperations) {
  const BytesPerSecond nvlink = BytesPerSecond::from_gbyte_per_s(300);
  EXPECT_EQ(nvlink * Duration::us(1), Bytes(300'000));
  EXPECT_EQ(Duration::us(1) * nvlink, Bytes(300'000));
  EXPECT_EQ(BytesPerSecond(3) * Duration::ms(500), Bytes(1));  // 1.5 rounds down
  EXPECT_EQ(Bytes(300'000) / Duration::us(1), nvlink);
  EXPECT_EQ(Bytes(1) / Duration::s(10), BytesPerSecond(1));  // at least 1 B/s
  EXPECT_THROW(nvlink * Duration::ps(-1), std::invalid_argument);
  EXPECT_THROW(Bytes(0) / Duration::s(1), std::invalid_argument);
  EXPECT_THROW(Bytes(5) / Duration::zero(), std::invalid_argument);
  // A round trip never moves more than the rate allows: delay is rounded up,
  // so the bytes that fit in it are at least the original size.
  for (std::int64_t size : {1LL, 7LL, 4'096LL, 123'456'789LL}) {
    const Duration d = Bytes(size) / nvlink;
    EXPECT_GE((nvlink * d).count(), size) << size;
    EXPECT_LT((nvlink * (d - Duration::ps(1))).count(), size) << size;
  }
}

}  // namespace
}  // namespace zx::sim
