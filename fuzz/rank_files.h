// File: fuzz/rank_files.h
//
// For fuzz targets whose parser reads files (the Kineto and Chakra
// importers take one file per rank): splits the fuzzer's input at NUL bytes
// into at most kMaxRanks parts (JSON text never contains NUL, so a seed made
// of two files joined by one NUL byte is a two-rank trace) and writes each
// part to a scratch file of this process. The files are reused from one input
// to the next and removed at exit.

#ifndef ZIONSIM_FUZZ_RANK_FILES_H_
#define ZIONSIM_FUZZ_RANK_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zx::fuzz {

inline constexpr std::size_t kMaxRanks = 4;

/// Writes the NUL-separated parts of `data` to scratch files named
/// `<prefix>.<i>.json` in the temporary directory and returns their paths.
std::vector<std::string> write_rank_files(const std::uint8_t* data, std::size_t size,
                                          const std::string& prefix);

}  // namespace zx::fuzz

#endif  // ZIONSIM_FUZZ_RANK_FILES_H_
