#include "calibration/plots.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace zx::calibration {
namespace {

std::string no_spaces(std::string s) {
  for (char& c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

// A gnuplot string literal in double quotes.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string plot_stem(const std::string& family) {
  std::string s;
  for (char c : family) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    if (keep) {
      s += c;
    } else if (!s.empty() && s.back() != '_') {
      s += '_';
    }
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  return s.empty() ? "family" : s;
}

std::string plot_data(const FamilyReport& family) {
  std::string out = fmt::format("# {}: measured_ns predicted_ns held_out key\n", family.family);
  const auto add = [&](const PointPrediction& p, int held) {
    out += fmt::format("{:.6g} {:.6g} {} {}\n", p.measured_ns, p.predicted_ns, held, no_spaces(p.key));
  };
  for (const PointPrediction& p : family.fitted) add(p, 0);
  for (const PointPrediction& p : family.held_out) add(p, 1);
  return out;
}

std::string gnuplot_script(const FamilyReport& family, const std::string& data_file, const std::string& svg_file) {
  // Axis range: every point, widened by 20% on both sides.
  double lo = std::numeric_limits<double>::infinity();
  double hi = 0;
  for (const auto* points : {&family.fitted, &family.held_out}) {
    for (const PointPrediction& p : *points) {
      for (double v : {p.measured_ns, p.predicted_ns}) {
        if (v > 0 && std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
  }
  if (!(hi > 0)) {
    lo = 1;
    hi = 10;
  }
  lo /= 1.2;
  hi *= 1.2;
  const std::string title =
      family.validation
          ? fmt::format("{} (validation): hold-out MAPE {:.2f}%", family.family, 100 * family.holdout_mape)
          : fmt::format("{}: R^2 {:.4f}, hold-out MAPE {:.2f}%", family.family, family.r_squared,
                        100 * family.holdout_mape);
  std::string s;
  s += fmt::format("# {}: predicted vs measured (zionsim calibrate)\n", family.family);
  s += "set terminal svg size 640,480 font 'sans,11'\n";
  s += fmt::format("set output {}\n", quoted(svg_file));
  s += fmt::format("set title {} noenhanced\n", quoted(title));
  s += "set xlabel 'measured (ns)'\nset ylabel 'predicted (ns)'\n";
  s += "set logscale xy\nset key top left\nset grid\n";
  s += fmt::format("set xrange [{:.6g}:{:.6g}]\nset yrange [{:.6g}:{:.6g}]\n", lo, hi, lo, hi);
  s += fmt::format("plot x title 'predicted = measured' lt rgb 'black', \\\n"
                   "     1.1*x title '+/-10%' dt 2 lt rgb 'gray', \\\n"
                   "     0.9*x notitle dt 2 lt rgb 'gray', \\\n"
                   "     {0} using 1:($3 == 0 ? $2 : 1/0) title 'fit points' pt 7 ps 0.6 lt rgb '#1f77b4', \\\n"
                   "     {0} using 1:($3 == 1 ? $2 : 1/0) title 'held out' pt 5 ps 0.9 lt rgb '#d62728'\n",
                   quoted(data_file));
  return s;
}

}  // namespace zx::calibration
