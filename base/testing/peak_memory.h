// File: base/testing/peak_memory.h
//
// For benchmarks: this process's peak resident memory so far, in MiB
// (getrusage's ru_maxrss, which Linux counts in KiB). The peak never falls,
// so a benchmark that reports it runs one case per process.

#ifndef ZIONSIM_BASE_TESTING_PEAK_MEMORY_H_
#define ZIONSIM_BASE_TESTING_PEAK_MEMORY_H_

#include <sys/resource.h>

namespace zx {

inline double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

}  // namespace zx

#endif  // ZIONSIM_BASE_TESTING_PEAK_MEMORY_H_
