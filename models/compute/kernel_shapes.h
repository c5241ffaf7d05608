// File: models/compute/kernel_shapes.h
//
// The shape arithmetic of the compute cost models, alone: how a GEMM's
// output tiles fill the SMs (tile and wave quantisation), which GEMM shapes
// cuBLAS's fastest kernels take (16-byte alignment), and how many bytes a
// fused table-batched embedding (FBGEMM TBE) kernel moves. Pure functions of
// shapes and a few device numbers, with no time in them: the cost models
// (cost_models.h) turn them into kernel times, and calibration fits the
// device parameters against measurements with these very functions, so
// there is one copy of each formula (calibration may see a model's
// parameters and these, never the cost models or the engine; //:BUILD.bazel).

#ifndef ZIONSIM_MODELS_COMPUTE_KERNEL_SHAPES_H_
#define ZIONSIM_MODELS_COMPUTE_KERNEL_SHAPES_H_

#include <cstdint>

#include "models/compute/device_profile.h"

namespace zx::models {

/// HBM's access granularity: the 32-byte sector of A100's and H100's L2
/// (NVIDIA's A100 and H100 tuning guides, "L2 cache" / "memory access").
inline constexpr std::int64_t kSectorBytes = 32;

/// cuBLAS documentation, "Tensor Core Usage": leading dimensions and
/// pointers that are multiples of 16 bytes for the fastest kernels.
inline constexpr std::int64_t kGemmAlignmentBytes = 16;

/// Tile and wave quantisation of a (batched) m x n GEMM output, in (0, 1]:
/// the best of the large tile_m x tile_n tile (rate 1.0), a half-width tile
/// (0.95) and a quarter-size tile (0.85, rates relative to the large tile's:
/// an assumption to calibrate), each charged for a partial last wave of
/// sm_count tiles and for padded work in partial tiles. Every argument > 0
/// (std::invalid_argument otherwise).
double gemm_quantisation(std::int64_t m, std::int64_t n, std::int64_t batch, int sm_count, int tile_m,
                         int tile_n);

/// Whether an m x n x k GEMM of `element_bytes`-byte elements has every
/// dimension a multiple of kGemmAlignmentBytes.
bool gemm_aligned_bytes(std::int64_t m, std::int64_t n, std::int64_t k, int element_bytes);

/// Bytes HBM moves for one access of `bytes`: rounded up to the sector.
std::int64_t sector_bytes(std::int64_t bytes);

/// Pooled embedding lookups of one GPU's share of tables.
struct EmbeddingShape {
  std::int64_t batch = 0;    ///< samples looked up on this GPU
  std::int64_t tables = 0;   ///< tables (or table shards) on this GPU
  double pooling = 0;        ///< average lookups per sample per table
  std::int64_t dim = 0;      ///< embedding dimension (of the shard)
  DataType weight_type = DataType::kFp16;
  DataType output_type = DataType::kFp16;
  int index_bytes = 8;  ///< int64 indices, as TorchRec passes them
};

/// Throws std::invalid_argument unless batch, tables, dim and pooling are
/// positive.
void check_embedding_shape(const EmbeddingShape& shape);

/// What an embedding kernel moves: `gathered` bytes of random rows (at the
/// gather bandwidth), `streamed` bytes read or written in sequence, and
/// `accesses` random row accesses (each with a fixed cost).
struct EmbeddingTraffic {
  double gathered = 0;
  double streamed = 0;
  double accesses = 0;
};

/// Lookups of a shape: batch x tables x pooling.
double embedding_lookups(const EmbeddingShape& shape);

/// The forward TBE kernel: every lookup's row (sector-rounded), the indices
/// and the pooled outputs; one access per lookup.
EmbeddingTraffic tbe_forward_traffic(const EmbeddingShape& shape);

/// The fused backward with exact row-wise AdaGrad: per lookup its row and
/// its one-float state, each read and written back (sector-rounded; two
/// accesses), the pooled gradients and indices read, and the sort of the
/// lookups by row: two radix passes, each reading and writing 12-byte keys
/// (an int64 row and an int32 position; the pass count is an assumption).
EmbeddingTraffic tbe_backward_traffic(const EmbeddingShape& shape);

/// The unfused baseline's backward, per table: a backward kernel reads the
/// pooled gradients and indices and writes one dense gradient row per
/// lookup; an optimizer kernel reads them back with the indices and
/// updates rows and state as the fused one does.
EmbeddingTraffic tbe_unfused_backward_traffic(const EmbeddingShape& shape);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_COMPUTE_KERNEL_SHAPES_H_
