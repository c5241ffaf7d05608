// File: calibration/testing/synthetic.h
//
// Synthetic kernels_ref measurement files from known parameters, for tests:
// the sweep of kernels_ref/suite.cu (launch, copies, streaming kernels, TBE,
// GEMMs, dot interaction), each time computed with the cost model's formula
// (calibrate.h) and multiplied by exp(noise x z), z standard normal from a
// Box-Muller transform of std::mt19937_64(seed) outputs (both fully
// specified by the C++ standard, so the same bits on every platform).

#ifndef ZIONSIM_CALIBRATION_TESTING_SYNTHETIC_H_
#define ZIONSIM_CALIBRATION_TESTING_SYNTHETIC_H_

#include <cstdint>
#include <string>

namespace zx::calibration::testing {

struct SyntheticTruth {
  std::string base_profile = "h200";  ///< peaks, HBM bandwidth, tiles
  int sm_count = 132;
  double compute_efficiency = 0.78;  ///< every GEMM dtype
  double gemm_k_half = 96;
  /// Rate of GEMMs with a dimension off 16 bytes (calibration::gemm_aligned),
  /// relative to aligned ones: every GEMM dtype.
  double gemm_unaligned_efficiency = 0.6;
  /// GEMM output tile of the wave quantisation; 0: the base profile's.
  int gemm_tile_m = 0;
  int gemm_tile_n = 0;
  double hbm_efficiency = 0.88;
  double embedding_hbm_efficiency = 0.62;
  double embedding_row_access_ns = 0.05;  ///< per random row access (20 G/s)
  double launch_ns = 2400;          ///< per empty kernel
  double event_overhead_ns = 1800;  ///< launch family intercept
  double h2d_gbyte_per_s = 52;
  double d2h_gbyte_per_s = 49;
  double d2d_gbyte_per_s = 1900;  ///< size / time (the suite's bytes are 2 x size)
  double copy_latency_ns = 2100;
  double stream_intercept_ns = 2600;  ///< streaming kernels' fixed time
  double tbe_intercept_ns = 6000;             ///< forward runs' fixed time
  double tbe_backward_overhead_ns = 14000;     ///< backward runs' fixed time beyond it
  double noise = 0.02;  ///< log-normal sigma
  std::uint64_t seed = 42;
};

/// The measurement file (JSON lines, provenance first) for `truth`.
std::string synthetic_measurements(const SyntheticTruth& truth);

}  // namespace zx::calibration::testing

#endif  // ZIONSIM_CALIBRATION_TESTING_SYNTHETIC_H_
