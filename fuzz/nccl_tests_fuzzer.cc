// File: fuzz/nccl_tests_fuzzer.cc
//
// libFuzzer target: parse_nccl_tests on arbitrary text.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "calibration/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)zx::calibration::parse_nccl_tests(text, "fuzz.txt");
  } catch (const zx::InputError&) {
  }
  return 0;
}
