#include "base/error.h"

#include <utility>

namespace zx {
namespace {

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
    : std::runtime_error(join_lines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

InputError::InputError(Diagnostic diagnostic)
    : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

}  // namespace zx
