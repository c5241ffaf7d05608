// File: base/check.h
//
// Always-on invariant checks. A failed check is a bug in the caller or in
// zionsim, never bad user input (that is zx::InputError, base/error.h). The
// check throws zx::InvariantError carrying the condition, the place and a
// message that says what went wrong, so the CLI can print it and a test can
// assert it; it is active in every build mode, unlike assert().

#ifndef ZIONSIM_BASE_CHECK_H_
#define ZIONSIM_BASE_CHECK_H_

#include <stdexcept>
#include <string>
#include <string_view>

namespace zx {

/// A broken invariant: the program is wrong, not its input.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace internal {
[[noreturn]] void check_failed(std::string_view condition, std::string_view file, int line,
                               std::string_view message);
[[noreturn]] void unreachable_reached(std::string_view file, int line, std::string_view message);
}  // namespace internal

}  // namespace zx

/// ZX_CHECK(cond, message): throws zx::InvariantError when `cond` is false.
/// `message` is any expression convertible to std::string_view; it is only
/// evaluated when the check fails.
#define ZX_CHECK(cond, message)                                                   \
  do {                                                                            \
    if (!(cond)) [[unlikely]] {                                                   \
      ::zx::internal::check_failed(#cond, __FILE__, __LINE__, (message));         \
    }                                                                             \
  } while (false)

/// ZX_UNREACHABLE(message): marks a branch that exhaustive logic rules out.
#define ZX_UNREACHABLE(message) ::zx::internal::unreachable_reached(__FILE__, __LINE__, (message))

#endif  // ZIONSIM_BASE_CHECK_H_
