// File: experiments/report_format.cc
//
// The reports' shared formatting pieces (see report_format.h).

#include "experiments/report_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/collectives/kinds.h"

namespace zx::experiments {

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

namespace {

// "1 KiB", "25.5 MiB": binary units, three significant digits.
std::string binary_size(sim::Bytes bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes.count());
  int unit = 0;
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

}  // namespace

nlohmann::ordered_json candidates_json(const std::vector<models::AutoChoice::Candidate>& candidates) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const models::AutoChoice::Candidate& k : candidates) {
    nlohmann::ordered_json one;
    one["algorithm"] = k.algorithm;
    if (k.time) {
      one["time_us"] = k.time->to_seconds() * 1e6;
    } else if (k.slower_than) {
      one["slower_than_us"] = k.slower_than->to_seconds() * 1e6;
    } else {
      one["refused"] = k.refused;
    }
    out.push_back(std::move(one));
  }
  return out;
}

nlohmann::ordered_json auto_choices_json(const std::vector<models::AutoChoice>& choices) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const models::AutoChoice& c : choices) {
    nlohmann::ordered_json row;
    row["kind"] = models::collectives::to_string(c.kind);
    row["ranks"] = c.ranks;
    row["bytes_per_rank"] = c.bytes_per_rank.count();
    row["dtype"] = models::collectives::to_string(c.dtype);
    row["chosen"] = c.chosen;
    row["candidates"] = candidates_json(c.candidates);
    out.push_back(std::move(row));
  }
  return out;
}

std::string auto_choices_summary(const std::vector<models::AutoChoice>& choices) {
  // kind -> algorithm (in order of first choice) -> calls and size range.
  struct Use {
    std::string algorithm;
    int calls = 0;
    sim::Bytes least;
    sim::Bytes most;
  };
  std::map<int, std::vector<Use>> by_kind;
  for (const models::AutoChoice& c : choices) {
    std::vector<Use>& uses = by_kind[static_cast<int>(c.kind)];
    auto it = std::find_if(uses.begin(), uses.end(), [&](const Use& u) { return u.algorithm == c.chosen; });
    if (it == uses.end()) {
      uses.push_back(Use{c.chosen, 0, c.bytes_per_rank, c.bytes_per_rank});
      it = uses.end() - 1;
    }
    ++it->calls;
    it->least = std::min(it->least, c.bytes_per_rank);
    it->most = std::max(it->most, c.bytes_per_rank);
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, uses] : by_kind) {
    std::vector<std::string> parts;
    for (const Use& u : uses) {
      parts.push_back(fmt::format("{} x{} ({})", u.algorithm, u.calls,
                                  u.least == u.most ? binary_size(u.least)
                                                    : binary_size(u.least) + " to " + binary_size(u.most)));
    }
    kinds.push_back(fmt::format("{}: {}",
                                models::collectives::to_string(static_cast<models::collectives::CollectiveKind>(kind)),
                                fmt::join(parts, ", ")));
  }
  return fmt::format("{}", fmt::join(kinds, "; "));
}

}  // namespace zx::experiments
