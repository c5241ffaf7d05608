// File: sim/time.h
//
// Simulated time: signed 64-bit integer picoseconds behind two strong types.
//
//   Duration   a signed span of time ("how long")
//   TimePoint  an instant on the simulation clock, which starts at zero
//
// Why integers: event order and golden values are exact, equal-time ties are
// real ties (0.1 s + 0.2 s is 0.3 s), and no epsilon ever enters a comparison.
// Why picoseconds: NVLink and RoCE serialisation of small messages takes
// nanoseconds, so 1 ps keeps rounding three orders of magnitude below the
// effects being modelled. Range: 2^63 ps is about 106 days of simulated time.
//
// Overflow is never silent: every arithmetic operation is checked and throws
// std::overflow_error (TimeOverflowError, a sim::RangeError). Conversions from floating-point seconds round *up* to
// the next picosecond, so a modelled delay never shrinks. Duration::infinite()
// is a value (the largest representable span), not a sentinel; it compares
// greater than every finite duration and arithmetic on it is checked like any
// other value.

#ifndef ZIONSIM_SIM_TIME_H_
#define ZIONSIM_SIM_TIME_H_

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <stdexcept>
#include <string>

namespace zx::sim {

/// What every out-of-range quantity throws besides its standard type: time
/// past +-2^63 ps (TimeOverflowError, a std::overflow_error), a byte count
/// out of range or a rate below 1 B/s or not finite (UnitRangeError, a
/// std::invalid_argument or std::overflow_error as before). Such a value
/// comes from an input that asks for more than the simulator represents (a
/// speed or efficiency near 0, a size far beyond the cluster's), so the
/// command line reports it as bad input (tools/cli.cc), not as a bug.
class RangeError {
 public:
  virtual ~RangeError() = default;
  virtual const char* describe() const noexcept = 0;
};

class TimeOverflowError final : public std::overflow_error, public RangeError {
 public:
  using std::overflow_error::overflow_error;
  const char* describe() const noexcept override { return what(); }
};

class UnitRangeError final : public std::invalid_argument, public RangeError {
 public:
  using std::invalid_argument::invalid_argument;
  const char* describe() const noexcept override { return what(); }
};

class UnitOverflowError final : public std::overflow_error, public RangeError {
 public:
  using std::overflow_error::overflow_error;
  const char* describe() const noexcept override { return what(); }
};

namespace internal {
[[noreturn]] void throw_time_overflow(const char* operation);

constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_time_overflow(what);
  return r;
}
constexpr std::int64_t checked_sub(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) throw_time_overflow(what);
  return r;
}
constexpr std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw_time_overflow(what);
  return r;
}
}  // namespace internal

/// A signed span of simulated time with exact picosecond resolution.
class Duration {
 public:
  constexpr Duration() = default;

  static constexpr Duration ps(std::int64_t n) { return Duration(n); }
  static constexpr Duration ns(std::int64_t n) {
    return Duration(internal::checked_mul(n, 1'000, "Duration::ns"));
  }
  static constexpr Duration us(std::int64_t n) {
    return Duration(internal::checked_mul(n, 1'000'000, "Duration::us"));
  }
  static constexpr Duration ms(std::int64_t n) {
    return Duration(internal::checked_mul(n, 1'000'000'000, "Duration::ms"));
  }
  static constexpr Duration s(std::int64_t n) {
    return Duration(internal::checked_mul(n, 1'000'000'000'000, "Duration::s"));
  }
  static constexpr Duration zero() { return Duration(0); }
  /// The largest span; stands for "never" / "unbounded".
  static constexpr Duration infinite() { return Duration(std::numeric_limits<std::int64_t>::max()); }

  /// Converts from seconds, rounding up to the next picosecond. Throws
  /// std::invalid_argument for NaN and std::overflow_error out of range.
  static Duration from_seconds_ceil(double seconds);
  /// As from_seconds_ceil, from nanoseconds (the unit of most config files).
  static Duration from_ns_ceil(double nanoseconds);

  constexpr std::int64_t count_ps() const { return ps_; }
  constexpr double to_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr bool is_infinite() const { return ps_ == std::numeric_limits<std::int64_t>::max(); }

  constexpr auto operator<=>(const Duration&) const = default;

  constexpr Duration operator-() const { return Duration(internal::checked_sub(0, ps_, "-Duration")); }
  constexpr Duration& operator+=(Duration d) {
    ps_ = internal::checked_add(ps_, d.ps_, "Duration + Duration");
    return *this;
  }
  constexpr Duration& operator-=(Duration d) {
    ps_ = internal::checked_sub(ps_, d.ps_, "Duration - Duration");
    return *this;
  }
  friend constexpr Duration operator+(Duration a, Duration b) { return a += b; }
  friend constexpr Duration operator-(Duration a, Duration b) { return a -= b; }
  friend constexpr Duration operator*(Duration a, std::int64_t k) {
    return Duration(internal::checked_mul(a.ps_, k, "Duration * integer"));
  }
  friend constexpr Duration operator*(std::int64_t k, Duration a) { return a * k; }
  /// Integer division, truncating toward zero (as for int64_t).
  friend constexpr Duration operator/(Duration a, std::int64_t k) {
    if (k == 0) internal::throw_time_overflow("Duration / 0");
    if (k == -1) return -a;
    return Duration(a.ps_ / k);
  }
  /// How many times `b` fits in `a`, truncating toward zero.
  friend constexpr std::int64_t operator/(Duration a, Duration b) {
    if (b.ps_ == 0) internal::throw_time_overflow("Duration / zero Duration");
    if (b.ps_ == -1) return internal::checked_sub(0, a.ps_, "Duration / Duration");
    return a.ps_ / b.ps_;
  }

  /// Human units, exact: "0 s", "750 ps", "1.5 ns", "12.000001 ms", "inf".
  std::string to_string() const;

 private:
  explicit constexpr Duration(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

/// An instant of simulated time: picoseconds since the start of the run.
class TimePoint {
 public:
  constexpr TimePoint() = default;

  static constexpr TimePoint zero() { return TimePoint(); }
  static constexpr TimePoint from_ps(std::int64_t ps) { return TimePoint(Duration::ps(ps)); }
  /// The instant after every finite one; "never".
  static constexpr TimePoint max() { return TimePoint(Duration::infinite()); }

  constexpr std::int64_t count_ps() const { return since_start_.count_ps(); }
  constexpr Duration since_start() const { return since_start_; }
  constexpr double to_seconds() const { return since_start_.to_seconds(); }
  constexpr bool is_max() const { return since_start_.is_infinite(); }

  constexpr auto operator<=>(const TimePoint&) const = default;

  constexpr TimePoint& operator+=(Duration d) {
    since_start_ += d;
    return *this;
  }
  constexpr TimePoint& operator-=(Duration d) {
    since_start_ -= d;
    return *this;
  }
  friend constexpr TimePoint operator+(TimePoint t, Duration d) { return t += d; }
  friend constexpr TimePoint operator+(Duration d, TimePoint t) { return t += d; }
  friend constexpr TimePoint operator-(TimePoint t, Duration d) { return t -= d; }
  friend constexpr Duration operator-(TimePoint a, TimePoint b) {
    return a.since_start_ - b.since_start_;
  }

  /// "t=1.5 us", exact.
  std::string to_string() const;

 private:
  explicit constexpr TimePoint(Duration d) : since_start_(d) {}
  Duration since_start_;
};

std::ostream& operator<<(std::ostream& os, Duration d);
std::ostream& operator<<(std::ostream& os, TimePoint t);

}  // namespace zx::sim

#endif  // ZIONSIM_SIM_TIME_H_
