#include "sim/time.h"

#include <algorithm>

#include <cmath>
#include <ostream>
#include <string>

#include <fmt/format.h>

#include "sim/internal/decimal.h"

namespace zx::sim {
namespace internal {

void throw_time_overflow(const char* operation) {
  throw TimeOverflowError(fmt::format("simulated time overflow in {} (the range is +-2^63 ps, "
                                        "about 106 days)",
                                        operation));
}

}  // namespace internal

namespace {

// Decimal inputs such as 1e-9 s are not exact in binary: 1e-9 * 1e12 is
// 1000.0000000000001. A product within this relative distance of a whole
// picosecond counts as that picosecond; anything further rounds up.
constexpr double kWholePicosecondTolerance = 1e-12;

// 2^63 as a double: the first value that does not fit in int64_t.
constexpr double kTwoTo63 = 9223372036854775808.0;

Duration picoseconds_ceil(double ps, const char* what) {
  if (std::isnan(ps)) {
    throw UnitRangeError(fmt::format("{}: not a number", what));
  }
  const double nearest = std::nearbyint(ps);
  const double tolerance = kWholePicosecondTolerance * std::max(1.0, std::fabs(ps));
  const double rounded = std::fabs(ps - nearest) <= tolerance ? nearest : std::ceil(ps);
  if (!(rounded < kTwoTo63) || !(rounded >= -kTwoTo63)) {
    internal::throw_time_overflow(what);
  }
  return Duration::ps(static_cast<std::int64_t>(rounded));
}

// Largest first; the printed unit is the largest one not above the magnitude.
constexpr internal::DecimalUnit kTimeUnits[] = {{1'000'000'000'000, "s"},
                                                {1'000'000'000, "ms"},
                                                {1'000'000, "us"},
                                                {1'000, "ns"},
                                                {1, "ps"}};

}  // namespace

Duration Duration::from_seconds_ceil(double seconds) {
  return picoseconds_ceil(seconds * 1e12, "Duration::from_seconds_ceil");
}

Duration Duration::from_ns_ceil(double nanoseconds) {
  return picoseconds_ceil(nanoseconds * 1e3, "Duration::from_ns_ceil");
}

std::string Duration::to_string() const {
  if (is_infinite()) return "inf";
  if (ps_ == 0) return "0 s";
  return internal::format_exact_decimal(ps_, kTimeUnits);
}

std::string TimePoint::to_string() const {
  return is_max() ? "t=never" : "t=" + since_start_.to_string();
}

std::ostream& operator<<(std::ostream& os, Duration d) { return os << d.to_string(); }
std::ostream& operator<<(std::ostream& os, TimePoint t) { return os << t.to_string(); }

}  // namespace zx::sim
