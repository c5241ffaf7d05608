#include "tools/variations.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>

#include "base/error.h"
#include "models/collectives/plan.h"

namespace zx::tools {

std::set<std::string> knob_flags_given(const CLI::App& cmd, experiments::Sweeper sweeper) {
  std::set<std::string> out;
  for (const experiments::Knob& knob : experiments::knobs()) {
    const std::string flag(knob.flag);
    if (knob.for_sweeper(sweeper) && !flag.empty() && cmd.get_option_no_throw(flag) != nullptr && cmd.count(flag) > 0) {
      out.insert(flag);
    }
  }
  return out;
}

std::set<std::string> algorithm_kinds_named(const std::vector<std::string>& algo_flags) {
  std::set<std::string> out;
  for (const std::string& a : algo_flags) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) continue;
    const auto kind = models::collectives::parse_collective_kind(a.substr(0, eq));
    out.insert(kind ? std::string(models::collectives::to_string(*kind)) : a.substr(0, eq));
  }
  return out;
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
