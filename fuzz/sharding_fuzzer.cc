// File: fuzz/sharding_fuzzer.cc
//
// libFuzzer target: parse_sharding_file on arbitrary text, against the zoo
// model "dlrm-a-small" on 16 GPUs in servers of 8.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const zx::models::DlrmModel model = zx::models::load_model("dlrm-a-small");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)zx::models::parse_sharding_file(text, "fuzz.json", model, 16, 8);
  } catch (const zx::InputError&) {
  }
  return 0;
}
