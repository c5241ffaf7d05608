// Tests of the memory estimate that guards what-if sizes: it covers the peaks
// measured for model A (README, "How long a what-if takes") without
// overstating them by more than a third, grows with the square of the GPUs,
// and the machine's available memory is read from /proc/meminfo and cgroup v2
// text, refusing malformed text rather than guessing.

#include "experiments/memory_estimate.h"

#include <gtest/gtest.h>

namespace zx::experiments {
namespace {

constexpr double kMiB = 1024.0 * 1024;

constexpr NetworkMemory kFlows = NetworkMemory::kFlows;
constexpr NetworkMemory kAnalytical = NetworkMemory::kAnalytical;
constexpr NetworkMemory kLinkShare = NetworkMemory::kLinkShare;

TEST(MemoryEstimateTest, CoversTheMeasuredPeaks) {
  struct Measured {
    std::int64_t gpus;
    double peak_mib;
    NetworkMemory memory;
  };
  // README, "How long a what-if takes" (one run each, 2-core machine); the
  // linkshare peaks with the all-to-all's plan generated (2026-12-07).
  for (const Measured& m : {Measured{512, 314, kFlows}, Measured{1024, 1208, kFlows}, Measured{2048, 4510, kFlows},
                            Measured{4096, 17.7 * 1024, kFlows}, Measured{512, 158, kAnalytical},
                            Measured{1024, 553, kAnalytical}, Measured{1024, 111.0, kLinkShare},
                            Measured{2048, 311.9, kLinkShare}, Measured{4096, 1002.3, kLinkShare},
                            Measured{8192, 3795.1, kLinkShare}}) {
    const double estimate = static_cast<double>(estimated_simulation_bytes(m.gpus, m.memory)) / kMiB;
    EXPECT_GE(estimate, m.peak_mib) << m.gpus;
    EXPECT_LE(estimate, m.peak_mib * 1.35) << m.gpus;
  }
  // Squared growth: 32,768 GPUs (4,096 ZionEX nodes) need more than a TiB.
  EXPECT_GT(estimated_simulation_bytes(32768, kFlows), std::int64_t{1} << 40);
  const double ratio = static_cast<double>(estimated_simulation_bytes(8192, kFlows)) /
                       static_cast<double>(estimated_simulation_bytes(4096, kFlows));
  EXPECT_NEAR(ratio, 4.0, 0.01);
  EXPECT_LT(estimated_simulation_bytes(8192, kAnalytical), estimated_simulation_bytes(8192, kFlows));
  EXPECT_LT(estimated_simulation_bytes(8192, kLinkShare), estimated_simulation_bytes(8192, kAnalytical) / 8);
}

TEST(MemoryEstimateTest, NamesWhatEachFidelityKeeps) {
  EXPECT_EQ(network_memory("flow"), kFlows);
  EXPECT_EQ(network_memory("coalesced"), kFlows);
  EXPECT_EQ(network_memory("analytical"), kAnalytical);
  EXPECT_EQ(network_memory("linkshare"), kLinkShare);
  EXPECT_EQ(per_pair_text(kFlows), "about 1.3 KB per pair of GPUs for the all-to-alls' flows in flight");
  EXPECT_EQ(per_pair_text(kLinkShare), "about 80 bytes per pair of GPUs for the all-to-alls' byte matrices");
}

TEST(MemoryEstimateTest, CoversTheMeasuredPeaksWhenEveryFlowIsKept) {
  struct Measured {
    std::int64_t gpus;
    double peak_mib;
    NetworkMemory memory;
  };
  // `zionsim whatif --model dlrm-a --nodes N --timeline FILE`, peak RSS (one
  // run each, 2-core machine): every flow's record is kept to the end.
  for (const Measured& m : {Measured{256, 269.3, kFlows}, Measured{512, 681.8, kFlows},
                            Measured{1024, 1976.5, kFlows}, Measured{512, 654.0, kAnalytical}}) {
    const double estimate =
        static_cast<double>(estimated_simulation_bytes(m.gpus, m.memory, /*keep_flows=*/true)) / kMiB;
    EXPECT_GE(estimate, m.peak_mib) << m.gpus;
    EXPECT_LE(estimate, m.peak_mib * 1.35) << m.gpus;
  }
  // Kept records cost more than flows in flight, and the fidelity does not
  // shrink them.
  EXPECT_GT(estimated_simulation_bytes(1024, kFlows, true), estimated_simulation_bytes(1024, kFlows, false));
  EXPECT_EQ(estimated_simulation_bytes(1024, kAnalytical, true), estimated_simulation_bytes(1024, kFlows, true));
  EXPECT_EQ(estimated_simulation_bytes(1024, kLinkShare, true), estimated_simulation_bytes(1024, kFlows, true));
}

TEST(MemoryEstimateTest, FormatsGib) {
  EXPECT_EQ(gib_text(std::int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(gib_text(std::int64_t{81} << 30), "81 GiB");
}

TEST(MemoryEstimateTest, ReadsMemAvailable) {
  EXPECT_EQ(parse_mem_available("MemTotal:       24576000 kB\nMemFree:         1000 kB\n"
                                "MemAvailable:   23729228 kB\nBuffers: 1 kB\n"),
            std::int64_t{23729228} * 1024);
  EXPECT_EQ(parse_mem_available("MemAvailable: 5 kB"), 5 * 1024);
  EXPECT_FALSE(parse_mem_available("MemTotal: 1 kB\n"));
  EXPECT_FALSE(parse_mem_available("MemAvailable: lots kB\n"));
  EXPECT_FALSE(parse_mem_available("MemAvailable: 12 MB\n"));
  EXPECT_FALSE(parse_mem_available(""));
}

TEST(MemoryEstimateTest, ReadsCgroupHeadroom) {
  EXPECT_EQ(parse_cgroup_headroom("8589934592\n", "1073741824\n"), std::int64_t{7} << 30);
  EXPECT_EQ(parse_cgroup_headroom("100\n", "200\n"), 0);
  EXPECT_FALSE(parse_cgroup_headroom("max\n", "1073741824\n"));
  EXPECT_FALSE(parse_cgroup_headroom("", ""));
}

}  // namespace
}  // namespace zx::experiments
