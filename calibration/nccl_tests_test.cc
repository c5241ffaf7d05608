// Tests of the nccl-tests output reader: a multi-node all-reduce log with MPI
// noise, the collective from the program name or --op, and every malformed
// line named by its line number.

#include "calibration/nccl_tests.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace zx::calibration {
namespace {

// The shape nccl-tests 2.18 prints (mpirun over two hosts, one GPU per
// process), with a warning from MPI in the middle.
constexpr const char* kAllReduce = R"(# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12812 on hostA device  0 [0000:06:00] NVIDIA A100-SXM4-40GB
#  Rank  1 Group  0 Pid  12813 on hostA device  1 [0000:07:00] NVIDIA A100-SXM4-40GB
#  Rank  2 Group  0 Pid  20001 on hostB device  0 [0000:06:00] NVIDIA A100-SXM4-40GB
#  Rank  3 Group  0 Pid  20002 on hostB device  1 [0000:07:00] NVIDIA A100-SXM4-40GB
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
hostA:12812:12812 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
        1024           256     float     sum      -1    25.10    0.04    0.06      0    24.90    0.04    0.06      0
        2048           512     float     sum      -1    26.00    0.08    0.12      0    25.80    0.08    0.12      0
        4096          1024     float     sum      -1    27.50    0.15    0.22    N/A    27.10    0.15    0.23    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.135
#
)";

TEST(NcclTestsTest, ReadsAMultiNodeAllReduce) {
  const NcclTestsRun run = parse_nccl_tests(kAllReduce, "ar.txt");
  EXPECT_EQ(run.collective, "all_reduce");
  EXPECT_EQ(run.ranks, 4);
  EXPECT_EQ(run.hosts, (std::vector<std::string>{"hostA", "hostB"}));
  EXPECT_EQ(run.gpu, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(run.rank_host, (std::vector<int>{0, 0, 1, 1}));
  ASSERT_EQ(run.rows.size(), 3u);
  EXPECT_EQ(run.rows[0].size_bytes, 1024);
  EXPECT_EQ(run.rows[0].count, 256);
  EXPECT_EQ(run.rows[0].type, "float");
  EXPECT_DOUBLE_EQ(run.rows[0].time_us, 25.10);
  EXPECT_DOUBLE_EQ(run.rows[2].busbw_gbyte_per_s, 0.22);
  EXPECT_DOUBLE_EQ(run.rows[2].in_place_time_us, 27.10);
  EXPECT_EQ(run.rows[2].line, 17);
}

// Before nccl-tests 2.10 the rank lines had no group.
TEST(NcclTestsTest, ReadsRankLinesWithoutAGroup) {
  const std::string text =
      "#   Rank  0 Pid  1001 on node-a device  0 [0x07] Tesla V100-SXM2-32GB\n"
      "#   Rank  1 Pid  1002 on node-b device  0 [0x07] Tesla V100-SXM2-32GB\n"
      "        8   2   float   sum   -1   10.0   0.00   0.00   0   9.0   0.00   0.00   0\n";
  const NcclTestsRun run = parse_nccl_tests(text, "old.txt", "all_reduce_perf");
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.hosts, (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(run.rank_host, (std::vector<int>{0, 1}));
  EXPECT_EQ(run.gpu, "Tesla V100-SXM2-32GB");
}

TEST(NcclTestsTest, CollectiveFromTheProgramOrTheFlag) {
  EXPECT_EQ(nccl_tests_collective("alltoall_perf"), "all_to_all");
  EXPECT_EQ(nccl_tests_collective("all_to_all"), "all_to_all");
  EXPECT_EQ(nccl_tests_collective("reduce_scatter_perf"), "reduce_scatter");
  EXPECT_EQ(nccl_tests_collective("sendrecv_perf"), std::nullopt);
  // Older versions print no "Collective test starting" line: --op names it.
  const std::string old = "        8   2   float   none   -1   10.0   0.00   0.00   0   9.0   0.00   0.00   0\n";
  EXPECT_EQ(parse_nccl_tests(old, "a2a.txt", "alltoall_perf").collective, "all_to_all");
  EXPECT_EQ(parse_nccl_tests(old, "a2a.txt", "alltoall_perf").ranks, 0);
  try {
    parse_nccl_tests(old, "a2a.txt");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a2a.txt: the file does not say which collective it measured"),
              std::string::npos)
        << e.what();
  }
}

std::string first_error(const std::string& text, std::optional<std::string> op = std::nullopt) {
  try {
    parse_nccl_tests(text, "f.txt", std::move(op));
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "";
}

TEST(NcclTestsTest, EveryProblemNamesItsLine) {
  const std::string head = "# Collective test starting: all_reduce_perf\n";
  EXPECT_EQ(first_error(head + "  1024  256  float  sum  -1  25.1  0.04  0.06  0\n"),
            "f.txt: line 2: expected a result row of 13 fields (size count type redop root time algbw busbw "
            "#wrong time algbw busbw #wrong), found 9 fields");
  EXPECT_EQ(first_error(head + "  1024  256  float  sum  -1  abc  0.04  0.06  0  24.9  0.04  0.06  0\n"),
            "f.txt: line 2: time (us): expected a positive number, found 'abc'");
  EXPECT_EQ(first_error(head + "  1024  256  float  sum  -1  0  0.04  0.06  0  24.9  0.04  0.06  0\n"),
            "f.txt: line 2: time (us): expected a positive number, found '0'");
  EXPECT_EQ(first_error(head + "  1024  256  float  sum  -1  25.1  -1  0.06  0  24.9  0.04  0.06  0\n"),
            "f.txt: line 2: algbw (GB/s): expected a non-negative number, found '-1'");
  EXPECT_EQ(first_error(head + "  1024  256  float  sum  -1  25.1  0.04  0.06  3  24.9  0.04  0.06  0\n"),
            "f.txt: line 2: #wrong: the test found '3' wrong elements; a failed run is no measurement");
  EXPECT_EQ(first_error("# Collective test starting: sendrecv_perf\n"),
            "f.txt: line 1: collective test 'sendrecv_perf' is not supported (supported: all_reduce_perf, "
            "all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf)");
  EXPECT_EQ(first_error(head + "# nothing measured\n"),
            "f.txt: no result rows (size count type redop root time algbw busbw #wrong time algbw busbw #wrong)");
  EXPECT_EQ(first_error(kAllReduce, "alltoall_perf"), "f.txt: line 2: the file measured all_reduce, but --op says all_to_all");
  EXPECT_EQ(first_error(kAllReduce, "frobnicate"),
            "--op: 'frobnicate' is not a collective nccl-tests measures (supported: all_reduce_perf, "
            "all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf)");
  EXPECT_EQ(first_error(head + "#  Rank  1 Group  0 Pid  1 on h device  0 [0] GPU\n" +
                        "  8  2  float  sum  -1  10.0  0.00  0.00  0  9.0  0.00  0.00  0\n"),
            "f.txt: the rank lines skip rank 0 (of 2)");
  EXPECT_EQ(first_error(head + "#  Rank  0 Group  0 Pid  1 on h device  0 [0] GPU\n" +
                        "#  Rank  0 Group  0 Pid  1 on h device  0 [0] GPU\n"),
            "f.txt: line 3: rank 0 is listed twice");
  // Every bad line is reported, not just the first.
  try {
    parse_nccl_tests(head + "1 2\n3 4\n", "f.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 2u);
  }
}

}  // namespace
}  // namespace zx::calibration
