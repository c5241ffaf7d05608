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
#include "tools/cli.h"
#include "experiments/interrupt.h"

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

}  // namespace

PYBIND11_MODULE(_zionsim, m) {
  m.doc() = "zionsim's command line, run in process (see the zionsim package)";
  m.def("run", &run, py::arg("args"), py::arg("progress") = py::none(),
        "Runs `zionsim ARGS...`; returns (status, stdout, stderr, diagnostics).");
  m.attr("EXIT_OK") = zx::tools::kExitOk;
  m.attr("EXIT_INTERNAL_ERROR") = zx::tools::kExitInternalError;
  m.attr("EXIT_BAD_INPUT") = zx::tools::kExitBadInput;
  m.attr("EXIT_INTERRUPTED") = zx::tools::kExitInterrupted;
}
