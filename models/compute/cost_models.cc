#include "models/compute/cost_models.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace zx::models {
namespace {


void require_positive(std::int64_t v, const char* what) {
  if (v <= 0) throw std::invalid_argument(fmt::format("cost model: {} must be positive, got {}", what, v));
}


// Time of a kernel that does `flops` at `flops_per_s` and moves `bytes` at
// `bytes_per_s`, whichever is longer, plus `launches` kernel launches.
KernelCost roofline(const DeviceProfile& p, double flops, double flops_per_s, double bytes,
                    double bytes_per_s, int launches) {
  const double compute_s = flops > 0 ? flops / flops_per_s : 0.0;
  const double memory_s = bytes > 0 ? bytes / bytes_per_s : 0.0;
  KernelCost c;
  c.flops = flops;
  c.hbm_bytes = bytes;
  c.kernels = launches;
  c.compute_bound = compute_s > memory_s;
  c.time = sim::Duration::from_seconds_ceil(std::max(compute_s, memory_s)) + p.kernel_launch * launches;
  return c;
}

double streaming_bw(const DeviceProfile& p) { return p.effective_hbm_bytes_per_s(); }
double gather_bw(const DeviceProfile& p) {
  return static_cast<double>(p.hbm_bandwidth.count()) * p.embedding_hbm_efficiency;
}

// Sums two kernels that run back to back: times add.
KernelCost sequence(KernelCost a, const KernelCost& b) { return a += b; }

}  // namespace

KernelCost& KernelCost::operator+=(const KernelCost& other) {
  time += other.time;
  flops += other.flops;
  hbm_bytes += other.hbm_bytes;
  kernels += other.kernels;
  compute_bound = compute_bound || other.compute_bound;
  return *this;
}

KernelCost operator+(KernelCost a, const KernelCost& b) { return a += b; }

double gemm_efficiency(const DeviceProfile& p, std::int64_t m, std::int64_t n, std::int64_t k,
                       std::int64_t batch) {
  require_positive(m, "GEMM m");
  require_positive(n, "GEMM n");
  require_positive(k, "GEMM k");
  require_positive(batch, "GEMM batch");
  const double quantisation = gemm_quantisation(m, n, batch, p.sm_count, p.gemm_tile_m, p.gemm_tile_n);
  const double k_efficiency = static_cast<double>(k) / (static_cast<double>(k) + p.gemm_k_half);
  return p.compute_efficiency * quantisation * k_efficiency;
}

bool gemm_aligned(std::int64_t m, std::int64_t n, std::int64_t k, DataType type) {
  return gemm_aligned_bytes(m, n, k, element_bytes(type));
}

KernelCost gemm(const DeviceProfile& p, std::int64_t m, std::int64_t n, std::int64_t k,
                DataType type, std::int64_t batch) {
  const double efficiency = gemm_efficiency(p, m, n, k, batch) *
                            (gemm_aligned(m, n, k, type) ? 1.0 : p.gemm_unaligned_efficiency);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k) * static_cast<double>(batch);
  const double bytes = static_cast<double>((m * k + k * n + m * n) * batch) * element_bytes(type);
  return roofline(p, flops, p.peak_flops(type) * efficiency, bytes, streaming_bw(p), 1);
}

KernelCost linear_forward(const DeviceProfile& p, std::int64_t batch, std::int64_t in,
                          std::int64_t out, DataType type) {
  return gemm(p, batch, out, in, type);
}

KernelCost linear_backward(const DeviceProfile& p, std::int64_t batch, std::int64_t in,
                           std::int64_t out, DataType type) {
  // dX[batch x in] = dY[batch x out] W[out x in]; dW[out x in] = dY^T X.
  return sequence(gemm(p, batch, in, out, type), gemm(p, out, in, batch, type));
}

namespace {

// The memory time of gathered (random-row) and streamed traffic together,
// plus the per-access cost of `accesses` random row accesses.
KernelCost embedding_kernel(const DeviceProfile& p, double gathered, double streamed, double accesses,
                            int launches) {
  const double seconds = gathered / gather_bw(p) + streamed / streaming_bw(p) +
                         accesses * p.embedding_row_access_ns * 1e-9;
  KernelCost c;
  c.hbm_bytes = gathered + streamed;
  c.kernels = launches;
  c.time = sim::Duration::from_seconds_ceil(seconds) + p.kernel_launch * launches;
  return c;
}

KernelCost embedding_kernel(const DeviceProfile& p, const EmbeddingTraffic& t, int launches) {
  return embedding_kernel(p, t.gathered, t.streamed, t.accesses, launches);
}

}  // namespace

KernelCost embedding_forward_fused(const DeviceProfile& p, const EmbeddingShape& s) {
  return embedding_kernel(p, tbe_forward_traffic(s), 1);
}

KernelCost embedding_backward_fused(const DeviceProfile& p, const EmbeddingShape& s) {
  KernelCost c = embedding_kernel(p, tbe_backward_traffic(s), 1);
  c.time += sim::Duration::from_ns_ceil(p.embedding_backward_overhead_ns);
  return c;
}

KernelCost embedding_forward_unfused(const DeviceProfile& p, const EmbeddingShape& s) {
  return embedding_kernel(p, tbe_forward_traffic(s), static_cast<int>(s.tables));
}

KernelCost embedding_backward_unfused(const DeviceProfile& p, const EmbeddingShape& s) {
  KernelCost c = embedding_kernel(p, tbe_unfused_backward_traffic(s), 2 * static_cast<int>(s.tables));
  // Each table's backward sorts its own lookups.
  c.time += sim::Duration::from_ns_ceil(p.embedding_backward_overhead_ns * static_cast<double>(s.tables));
  return c;
}

KernelCost dot_interaction_forward(const DeviceProfile& p, std::int64_t batch,
                                   std::int64_t features, std::int64_t dim, DataType type) {
  return gemm(p, features, features, dim, type, batch);
}

KernelCost dot_interaction_backward(const DeviceProfile& p, std::int64_t batch,
                                    std::int64_t features, std::int64_t dim, DataType type) {
  // dX = (dZ + dZ^T) X: one batched GEMM of the same size, plus the transpose-add.
  return sequence(gemm(p, features, dim, features, type, batch),
                  convert(p, batch * features * features, type, type));
}

KernelCost dcn_cross_layer_forward(const DeviceProfile& p, std::int64_t batch, std::int64_t width,
                                   std::int64_t rank, DataType type) {
  const KernelCost down = gemm(p, batch, rank, width, type);
  const KernelCost up = gemm(p, batch, width, rank, type);
  // x0 * (u + b) + x: read three width-vectors, write one.
  const double bytes = 4.0 * static_cast<double>(batch * width) * element_bytes(type);
  return down + up + roofline(p, 3.0 * static_cast<double>(batch * width), p.peak_flops(type), bytes,
                              streaming_bw(p), 1);
}

KernelCost dcn_cross_layer_backward(const DeviceProfile& p, std::int64_t batch, std::int64_t width,
                                    std::int64_t rank, DataType type) {
  const KernelCost gemms = linear_backward(p, batch, width, rank, type) +
                           linear_backward(p, batch, rank, width, type);
  const double bytes = 6.0 * static_cast<double>(batch * width) * element_bytes(type);
  return gemms + roofline(p, 4.0 * static_cast<double>(batch * width), p.peak_flops(type), bytes,
                          streaming_bw(p), 1);
}

KernelCost dense_optimizer_step(const DeviceProfile& p, std::int64_t params, DenseOptimizer optimizer) {
  require_positive(params, "optimizer params");
  double bytes_per_param = 12;  // SGD: read w, g; write w (fp32)
  double flops_per_param = 2;
  if (optimizer == DenseOptimizer::kAdagrad) {
    bytes_per_param = 20;
    flops_per_param = 5;
  } else if (optimizer == DenseOptimizer::kAdam) {
    bytes_per_param = 28;
    flops_per_param = 10;
  }
  const double n = static_cast<double>(params);
  return roofline(p, n * flops_per_param, p.peak_flops(DataType::kFp32), n * bytes_per_param,
                  streaming_bw(p), 1);
}

KernelCost convert(const DeviceProfile& p, std::int64_t elements, DataType from, DataType to) {
  require_positive(elements, "elements");
  const double bytes = static_cast<double>(elements) * (element_bytes(from) + element_bytes(to));
  return roofline(p, static_cast<double>(elements), p.peak_flops(DataType::kFp32), bytes,
                  streaming_bw(p), 1);
}

KernelCost host_to_device_copy(const DeviceProfile& p, std::int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument("cost model: negative copy size");
  KernelCost c;
  c.hbm_bytes = static_cast<double>(bytes);
  c.time = sim::Duration::from_seconds_ceil(static_cast<double>(bytes) /
                                            static_cast<double>(p.host_to_device_bandwidth.count()));
  return c;
}

}  // namespace zx::models
