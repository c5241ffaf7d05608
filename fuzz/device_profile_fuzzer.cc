// File: fuzz/device_profile_fuzzer.cc
//
// libFuzzer target: parse_device_profile on arbitrary text.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "models/compute/device_profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)zx::models::parse_device_profile(text, "fuzz.json");
  } catch (const zx::InputError&) {
  }
  return 0;
}
