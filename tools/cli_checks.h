// File: tools/cli_checks.h
//
// Flag validators shared by the subcommands. CLI11's own CLI::Range says
// "Value abc not in range 0.000000 to 10.000000" both for a value out of
// range and for one that is not a number at all; in_range() says what was
// expected and what was found, in the words the file validators use
// ("expected an integer in [1, 1024], got '1.5'"), and keeps CLI::Range's
// help text ("INT in [1 - 1024]").

#ifndef ZIONSIM_TOOLS_CLI_CHECKS_H_
#define ZIONSIM_TOOLS_CLI_CHECKS_H_

#include <charconv>
#include <cmath>
#include <system_error>
#include <sstream>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace zx::tools {

/// A validator accepting a number of type T within [lo, hi]: an integer
/// for integral T (no fraction, no trailing text), a finite number for
/// floating-point T; a negative or too large integer is refused, never
/// wrapped or clamped.
template <typename T>
CLI::Validator in_range(T lo, T hi) {
  static_assert(std::is_arithmetic_v<T>);
  std::ostringstream help;
  help << CLI::detail::type_name<T>() << " in [" << lo << " - " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& text) {
        T value{};
        bool ok = CLI::detail::lexical_cast(text, value) && lo <= value && value <= hi;
        if constexpr (std::is_floating_point_v<T>) ok = ok && std::isfinite(value);
        if constexpr (std::is_integral_v<T>) {
          // CLI11's conversion wraps "-1" into an unsigned type and clamps
          // what overflows; from_chars refuses both.
          T exact{};
          const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), exact);
          ok = ok && error == std::errc() && end == text.data() + text.size() && exact == value;
        }
        return ok ? std::string()
                  : fmt::format("expected {} in [{}, {}], got '{}'",
                                std::is_integral_v<T> ? "an integer" : "a number", lo, hi, text);
      },
      help.str());
}

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_CLI_CHECKS_H_
