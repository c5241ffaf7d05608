// File: experiments/validation_report.h
//
// The report of `zionsim validate`: the validation suite's cases
// (validation/case.h) chosen and loaded, each simulated, and measured,
// simulated and error written as table, CSV and JSON, with a summary per
// family; the pins `--check` holds them to; the SVG plot's points.
//
// The tabular parts have a schema each (experiments/result_schema.h): the
// per-case rows and the per-family rows. The rest (the table's title and
// closing line, the JSON's top-level keys) is written by hand here. How a
// case's scenario is simulated is the caller's: tools/validate_command.cc
// runs it through the command line in process, and reads the flags.

#ifndef ZIONSIM_EXPERIMENTS_VALIDATION_REPORT_H_
#define ZIONSIM_EXPERIMENTS_VALIDATION_REPORT_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/result_schema.h"
#include "validation/case.h"

namespace zx::experiments {

/// The cases of a run: the built-in suite, or the case files `files` (read
/// and parsed, their ids unique: zx::InputError at the second file's /id);
/// then with `only`, the cases each names (an id, or a family: every case
/// of it), in that order, each once. A name that is neither throws
/// zx::InputError naming --case, with the closest name.
std::vector<validation::Case> load_validation_cases(const std::vector<std::string>& files,
                                                    const std::vector<std::string>& only);

/// Simulates a case's scenario and returns the figure at its pointer.
using SimulateCase = std::function<double(const validation::Case&)>;

/// Each case simulated by `simulate` (`threads` at a time; 0: all cores;
/// experiments::Interrupted when asked to stop), with its error, in the
/// cases' order. The outcomes point into `cases`.
std::vector<validation::Outcome> run_validation(const std::vector<validation::Case>& cases,
                                                const SimulateCase& simulate, int threads);

/// "ok", "moved" (the error is outside the pin's band) or "unpinned".
std::string pin_status(const validation::Case& c, double error);

/// The per-case rows. Table: case (as wide as the longest id), measured,
/// simulated, unit, error (percent), with `check` the pin's status, and a
/// note on a case whose measured figure is a model's. CSV: id, family,
/// kind, quantity, measured, simulated, error, pinned_error, band, source
/// (the URL). JSON: the case's fields, the pin and whether the error is
/// within it (pinned cases only), the source, the command, the file.
Schema validation_case_schema(const std::vector<validation::Outcome>& outcomes, bool check);
std::vector<Row> validation_case_rows(const std::vector<validation::Outcome>& outcomes);

/// The per-family rows (validation::summarize): family, cases, mean
/// absolute and worst error (the table's percent, JSON's fractions).
Schema validation_family_schema();
std::vector<Row> validation_family_rows(const std::vector<validation::FamilySummary>& summary);

/// The table: a title line, the cases, the families, where the sources are.
void write_validation_table(std::ostream& out, const std::vector<validation::Outcome>& outcomes,
                            const std::vector<validation::FamilySummary>& summary, bool check);

/// The JSON document (schema_version 1): "cases" and "families".
nlohmann::ordered_json validation_report_json(const std::vector<validation::Outcome>& outcomes,
                                              const std::vector<validation::FamilySummary>& summary);

/// The CSV: a row per case.
void write_validation_csv(std::ostream& out, const std::vector<validation::Outcome>& outcomes);

/// Simulated against measured, log-log (experiments/svg_plot.h).
void write_validation_plot(std::ostream& out, const std::vector<validation::Outcome>& outcomes);

/// Writes to `err` a line for each case --check fails (no pin, or an error
/// outside its band) and returns how many.
int check_validation_pins(std::ostream& err, const std::vector<validation::Outcome>& outcomes);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_VALIDATION_REPORT_H_
