// zionsim: the command-line program. Everything happens in run_cli().
//
// Signals. SIGINT, SIGTERM and SIGHUP are taken by a thread of their own
// (blocked in every other thread, read with sigtimedwait), so that nothing
// runs in a signal handler; one the program was started ignoring stays
// ignored. The first asks the run to stop (experiments/interrupt.h):
// the simulations stop at their next look, the outputs' temporary files are
// removed as the stack unwinds, and the exit status is 128 + the signal, as a
// shell reports it. A second signal, or a run that has not stopped within
// kGraceSeconds, ends the program at once, its temporary files removed first.

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "experiments/distribution.h"
#include "tools/cli.h"
#include "experiments/interrupt.h"

namespace {

constexpr int kGraceSeconds = 5;

std::atomic<int> g_signal{0};

// The stop signals the program was not started ignoring: under nohup
// (SIGHUP ignored) or as a background job of a shell without job control
// (SIGINT ignored) they stay ignored, as the caller asked. (Linux queues a
// blocked signal even when its action is to ignore it, so the check is ours.)
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    sigaddset(&set, s);
  }
  return set;
}

[[noreturn]] void stop_now(int signal_number) {
  zx::tools::remove_pending_output_files();
  static const char kMessage[] = "zionsim: stopped\n";
  [[maybe_unused]] const ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(128 + signal_number);
}

// Runs for the life of the process (detached): main's return ends it.
void watch_signals(sigset_t set) {
  int first = 0;
  while (true) {
    siginfo_t info{};
    const timespec grace{kGraceSeconds, 0};
    const int s = first == 0 ? ::sigwaitinfo(&set, &info) : ::sigtimedwait(&set, &info, &grace);
    if (s < 0 && errno == EINTR) continue;
    if (s < 0) stop_now(first);  // the grace time passed: the run did not stop
    if (first != 0) stop_now(first);
    first = s;
    g_signal.store(s);
    zx::experiments::request_interrupt();
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Blocked before any other thread starts, so every thread inherits it.
  const sigset_t set = stop_signals();
  if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) == 0) std::thread(watch_signals, set).detach();

  // Under mpirun every rank runs the same command; rank 0 alone prints (and
  // writes files), the others hand it their sweep points
  // (experiments/distribution.h). A rank that fails ends the job: the
  // others may be waiting on it (or it on them), and Open MPI's MPI_Finalize
  // waits for every rank.
  zx::experiments::MpiSession mpi(&argc, &argv);
  const bool quiet = zx::experiments::Mpi::rank() != 0;
  std::ostringstream discarded;
  if (quiet) zx::experiments::set_progress_sink([](std::string_view) {});

  std::vector<std::string> args(argv + 1, argv + argc);
  int status = zx::tools::run_cli(args, quiet ? discarded : std::cout, quiet ? discarded : std::cerr);
  if (status != zx::tools::kExitOk && zx::experiments::Mpi::active()) {
    std::cout.flush();
    std::cerr.flush();
    zx::experiments::Mpi::abort(status);
  }
  if (status == zx::tools::kExitInterrupted && g_signal.load() != 0) status = 128 + g_signal.load();
  // Output that could not be written (a full disk, `> /dev/full`, a closed
  // pipe) is a failed run, not a quiet success: the result is lost.
  std::cout.flush();
  if (!std::cout) {
    // The failed write() left its reason in errno (the stream does not keep
    // it); only a write's reasons are named, not a stale errno of another call.
    const int error = errno == ENOSPC || errno == EPIPE || errno == EIO || errno == EFBIG || errno == EBADF ? errno : 0;
    std::cerr << "zionsim: error: writing the standard output failed"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    return status != zx::tools::kExitOk ? status : zx::tools::kExitInternalError;
  }
  return status;
}
