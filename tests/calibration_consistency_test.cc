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

}  // namespace
}  // namespace zx
