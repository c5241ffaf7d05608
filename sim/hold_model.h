// File: sim/hold_model.h
//
// The hold model, the standard workload for the raw speed of an event
// engine, exactly as ../shared/BENCHMARKS.md defines it: P events pending;
// every executed event folds `now` into a hash and schedules one new event at
// now + d, d ~ Exp(mean 1 us) in integer picoseconds (at least 1), drawn from
// one std::mt19937_64 seeded with 20240601. The executed time sequence does
// not depend on tie-breaking, so any correct engine reaches the same final
// time and hash; kHoldReferences lists them. Used by the engine benchmark and
// by the engine's tests.

#ifndef ZIONSIM_SIM_HOLD_MODEL_H_
#define ZIONSIM_SIM_HOLD_MODEL_H_

#include <cmath>
#include <cstdint>
#include <random>

namespace zx::sim::hold {

inline constexpr std::uint64_t kSeed = 20240601;
inline constexpr double kMeanDelayPs = 1'000'000.0;  // 1 us
inline constexpr std::uint64_t kHashBasis = 0xcbf29ce484222325ULL;
inline constexpr std::uint64_t kHashPrime = 0x100000001b3ULL;

/// One delay draw: u = (x >> 11) * 2^-53, d = max(1, trunc(-MEAN * log1p(-u))).
inline std::int64_t draw_delay_ps(std::mt19937_64& rng) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  const auto d = static_cast<std::int64_t>(-kMeanDelayPs * std::log1p(-u));
  return d < 1 ? 1 : d;
}

/// The per-event "trivial work" of the workload.
inline std::uint64_t fold(std::uint64_t hash, std::int64_t now_ps) {
  return (hash ^ static_cast<std::uint64_t>(now_ps)) * kHashPrime;
}

struct Reference {
  std::int64_t pending;
  std::int64_t events;
  std::int64_t final_time_ps;
  std::uint64_t hash;
};

/// Reference results from ../shared/BENCHMARKS.md (glibc 2.36 log1p).
inline constexpr Reference kHoldReferences[] = {
    {1'000, 10'000'000, 10006862479, 0xdf2f5349fa8391a3ULL},
    {1'000'000, 5'000'000, 5003324, 0x2c0288586f29ea92ULL},
    {1'000'000, 200'000, 200646, 0x1918b8b97e8da46dULL},
    {1'000, 100'000, 99943045, 0xf8dda7b41caed9c5ULL},
    {1'000'000, 50'000, 50240, 0x18b710ff4220977eULL},
};

}  // namespace zx::sim::hold

#endif  // ZIONSIM_SIM_HOLD_MODEL_H_
