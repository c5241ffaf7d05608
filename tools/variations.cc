#include "tools/variations.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "topology/degrade.h"

namespace zx::tools {
namespace {

InputError bad_value(const std::string& key, const std::string& value, const std::string& expected) {
  return InputError(Diagnostic{"--vary", key, fmt::format("expected {}, got '{}'", expected, value)});
}

}  // namespace

Variation parse_variation(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("expected KEY=V1,V2,... (nic-gbit=100,200,400), got '{}'", text)});
  }
  Variation v;
  v.key = text.substr(0, eq);
  std::stringstream in(text.substr(eq + 1));
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw InputError(Diagnostic{"--vary", v.key, fmt::format("empty value in '{}'", text)});
    if (std::find(v.values.begin(), v.values.end(), item) != v.values.end()) {
      throw InputError(Diagnostic{"--vary", v.key, fmt::format("value '{}' given twice", item)});
    }
    v.values.push_back(item);
  }
  if (text.back() == ',') throw InputError(Diagnostic{"--vary", v.key, fmt::format("empty value in '{}'", text)});
  return v;
}

std::vector<Settings> all_combinations(const std::vector<Variation>& variations) {
  for (std::size_t i = 0; i < variations.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (variations[i].key == variations[j].key) {
        throw InputError(Diagnostic{"--vary", variations[i].key, "the same knob varied twice; give its values once"});
      }
    }
  }
  std::vector<Settings> out{Settings{}};
  for (const Variation& v : variations) {
    std::vector<Settings> next;
    for (const Settings& prefix : out) {
      for (const std::string& value : v.values) {
        Settings s = prefix;
        s.emplace_back(v.key, value);
        next.push_back(std::move(s));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string settings_label(const Settings& settings) {
  if (settings.empty()) return "base";
  std::string out;
  for (const auto& [key, value] : settings) out += fmt::format("{}{}={}", out.empty() ? "" : " ", key, value);
  return out;
}

std::optional<std::string> cluster_override(const std::string& key, const std::string& value) {
  if (key == "nic-gbit") {
    variation_number(key, value, 1e-3, 1e6);
    return "nic.bandwidth_gbit_per_s=" + value;
  }
  if (key == "oversubscription") {
    variation_number(key, value, 1, 1024);
    return "fabric.oversubscription=" + value;
  }
  if (key.find('.') != std::string::npos && !key.starts_with("algo.")) return key + "=" + value;
  return std::nullopt;
}

bool apply_degrade_knob(const std::string& key, const std::string& value, topology::ClusterRequest& request) {
  if (key != "degrade") return false;
  if (value == "none") return true;
  std::size_t begin = 0;
  while (begin <= value.size()) {
    const std::size_t plus = std::min(value.find('+', begin), value.size());
    const std::string part = value.substr(begin, plus - begin);
    if (part.empty()) {
      throw InputError(Diagnostic{"--vary", key, fmt::format("'{}': an empty part between '+'", value)});
    }
    topology::parse_degradation(part, "--vary degrade");
    request.degradations.push_back(part);
    begin = plus + 1;
  }
  return true;
}

void check_set_once(const std::string& vary_key, const std::string& override,
                    const std::vector<std::string>& existing) {
  const std::string key = override.substr(0, override.find('='));
  for (const std::string& set : existing) {
    if (set.substr(0, set.find('=')) == key) {
      throw InputError(Diagnostic{"--vary", vary_key, fmt::format("'{}' is also set by '{}'; give it once", key, set)});
    }
  }
}

double variation_number(const std::string& key, const std::string& value, double lo, double hi) {
  double x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (ec != std::errc() || ptr != end || !std::isfinite(x) || x < lo || x > hi) {
    throw bad_value(key, value, fmt::format("a number in [{}, {}]", lo, hi));
  }
  return x;
}

std::int64_t variation_integer(const std::string& key, const std::string& value, std::int64_t lo, std::int64_t hi) {
  std::int64_t x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (ec != std::errc() || ptr != end || x < lo || x > hi) {
    throw bad_value(key, value, fmt::format("an integer in [{}, {}]", lo, hi));
  }
  return x;
}

const std::string& variation_one_of(const std::string& key, const std::string& value,
                                    std::initializer_list<const char*> valid) {
  return variation_one_of(key, value, std::span<const char* const>(valid.begin(), valid.size()));
}

const std::string& variation_one_of(const std::string& key, const std::string& value,
                                    std::span<const char* const> valid) {
  for (const char* v : valid) {
    if (value == v) return value;
  }
  throw bad_value(key, value, fmt::format("one of {}", fmt::join(valid, ", ")));
}

nlohmann::ordered_json knob_value_json(const std::string& value) {
  double x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(x)) return value;
  std::int64_t i = 0;
  const auto [iptr, iec] = std::from_chars(value.data(), end, i);
  if (iec == std::errc() && iptr == end) return i;
  return x;
}

nlohmann::ordered_json variations_json(const std::vector<std::string>& texts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const std::string& text : texts) {
    const Variation v = parse_variation(text);
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const std::string& value : v.values) values.push_back(knob_value_json(value));
    out[v.key] = std::move(values);
  }
  return out;
}

nlohmann::ordered_json settings_json(const Settings& settings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : settings) out[key] = knob_value_json(value);
  return out;
}

std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_field(const std::string& text) {
  return text.find_first_of(",\"\r\n") == std::string::npos ? text : csv_quoted(text);
}

}  // namespace zx::tools
