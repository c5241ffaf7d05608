// File: python/_zionsim.cc
//
// The zionsim Python extension (`zionsim._zionsim`): the command line, run
// in this process. The pure-Python package (python/zionsim/__init__.py)
// builds the arguments from keyword arguments and turns the JSON a command
// prints into pandas DataFrames; this file only runs the command:
//
//   run(args: list[str], progress: Callable[[str], None] | None)
//     -> (status: int, out: str, err: str, diagnostics: list[tuple[str, str, str]])
//
// and gives the package the C++ Scenario (experiments/scenario.h) to build
// and check its `Scenario` objects with, each call taking and returning the
// scenario's JSON text and, for bad input, its problems instead:
//
//   scenario_default() -> str
//   scenario_check(text, source) -> (json: str, hash: str, problems)
//   scenario_set(text, key, value) -> (json: str, hash: str, problems)
//
// so that a scenario built in Python is checked by the same code, names the
// same JSON pointers and hashes to the same key as one the CLI writes
// (whatif --emit-scenarios) and reads (whatif --scenario-file).
//
// While a command runs the GIL is released (other Python threads go on), and
// SIGINT (Ctrl-C) requests an interrupt (experiments/interrupt.h): the simulation
// stops at its next slice of simulated time and the call returns status 130,
// which the package raises as KeyboardInterrupt; Python's own handler is put
// back afterwards. Progress lines go to `progress` (called with the GIL held),
// or nowhere when it is None, never to stderr; an exception in it stops the
// run the same way and is raised once the command has returned.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <csignal>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "base/json_reader.h"
#include "experiments/interrupt.h"
#include "experiments/knobs.h"
#include "experiments/scenario.h"
#include "tools/cli.h"

namespace py = pybind11;

namespace {

extern "C" void on_sigint(int /*signal*/) { zx::experiments::request_interrupt(); }

// While alive, SIGINT requests an interrupt instead of running Python's
// handler, whose KeyboardInterrupt cannot be raised while the GIL is free.
class SigintGuard {
 public:
  SigintGuard() {
    struct sigaction action {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  }
  ~SigintGuard() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction previous_ {};
  bool installed_ = false;
};

// Restores the default progress sink (stderr) when the call ends, however.
struct SinkGuard {
  ~SinkGuard() { zx::experiments::set_progress_sink({}); }
};

using Result = std::tuple<int, std::string, std::string, std::vector<std::tuple<std::string, std::string, std::string>>>;

Result run(const std::vector<std::string>& args, const py::object& progress) {
  std::ostringstream out;
  std::ostringstream err;
  std::vector<zx::Diagnostic> diagnostics;
  std::optional<py::error_already_set> callback_error;
  zx::experiments::clear_interrupt();
  SinkGuard sink_guard;
  if (progress.is_none()) {
    zx::experiments::set_progress_sink([](std::string_view) {});  // quiet, as a library should be
  } else {
    zx::experiments::set_progress_sink([&progress, &callback_error](std::string_view line) {
      py::gil_scoped_acquire gil;
      if (callback_error) return;
      try {
        progress(py::str(line.data(), line.size()));
      } catch (py::error_already_set& e) {
        callback_error.emplace(std::move(e));
        zx::experiments::request_interrupt();
      }
    });
  }
  int status = 0;
  {
    SigintGuard sigint;
    py::gil_scoped_release release;
    status = zx::tools::run_cli(args, out, err, &diagnostics);
  }
  zx::experiments::set_progress_sink({});
  zx::experiments::clear_interrupt();
  if (callback_error) throw std::move(*callback_error);
  std::vector<std::tuple<std::string, std::string, std::string>> problems;
  for (const zx::Diagnostic& d : diagnostics) problems.emplace_back(d.source, d.location, d.message);
  return {status, out.str(), err.str(), std::move(problems)};
}

using Problems = std::vector<std::tuple<std::string, std::string, std::string>>;
using Checked = std::tuple<std::string, std::string, Problems>;

Problems problems_of(const zx::InputError& e) {
  Problems problems;
  for (const zx::Diagnostic& d : e.diagnostics()) problems.emplace_back(d.source, d.location, d.message);
  return problems;
}

Checked checked(const zx::experiments::Scenario& s) {
  return {zx::experiments::scenario_to_json(s).dump(), zx::experiments::scenario_hash(s), {}};
}

zx::experiments::Scenario read_scenario(const std::string& text, const std::string& source) {
  zx::json::Document doc = zx::json::Document::parse(text, source);
  return zx::experiments::scenario_from_json(doc.value(), source);
}

std::string scenario_default() { return zx::experiments::scenario_to_json(zx::experiments::Scenario{}).dump(); }

// The scenario `text` holds, read as whatif --scenario-file reads a file
// named `source`: its canonical JSON and hash, or its problems.
Checked scenario_check(const std::string& text, const std::string& source) {
  try {
    return checked(read_scenario(text, source));
  } catch (const zx::InputError& e) {
    return {"", "", problems_of(e)};
  }
}

// The scenario `text` holds with knob `key` (a --vary key) set to `value`.
Checked scenario_set(const std::string& text, const std::string& key, const std::string& value) {
  try {
    zx::experiments::Scenario s = read_scenario(text, "<scenario>");
    zx::experiments::apply_knob(s, key, value, zx::experiments::Sweeper::kWhatif);
    return checked(s);
  } catch (const zx::InputError& e) {
    return {"", "", problems_of(e)};
  }
}

}  // namespace

PYBIND11_MODULE(_zionsim, m) {
  m.doc() = "zionsim's command line, run in process (see the zionsim package)";
  m.def("run", &run, py::arg("args"), py::arg("progress") = py::none(),
        "Runs `zionsim ARGS...`; returns (status, stdout, stderr, diagnostics).");
  m.def("scenario_default", &scenario_default, "The default scenario's JSON text.");
  m.def("scenario_check", &scenario_check, py::arg("text"), py::arg("source"),
        "Reads a scenario's JSON text; returns (canonical JSON, hash, problems).");
  m.def("scenario_set", &scenario_set, py::arg("text"), py::arg("key"), py::arg("value"),
        "Sets a knob (a --vary key) of a scenario; returns (canonical JSON, hash, problems).");
  m.attr("EXIT_OK") = zx::tools::kExitOk;
  m.attr("EXIT_INTERNAL_ERROR") = zx::tools::kExitInternalError;
  m.attr("EXIT_BAD_INPUT") = zx::tools::kExitBadInput;
  m.attr("EXIT_INTERRUPTED") = zx::tools::kExitInterrupted;
}
