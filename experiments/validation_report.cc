// File: experiments/validation_report.cc

#include "experiments/validation_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"
#include "experiments/interrupt.h"
#include "experiments/parallel.h"
#include "experiments/svg_plot.h"

namespace zx::experiments {
namespace {

std::string percent(double error) { return fmt::format("{:+.1f}%", error * 100); }

// A figure in the table: two decimals, or four digits from a million up.
std::string figure(double value) {
  if (std::abs(value) >= 1e6) return fmt::format("{:.4g}", value);
  return fmt::format("{:.2f}", value);
}

// The tables' columns are fmt's widths, two spaces apart, a longer cell
// overflowing its line.
const TableStyle kTableStyle{.separator = "  ", .fit = false};

}  // namespace

std::vector<validation::Case> load_validation_cases(const std::vector<std::string>& files,
                                                    const std::vector<std::string>& only) {
  std::vector<validation::Case> cases;
  if (files.empty()) {
    cases = validation::builtin_cases();
  } else {
    for (const std::string& file : files) cases.push_back(validation::parse_case(read_input_file(file), file));
    for (std::size_t i = 0; i < cases.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (cases[i].id == cases[j].id) {
          throw InputError(Diagnostic{cases[i].file, "/id",
                                      fmt::format("id '{}' is also the id of {}", cases[i].id, cases[j].file)});
        }
      }
    }
  }
  if (only.empty()) return cases;
  std::vector<validation::Case> chosen;
  for (const std::string& wanted : only) {
    bool found = false;
    for (const validation::Case& c : cases) {
      // An id, or a family: every case of it.
      if (c.id == wanted || c.family == wanted) {
        if (std::none_of(chosen.begin(), chosen.end(), [&](const validation::Case& k) { return k.id == c.id; })) {
          chosen.push_back(c);
        }
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> names;
      for (const validation::Case& c : cases) {
        names.push_back(c.id);
        names.push_back(c.family);
      }
      std::string message = fmt::format("no case or family '{}'", wanted);
      if (const auto guess = json::closest_match(wanted, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
      throw InputError(Diagnostic{"--case", "", message + "; zionsim validate --format csv lists them"});
    }
  }
  return chosen;
}

std::vector<validation::Outcome> run_validation(const std::vector<validation::Case>& cases,
                                                const SimulateCase& simulate, int threads) {
  std::vector<validation::Outcome> outcomes(cases.size());
  parallel_for(cases.size(), threads, [&](std::size_t i) {
    check_interrupt();
    const double simulated = simulate(cases[i]);
    outcomes[i] = validation::Outcome{&cases[i], simulated, validation::relative_error(simulated, cases[i].measured)};
  });
  return outcomes;
}

std::string pin_status(const validation::Case& c, double error) {
  if (!c.pinned) return "unpinned";
  return validation::within_pin(error, *c.pinned) ? "ok" : "moved";
}

Schema validation_case_schema(const std::vector<validation::Outcome>& outcomes, bool check) {
  constexpr unsigned kCsvAndJson = kCsv | kJson;
  std::size_t id_width = 4;
  for (const validation::Outcome& o : outcomes) id_width = std::max(id_width, o.validation_case->id.size());
  return Schema{{
      {.name = "id", .header = "case", .width = static_cast<int>(id_width), .align = Align::kLeft},
      {.name = "family", .outputs = kCsvAndJson},
      {.name = "title", .outputs = kJson},
      {.name = "kind", .outputs = kCsvAndJson},
      {.name = "quantity", .outputs = kCsvAndJson},
      // The table's figures: two decimals, or four digits from a million up.
      {.name = "measured", .width = 12, .outputs = kTable},
      {.name = "simulated", .width = 12, .outputs = kTable},
      {.name = "unit", .width = 9, .align = Align::kLeft, .outputs = kTable | kJson},
      {.name = "measured", .format = Format::kReal, .outputs = kCsvAndJson},
      {.name = "simulated", .format = Format::kReal, .outputs = kCsvAndJson},
      {.name = "error", .width = 7, .outputs = kTable},  // "+1.8%"
      {.name = "error", .format = Format::kReal, .outputs = kCsvAndJson},
      // Pinned cases only: {"value", "band"} and whether the error is within.
      {.name = "pinned_error", .format = Format::kJson, .outputs = kJson, .absent = Absent::kOmitted},
      {.name = "within_pin", .format = Format::kJson, .outputs = kJson, .absent = Absent::kOmitted},
      {.name = "pinned_error", .format = Format::kReal, .outputs = kCsv},
      {.name = "band", .format = Format::kReal, .outputs = kCsv},
      {.name = "source", .outputs = kCsv},  // the URL
      {.name = "source", .format = Format::kJson, .outputs = kJson},
      {.name = "pin", .align = Align::kLeft, .outputs = check ? unsigned{kTable} : 0U},
      {.name = "command", .format = Format::kJson, .outputs = kJson},
      {.name = "file", .outputs = kJson},
      {.name = "note", .outputs = kTable, .note = true},
  }};
}

std::vector<Row> validation_case_rows(const std::vector<validation::Outcome>& outcomes) {
  std::vector<Row> rows;
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    const nlohmann::ordered_json source = {{"url", c.source.url},
                                           {"repository", c.source.repository},
                                           {"path", c.source.path},
                                           {"commit", c.source.commit},
                                           {"reference", c.source.reference}};
    nlohmann::ordered_json command = nlohmann::ordered_json::array({"zionsim", c.command});
    for (const std::string& a : c.arguments) command.push_back(a);
    const auto pinned = [&](auto value) { return c.pinned ? Cell{value()} : Cell{}; };
    rows.push_back({c.id, c.family, c.title, c.kind, c.quantity, figure(c.measured), figure(o.simulated),
                    std::string(validation::unit_of(c.quantity)), c.measured, o.simulated, percent(o.error), o.error,
                    pinned([&] { return nlohmann::ordered_json{{"value", c.pinned->value}, {"band", c.pinned->band}}; }),
                    pinned([&] { return nlohmann::ordered_json(validation::within_pin(o.error, *c.pinned)); }),
                    pinned([&] { return c.pinned->value; }), pinned([&] { return c.pinned->band; }), c.source.url,
                    source, pin_status(c, o.error), std::move(command), c.file,
                    c.kind == "model" ? Cell{std::string("(measured: a model's figure)")} : Cell{}});
  }
  return rows;
}

Schema validation_family_schema() {
  return Schema{{
      {.name = "family", .width = 28, .align = Align::kLeft},
      {.name = "cases", .format = Format::kInteger, .width = 5},
      {.name = "mean_abs_error_percent", .header = "mean |error|", .width = 12, .outputs = kTable},  // "1.8%"
      {.name = "worst", .outputs = kTable},  // "-2.0% (its case)"
      {.name = "mean_abs_error", .format = Format::kReal, .outputs = kJson},
      {.name = "worst_error", .format = Format::kReal, .outputs = kJson},
      {.name = "worst_case", .outputs = kJson},
  }};
}

std::vector<Row> validation_family_rows(const std::vector<validation::FamilySummary>& summary) {
  std::vector<Row> rows;
  for (const validation::FamilySummary& s : summary) {
    rows.push_back({s.family, std::int64_t{s.cases}, fmt::format("{:.1f}%", s.mean_abs_error * 100),
                    fmt::format("{} ({})", percent(s.worst_error), s.worst_case), s.mean_abs_error, s.worst_error,
                    s.worst_case});
  }
  return rows;
}

void write_validation_table(std::ostream& out, const std::vector<validation::Outcome>& outcomes,
                            const std::vector<validation::FamilySummary>& summary, bool check) {
  fmt::print(out, "zionsim validate: {} case{}, error = (simulated - measured) / measured\n\n", outcomes.size(),
             outcomes.size() == 1 ? "" : "s");
  write_table(out, validation_case_schema(outcomes, check), validation_case_rows(outcomes), kTableStyle);
  out << '\n';
  write_table(out, validation_family_schema(), validation_family_rows(summary), kTableStyle);
  fmt::print(out, "\nsources and what each error is explained by: docs/validation.md\n");
}

nlohmann::ordered_json validation_report_json(const std::vector<validation::Outcome>& outcomes,
                                              const std::vector<validation::FamilySummary>& summary) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["cases"] = json_rows(validation_case_schema(outcomes, false), validation_case_rows(outcomes));
  j["families"] = json_rows(validation_family_schema(), validation_family_rows(summary));
  return j;
}

void write_validation_csv(std::ostream& out, const std::vector<validation::Outcome>& outcomes) {
  write_csv(out, validation_case_schema(outcomes, false), validation_case_rows(outcomes));
}

void write_validation_plot(std::ostream& out, const std::vector<validation::Outcome>& outcomes) {
  std::vector<ValidationPoint> points;
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    points.push_back(
        ValidationPoint{c.id, c.family, std::string(validation::unit_of(c.quantity)), c.measured, o.simulated});
  }
  write_validation_svg(out, points, "zionsim validate: simulated against measured");
}

int check_validation_pins(std::ostream& err, const std::vector<validation::Outcome>& outcomes) {
  int failed = 0;
  for (const validation::Outcome& o : outcomes) {
    const validation::Case& c = *o.validation_case;
    if (!c.pinned) {
      ++failed;
      fmt::print(err, "zionsim validate: case '{}' has no pinned_error (--check needs one)\n", c.id);
    } else if (!validation::within_pin(o.error, *c.pinned)) {
      ++failed;
      fmt::print(err,
                 "zionsim validate: case '{}' moved: error {} is outside its pin {} +/- {:.1f} points ({}); "
                 "if the change is meant, move the pin and say why in docs/validation.md\n",
                 c.id, percent(o.error), percent(c.pinned->value), c.pinned->band * 100, c.file);
    }
  }
  return failed;
}

}  // namespace zx::experiments
