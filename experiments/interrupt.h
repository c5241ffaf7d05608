// File: experiments/interrupt.h
//
// Two hooks for callers that run the commands in process (the Python
// package, python/): stopping a run from outside, and where the commands'
// progress lines go.
//
// Stopping. request_interrupt() is an atomic store, safe in a signal
// handler; the simulations poll interrupt_requested() between slices of
// simulated time and between sweep points, and check_interrupt() throws
// Interrupted, which run_cli() turns into exit status kExitInterrupted with
// "interrupted" on its error stream. A pending request stays until
// clear_interrupt(), which the caller runs before its next run.
//
// Progress. The commands' progress lines ("whatif: 32 nodes done (1 of 4,
// 2.1 s)") go to std::cerr unless a sink is set; a sink receives each line
// without its newline, from whichever thread finished the work (calls are
// serialised).

#ifndef ZIONSIM_EXPERIMENTS_INTERRUPT_H_
#define ZIONSIM_EXPERIMENTS_INTERRUPT_H_

#include <functional>
#include <stdexcept>
#include <string_view>

namespace zx::experiments {

/// A run stopped by request_interrupt().
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

void request_interrupt();
void clear_interrupt();
bool interrupt_requested();
/// Throws Interrupted when a request is pending.
void check_interrupt();

using ProgressSink = std::function<void(std::string_view line)>;
/// Sets where progress lines go; an empty sink restores std::cerr.
void set_progress_sink(ProgressSink sink);
/// Writes one progress line (a trailing newline, if any, is dropped).
void write_progress(std::string_view line);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_INTERRUPT_H_
