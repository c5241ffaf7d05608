// Tests of the what-if SVG: one dot per fitting point and one curve per
// series, one stacked bar (four parts) per fitting point, a legend exactly
// when series are labelled, labels escaped, and a plot that says so when
// nothing fits.

#include "experiments/svg_plot.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace zx::experiments {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

WhatIfPoint point(int nodes, double samples_per_s, bool fits = true) {
  WhatIfPoint p;
  p.nodes = nodes;
  p.gpus = 8 * nodes;
  p.fits = fits;
  p.samples_per_s = samples_per_s;
  p.iteration_time_ms = 1e3 * 512 * p.gpus / samples_per_s;
  p.breakdown.compute_ms = p.iteration_time_ms / 2;
  p.breakdown.exposed_all_to_all_ms = p.iteration_time_ms / 2;
  return p;
}

TEST(SvgPlotTest, OneSeries) {
  std::ostringstream out;
  write_whatif_svg(out, {point(1, 1e5), point(2, 1.8e5), point(4, 3e5, /*fits=*/false)}, "model <a> & b");
  const std::string svg = out.str();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(count(svg, "<circle"), 2u);
  EXPECT_EQ(count(svg, "<path"), 1u + 1u);  // the series, and linear scaling (dashed)
  EXPECT_EQ(count(svg, "stroke-dasharray"), 1u);
  // Linear scaling on the log2 axis is a curve: 33 points, through twice the
  // first point's rate at twice its GPUs (the first series' only other point
  // here, 1.8e5 of an ideal 2e5, lies below it).
  const std::string ideal = svg.substr(svg.find("<path d=\"M"), svg.find("stroke-dasharray") - svg.find("<path d=\"M"));
  EXPECT_EQ(count(ideal, "L"), 32u) << ideal;
  EXPECT_EQ(count(svg, "font-size=\"10\""), 10u);  // five value ticks on each panel
  EXPECT_NE(svg.find(">105k</text>"), std::string::npos);  // the middle tick: half of 1.05 x the ideal 2e5 at 16 GPUs
  EXPECT_EQ(count(svg, "<rect x="), 2u * 4u + 4u);  // two bars of four parts, four legend swatches
  EXPECT_NE(svg.find("model &lt;a&gt; &amp; b"), std::string::npos);
  EXPECT_EQ(count(svg, "stroke-width=\"2\"/><text"), 0u);  // no series legend
}

TEST(SvgPlotTest, SeveralSeriesGetCurvesBarsAndALegend) {
  std::vector<PlotSeries> series = {{"nic-gbit=100", {point(1, 1e5), point(2, 1.5e5)}},
                                    {"nic-gbit=400", {point(1, 1e5), point(2, 1.9e5)}},
                                    {"nic-gbit=1", {point(1, 1e5, false), point(2, 1e5, false)}}};
  std::ostringstream out;
  write_whatif_svg(out, series, "t");
  const std::string svg = out.str();
  EXPECT_EQ(count(svg, "<circle"), 4u);
  EXPECT_EQ(count(svg, "<path"), 2u + 1u);
  EXPECT_EQ(count(svg, "<rect x="), 4u * 4u + 4u);
  EXPECT_EQ(count(svg, "stroke-width=\"2\"/><text"), 3u);  // a legend row per series
  EXPECT_NE(svg.find("1: nic-gbit=100"), std::string::npos);
  EXPECT_NE(svg.find("3: nic-gbit=1 (fits at no size)"), std::string::npos);
}

TEST(SvgPlotTest, NothingFits) {
  std::ostringstream out;
  write_whatif_svg(out, {point(1, 1e5, false)}, "t");
  EXPECT_NE(out.str().find("no cluster size fits the model"), std::string::npos);
  EXPECT_EQ(count(out.str(), "<circle"), 0u);
}

// The collective plot: two curves (time, bus bandwidth) per series, a legend
// row per series, zero-byte rows left out, ticks on every axis, and a message
// when nothing is left.
TEST(SvgPlotTest, CollectiveCurvesPerSeries) {
  const std::vector<CollectiveSeries> series = {
      {"ring", {0, 1024, 1 << 20}, {0, 40, 400}, {0, 0.05, 5}},
      {"tree <x>", {0, 1024, 1 << 20}, {0, 20, 800}, {0, 0.1, 2.5}},
  };
  std::ostringstream out;
  write_collective_svg(out, series, "all_reduce");
  const std::string svg = out.str();
  EXPECT_EQ(count(svg, "<path"), 4u);
  EXPECT_EQ(count(svg, "stroke-width=\"2\"/><text"), 2u);
  EXPECT_NE(svg.find("tree &lt;x&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">1K<"), std::string::npos);
  EXPECT_NE(svg.find(">1M<"), std::string::npos);
  // Size ticks at the powers of two from 1K to 1M (11 of them, every
  // second one labelled: 1K 4K ... 1M, six labels per panel), time ticks at
  // 20 us, 100 us and 800 us, bus bandwidth at five values.
  EXPECT_EQ(count(svg, "text-anchor=\"middle\" font-size=\"10\""), 2u * 6u) << svg;
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);
  EXPECT_NE(svg.find(">800</text>"), std::string::npos);
  // Each curve has one point per size above zero: "M x,y L x,y".
  EXPECT_EQ(count(svg, " L"), 4u);
  std::ostringstream empty;
  write_collective_svg(empty, {{"ring", {0}, {0}, {0}}}, "t");
  EXPECT_NE(empty.str().find("no message size above zero bytes"), std::string::npos);
}

}  // namespace
}  // namespace zx::experiments
