// File: fuzz/shard_file_fuzzer.cc
//
// libFuzzer target: `zionsim merge`'s reading of shard files
// (experiments/sweep_shards.h) and of the points they carry (experiments/whatif_codec.h,
// also what `whatif --results` reads back). The input is up to four files
// joined by NUL bytes (fuzz/rank_files.h). zx::InputError is the readers'
// answer to bad input. A point's outcome may be an error, which decoding
// rethrows as what it says it was (an input error, an interruption, a range
// error, an invariant failure, another error): those are the decoder
// working. Anything else escaping, a crash, a sanitizer report or a hang is
// a finding.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/error.h"
#include "fuzz/rank_files.h"
#include "sim/time.h"
#include "experiments/interrupt.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> paths = zx::fuzz::write_rank_files(data, size, "shard_fuzz");
  zx::experiments::MergedShards shards;
  try {
    shards = zx::experiments::read_shards(paths);
  } catch (const zx::InputError&) {
    return 0;
  }
  for (const auto& [task, outcome] : shards.outcomes) {
    const bool carries_error = outcome.is_object() && outcome.contains("error") && !outcome.contains("point");
    try {
      (void)zx::experiments::point_or_rethrow(outcome, "fuzz", "/results");
    } catch (const zx::InputError&) {
    } catch (const zx::experiments::Interrupted&) {
      ZX_CHECK(carries_error, "only an error outcome rethrows an interruption");
    } catch (const zx::sim::RangeError&) {
      ZX_CHECK(carries_error, "only an error outcome rethrows a range error");
    } catch (const zx::InvariantError&) {
      ZX_CHECK(carries_error, "only an error outcome rethrows an invariant failure");
    } catch (const std::runtime_error&) {
      ZX_CHECK(carries_error, "only an error outcome rethrows another error");
    }
  }
  return 0;
}
