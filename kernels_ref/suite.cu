// File: kernels_ref/suite.cu
//
// The CUDA reference kernel suite: every kernel the simulator's compute cost
// models describe (models/compute/cost_models.h), run on the real GPU,
// checked against the CPU references (reference.h) on small sizes, then
// timed over a sweep. Writes one JSON line per record (docs/calibration.md):
// a "provenance" record, one "check" record per kernel, one "measurement"
// record per (kernel, parameters).
//
// Timing follows nccl-tests and FBGEMM's benchmarks: warm-up launches, then
// repetitions each bracketed by CUDA events on one stream, L2 evicted before
// each (as nvbench and Triton's do_bench; not for the empty-kernel launch
// family); the median and the 10th/90th percentiles are reported. Byte and
// FLOP counts are the formulas of
// reference.h (the cost models' own counts), stated in each record.
//
// Knobs: GEMMs through cuBLAS (fp32, tf32, bf16, fp16; square, K and M
// sweeps and the model zoo's MLP layers, forward and both backward GEMMs);
// table-batched embeddings with FBGEMM's TBE benchmark knobs (T, E, D, L, B,
// fp32/fp16 weights, uniform or Zipf indices) forward with sum pooling and
// backward fused with exact row-wise AdaGrad, deterministic (stable radix
// sort by row, then one warp per row summing in lookup order, as FBGEMM);
// copies D2D, H2D and D2H from pinned memory by size; empty-kernel launch
// gaps; fp32 <-> fp16/bf16 conversion; all-to-all pack/unpack; the DLRM dot
// interaction as one strided batched GEMM; an elementwise AdaGrad step; an
// elementwise reduction (an all-reduce's reduce step).
//
// Usage: zx_kernel_suite --out FILE [--quick] [--only KERNEL[,KERNEL]]
//                        [--max-seconds S] [--warmup N] [--reps N] [--no-l2-flush]
// The git commit is compiled in: -DZX_GIT_COMMIT="\"$(git rev-parse HEAD)\"".

// ZX_HAVE_CUBLAS=0 builds the suite without cuBLAS (a toolkit that lacks
// it): the GEMM and dot-interaction families are left out, said on stderr,
// and the provenance records cublas_version 0; every other family runs.
#ifndef ZX_HAVE_CUBLAS
#define ZX_HAVE_CUBLAS 1
#endif
#if ZX_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/cub.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels_ref/harness_util.h"
#include "kernels_ref/reference.h"

#ifndef ZX_GIT_COMMIT
#define ZX_GIT_COMMIT "unknown"
#endif

namespace {

using kref::Format;
using kref::JsonObject;

#define CUDA_CHECK(call)                                                                 \
  do {                                                                                   \
    cudaError_t status_ = (call);                                                        \
    if (status_ != cudaSuccess) {                                                        \
      throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(status_)); \
    }                                                                                    \
  } while (0)

#if ZX_HAVE_CUBLAS
#define CUBLAS_CHECK(call)                                                 \
  do {                                                                     \
    cublasStatus_t status_ = (call);                                       \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                \
      throw std::runtime_error(std::string(#call) + ": cuBLAS status " +   \
                               std::to_string(static_cast<int>(status_))); \
    }                                                                      \
  } while (0)
#endif

// --- options, output ---------------------------------------------------------

struct Options {
  std::string out_path;
  bool quick = false;          // a tiny sweep: smoke-test the pipeline
  std::set<std::string> only;  // empty: every kernel
  double max_seconds = 1e9;    // stop timing (not checking) after this
  int warmup = 5;
  int reps = 20;
  bool flush_l2 = true;  // evict L2 before every timed repetition (--no-l2-flush: keep it)
};

class Output {
 public:
  explicit Output(const std::string& path) : file_(path) {
    if (!file_) throw std::runtime_error("cannot write " + path);
  }
  void write(const JsonObject& record) {
    file_ << record.str() << "\n";
    file_.flush();
  }

 private:
  std::ofstream file_;
};

// A device buffer that frees itself.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count = 0) { resize(count); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void resize(std::size_t count) {
    cudaFree(data_);
    data_ = nullptr;
    count_ = count;
    if (count > 0) CUDA_CHECK(cudaMalloc(&data_, count * sizeof(T)));
  }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const std::vector<T>& host) {
    CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// --- storage types -------------------------------------------------------

// Host-side encoding of floats into a device storage type and back.
template <typename T>
struct Storage;
template <>
struct Storage<float> {
  static float encode(float v) { return v; }
  static float decode(float v) { return v; }
  static constexpr Format format = Format::kFp32;
};
template <>
struct Storage<__half> {
  static __half encode(float v) {
    __half_raw raw;
    raw.x = kref::float_to_half_bits(v);
    return __half(raw);
  }
  static float decode(__half v) { return kref::half_bits_to_float(static_cast<__half_raw>(v).x); }
  static constexpr Format format = Format::kFp16;
};
template <>
struct Storage<__nv_bfloat16> {
  static __nv_bfloat16 encode(float v) {
    __nv_bfloat16_raw raw;
    raw.x = kref::float_to_bf16_bits(v);
    return __nv_bfloat16(raw);
  }
  static float decode(__nv_bfloat16 v) {
    return kref::bf16_bits_to_float(static_cast<__nv_bfloat16_raw>(v).x);
  }
  static constexpr Format format = Format::kBf16;
};

template <typename T>
std::vector<T> encode_all(const std::vector<float>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = Storage<T>::encode(values[i]);
  return out;
}

template <typename T>
std::vector<float> decode_all(const std::vector<T>& values) {
  std::vector<float> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = Storage<T>::decode(values[i]);
  return out;
}

__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__device__ inline __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Values in [-1, 1) rounded to `format`, from a fixed seed.
std::vector<float> random_values(std::size_t n, std::uint64_t seed, Format format) {
  kref::SplitMix64 rng(seed);
  std::vector<float> out(n);
  for (float& v : out) v = kref::round_to(format, static_cast<float>(rng.uniform() * 2.0 - 1.0));
  return out;
}

// Largest |x - y| relative to max(1, max |y|).
double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  double scale = 1;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::abs(w)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    worst = std::max(worst, std::isfinite(e) ? e : 1e30);
  }
  return worst / scale;
}

// --- the harness ------------------------------------------------------------

// Bytes written before each timed repetition to evict L2: twice its size,
// so that no operand of the timed kernel is still cached from the last
// repetition (as nvbench and Triton's do_bench do). The cost models price
// kernels by their HBM traffic; without this, a streaming kernel's operands
// of up to tens of MB (H200: 60 MB of L2) stay cached from one repetition
// to the next and it runs at L2 speed. 0 with --no-l2-flush.
std::int64_t l2_flush_bytes(const Options& options) {
  if (!options.flush_l2) return 0;
  int device = 0, l2_bytes = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  return 2 * static_cast<std::int64_t>(l2_bytes);
}

class Harness {
 public:
  Harness(const Options& options, Output& out)
      : options_(options), out_(out), flush_(static_cast<std::size_t>(l2_flush_bytes(options))) {
    CUDA_CHECK(cudaStreamCreate(&stream_));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    start_time_ = std::chrono::steady_clock::now();
  }
  ~Harness() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  cudaStream_t stream() const { return stream_; }
  const Options& options() const { return options_; }
  bool wanted(const std::string& kernel) const {
    return options_.only.empty() || options_.only.count(kernel) > 0;
  }
  bool out_of_time() const {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
    return elapsed > options_.max_seconds;
  }

  // Records a correctness check; a failed kernel is not timed. `scope`
  // names the measurement parameters the check stands for ({"dtype":
  // "bf16"}), so that calibration refuses only those when it fails; none:
  // the whole kernel.
  bool check(const std::string& kernel, const std::string& what, double error, double tolerance,
             const JsonObject& scope = JsonObject()) {
    const bool passed = error <= tolerance;
    JsonObject record;
    record.add("record", "check").add("kernel", kernel).add("case", what);
    if (scope.str() != "{}") record.add("scope", scope);
    record.add("passed", passed).add("max_relative_error", error).add("tolerance", tolerance);
    out_.write(record);
    std::fprintf(stderr, "check %-22s %-40s %s (error %.3g, tolerance %.3g)\n", kernel.c_str(),
                 what.c_str(), passed ? "passed" : "FAILED", error, tolerance);
    if (!passed) ++failed_checks_;
    return passed;
  }
  int failed_checks() const { return failed_checks_; }
  int skipped() const { return skipped_; }

  // Times `launch` (enqueues on stream()) and writes one measurement. With
  // `flush_l2` (and the option), L2 is evicted before each repetition,
  // outside the timed interval.
  void measure(const std::string& kernel, const JsonObject& params, double bytes,
               const std::string& bytes_formula, double flops, const std::string& flops_formula,
               const std::function<void()>& launch, bool flush_l2 = true) {
    if (out_of_time()) {
      ++skipped_;
      return;
    }
    for (int i = 0; i < options_.warmup; ++i) launch();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> samples_ns;
    for (int i = 0; i < options_.reps; ++i) {
      if (flush_l2 && flush_.size() > 0) {
        CUDA_CHECK(cudaMemsetAsync(flush_.get(), i & 0xff, flush_.size(), stream_));
      }
      CUDA_CHECK(cudaEventRecord(start_, stream_));
      launch();
      CUDA_CHECK(cudaEventRecord(stop_, stream_));
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      samples_ns.push_back(static_cast<double>(ms) * 1e6);
    }
    CUDA_CHECK(cudaGetLastError());
    const kref::TimingStats stats = kref::timing_stats(samples_ns);
    JsonObject time;
    time.add("median", stats.median).add("p10", stats.p10).add("p90", stats.p90);
    time.add("min", stats.min).add("max", stats.max);
    JsonObject achieved;
    if (bytes > 0) achieved.add("gbyte_per_s", bytes / stats.median);
    if (flops > 0) achieved.add("tflop_per_s", flops / stats.median / 1e3);
    out_.write(JsonObject()
                   .add("record", "measurement")
                   .add("kernel", kernel)
                   .add("params", params)
                   .add("time_ns", time)
                   .add("warmup", options_.warmup)
                   .add("repetitions", options_.reps)
                   .add("bytes", bytes)
                   .add("bytes_formula", bytes_formula)
                   .add("flops", flops)
                   .add("flops_formula", flops_formula)
                   .add("achieved", achieved));
    ++measured_;
  }
  int measured() const { return measured_; }

 private:
  Options options_;
  Output& out_;
  DeviceBuffer<char> flush_;  // written before each repetition to evict L2
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  std::chrono::steady_clock::time_point start_time_;
  int failed_checks_ = 0;
  int skipped_ = 0;
  int measured_ = 0;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

JsonObject provenance(const Options& options) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  // Clock fields left cudaDeviceProp in CUDA 13; the attributes remain.
  int sm_clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0, l2_bytes = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  int cublas_version = 0;  // 0: built without cuBLAS
#if ZX_HAVE_CUBLAS
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasGetVersion(handle, &cublas_version));
  cublasDestroy(handle);
#endif
  const auto version = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  };
  JsonObject p;
  p.add("record", "provenance")
      .add("suite", "zionsim kernels_ref")
      .add("schema_version", 1)
      .add("gpu", std::string(prop.name))
      .add("sm_count", prop.multiProcessorCount)
      .add("compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor))
      .add("sm_clock_mhz", sm_clock_khz / 1000)
      .add("memory_clock_mhz", memory_clock_khz / 1000)
      .add("memory_bus_width_bits", bus_width_bits)
      .add("memory_bytes", static_cast<std::int64_t>(prop.totalGlobalMem))
      .add("l2_cache_bytes", l2_bytes)
      .add("l2_flush_bytes", l2_flush_bytes(options))
      .add("driver_version", version(driver))
      .add("cuda_runtime_version", version(runtime))
      .add("cublas_version", cublas_version)
      .add("git_commit", ZX_GIT_COMMIT)
      .add("date", utc_now());
  return p;
}

// --- GEMM -------------------------------------------------------------------

// Fills a buffer with values in [-1, 1) from a hash of the index. GEMM
// operands must not be zeros: tensor cores draw less power on zeros and
// clocks stay higher, which flatters the timing (a known pitfall of GEMM
// benchmarks); random operands are what training sees.
template <typename T>
__global__ void fill_random_kernel(T* out, std::int64_t n, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::uint64_t z = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull + seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    out[i] = from_float<T>(static_cast<float>(z >> 40) * 0x1.0p-23f - 1.0f);
  }
}

void fill_random(void* data, std::size_t bytes, Format format, std::uint64_t seed) {
  const int element = kref::format_bytes(format);
  const auto n = static_cast<std::int64_t>(bytes / element);
  if (format == Format::kFp16) {
    fill_random_kernel<<<1024, 256>>>(static_cast<__half*>(data), n, seed);
  } else if (format == Format::kBf16) {
    fill_random_kernel<<<1024, 256>>>(static_cast<__nv_bfloat16*>(data), n, seed);
  } else {
    fill_random_kernel<<<1024, 256>>>(static_cast<float*>(data), n, seed);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

#if ZX_HAVE_CUBLAS
struct GemmType {
  const char* name;
  cudaDataType_t data;
  cublasComputeType_t compute;
  Format storage;    // how inputs are rounded for the reference
  double tolerance;  // relative to max |C|, for K <= 256 of values in [-1, 1)
};
const GemmType kGemmTypes[] = {
    {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, Format::kFp32, 1e-5},
    // TF32 rounds inputs to 10 mantissa bits inside the tensor cores.
    {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Format::kFp32, 2e-2},
    {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, Format::kFp16, 5e-3},
    {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, Format::kBf16, 2e-2},
};

class Gemm {
 public:
  Gemm() { CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~Gemm() { cublasDestroy(handle_); }

  void set_stream(cudaStream_t s) { CUBLAS_CHECK(cublasSetStream(handle_, s)); }

  // C = A B (column-major), `batch` strided GEMMs; alpha 1, beta 0.
  void run(const GemmType& t, int m, int n, int k, int batch, const void* a, const void* b, void* c,
           bool transpose_a = false) {
    const float alpha = 1.0f, beta = 0.0f;
    const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = transpose_a ? k : m;
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        handle_, op_a, CUBLAS_OP_N, m, n, k, &alpha, a, t.data, lda, static_cast<long long>(m) * k,
        b, t.data, k, static_cast<long long>(k) * n, &beta, c, t.data, m,
        static_cast<long long>(m) * n, batch, t.compute, CUBLAS_GEMM_DEFAULT));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

template <typename T>
double check_gemm_typed(Gemm& gemm, const GemmType& t, int m, int n, int k) {
  const std::vector<float> a = random_values(static_cast<std::size_t>(m) * k, 1, t.storage);
  const std::vector<float> b = random_values(static_cast<std::size_t>(k) * n, 2, t.storage);
  std::vector<float> want(static_cast<std::size_t>(m) * n);
  kref::gemm_ref(m, n, k, a.data(), b.data(), want.data());
  DeviceBuffer<T> da(a.size()), db(b.size()), dc(want.size());
  da.upload(encode_all<T>(a));
  db.upload(encode_all<T>(b));
  gemm.run(t, m, n, k, 1, da.get(), db.get(), dc.get());
  CUDA_CHECK(cudaDeviceSynchronize());
  return relative_error(decode_all<T>(dc.download()), want);
}

double check_gemm(Gemm& gemm, const GemmType& t, int m, int n, int k) {
  if (t.storage == Format::kFp16) return check_gemm_typed<__half>(gemm, t, m, n, k);
  if (t.storage == Format::kBf16) return check_gemm_typed<__nv_bfloat16>(gemm, t, m, n, k);
  return check_gemm_typed<float>(gemm, t, m, n, k);
}

struct GemmShape {
  std::int64_t m, n, k;
  std::string origin;  // "square", "k_sweep", "m_sweep", "unaligned", "zoo:<layer>"
};

std::vector<GemmShape> gemm_shapes(bool quick) {
  std::vector<GemmShape> shapes;
  if (quick) return {{1024, 1024, 1024, "square"}, {1024, 1024, 256, "k_sweep"}};
  for (std::int64_t s : {256, 512, 1024, 2048, 4096, 8192}) shapes.push_back({s, s, s, "square"});
  for (std::int64_t k : {32, 64, 128, 256, 512, 1024, 2048, 8192, 16384}) {
    shapes.push_back({4096, 4096, k, "k_sweep"});
  }
  for (std::int64_t m : {128, 384, 1000, 1536, 3000, 6144})
    shapes.push_back({m, 4096, 4096, "m_sweep"});
  // Off 16 bytes in every dtype (4094 = 2 x 2047): cuBLAS's fastest kernels
  // need 16-byte aligned leading dimensions, which here (column-major, no
  // transposes) are m and k. Calibration fits their rate against the
  // aligned shapes' (gemm_unaligned_efficiency); the zoo's 3994 and 826 are
  // unaligned too.
  for (std::int64_t s : {2046, 4094}) shapes.push_back({s, s, s, "unaligned"});
  shapes.push_back({4096, 4096, 4094, "unaligned"});
  shapes.push_back({4094, 4096, 4096, "unaligned"});
  // Model zoo MLP layers (models/zoo/*.json): (in, out) per layer, at two
  // per-GPU batch sizes; forward (B x out x in), input gradient (B x in x
  // out) and weight gradient (out x in x B), as cost_models.cc issues them.
  const std::pair<std::int64_t, std::int64_t> layers[] = {
      {3994, 3994}, {560, 560}, {826, 826},                                        // dlrm-a, -f, -i
      {13, 512},    {512, 256}, {256, 128}, {1024, 1024}, {1024, 512}, {256, 1}};  // dlrm-dcnv2
  for (std::int64_t batch : {2048, 8192}) {
    for (const auto& [in, out] : layers) {
      const std::string name =
          "zoo:" + std::to_string(in) + "x" + std::to_string(out) + "@" + std::to_string(batch);
      shapes.push_back({batch, out, in, name + ":forward"});
      shapes.push_back({batch, in, out, name + ":input_grad"});
      shapes.push_back({out, in, batch, name + ":weight_grad"});
    }
  }
  return shapes;
}

void run_gemms(Harness& h) {
  if (!h.wanted("gemm")) return;
  Gemm gemm;
  gemm.set_stream(h.stream());
  for (const GemmType& t : kGemmTypes) {
    const JsonObject scope = JsonObject().add("dtype", t.name);
    const bool ok = h.check("gemm", std::string(t.name) + " 96x80x112",
                            check_gemm(gemm, t, 96, 80, 112), t.tolerance, scope) &&
                    h.check("gemm", std::string(t.name) + " 257x129x255",
                            check_gemm(gemm, t, 257, 129, 255), t.tolerance, scope);
    if (!ok) continue;
    const std::vector<GemmShape> shapes = gemm_shapes(h.options().quick);
    std::int64_t max_elements = 0;
    for (const GemmShape& s : shapes) {
      max_elements = std::max({max_elements, s.m * s.k, s.k * s.n, s.m * s.n});
    }
    const int bytes = kref::format_bytes(t.storage);
    DeviceBuffer<char> a(max_elements * bytes), b(max_elements * bytes), c(max_elements * bytes);
    fill_random(a.get(), a.size(), t.storage, 1);
    fill_random(b.get(), b.size(), t.storage, 2);
    for (const GemmShape& s : shapes) {
      JsonObject params;
      params.add("m", s.m).add("n", s.n).add("k", s.k).add("batch", std::int64_t{1});
      params.add("dtype", t.name).add("origin", s.origin);
      h.measure("gemm", params, kref::gemm_bytes(s.m, s.n, s.k, 1, bytes),
                "(m*k + k*n + m*n) * batch * element_bytes", kref::gemm_flops(s.m, s.n, s.k, 1),
                "2 * m * n * k * batch", [&] {
                  gemm.run(t, static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k),
                           1, a.get(), b.get(), c.get());
                });
    }
  }
}

// --- DLRM dot interaction ---------------------------------------------------

// Z[b] = X[b] X[b]^T with X[b] row-major [F x D]: in cuBLAS's column-major
// view X[b] is X^T [D x F], so Z = (X^T)^T (X^T): op(A) = T, m = n = F, k = D.
void run_interaction(Harness& h) {
  if (!h.wanted("dot_interaction")) return;
  Gemm gemm;
  gemm.set_stream(h.stream());
  for (const GemmType& t : kGemmTypes) {
    if (t.storage == Format::kBf16 || std::string(t.name) == "tf32") continue;  // fp32 and fp16
    {
      const int batch = 3, features = 27, dim = 16;
      const std::vector<float> x =
          random_values(static_cast<std::size_t>(batch) * features * dim, 3, t.storage);
      std::vector<float> want(static_cast<std::size_t>(batch) * features * features);
      kref::dot_interaction_ref(batch, features, dim, x.data(), want.data());
      std::vector<float> got;
      if (t.storage == Format::kFp16) {
        DeviceBuffer<__half> dx(x.size()), dz(want.size());
        dx.upload(encode_all<__half>(x));
        gemm.run(t, features, features, dim, batch, dx.get(), dx.get(), dz.get(), true);
        CUDA_CHECK(cudaDeviceSynchronize());
        got = decode_all<__half>(dz.download());
      } else {
        DeviceBuffer<float> dx(x.size()), dz(want.size());
        dx.upload(x);
        gemm.run(t, features, features, dim, batch, dx.get(), dx.get(), dz.get(), true);
        CUDA_CHECK(cudaDeviceSynchronize());
        got = dz.download();
      }
      // The batched call reuses one buffer for A and B with per-sample strides of
      // F*D for both: the strides passed are m*k = F*D and k*n = D*F, equal.
      if (!h.check("dot_interaction", std::string(t.name) + " B=3 F=27 D=16",
                   relative_error(got, want), t.tolerance, JsonObject().add("dtype", t.name))) {
        continue;
      }
    }
    const bool quick = h.options().quick;
    const std::vector<std::int64_t> batches =
        quick ? std::vector<std::int64_t>{2048} : std::vector<std::int64_t>{2048, 8192, 32768};
    const int bytes = kref::format_bytes(t.storage);
    for (std::int64_t batch : batches) {
      for (std::int64_t features : {27, 64, 128}) {
        for (std::int64_t dim : {64, 128}) {
          DeviceBuffer<char> x(batch * features * dim * bytes),
              z(batch * features * features * bytes);
          fill_random(x.get(), x.size(), t.storage, 3);
          JsonObject params;
          params.add("batch", batch).add("features", features).add("dim", dim).add("dtype", t.name);
          // As a GEMM m = n = F, k = D: bytes read X twice by the formula (A and B).
          h.measure("dot_interaction", params,
                    kref::gemm_bytes(features, features, dim, batch, bytes),
                    "(F*D + D*F + F*F) * batch * element_bytes",
                    kref::gemm_flops(features, features, dim, batch), "2 * F * F * D * batch", [&] {
                      gemm.run(t, static_cast<int>(features), static_cast<int>(features),
                               static_cast<int>(dim), static_cast<int>(batch), x.get(), x.get(),
                               z.get(), true);
                    });
        }
      }
    }
  }
}

#else   // !ZX_HAVE_CUBLAS
void run_gemms(Harness& h) {
  if (h.wanted("gemm")) std::fprintf(stderr, "kernels_ref: gemm: not measured: built without cuBLAS\n");
}
void run_interaction(Harness& h) {
  if (h.wanted("dot_interaction")) {
    std::fprintf(stderr, "kernels_ref: dot_interaction: not measured: built without cuBLAS\n");
  }
}
#endif  // ZX_HAVE_CUBLAS

// --- table-batched embeddings ---------------------------------------------

// One warp per bag (t, b); lanes stride over D; the bag's rows are summed in
// lookup order in fp32 and written once in the weights' type.
template <typename T>
__global__ void tbe_forward_kernel(const T* __restrict__ weights,
                                   const std::int64_t* __restrict__ indices, T* __restrict__ out,
                                   std::int64_t tables, std::int64_t rows, std::int64_t dim,
                                   std::int64_t pooling, std::int64_t batch) {
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= tables * batch) return;
  const std::int64_t t = warp / batch;
  const std::int64_t b = warp % batch;
  const std::int64_t* bag = indices + warp * pooling;
  T* dst = out + (b * tables + t) * dim;
  for (std::int64_t d0 = 0; d0 < dim; d0 += 32 * 4) {
    float acc[4] = {0, 0, 0, 0};
    for (std::int64_t l = 0; l < pooling; ++l) {
      const T* row = weights + (t * rows + bag[l]) * dim;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const std::int64_t d = d0 + j * 32 + lane;
        if (d < dim) acc[j] += to_float(row[d]);
      }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::int64_t d = d0 + j * 32 + lane;
      if (d < dim) dst[d] = from_float<T>(acc[j]);
    }
  }
}

// Sort keys: the global row (t * E + index) of every lookup.
__global__ void tbe_linearize_kernel(const std::int64_t* __restrict__ indices, std::int64_t* keys,
                                     int* positions, std::int64_t lookups, std::int64_t per_table,
                                     std::int64_t rows) {
  const std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= lookups) return;
  keys[p] = (p / per_table) * rows + indices[p];
  positions[p] = static_cast<int>(p);
}

// One warp per touched row (grid-stride over runs): sum its gradients in
// sorted (= lookup) order, then exact row-wise AdaGrad.
template <typename T>
__global__ void tbe_backward_adagrad_kernel(
    const std::int64_t* __restrict__ unique_rows, const int* __restrict__ run_starts,
    const int* __restrict__ run_lengths, const int* __restrict__ num_runs,
    const int* __restrict__ positions, const T* __restrict__ grad_out, T* weights, float* momentum,
    std::int64_t tables, std::int64_t dim, std::int64_t pooling, std::int64_t batch,
    float learning_rate, float eps) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  const int runs = *num_runs;
  constexpr int kMaxChunks = 8;  // D <= 256
  for (std::int64_t run = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
       run < runs; run += warps) {
    float grad[kMaxChunks];
#pragma unroll
    for (int j = 0; j < kMaxChunks; ++j) grad[j] = 0;
    const int begin = run_starts[run];
    const int end = begin + run_lengths[run];
    for (int i = begin; i < end; ++i) {
      const std::int64_t p = positions[i];
      const std::int64_t t = p / (batch * pooling);
      const std::int64_t b = (p / pooling) % batch;
      const T* g = grad_out + (b * tables + t) * dim;
#pragma unroll
      for (int j = 0; j < kMaxChunks; ++j) {
        const std::int64_t d = j * 32 + lane;
        if (d < dim) grad[j] += to_float(g[d]);
      }
    }
    float sum_sq = 0;
#pragma unroll
    for (int j = 0; j < kMaxChunks; ++j) sum_sq += grad[j] * grad[j];
    for (int offset = 16; offset > 0; offset /= 2)
      sum_sq += __shfl_xor_sync(0xffffffffu, sum_sq, offset);
    const std::int64_t row = unique_rows[run];
    const float m = momentum[row] + sum_sq / static_cast<float>(dim);
    __syncwarp();
    if (lane == 0) momentum[row] = m;
    const float multiplier = learning_rate / (sqrtf(m) + eps);
    T* w = weights + row * dim;
#pragma unroll
    for (int j = 0; j < kMaxChunks; ++j) {
      const std::int64_t d = j * 32 + lane;
      if (d < dim) w[d] = from_float<T>(to_float(w[d]) - multiplier * grad[j]);
    }
  }
}

// Device state of one TBE configuration.
template <typename T>
struct Tbe {
  kref::TbeShape shape;
  DeviceBuffer<T> weights, out, grad_out;
  DeviceBuffer<float> momentum;
  DeviceBuffer<std::int64_t> indices, keys, sorted_keys, unique_rows;
  DeviceBuffer<int> positions, sorted_positions, run_lengths, run_starts, num_runs;
  DeviceBuffer<char> temp;
  int end_bit = 64;
  int sm_count = 1;

  explicit Tbe(const kref::TbeShape& s, const std::vector<std::int64_t>& host_indices)
      : shape(s),
        weights(s.tables * s.rows * s.dim),
        out(s.batch * s.tables * s.dim),
        grad_out(s.batch * s.tables * s.dim),
        momentum(s.tables * s.rows),
        indices(s.lookups()),
        keys(s.lookups()),
        sorted_keys(s.lookups()),
        unique_rows(s.lookups()),
        positions(s.lookups()),
        sorted_positions(s.lookups()),
        run_lengths(s.lookups()),
        run_starts(s.lookups()),
        num_runs(1) {
    // The backward kernel keeps a row's gradient in registers, 8 x 32 lanes.
    if (s.dim > 256) throw std::invalid_argument("TBE backward supports D <= 256");
    indices.upload(host_indices);
    end_bit = 1;
    while (end_bit < 63 && (std::int64_t{1} << end_bit) < s.tables * s.rows) ++end_bit;
    const int n = static_cast<int>(s.lookups());
    std::size_t sort_bytes = 0, rle_bytes = 0, scan_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys.get(), sorted_keys.get(),
                                               positions.get(), sorted_positions.get(), n, 0,
                                               end_bit));
    CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, sorted_keys.get(),
                                                  unique_rows.get(), run_lengths.get(),
                                                  num_runs.get(), n));
    CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, run_lengths.get(), run_starts.get(), n));
    temp.resize(std::max({sort_bytes, rle_bytes, scan_bytes}));
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  }

  void forward(cudaStream_t stream) {
    const std::int64_t bags = shape.tables * shape.batch;
    const int block = 128;
    const std::int64_t grid = (bags * 32 + block - 1) / block;
    tbe_forward_kernel<T><<<static_cast<unsigned>(grid), block, 0, stream>>>(
        weights.get(), indices.get(), out.get(), shape.tables, shape.rows, shape.dim, shape.pooling,
        shape.batch);
  }

  void backward(cudaStream_t stream, float learning_rate, float eps) {
    const std::int64_t n = shape.lookups();
    const int block = 256;
    tbe_linearize_kernel<<<static_cast<unsigned>((n + block - 1) / block), block, 0, stream>>>(
        indices.get(), keys.get(), positions.get(), n, shape.batch * shape.pooling, shape.rows);
    std::size_t bytes = temp.size();
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys.get(), sorted_keys.get(),
                                               positions.get(), sorted_positions.get(),
                                               static_cast<int>(n), 0, end_bit, stream));
    bytes = temp.size();
    CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp.get(), bytes, sorted_keys.get(),
                                                  unique_rows.get(), run_lengths.get(),
                                                  num_runs.get(), static_cast<int>(n), stream));
    bytes = temp.size();
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, run_lengths.get(), run_starts.get(),
                                             static_cast<int>(n), stream));
    // A fixed grid that loops over runs: the run count stays on the device.
    tbe_backward_adagrad_kernel<T><<<static_cast<unsigned>(sm_count * 8), block, 0, stream>>>(
        unique_rows.get(), run_starts.get(), run_lengths.get(), num_runs.get(),
        sorted_positions.get(), grad_out.get(), weights.get(), momentum.get(), shape.tables,
        shape.dim, shape.pooling, shape.batch, learning_rate, eps);
  }
};

constexpr float kLearningRate = 0.01f;
constexpr float kEps = 1e-8f;

template <typename T>
void check_tbe(Harness& h, kref::IndexDistribution distribution) {
  const Format format = Storage<T>::format;
  const kref::TbeShape s{3, 50, 72, 5, 7};  // D = 72: a partial 32-lane chunk
  const std::vector<std::int64_t> idx =
      kref::generate_indices(s.lookups(), s.rows, distribution, 1.2, 11);
  Tbe<T> tbe(s, idx);
  const std::vector<float> w = random_values(tbe.weights.size(), 12, format);
  const std::vector<float> g = random_values(tbe.grad_out.size(), 13, format);
  tbe.weights.upload(encode_all<T>(w));
  tbe.grad_out.upload(encode_all<T>(g));
  CUDA_CHECK(cudaMemset(tbe.momentum.get(), 0, tbe.momentum.size() * sizeof(float)));
  tbe.forward(h.stream());
  CUDA_CHECK(cudaStreamSynchronize(h.stream()));
  std::vector<float> want(tbe.out.size());
  kref::tbe_forward_ref(s, w.data(), idx.data(), format, want.data());
  const std::string what = std::string(kref::format_name(format)) + " T=3 E=50 D=72 L=5 B=7 " +
                           kref::distribution_name(distribution);
  const double tolerance = format == Format::kFp32 ? 1e-6 : 2e-3;
  h.check("tbe_forward", what, relative_error(decode_all<T>(tbe.out.download()), want), tolerance);
  // Backward twice: the second step sees the first's momentum.
  std::vector<float> w_ref = w;
  std::vector<float> m_ref(tbe.momentum.size(), 0.0f);
  for (int step = 0; step < 2; ++step) {
    tbe.backward(h.stream(), kLearningRate, kEps);
    kref::tbe_backward_adagrad_ref(s, idx.data(), g.data(), format, kLearningRate, kEps,
                                   w_ref.data(), m_ref.data());
  }
  CUDA_CHECK(cudaStreamSynchronize(h.stream()));
  const double error = std::max(relative_error(decode_all<T>(tbe.weights.download()), w_ref),
                                relative_error(tbe.momentum.download(), m_ref));
  h.check("tbe_backward_adagrad", what, error, tolerance);
  // Deterministic: the same step from the same state gives the same bits.
  std::vector<T> first;
  for (int trial = 0; trial < 2; ++trial) {
    tbe.weights.upload(encode_all<T>(w));
    CUDA_CHECK(cudaMemset(tbe.momentum.get(), 0, tbe.momentum.size() * sizeof(float)));
    tbe.backward(h.stream(), kLearningRate, kEps);
    CUDA_CHECK(cudaStreamSynchronize(h.stream()));
    std::vector<T> now = tbe.weights.download();
    if (trial == 0) {
      first = now;
    } else {
      h.check("tbe_backward_adagrad", what + " bitwise repeat",
              std::memcmp(first.data(), now.data(), now.size() * sizeof(T)) == 0 ? 0.0 : 1.0, 0.0);
    }
  }
}

template <typename T>
void measure_tbe(Harness& h, const kref::TbeShape& s, kref::IndexDistribution distribution,
                 double alpha) {
  const Format format = Storage<T>::format;
  const std::vector<std::int64_t> idx =
      kref::generate_indices(s.lookups(), s.rows, distribution, alpha,
                             static_cast<std::uint64_t>(s.dim * 131 + s.pooling));
  Tbe<T> tbe(s, idx);
  // Random weights and gradients in [-1, 1): row-wise AdaGrad keeps updates
  // bounded (lr / sqrt(momentum)), so repeated steps stay finite.
  fill_random(tbe.weights.get(), tbe.weights.size() * sizeof(T), format, 4);
  fill_random(tbe.grad_out.get(), tbe.grad_out.size() * sizeof(T), format, 5);
  CUDA_CHECK(cudaMemset(tbe.momentum.get(), 0, tbe.momentum.size() * sizeof(float)));
  JsonObject params;
  params.add("tables", s.tables).add("rows", s.rows).add("dim", s.dim).add("pooling", s.pooling);
  params.add("batch", s.batch).add("weight_dtype", kref::format_name(format));
  params.add("output_dtype", kref::format_name(format)).add("index_bytes", kref::kIndexBytes);
  params.add("distribution", kref::distribution_name(distribution));
  if (distribution == kref::IndexDistribution::kZipf) params.add("zipf_alpha", alpha);
  const kref::TbeBytes fwd = kref::tbe_forward_bytes(s, format, format);
  JsonObject fwd_params = params;
  fwd_params.add("gathered_bytes", fwd.gathered).add("streamed_bytes", fwd.streamed);
  h.measure("tbe_forward", fwd_params, fwd.total(),
            "gathered T*B*L*sector32(D*wb) + streamed (T*B*L*8 + B*T*D*ob)",
            static_cast<double>(s.lookups() * s.dim), "T*B*L*D additions",
            [&] { tbe.forward(h.stream()); });
  const kref::TbeBytes bwd = kref::tbe_backward_bytes(s, format, format);
  JsonObject bwd_params = params;
  bwd_params.add("gathered_bytes", bwd.gathered).add("streamed_bytes", bwd.streamed);
  h.measure("tbe_backward_adagrad", bwd_params, bwd.total(),
            "gathered T*B*L*(2*sector32(D*wb) + 2*32) + streamed (B*T*D*ob + T*B*L*(8 + 12*2*2))",
            static_cast<double>(s.lookups() * s.dim * 2), "2*T*B*L*D (gradient sums and update)",
            [&] { tbe.backward(h.stream(), kLearningRate, kEps); });
}

void run_tbe(Harness& h) {
  if (!h.wanted("tbe_forward") && !h.wanted("tbe_backward_adagrad")) return;
  // Only the TBE checks gate the TBE sweep: another kernel's earlier failure
  // (a conversion, a copy) must not drop every TBE measurement.
  const int failed_before = h.failed_checks();
  check_tbe<float>(h, kref::IndexDistribution::kUniform);
  check_tbe<__half>(h, kref::IndexDistribution::kUniform);
  check_tbe<float>(h, kref::IndexDistribution::kZipf);
  if (h.failed_checks() > failed_before) return;
  // FBGEMM's split_table_batched_embeddings_benchmark defaults: T = 32,
  // E = 100000, B = 512, L = 20, D = 128; the sweep varies D and L around them.
  const bool quick = h.options().quick;
  const std::vector<std::int64_t> dims =
      quick ? std::vector<std::int64_t>{64, 128} : std::vector<std::int64_t>{32, 64, 128, 192, 256};
  const std::vector<std::int64_t> poolings =
      quick ? std::vector<std::int64_t>{1, 20} : std::vector<std::int64_t>{1, 4, 20, 64};
  const std::int64_t rows = quick ? 10000 : 100000;
  for (std::int64_t dim : dims) {
    for (std::int64_t pooling : poolings) {
      const kref::TbeShape s{32, rows, dim, pooling, 512};
      measure_tbe<float>(h, s, kref::IndexDistribution::kUniform, 0);
      measure_tbe<__half>(h, s, kref::IndexDistribution::kUniform, 0);
    }
  }
  // Skewed indices hit in L2; measured for reference, not fitted by default.
  for (double alpha : {1.05, 1.2}) {
    measure_tbe<__half>(h, kref::TbeShape{32, rows, 128, 20, 512}, kref::IndexDistribution::kZipf,
                        alpha);
  }
}

// --- copies and launches ------------------------------------------------------

__global__ void empty_kernel() {}

void run_launch(Harness& h) {
  if (!h.wanted("launch")) return;
  empty_kernel<<<1, 1, 0, h.stream()>>>();
  CUDA_CHECK(cudaStreamSynchronize(h.stream()));
  h.check("launch", "empty kernel runs", cudaGetLastError() == cudaSuccess ? 0.0 : 1.0, 0.0);
  for (int kernels : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    JsonObject params;
    params.add("kernels", kernels);
    // No L2 flush: the empties touch no memory, and a flush ahead of them
    // would let the host queue launches while the GPU is busy, timing the
    // GPU's pace instead of the launch path this family measures.
    h.measure(
        "launch", params, 0, "none", 0, "none",
        [&] {
          for (int i = 0; i < kernels; ++i) empty_kernel<<<1, 32, 0, h.stream()>>>();
        },
        /*flush_l2=*/false);
  }
}

void run_copies(Harness& h) {
  if (!h.wanted("copy")) return;
  const std::int64_t max_bytes =
      h.options().quick ? (std::int64_t{1} << 24) : (std::int64_t{1} << 30);
  char* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, max_bytes));
  DeviceBuffer<char> a(max_bytes), b(max_bytes);
  {
    // Check: host -> device -> device -> host returns the bytes.
    const std::size_t n = 1 << 20;
    for (std::size_t i = 0; i < n; ++i) pinned[i] = static_cast<char>(i * 7 + 3);
    CUDA_CHECK(cudaMemcpy(a.get(), pinned, n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b.get(), a.get(), n, cudaMemcpyDeviceToDevice));
    std::vector<char> back(n);
    CUDA_CHECK(cudaMemcpy(back.data(), b.get(), n, cudaMemcpyDeviceToHost));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += back[i] != static_cast<char>(i * 7 + 3);
    if (!h.check("copy", "h2d, d2d, d2h round trip of 1 MiB", static_cast<double>(wrong), 0.0)) {
      cudaFreeHost(pinned);
      return;
    }
  }
  struct Direction {
    const char* name;
    cudaMemcpyKind kind;
    void* dst;
    const void* src;
  };
  const Direction directions[] = {{"h2d", cudaMemcpyHostToDevice, a.get(), pinned},
                                  {"d2h", cudaMemcpyDeviceToHost, pinned, a.get()},
                                  {"d2d", cudaMemcpyDeviceToDevice, b.get(), a.get()}};
  for (const Direction& d : directions) {
    for (std::int64_t bytes = 1024; bytes <= max_bytes; bytes *= 2) {
      JsonObject params;
      params.add("direction", d.name).add("size_bytes", bytes).add("host_memory", "pinned");
      // D2D reads and writes every byte; the others move each byte once over PCIe.
      const double moved = std::string(d.name) == "d2d" ? 2.0 * bytes : static_cast<double>(bytes);
      h.measure("copy", params, moved,
                std::string(d.name) == "d2d" ? "2 * size (read + write)" : "size", 0, "none",
                [&] { CUDA_CHECK(cudaMemcpyAsync(d.dst, d.src, bytes, d.kind, h.stream())); });
    }
  }
  cudaFreeHost(pinned);
}

// --- streaming kernels -------------------------------------------------------

template <typename From, typename To>
__global__ void convert_kernel(const From* __restrict__ in, To* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = from_float<To>(to_float(in[i]));
  }
}

__global__ void reduce_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = a[i] + b[i];
  }
}

__global__ void adagrad_kernel(const float* __restrict__ grad, float* __restrict__ weight,
                               float* __restrict__ state, std::int64_t n, float learning_rate,
                               float eps) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float g = grad[i];
    const float s = state[i] + g * g;
    state[i] = s;
    weight[i] -= learning_rate * g / (sqrtf(s) + eps);
  }
}

// Output-indexed permutations between [T][B][D] and [R][B/R][T][D].
__global__ void a2a_pack_kernel(const float* __restrict__ in, float* __restrict__ out,
                                std::int64_t tables, std::int64_t batch, std::int64_t dim,
                                bool unpack) {
  const std::int64_t n = tables * batch * dim;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::int64_t d = i % dim;
    const std::int64_t t = (i / dim) % tables;
    // Packed index i = ((r * B/R + b) * T + t) * D + d, and r * B/R + b is the
    // global sample, so the rank drops out of the arithmetic.
    const std::int64_t rb = i / (dim * tables);
    const std::int64_t packed = i;
    const std::int64_t unpacked = (t * batch + rb) * dim + d;
    if (unpack) {
      out[unpacked] = in[packed];
    } else {
      out[packed] = in[unpacked];
    }
  }
}

struct Launch {
  unsigned grid;
  unsigned block;
};
Launch streaming_launch(std::int64_t n, int sm_count) {
  // Enough blocks to fill every SM several times over, capped by the work.
  const std::int64_t blocks =
      std::min<std::int64_t>((n + 255) / 256, static_cast<std::int64_t>(sm_count) * 32);
  return {static_cast<unsigned>(std::max<std::int64_t>(1, blocks)), 256};
}

std::vector<std::int64_t> streaming_sizes(bool quick) {
  std::vector<std::int64_t> sizes;
  const int max_log = quick ? 22 : 28;
  for (int lg = 16; lg <= max_log; lg += quick ? 3 : 1) sizes.push_back(std::int64_t{1} << lg);
  return sizes;
}

void run_streaming(Harness& h) {
  int device = 0, sm_count = 1;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  const std::vector<std::int64_t> sizes = streaming_sizes(h.options().quick);
  const std::int64_t max_n = sizes.back();
  const std::int64_t check_n = 10007;
  cudaStream_t stream = h.stream();

  if (h.wanted("convert")) {
    struct Conversion {
      const char* from;
      const char* to;
      int from_bytes, to_bytes;
      std::function<void(const void*, void*, std::int64_t)> launch;
      std::function<double()> check;
    };
    const auto launch_of = [&](auto from_tag, auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      return [&, sm_count](const void* in, void* out, std::int64_t n) {
        const Launch l = streaming_launch(n, sm_count);
        convert_kernel<From, To><<<l.grid, l.block, 0, stream>>>(static_cast<const From*>(in),
                                                                 static_cast<To*>(out), n);
      };
    };
    const auto check_of = [&](auto from_tag, auto to_tag) {
      using From = decltype(from_tag);
      using To = decltype(to_tag);
      return [&, sm_count]() {
        // Inputs span many binades, including fp16 subnormals and overflow.
        std::vector<float> x(check_n);
        kref::SplitMix64 rng(21);
        for (float& v : x) {
          v = kref::round_to(
              Storage<From>::format,
              static_cast<float>((rng.uniform() * 2 - 1) * std::pow(2.0, rng.uniform() * 60 - 30)));
        }
        std::vector<float> want(x.size());
        kref::convert_ref(check_n, x.data(), Storage<To>::format, want.data());
        DeviceBuffer<From> in(x.size());
        DeviceBuffer<To> out(x.size());
        in.upload(encode_all<From>(x));
        const Launch l = streaming_launch(check_n, sm_count);
        convert_kernel<From, To><<<l.grid, l.block, 0, stream>>>(in.get(), out.get(), check_n);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<float> got = decode_all<To>(out.download());
        double mismatches = 0;  // bit-exact: both round to nearest even
        for (std::size_t i = 0; i < got.size(); ++i) {
          const bool same = got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]));
          mismatches += same ? 0 : 1;
        }
        return mismatches;
      };
    };
    const Conversion conversions[] = {
        {"fp32", "fp16", 4, 2, launch_of(float{}, __half{}), check_of(float{}, __half{})},
        {"fp32", "bf16", 4, 2, launch_of(float{}, __nv_bfloat16{}),
         check_of(float{}, __nv_bfloat16{})},
        {"fp16", "fp32", 2, 4, launch_of(__half{}, float{}), check_of(__half{}, float{})},
        {"bf16", "fp32", 2, 4, launch_of(__nv_bfloat16{}, float{}),
         check_of(__nv_bfloat16{}, float{})},
    };
    DeviceBuffer<char> in(max_n * 4), out(max_n * 4);
    CUDA_CHECK(cudaMemset(in.get(), 0, in.size()));
    for (const Conversion& c : conversions) {
      if (!h.check("convert", std::string(c.from) + "->" + c.to + " bit-exact, 10007 values",
                   c.check(), 0.0, JsonObject().add("from", c.from).add("to", c.to))) {
        continue;
      }
      for (std::int64_t n : sizes) {
        JsonObject params;
        params.add("from", c.from).add("to", c.to).add("elements", n);
        h.measure("convert", params, static_cast<double>(n) * (c.from_bytes + c.to_bytes),
                  "elements * (from_bytes + to_bytes)", static_cast<double>(n), "elements",
                  [&] { c.launch(in.get(), out.get(), n); });
      }
    }
  }

  if (h.wanted("reduce_add")) {
    const std::vector<float> a = random_values(check_n, 31, Format::kFp32);
    const std::vector<float> b = random_values(check_n, 32, Format::kFp32);
    std::vector<float> want(check_n);
    kref::reduce_add_ref(check_n, a.data(), b.data(), want.data());
    DeviceBuffer<float> da(check_n), db(check_n), dc(check_n);
    da.upload(a);
    db.upload(b);
    const Launch l = streaming_launch(check_n, sm_count);
    reduce_add_kernel<<<l.grid, l.block, 0, stream>>>(da.get(), db.get(), dc.get(), check_n);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (h.check("reduce_add", "fp32 10007 elements", relative_error(dc.download(), want), 0.0)) {
      DeviceBuffer<float> x(max_n), y(max_n), z(max_n);
      CUDA_CHECK(cudaMemset(x.get(), 0, max_n * 4));
      CUDA_CHECK(cudaMemset(y.get(), 0, max_n * 4));
      for (std::int64_t n : sizes) {
        JsonObject params;
        params.add("dtype", "fp32").add("elements", n);
        h.measure("reduce_add", params, 12.0 * n, "12 * elements (read a, b; write out)",
                  static_cast<double>(n), "elements", [&] {
                    const Launch ln = streaming_launch(n, sm_count);
                    reduce_add_kernel<<<ln.grid, ln.block, 0, stream>>>(x.get(), y.get(), z.get(),
                                                                        n);
                  });
      }
    }
  }

  if (h.wanted("adagrad_step")) {
    const std::vector<float> g = random_values(check_n, 41, Format::kFp32);
    std::vector<float> w = random_values(check_n, 42, Format::kFp32);
    std::vector<float> s(check_n, 0.5f);
    DeviceBuffer<float> dg(check_n), dw(check_n), ds(check_n);
    dg.upload(g);
    dw.upload(w);
    ds.upload(s);
    kref::adagrad_step_ref(check_n, g.data(), kLearningRate, kEps, w.data(), s.data());
    const Launch l = streaming_launch(check_n, sm_count);
    adagrad_kernel<<<l.grid, l.block, 0, stream>>>(dg.get(), dw.get(), ds.get(), check_n,
                                                   kLearningRate, kEps);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const double error =
        std::max(relative_error(dw.download(), w), relative_error(ds.download(), s));
    if (h.check("adagrad_step", "fp32 10007 parameters", error, 1e-6)) {
      DeviceBuffer<float> x(max_n), y(max_n), z(max_n);
      CUDA_CHECK(cudaMemset(x.get(), 0, max_n * 4));
      CUDA_CHECK(cudaMemset(y.get(), 0, max_n * 4));
      CUDA_CHECK(cudaMemset(z.get(), 0, max_n * 4));
      for (std::int64_t n : sizes) {
        JsonObject params;
        params.add("optimizer", "adagrad").add("params", n);
        h.measure("adagrad_step", params, 20.0 * n, "20 * params (read w, g, s; write w, s; fp32)",
                  5.0 * n, "5 * params", [&] {
                    const Launch ln = streaming_launch(n, sm_count);
                    adagrad_kernel<<<ln.grid, ln.block, 0, stream>>>(x.get(), y.get(), z.get(), n,
                                                                     kLearningRate, kEps);
                  });
      }
    }
  }

  if (h.wanted("a2a_pack") || h.wanted("a2a_unpack")) {
    const std::int64_t tables = 5, batch = 12, dim = 7, ranks = 4;
    const std::int64_t n = tables * batch * dim;
    const std::vector<float> x = random_values(n, 51, Format::kFp32);
    std::vector<float> packed(n), unpacked(n);
    kref::a2a_pack_ref(tables, batch, dim, ranks, x.data(), packed.data());
    kref::a2a_unpack_ref(tables, batch, dim, ranks, packed.data(), unpacked.data());
    DeviceBuffer<float> dx(n), dp(n), du(n);
    dx.upload(x);
    a2a_pack_kernel<<<4, 64, 0, stream>>>(dx.get(), dp.get(), tables, batch, dim, false);
    a2a_pack_kernel<<<4, 64, 0, stream>>>(dp.get(), du.get(), tables, batch, dim, true);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const bool ok =
        h.check("a2a_pack", "T=5 B=12 D=7 R=4", relative_error(dp.download(), packed), 0.0) &&
        h.check("a2a_unpack", "T=5 B=12 D=7 R=4 round trip", relative_error(du.download(), x), 0.0);
    if (ok) {
      const std::int64_t max_elements = 32 * 16384 * 128;
      DeviceBuffer<float> in(max_elements), out(max_elements);
      CUDA_CHECK(cudaMemset(in.get(), 0, max_elements * 4));
      const std::vector<std::int64_t> batches = h.options().quick
                                                    ? std::vector<std::int64_t>{1024}
                                                    : std::vector<std::int64_t>{1024, 4096, 16384};
      for (bool unpack : {false, true}) {
        for (std::int64_t b : batches) {
          for (std::int64_t d : {64, 128}) {
            for (std::int64_t r : {8}) {  // the layout does not depend on R (see the kernel)
              const std::int64_t elements = 32 * b * d;
              JsonObject params;
              params.add("tables", std::int64_t{32}).add("batch", b).add("dim", d).add("ranks", r);
              params.add("dtype", "fp32").add("elements", elements);
              h.measure(unpack ? "a2a_unpack" : "a2a_pack", params, 8.0 * elements,
                        "8 * T*B*D (read + write fp32)", 0, "none", [&] {
                          const Launch ln = streaming_launch(elements, sm_count);
                          a2a_pack_kernel<<<ln.grid, ln.block, 0, stream>>>(in.get(), out.get(), 32,
                                                                            b, d, unpack);
                        });
            }
          }
        }
      }
    }
  }
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--out") {
      o.out_path = value();
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--only") {
      std::stringstream list(value());
      for (std::string k; std::getline(list, k, ',');) o.only.insert(k);
    } else if (arg == "--max-seconds") {
      o.max_seconds = std::stod(value());
    } else if (arg == "--warmup") {
      o.warmup = std::stoi(value());
    } else if (arg == "--reps") {
      o.reps = std::stoi(value());
    } else if (arg == "--no-l2-flush") {
      o.flush_l2 = false;
    } else {
      throw std::invalid_argument("unknown argument '" + arg +
                                  "'; usage: --out FILE [--quick] [--only K1,K2] [--max-seconds S] "
                                  "[--warmup N] [--reps N] [--no-l2-flush]");
    }
  }
  if (o.out_path.empty()) throw std::invalid_argument("--out FILE is required");
  if (o.reps < 1 || o.warmup < 0) throw std::invalid_argument("--reps must be >= 1, --warmup >= 0");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    Output out(options.out_path);
    const JsonObject prov = provenance(options);
    out.write(prov);
    std::fprintf(stderr, "%s\n", prov.str().c_str());
    Harness h(options, out);
    // Cheap, latency-sensitive kernels first; the big sweeps last, so a
    // time limit cuts the end of the GEMM sweep rather than whole families.
    run_launch(h);
    run_copies(h);
    run_streaming(h);
    run_tbe(h);
    run_interaction(h);
    run_gemms(h);
    std::fprintf(stderr,
                 "kernels_ref: %d measurements, %d skipped for time, %d failed checks "
                 "(every timed kernel was first checked against its CPU reference)\n",
                 h.measured(), h.skipped(), h.failed_checks());
    return h.failed_checks() > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernels_ref: error: %s\n", e.what());
    return 2;
  }
}
