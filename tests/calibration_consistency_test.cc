// File: tests/calibration_consistency_test.cc
//
// Calibration fits device parameters through the cost models' shape
// arithmetic (models/compute/kernel_shapes.h), which it may link where the
// cost models themselves are out of its reach. This test pins the formulas
// calibration fits to the times the cost models compute: for a sweep of
// shapes, batch counts and tiles, gemm_efficiency is exactly
// ce x Q x k / (k + k_half) with Q = gemm_quantisation; the alignment rule
// is the same by type and by element size; and a TBE kernel's time is
// c + accesses x row_access + gathered / gather_bw + streamed / stream_bw
// over tbe_*_traffic's bytes.

#include <cstdint>

#include <gtest/gtest.h>

#include "models/compute/kernel_shapes.h"
#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"

namespace zx {
namespace {

TEST(CalibrationConsistency, GemmShapeModelMatchesCostModel) {
  models::DeviceProfile p = models::builtin_device_profile("h200");
  for (int sm : {108, 132}) {
    for (int tile : {64, 128, 256}) {
      p.sm_count = sm;
      p.gemm_tile_m = tile;
      p.gemm_tile_n = tile;
      for (std::int64_t m : {1, 13, 128, 1000, 4096, 8192}) {
        for (std::int64_t n : {1, 27, 256, 3994}) {
          for (std::int64_t batch : {1, 7, 2048}) {
            p.compute_efficiency = 1.0;
            p.gemm_k_half = 0;
            const double q =
                models::gemm_quantisation(m, n, batch, sm, p.gemm_tile_m, p.gemm_tile_n);
            EXPECT_DOUBLE_EQ(models::gemm_efficiency(p, m, n, 512, batch), q);
            p.compute_efficiency = 0.7;
            p.gemm_k_half = 96;
            EXPECT_DOUBLE_EQ(models::gemm_efficiency(p, m, n, 512, batch),
                             0.7 * q * 512.0 / (512.0 + 96.0));
          }
        }
      }
    }
  }
}

// The alignment rule: calibration splits GEMM points by element size, the
// cost model by type; the two must say the same for every dtype. And the cost model
// charges gemm_unaligned_efficiency exactly on the shapes it calls unaligned:
// in the compute-bound regime the time scales by its inverse.
TEST(CalibrationConsistency, GemmAlignmentRuleMatchesCostModel) {
  using models::DataType;
  models::DeviceProfile p = models::builtin_device_profile("h200");
  p.gemm_unaligned_efficiency = 0.5;
  models::DeviceProfile aligned_only = p;
  aligned_only.gemm_unaligned_efficiency = 1.0;
  int unaligned = 0;
  for (DataType type : {DataType::kFp32, DataType::kTf32, DataType::kFp16, DataType::kBf16, DataType::kFp8}) {
    for (std::int64_t m : {4096, 4094, 3994, 2048}) {
      for (std::int64_t n : {4096, 826, 4092}) {
        for (std::int64_t k : {4096, 13, 4088, 4080}) {
          const bool aligned = models::gemm_aligned(m, n, k, type);
          EXPECT_EQ(aligned, models::gemm_aligned_bytes(m, n, k, models::element_bytes(type)))
              << m << "x" << n << "x" << k << " " << models::to_string(type);
          if (type == DataType::kFp8) continue;  // no fp8 peak on every profile
          const double t = models::gemm(p, m, n, k, type).time.to_seconds();
          const double t_aligned = models::gemm(aligned_only, m, n, k, type).time.to_seconds();
          const bool compute_bound = models::gemm(aligned_only, m, n, k, type).compute_bound;
          if (aligned) {
            EXPECT_EQ(t, t_aligned);
          } else if (compute_bound) {
            ++unaligned;
            const double launch = p.kernel_launch.to_seconds();
            EXPECT_NEAR((t - launch) / (t_aligned - launch), 2.0, 1e-6)
                << m << "x" << n << "x" << k << " " << models::to_string(type);
          }
        }
      }
    }
  }
  EXPECT_GT(unaligned, 20);
  // Spot checks of the rule: 16 bytes of each dimension's element.
  EXPECT_TRUE(models::gemm_aligned(2048, 4096, 4088, DataType::kBf16));   // 4088 = 8 x 511
  EXPECT_FALSE(models::gemm_aligned(2048, 3994, 3994, DataType::kBf16));  // model A's MLP
  EXPECT_FALSE(models::gemm_aligned(2048, 826, 826, DataType::kFp16));    // model I's MLP
  EXPECT_TRUE(models::gemm_aligned(2048, 4092, 4092, DataType::kFp32));   // 4 x 1023
  EXPECT_FALSE(models::gemm_aligned(2048, 4092, 4092, DataType::kBf16));
  EXPECT_FALSE(models::gemm_aligned(2048, 4088, 4088, DataType::kFp8));   // 16 elements
}

// The TBE kernels' times are the formula calibration fits over the traffic
// kernel_shapes.h counts, and the counts are the closed forms: rows rounded
// to 32-byte sectors, int64 indices, pooled outputs, and for the backward
// the row-wise state and two radix passes over 12-byte keys.
TEST(CalibrationConsistency, TbeTimesAreTheFittedFormulaOverTheSharedTraffic) {
  models::DeviceProfile p = models::builtin_device_profile("a100-40gb");
  const models::EmbeddingShape s{.batch = 512, .tables = 32, .pooling = 20, .dim = 66,
                                 .weight_type = models::DataType::kFp16,
                                 .output_type = models::DataType::kFp32, .index_bytes = 8};
  const double lookups = 512.0 * 32 * 20;
  const models::EmbeddingTraffic f = models::tbe_forward_traffic(s);
  EXPECT_EQ(f.gathered, lookups * 160);  // 132 bytes -> 5 sectors
  EXPECT_EQ(f.streamed, lookups * 8 + 512.0 * 32 * 66 * 4);
  EXPECT_EQ(f.accesses, lookups);
  const models::EmbeddingTraffic b = models::tbe_backward_traffic(s);
  EXPECT_EQ(b.gathered, lookups * (2 * 160 + 2 * 32));
  EXPECT_EQ(b.streamed, 512.0 * 32 * 66 * 4 + lookups * 8 + lookups * 12 * 2 * 2);
  EXPECT_EQ(b.accesses, 2 * lookups);
  const double gather_bw = static_cast<double>(p.hbm_bandwidth.count()) * p.embedding_hbm_efficiency;
  const double stream_bw = p.effective_hbm_bytes_per_s();
  const auto fitted = [&](const models::EmbeddingTraffic& t) {
    return t.gathered / gather_bw + t.streamed / stream_bw + t.accesses * p.embedding_row_access_ns * 1e-9;
  };
  const double launch = p.kernel_launch.to_seconds();
  EXPECT_NEAR(models::embedding_forward_fused(p, s).time.to_seconds() - launch, fitted(f), 2e-12);
  EXPECT_NEAR(models::embedding_backward_fused(p, s).time.to_seconds() - launch -
                  p.embedding_backward_overhead_ns * 1e-9,
              fitted(b), 2e-12);
  EXPECT_EQ(models::sector_bytes(1), 32);
  EXPECT_EQ(models::sector_bytes(32), 32);
  EXPECT_EQ(models::sector_bytes(33), 64);
  // One tile on one SM, exactly its size: no quantisation loss.
  EXPECT_EQ(models::gemm_quantisation(128, 128, 1, 1, 128, 128), 1.0);
  // 128 x 192 on two SMs: the large tile pads to 256 (0.75), the half-width
  // tile leaves a wave half idle (0.95 x 0.75); the quarter tile's six
  // fill three whole waves (0.85).
  EXPECT_DOUBLE_EQ(models::gemm_quantisation(128, 192, 1, 2, 128, 128), 0.85);
}

}  // namespace
}  // namespace zx
