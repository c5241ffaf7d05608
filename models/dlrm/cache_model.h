// File: models/dlrm/cache_model.h
//
// Hit rates of the HBM cache in front of a host-memory embedding table, when
// its lookups are independent draws from a Zipf distribution over its rows:
// row k (k = 1 .. rows, hottest first) is looked up with probability
// k^-alpha / H, H = sum of j^-alpha over all rows. alpha = 0 is uniform;
// FBGEMM's TBE benchmark and kernels_ref draw indices the same way
// (`zipf_alpha`).
//
// LRU (FBGEMM's default cache algorithm) uses Che's approximation (H. Che,
// Y. Tung, Z. Wang, "Hierarchical Web caching systems: modeling, design and
// experimental results", IEEE JSAC 20(7), 2002): a row stays in the cache
// for a characteristic time T after its last lookup, where T solves
//   sum_k (1 - exp(-p_k T)) = cached rows,
// and the hit rate is sum_k p_k (1 - exp(-p_k T)). It is exact in the
// uniform case and within about a percent of a simulated LRU for Zipf
// popularity (C. Fricker, P. Robert, J. Roberts, "A versatile and accurate
// approximation for LRU cache performance", ITC 24, 2012; the test checks it
// against a simulated LRU).
//
// Sums over up to billions of rows are exact for the first 4,096 rows and
// a Simpson quadrature in log k over the rest (rows as unit intervals), so a
// call costs the same for a thousand rows or a billion.

#ifndef ZIONSIM_MODELS_DLRM_CACHE_MODEL_H_
#define ZIONSIM_MODELS_DLRM_CACHE_MODEL_H_

namespace zx::models {

/// Hit rate of an LRU cache of `cached_rows` rows in front of `rows` rows
/// looked up as Zipf(alpha), by Che's approximation. rows >= 1, alpha in
/// [0, 10]; cached_rows <= 0 gives 0, cached_rows >= rows gives 1.
double lru_hit_rate_zipf(double rows, double cached_rows, double alpha);

/// Hit rate of the best static cache: the `cached_rows` hottest rows, sum of
/// their probabilities. No cache does better when lookups are independent;
/// an LFU cache approaches it.
double top_rows_hit_rate_zipf(double rows, double cached_rows, double alpha);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_DLRM_CACHE_MODEL_H_
