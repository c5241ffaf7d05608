#include "base/error.h"

#include <string_view>
#include <utility>

namespace zx {
namespace {

// What one input error says is bounded whatever the input: a part of a
// diagnostic (a 10 MB string quoted back, a key of a million characters)
// keeps its head and tail, and a file with a hundred thousand problems
// shows the first kMaxDiagnostics and a count of the rest.
constexpr std::size_t kMaxPartChars = 1000;
constexpr std::size_t kMaxDiagnostics = 100;

std::string shorten(std::string text) {
  if (text.size() <= kMaxPartChars) return text;
  constexpr std::size_t kHead = 700;
  constexpr std::size_t kTail = 100;
  const std::size_t left_out = text.size() - kHead - kTail;
  return text.substr(0, kHead) + "[... " + std::to_string(left_out) + " characters left out ...]" +
         text.substr(text.size() - kTail);
}

std::vector<Diagnostic> bounded(std::vector<Diagnostic> diagnostics) {
  const std::size_t total = diagnostics.size();
  if (total > kMaxDiagnostics) {
    Diagnostic last = diagnostics.back();
    diagnostics.resize(kMaxDiagnostics);
    diagnostics.push_back(Diagnostic{last.source, "",
                                     "and " + std::to_string(total - kMaxDiagnostics) +
                                         " more problems (the first " + std::to_string(kMaxDiagnostics) +
                                         " are shown)"});
  }
  for (Diagnostic& d : diagnostics) {
    d.source = shorten(std::move(d.source));
    d.location = shorten(std::move(d.location));
    d.message = shorten(std::move(d.message));
  }
  return diagnostics;
}

std::string join_lines(const std::vector<Diagnostic>& diagnostics) {
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += d.to_string();
  }
  return text;
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string text;
  for (const std::string* part : {&source, &location}) {
    if (part->empty()) continue;
    text += *part;
    text += ": ";
  }
  text += message;
  return text;
}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : InputError(bounded(std::move(diagnostics)), 0) {}

InputError::InputError(std::vector<Diagnostic> bounded_diagnostics, int)
    : std::runtime_error(join_lines(bounded_diagnostics)), diagnostics_(std::move(bounded_diagnostics)) {}

InputError::InputError(Diagnostic diagnostic)
    : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

}  // namespace zx
