#include "base/check.h"

#include <fmt/format.h>

namespace zx::internal {

void check_failed(std::string_view condition, std::string_view file, int line,
                  std::string_view message) {
  throw InvariantError(
      fmt::format("internal check failed at {}:{}: {} ({})", file, line, message, condition));
}

void unreachable_reached(std::string_view file, int line, std::string_view message) {
  throw InvariantError(fmt::format("unreachable code reached at {}:{}: {}", file, line, message));
}

}  // namespace zx::internal
