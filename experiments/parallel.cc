#include "experiments/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "experiments/whatif_codec.h"

namespace zx::experiments {

void parallel_for(std::size_t count, int threads, const std::function<void(std::size_t)>& fn) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t wanted =
      threads > 0 ? static_cast<std::size_t>(threads) : static_cast<std::size_t>(experiments::available_cpus());
  const std::size_t n = std::max<std::size_t>(1, std::min(count, wanted));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

namespace internal {

bool map_over_mpi(std::size_t count, int threads, std::span<const double> costs,
                  const std::function<nlohmann::ordered_json(std::size_t)>& compute_encoded,
                  std::vector<nlohmann::json>& out) {
  out.assign(count, nlohmann::json());
  const std::vector<std::size_t> order = experiments::largest_first(costs);
  const int per_rank = threads > 0 ? threads : experiments::available_cpus();
  experiments::run_over_mpi(
      order, per_rank, [&](std::size_t i) { return compute_encoded(i).dump(); },
      [&](std::size_t i, std::string bytes) { out[i] = nlohmann::json::parse(bytes); });
  return experiments::Mpi::rank() == 0;
}

void rethrow_outcome_error(const nlohmann::json& outcome, std::size_t task) {
  rethrow_error_json(outcome.at("error"), "an MPI rank's result", fmt::format("/{}/error", task));
}

nlohmann::ordered_json outcome_error(std::exception_ptr error) {
  return nlohmann::ordered_json{{"error", error_to_json(error)}};
}

}  // namespace internal
}  // namespace zx::experiments
