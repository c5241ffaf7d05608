// File: calibration/testing/synthetic.cc
//
// Generates measurement files from known parameters; see synthetic.h. The
// sweeps mirror kernels_ref/suite.cu's default sweep (sizes, TBE knobs from
// FBGEMM's benchmark defaults, the zoo's MLP GEMMs), so the tests exercise
// the same point counts and shape mix as a real run.

#include "calibration/testing/synthetic.h"

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/compute/kernel_shapes.h"
#include "models/compute/device_profile.h"

namespace zx::calibration::testing {
namespace {

class Noise {
 public:
  Noise(double sigma, std::uint64_t seed) : sigma_(sigma), engine_(seed) {}
  // exp(sigma z): multiplicative, median 1, never negative.
  double factor() {
    // Box-Muller on two uniforms in (0, 1] built from 53 bits each.
    const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    return std::exp(sigma_ * z);
  }

 private:
  double sigma_;
  std::mt19937_64 engine_;
};

struct Writer {
  std::string text;
  Noise noise;
  void line(const std::string& kernel, const std::string& params, double time_ns, double bytes,
            double flops) {
    const double t = time_ns * noise.factor();
    text += fmt::format(
        "{{\"record\":\"measurement\",\"kernel\":\"{}\",\"params\":{{{}}},\"time_ns\":{{\"median\":"
        "{},"
        "\"p10\":{},\"p90\":{}}},\"warmup\":5,\"repetitions\":20,\"bytes\":{},\"flops\":{}}}\n",
        kernel, params, t, t * 0.99, t * 1.02, bytes, flops);
  }
};

}  // namespace

namespace {

// What the synthetic GPU's kernels run at, from the truth and its base profile.
struct Rates {
  const SyntheticTruth& truth;
  models::DeviceProfile base;
  double stream_per_ns;
  double gather_per_ns;
  int tile_m;
  int tile_n;
  explicit Rates(const SyntheticTruth& t)
      : truth(t),
        base(models::builtin_device_profile(t.base_profile)),
        stream_per_ns(static_cast<double>(base.hbm_bandwidth.count()) * 1e-9 * t.hbm_efficiency),
        gather_per_ns(static_cast<double>(base.hbm_bandwidth.count()) * 1e-9 * t.embedding_hbm_efficiency),
        tile_m(t.gemm_tile_m > 0 ? t.gemm_tile_m : base.gemm_tile_m),
        tile_n(t.gemm_tile_n > 0 ? t.gemm_tile_n : base.gemm_tile_n) {}
  double stream_ns(double bytes) const { return truth.stream_intercept_ns + bytes / stream_per_ns; }
  // A GEMM's time as the cost model prices it, with the truth's parameters.
  double gemm_ns(double flops, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, int eb,
                 double peak_per_ns) const {
    const double q = models::gemm_quantisation(m, n, batch, truth.sm_count, tile_m, tile_n);
    const double kd = static_cast<double>(k);
    const double aligned = models::gemm_aligned_bytes(m, n, k, eb) ? 1.0 : truth.gemm_unaligned_efficiency;
    return flops / (peak_per_ns * truth.compute_efficiency * q * kd / (kd + truth.gemm_k_half) * aligned);
  }
};

void write_launch_and_copies(const Rates& r, Writer& w) {
  const SyntheticTruth& truth = r.truth;
  for (int kernels : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    w.line("launch", fmt::format("\"kernels\":{}", kernels),
           truth.event_overhead_ns + kernels * truth.launch_ns, 0, 0);
  }
  const std::pair<const char*, double> directions[] = {{"h2d", truth.h2d_gbyte_per_s},
                                                       {"d2h", truth.d2h_gbyte_per_s},
                                                       {"d2d", truth.d2d_gbyte_per_s}};
  for (const auto& [direction, gbyte_per_s] : directions) {
    for (std::int64_t size = 1024; size <= (std::int64_t{1} << 30); size *= 2) {
      const double moved = std::string(direction) == "d2d" ? 2.0 * size : static_cast<double>(size);
      w.line("copy",
             fmt::format("\"direction\":\"{}\",\"size_bytes\":{},\"host_memory\":\"pinned\"",
                         direction, size),
             truth.copy_latency_ns + static_cast<double>(size) / gbyte_per_s, moved, 0);
    }
  }
}

void write_streaming(const Rates& r, Writer& w) {
  const auto stream_ns = [&](double bytes) { return r.stream_ns(bytes); };
  const std::pair<const char*, const char*> conversions[] = {
      {"fp32", "fp16"}, {"fp32", "bf16"}, {"fp16", "fp32"}, {"bf16", "fp32"}};
  for (int lg = 16; lg <= 28; ++lg) {
    const double n = std::ldexp(1.0, lg);
    for (const auto& [from, to] : conversions) {
      w.line("convert",
             fmt::format("\"from\":\"{}\",\"to\":\"{}\",\"elements\":{}", from, to,
                         std::int64_t{1} << lg),
             stream_ns(6 * n), 6 * n, n);
    }
    w.line("reduce_add", fmt::format("\"dtype\":\"fp32\",\"elements\":{}", std::int64_t{1} << lg),
           stream_ns(12 * n), 12 * n, n);
    w.line("adagrad_step",
           fmt::format("\"optimizer\":\"adagrad\",\"params\":{}", std::int64_t{1} << lg),
           stream_ns(20 * n), 20 * n, 5 * n);
  }
  for (std::int64_t batch : {1024, 4096, 16384}) {
    for (std::int64_t dim : {64, 128}) {
      const std::int64_t elements = 32 * batch * dim;
      for (const char* kernel : {"a2a_pack", "a2a_unpack"}) {
        w.line(kernel,
               fmt::format("\"tables\":32,\"batch\":{},\"dim\":{},\"ranks\":8,\"dtype\":\"fp32\","
                           "\"elements\":{}",
                           batch, dim, elements),
               stream_ns(8.0 * elements), 8.0 * elements, 0);
      }
    }
  }
}

void write_tbe(const Rates& r, Writer& w) {
  const SyntheticTruth& truth = r.truth;
  const double stream_per_ns = r.stream_per_ns;
  const double gather_per_ns = r.gather_per_ns;
  // TBE: FBGEMM benchmark defaults T = 32, E = 100000, B = 512, varying D and L.
  for (std::int64_t dim : {32, 64, 128, 192, 256}) {
    for (std::int64_t pooling : {1, 4, 20, 64}) {
      for (const char* dtype : {"fp32", "fp16"}) {
        const int wb = std::string(dtype) == "fp32" ? 4 : 2;
        const double lookups = 32.0 * 512 * pooling;
        const double row = static_cast<double>((dim * wb + 31) / 32 * 32);
        const double pooled = 512.0 * 32 * dim * wb;
        const std::string params = fmt::format(
            "\"tables\":32,\"rows\":100000,\"dim\":{},\"pooling\":{},\"batch\":512,\"weight_"
            "dtype\":\"{}\","
            "\"output_dtype\":\"{}\",\"index_bytes\":8,\"distribution\":\"uniform\"",
            dim, pooling, dtype, dtype);
        const double fg = lookups * row, fs = lookups * 8 + pooled;
        w.line("tbe_forward", params,
               truth.tbe_intercept_ns + lookups * truth.embedding_row_access_ns + fg / gather_per_ns +
                   fs / stream_per_ns,
               fg + fs,
               lookups * static_cast<double>(dim));
        const double bg = lookups * (2 * row + 64), bs = pooled + lookups * 8 + lookups * 48;
        w.line("tbe_backward_adagrad", params,
               truth.tbe_intercept_ns + truth.tbe_backward_overhead_ns +
                   2 * lookups * truth.embedding_row_access_ns +
                   bg / gather_per_ns + bs / stream_per_ns,
               bg + bs,
               2 * lookups * static_cast<double>(dim));
      }
    }
  }
  // A skewed run that a default calibration leaves out (hot rows hit in L2): 3x faster.
  w.line("tbe_forward",
         "\"tables\":32,\"rows\":100000,\"dim\":128,\"pooling\":20,\"batch\":512,\"weight_dtype\":"
         "\"fp16\","
         "\"output_dtype\":\"fp16\",\"index_bytes\":8,\"distribution\":\"zipf\",\"zipf_alpha\":1.2",
         20000, 1e8, 4e7);
}

void write_gemms(const Rates& r, Writer& w) {
  // GEMMs: the suite's square, K and M sweeps and zoo MLP layers, every dtype.
  struct Shape {
    std::int64_t m, n, k;
  };
  std::vector<Shape> shapes;
  for (std::int64_t s : {256, 512, 1024, 2048, 4096, 8192}) shapes.push_back({s, s, s});
  for (std::int64_t k : {32, 64, 128, 256, 512, 1024, 2048, 8192, 16384})
    shapes.push_back({4096, 4096, k});
  for (std::int64_t m : {128, 384, 1000, 1536, 3000, 6144}) shapes.push_back({m, 4096, 4096});
  // Off 16 bytes in every dtype: all three dimensions, K alone, M alone.
  for (std::int64_t s : {2046, 4094}) shapes.push_back({s, s, s});
  shapes.push_back({4096, 4096, 4094});
  shapes.push_back({4094, 4096, 4096});
  const std::pair<std::int64_t, std::int64_t> layers[] = {{3994, 3994}, {560, 560},  {826, 826},
                                                          {13, 512},    {512, 256},  {256, 128},
                                                          {1024, 1024}, {1024, 512}, {256, 1}};
  for (std::int64_t batch : {2048, 8192}) {
    for (const auto& [in, out] : layers) {
      shapes.push_back({batch, out, in});
      shapes.push_back({batch, in, out});
      shapes.push_back({out, in, batch});
    }
  }
  for (const char* dtype : {"fp32", "tf32", "fp16", "bf16"}) {
    const double peak_per_ns = r.base.peak_flops(models::parse_data_type(dtype)) * 1e-9;
    const int eb = std::string(dtype) == "fp16" || std::string(dtype) == "bf16" ? 2 : 4;
    for (const Shape& s : shapes) {
      const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k);
      const double bytes = static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n) * eb;
      const double t = r.gemm_ns(flops, s.m, s.n, s.k, 1, eb, peak_per_ns);
      w.line("gemm",
             fmt::format("\"m\":{},\"n\":{},\"k\":{},\"batch\":1,\"dtype\":\"{}\"", s.m, s.n, s.k,
                         dtype),
             t, bytes, flops);
    }
  }
}

void write_dot_interactions(const Rates& r, Writer& w) {
  // Dot interaction priced as calibrate.cc's validation prices it.
  for (const char* dtype : {"fp32", "fp16"}) {
    const double peak_per_ns = r.base.peak_flops(models::parse_data_type(dtype)) * 1e-9;
    const int eb = std::string(dtype) == "fp16" ? 2 : 4;
    for (std::int64_t batch : {2048, 8192, 32768}) {
      for (std::int64_t f : {27, 64, 128}) {
        for (std::int64_t dim : {64, 128}) {
          const double flops = 2.0 * static_cast<double>(f * f * dim * batch);
          const double bytes = static_cast<double>((2 * f * dim + f * f) * batch) * eb;
          const double compute = r.gemm_ns(flops, f, f, dim, batch, eb, peak_per_ns);
          w.line("dot_interaction",
                 fmt::format("\"batch\":{},\"features\":{},\"dim\":{},\"dtype\":\"{}\"", batch, f,
                             dim, dtype),
                 std::max(compute, bytes / r.stream_per_ns) + r.truth.launch_ns, bytes, flops);
        }
      }
    }
  }
}

}  // namespace

std::string synthetic_measurements(const SyntheticTruth& truth) {
  const Rates rates(truth);
  Writer w{"", Noise(truth.noise, truth.seed)};
  w.text += fmt::format(
      "{{\"record\":\"provenance\",\"suite\":\"synthetic\",\"gpu\":\"Synthetic "
      "H200\",\"sm_count\":{},"
      "\"driver_version\":\"0.0\",\"cuda_runtime_version\":\"0.0\",\"git_commit\":\"synthetic\","
      "\"date\":\"2026-01-01T00:00:00Z\"}}\n",
      truth.sm_count);
  w.text += "{\"record\":\"check\",\"kernel\":\"gemm\",\"case\":\"synthetic\",\"passed\":true}\n";
  write_launch_and_copies(rates, w);
  write_streaming(rates, w);
  write_tbe(rates, w);
  write_gemms(rates, w);
  write_dot_interactions(rates, w);
  return w.text;
}

}  // namespace zx::calibration::testing
