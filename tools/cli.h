// File: tools/cli.h
//
// The zionsim command line, as a function that tests can call in process.
// main() is a one-line wrapper around run_cli().
//
// Exit status: 0 success; 1 the simulation hit an internal error (a bug);
// 2 bad usage or bad input (unknown flag or subcommand, invalid value or
// file), with every problem printed to `err`.

#ifndef ZIONSIM_TOOLS_CLI_H_
#define ZIONSIM_TOOLS_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "experiments/output_file.h"

namespace zx::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternalError = 1;
inline constexpr int kExitBadInput = 2;
/// Stopped by experiments::request_interrupt() (experiments/interrupt.h): 128 + SIGINT,
/// as a shell reports a command ended by Ctrl-C.
inline constexpr int kExitInterrupted = 130;

/// Runs `zionsim` with `args` (not including the program name), writing
/// results to `out` and diagnostics to `err`; returns the exit status. When
/// `diagnostics` is given, the problems of a bad input (status 2 from an
/// InputError) are also stored there, as found (file, JSON pointer or line,
/// message); a bad flag leaves it empty and says so on `err` only.
}  // namespace zx::tools

namespace zx::experiments {
struct SweepPlacement;
}  // namespace zx::experiments

namespace zx::tools {

using experiments::SweepPlacement;

/// Runs one command line. `merged` (zionsim merge) hands a sweep's points,
/// read from its shards, to the command instead of simulating them.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
            std::vector<Diagnostic>* diagnostics = nullptr, const SweepPlacement* merged = nullptr);

using experiments::remove_pending_output_files;  // experiments/output_file.h

/// Runs a command line from inside another command (merge, sweep) with
/// output to `out`, and throws its failure as the outer command's: input
/// errors (status 2) as zx::InputError with `note` added to each message,
/// an interruption as Interrupted, anything else as std::runtime_error.
void run_nested_cli(const std::vector<std::string>& args, std::ostream& out, const SweepPlacement* merged,
                    const std::string& note);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_CLI_H_

