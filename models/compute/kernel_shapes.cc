// File: models/compute/kernel_shapes.cc
//
// The shape arithmetic of the compute cost models (see kernel_shapes.h).

#include "models/compute/kernel_shapes.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace zx::models {
namespace {

void require_positive(std::int64_t v, const char* what) {
  if (v <= 0) throw std::invalid_argument(fmt::format("cost model: {} must be positive, got {}", what, v));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

constexpr double kSortKeyBytes = 12;  // int64 row index + int32 position
constexpr double kSortPasses = 2;     // assumption: radix sort passes, read + write each
constexpr double kStateSectorBytes = kSectorBytes;  // one fp32 of row-wise state, sector-rounded
// Random row accesses per backward lookup: the row and its row-wise state
// (each read, updated and written back while in L2: one access each).
constexpr double kBackwardAccesses = 2;

double row_sector_bytes(const EmbeddingShape& s) {
  return static_cast<double>(sector_bytes(s.dim * element_bytes(s.weight_type)));
}

double pooled_bytes(const EmbeddingShape& s) {
  return static_cast<double>(s.batch * s.tables * s.dim * element_bytes(s.output_type));
}

}  // namespace

double gemm_quantisation(std::int64_t m, std::int64_t n, std::int64_t batch, int sm_count, int tile_m,
                         int tile_n) {
  require_positive(m, "GEMM m");
  require_positive(n, "GEMM n");
  require_positive(batch, "GEMM batch");
  require_positive(sm_count, "SM count");
  require_positive(tile_m, "GEMM tile m");
  require_positive(tile_n, "GEMM tile n");
  struct Tile {
    std::int64_t m, n;
    double rate;  // relative to the large tile; assumption to calibrate
  };
  const Tile tiles[] = {{tile_m, tile_n, 1.0},
                        {tile_m, std::max<std::int64_t>(1, tile_n / 2), 0.95},
                        {std::max<std::int64_t>(1, tile_m / 2), std::max<std::int64_t>(1, tile_n / 2), 0.85}};
  double best = 0;
  for (const Tile& t : tiles) {
    const std::int64_t count = ceil_div(m, t.m) * ceil_div(n, t.n) * batch;
    const std::int64_t waves = ceil_div(count, sm_count);
    const double wave_efficiency = static_cast<double>(count) / static_cast<double>(waves * sm_count);
    // Work in partially filled tiles is wasted too.
    const double fill =
        static_cast<double>(m * n) / static_cast<double>(ceil_div(m, t.m) * t.m * ceil_div(n, t.n) * t.n);
    best = std::max(best, t.rate * wave_efficiency * fill);
  }
  return best;
}

bool gemm_aligned_bytes(std::int64_t m, std::int64_t n, std::int64_t k, int element_bytes) {
  return (m * element_bytes) % kGemmAlignmentBytes == 0 && (n * element_bytes) % kGemmAlignmentBytes == 0 &&
         (k * element_bytes) % kGemmAlignmentBytes == 0;
}

std::int64_t sector_bytes(std::int64_t bytes) { return ceil_div(bytes, kSectorBytes) * kSectorBytes; }

void check_embedding_shape(const EmbeddingShape& s) {
  require_positive(s.batch, "embedding batch");
  require_positive(s.tables, "embedding tables");
  require_positive(s.dim, "embedding dim");
  if (!(s.pooling > 0)) throw std::invalid_argument("cost model: embedding pooling must be positive");
}

double embedding_lookups(const EmbeddingShape& s) {
  return static_cast<double>(s.batch) * static_cast<double>(s.tables) * s.pooling;
}

EmbeddingTraffic tbe_forward_traffic(const EmbeddingShape& s) {
  check_embedding_shape(s);
  const double lookups = embedding_lookups(s);
  return EmbeddingTraffic{.gathered = lookups * row_sector_bytes(s),
                          .streamed = lookups * s.index_bytes + pooled_bytes(s),
                          .accesses = lookups};
}

EmbeddingTraffic tbe_backward_traffic(const EmbeddingShape& s) {
  check_embedding_shape(s);
  const double lookups = embedding_lookups(s);
  return EmbeddingTraffic{
      .gathered = lookups * (2 * row_sector_bytes(s) + 2 * kStateSectorBytes),
      .streamed = pooled_bytes(s) + lookups * s.index_bytes + lookups * kSortKeyBytes * 2 * kSortPasses,
      .accesses = kBackwardAccesses * lookups};
}

EmbeddingTraffic tbe_unfused_backward_traffic(const EmbeddingShape& s) {
  check_embedding_shape(s);
  const double lookups = embedding_lookups(s);
  const double grad_rows = lookups * static_cast<double>(s.dim * element_bytes(s.weight_type));
  // Backward kernels: read pooled grads, write one gradient row per lookup.
  const double backward_streamed = pooled_bytes(s) + lookups * s.index_bytes + grad_rows;
  // Optimizer kernels: read the gradients back, update rows and state.
  const double optimizer_gathered = lookups * (2 * row_sector_bytes(s) + 2 * kStateSectorBytes);
  const double optimizer_streamed = grad_rows + lookups * s.index_bytes;
  return EmbeddingTraffic{.gathered = optimizer_gathered,
                          .streamed = backward_streamed + optimizer_streamed,
                          .accesses = kBackwardAccesses * lookups};
}

}  // namespace zx::models
