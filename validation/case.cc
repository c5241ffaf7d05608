#include "validation/case.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_reader.h"
#include "validation/cases_data.h"

namespace zx::validation {
namespace {

// Options of the scenario commands that write files, set the output
// format (validate asks for JSON itself) or load code into the process.
constexpr std::string_view kRefusedOptions[] = {"--format", "--plot", "--plots", "--timeline", "--emit-trace",
                                                "--emit-sharding", "--out", "--report", "--plugin", "--help",
                                                "-h"};

bool id_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '/';
}

}  // namespace

const std::vector<std::string>& quantities() {
  static const std::vector<std::string> kQuantities = {"busbw_gbyte_per_s", "algbw_gbyte_per_s", "time_us",
                                                       "samples_per_s", "iteration_time_ms"};
  return kQuantities;
}

std::string_view unit_of(std::string_view quantity) {
  if (quantity == "busbw_gbyte_per_s" || quantity == "algbw_gbyte_per_s") return "GB/s";
  if (quantity == "time_us") return "us";
  if (quantity == "samples_per_s") return "samples/s";
  if (quantity == "iteration_time_ms") return "ms";
  return "";
}

const std::vector<std::string>& scenario_commands() {
  static const std::vector<std::string> kCommands = {"collective", "whatif"};
  return kCommands;
}

Case parse_case(std::string_view text, const std::string& file) {
  json::Document doc = json::Document::parse(text, file);
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {1});
  Case c;
  c.file = file;
  for (const char* key : {"id", "family", "title", "measured", "source", "system", "software", "scenario",
                          "simulated"}) {
    root.require(key);
  }
  if (root.read_string("id", c.id)) {
    if (c.id.empty() || c.id.size() > 200 || !std::all_of(c.id.begin(), c.id.end(), id_character)) {
      doc.diagnostics().error("/id", fmt::format("expected 1 to 200 letters, digits or '-_./', got '{}'",
                                                 c.id.substr(0, 200)));
    }
  }
  root.read_string("family", c.family);
  if (root.has("family") && c.family.empty()) doc.diagnostics().error("/family", "expected a non-empty string");
  root.read_string("title", c.title);
  root.read_string("system", c.system);
  root.read_string("software", c.software);
  root.read_string("derivation", c.derivation);
  if (auto measured = root.object("measured")) {
    measured->require("quantity");
    measured->require("value");
    measured->read_enum("quantity", c.quantity, quantities());
    // Positive and finite: a relative error needs a measured value above 0.
    if (measured->read_number("value", c.measured, {.min = 0, .max = 1e18}) && !(c.measured > 0)) {
      doc.diagnostics().error("/measured/value", fmt::format("expected a value above 0, got {}", c.measured));
    }
    measured->read_enum("kind", c.kind, {"measurement", "model"});
    measured->finish();
  }
  if (auto source = root.object("source")) {
    source->require("url");
    source->read_string("url", c.source.url);
    if (root.has("source") && source->has("url") && c.source.url.rfind("https://", 0) != 0) {
      doc.diagnostics().error("/source/url", fmt::format("expected an https:// address, got '{}'", c.source.url));
    }
    source->read_string("repository", c.source.repository);
    source->read_string("path", c.source.path);
    source->read_string("commit", c.source.commit);
    source->read_string("reference", c.source.reference);
    source->read_string("quote", c.source.quote);
    source->finish();
  }
  if (auto scenario = root.object("scenario")) {
    scenario->require("command");
    scenario->require("arguments");
    scenario->read_enum("command", c.command, scenario_commands());
    if (auto args = scenario->array("arguments")) {
      for (std::size_t i = 0; i < args->size(); ++i) {
        std::string arg;
        if (!args->read_string(i, arg)) continue;
        const std::string name = arg.substr(0, arg.find('='));
        if (std::find(std::begin(kRefusedOptions), std::end(kRefusedOptions), name) != std::end(kRefusedOptions)) {
          doc.diagnostics().error(args->element_pointer(i),
                                  fmt::format("'{}' is not allowed in a scenario: validate asks for JSON itself, "
                                              "and a case writes no file and loads no code",
                                              name));
        }
        c.arguments.push_back(std::move(arg));
      }
    }
    scenario->finish();
  }
  if (auto simulated = root.object("simulated")) {
    simulated->require("pointer");
    if (simulated->read_string("pointer", c.pointer)) {
      if (c.pointer.empty() || c.pointer.front() != '/') {
        doc.diagnostics().error("/simulated/pointer",
                                fmt::format("expected a JSON pointer starting with '/', got '{}'", c.pointer));
      } else if (!c.quantity.empty() &&
                 c.pointer.substr(c.pointer.rfind('/') + 1) != c.quantity) {
        doc.diagnostics().error("/simulated/pointer",
                                fmt::format("expected a pointer to the measured quantity '{}', got '{}'",
                                            c.quantity, c.pointer));
      }
    }
    simulated->finish();
  }
  if (auto pinned = root.object("pinned_error")) {
    PinnedError pin;
    pinned->require("value");
    pinned->require("band");
    const bool value_ok = pinned->read_number("value", pin.value, {.min = -1.0, .max = 1e6});
    const bool band_ok = pinned->read_number("band", pin.band, {.min = 0, .max = 1e6});
    if (band_ok && !(pin.band > 0)) {
      doc.diagnostics().error("/pinned_error/band", fmt::format("expected a band above 0, got {}", pin.band));
    }
    pinned->finish();
    if (value_ok && band_ok) c.pinned = pin;
  }
  root.finish();
  doc.throw_if_errors();
  return c;
}

std::vector<Case> builtin_cases() {
  std::vector<Case> cases;
  std::map<std::string, std::string> seen;  // id -> file
  for (int i = 0; i < internal::kCaseFileCount; ++i) {
    const internal::CaseFile& f = internal::kCaseFiles[i];
    Case c = parse_case(f.text, std::string("builtin:") + f.name);
    if (const auto [it, added] = seen.emplace(c.id, c.file); !added) {
      throw InputError(Diagnostic{c.file, "/id", fmt::format("id '{}' is also the id of {}", c.id, it->second)});
    }
    cases.push_back(std::move(c));
  }
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.id < b.id; });
  return cases;
}

double relative_error(double simulated, double measured) { return (simulated - measured) / measured; }

bool within_pin(double error, const PinnedError& pin) {
  return error >= pin.value - pin.band && error <= pin.value + pin.band;
}

std::vector<FamilySummary> summarize(const std::vector<Outcome>& outcomes) {
  std::vector<FamilySummary> summaries;
  std::map<std::string, std::size_t> index;
  for (const Outcome& o : outcomes) {
    const Case& c = *o.validation_case;
    const std::string family = c.kind == "model" ? c.family + " (model)" : c.family;
    auto [it, added] = index.emplace(family, summaries.size());
    if (added) summaries.push_back(FamilySummary{.family = family});
    FamilySummary& s = summaries[it->second];
    ++s.cases;
    s.mean_abs_error += std::abs(o.error);
    if (s.worst_case.empty() || std::abs(o.error) > std::abs(s.worst_error)) {
      s.worst_error = o.error;
      s.worst_case = c.id;
    }
  }
  for (FamilySummary& s : summaries) s.mean_abs_error /= s.cases;
  return summaries;
}

}  // namespace zx::validation
