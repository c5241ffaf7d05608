// File: kernels_ref/reference.h
//
// CPU reference implementations of every kernel in the CUDA suite
// (suite.cu), and the byte and FLOP formulas the suite reports. The GPU
// harness runs each kernel on small sizes, runs the same computation here,
// and compares before it times anything. Plain C++17 with no dependencies:
// this file must build with nvcc alone on a bare GPU machine, and under Bazel
// (where reference_test.cc tests it in CI).
//
// Sources:
//   - Table-batched embeddings (TBE): FBGEMM's split_table_batched_embeddings
//     benchmark knobs (T tables, E rows, D dim, L bag size, B batch, weights
//     fp32/fp16, uniform or Zipf(alpha) indices) and its exact row-wise AdaGrad
//     (fbgemm_gpu/codegen, EXACT_ROWWISE_ADAGRAD): per touched row,
//     g = sum of the row's gradients, m += mean(g^2), w -= lr g / (sqrt(m) + eps).
//   - fp16: IEEE 754 binary16; bf16: the top 16 bits of binary32; both
//     round to nearest, ties to even (as __float2half_rn and __float2bfloat16).
//   - Zipf sampling: Hormann and Derflinger, "Rejection-inversion to generate
//     variates from monotone discrete distributions" (1996), as in Apache
//     Commons RNG's RejectionInversionZipfSampler.
//   - Byte formulas: the same counts as models/compute/cost_models.cc, so
//     calibration can fit its efficiencies directly (see docs/calibration.md).

#ifndef ZIONSIM_KERNELS_REF_REFERENCE_H_
#define ZIONSIM_KERNELS_REF_REFERENCE_H_

#include <cstdint>
#include <vector>

namespace kref {

// --- number formats ---------------------------------------------------------

std::uint16_t float_to_half_bits(float value);
float half_bits_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(std::uint16_t bits);

/// Element formats the suite stores tensors in.
enum class Format { kFp32, kFp16, kBf16 };
const char* format_name(Format format);
int format_bytes(Format format);
/// `value` rounded to `format` and back (identity for fp32).
float round_to(Format format, float value);

// --- deterministic random numbers ------------------------------------------

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, same bits everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, 1) from the top 53 bits.
  double uniform();

 private:
  std::uint64_t state_;
};

enum class IndexDistribution { kUniform, kZipf };
const char* distribution_name(IndexDistribution distribution);

/// `count` row indices in [0, rows): uniform, or Zipf with exponent `alpha`
/// (> 0, != 1 not required) where row 0 is the hottest, as FBGEMM's benchmark
/// generates them (numpy zipf, hot rows first). Same seed, same indices.
std::vector<std::int64_t> generate_indices(std::int64_t count, std::int64_t rows,
                                           IndexDistribution distribution, double alpha,
                                           std::uint64_t seed);

// --- GEMM -----------------------------------------------------------------

/// C[m x n] = A[m x k] B[k x n], column-major like cuBLAS, fp32 accumulation
/// over k in order. Inputs are expected already rounded to the GEMM's type.
void gemm_ref(int m, int n, int k, const float* a, const float* b, float* c);

/// Batched: `batch` independent GEMMs at strides m*k, k*n and m*n.
void gemm_batched_ref(int m, int n, int k, int batch, const float* a, const float* b, float* c);

// --- table-batched embeddings ----------------------------------------------

struct TbeShape {
  std::int64_t tables = 0;   ///< T
  std::int64_t rows = 0;     ///< E, rows per table
  std::int64_t dim = 0;      ///< D
  std::int64_t pooling = 0;  ///< L, lookups per bag (fixed, FBGEMM's --bag-size)
  std::int64_t batch = 0;    ///< B
  std::int64_t lookups() const { return tables * batch * pooling; }
};

/// Forward with sum pooling. weights: [T][E][D]; indices: [T][B][L];
/// out: [B][T][D] (FBGEMM's B x (T*D) output), each bag summed in fp32 in
/// lookup order and rounded to `out_format`.
void tbe_forward_ref(const TbeShape& shape, const float* weights, const std::int64_t* indices,
                     Format out_format, float* out);

/// Backward fused with exact row-wise AdaGrad, deterministic: for every
/// touched row in ascending (table, row) order, its gradient is the sum of
/// grad_out rows of its lookups in ascending lookup order (what a stable sort
/// by row gives the GPU). weights [T][E][D] (rounded to `weight_format` after
/// the update) and momentum [T][E] are updated in place.
void tbe_backward_adagrad_ref(const TbeShape& shape, const std::int64_t* indices,
                              const float* grad_out, Format weight_format, float learning_rate,
                              float eps, float* weights, float* momentum);

// --- conversions, all-to-all layout, interaction, optimizer -----------------

/// Round-trips through `to`: out[i] = round_to(to, in[i]).
void convert_ref(std::int64_t n, const float* in, Format to, float* out);

/// All-to-all pack: pooled embeddings in [T][B][D] (one kernel per table
/// wrote them) into per-destination chunks [R][B/R][T][D], so rank r's
/// chunk is contiguous. B must be divisible by R.
void a2a_pack_ref(std::int64_t tables, std::int64_t batch, std::int64_t dim, std::int64_t ranks,
                  const float* in, float* out);
/// The inverse of a2a_pack_ref.
void a2a_unpack_ref(std::int64_t tables, std::int64_t batch, std::int64_t dim, std::int64_t ranks,
                    const float* in, float* out);

/// DLRM dot interaction: per sample, Z[F x F] = X X^T of X[F x D]
/// (x: [B][F][D] row-major, z: [B][F][F]); the GPU runs it as one strided
/// batched GEMM. The lower-triangle gather that follows is not included.
void dot_interaction_ref(std::int64_t batch, std::int64_t features, std::int64_t dim,
                         const float* x, float* z);

/// Elementwise AdaGrad: s += g^2; w -= lr g / (sqrt(s) + eps).
void adagrad_step_ref(std::int64_t n, const float* grad, float learning_rate, float eps,
                      float* weight, float* state);

/// Reduction as in an all-reduce's reduce step: out[i] = a[i] + b[i].
void reduce_add_ref(std::int64_t n, const float* a, const float* b, float* out);

// --- work formulas (reported with every measurement) ------------------------

constexpr std::int64_t kSectorBytes = 32;  // A100/H100 DRAM access granularity
constexpr std::int64_t kIndexBytes = 8;    // int64 indices, as TorchRec passes them
std::int64_t sector_round(std::int64_t bytes);

/// 2 m n k batch.
double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch);
/// (mk + kn + mn) batch element bytes: each operand once.
double gemm_bytes(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                  int element_bytes);

/// The two traffic classes of a TBE kernel, as cost_models.cc counts them.
struct TbeBytes {
  double gathered = 0;  ///< random rows, sector-rounded
  double streamed = 0;  ///< indices, pooled outputs, sort keys
  double total() const { return gathered + streamed; }
};
/// Forward: lookups x sector(D x wb) gathered; lookups x 8 + B T D ob streamed.
TbeBytes tbe_forward_bytes(const TbeShape& shape, Format weight, Format out);
/// Backward + row-wise AdaGrad: lookups x (2 sector(D x wb) + 2 x 32) gathered
/// (row and state read and written); B T D ob + lookups x 8 + lookups x 12 x
/// 2 x 2 streamed (grad_out, indices, two radix passes over 12-byte keys).
TbeBytes tbe_backward_bytes(const TbeShape& shape, Format weight, Format out);

}  // namespace kref

#endif  // ZIONSIM_KERNELS_REF_REFERENCE_H_
