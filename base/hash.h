// File: base/hash.h
//
// FNV-1a, 64 bits: the stable hash of identities kept in files (a sweep's
// command, a kept point's key, a scenario). Stable across builds and
// machines, which std::hash is not; not for adversarial keys.

#ifndef ZIONSIM_BASE_HASH_H_
#define ZIONSIM_BASE_HASH_H_

#include <cstdint>
#include <string_view>

namespace zx {

/// FNV-1a (offset basis 14695981039346656037, prime 1099511628211; Fowler,
/// Noll and Vo, IETF draft-eastlake-fnv) of `data`, continuing from `h`.
constexpr std::uint64_t fnv1a_64(std::string_view data, std::uint64_t h = 14695981039346656037ull) {
  for (const char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace zx

#endif  // ZIONSIM_BASE_HASH_H_
