// File: base/error.h
//
// Errors in user input: configs, traces, measurement files, flags. Every
// problem names where it is (a file and a JSON pointer or a line), what was
// expected and what was found. Readers collect all problems of a file before
// throwing one InputError, so a user fixes a file in one pass. The CLI prints
// each diagnostic on its own line and exits with status 2.

#ifndef ZIONSIM_BASE_ERROR_H_
#define ZIONSIM_BASE_ERROR_H_

#include <stdexcept>
#include <string>
#include <vector>

namespace zx {

/// One problem in one input.
struct Diagnostic {
  std::string source;    ///< file name, or "<flag --name>", or "<stdin>"
  std::string location;  ///< JSON pointer ("/nodes/3/gpus") or "line 12"; may be empty
  std::string message;   ///< lower-case, no trailing period: "expected X, got Y"

  /// "source: location: message", leaving out empty parts.
  std::string to_string() const;
};

/// Bad user input, with every problem found. What it says is bounded
/// whatever the input: at most 100 diagnostics (then one saying how many
/// more there were), and each part of one (source, location, message) at
/// most 1,000 characters (a longer one keeps its head and tail and says
/// how much was left out).
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  explicit InputError(Diagnostic diagnostic);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  InputError(std::vector<Diagnostic> bounded_diagnostics, int);
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace zx

#endif  // ZIONSIM_BASE_ERROR_H_
