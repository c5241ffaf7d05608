// File: fuzz/kineto_fuzzer.cc
//
// libFuzzer target: import_kineto on arbitrary text, split at NUL bytes into
// up to four rank files (fuzz/rank_files.h), so that the cross-rank checks
// (matching collectives, sends and receives) are reached too.
// zx::InputError is the importer's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>

#include "base/error.h"
#include "fuzz/rank_files.h"
#include "workloads/kineto_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto files = zx::fuzz::write_rank_files(data, size, "zionsim-fuzz-kineto");
  try {
    (void)zx::workloads::import_kineto(files);
  } catch (const zx::InputError&) {
  }
  return 0;
}
