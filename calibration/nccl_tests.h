// File: calibration/nccl_tests.h
//
// Reads the output of NVIDIA's nccl-tests (all_reduce_perf, alltoall_perf,
// ...): the measurements `zionsim calibrate-network` compares the network
// model with and fits it to (docs/network_calibration.md).
//
// What is read: the "# Collective test starting: NAME" line (nccl-tests 2.17
// and later) for the collective, the "#  Rank  N Group G Pid P on HOST
// device D [BUS] GPU NAME" lines for ranks and hosts, and the result rows
//
//   size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong
//
// (out-of-place, then in-place; times in us, bandwidths in GB/s). Lines that
// are not comments and do not start with a number (MPI and NCCL logging)
// are skipped; a line that starts with a number and is not a whole result
// row is an error naming the file and line.

#ifndef ZIONSIM_CALIBRATION_NCCL_TESTS_H_
#define ZIONSIM_CALIBRATION_NCCL_TESTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zx::calibration {

struct NcclTestsRow {
  std::int64_t size_bytes = 0;  ///< per rank, as nccl-tests counts it
  std::int64_t count = 0;       ///< elements
  std::string type;             ///< "float", "half", ...
  double time_us = 0;           ///< out-of-place
  double algbw_gbyte_per_s = 0;
  double busbw_gbyte_per_s = 0;
  double in_place_time_us = 0;
  int line = 0;
};

struct NcclTestsRun {
  std::string source;      ///< the file
  std::string collective;  ///< zionsim's kind: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce
  int ranks = 0;           ///< from the rank lines; 0 when the file has none
  std::vector<std::string> hosts;  ///< distinct, in the order first seen
  std::vector<int> rank_host;      ///< per rank (0 .. ranks-1), its index in hosts
  std::string gpu;                 ///< the device name of rank 0's line, if any
  std::vector<NcclTestsRow> rows;  ///< in file order
};

/// zionsim's collective kind for an nccl-tests program or kind name
/// ("all_reduce_perf", "alltoall", "all_to_all"); nullopt when unsupported.
std::optional<std::string> nccl_tests_collective(std::string_view name);

/// Parses nccl-tests output text from `source`. `collective` names the kind
/// when the text lacks the "Collective test starting" line (older versions),
/// and must agree with it otherwise. Throws zx::InputError naming the source
/// and line of every problem.
NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& source,
                              std::optional<std::string> collective = std::nullopt);

/// Reads and parses a file (size-checked like every input).
NcclTestsRun load_nccl_tests(const std::string& path, std::optional<std::string> collective = std::nullopt);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_NCCL_TESTS_H_
