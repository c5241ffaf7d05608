// File: kernels_ref/reference.cc
//
// CPU references for the CUDA suite; see reference.h for the semantics and
// sources. Loops are written in the order the GPU kernels accumulate, so
// the comparisons in suite.cu can use tight tolerances.

#include "kernels_ref/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace kref {
namespace {

std::uint32_t float_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(std::uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Rounds `value >> shift` to nearest, ties to even.
std::uint32_t shift_round_even(std::uint32_t value, int shift) {
  const std::uint32_t result = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (result & 1u))) return result + 1;
  return result;
}

// Rejection-inversion Zipf sampler on {1, ..., n} with P(k) ~ k^-s
// (Hormann and Derflinger 1996; Apache Commons RNG's formulation).
class ZipfSampler {
 public:
  ZipfSampler(std::int64_t n, double s) : n_(n), s_(s) {
    h_integral_x1_ = h_integral(1.5) - 1.0;
    h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
    s_threshold_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
  }

  std::int64_t sample(SplitMix64& rng) const {
    for (;;) {
      const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      std::int64_t k = static_cast<std::int64_t>(x + 0.5);
      k = std::clamp<std::int64_t>(k, 1, n_);
      const double kd = static_cast<double>(k);
      if (kd - x <= s_threshold_ || u >= h_integral(kd + 0.5) - h(kd)) return k;
    }
  }

 private:
  static double helper1(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double helper2(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x
                              : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
  }
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  double h_integral(double x) const {
    const double log_x = std::log(x);
    return helper2((1.0 - s_) * log_x) * log_x;
  }
  double h_integral_inverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // numerical guard from the reference formulation
    return std::exp(helper1(t) * x);
  }

  std::int64_t n_;
  double s_;
  double h_integral_x1_ = 0;
  double h_integral_n_ = 0;
  double s_threshold_ = 0;
};

}  // namespace

std::uint16_t float_to_half_bits(float value) {
  std::uint32_t x = float_bits(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, inf
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to infinity
  if (x < 0x38800000u) {                        // below 2^-14: subnormal half or zero
    if (x < 0x33000000u) return sign;           // below 2^-25: rounds to zero
    const std::uint32_t exponent = x >> 23;
    const std::uint32_t mantissa = (x & 0x7fffffu) | 0x800000u;
    return sign |
           static_cast<std::uint16_t>(shift_round_even(mantissa, 126 - static_cast<int>(exponent)));
  }
  // Rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits.
  return sign | static_cast<std::uint16_t>(shift_round_even(x - 0x38000000u, 13));
}

float half_bits_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return bits_float(sign);
    // Subnormal: value = mantissa x 2^-24.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16_bits(float value) {
  const std::uint32_t x = float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

const char* format_name(Format format) {
  switch (format) {
    case Format::kFp32:
      return "fp32";
    case Format::kFp16:
      return "fp16";
    case Format::kBf16:
      return "bf16";
  }
  return "fp32";
}

int format_bytes(Format format) { return format == Format::kFp32 ? 4 : 2; }

float round_to(Format format, float value) {
  switch (format) {
    case Format::kFp32:
      return value;
    case Format::kFp16:
      return half_bits_to_float(float_to_half_bits(value));
    case Format::kBf16:
      return bf16_bits_to_float(float_to_bf16_bits(value));
  }
  return value;
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

const char* distribution_name(IndexDistribution distribution) {
  return distribution == IndexDistribution::kZipf ? "zipf" : "uniform";
}

std::vector<std::int64_t> generate_indices(std::int64_t count, std::int64_t rows,
                                           IndexDistribution distribution, double alpha,
                                           std::uint64_t seed) {
  if (count < 0 || rows <= 0) throw std::invalid_argument("generate_indices: bad count or rows");
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  SplitMix64 rng(seed);
  if (distribution == IndexDistribution::kUniform) {
    for (std::int64_t& v : out)
      v = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(rows));
    return out;
  }
  if (!(alpha > 0)) throw std::invalid_argument("generate_indices: Zipf alpha must be positive");
  const ZipfSampler zipf(rows, alpha);
  for (std::int64_t& v : out) v = zipf.sample(rng) - 1;  // hot rows first, as FBGEMM's benchmark
  return out;
}

void gemm_ref(int m, int n, int k, const float* a, const float* b, float* c) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      float acc = 0;
      for (int l = 0; l < k; ++l) {
        acc += a[i + static_cast<std::int64_t>(l) * m] * b[l + static_cast<std::int64_t>(j) * k];
      }
      c[i + static_cast<std::int64_t>(j) * m] = acc;
    }
  }
}

void gemm_batched_ref(int m, int n, int k, int batch, const float* a, const float* b, float* c) {
  for (int p = 0; p < batch; ++p) {
    gemm_ref(m, n, k, a + static_cast<std::int64_t>(p) * m * k,
             b + static_cast<std::int64_t>(p) * k * n, c + static_cast<std::int64_t>(p) * m * n);
  }
}

void tbe_forward_ref(const TbeShape& s, const float* weights, const std::int64_t* indices,
                     Format out_format, float* out) {
  std::vector<float> acc(static_cast<std::size_t>(s.dim));
  for (std::int64_t t = 0; t < s.tables; ++t) {
    for (std::int64_t b = 0; b < s.batch; ++b) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      const std::int64_t* bag = indices + (t * s.batch + b) * s.pooling;
      for (std::int64_t l = 0; l < s.pooling; ++l) {
        const float* row = weights + (t * s.rows + bag[l]) * s.dim;
        for (std::int64_t d = 0; d < s.dim; ++d) acc[d] += row[d];
      }
      float* dst = out + (b * s.tables + t) * s.dim;
      for (std::int64_t d = 0; d < s.dim; ++d) dst[d] = round_to(out_format, acc[d]);
    }
  }
}

void tbe_backward_adagrad_ref(const TbeShape& s, const std::int64_t* indices, const float* grad_out,
                              Format weight_format, float learning_rate, float eps, float* weights,
                              float* momentum) {
  // (global row, lookup position), stably sorted by row: the GPU's radix sort.
  std::vector<std::pair<std::int64_t, std::int64_t>> keys(static_cast<std::size_t>(s.lookups()));
  for (std::int64_t p = 0; p < s.lookups(); ++p) {
    const std::int64_t t = p / (s.batch * s.pooling);
    keys[static_cast<std::size_t>(p)] = {t * s.rows + indices[p], p};
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<float> grad(static_cast<std::size_t>(s.dim));
  for (std::size_t begin = 0; begin < keys.size();) {
    std::size_t end = begin;
    while (end < keys.size() && keys[end].first == keys[begin].first) ++end;
    std::fill(grad.begin(), grad.end(), 0.0f);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t p = keys[i].second;
      const std::int64_t t = p / (s.batch * s.pooling);
      const std::int64_t b = (p / s.pooling) % s.batch;
      const float* g = grad_out + (b * s.tables + t) * s.dim;
      for (std::int64_t d = 0; d < s.dim; ++d) grad[d] += g[d];
    }
    float sum_sq = 0;
    for (std::int64_t d = 0; d < s.dim; ++d) sum_sq += grad[d] * grad[d];
    const std::int64_t row = keys[begin].first;
    momentum[row] += sum_sq / static_cast<float>(s.dim);
    const float multiplier = learning_rate / (std::sqrt(momentum[row]) + eps);
    float* w = weights + row * s.dim;
    for (std::int64_t d = 0; d < s.dim; ++d)
      w[d] = round_to(weight_format, w[d] - multiplier * grad[d]);
    begin = end;
  }
}

void convert_ref(std::int64_t n, const float* in, Format to, float* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = round_to(to, in[i]);
}

void a2a_pack_ref(std::int64_t tables, std::int64_t batch, std::int64_t dim, std::int64_t ranks,
                  const float* in, float* out) {
  if (ranks <= 0 || batch % ranks != 0) throw std::invalid_argument("a2a_pack: batch % ranks != 0");
  const std::int64_t local = batch / ranks;
  for (std::int64_t r = 0; r < ranks; ++r)
    for (std::int64_t b = 0; b < local; ++b)
      for (std::int64_t t = 0; t < tables; ++t)
        std::memcpy(out + ((r * local + b) * tables + t) * dim,
                    in + (t * batch + r * local + b) * dim,
                    static_cast<std::size_t>(dim) * sizeof(float));
}

void a2a_unpack_ref(std::int64_t tables, std::int64_t batch, std::int64_t dim, std::int64_t ranks,
                    const float* in, float* out) {
  if (ranks <= 0 || batch % ranks != 0)
    throw std::invalid_argument("a2a_unpack: batch % ranks != 0");
  const std::int64_t local = batch / ranks;
  for (std::int64_t r = 0; r < ranks; ++r)
    for (std::int64_t b = 0; b < local; ++b)
      for (std::int64_t t = 0; t < tables; ++t)
        std::memcpy(out + (t * batch + r * local + b) * dim,
                    in + ((r * local + b) * tables + t) * dim,
                    static_cast<std::size_t>(dim) * sizeof(float));
}

void dot_interaction_ref(std::int64_t batch, std::int64_t features, std::int64_t dim,
                         const float* x, float* z) {
  for (std::int64_t b = 0; b < batch; ++b) {
    const float* xs = x + b * features * dim;
    for (std::int64_t i = 0; i < features; ++i) {
      for (std::int64_t j = 0; j < features; ++j) {
        float acc = 0;
        for (std::int64_t d = 0; d < dim; ++d) acc += xs[i * dim + d] * xs[j * dim + d];
        z[(b * features + i) * features + j] = acc;
      }
    }
  }
}

void adagrad_step_ref(std::int64_t n, const float* grad, float learning_rate, float eps,
                      float* weight, float* state) {
  for (std::int64_t i = 0; i < n; ++i) {
    state[i] += grad[i] * grad[i];
    weight[i] -= learning_rate * grad[i] / (std::sqrt(state[i]) + eps);
  }
}

void reduce_add_ref(std::int64_t n, const float* a, const float* b, float* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

std::int64_t sector_round(std::int64_t bytes) {
  return (bytes + kSectorBytes - 1) / kSectorBytes * kSectorBytes;
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(batch);
}

double gemm_bytes(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                  int element_bytes) {
  return static_cast<double>((m * k + k * n + m * n) * batch) * element_bytes;
}

TbeBytes tbe_forward_bytes(const TbeShape& s, Format weight, Format out) {
  const double lookups = static_cast<double>(s.lookups());
  TbeBytes bytes;
  bytes.gathered = lookups * static_cast<double>(sector_round(s.dim * format_bytes(weight)));
  bytes.streamed =
      lookups * kIndexBytes + static_cast<double>(s.batch * s.tables * s.dim * format_bytes(out));
  return bytes;
}

TbeBytes tbe_backward_bytes(const TbeShape& s, Format weight, Format out) {
  const double lookups = static_cast<double>(s.lookups());
  constexpr double kSortKeyBytes = 12;  // int64 row + int32 position
  constexpr double kSortPasses = 2;     // as cost_models.cc assumes
  TbeBytes bytes;
  bytes.gathered =
      lookups *
      (2.0 * static_cast<double>(sector_round(s.dim * format_bytes(weight))) + 2.0 * kSectorBytes);
  bytes.streamed = static_cast<double>(s.batch * s.tables * s.dim * format_bytes(out)) +
                   lookups * kIndexBytes + lookups * kSortKeyBytes * 2 * kSortPasses;
  return bytes;
}

}  // namespace kref
