// File: fuzz/trace_fuzzer.cc
//
// libFuzzer target: parse_trace on arbitrary text, with the built-in h200
// profile so that kernel ops are priced too.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "models/compute/device_profile.h"
#include "workloads/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    static const zx::models::DeviceProfile device = zx::models::builtin_device_profile("h200");
    (void)zx::workloads::parse_trace(text, "fuzz.json", &device);
  } catch (const zx::InputError&) {
  }
  return 0;
}
