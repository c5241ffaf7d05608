#include "sim/internal/decimal.h"

#include <fmt/format.h>

namespace zx::sim::internal {

std::string format_exact_decimal(std::int64_t value, std::span<const DecimalUnit> units) {
  const bool negative = value < 0;
  // Unsigned magnitude, so that INT64_MIN prints correctly.
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const DecimalUnit* chosen = &units.back();
  for (const DecimalUnit& unit : units) {
    if (magnitude >= unit.scale) {
      chosen = &unit;
      break;
    }
  }
  const std::uint64_t whole = magnitude / chosen->scale;
  const std::uint64_t fraction = magnitude % chosen->scale;
  std::string text = fmt::format("{}{}", negative ? "-" : "", whole);
  if (fraction != 0) {
    int digits = 0;
    for (std::uint64_t p = chosen->scale; p > 1; p /= 10) ++digits;
    std::string frac = fmt::format("{:0{}}", fraction, digits);
    frac.erase(frac.find_last_not_of('0') + 1);
    text += '.';
    text += frac;
  }
  text += ' ';
  text += chosen->name;
  return text;
}

}  // namespace zx::sim::internal
