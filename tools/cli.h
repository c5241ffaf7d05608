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

namespace zx::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternalError = 1;
inline constexpr int kExitBadInput = 2;

/// Runs `zionsim` with `args` (not including the program name), writing
/// results to `out` and diagnostics to `err`; returns the exit status.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_CLI_H_
