// File: kernels_ref/harness_util.cc
//
// Timing statistics and JSON-line writing for the kernel suite; see
// harness_util.h.

#include "kernels_ref/harness_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kref {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("quantile of an empty sample");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const std::size_t below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

TimingStats timing_stats(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("timing_stats: no samples");
  std::sort(samples.begin(), samples.end());
  TimingStats s;
  s.median = quantile_sorted(samples, 0.5);
  s.p10 = quantile_sorted(samples, 0.1);
  s.p90 = quantile_sorted(samples, 0.9);
  s.min = samples.front();
  s.max = samples.back();
  s.count = static_cast<int>(samples.size());
  return s;
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

JsonObject& JsonObject::raw(const std::string& key, const std::string& json) {
  if (!body_.empty()) body_ += ",";
  body_ += json_quote(key) + ":" + json;
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  return raw(key, json_quote(value));
}
JsonObject& JsonObject::add(const std::string& key, const char* value) {
  return raw(key, json_quote(value));
}
JsonObject& JsonObject::add(const std::string& key, double value) {
  return raw(key, json_number(value));
}
JsonObject& JsonObject::add(const std::string& key, std::int64_t value) {
  return raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, int value) {
  return raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, bool value) {
  return raw(key, value ? "true" : "false");
}
JsonObject& JsonObject::add(const std::string& key, const JsonObject& value) {
  return raw(key, value.str());
}

std::string JsonObject::str() const { return "{" + body_ + "}"; }

}  // namespace kref
