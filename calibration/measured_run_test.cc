// File: calibration/measured_run_test.cc
//
// One committed GPU run, calibration/data/NAME/ (docs/calibration.md, "A
// committed run"): its measurements.jsonl as kernels_ref wrote it and the
// profile.json `zionsim calibrate` made of them. Two promises:
//   - the profile is reproducible: calibrating the measurements again with
//     the options its provenance records gives the same file, byte for byte
//     (so a change to the fits shows up here until the profile is remade);
//   - the fitted models predict the run's held-out points within 10% mean
//     absolute percentage error, in every family that was fitted (issue 8's
//     bar; the aim is 5%). Validation families are reported, not held to it.
// The BUILD file makes one such test per data/*/measurements.jsonl; with no
// run committed there is none.

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibration/calibrate.h"

namespace zx::calibration {
namespace {

std::string g_dir;  // calibration/data/NAME, relative to the runfiles root

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MeasuredRun, ProfileIsReproducibleAndHoldOutErrorsAreWithinTenPercent) {
  const std::string committed = read(g_dir + "/profile.json");
  ASSERT_FALSE(committed.empty()) << g_dir << "/profile.json is missing or empty";
  const nlohmann::json provenance = nlohmann::json::parse(committed).at("provenance");
  CalibrationOptions options;
  options.base_profile = provenance.at("base_profile").get<std::string>();
  options.gemm_dtype = provenance.at("gemm_dtype").get<std::string>();
  options.holdout_every = provenance.at("holdout_every").get<int>();
  options.partial = provenance.at("partial").get<bool>();
  options.profile_name = nlohmann::json::parse(committed).at("name").get<std::string>();
  const CalibrationResult r = calibrate({g_dir + "/measurements.jsonl"}, options);
  EXPECT_EQ(r.profile_json, committed)
      << "the committed profile is not what calibrate makes of the measurements now; remake it "
         "(docs/calibration.md, \"A committed run\")";
  int fitted = 0;
  for (const FamilyReport& f : r.families) {
    if (f.validation || !f.refused.empty() || f.held_out.empty()) continue;
    ++fitted;
    EXPECT_LT(f.holdout_mape, 0.10) << fmt::format("{}: hold-out MAPE {:.2f}% over {} points (worst {:.2f}%)",
                                                   f.family, 100 * f.holdout_mape, f.held_out.size(),
                                                   100 * f.holdout_worst);
  }
  EXPECT_GT(fitted, 0) << "no family was fitted with held-out points";
}

}  // namespace
}  // namespace zx::calibration

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s calibration/data/NAME\n", argv[0]);
    return 2;
  }
  zx::calibration::g_dir = argv[1];
  return RUN_ALL_TESTS();
}
