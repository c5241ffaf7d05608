// File: calibration/calibrate_test.cc
//
// The calibration pipeline on synthetic measurements (testing/synthetic.h):
// times generated from known parameters by the cost model's formulas with 2%
// log-normal noise from std::mt19937_64(42). Expectations:
//   - every fitted parameter comes back within a tolerance set by the noise
//     (2% per point over tens of points: ~1% on efficiencies; K_half, an
//     inverse-K effect seen mostly in the K sweep, within 15%);
//   - the hold-out MAPE of every fitted family is below 3% (the noise
//     alone gives E|exp(0.02 z) - 1| ~ 1.6%) and validation families, priced
//     by the same formulas, below 5%;
//   - the written profile parses back (parse_device_profile) to the same
//     parameters, with provenance;
//   - the result does not depend on line order; degenerate families are errors.

#include "calibration/calibrate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "calibration/testing/synthetic.h"
#include "models/compute/device_profile.h"

namespace zx::calibration {
namespace {

using testing::synthetic_measurements;
using testing::SyntheticTruth;

CalibrationResult run(const std::string& text, const CalibrationOptions& options = {}) {
  return calibrate(parse_measurements(text, "synthetic.jsonl"), options);
}

TEST(Calibrate, RecoversKnownParameters) {
  const SyntheticTruth truth;
  const CalibrationResult r = run(synthetic_measurements(truth));
  const models::DeviceProfile& p = r.profile;
  EXPECT_NEAR(p.compute_efficiency, truth.compute_efficiency, 0.01 * truth.compute_efficiency);
  EXPECT_NEAR(p.gemm_k_half, truth.gemm_k_half, 0.15 * truth.gemm_k_half);
  EXPECT_NEAR(p.hbm_efficiency, truth.hbm_efficiency, 0.01 * truth.hbm_efficiency);
  EXPECT_NEAR(p.embedding_hbm_efficiency, truth.embedding_hbm_efficiency,
              0.02 * truth.embedding_hbm_efficiency);
  EXPECT_NEAR(p.embedding_row_access_ns, truth.embedding_row_access_ns,
              0.05 * truth.embedding_row_access_ns);
  EXPECT_NEAR(p.embedding_backward_overhead_ns, truth.tbe_backward_overhead_ns,
              0.05 * truth.tbe_backward_overhead_ns);
  EXPECT_NEAR(static_cast<double>(p.kernel_launch.count_ps()) / 1e3, truth.launch_ns,
              0.03 * truth.launch_ns);
  EXPECT_NEAR(static_cast<double>(p.host_to_device_bandwidth.count()) / 1e9, truth.h2d_gbyte_per_s,
              0.02 * truth.h2d_gbyte_per_s);
  EXPECT_EQ(p.sm_count, truth.sm_count);
  // Every dtype is fitted and reported, each near the truth.
  ASSERT_EQ(r.gemm_by_dtype.size(), 4u);
  for (const auto& [dtype, fit] : r.gemm_by_dtype) {
    EXPECT_NEAR(fit.compute_efficiency, truth.compute_efficiency, 0.015 * truth.compute_efficiency) << dtype;
    EXPECT_NEAR(fit.k_half, truth.gemm_k_half, 0.2 * truth.gemm_k_half) << dtype;
    EXPECT_TRUE(fit.unaligned_fitted) << dtype;
    EXPECT_NEAR(fit.unaligned_efficiency, truth.gemm_unaligned_efficiency,
                0.02 * truth.gemm_unaligned_efficiency)
        << dtype;
    EXPECT_GE(fit.unaligned_points, 10u) << dtype;
  }
  EXPECT_NEAR(p.gemm_unaligned_efficiency, truth.gemm_unaligned_efficiency,
              0.02 * truth.gemm_unaligned_efficiency);
  // Not measured: taken from the base profile.
  const models::DeviceProfile base = models::builtin_device_profile("h200");
  EXPECT_EQ(p.peak_bf16_flops, base.peak_bf16_flops);
  EXPECT_EQ(p.hbm_bandwidth.count(), base.hbm_bandwidth.count());
  EXPECT_EQ(p.name, "h200-calibrated");
}

TEST(Calibrate, HoldOutErrorsAreSmall) {
  const CalibrationResult r = run(synthetic_measurements(SyntheticTruth{}));
  for (const char* name : {"launch", "copy h2d", "copy d2h", "copy d2d", "streaming", "embedding",
                           "gemm bf16", "gemm fp16", "gemm tf32", "gemm fp32"}) {
    const FamilyReport* f = r.family(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_TRUE(f->refused.empty()) << name << ": " << f->refused;
    EXPECT_FALSE(f->held_out.empty()) << name;
    EXPECT_LT(f->holdout_mape, 0.03) << name;
    EXPECT_LT(f->holdout_worst, 0.08) << name;
    EXPECT_GT(f->r_squared, 0.99) << name;
    // Every 5th point is held out: about a quarter as many as are fitted.
    EXPECT_EQ(f->held_out.size(), (f->fit_points + f->held_out.size()) / 5) << name;
  }
  for (const char* name :
       {"adagrad_step (validation)", "a2a_pack (validation)", "dot_interaction fp16 (validation)",
        "dot_interaction fp32 (validation)"}) {
    const FamilyReport* f = r.family(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_TRUE(f->validation);
    EXPECT_LT(f->holdout_mape, 0.05) << name;
  }
  // The Zipf point is excluded by default, and the short GEMMs by the time floor.
  EXPECT_EQ(r.family("embedding")->excluded_points, 1u);
  EXPECT_GT(r.family("gemm bf16")->excluded_points, 0u);
}

TEST(Calibrate, ProfileParsesBackWithProvenance) {
  const CalibrationResult r =
      run(synthetic_measurements(SyntheticTruth{}), CalibrationOptions{.profile_name = "h200-lab"});
  const models::DeviceProfile back = models::parse_device_profile(r.profile_json, "written.json");
  EXPECT_EQ(back.name, "h200-lab");
  EXPECT_DOUBLE_EQ(back.compute_efficiency, r.profile.compute_efficiency);
  EXPECT_DOUBLE_EQ(back.embedding_hbm_efficiency, r.profile.embedding_hbm_efficiency);
  EXPECT_EQ(back.kernel_launch, r.profile.kernel_launch);
  EXPECT_NE(r.profile_json.find("\"schema_version\": 1"), std::string::npos);
  EXPECT_NE(r.profile_json.find("\"provenance\""), std::string::npos);
  EXPECT_NE(r.profile_json.find("\"gpu\": \"Synthetic H200\""), std::string::npos);
  EXPECT_NE(r.profile_json.find("\"kernels_ref_commit\": \"synthetic\""), std::string::npos);
  EXPECT_NE(r.profile_json.find("\"date\": \"2026-01-01T00:00:00Z\""), std::string::npos);
  EXPECT_NE(r.report_markdown.find("## Fits and hold-out errors"), std::string::npos);
  EXPECT_NE(r.report_markdown.find("| gemm bf16 | compute_efficiency = "), std::string::npos);
  EXPECT_NE(r.report_markdown.find("## Embedding gather efficiency by kernel, dtype, D and L"),
            std::string::npos);
  // Written files read back the same way.
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir());
  write_calibration(r, (dir / "profile.json").string(), (dir / "report.md").string());
  EXPECT_EQ(models::load_device_profile((dir / "profile.json").string()).compute_efficiency,
            r.profile.compute_efficiency);
  EXPECT_TRUE(std::filesystem::exists(dir / "report.md"));
}

TEST(Calibrate, DeterministicAndIndependentOfLineOrder) {
  const std::string text = synthetic_measurements(SyntheticTruth{});
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::reverse(lines.begin(), lines.end());
  std::string reversed;
  for (const std::string& line : lines) reversed += line + "\n";
  const CalibrationResult a = run(text);
  const CalibrationResult b = run(text);
  const CalibrationResult c = run(reversed);
  EXPECT_EQ(a.profile_json, b.profile_json);
  EXPECT_EQ(a.report_markdown, b.report_markdown);
  // Sources (file:line) differ in the reversed file, so compare the fitted numbers.
  EXPECT_EQ(a.profile.compute_efficiency, c.profile.compute_efficiency);
  EXPECT_EQ(a.profile.gemm_k_half, c.profile.gemm_k_half);
  EXPECT_EQ(a.profile.embedding_hbm_efficiency, c.profile.embedding_hbm_efficiency);
  EXPECT_EQ(a.profile.hbm_efficiency, c.profile.hbm_efficiency);
  EXPECT_EQ(a.profile.kernel_launch, c.profile.kernel_launch);
}

std::string error_of(const std::string& text, const CalibrationOptions& options = {}) {
  try {
    run(text, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Keeps the lines for which `keep` is true.
std::string filter(const std::string& text, const std::function<bool(const std::string&)>& keep) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (keep(line)) out += line + "\n";
  }
  return out;
}

TEST(Calibrate, DegenerateFamiliesAreErrors) {
  const std::string text = synthetic_measurements(SyntheticTruth{});
  // One launch point: too few to fit.
  bool first = true;
  const std::string one_launch = filter(text, [&](const std::string& line) {
    if (line.find("\"kernel\":\"launch\"") == std::string::npos) return true;
    const bool keep = first;
    first = false;
    return keep;
  });
  EXPECT_EQ(error_of(one_launch),
            "calibration: launch: expected at least 3 points to fit, got 1; with --partial, base "
            "profile 'h200''s value is kept and the rest fitted");
  // bf16 GEMMs at one K only: all 1/K equal, so k_half is not identifiable.
  const std::string one_k = filter(text, [](const std::string& line) {
    return line.find("\"dtype\":\"bf16\"") == std::string::npos ||
           line.find("\"kernel\":\"gemm\"") == std::string::npos ||
           line.find("\"k\":4096,") != std::string::npos;
  });
  EXPECT_EQ(error_of(one_k).rfind(
                "calibration: gemm bf16 (aligned shapes): expected at least 2 distinct x values, got 1",
                0),
            0u)
      << error_of(one_k);
  // An optional family that cannot be fitted is reported, not fatal.
  const std::string no_fp32 = filter(text, [](const std::string& line) {
    return line.find("\"dtype\":\"fp32\"") == std::string::npos ||
           line.find("\"kernel\":\"gemm\"") == std::string::npos;
  });
  const CalibrationResult r = run(no_fp32);
  ASSERT_NE(r.family("gemm fp32"), nullptr);
  EXPECT_EQ(r.family("gemm fp32")->refused,
            "gemm fp32 (aligned shapes): expected at least 3 points to fit, got 0");
  // A streaming bandwidth above the base profile's peak is refused, not clamped.
  SyntheticTruth fast;
  fast.hbm_efficiency = 1.3;
  EXPECT_EQ(error_of(synthetic_measurements(fast))
                .rfind("calibration: streaming: expected hbm_efficiency in (0, 1], "
                       "fitted 1.29",
                       0),
            0u)
      << error_of(synthetic_measurements(fast));
  EXPECT_EQ(error_of(text, CalibrationOptions{.holdout_every = 1}),
            "calibration: options: expected holdout_every 0 (none) or >= 2, got 1");
  EXPECT_EQ(error_of(text, CalibrationOptions{.base_profile = "h201"}),
            "--base: unknown GPU profile 'h201' (did you mean 'h200'?); valid: a100-40gb, a100-80gb, b200, b300, gb200, gb300, h100-sxm, h200");
}

// GEMMs with a dimension off 16 bytes (model A's 3994-wide MLP) run at
// their own rate. Its fit is a sub-fit of the GEMM family: with too few
// unaligned points, or unaligned shapes no slower than aligned ones, the
// base profile's value stays, saying why, and compute_efficiency and k_half
// are fitted as before; and without the sub-fit the family's hold-out
// error shows what the aligned model alone would miss.
TEST(Calibrate, UnalignedGemmsFitTheirOwnRate) {
  const SyntheticTruth truth;  // gemm_unaligned_efficiency 0.6
  const std::string text = synthetic_measurements(truth);
  const CalibrationResult r = run(text);
  const FamilyReport* bf16 = r.family("gemm bf16");
  ASSERT_NE(bf16, nullptr);
  EXPECT_NE(bf16->parameters.find(", unaligned_efficiency = 0.6"), std::string::npos) << bf16->parameters;
  // Held-out unaligned points are predicted within the noise.
  int unaligned_held_out = 0;
  for (const PointPrediction& p : bf16->held_out) {
    if (p.key.find("3994") == std::string::npos && p.key.find("4094") == std::string::npos &&
        p.key.find("826") == std::string::npos && p.key.find("2046") == std::string::npos) {
      continue;
    }
    ++unaligned_held_out;
    EXPECT_LT(std::abs(p.relative_error()), 0.08) << p.key;
  }
  EXPECT_GT(unaligned_held_out, 0);
  EXPECT_NE(r.profile_json.find("\"unaligned_efficiency\": 0.6"), std::string::npos);
  EXPECT_NE(r.report_markdown.find("| gemm_unaligned_efficiency (bf16) | 1.0000 | 0.6"), std::string::npos);
  // The report sets each parameter beside the base profile's, with the ratio.
  EXPECT_NE(r.report_markdown.find("| parameter | base (h200) | calibrated | ratio |"), std::string::npos);
  EXPECT_NE(r.report_markdown.find("| embedding_row_access_ns | 0.0000 | 0.0"), std::string::npos);
  EXPECT_NE(r.report_markdown.find("| sm_count (from the measurements' provenance) | 132 | 132 | 1.000 |"),
            std::string::npos);
  EXPECT_EQ(models::parse_device_profile(r.profile_json, "back").gemm_unaligned_efficiency,
            r.profile.gemm_unaligned_efficiency);

  // Only the aligned bf16 shapes and two unaligned ones: too few, kept.
  int unaligned_kept = 0;
  const std::string two_unaligned = filter(text, [&](const std::string& line) {
    if (line.find("\"kernel\":\"gemm\"") == std::string::npos ||
        line.find("\"dtype\":\"bf16\"") == std::string::npos) {
      return true;
    }
    const bool unaligned = line.find("3994") != std::string::npos || line.find("4094") != std::string::npos ||
                           line.find("826") != std::string::npos || line.find("2046") != std::string::npos ||
                           line.find("\"n\":13,") != std::string::npos || line.find("\"k\":13,") != std::string::npos ||
                           line.find("\"m\":1,") != std::string::npos || line.find("\"n\":1,") != std::string::npos ||
                           line.find("\"k\":1,") != std::string::npos;
    return !unaligned || ++unaligned_kept <= 2;
  });
  const CalibrationResult few = run(two_unaligned, CalibrationOptions{.holdout_every = 0});
  const GemmFit& g = few.gemm_by_dtype.at("bf16");
  EXPECT_FALSE(g.unaligned_fitted);
  EXPECT_EQ(g.unaligned_efficiency, 1.0);  // h200's
  EXPECT_NEAR(g.compute_efficiency, truth.compute_efficiency, 0.015 * truth.compute_efficiency);
  EXPECT_EQ(few.profile.gemm_unaligned_efficiency, 1.0);
  EXPECT_NE(few.family("gemm bf16")->parameters.find(
                "; unaligned_efficiency = 1.0000 kept from 'h200': expected at least 3 points to fit, got"),
            std::string::npos)
      << few.family("gemm bf16")->parameters;
  EXPECT_NE(few.report_markdown.find("| bf16 | 0.7"), std::string::npos);
  EXPECT_NE(few.report_markdown.find(" | 1.0000 (base) | "), std::string::npos);

  // Unaligned shapes faster than aligned ones: not an efficiency, kept.
  SyntheticTruth faster = truth;
  faster.gemm_unaligned_efficiency = 1.2;
  const CalibrationResult f = run(synthetic_measurements(faster));
  EXPECT_FALSE(f.gemm_by_dtype.at("bf16").unaligned_fitted);
  EXPECT_EQ(f.profile.gemm_unaligned_efficiency, 1.0);
  EXPECT_NE(f.family("gemm bf16")->parameters.find("kept from 'h200': fitted 1.2"), std::string::npos)
      << f.family("gemm bf16")->parameters;

  // 16 bytes of the dtype's element as stored: 4092 = 4 x 1023 is aligned
  // for tf32 (stored as fp32), not for bf16.
  std::string more = text;
  for (const char* dtype : {"tf32", "bf16"}) {
    for (int k : {4092, 8188, 12284}) {
      more += fmt::format(
          "{{\"record\":\"measurement\",\"kernel\":\"gemm\",\"params\":{{\"m\":4096,\"n\":4096,"
          "\"k\":{},\"batch\":1,\"dtype\":\"{}\"}},\"time_ns\":{{\"median\":{}}},\"flops\":{}}}\n",
          k, dtype, 2.0 * 4096 * 4096 * k / (0.5e3 * 0.78), 2.0 * 4096 * 4096 * k);
    }
  }
  const CalibrationResult m = run(more, CalibrationOptions{.holdout_every = 0});
  const CalibrationResult base_run = run(text, CalibrationOptions{.holdout_every = 0});
  EXPECT_EQ(m.gemm_by_dtype.at("tf32").aligned_points, base_run.gemm_by_dtype.at("tf32").aligned_points + 3);
  EXPECT_EQ(m.gemm_by_dtype.at("tf32").unaligned_points, base_run.gemm_by_dtype.at("tf32").unaligned_points);
  EXPECT_EQ(m.gemm_by_dtype.at("bf16").unaligned_points, base_run.gemm_by_dtype.at("bf16").unaligned_points + 3);

  // Aligned GEMMs alone at the truth's rate: the fit finds no penalty.
  SyntheticTruth none = truth;
  none.gemm_unaligned_efficiency = 1.0;
  none.noise = 0;
  const GemmFit n = run(synthetic_measurements(none)).gemm_by_dtype.at("fp16");
  EXPECT_NEAR(n.unaligned_efficiency, 1.0, 1e-9);
  EXPECT_NEAR(n.compute_efficiency, none.compute_efficiency, 1e-9);
}

// The GEMM tile: the base's (128 x 128) when the measurements follow it,
// another when it explains the wave quantisation clearly better, written
// to the profile with the efficiency fitted under it.
TEST(Calibrate, GemmTileIsTheBaseUnlessAnotherFitsClearlyBetter) {
  const SyntheticTruth truth;
  const CalibrationResult r = run(synthetic_measurements(truth));
  for (const auto& [dtype, g] : r.gemm_by_dtype) {
    EXPECT_EQ(g.tile_m, 128) << dtype;
    EXPECT_EQ(g.tile_n, 128) << dtype;
  }
  EXPECT_EQ(r.profile.gemm_tile_m, 128);
  EXPECT_EQ(r.family("gemm bf16")->parameters.find("tile"), std::string::npos);

  SyntheticTruth wide = truth;
  wide.gemm_tile_m = 256;
  wide.gemm_tile_n = 256;
  const CalibrationResult w = run(synthetic_measurements(wide));
  const GemmFit& g = w.gemm_by_dtype.at("bf16");
  EXPECT_EQ(g.tile_m, 256);
  EXPECT_EQ(g.tile_n, 256);
  EXPECT_NEAR(g.compute_efficiency, wide.compute_efficiency, 0.015 * wide.compute_efficiency);
  EXPECT_NEAR(g.unaligned_efficiency, wide.gemm_unaligned_efficiency, 0.02 * wide.gemm_unaligned_efficiency);
  EXPECT_EQ(w.profile.gemm_tile_m, 256);
  EXPECT_EQ(w.profile.gemm_tile_n, 256);
  EXPECT_NE(w.family("gemm bf16")->parameters.find(", tile 256x256 (rms "), std::string::npos)
      << w.family("gemm bf16")->parameters;
  EXPECT_LT(w.family("gemm bf16")->holdout_mape, 0.03);
  EXPECT_NE(w.report_markdown.find("| gemm tile (bf16) | 128x128 | 256x256 | - |"), std::string::npos);
  const models::DeviceProfile back = models::parse_device_profile(w.profile_json, "back");
  EXPECT_EQ(back.gemm_tile_m, 256);
}

// Embedding gathers cost per byte and per row access: small rows take
// longer per byte. Both are fitted from the sweep's row sizes; without a
// per-access cost the fit finds none (within the noise) or, fitted
// negative, keeps the base's and fits the bytes alone; with one row size
// the two cannot be told apart and the bytes alone are fitted too.
TEST(Calibrate, EmbeddingFitsPerAccessAndPerByteCosts) {
  const SyntheticTruth truth;  // 0.05 ns per access
  const CalibrationResult r = run(synthetic_measurements(truth));
  const FamilyReport* e = r.family("embedding");
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->parameters.find(" G accesses/s), backward_overhead = 1"), std::string::npos) << e->parameters;
  EXPECT_LT(e->holdout_mape, 0.03);
  // The effective efficiency falls with the row: fp16 D = 32 (64-byte rows)
  // well under fp32 D = 256 (1 KiB).
  const double small = r.embedding_efficiency_by_shape.at("tbe_forward fp16 D=32 L=20");
  const double large = r.embedding_efficiency_by_shape.at("tbe_forward fp32 D=256 L=20");
  EXPECT_LT(small, 0.6 * large) << small << " vs " << large;
  EXPECT_NE(r.profile_json.find("\"embedding_row_access_ns\": 0.0"), std::string::npos);

  EXPECT_LT(e->holdout_worst, 0.08);

  SyntheticTruth none = truth;
  none.embedding_row_access_ns = 0;
  none.noise = 0;
  const CalibrationResult n = run(synthetic_measurements(none));
  EXPECT_NEAR(n.profile.embedding_row_access_ns, 0, 1e-6);
  EXPECT_NEAR(n.profile.embedding_hbm_efficiency, none.embedding_hbm_efficiency, 1e-6);

  // Forward runs only: no backward overhead to fit, the base's kept.
  const CalibrationResult fwd = run(filter(synthetic_measurements(truth), [](const std::string& line) {
    return line.find("\"kernel\":\"tbe_backward") == std::string::npos;
  }));
  EXPECT_EQ(fwd.profile.embedding_backward_overhead_ns, 0);
  EXPECT_NE(fwd.family("embedding")->parameters.find(
                "backward_overhead = 0 ns kept from 'h200': needs forward and backward runs"),
            std::string::npos)
      << fwd.family("embedding")->parameters;
  EXPECT_NEAR(fwd.profile.embedding_row_access_ns, truth.embedding_row_access_ns,
              0.1 * truth.embedding_row_access_ns);

  // One row size (fp16, D = 128): bytes alone, the base's 0 per access.
  const std::string one_row = filter(synthetic_measurements(truth), [](const std::string& line) {
    return line.find("\"kernel\":\"tbe_") == std::string::npos ||
           (line.find("\"dim\":128,") != std::string::npos &&
            line.find("\"weight_dtype\":\"fp16\"") != std::string::npos &&
            line.find("\"tbe_forward\"") != std::string::npos);
  });
  const CalibrationResult o = run(one_row);
  EXPECT_EQ(o.profile.embedding_row_access_ns, 0);
  EXPECT_NE(o.family("embedding")->parameters.find(
                "row_access = 0.0000 ns kept from 'h200': the design is rank-deficient"),
            std::string::npos)
      << o.family("embedding")->parameters;
}

// With `partial`, a profile parameter whose family cannot be fitted keeps
// the base profile's value, named in the family report, the provenance and
// the report; the other parameters are fitted as with every family present.
TEST(Calibrate, PartialKeepsTheBaseValueOfWhatCannotBeFitted) {
  const SyntheticTruth truth;
  const std::string text = synthetic_measurements(truth);
  const models::DeviceProfile base = models::builtin_device_profile("h200");
  const auto without = [&](const std::string& what) {
    return filter(text, [&](const std::string& line) { return line.find(what) == std::string::npos; });
  };
  const CalibrationOptions partial{.partial = true};

  // No TBE measurements (a failed TBE check: the suite times none).
  const std::string no_tbe = without("\"kernel\":\"tbe_");
  EXPECT_EQ(error_of(no_tbe),
            "calibration: embedding: expected at least 3 points to fit, got 0; with --partial, base "
            "profile 'h200''s value is kept and the rest fitted");
  const CalibrationResult r = run(no_tbe, partial);
  EXPECT_EQ(r.profile.embedding_hbm_efficiency, base.embedding_hbm_efficiency);
  EXPECT_NEAR(r.profile.compute_efficiency, truth.compute_efficiency, 0.01 * truth.compute_efficiency);
  EXPECT_NEAR(r.profile.hbm_efficiency, truth.hbm_efficiency, 0.01 * truth.hbm_efficiency);
  const FamilyReport* e = r.family("embedding");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->refused, "expected at least 3 points to fit, got 0");
  EXPECT_EQ(e->kept, "embedding_hbm_efficiency = 0.6500, embedding_row_access_ns = 0.0000, "
            "embedding_backward_overhead_ns = 0 (from 'h200')");
  const std::string kept_line =
      R"x("embedding": "embedding_hbm_efficiency = 0.6500, embedding_row_access_ns = 0.0000, embedding_backward_overhead_ns = 0 (from 'h200')")x";
  const std::size_t kept_at = r.profile_json.find("\"kept_from_base\": {");
  ASSERT_NE(kept_at, std::string::npos) << r.profile_json;
  EXPECT_NE(r.profile_json.find(kept_line, kept_at), std::string::npos) << r.profile_json;
  EXPECT_NE(r.report_markdown.find("**Not fitted, kept from the base profile (--partial):** embedding"),
            std::string::npos);
  // Every family that has its points is fitted exactly as without --partial.
  const CalibrationResult all = run(text, partial);
  // The same profile, but for the provenance's record of the option.
  std::string as_partial = run(text).profile_json;
  const std::string option_off = "\"partial\": false";
  ASSERT_NE(as_partial.find(option_off), std::string::npos);
  as_partial.replace(as_partial.find(option_off), option_off.size(), "\"partial\": true");
  EXPECT_EQ(all.profile_json, as_partial);
  for (const FamilyReport& f : all.families) EXPECT_TRUE(f.kept.empty()) << f.family;

  // No bf16 GEMMs (the profile's dtype; a run cut short before them): the
  // base's compute efficiency and k_half; the other dtypes still fitted.
  const CalibrationResult no_bf16 = run(filter(text, [](const std::string& line) {
    return line.find("\"dtype\":\"bf16\"") == std::string::npos || line.find("\"kernel\":\"gemm\"") == std::string::npos;
  }), partial);
  EXPECT_EQ(no_bf16.profile.compute_efficiency, base.compute_efficiency);
  EXPECT_EQ(no_bf16.profile.gemm_k_half, base.gemm_k_half);
  EXPECT_EQ(no_bf16.gemm_by_dtype.count("bf16"), 0u);
  EXPECT_EQ(no_bf16.gemm_by_dtype.count("fp16"), 1u);

  // No streaming kernels: the base's hbm_efficiency, and the embedding fit
  // prices its streamed bytes with it (so its efficiency moves, but is fitted).
  const CalibrationResult no_stream = run(filter(text, [](const std::string& line) {
    return line.find("\"kernel\":\"convert\"") == std::string::npos &&
           line.find("\"kernel\":\"reduce_add\"") == std::string::npos;
  }), partial);
  EXPECT_EQ(no_stream.profile.hbm_efficiency, base.hbm_efficiency);
  ASSERT_NE(no_stream.family("embedding"), nullptr);
  EXPECT_TRUE(no_stream.family("embedding")->refused.empty());
  EXPECT_EQ(no_stream.family("adagrad_step (validation)"), nullptr);  // nothing fitted to validate

  // Launch and host copies missing too: each kept.
  const CalibrationResult few = run(filter(text, [](const std::string& line) {
    return line.find("\"kernel\":\"launch\"") == std::string::npos &&
           line.find("\"direction\":\"h2d\"") == std::string::npos;
  }), partial);
  EXPECT_EQ(few.profile.kernel_launch, base.kernel_launch);
  EXPECT_EQ(few.profile.host_to_device_bandwidth.count(), base.host_to_device_bandwidth.count());

  // Nothing of the profile's to fit (device-to-host copies only) is still an error.
  EXPECT_EQ(error_of(filter(text, [](const std::string& line) {
              return line.find("\"record\":\"measurement\"") == std::string::npos ||
                     line.find("\"direction\":\"d2h\"") != std::string::npos;
            }), partial),
            "calibration: none of the profile's parameters could be fitted from 21 measurement(s): the "
            "profile would be 'h200' unchanged");
}

}  // namespace
}  // namespace zx::calibration
