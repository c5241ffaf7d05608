// File: fuzz/chakra_et_fuzzer.cc
//
// libFuzzer target: Chakra's protobuf .et stream. The input is decoded
// (workloads/chakra_et.h), and then, as one rank's file (gzip or not), read
// by the importer with every check that follows. zx::InputError is the
// importer's documented answer to bad input; anything else escaping, a
// crash, a sanitizer report or a hang is a finding.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "base/error.h"
#include "workloads/chakra_et.h"
#include "workloads/chakra_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const zx::workloads::chakra_et::DecodeResult decoded = zx::workloads::chakra_et::decode(bytes);
  // What decodes re-encodes to a stream that decodes to as many nodes.
  if (!decoded.error) {
    const auto again = zx::workloads::chakra_et::decode(zx::workloads::chakra_et::encode(decoded.file));
    if (again.error || again.file.nodes.size() != decoded.file.nodes.size()) std::abort();
  }
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr ? dir : "/tmp") + "/zionsim-fuzz-chakra-et." + std::to_string(getpid()) + ".et";
  }();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    (void)zx::workloads::import_chakra({path});
  } catch (const zx::InputError&) {
  }
  return 0;
}
