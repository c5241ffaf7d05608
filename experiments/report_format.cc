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

std::vector<Column> knob_columns(const std::vector<Settings>& settings) {
  std::vector<Column> columns;
  if (settings.empty()) return columns;
  for (std::size_t k = 0; k < settings.front().size(); ++k) {
    std::size_t width = settings.front()[k].first.size();
    for (const Settings& s : settings) width = std::max(width, s[k].second.size());
    columns.push_back({.name = settings.front()[k].first,
                       .format = Format::kQuotedText,
                       .width = static_cast<int>(width),
                       .outputs = kTable | kCsv});
  }
  return columns;
}

}  // namespace zx::experiments
