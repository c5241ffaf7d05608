// File: kernels_ref/harness_util.h
//
// The host-side parts of the measurement harness that need no GPU, so they
// are tested in CI: order statistics of repeated timings, and one-line JSON
// records (the measurement file format in docs/calibration.md). Plain C++17,
// no dependencies: the GPU machine has no JSON library installed.

#ifndef ZIONSIM_KERNELS_REF_HARNESS_UTIL_H_
#define ZIONSIM_KERNELS_REF_HARNESS_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace kref {

/// Median and 10th/90th percentiles of repeated timings. Percentiles use
/// linear interpolation between order statistics (numpy's default), so
/// the median of an even count is the mean of the middle two.
struct TimingStats {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double min = 0;
  double max = 0;
  int count = 0;
};
/// Throws std::invalid_argument on an empty sample.
TimingStats timing_stats(std::vector<double> samples);
/// The q-quantile (0 <= q <= 1) of sorted samples, interpolated.
double quantile_sorted(const std::vector<double>& sorted, double q);

/// `text` as a JSON string literal, quotes included (RFC 8259 escapes).
std::string json_quote(const std::string& text);
/// A finite double printed so it reads back to the same value (%.17g);
/// NaN and infinity, which JSON cannot hold, become null.
std::string json_number(double value);

/// Builds one JSON object on one line, keys in insertion order.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value);
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, std::int64_t value);
  JsonObject& add(const std::string& key, int value);
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, const JsonObject& value);
  std::string str() const;

 private:
  JsonObject& raw(const std::string& key, const std::string& json);
  std::string body_;
};

}  // namespace kref

#endif  // ZIONSIM_KERNELS_REF_HARNESS_UTIL_H_
