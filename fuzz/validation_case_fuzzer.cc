// File: fuzz/validation_case_fuzzer.cc
//
// libFuzzer target: parse_case (validation/case.h) on arbitrary text.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding. A case
// that parses must hold what the parser promises: a positive measured
// value, a pointer ending in the quantity, a positive band.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "validation/case.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const zx::validation::Case c = zx::validation::parse_case(text, "fuzz.json");
    const std::string tail = c.pointer.substr(c.pointer.rfind('/') + 1);
    if (!(c.measured > 0) || tail != c.quantity || (c.pinned && !(c.pinned->band > 0))) std::abort();
  } catch (const zx::InputError&) {
  }
  return 0;
}
