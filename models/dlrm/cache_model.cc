#include "models/dlrm/cache_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/check.h"

namespace zx::models {
namespace {

constexpr double kExactRows = 4096;  // rows summed one by one
constexpr int kIntervals = 4096;     // Simpson intervals over the rest (even)

// The rows 1 .. `rows` as weighted points: sum over rows of f(k) ~= sum of
// weight_i f(x_i). Rows up to kExactRows are their own points (weight 1);
// the rest are unit intervals, [kExactRows + 0.5, rows + 0.5], integrated by
// Simpson's rule in u = ln x (f(x) dx = f(e^u) e^u du, smooth for the
// power laws summed here).
struct Rows {
  std::vector<double> x;
  std::vector<double> weight;
};

Rows rows_as_points(double rows) {
  Rows r;
  const double n = std::floor(rows);
  const double exact = std::min(n, kExactRows);
  for (double k = 1; k <= exact; ++k) {
    r.x.push_back(k);
    r.weight.push_back(1.0);
  }
  if (n > exact) {
    const double a = std::log(exact + 0.5);
    const double b = std::log(n + 0.5);
    const double h = (b - a) / kIntervals;
    for (int i = 0; i <= kIntervals; ++i) {
      const double x = std::exp(a + h * i);
      const double simpson = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      r.x.push_back(x);
      r.weight.push_back(simpson * h / 3.0 * x);
    }
  }
  return r;
}

// Probabilities p_i = x_i^-alpha / H at the points, H over all rows.
std::vector<double> zipf_probabilities(const Rows& r, double alpha) {
  std::vector<double> p(r.x.size());
  double h = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = std::pow(r.x[i], -alpha);
    h += r.weight[i] * p[i];
  }
  for (double& v : p) v /= h;
  return p;
}

void check_arguments(double rows, double alpha) {
  ZX_CHECK(rows >= 1, "cache model: at least one row");
  ZX_CHECK(alpha >= 0 && alpha <= 10, "cache model: Zipf alpha in [0, 10]");
}

}  // namespace

double lru_hit_rate_zipf(double rows, double cached_rows, double alpha) {
  check_arguments(rows, alpha);
  if (cached_rows <= 0) return 0.0;
  if (cached_rows >= std::floor(rows)) return 1.0;
  const Rows r = rows_as_points(rows);
  const std::vector<double> p = zipf_probabilities(r, alpha);
  // Rows expected in the cache after T lookups: increasing in T, from 0 to
  // all rows; T >= cached_rows because 1 - e^-pT <= pT.
  const auto occupancy = [&](double t) {
    double s = 0;
    for (std::size_t i = 0; i < p.size(); ++i) s += r.weight[i] * -std::expm1(-p[i] * t);
    return s;
  };
  double lo = cached_rows;
  double hi = 2 * cached_rows;
  while (occupancy(hi) < cached_rows) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && hi > lo * (1 + 1e-13); ++i) {
    const double mid = std::sqrt(lo * hi);
    (occupancy(mid) < cached_rows ? lo : hi) = mid;
  }
  const double t = std::sqrt(lo * hi);
  double hit = 0;
  for (std::size_t i = 0; i < p.size(); ++i) hit += r.weight[i] * p[i] * -std::expm1(-p[i] * t);
  return std::clamp(hit, 0.0, 1.0);
}

double top_rows_hit_rate_zipf(double rows, double cached_rows, double alpha) {
  check_arguments(rows, alpha);
  if (cached_rows <= 0) return 0.0;
  if (cached_rows >= std::floor(rows)) return 1.0;
  const Rows all = rows_as_points(rows);
  double h = 0;
  for (std::size_t i = 0; i < all.x.size(); ++i) h += all.weight[i] * std::pow(all.x[i], -alpha);
  const double whole = std::floor(cached_rows);
  double top = 0;
  if (whole >= 1) {
    const Rows hot = rows_as_points(whole);
    for (std::size_t i = 0; i < hot.x.size(); ++i) top += hot.weight[i] * std::pow(hot.x[i], -alpha);
  }
  top += (cached_rows - whole) * std::pow(whole + 1, -alpha);  // part of the next row
  return std::clamp(top / h, 0.0, 1.0);
}

}  // namespace zx::models
