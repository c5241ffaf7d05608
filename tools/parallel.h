// File: tools/parallel.h
//
// Independent simulations on a few threads (each owns its simulator and
// network; nothing is shared but read-only inputs).

#ifndef ZIONSIM_TOOLS_PARALLEL_H_
#define ZIONSIM_TOOLS_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace zx::tools {

/// Calls fn(i) once for every i in [0, count), on up to `threads` threads
/// (0: one per core), taking indices in increasing order. After all calls
/// return, rethrows the exception of the lowest index that threw, so that
/// the error a user sees does not depend on timing.
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& fn);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_PARALLEL_H_
