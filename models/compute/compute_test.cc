// Tests of device profiles and compute cost models: datasheet values, JSON
// round trips and errors, closed forms of the roofline costs, and the
// orderings the models must respect (fused never slower than unfused, more
// work never faster).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>

#include "base/error.h"
#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"

namespace zx::models {
namespace {

DeviceProfile a100() { return builtin_device_profile("a100-40gb"); }

double seconds(const KernelCost& c) { return c.time.to_seconds(); }

TEST(DeviceProfileTest, BuiltInsCarryDatasheetPeaks) {
  const DeviceProfile p = a100();
  EXPECT_EQ(p.peak_flops(DataType::kBf16), 312e12);
  EXPECT_EQ(p.peak_flops(DataType::kFp32), 19.5e12);
  EXPECT_EQ(p.hbm_bandwidth.count(), 1'555'000'000'000);
  EXPECT_EQ(p.hbm_capacity, sim::Bytes::gib(40));
  EXPECT_EQ(p.compute_efficiency, 0.705);  // MAD-Max ZionEX
  EXPECT_EQ(p.hbm_efficiency, 0.836);
  EXPECT_THROW(p.peak_flops(DataType::kFp8), std::invalid_argument);  // no FP8 on Ampere
  const DeviceProfile h200 = builtin_device_profile("h200");
  EXPECT_EQ(h200.hbm_capacity, sim::Bytes::gib(141));
  EXPECT_EQ(h200.peak_flops(DataType::kFp8), 1978.9e12);
  // B200 (HGX): dense datasheet peaks, the device query's memory and SMs.
  const DeviceProfile b200 = builtin_device_profile("b200");
  EXPECT_EQ(b200.peak_flops(DataType::kBf16), 2250e12);
  EXPECT_EQ(b200.peak_flops(DataType::kFp16), 2250e12);
  EXPECT_EQ(b200.peak_flops(DataType::kTf32), 1125e12);
  EXPECT_EQ(b200.peak_flops(DataType::kFp8), 4500e12);
  EXPECT_EQ(b200.peak_flops(DataType::kFp32), 75e12);
  EXPECT_EQ(b200.hbm_bandwidth.count(), 7'672'000'000'000);
  EXPECT_EQ(b200.hbm_capacity, sim::Bytes::gib(178));
  EXPECT_EQ(b200.sm_count, 148);
  // GB200 (NVL72): the rack's figures over 72 GPUs, dense; host copies over
  // NVLink-C2C at GH200's measured share of the link.
  const DeviceProfile gb200 = builtin_device_profile("gb200");
  EXPECT_EQ(gb200.peak_flops(DataType::kBf16), 2500e12);
  EXPECT_EQ(gb200.peak_flops(DataType::kFp8), 5000e12);
  EXPECT_EQ(gb200.peak_flops(DataType::kTf32), 1250e12);
  EXPECT_EQ(gb200.peak_flops(DataType::kFp32), 80e12);
  EXPECT_EQ(gb200.hbm_bandwidth.count(), 8'000'000'000'000);
  EXPECT_EQ(gb200.hbm_capacity, sim::Bytes(186'000'000'000));
  EXPECT_EQ(gb200.sm_count, 148);
  EXPECT_EQ(gb200.host_to_device_bandwidth.count(), 173'000'000'000);
  EXPECT_GT(gb200.host_to_device_bandwidth.count(), 3 * b200.host_to_device_bandwidth.count());
  // Blackwell Ultra: its predecessor's rates for the training types, the
  // larger HBM3e (usable capacity) and nothing else changed.
  for (const auto& [ultra, base, capacity] :
       {std::tuple{"b300", "b200", sim::Bytes(270'000'000'000)}, std::tuple{"gb300", "gb200", sim::Bytes(279'000'000'000)}}) {
    SCOPED_TRACE(ultra);
    DeviceProfile u = builtin_device_profile(ultra);
    const DeviceProfile b = builtin_device_profile(base);
    EXPECT_EQ(u.hbm_capacity, capacity);
    EXPECT_EQ(u.name, ultra);
    u.name = b.name;
    u.description = b.description;
    u.hbm_capacity = b.hbm_capacity;
    EXPECT_EQ(device_profile_to_json(u), device_profile_to_json(b));
  }
  EXPECT_EQ(device_profile_descriptions().size(), 8u);
  try {
    builtin_device_profile("h201");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--gpu: unknown GPU profile 'h201' (did you mean 'h200'?); valid: a100-40gb, a100-80gb, b200, "
              "b300, gb200, gb300, h100-sxm, h200, or the path of a .json profile");
  }
}

// A profile written as JSON reads back equal, field by field.
TEST(DeviceProfileTest, JsonRoundTrip) {
  for (const auto& [name, description] : device_profile_descriptions()) {
    const DeviceProfile p = builtin_device_profile(name);
    const DeviceProfile q = parse_device_profile(device_profile_to_json(p), "p.json");
    EXPECT_EQ(device_profile_to_json(q), device_profile_to_json(p)) << name;
    EXPECT_EQ(q.hbm_bandwidth, p.hbm_bandwidth);
    EXPECT_EQ(q.kernel_launch, p.kernel_launch);
  }
}

// A file can start from a built-in and override a few fields; problems are
// all reported with their pointers.
TEST(DeviceProfileTest, FilesOverrideABaseAndReportEveryProblem) {
  const DeviceProfile p = parse_device_profile(
      R"({"schema_version": 1, "base": "h100-sxm", "name": "h100-calibrated",
          "efficiency": {"compute": 0.62}, "provenance": {"gpu": "H100", "date": "2026-11-30"}})",
      "cal.json");
  EXPECT_EQ(p.name, "h100-calibrated");
  EXPECT_EQ(p.compute_efficiency, 0.62);
  EXPECT_EQ(p.peak_flops(DataType::kBf16), 989.4e12);
  EXPECT_EQ(p.gemm_unaligned_efficiency, 1.0);  // the built-ins': no penalty
  EXPECT_EQ(parse_device_profile(R"({"schema_version": 1, "gemm": {"unaligned_efficiency": 0.55}})", "u.json")
                .gemm_unaligned_efficiency,
            0.55);
  // Near zero, an efficiency is refused at its field (it would make a kernel
  // last beyond the clock's range).
  for (const char* field : {"compute", "hbm", "embedding_hbm"}) {
    try {
      parse_device_profile(fmt::format(R"({{"schema_version": 1, "efficiency": {{"{}": 1e-300}}}})", field), "e.json");
      FAIL() << field;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("e.json: /efficiency/{}: expected a number in [0.001, 1], got 1e-300", field));
    }
  }
  for (const char* bad : {"0", "1.5"}) {
    try {
      parse_device_profile(fmt::format(R"({{"schema_version": 1, "gemm": {{"unaligned_efficiency": {}}}}})", bad),
                           "u.json");
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("u.json: /gemm/unaligned_efficiency: expected a number in {}, got {}",
                            std::string(bad) == "0" ? "[0.001, 1]" : "[0, 1]", bad));
    }
  }
  try {
    parse_device_profile(R"({"schema_version": 1, "base": "a100", "efficiency": {"compute": 1.5},
                             "hbm": {"bandwidth_gbyte_per_s": 0}, "sm_cout": 3})",
                         "bad.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "bad.json: /base: unknown value 'a100'; valid: a100-40gb, a100-80gb, b200, b300, gb200, gb300, h100-sxm, h200\n"
              "bad.json: /hbm/bandwidth_gbyte_per_s: expected a number in (0, 1000000), got 0\n"
              "bad.json: /efficiency/compute: expected a number in [0, 1], got 1.5\n"
              "bad.json: unknown key 'sm_cout' (did you mean 'sm_count'?)");
  }
}

// A large square GEMM: one near-full wave of 128x128 tiles, so the time is
// 2 n^3 / (peak x 0.705 x wave x k/(k+64)) and it is compute bound.
TEST(CostModelTest, LargeGemmClosedForm) {
  const DeviceProfile p = a100();
  const std::int64_t n = 8192;
  const double tiles = 64.0 * 64.0;
  const double waves = std::ceil(tiles / 108.0);
  const double efficiency = 0.705 * (tiles / (waves * 108.0)) * (8192.0 / (8192.0 + 64.0));
  EXPECT_DOUBLE_EQ(gemm_efficiency(p, n, n, n), efficiency);
  const KernelCost c = gemm(p, n, n, n, DataType::kBf16);
  EXPECT_TRUE(c.compute_bound);
  EXPECT_EQ(c.kernels, 1);
  const double expected = 2.0 * n * n * n / (312e12 * efficiency);
  EXPECT_NEAR(seconds(c), expected + 3e-6, 1e-12);
}

// Thin GEMMs are memory bound: a rank-1 update moves 2 n^2 bytes per pass.
TEST(CostModelTest, ThinGemmIsMemoryBound) {
  const DeviceProfile p = a100();
  const KernelCost c = gemm(p, 8192, 8192, 1, DataType::kFp16);
  EXPECT_FALSE(c.compute_bound);
  EXPECT_EQ(c.hbm_bytes, (8192.0 + 8192.0 + 8192.0 * 8192.0) * 2);
  EXPECT_NEAR(seconds(c), c.hbm_bytes / (1555e9 * 0.836) + 3e-6, 1e-12);
}

// One extra tile beyond a full wave costs a whole extra wave.
TEST(CostModelTest, WaveQuantisation) {
  const DeviceProfile p = a100();
  // 108 tiles of 64x64 (the smallest tile) fill one wave exactly.
  const double one_wave = gemm_efficiency(p, 64 * 108, 64, 4096);
  const double spill = gemm_efficiency(p, 64 * 109, 64, 4096);
  EXPECT_GT(one_wave, spill);
  EXPECT_LE(one_wave, p.compute_efficiency);
}

// More work never takes less time: growing any GEMM dimension.
TEST(CostModelTest, GemmTimeIsMonotone) {
  const DeviceProfile p = a100();
  for (std::int64_t m : {64, 512, 4096}) {
    for (std::int64_t k : {16, 256, 3994}) {
      sim::Duration previous = sim::Duration::zero();
      for (std::int64_t n = 64; n <= 8192; n *= 2) {
        const sim::Duration t = gemm(p, m, n, k, DataType::kBf16).time;
        EXPECT_GE(t, previous) << m << "x" << n << "x" << k;
        previous = t;
      }
    }
  }
}

// The fused TBE forward moves every lookup's sector-rounded row (94 fp16 =
// 188 B -> 192 B) at the gather efficiency, and indices and pooled outputs
// at the streaming efficiency.
TEST(CostModelTest, EmbeddingForwardClosedForm) {
  const DeviceProfile p = a100();
  const EmbeddingShape s{.batch = 512, .tables = 512, .pooling = 15, .dim = 94};
  EXPECT_EQ(sector_bytes(188), 192);
  const double lookups = 512.0 * 512 * 15;
  const double gathered = lookups * 192;
  const double streamed = lookups * 8 + 512.0 * 512 * 94 * 2;
  const KernelCost c = embedding_forward_fused(p, s);
  EXPECT_EQ(c.hbm_bytes, gathered + streamed);
  EXPECT_NEAR(seconds(c), gathered / (1555e9 * 0.65) + streamed / (1555e9 * 0.836) + 3e-6, 1e-9);
}

// A per-access cost adds lookups x embedding_row_access_ns to the forward
// and twice that to the backward (row and state), fused or not, and nothing
// to the bytes moved.
TEST(CostModelTest, EmbeddingRowAccessCostPerLookup) {
  DeviceProfile p = a100();
  const EmbeddingShape s{.batch = 512, .tables = 64, .pooling = 20, .dim = 32};
  const double lookups = 512.0 * 64 * 20;
  DeviceProfile q = p;
  q.embedding_row_access_ns = 0.25;
  EXPECT_NEAR(seconds(embedding_forward_fused(q, s)) - seconds(embedding_forward_fused(p, s)),
              lookups * 0.25e-9, 2e-12);
  EXPECT_NEAR(seconds(embedding_backward_fused(q, s)) - seconds(embedding_backward_fused(p, s)),
              2 * lookups * 0.25e-9, 2e-12);
  EXPECT_NEAR(seconds(embedding_forward_unfused(q, s)) - seconds(embedding_forward_unfused(p, s)),
              lookups * 0.25e-9, 2e-12);
  EXPECT_NEAR(seconds(embedding_backward_unfused(q, s)) - seconds(embedding_backward_unfused(p, s)),
              2 * lookups * 0.25e-9, 2e-12);
  EXPECT_EQ(embedding_forward_fused(q, s).hbm_bytes, embedding_forward_fused(p, s).hbm_bytes);
  // The backward's fixed overhead: once fused, once per table unfused.
  DeviceProfile o = p;
  o.embedding_backward_overhead_ns = 12000;
  EXPECT_EQ(embedding_backward_fused(o, s).time - embedding_backward_fused(p, s).time, sim::Duration::from_ns_ceil(12000));
  EXPECT_EQ(embedding_backward_unfused(o, s).time - embedding_backward_unfused(p, s).time,
            sim::Duration::from_ns_ceil(12000.0 * 64));
  EXPECT_EQ(embedding_forward_fused(o, s).time, embedding_forward_fused(p, s).time);
  EXPECT_EQ(parse_device_profile(device_profile_to_json(o), "o.json").embedding_backward_overhead_ns, 12000);
  // Round trip through the profile file.
  EXPECT_EQ(parse_device_profile(device_profile_to_json(q), "q.json").embedding_row_access_ns, 0.25);
}

// The same embedding forward on a B200 costs the A100's time scaled by the
// HBM bandwidths (the efficiencies are the same assumption), launch aside.
TEST(CostModelTest, EmbeddingForwardScalesWithHbmBandwidth) {
  const EmbeddingShape s{.batch = 512, .tables = 512, .pooling = 15, .dim = 94};
  const KernelCost a = embedding_forward_fused(a100(), s);
  const KernelCost b = embedding_forward_fused(builtin_device_profile("b200"), s);
  EXPECT_EQ(b.hbm_bytes, a.hbm_bytes);
  EXPECT_NEAR((seconds(b) - 3e-6) / (seconds(a) - 3e-6), 1555.0 / 7672.0, 1e-6);
}

// Fusion never loses: the unfused forward pays a launch per table, and the
// unfused backward also writes and re-reads a gradient row per lookup.
TEST(CostModelTest, FusedEmbeddingsBeatUnfused) {
  const DeviceProfile p = a100();
  for (std::int64_t tables : {1, 8, 64, 512}) {
    const EmbeddingShape s{.batch = 256, .tables = tables, .pooling = 20, .dim = 128};
    const KernelCost ff = embedding_forward_fused(p, s);
    const KernelCost fu = embedding_forward_unfused(p, s);
    EXPECT_EQ(fu.time - ff.time, p.kernel_launch * (tables - 1)) << tables;
    const KernelCost bf = embedding_backward_fused(p, s);
    const KernelCost bu = embedding_backward_unfused(p, s);
    EXPECT_GT(bu.time, bf.time) << tables;
    EXPECT_GT(bu.hbm_bytes, bf.hbm_bytes) << tables;
    EXPECT_EQ(bu.kernels, 2 * tables);
    // Backward moves more than forward (reads and writes rows and state).
    EXPECT_GT(bf.hbm_bytes, ff.hbm_bytes);
  }
}

TEST(CostModelTest, OptimizerConvertAndCopyClosedForms) {
  const DeviceProfile p = a100();
  const std::int64_t n = 100'000'000;
  EXPECT_EQ(dense_optimizer_step(p, n, DenseOptimizer::kSgd).hbm_bytes, 12.0 * n);
  EXPECT_EQ(dense_optimizer_step(p, n, DenseOptimizer::kAdagrad).hbm_bytes, 20.0 * n);
  EXPECT_EQ(dense_optimizer_step(p, n, DenseOptimizer::kAdam).hbm_bytes, 28.0 * n);
  const KernelCost q = convert(p, n, DataType::kFp32, DataType::kFp16);
  EXPECT_EQ(q.hbm_bytes, 6.0 * n);
  EXPECT_NEAR(seconds(q), 6.0 * n / (1555e9 * 0.836) + 3e-6, 1e-12);
  const KernelCost h2d = host_to_device_copy(p, 12'000'000'000);
  EXPECT_EQ(h2d.time, sim::Duration::s(1));
  EXPECT_EQ(h2d.kernels, 0);
}

TEST(CostModelTest, InteractionsAndLinearLayers) {
  const DeviceProfile p = a100();
  const KernelCost dot = dot_interaction_forward(p, 512, 27, 128, DataType::kFp16);
  EXPECT_EQ(dot.flops, 2.0 * 512 * 27 * 27 * 128);
  EXPECT_GT(dot_interaction_backward(p, 512, 27, 128, DataType::kFp16).time, sim::Duration::zero());
  const KernelCost cross = dcn_cross_layer_forward(p, 512, 3456, 512, DataType::kFp16);
  EXPECT_EQ(cross.kernels, 3);
  EXPECT_GE(cross.flops, 2.0 * 2 * 512 * 3456 * 512);
  EXPECT_GT(dcn_cross_layer_backward(p, 512, 3456, 512, DataType::kFp16).time, cross.time);
  // A layer's backward is two GEMMs of the forward's size.
  const KernelCost fwd = linear_forward(p, 512, 3994, 3994, DataType::kFp32);
  const KernelCost bwd = linear_backward(p, 512, 3994, 3994, DataType::kFp32);
  EXPECT_EQ(fwd.flops, 2.0 * 512 * 3994 * 3994);
  EXPECT_EQ(bwd.flops, 2 * fwd.flops);
  EXPECT_THROW(gemm(p, 0, 1, 1, DataType::kFp32), std::invalid_argument);
}

TEST(DataTypeTest, NamesAndSizes) {
  EXPECT_EQ(element_bytes(DataType::kBf16), 2);
  EXPECT_EQ(element_bytes(DataType::kFp8), 1);
  EXPECT_EQ(element_bytes(DataType::kTf32), 4);
  EXPECT_EQ(parse_data_type("bf16"), DataType::kBf16);
  EXPECT_EQ(to_string(DataType::kFp16), "fp16");
  EXPECT_THROW(parse_data_type("fp64"), std::invalid_argument);
}

}  // namespace
}  // namespace zx::models
