#include "tools/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace zx::tools {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void write_whatif_svg(std::ostream& out, const std::vector<WhatIfPoint>& points, const std::string& title) {
  std::vector<const WhatIfPoint*> fit;
  for (const WhatIfPoint& p : points) {
    if (p.fits) fit.push_back(&p);
  }
  constexpr double kWidth = 960;
  constexpr double kHeight = 420;
  constexpr double kPanel = 400;  // each panel's plot area width
  constexpr double kTop = 60;
  constexpr double kPlotHeight = 280;
  fmt::print(out, R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)"
                  "\n",
             kWidth, kHeight);
  fmt::print(out, R"(<rect width="100%" height="100%" fill="white"/>)" "\n");
  fmt::print(out, R"(<text x="{}" y="24" font-size="16" text-anchor="middle">{}</text>)" "\n", kWidth / 2,
             escape(title));
  if (fit.empty()) {
    fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">no cluster size fits the model</text>)" "\n</svg>\n",
               kWidth / 2, kHeight / 2);
    return;
  }
  // Panel 1: samples/s against GPUs (log2 x), with ideal scaling.
  const double x0 = 70;
  const double min_gpus = fit.front()->gpus;
  const double max_gpus = std::max(min_gpus * 2, static_cast<double>(fit.back()->gpus));
  double max_rate = 0;
  for (const WhatIfPoint* p : fit) max_rate = std::max(max_rate, p->samples_per_s);
  const double ideal_max = fit.front()->samples_per_s * max_gpus / min_gpus;
  max_rate = std::max(max_rate, ideal_max) * 1.05;
  const auto px = [&](double gpus) { return x0 + kPanel * std::log2(gpus / min_gpus) / std::log2(max_gpus / min_gpus); };
  const auto py = [&](double rate) { return kTop + kPlotHeight * (1 - rate / max_rate); };
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">throughput (samples/s) vs GPUs</text>)" "\n", x0 + kPanel / 2);
  fmt::print(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="black"/>)" "\n",
             x0, kTop, kTop + kPlotHeight, x0 + kPanel);
  fmt::print(out, R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#999" stroke-dasharray="4 3"/>)" "\n", px(min_gpus),
             py(fit.front()->samples_per_s), px(max_gpus), py(ideal_max));
  std::string path;
  for (const WhatIfPoint* p : fit) {
    path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", px(p->gpus), py(p->samples_per_s));
    fmt::print(out, R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="#1f77b4"/>)" "\n", px(p->gpus), py(p->samples_per_s));
    fmt::print(out, R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)" "\n", px(p->gpus), kTop + kPlotHeight + 16,
               p->gpus);
  }
  fmt::print(out, R"(<path d="{}" fill="none" stroke="#1f77b4" stroke-width="2"/>)" "\n", path);
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="end">{:.3g}</text>)" "\n", x0 - 6, kTop + 4, max_rate);
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">GPUs (dashed: linear scaling)</text>)" "\n", x0 + kPanel / 2,
             kTop + kPlotHeight + 34);

  // Panel 2: stacked breakdown per size.
  const double x1 = x0 + kPanel + 90;
  double max_ms = 0;
  for (const WhatIfPoint* p : fit) max_ms = std::max(max_ms, p->iteration_time_ms);
  max_ms *= 1.05;
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">iteration time breakdown (ms)</text>)" "\n", x1 + kPanel / 2);
  fmt::print(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="black"/>)" "\n",
             x1, kTop, kTop + kPlotHeight, x1 + kPanel);
  struct Part {
    const char* name;
    const char* colour;
  };
  const Part parts[] = {{"compute", "#1f77b4"}, {"exposed all-to-all", "#ff7f0e"}, {"exposed all-reduce", "#2ca02c"},
                        {"other", "#bbbbbb"}};
  const double slot = kPanel / static_cast<double>(fit.size());
  for (std::size_t i = 0; i < fit.size(); ++i) {
    const WhatIfPoint& p = *fit[i];
    const double values[] = {p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms,
                             p.breakdown.exposed_all_reduce_ms, p.breakdown.other_ms};
    double base = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const double h = kPlotHeight * values[k] / max_ms;
      const double y = kTop + kPlotHeight * (1 - base / max_ms) - h;
      fmt::print(out, R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)" "\n",
                 x1 + slot * (static_cast<double>(i) + 0.2), y, slot * 0.6, h, parts[k].colour);
      base += values[k];
    }
    fmt::print(out, R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)" "\n", x1 + slot * (static_cast<double>(i) + 0.5),
               kTop + kPlotHeight + 16, p.gpus);
  }
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="end">{:.3g}</text>)" "\n", x1 - 6, kTop + 4, max_ms);
  for (std::size_t k = 0; k < 4; ++k) {
    const double y = kTop + kPlotHeight + 44 + 0 * static_cast<double>(k);
    const double x = x1 - 40 + static_cast<double>(k) * 150;
    fmt::print(out, R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)" "\n", x,
               y - 9, parts[k].colour, x + 14, y, parts[k].name);
  }
  out << "</svg>\n";
}

}  // namespace zx::tools
