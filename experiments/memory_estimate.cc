#include "experiments/memory_estimate.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace zx::experiments {
namespace {

// Per ordered pair of GPUs: the largest of the measured 1,130 to 1,260 bytes
// (experiments/memory_estimate.h), rounded up; and what a run takes besides (the
// binary, the model, the topology: 16 MiB in all at 64 GPUs).
constexpr double kBytesPerGpuPair = 1300;
constexpr double kBaseBytes = 32.0 * 1024 * 1024;
// --fidelity analytical: 158 / 314 and 553 / 1,208 MiB at 512 and 1,024 GPUs.
constexpr double kAnalyticalShare = 0.5;
// --fidelity linkshare, model A, `zionsim whatif --model dlrm-a --nodes N
// --fidelity linkshare`, one size a run, 2026-12-07: 111 MiB at 1,024 GPUs,
// 312 at 2,048, 1,002 at 4,096 and 3,795 at 8,192. 78 bytes a pair over 48
// MiB covers each, at most 1.33 times over (8,192).
constexpr double kLinkShareBytesPerGpuPair = 78;
constexpr double kLinkShareBaseBytes = 48.0 * 1024 * 1024;
// Every flow's record kept (experiments/memory_estimate.h): on top of the estimate
// for the flows in flight (whose 1,300 bytes per pair cover the kept flows'
// 3.1 x 380), 2,140 flows x 380 bytes per GPU, rounded up. That puts the
// measured 269, 682 and 1,977 MiB (256, 512, 1,024 GPUs) at 338, 806 and
// 2,231 MiB.
constexpr double kKeptBytesPerGpu = 900.0 * 1024;

std::optional<std::int64_t> parse_int(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

NetworkMemory network_memory(std::string_view fidelity) {
  if (fidelity == "analytical") return NetworkMemory::kAnalytical;
  if (fidelity == "linkshare") return NetworkMemory::kLinkShare;
  return NetworkMemory::kFlows;
}

std::string per_pair_text(NetworkMemory memory) {
  switch (memory) {
    case NetworkMemory::kFlows:
      return "about 1.3 KB per pair of GPUs for the all-to-alls' flows in flight";
    case NetworkMemory::kAnalytical:
      return "about 650 bytes per pair of GPUs for the all-to-alls' flows in flight";
    case NetworkMemory::kLinkShare:
      return "about 80 bytes per pair of GPUs for the all-to-alls' byte matrices";
  }
  return {};
}

std::int64_t estimated_simulation_bytes(std::int64_t gpus, NetworkMemory memory, bool keep_flows) {
  const double pairs = static_cast<double>(gpus) * static_cast<double>(std::max<std::int64_t>(0, gpus - 1));
  if (keep_flows) {  // the records do not shrink with the fidelity
    return static_cast<std::int64_t>(kBaseBytes + kBytesPerGpuPair * pairs +
                                     kKeptBytesPerGpu * static_cast<double>(gpus));
  }
  if (memory == NetworkMemory::kLinkShare) {
    return static_cast<std::int64_t>(kLinkShareBaseBytes + kLinkShareBytesPerGpuPair * pairs);
  }
  const double per_pair = kBytesPerGpuPair * (memory == NetworkMemory::kAnalytical ? kAnalyticalShare : 1.0);
  return static_cast<std::int64_t>(kBaseBytes + per_pair * pairs);
}

std::string gib_text(std::int64_t bytes) {
  const double g = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  return g < 10 ? fmt::format("{:.1f} GiB", g) : fmt::format("{:.0f} GiB", g);
}

std::optional<std::int64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  for (std::size_t start = 0; start < meminfo.size();) {
    std::size_t end = meminfo.find('\n', start);
    if (end == std::string_view::npos) end = meminfo.size();
    std::string_view line = meminfo.substr(start, end - start);
    start = end + 1;
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    if (!line.ends_with(" kB")) return std::nullopt;
    line.remove_suffix(3);
    const std::optional<std::int64_t> kib = parse_int(line);
    if (!kib) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_cgroup_headroom(std::string_view max, std::string_view current) {
  const std::optional<std::int64_t> limit = parse_int(max);
  const std::optional<std::int64_t> used = parse_int(current);
  if (!limit || !used) return std::nullopt;
  return std::max<std::int64_t>(0, *limit - *used);
}

std::optional<std::int64_t> available_memory_bytes() {
  std::optional<std::int64_t> available = parse_mem_available(read_text("/proc/meminfo"));
  const std::optional<std::int64_t> cgroup =
      parse_cgroup_headroom(read_text("/sys/fs/cgroup/memory.max"), read_text("/sys/fs/cgroup/memory.current"));
  if (cgroup) available = available ? std::min(*available, *cgroup) : *cgroup;
  return available;
}

}  // namespace zx::experiments
