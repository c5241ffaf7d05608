#include "experiments/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <cstdint>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace zx::experiments {

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
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

// Curve colours (a colour-blind-safe qualitative palette, Okabe and Ito
// 2008); series past the last reuse them in order.
constexpr const char* kSeriesColours[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                          "#e69f00", "#56b4e9", "#000000", "#f0e442"};

const char* series_colour(std::size_t s) { return kSeriesColours[s % std::size(kSeriesColours)]; }

// The <svg> element, a white background and the title.
void open_svg(std::ostream& out, double width, double height, const std::string& title) {
  fmt::print(out, R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)"
                  "\n",
             width, height);
  fmt::print(out, R"(<rect width="100%" height="100%" fill="white"/>)" "\n");
  fmt::print(out, R"(<text x="{}" y="24" font-size="16" text-anchor="middle">{}</text>)" "\n", width / 2,
             escape(title));
}

// A plot with nothing to draw: says why, and ends the <svg>.
void close_empty_svg(std::ostream& out, double width, double height, const std::string& why) {
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)" "\n</svg>\n", width / 2, height / 2, why);
}

// A size as the -b/-e flags write it: 1K, 64M, 1G (binary multiples), else bytes.
std::string size_label(double bytes) {
  const auto b = static_cast<std::int64_t>(bytes);
  for (const auto& [shift, suffix] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}}) {
    if (b >= (std::int64_t{1} << shift) && b % (std::int64_t{1} << shift) == 0) return fmt::format("{}{}", b >> shift, suffix);
  }
  return fmt::format("{} B", b);
}

}  // namespace

namespace {

// 1.03M, 513k, 78.5: three digits and an SI prefix.
std::string short_number(double v) {
  if (v >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.3g}", v);
}

// Four labelled ticks and faint grid lines on a value axis from 0 to `max`
// (plot area from `top`, `height` tall, left edge at `x`).
void y_ticks(std::ostream& out, double x, double top, double height, double max) {
  for (int k = 0; k <= 4; ++k) {
    const double value = max * k / 4;
    const double y = top + height * (1 - static_cast<double>(k) / 4);
    if (k > 0) {
      fmt::print(out, R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#eee"/>)" "\n", x + 1, y, x + 400, y);
    }
    fmt::print(out, R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="10">{}</text>)" "\n", x - 6, y + 4,
               short_number(value));
  }
}

}  // namespace

void write_whatif_svg(std::ostream& out, const std::vector<WhatIfPoint>& points, const std::string& title) {
  write_whatif_svg(out, std::vector<PlotSeries>{PlotSeries{"", points}}, title);
}

void write_whatif_svg(std::ostream& out, const std::vector<PlotSeries>& series, const std::string& title) {
  // Fitting points per series, by GPUs; every GPU count that any series fits.
  std::vector<std::vector<const WhatIfPoint*>> fit(series.size());
  std::set<int> gpu_counts;
  for (std::size_t s = 0; s < series.size(); ++s) {
    for (const WhatIfPoint& p : series[s].points) {
      if (!p.fits) continue;
      fit[s].push_back(&p);
      gpu_counts.insert(p.gpus);
    }
    std::sort(fit[s].begin(), fit[s].end(), [](const WhatIfPoint* a, const WhatIfPoint* b) { return a->gpus < b->gpus; });
  }
  const bool legend = series.size() > 1 || (!series.empty() && !series.front().label.empty());
  constexpr double kWidth = 960;
  constexpr double kPanel = 400;  // each panel's plot area width
  constexpr double kTop = 60;
  constexpr double kPlotHeight = 280;
  constexpr double kLegendRow = 16;
  const double legend_top = kTop + kPlotHeight + 64;
  const double height = 420 + (legend ? kLegendRow * static_cast<double>(series.size()) + 8 : 0);
  open_svg(out, kWidth, height, title);
  if (gpu_counts.empty()) {
    close_empty_svg(out, kWidth, height, "no cluster size fits the model");
    return;
  }
  // Panel 1: samples/s against GPUs (log2 x), with ideal scaling from the
  // first series that fits anywhere.
  const double x0 = 70;
  const double min_gpus = *gpu_counts.begin();
  const double max_gpus = std::max(min_gpus * 2, static_cast<double>(*gpu_counts.rbegin()));
  double max_rate = 0;
  for (const auto& points : fit) {
    for (const WhatIfPoint* p : points) max_rate = std::max(max_rate, p->samples_per_s);
  }
  const WhatIfPoint* anchor = nullptr;
  for (const auto& points : fit) {
    if (anchor == nullptr && !points.empty()) anchor = points.front();
  }
  const double ideal_max = anchor->samples_per_s * max_gpus / anchor->gpus;
  max_rate = std::max(max_rate, ideal_max) * 1.05;
  const auto px = [&](double gpus) { return x0 + kPanel * std::log2(gpus / min_gpus) / std::log2(max_gpus / min_gpus); };
  const auto py = [&](double rate) { return kTop + kPlotHeight * (1 - rate / max_rate); };
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">throughput (samples/s) vs GPUs</text>)" "\n", x0 + kPanel / 2);
  fmt::print(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="black"/>)" "\n",
             x0, kTop, kTop + kPlotHeight, x0 + kPanel);
  // Linear scaling, rate proportional to GPUs: a curve on the log2 axis,
  // drawn through 32 points.
  {
    std::string ideal;
    constexpr int kSteps = 32;
    for (int k = 0; k <= kSteps; ++k) {
      const double gpus = anchor->gpus * std::pow(max_gpus / anchor->gpus, static_cast<double>(k) / kSteps);
      ideal += fmt::format("{}{:.1f},{:.1f} ", k == 0 ? "M" : "L", px(gpus), py(anchor->samples_per_s * gpus / anchor->gpus));
    }
    fmt::print(out, R"(<path d="{}" fill="none" stroke="#999" stroke-dasharray="4 3"/>)" "\n", ideal);
  }
  y_ticks(out, x0, kTop, kPlotHeight, max_rate);
  for (int gpus : gpu_counts) {
    fmt::print(out, R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)" "\n", px(gpus), kTop + kPlotHeight + 16,
               gpus);
  }
  for (std::size_t s = 0; s < fit.size(); ++s) {
    if (fit[s].empty()) continue;
    std::string path;
    for (const WhatIfPoint* p : fit[s]) {
      path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", px(p->gpus), py(p->samples_per_s));
      fmt::print(out, R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"/>)" "\n", px(p->gpus), py(p->samples_per_s),
                 series_colour(s));
    }
    fmt::print(out, R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)" "\n", path, series_colour(s));
  }
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">GPUs (log scale; dashed: linear scaling)</text>)" "\n",
             x0 + kPanel / 2, kTop + kPlotHeight + 34);

  // Panel 2: stacked breakdown, a group of bars per GPU count, one bar per
  // series that fits there (numbered as in the legend when there are several).
  const double x1 = x0 + kPanel + 90;
  double max_ms = 0;
  for (const auto& points : fit) {
    for (const WhatIfPoint* p : points) max_ms = std::max(max_ms, p->iteration_time_ms);
  }
  max_ms *= 1.05;
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">iteration time breakdown (ms)</text>)" "\n", x1 + kPanel / 2);
  fmt::print(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="black"/>)" "\n",
             x1, kTop, kTop + kPlotHeight, x1 + kPanel);
  y_ticks(out, x1, kTop, kPlotHeight, max_ms);
  struct Part {
    const char* name;
    const char* colour;
  };
  const Part parts[] = {{"compute", "#1f77b4"}, {"exposed all-to-all", "#ff7f0e"}, {"exposed all-reduce", "#2ca02c"},
                        {"other", "#bbbbbb"}};
  const double slot = kPanel / static_cast<double>(gpu_counts.size());
  const double bar = slot * 0.6 / static_cast<double>(series.size());
  std::size_t group = 0;
  for (int gpus : gpu_counts) {
    const double left = x1 + slot * (static_cast<double>(group) + 0.2);
    for (std::size_t s = 0; s < fit.size(); ++s) {
      const auto it = std::find_if(fit[s].begin(), fit[s].end(), [gpus](const WhatIfPoint* p) { return p->gpus == gpus; });
      if (it == fit[s].end()) continue;
      const WhatIfPoint& p = **it;
      const double values[] = {p.breakdown.compute_ms, p.breakdown.exposed_all_to_all_ms,
                               p.breakdown.exposed_all_reduce_ms, p.breakdown.other_ms};
      const double x = left + bar * static_cast<double>(s);
      double base = 0;
      for (std::size_t k = 0; k < 4; ++k) {
        const double h = kPlotHeight * values[k] / max_ms;
        const double y = kTop + kPlotHeight * (1 - base / max_ms) - h;
        fmt::print(out, R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)" "\n", x, y, bar * 0.9,
                   h, parts[k].colour);
        base += values[k];
      }
      if (series.size() > 1) {
        fmt::print(out, R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="9" fill="{}">{}</text>)" "\n",
                   x + bar * 0.45, kTop + kPlotHeight * (1 - base / max_ms) - 3, series_colour(s), s + 1);
      }
    }
    fmt::print(out, R"(<text x="{:.1f}" y="{}" text-anchor="middle">{}</text>)" "\n",
               x1 + slot * (static_cast<double>(group) + 0.5), kTop + kPlotHeight + 16, gpus);
    ++group;
  }
  // The key, each entry as wide as its text (about 7 px a character at 12 px).
  double key_x = x1 - 40;
  for (std::size_t k = 0; k < 4; ++k) {
    const double y = kTop + kPlotHeight + 44;
    fmt::print(out, R"(<rect x="{}" y="{}" width="10" height="10" fill="{}"/><text x="{}" y="{}">{}</text>)" "\n", key_x,
               y - 9, parts[k].colour, key_x + 14, y, parts[k].name);
    key_x += 14 + 7.0 * static_cast<double>(std::string_view(parts[k].name).size()) + 16;
  }
  if (legend) {
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double y = legend_top + kLegendRow * static_cast<double>(s);
      fmt::print(out,
                 R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"/><text x="{}" y="{}">{}: {}{}</text>)"
                 "\n",
                 x0, y - 4, x0 + 24, y - 4, series_colour(s), x0 + 30, y, s + 1, escape(series[s].label),
                 fit[s].empty() ? " (fits at no size)" : "");
    }
  }
  out << "</svg>\n";
}

void write_collective_svg(std::ostream& out, const std::vector<CollectiveSeries>& series, const std::string& title) {
  constexpr double kWidth = 1000;
  constexpr double kPanel = 400;
  constexpr double kTop = 60;
  constexpr double kPlotHeight = 280;
  constexpr double kLegendRow = 16;
  const double height = 420 + kLegendRow * static_cast<double>(series.size()) + 8;
  double min_size = 0, max_size = 0, min_time = 0, max_time = 0, max_busbw = 0;
  bool any = false;
  for (const CollectiveSeries& s : series) {
    for (std::size_t i = 0; i < s.size_bytes.size(); ++i) {
      if (!(s.size_bytes[i] > 0) || !(s.time_us[i] > 0)) continue;
      min_size = any ? std::min(min_size, s.size_bytes[i]) : s.size_bytes[i];
      max_size = any ? std::max(max_size, s.size_bytes[i]) : s.size_bytes[i];
      min_time = any ? std::min(min_time, s.time_us[i]) : s.time_us[i];
      max_time = any ? std::max(max_time, s.time_us[i]) : s.time_us[i];
      max_busbw = std::max(max_busbw, s.busbw_gbyte_per_s[i]);
      any = true;
    }
  }
  open_svg(out, kWidth, height, title);
  if (!any) {
    close_empty_svg(out, kWidth, height, "no message size above zero bytes");
    return;
  }
  if (max_size == min_size) max_size = min_size * 2;
  if (max_time == min_time) max_time = min_time * 2;
  if (!(max_busbw > 0)) max_busbw = 1;
  max_busbw *= 1.05;
  const auto px = [&](double x0, double size) {
    return x0 + kPanel * std::log2(size / min_size) / std::log2(max_size / min_size);
  };
  const auto py_time = [&](double t) {
    return kTop + kPlotHeight * (1 - std::log10(t / min_time) / std::log10(max_time / min_time));
  };
  const auto py_bw = [&](double b) { return kTop + kPlotHeight * (1 - b / max_busbw); };
  const double x0 = 70;
  const double x1 = x0 + kPanel + 90;
  for (const double x : {x0, x1}) {
    fmt::print(out, R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="black"/><line x1="{0}" y1="{2}" x2="{3}" y2="{2}" stroke="black"/>)" "\n",
               x, kTop, kTop + kPlotHeight, x + kPanel);
    // Sizes at powers of two, at most about eight labels.
    const int first = static_cast<int>(std::ceil(std::log2(min_size) - 1e-9));
    const int last = static_cast<int>(std::floor(std::log2(max_size) + 1e-9));
    const int step = std::max(1, (last - first + 8) / 8);
    for (int k = first; k <= last; k += step) {
      const double size = std::ldexp(1.0, k);
      fmt::print(out, R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="black"/><text x="{0:.1f}" y="{3}" text-anchor="middle" font-size="10">{4}</text>)" "\n",
                 px(x, size), kTop + kPlotHeight, kTop + kPlotHeight + 4, kTop + kPlotHeight + 16, size_label(size));
    }
    fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">message size per rank (log scale)</text>)" "\n",
               x + kPanel / 2, kTop + kPlotHeight + 34);
  }
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">time (us, log scale)</text>)" "\n", x0 + kPanel / 2);
  // Times at powers of ten, the ends too when they are not.
  {
    std::vector<double> ticks = {min_time};
    for (int d = static_cast<int>(std::ceil(std::log10(min_time) - 1e-9));
         d <= static_cast<int>(std::floor(std::log10(max_time) + 1e-9)); ++d) {
      const double t = std::pow(10.0, d);
      if (t > min_time * 1.2 && t < max_time / 1.2) ticks.push_back(t);
    }
    ticks.push_back(max_time);
    for (const double t : ticks) {
      fmt::print(out, R"(<line x1="{0}" y1="{1:.1f}" x2="{2}" y2="{1:.1f}" stroke="#eee"/><text x="{3}" y="{4:.1f}" text-anchor="end" font-size="10">{5}</text>)" "\n",
                 x0 + 1, py_time(t), x0 + kPanel, x0 - 6, py_time(t) + 4, short_number(t));
    }
  }
  fmt::print(out, R"(<text x="{}" y="48" text-anchor="middle">bus bandwidth (GB/s)</text>)" "\n", x1 + kPanel / 2);
  y_ticks(out, x1, kTop, kPlotHeight, max_busbw);
  for (std::size_t s = 0; s < series.size(); ++s) {
    std::string time_path;
    std::string bw_path;
    for (std::size_t i = 0; i < series[s].size_bytes.size(); ++i) {
      const double size = series[s].size_bytes[i];
      const double t = series[s].time_us[i];
      if (!(size > 0) || !(t > 0)) continue;
      time_path += fmt::format("{}{:.1f},{:.1f} ", time_path.empty() ? "M" : "L", px(x0, size), py_time(t));
      bw_path += fmt::format("{}{:.1f},{:.1f} ", bw_path.empty() ? "M" : "L", px(x1, size),
                             py_bw(series[s].busbw_gbyte_per_s[i]));
    }
    for (const std::string& path : {time_path, bw_path}) {
      if (!path.empty()) {
        fmt::print(out, R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)" "\n", path, series_colour(s));
      }
    }
    const double y = kTop + kPlotHeight + 64 + kLegendRow * static_cast<double>(s);
    fmt::print(out,
               R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"/><text x="{}" y="{}">{}</text>)" "\n",
               x0, y - 4, x0 + 24, y - 4, series_colour(s), x0 + 30, y, escape(series[s].label));
  }
  out << "</svg>\n";
}

void write_validation_svg(std::ostream& out, const std::vector<ValidationPoint>& points, const std::string& title) {
  constexpr double kSide = 460;
  constexpr double kLeft = 80;
  constexpr double kTop = 50;
  constexpr double kLegendRow = 16;
  std::vector<std::string> families;
  double lo = 0, hi = 0;
  bool any = false;
  for (const ValidationPoint& p : points) {
    if (!(p.measured > 0) || !(p.simulated > 0)) continue;
    if (std::find(families.begin(), families.end(), p.family) == families.end()) families.push_back(p.family);
    for (const double v : {p.measured, p.simulated}) {
      lo = any ? std::min(lo, v) : v;
      hi = any ? std::max(hi, v) : v;
      any = true;
    }
  }
  const double width = kLeft + kSide + 260;
  const double height = kTop + kSide + 60;
  open_svg(out, width, height, title);
  if (!any) {
    close_empty_svg(out, width, height, "no case with figures above zero");
    return;
  }
  // Whole decades around every figure, so that y = x is the diagonal.
  const int d0 = static_cast<int>(std::floor(std::log10(lo)));
  const int d1 = std::max(d0 + 1, static_cast<int>(std::ceil(std::log10(hi))));
  const auto pos = [&](double v) { return (std::log10(v) - d0) / (d1 - d0) * kSide; };
  const auto px = [&](double v) { return kLeft + pos(v); };
  const auto py = [&](double v) { return kTop + kSide - pos(v); };
  fmt::print(out, R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)" "\n", kLeft, kTop,
             kSide, kSide);
  for (int d = d0; d <= d1; ++d) {
    const double v = std::pow(10.0, d);
    fmt::print(out,
               R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2}" stroke="#eee"/><line x1="{3}" y1="{4:.1f}" x2="{5}" y2="{4:.1f}" stroke="#eee"/>)"
               "\n",
               px(v), kTop, kTop + kSide, kLeft, py(v), kLeft + kSide);
    fmt::print(out, R"(<text x="{:.1f}" y="{}" text-anchor="middle" font-size="10">{}</text>)" "\n", px(v),
               kTop + kSide + 14, short_number(v));
    fmt::print(out, R"(<text x="{}" y="{:.1f}" text-anchor="end" font-size="10">{}</text>)" "\n", kLeft - 6,
               py(v) + 4, short_number(v));
  }
  // y = x, and the +/-10% and +/-50% bands.
  const double vlo = std::pow(10.0, d0);
  const double vhi = std::pow(10.0, d1);
  for (const auto& [factor, dash] : {std::pair{1.0, ""}, std::pair{1.1, "4,3"}, std::pair{1 / 1.1, "4,3"},
                                     std::pair{1.5, "1,3"}, std::pair{0.5, "1,3"}}) {
    const double a = std::max(vlo, vlo * factor);
    const double b = std::min(vhi, vhi * factor);
    fmt::print(out, R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#888" stroke-dasharray="{}"/>)"
                    "\n",
               px(a / factor), py(a), px(b / factor), py(b), dash);
  }
  fmt::print(out, R"(<text x="{}" y="{}" text-anchor="middle">measured (log scale; each case in its own unit)</text>)"
                  "\n",
             kLeft + kSide / 2, kTop + kSide + 34);
  fmt::print(out, R"svg(<text x="20" y="{0}" text-anchor="middle" transform="rotate(-90 20 {0})">simulated (log scale)</text>)svg"
                  "\n",
             kTop + kSide / 2);
  for (const ValidationPoint& p : points) {
    if (!(p.measured > 0) || !(p.simulated > 0)) continue;
    const auto f = static_cast<std::size_t>(std::find(families.begin(), families.end(), p.family) - families.begin());
    fmt::print(out, R"(<circle cx="{:.1f}" cy="{:.1f}" r="4" fill="{}"><title>{}: measured {} {}, simulated {} {}</title></circle>)"
                    "\n",
               px(p.measured), py(p.simulated), series_colour(f), escape(p.id), short_number(p.measured),
               escape(p.unit), short_number(p.simulated), escape(p.unit));
  }
  const double lx = kLeft + kSide + 24;
  for (std::size_t f = 0; f < families.size(); ++f) {
    const double y = kTop + 12 + kLegendRow * static_cast<double>(f);
    fmt::print(out, R"(<circle cx="{}" cy="{}" r="4" fill="{}"/><text x="{}" y="{}">{}</text>)" "\n", lx, y - 4,
               series_colour(f), lx + 10, y, escape(families[f]));
  }
  const double ly = kTop + 12 + kLegendRow * static_cast<double>(families.size()) + 8;
  fmt::print(out, R"(<text x="{}" y="{}" font-size="10">solid: y = x; dashed: +/-10%; dotted: x0.5, x1.5</text>)" "\n",
             lx, ly);
  out << "</svg>\n";
}

}  // namespace zx::experiments
