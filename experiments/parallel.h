// File: experiments/parallel.h
//
// Independent simulations on a few threads (each owns its simulator and
// network; nothing is shared but read-only inputs), or over the ranks of an
// MPI job (experiments/distribution.h).

#ifndef ZIONSIM_EXPERIMENTS_PARALLEL_H_
#define ZIONSIM_EXPERIMENTS_PARALLEL_H_

#include <cstddef>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/distribution.h"

namespace zx::experiments {

/// Calls fn(i) once for every i in [0, count), on up to `threads` threads
/// (0: one per CPU this process may use), taking indices in increasing
/// order. After all calls return, rethrows the exception of the lowest
/// index that threw, so that the error a user sees does not depend on
/// timing.
void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& fn);

/// As parallel_for, storing compute(i) in results[i]; inside an MPI job
/// (experiments::Mpi::active()) spread over its ranks instead, the largest
/// `costs` first, each result sent to rank 0 as encode() writes it and read
/// back with decode() (lossless: the bits one process would hold), each
/// error as the exception it was. Returns false on the ranks other than 0:
/// they hold no results and print nothing. Every rank must call it alike.
template <typename R>
bool parallel_map(std::size_t count, int threads, std::span<const double> costs,
                  const std::function<R(std::size_t)>& compute,
                  const std::function<nlohmann::ordered_json(const R&)>& encode,
                  const std::function<R(const nlohmann::json&)>& decode, std::vector<R>& results);

namespace internal {
// The MPI half of parallel_map, on encoded results: out[i] is task i's
// {"result": ...} or {"error": ...} on rank 0. Returns false elsewhere.
bool map_over_mpi(std::size_t count, int threads, std::span<const double> costs,
                  const std::function<nlohmann::ordered_json(std::size_t)>& compute_encoded,
                  std::vector<nlohmann::json>& out);
// Rethrows the error an encoded outcome carries.
[[noreturn]] void rethrow_outcome_error(const nlohmann::json& outcome, std::size_t task);
nlohmann::ordered_json outcome_error(std::exception_ptr error);
}  // namespace internal

template <typename R>
bool parallel_map(std::size_t count, int threads, std::span<const double> costs,
                  const std::function<R(std::size_t)>& compute,
                  const std::function<nlohmann::ordered_json(const R&)>& encode,
                  const std::function<R(const nlohmann::json&)>& decode, std::vector<R>& results) {
  results.resize(count);
  if (!experiments::Mpi::active()) {
    parallel_for(count, threads, [&](std::size_t i) { results[i] = compute(i); });
    return true;
  }
  std::vector<nlohmann::json> outcomes;
  const bool root = internal::map_over_mpi(
      count, threads, costs,
      [&](std::size_t i) {
        try {
          return nlohmann::ordered_json{{"result", encode(compute(i))}};
        } catch (...) {
          return internal::outcome_error(std::current_exception());
        }
      },
      outcomes);
  if (!root) return false;
  for (std::size_t i = 0; i < count; ++i) {
    if (!outcomes[i].contains("result")) internal::rethrow_outcome_error(outcomes[i], i);
    results[i] = decode(outcomes[i]["result"]);
  }
  return true;
}

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_PARALLEL_H_
