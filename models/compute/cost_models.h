// File: models/compute/cost_models.h
//
// Compute cost models: each a small pure function from a kernel's shape and
// a DeviceProfile to its time on the GPU, with the work it did. Roofline
// throughout: a kernel takes the longer of its math time (FLOPs / achieved
// FLOP/s) and its memory time (HBM bytes / achieved bandwidth), plus one
// launch per kernel. The shape-dependent parts are stated per function; all
// efficiency parameters live in the profile, so calibration (kernels_ref
// measurements) changes numbers, never formulas.

#ifndef ZIONSIM_MODELS_COMPUTE_COST_MODELS_H_
#define ZIONSIM_MODELS_COMPUTE_COST_MODELS_H_

#include <cstdint>

#include "models/compute/device_profile.h"
#include "models/compute/kernel_shapes.h"
#include "sim/time.h"

namespace zx::models {

/// What one kernel (or a fixed group of kernels) costs.
struct KernelCost {
  sim::Duration time;
  double flops = 0;
  double hbm_bytes = 0;
  int kernels = 0;
  bool compute_bound = false;

  KernelCost& operator+=(const KernelCost& other);
};
KernelCost operator+(KernelCost a, const KernelCost& b);

/// GEMM efficiency relative to peak for C[m x n] = A[m x k] B[k x n], `batch`
/// times: compute_efficiency x tile/wave quantisation x K pipeline fill.
/// Tiles: the best of 128x128, 128x64 and 64x64 output tiles (cuBLAS picks
/// per shape; smaller tiles run at 0.95 and 0.85 of the large tile's rate,
/// an assumption to calibrate); waves: tiles are scheduled sm_count at a time,
/// so a partial last wave idles SMs; K: k / (k + gemm_k_half).
double gemm_efficiency(const DeviceProfile& profile, std::int64_t m, std::int64_t n,
                       std::int64_t k, std::int64_t batch = 1);

/// Whether cuBLAS can run C[m x n] = A[m x k] B[k x n] of `type` with its
/// fastest kernels: m, n and k are each a multiple of 16 bytes of the element
/// (8 fp16/bf16, 4 fp32/tf32, 16 fp8 elements), so that every leading
/// dimension is, whichever layout the caller uses (cuBLAS's "Tensor Core
/// usage" section asks for 16-byte aligned leading dimensions and pointers;
/// kernels_ref/suite.cu times both kinds). Model A's 3994-wide MLP and model
/// I's 826 are not.
bool gemm_aligned(std::int64_t m, std::int64_t n, std::int64_t k, DataType type);

/// A (batched) GEMM: 2mnk FLOPs; reads A and B, writes C once. Its math
/// runs at gemm_efficiency(), times gemm_unaligned_efficiency when the shape
/// is not gemm_aligned().
KernelCost gemm(const DeviceProfile& profile, std::int64_t m, std::int64_t n, std::int64_t k,
                DataType type, std::int64_t batch = 1);

/// One fully connected layer over `batch` samples, in -> out features.
/// Forward: one GEMM. Backward: the input gradient and the weight gradient.
KernelCost linear_forward(const DeviceProfile& profile, std::int64_t batch, std::int64_t in,
                          std::int64_t out, DataType type);
KernelCost linear_backward(const DeviceProfile& profile, std::int64_t batch, std::int64_t in,
                           std::int64_t out, DataType type);

/// Fused table-batched embedding forward (FBGEMM TBE): one kernel gathers
/// every lookup's row (sector-rounded, at embedding_hbm_efficiency, plus
/// embedding_row_access_ns per lookup), reads the indices and writes the
/// pooled outputs (streaming, hbm_efficiency).
KernelCost embedding_forward_fused(const DeviceProfile& profile, const EmbeddingShape& shape);

/// Fused backward with exact row-wise AdaGrad (FBGEMM's default optimizer in
/// TorchRec): reads the pooled output gradients, sorts the lookups by row
/// (two radix passes over 12-byte keys, an assumption), then for every lookup
/// reads and writes its row and its one-float row-wise state (sector-rounded;
/// two row accesses per lookup at embedding_row_access_ns), plus
/// embedding_backward_overhead_ns for the sort's kernels. No gradient is
/// materialised.
KernelCost embedding_backward_fused(const DeviceProfile& profile, const EmbeddingShape& shape);

/// The unfused baseline: one forward kernel per table.
KernelCost embedding_forward_unfused(const DeviceProfile& profile, const EmbeddingShape& shape);

/// The unfused baseline backward: per table, a backward kernel that writes a
/// dense gradient row per lookup, then an optimizer kernel that reads those
/// gradients back and updates rows and state: twice the launches and the
/// materialised gradients written and read on top of the fused traffic.
KernelCost embedding_backward_unfused(const DeviceProfile& profile, const EmbeddingShape& shape);

/// Pairwise dot-product interaction of `features` vectors of `dim` per
/// sample (DLRM): a batched GEMM of [features x dim] by its transpose.
KernelCost dot_interaction_forward(const DeviceProfile& profile, std::int64_t batch,
                                   std::int64_t features, std::int64_t dim, DataType type);
KernelCost dot_interaction_backward(const DeviceProfile& profile, std::int64_t batch,
                                    std::int64_t features, std::int64_t dim, DataType type);

/// One low-rank DCN-v2 cross layer of width d and rank r (Wang et al., 2021):
/// x_{l+1} = x_0 * (U (V^T x_l) + b) + x_l: two GEMMs and an elementwise pass.
/// Backward costs twice the GEMMs plus the elementwise pass.
KernelCost dcn_cross_layer_forward(const DeviceProfile& profile, std::int64_t batch,
                                   std::int64_t width, std::int64_t rank, DataType type);
KernelCost dcn_cross_layer_backward(const DeviceProfile& profile, std::int64_t batch,
                                    std::int64_t width, std::int64_t rank, DataType type);

enum class DenseOptimizer { kSgd, kAdagrad, kAdam };

/// A fused (multi-tensor) optimizer step over `params` fp32 weights: SGD
/// reads weight and gradient and writes the weight (12 B/param), AdaGrad adds
/// one state read and write (20 B), Adam two (28 B).
KernelCost dense_optimizer_step(const DeviceProfile& profile, std::int64_t params,
                                DenseOptimizer optimizer);

/// Converting `elements` from one type to another (quantising a collective's
/// payload, or dequantising it): read once, write once, streaming.
KernelCost convert(const DeviceProfile& profile, std::int64_t elements, DataType from, DataType to);

/// Copying a batch's inputs from host memory: bytes over the host link, no
/// kernel (a copy engine), so no launch cost.
KernelCost host_to_device_copy(const DeviceProfile& profile, std::int64_t bytes);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_COMPUTE_COST_MODELS_H_
