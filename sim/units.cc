#include "sim/units.h"

#include <cmath>
#include <limits>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/internal/decimal.h"

namespace zx::sim {
namespace internal {

void throw_unit_error(const char* operation) {
  throw UnitOverflowError(fmt::format("byte count out of range in {}", operation));
}

}  // namespace internal

namespace {

using u128 = unsigned __int128;
constexpr std::int64_t kPsPerSecond = 1'000'000'000'000;

constexpr internal::DecimalUnit kByteUnits[] = {{1'000'000'000'000'000'000, "EB"},
                                                {1'000'000'000'000'000, "PB"},
                                                {1'000'000'000'000, "TB"},
                                                {1'000'000'000, "GB"},
                                                {1'000'000, "MB"},
                                                {1'000, "kB"},
                                                {1, "B"}};

constexpr internal::DecimalUnit kRateUnits[] = {{1'000'000'000'000'000, "PB/s"},
                                                {1'000'000'000'000, "TB/s"},
                                                {1'000'000'000, "GB/s"},
                                                {1'000'000, "MB/s"},
                                                {1'000, "kB/s"},
                                                {1, "B/s"}};

std::int64_t round_rate(double bytes_per_second, const char* what) {
  if (!std::isfinite(bytes_per_second) || bytes_per_second < 0.5 ||
      bytes_per_second >= 9.2e18) {
    throw UnitRangeError(
        fmt::format("{}: expected a positive finite rate of at least 1 B/s, got {} B/s", what,
                    bytes_per_second));
  }
  return static_cast<std::int64_t>(std::llround(bytes_per_second));
}

}  // namespace

BytesPerSecond::BytesPerSecond(std::int64_t bytes_per_second)
    : bytes_per_second_(bytes_per_second) {
  if (bytes_per_second <= 0) {
    throw UnitRangeError(
        fmt::format("BytesPerSecond: expected a positive rate, got {} B/s", bytes_per_second));
  }
}

BytesPerSecond BytesPerSecond::from_gbyte_per_s(double gbyte_per_s) {
  return BytesPerSecond(round_rate(gbyte_per_s * 1e9, "BytesPerSecond::from_gbyte_per_s"));
}

BytesPerSecond BytesPerSecond::from_gbit_per_s(double gbit_per_s) {
  return BytesPerSecond(round_rate(gbit_per_s * 1e9 / 8.0, "BytesPerSecond::from_gbit_per_s"));
}

BytesPerSecond BytesPerSecond::scaled(double factor) const {
  if (!(factor > 0.0) || !std::isfinite(factor)) {
    throw UnitRangeError(
        fmt::format("BytesPerSecond::scaled: expected a positive finite factor, got {}", factor));
  }
  const double scaled = static_cast<double>(bytes_per_second_) * factor;
  return BytesPerSecond(std::max<std::int64_t>(1, round_rate(std::max(scaled, 0.5), "scaled")));
}

std::string Bytes::to_string() const { return internal::format_exact_decimal(count_, kByteUnits); }

std::string BytesPerSecond::to_string() const {
  return internal::format_exact_decimal(bytes_per_second_, kRateUnits);
}

Duration serialization_delay(Bytes size, BytesPerSecond rate) {
  if (size.count() < 0) {
    throw UnitRangeError(
        fmt::format("serialization_delay: expected a non-negative size, got {} B", size.count()));
  }
  const u128 numerator = static_cast<u128>(size.count()) * kPsPerSecond;
  const u128 divisor = static_cast<u128>(rate.count());
  const u128 ps = (numerator + divisor - 1) / divisor;
  if (ps > static_cast<u128>(std::numeric_limits<std::int64_t>::max())) {
    internal::throw_time_overflow("Bytes / BytesPerSecond");
  }
  return Duration::ps(static_cast<std::int64_t>(ps));
}

Bytes operator*(BytesPerSecond rate, Duration d) {
  if (d.count_ps() < 0) {
    throw UnitRangeError(
        fmt::format("BytesPerSecond * Duration: expected a non-negative duration, got {}",
                    d.to_string()));
  }
  const u128 bytes = static_cast<u128>(rate.count()) * static_cast<u128>(d.count_ps()) /
                     static_cast<u128>(kPsPerSecond);
  if (bytes > static_cast<u128>(std::numeric_limits<std::int64_t>::max())) {
    internal::throw_unit_error("BytesPerSecond * Duration");
  }
  return Bytes(static_cast<std::int64_t>(bytes));
}

BytesPerSecond operator/(Bytes size, Duration d) {
  if (size.count() <= 0 || d.count_ps() <= 0) {
    throw UnitRangeError(fmt::format(
        "Bytes / Duration: expected a positive size and duration, got {} B in {}", size.count(),
        d.to_string()));
  }
  const u128 rate = static_cast<u128>(size.count()) * kPsPerSecond / static_cast<u128>(d.count_ps());
  if (rate > static_cast<u128>(std::numeric_limits<std::int64_t>::max())) {
    internal::throw_unit_error("Bytes / Duration");
  }
  return BytesPerSecond(std::max<std::int64_t>(1, static_cast<std::int64_t>(rate)));
}

std::ostream& operator<<(std::ostream& os, Bytes b) { return os << b.to_string(); }
std::ostream& operator<<(std::ostream& os, BytesPerSecond r) { return os << r.to_string(); }

}  // namespace zx::sim
