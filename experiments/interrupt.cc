#include "experiments/interrupt.h"

#include <atomic>
#include <iostream>
#include <mutex>
#include <utility>

namespace zx::experiments {
namespace {

std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "request_interrupt must be safe in a signal handler");

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

ProgressSink& sink() {
  static ProgressSink s;
  return s;
}

}  // namespace

void request_interrupt() { g_interrupt.store(true, std::memory_order_relaxed); }
void clear_interrupt() { g_interrupt.store(false, std::memory_order_relaxed); }
bool interrupt_requested() { return g_interrupt.load(std::memory_order_relaxed); }

void check_interrupt() {
  if (interrupt_requested()) throw Interrupted();
}

void set_progress_sink(ProgressSink s) {
  const std::lock_guard<std::mutex> lock(sink_mutex());
  sink() = std::move(s);
}

void write_progress(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  const std::lock_guard<std::mutex> lock(sink_mutex());
  if (sink()) {
    sink()(line);
  } else {
    std::cerr << line << '\n';
  }
}

}  // namespace zx::experiments
