// File: calibration/gemm_shape_model.h
//
// The shape-only part of the GEMM cost model: tile and wave quantisation,
// exactly as models/compute/cost_models.cc's gemm_efficiency computes it
// (best of the large tile at 1.0, half-width at 0.95, quarter-size at 0.85
// of the large tile's rate; partial last waves idle SMs; padded tile work
// is wasted). Calibration fits compute_efficiency and gemm_k_half in
//
//   efficiency = compute_efficiency x quantisation(m, n, batch) x k / (k + k_half)
//                x (gemm_aligned(m, n, k) ? 1 : gemm_unaligned_efficiency)
//
// and cannot link the cost models (layering: calibration sees only the
// models' parameter structs), so the formula is restated here;
// tests/calibration_consistency_test.cc checks the two agree.

#ifndef ZIONSIM_CALIBRATION_GEMM_SHAPE_MODEL_H_
#define ZIONSIM_CALIBRATION_GEMM_SHAPE_MODEL_H_

#include <algorithm>
#include <cstdint>

namespace zx::calibration {

/// Tile/wave quantisation factor in (0, 1] of a (batched) m x n GEMM output.
inline double gemm_quantisation(std::int64_t m, std::int64_t n, std::int64_t batch, int sm_count,
                                int tile_m, int tile_n) {
  const auto ceil_div = [](std::int64_t a, std::int64_t b) { return (a + b - 1) / b; };
  struct Tile {
    std::int64_t m, n;
    double rate;
  };
  const Tile tiles[] = {
      {tile_m, tile_n, 1.0},
      {tile_m, std::max<std::int64_t>(1, tile_n / 2), 0.95},
      {std::max<std::int64_t>(1, tile_m / 2), std::max<std::int64_t>(1, tile_n / 2), 0.85}};
  double best = 0;
  for (const Tile& t : tiles) {
    const std::int64_t count = ceil_div(m, t.m) * ceil_div(n, t.n) * batch;
    const std::int64_t waves = ceil_div(count, sm_count);
    const double wave_efficiency =
        static_cast<double>(count) / static_cast<double>(waves * sm_count);
    const double fill = static_cast<double>(m * n) /
                        static_cast<double>(ceil_div(m, t.m) * t.m * ceil_div(n, t.n) * t.n);
    best = std::max(best, t.rate * wave_efficiency * fill);
  }
  return best;
}

/// Whether an m x n x k GEMM of `element_bytes`-byte elements has every
/// dimension a multiple of 16 bytes (models::gemm_aligned): its points fit
/// compute_efficiency and gemm_k_half, the others gemm_unaligned_efficiency.
inline bool gemm_aligned(std::int64_t m, std::int64_t n, std::int64_t k, int element_bytes) {
  constexpr std::int64_t kAlignmentBytes = 16;
  return (m * element_bytes) % kAlignmentBytes == 0 && (n * element_bytes) % kAlignmentBytes == 0 &&
         (k * element_bytes) % kAlignmentBytes == 0;
}

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_GEMM_SHAPE_MODEL_H_
