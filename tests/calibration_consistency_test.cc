// File: tests/calibration_consistency_test.cc
//
// Calibration restates the GEMM shape model (calibration/gemm_shape_model.h)
// because the layering keeps it from linking the cost models. This test pins
// the two together: for a sweep of shapes, batch counts and tiles, the cost
// model's gemm_efficiency with compute_efficiency = 1 and gemm_k_half = 0 is
// exactly calibration's quantisation factor, and with them set it is
// ce x Q x k / (k + k_half), the formula calibration fits.

#include <cstdint>

#include <gtest/gtest.h>

#include "calibration/gemm_shape_model.h"
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
                calibration::gemm_quantisation(m, n, batch, sm, p.gemm_tile_m, p.gemm_tile_n);
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

// The alignment rule: calibration splits GEMM points by its own copy of
// it, so the two must say the same for every dtype. And the cost model
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
          EXPECT_EQ(aligned, calibration::gemm_aligned(m, n, k, models::element_bytes(type)))
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

}  // namespace
}  // namespace zx
