// File: sim/units.h
//
// Data sizes and rates as types: Bytes (a signed 64-bit count) and
// BytesPerSecond (a positive 64-bit integer rate). Between them and Duration
// only the arithmetic that makes physical sense exists:
//
//   Bytes / BytesPerSecond  -> Duration       (rounded up to the picosecond)
//   BytesPerSecond * Duration -> Bytes        (rounded down to the byte)
//   Bytes / Duration        -> BytesPerSecond (rounded down to 1 B/s)
//
// Rates are whole bytes per second: 1 B/s resolution is nine orders of
// magnitude finer than any link modelled here, and integer rates make
// serialisation delays exact (128-bit intermediate products). "Gbps" never
// appears: constructors say gbit or gbyte (10^9, as network vendors count).

#ifndef ZIONSIM_SIM_UNITS_H_
#define ZIONSIM_SIM_UNITS_H_

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/time.h"

namespace zx::sim {

namespace internal {
[[noreturn]] void throw_unit_error(const char* operation);

constexpr std::int64_t checked_bytes_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw_unit_error(what);
  return r;
}
}  // namespace internal

/// The least efficiency (a fraction of a peak rate: a link's protocol
/// efficiency, a GPU's compute or HBM efficiency) an input may give. Below a
/// thousandth a value no longer describes hardware that runs, and a value
/// near zero (1e-300) turns bytes and FLOPs into times beyond the clock's
/// range: every reader refuses it at its field instead (issue 41, class 5).
inline constexpr double kMinEfficiency = 1e-3;

/// An amount of data, in bytes. Overflow is a checked error.
class Bytes {
 public:
  constexpr Bytes() = default;
  explicit constexpr Bytes(std::int64_t count) : count_(count) {}

  static constexpr Bytes kib(std::int64_t n) { return Bytes(mul(n, 1024, "Bytes::kib")); }
  static constexpr Bytes mib(std::int64_t n) { return Bytes(mul(n, 1024 * 1024, "Bytes::mib")); }
  static constexpr Bytes gib(std::int64_t n) {
    return Bytes(mul(n, std::int64_t{1024} * 1024 * 1024, "Bytes::gib"));
  }

  constexpr std::int64_t count() const { return count_; }
  constexpr auto operator<=>(const Bytes&) const = default;

  constexpr Bytes& operator+=(Bytes b) {
    count_ = internal::checked_bytes_add(count_, b.count_, "Bytes + Bytes");
    return *this;
  }
  constexpr Bytes& operator-=(Bytes b) {
    count_ = internal::checked_bytes_add(count_, mul(b.count_, -1, "-Bytes"), "Bytes - Bytes");
    return *this;
  }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return a += b; }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return a -= b; }
  friend constexpr Bytes operator*(Bytes a, std::int64_t k) { return Bytes(mul(a.count_, k, "Bytes * integer")); }
  friend constexpr Bytes operator*(std::int64_t k, Bytes a) { return a * k; }
  /// Integer division, truncating toward zero.
  friend constexpr Bytes operator/(Bytes a, std::int64_t k) {
    if (k == 0 || (k == -1 && a.count_ == INT64_MIN)) internal::throw_unit_error("Bytes / integer");
    return Bytes(a.count_ / k);
  }

  /// Exact, in decimal SI units: "512 B", "1.5 kB", "25 GB".
  std::string to_string() const;

 private:
  static constexpr std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) internal::throw_unit_error(what);
    return r;
  }
  std::int64_t count_ = 0;
};

/// A data rate in whole bytes per second; always positive.
class BytesPerSecond {
 public:
  /// Throws std::invalid_argument unless `bytes_per_second` > 0.
  explicit BytesPerSecond(std::int64_t bytes_per_second);

  /// 10^9 bytes per second, rounded to the nearest byte per second.
  static BytesPerSecond from_gbyte_per_s(double gbyte_per_s);
  /// 10^9 bits per second (network vendors' Gb/s), rounded to the nearest B/s.
  static BytesPerSecond from_gbit_per_s(double gbit_per_s);

  constexpr std::int64_t count() const { return bytes_per_second_; }
  double to_gbyte_per_s() const { return static_cast<double>(bytes_per_second_) * 1e-9; }
  constexpr auto operator<=>(const BytesPerSecond&) const = default;

  /// This rate times `factor` in (0, inf), rounded to the nearest B/s (at
  /// least 1): a protocol efficiency or a calibrated derating.
  BytesPerSecond scaled(double factor) const;

  /// "25 GB/s", "1.5 MB/s": exact, in decimal SI units.
  std::string to_string() const;

 private:
  std::int64_t bytes_per_second_;
};

/// Time to move `size` at `rate`, rounded up to whole picoseconds. Throws
/// std::invalid_argument for a negative size.
Duration serialization_delay(Bytes size, BytesPerSecond rate);
inline Duration operator/(Bytes size, BytesPerSecond rate) { return serialization_delay(size, rate); }

/// Bytes moved at `rate` in `d` (d >= 0), rounded down.
Bytes operator*(BytesPerSecond rate, Duration d);
inline Bytes operator*(Duration d, BytesPerSecond rate) { return rate * d; }

/// The rate that moves `size` in `d` (both positive), rounded down, at least 1 B/s.
BytesPerSecond operator/(Bytes size, Duration d);

std::ostream& operator<<(std::ostream& os, Bytes b);
std::ostream& operator<<(std::ostream& os, BytesPerSecond r);

}  // namespace zx::sim

#endif  // ZIONSIM_SIM_UNITS_H_
