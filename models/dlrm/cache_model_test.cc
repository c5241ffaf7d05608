// Tests of the HBM cache's hit rates: closed forms (uniform lookups, a
// cache as large as the table), the best static cache as an upper bound,
// the quadrature against sums row by row, and Che's approximation against an
// LRU cache simulated on Zipf lookups from a fixed seed.

#include "models/dlrm/cache_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <random>
#include <unordered_map>
#include <vector>

namespace zx::models {
namespace {

// Uniform lookups: any cache of C of N rows hits C / N (Che is exact there).
TEST(CacheModelTest, UniformLookupsHitTheCachedShare) {
  for (const double rows : {1000.0, 2.08e6, 7.32e8}) {
    for (const double share : {0.01, 0.05, 0.5}) {
      EXPECT_NEAR(lru_hit_rate_zipf(rows, share * rows, 0.0), share, 1e-6) << rows << " " << share;
      EXPECT_NEAR(top_rows_hit_rate_zipf(rows, share * rows, 0.0), share, 1e-6) << rows << " " << share;
    }
  }
  EXPECT_EQ(lru_hit_rate_zipf(1000, 1000, 1.2), 1.0);
  EXPECT_EQ(lru_hit_rate_zipf(1000, 0, 1.2), 0.0);
  EXPECT_EQ(top_rows_hit_rate_zipf(1000, 2000, 0.5), 1.0);
}

// More cache or more skew never lowers the hit rate, and no cache beats the
// hottest rows held for good.
TEST(CacheModelTest, MonotoneAndBelowTheBestStaticCache) {
  const double rows = 5.7e6;  // a row-wise shard of a model F table on 128 GPUs
  double previous = 0;
  for (const double share : {0.001, 0.01, 0.05, 0.2, 0.8}) {
    const double hit = lru_hit_rate_zipf(rows, share * rows, 1.05);
    EXPECT_GT(hit, previous) << share;
    EXPECT_LE(hit, top_rows_hit_rate_zipf(rows, share * rows, 1.05) + 1e-12) << share;
    previous = hit;
  }
  previous = 0;
  for (const double alpha : {0.0, 0.5, 0.9, 1.1, 1.5, 2.0}) {
    const double hit = lru_hit_rate_zipf(rows, 0.05 * rows, alpha);
    EXPECT_GT(hit, previous) << alpha;
    previous = hit;
  }
}

// The top rows' share is a partial sum of k^-alpha: against the sum row by
// row, for tables past the exact prefix.
TEST(CacheModelTest, QuadratureMatchesTheSumRowByRow) {
  for (const double alpha : {0.6, 1.0, 1.3}) {
    const std::int64_t rows = 300'000;
    const std::int64_t cached = 15'000;
    double all = 0;
    double top = 0;
    for (std::int64_t k = rows; k >= 1; --k) {  // small terms first
      const double p = std::pow(static_cast<double>(k), -alpha);
      all += p;
      if (k <= cached) top += p;
    }
    EXPECT_NEAR(top_rows_hit_rate_zipf(static_cast<double>(rows), static_cast<double>(cached), alpha), top / all,
                1e-7)
        << alpha;
  }
}

// An LRU cache of 200 of 4,000 rows, 2 million Zipf lookups (inverse CDF,
// mt19937_64 seed 7): Che's approximation within 0.003 of the simulated rate (it was 4e-4 off at most).
TEST(CacheModelTest, CheMatchesASimulatedLruCache) {
  const int rows = 4000;
  const std::size_t capacity = 200;
  for (const double alpha : {0.8, 1.0, 1.2}) {
    std::vector<double> cdf(rows);
    double s = 0;
    for (int k = 0; k < rows; ++k) cdf[static_cast<std::size_t>(k)] = s += std::pow(k + 1.0, -alpha);
    for (double& c : cdf) c /= s;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::list<int> order;  // most recent first
    std::unordered_map<int, std::list<int>::iterator> where;
    std::int64_t hits = 0;
    const std::int64_t warmup = 200'000;
    const std::int64_t lookups = 2'000'000;
    for (std::int64_t i = 0; i < warmup + lookups; ++i) {
      const int row = static_cast<int>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
      if (auto it = where.find(row); it != where.end()) {
        if (i >= warmup) ++hits;
        order.splice(order.begin(), order, it->second);
      } else {
        order.push_front(row);
        where[row] = order.begin();
        if (order.size() > capacity) {
          where.erase(order.back());
          order.pop_back();
        }
      }
    }
    const double simulated = static_cast<double>(hits) / static_cast<double>(lookups);
    EXPECT_NEAR(lru_hit_rate_zipf(rows, static_cast<double>(capacity), alpha), simulated, 0.003) << alpha;
  }
}

}  // namespace
}  // namespace zx::models
