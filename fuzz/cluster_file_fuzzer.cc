// File: fuzz/cluster_file_fuzzer.cc
//
// libFuzzer target: parse_cluster on arbitrary text.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "topology/cluster_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)zx::topology::parse_cluster(text, "fuzz.json");
  } catch (const zx::InputError&) {
  }
  return 0;
}
