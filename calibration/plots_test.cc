// File: calibration/plots_test.cc
//
// Plot files of a calibration: the data file has one line per fit and
// held-out point with the report's own numbers; the script reads that file,
// writes the named SVG and draws predicted = measured; write_calibration
// writes them beside the report, links them from a "Plots" section, and
// draws SVGs exactly when gnuplot is on PATH (kDraw), never with kScripts.

#include "calibration/plots.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "calibration/calibrate.h"
#include "calibration/testing/synthetic.h"

namespace zx::calibration {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool gnuplot_on_path() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

TEST(Plots, StemKeepsSafeCharacters) {
  EXPECT_EQ(plot_stem("gemm bf16"), "gemm_bf16");
  EXPECT_EQ(plot_stem("copy h2d"), "copy_h2d");
  EXPECT_EQ(plot_stem("a/b\"c"), "a_b_c");
  EXPECT_EQ(plot_stem("adagrad_step (validation)"), "adagrad_step_validation");
  EXPECT_EQ(plot_stem(" (x) "), "x");
  EXPECT_EQ(plot_stem(""), "family");
}

TEST(Plots, DataHasEveryPointWithItsNumbers) {
  FamilyReport f;
  f.family = "copy d2d";
  f.fitted = {{"a.jsonl:1", "copy d2d size=1024", 1000.0, 1010.0}, {"a.jsonl:2", "copy d2d size=2048", 2000.0, 1990.0}};
  f.held_out = {{"a.jsonl:3", "copy d2d size=4096", 4000.0, 4100.0}};
  const std::string data = plot_data(f);
  std::istringstream in(data);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.front(), '#');
  std::getline(in, line);
  EXPECT_EQ(line, "1000 1010 0 copy_d2d_size=1024");
  std::getline(in, line);
  EXPECT_EQ(line, "2000 1990 0 copy_d2d_size=2048");
  std::getline(in, line);
  EXPECT_EQ(line, "4000 4100 1 copy_d2d_size=4096");
  EXPECT_FALSE(std::getline(in, line));

  const std::string script = gnuplot_script(f, "copy_d2d.dat", "copy_d2d.svg");
  EXPECT_NE(script.find("set output \"copy_d2d.svg\""), std::string::npos);
  EXPECT_NE(script.find("plot x title 'predicted = measured'"), std::string::npos);
  EXPECT_NE(script.find("\"copy_d2d.dat\" using 1:($3 == 0 ? $2 : 1/0)"), std::string::npos);
  EXPECT_NE(script.find("set logscale xy"), std::string::npos);
  // The range covers every point (1000 .. 4100, widened by 20%).
  EXPECT_NE(script.find("set xrange [833.333:4920]"), std::string::npos) << script;
}

TEST(Plots, WrittenBesideTheReport) {
  const CalibrationResult r =
      calibrate(parse_measurements(testing::synthetic_measurements(testing::SyntheticTruth{}), "synthetic.jsonl"),
                CalibrationOptions{});
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "plots_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  write_calibration(r, (dir / "p.json").string(), (dir / "report.md").string(), PlotMode::kScripts);
  const std::filesystem::path plots = dir / "report_plots";
  const std::string report = slurp(dir / "report.md");
  EXPECT_NE(report.find("## Plots: predicted vs measured"), std::string::npos);
  int families_with_points = 0;
  for (const FamilyReport& f : r.families) {
    if (f.fitted.empty() && f.held_out.empty()) continue;
    ++families_with_points;
    const std::string stem = plot_stem(f.family);
    ASSERT_TRUE(std::filesystem::exists(plots / (stem + ".dat"))) << stem;
    EXPECT_EQ(slurp(plots / (stem + ".dat")), plot_data(f));
    EXPECT_TRUE(std::filesystem::exists(plots / (stem + ".gp")));
    EXPECT_FALSE(std::filesystem::exists(plots / (stem + ".svg")));  // kScripts draws nothing
    EXPECT_NE(report.find("report_plots/" + stem + ".gp"), std::string::npos);
  }
  EXPECT_GE(families_with_points, 5);

  write_calibration(r, (dir / "p.json").string(), (dir / "report.md").string(), PlotMode::kDraw);
  const std::string drawn = slurp(dir / "report.md");
  const bool gnuplot = gnuplot_on_path();
  for (const FamilyReport& f : r.families) {
    if (f.fitted.empty() && f.held_out.empty()) continue;
    const std::string stem = plot_stem(f.family);
    EXPECT_EQ(std::filesystem::exists(plots / (stem + ".svg")), gnuplot) << stem;
    EXPECT_EQ(drawn.find("](report_plots/" + stem + ".svg)") != std::string::npos, gnuplot) << stem;
    if (gnuplot) {
      EXPECT_NE(slurp(plots / (stem + ".svg")).find("<svg"), std::string::npos);
    }
  }
  if (!gnuplot) {
    EXPECT_NE(drawn.find("gnuplot was not found on PATH"), std::string::npos);
  }

  write_calibration(r, (dir / "q.json").string(), (dir / "bare.md").string(), PlotMode::kNone);
  EXPECT_FALSE(std::filesystem::exists(dir / "bare_plots"));
  EXPECT_EQ(slurp(dir / "bare.md"), r.report_markdown);
}

}  // namespace
}  // namespace zx::calibration
