// File: validation/case.h
//
// Validation cases: one published measurement each (a nccl-tests bus
// bandwidth, an MLPerf Training throughput, ...), with its source, the
// configuration it was taken on, the zionsim scenario that reproduces that
// configuration, and the field of the scenario's JSON output that is
// compared with it. `zionsim validate` runs them (experiments/validation_report.h);
// this package reads and checks the case files and does the arithmetic, and
// never runs the simulator.
//
// A case file (validation/cases/*.json; docs/validation.md has the whole
// schema):
//
//   {"schema_version": 1,
//    "id": "nccl-tests/dgx-a100-1node-all_reduce-8GiB",
//    "family": "nccl-tests",
//    "title": "all_reduce_perf bus bandwidth at 8 GiB, 8 x A100 on NVSwitch",
//    "measured": {"quantity": "busbw_gbyte_per_s", "value": 230.0, "kind": "measurement"},
//    "source": {"url": "...", "repository": "NVIDIA/nccl-tests", "reference": "issue 149",
//               "quote": "..."},
//    "system": "...", "software": "...", "derivation": "...",
//    "scenario": {"command": "collective", "arguments": ["--cluster", "dgx-a100", ...]},
//    "simulated": {"pointer": "/results/0/busbw_gbyte_per_s"},
//    "pinned_error": {"value": -0.018, "band": 0.01}}
//
// The error of a case is (simulated - measured) / measured. The pin is a
// regression guard, not a target: `validate --check` fails when a case's
// error leaves [value - band, value + band], so that a change that moves
// the model shows, and the pin is moved on purpose with the text that
// explains it. No parameter of the model is fitted to these figures.

#ifndef ZIONSIM_VALIDATION_CASE_H_
#define ZIONSIM_VALIDATION_CASE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zx::validation {

/// The quantities a case may compare, as the commands' JSON names them.
/// The simulated pointer must end in the quantity's name, so that a case
/// cannot compare one quantity with another.
const std::vector<std::string>& quantities();

/// "GB/s" for busbw_gbyte_per_s, "samples/s", "us", "ms".
std::string_view unit_of(std::string_view quantity);

/// The commands a scenario may run: they simulate and write one JSON
/// document to standard output with --format json.
const std::vector<std::string>& scenario_commands();

struct Source {
  std::string url;          ///< required
  std::string repository;   ///< "owner/name" when the figure is in a repository or its issues
  std::string path;         ///< a file in that repository
  std::string commit;       ///< the commit read
  std::string reference;    ///< "issue 149", "Table 3", "result_0.txt .. result_4.txt"
  std::string quote;        ///< the words or the row the figure is taken from
};

struct PinnedError {
  double value = 0;  ///< the relative error when pinned
  double band = 0;   ///< > 0
};

struct Case {
  std::string file;      ///< where it was read from (a path, or "builtin:NAME")
  std::string id;        ///< unique; letters, digits and "-_./"
  std::string family;    ///< the summary groups by it
  std::string title;
  std::string quantity;  ///< one of quantities()
  double measured = 0;   ///< > 0, in unit_of(quantity)
  /// "measurement" (hardware) or "model" (another model's figure, e.g.
  /// MAD-Max's calibrated ZionEX numbers): reported, labelled, and kept out
  /// of the measurement summary.
  std::string kind = "measurement";
  Source source;
  std::string system;
  std::string software;
  std::string derivation;  ///< how the figure was derived from the source, where it was
  std::string command;     ///< one of scenario_commands()
  std::vector<std::string> arguments;
  std::string pointer;     ///< RFC 6901 pointer into the command's JSON output
  std::optional<PinnedError> pinned;
};

/// Parses one case file's text. Throws zx::InputError naming `file` and the
/// JSON pointer of every problem: a missing or unknown key, a quantity not
/// in quantities(), a pointer that does not end in the quantity, a command
/// not in scenario_commands(), an argument that would write a file or set
/// the output format (--format, --plot, --timeline, ...), a non-positive
/// value or band.
Case parse_case(std::string_view text, const std::string& file);

/// The cases compiled into the binary (validation/cases/*.json), by id.
/// Throws zx::InputError if two share an id (the build's cases test keeps
/// them apart).
std::vector<Case> builtin_cases();

/// (simulated - measured) / measured.
double relative_error(double simulated, double measured);

/// Whether `error` is within the pin's band (inclusive).
bool within_pin(double error, const PinnedError& pin);

/// One case's outcome.
struct Outcome {
  const Case* validation_case = nullptr;
  double simulated = 0;
  double error = 0;  ///< relative_error(simulated, measured)
};

/// Per family: how many cases, the mean and the worst absolute error (the
/// worst's case id and its signed error). Families in the order they first
/// appear; "model" cases are summarised apart from measurements (their
/// family name gets " (model)").
struct FamilySummary {
  std::string family;
  int cases = 0;
  double mean_abs_error = 0;
  double worst_error = 0;  ///< signed, the largest in absolute value
  std::string worst_case;
};
std::vector<FamilySummary> summarize(const std::vector<Outcome>& outcomes);

}  // namespace zx::validation

#endif  // ZIONSIM_VALIDATION_CASE_H_
