// File: sim/internal/decimal.h
//
// Exact decimal printing of an integer quantity in the largest unit that
// does not exceed it ("1.5 ns", "12.000001 MB"), shared by the time and unit
// types. No floating point: the printed digits are exactly the stored value.

#ifndef ZIONSIM_SIM_INTERNAL_DECIMAL_H_
#define ZIONSIM_SIM_INTERNAL_DECIMAL_H_

#include <cstdint>
#include <span>
#include <string>

namespace zx::sim::internal {

struct DecimalUnit {
  std::uint64_t scale;  ///< a power of ten; the last unit of a table has scale 1
  const char* name;
};

/// Prints `value` in the first unit of `units` (ordered largest first) whose
/// scale is at most |value|, with the exact fraction and trailing zeros trimmed.
std::string format_exact_decimal(std::int64_t value, std::span<const DecimalUnit> units);

}  // namespace zx::sim::internal

#endif  // ZIONSIM_SIM_INTERNAL_DECIMAL_H_
