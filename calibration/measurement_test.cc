// File: calibration/measurement_test.cc
//
// The measurement reader: a well-formed file reads into records; every
// problem in a bad file is reported at once, each as "file:line: pointer:
// expected ..., got ..."; directories contribute their *.jsonl files.

#include "calibration/measurement.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zx::calibration {
namespace {

const char kProvenance[] =
    R"({"record":"provenance","gpu":"NVIDIA H200","sm_count":132,"driver_version":"570.1",)"
    R"("cuda_runtime_version":"12.8","git_commit":"abc","date":"2026-01-01T00:00:00Z",)"
    R"("memory_bytes":1})";
const char kGemm[] =
    R"({"record":"measurement","kernel":"gemm","params":{"m":4096,"n":4096,"k":4096,"batch":1,)"
    R"("dtype":"bf16","origin":"square"},"time_ns":{"median":200000,"p10":199000,"p90":201000},)"
    R"("bytes":100663296,"flops":137438953472,"achieved":{"tflop_per_s":687}})";

std::string error_of(const std::string& text) {
  try {
    parse_measurements(text, "h200.jsonl");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A kernel that failed its check cannot be fitted; a failed check of a
// kernel that was not timed (what kernels_ref writes) only counts.
TEST(Measurements, MeasurementsOfAKernelThatFailedItsCheckAreRefused) {
  const std::string failed = R"({"record":"check","kernel":"gemm","case":"x","passed":false})";
  EXPECT_EQ(error_of(std::string(kProvenance) + "\n" + failed + "\n" + kGemm + "\n" + kGemm + "\n"),
            "h200.jsonl:2: kernel 'gemm' failed its check against the CPU reference, yet 2 measurement(s) of it "
            "follow (first at h200.jsonl:3); a wrong kernel's times cannot be fitted: fix it and rerun "
            "kernels_ref, or leave its measurements out");
  const std::string other = R"({"record":"check","kernel":"tbe_forward","case":"x","passed":false})";
  const MeasurementSet set = parse_measurements(std::string(kProvenance) + "\n" + other + "\n" + kGemm + "\n", "h200.jsonl");
  EXPECT_EQ(set.checks_failed, 1);
  EXPECT_EQ(set.measurements.size(), 1u);
}

// A check with a scope condemns only the measurements within it: a failed
// fp32 GEMM check leaves the bf16 GEMMs standing, a failed bf16 one does not.
TEST(Measurements, AScopedFailedCheckRefusesOnlyItsScope) {
  const auto check = [](const std::string& scope) {
    return R"({"record":"check","kernel":"gemm","case":"x","passed":false,"scope":)" + scope + "}";
  };
  const std::string head = std::string(kProvenance) + "\n";
  const MeasurementSet kept = parse_measurements(head + check(R"({"dtype":"fp32"})") + "\n" + kGemm + "\n",
                                                 "h200.jsonl");
  EXPECT_EQ(kept.checks_failed, 1);
  EXPECT_EQ(kept.measurements.size(), 1u);
  // Every entry must match: a number and a string.
  EXPECT_EQ(parse_measurements(head + check(R"({"dtype":"bf16","m":1024})") + "\n" + kGemm + "\n", "h200.jsonl")
                .measurements.size(),
            1u);
  EXPECT_EQ(error_of(head + check(R"({"dtype":"bf16","m":4096})") + "\n" + kGemm + "\n"),
            "h200.jsonl:2: kernel 'gemm' (dtype bf16, m 4096) failed its check against the CPU reference, yet 1 "
            "measurement(s) of it follow (first at h200.jsonl:3); a wrong kernel's times cannot be fitted: fix it "
            "and rerun kernels_ref, or leave its measurements out");
  // An empty scope is the whole kernel; a key the measurement lacks matches nothing.
  EXPECT_NE(error_of(head + check("{}") + "\n" + kGemm + "\n"), "no error");
  EXPECT_EQ(parse_measurements(head + check(R"({"weights":"fp16"})") + "\n" + kGemm + "\n", "h200.jsonl")
                .measurements.size(),
            1u);
  // A scope is an object of numbers and strings.
  EXPECT_EQ(error_of(head + check(R"({"dtype":["bf16"]})") + "\n"),
            "h200.jsonl:2: /scope/dtype: expected a number or a string, got an array of 1 element");
  EXPECT_EQ(error_of(head + check(R"("bf16")") + "\n"), "h200.jsonl:2: /scope: expected an object, got the string \"bf16\"");
}

TEST(Measurements, ReadsRecords) {
  const std::string text = std::string(kProvenance) + "\n\n" +
                           R"({"record":"check","kernel":"gemm","case":"x","passed":true})" + "\n" +
                           kGemm + "\n";
  const MeasurementSet set = parse_measurements(text, "h200.jsonl");
  ASSERT_EQ(set.provenances.size(), 1u);
  EXPECT_EQ(set.provenances[0].gpu, "NVIDIA H200");
  EXPECT_EQ(set.provenances[0].sm_count, 132);
  EXPECT_EQ(set.provenances[0].source, "h200.jsonl:1");
  EXPECT_EQ(set.checks_passed, 1);
  ASSERT_EQ(set.measurements.size(), 1u);
  const Measurement& m = set.measurements[0];
  EXPECT_EQ(m.source, "h200.jsonl:4");
  EXPECT_EQ(m.kernel, "gemm");
  EXPECT_EQ(m.number("k"), 4096);
  EXPECT_EQ(m.label("dtype"), "bf16");
  EXPECT_EQ(m.label("origin"), "square");
  EXPECT_EQ(m.median_ns, 200000);
  EXPECT_EQ(m.flops, 137438953472.0);
  EXPECT_EQ(m.key(), "gemm dtype=bf16 origin=square batch=1 k=4096 m=4096 n=4096");
}

// Line 2: negative median; line 3: unknown kernel with a suggestion; line 4:
// a missing parameter and a dtype outside the set; line 5: not JSON.
TEST(Measurements, BadFileGivesEveryErrorWithFileAndLine) {
  std::string bad_median = kGemm;
  bad_median.replace(bad_median.find("\"median\":200000"), 15, "\"median\":-3");
  std::string bad_kernel = kGemm;
  bad_kernel.replace(bad_kernel.find("\"gemm\""), 6, "\"gem\"");
  const std::string bad_params =
      R"({"record":"measurement","kernel":"copy","params":{"direction":"h2x"},)"
      R"("time_ns":{"median":5}})";
  const std::string text = std::string(kProvenance) + "\n" + bad_median + "\n" + bad_kernel + "\n" +
                           bad_params + "\n{\"record\": \n";
  const std::string error = error_of(text);
  EXPECT_NE(error.find("h200.jsonl:2: /time_ns/median: expected a number > 0, got -3"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find("/time_ns/p10"), std::string::npos)
      << error;  // not compared with a bad median
  EXPECT_NE(
      error.find(
          "h200.jsonl:3: /kernel: unknown value 'gem' (did you mean 'gemm'?); valid: a2a_pack,"),
      std::string::npos)
      << error;
  EXPECT_NE(error.find("h200.jsonl:4: /params: missing required key 'size_bytes'"),
            std::string::npos)
      << error;
  EXPECT_NE(
      error.find(
          "h200.jsonl:4: /params/direction: unknown value 'h2x' (did you mean 'h2d'?); valid: "
          "d2d, d2h, h2d"),
      std::string::npos)
      << error;
  EXPECT_NE(error.find("h200.jsonl:5: column"), std::string::npos) << error;
}

// p10 above a valid median is reported against the median.
TEST(Measurements, PercentilesMustBracketTheMedian) {
  std::string bad = kGemm;
  bad.replace(bad.find("\"p10\":199000"), 12, "\"p10\":300000");
  EXPECT_EQ(error_of(std::string(kProvenance) + "\n" + bad + "\n"),
            "h200.jsonl:2: /time_ns/p10: expected p10 <= median (200000), got 300000");
}

TEST(Measurements, ExactMessageForOneBadValue) {
  std::string bad = kGemm;
  bad.replace(bad.find("\"k\":4096"), 8, "\"k\":0");
  EXPECT_EQ(error_of(std::string(kProvenance) + "\n" + bad + "\n"),
            "h200.jsonl:2: /params/k: expected an integer >= 1, got 0");
}

TEST(Measurements, FileNeedsProvenanceAndMeasurements) {
  EXPECT_EQ(error_of(std::string(kGemm) + "\n"),
            "h200.jsonl: expected a {\"record\": \"provenance\"} line (the GPU, driver and commit "
            "of the run), "
            "found none");
  EXPECT_EQ(error_of(std::string(kProvenance) + "\n"),
            "h200.jsonl: expected at least one {\"record\": \"measurement\"} line, found none");
  EXPECT_EQ(error_of(R"({"record":"measurment"})"),
            "h200.jsonl:1: /record: unknown value 'measurment' (did you mean 'measurement'?); "
            "valid: check, "
            "measurement, provenance");
}

TEST(Measurements, ReadsDirectoriesOfJsonl) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "measurements_dir";
  std::filesystem::create_directories(dir);
  for (const char* name : {"b.jsonl", "a.jsonl"}) {
    std::ofstream(dir / name) << kProvenance << "\n" << kGemm << "\n";
  }
  std::ofstream(dir / "notes.txt") << "ignored";
  const MeasurementSet set = read_measurements({dir.string()});
  ASSERT_EQ(set.files.size(), 2u);
  EXPECT_EQ(std::filesystem::path(set.files[0]).filename(), "a.jsonl");
  EXPECT_EQ(set.measurements.size(), 2u);
  try {
    read_measurements({(dir / "missing.jsonl").string()});
    FAIL() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.jsonl: cannot open the file for reading: No such file or directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace zx::calibration
