#include "workloads/flow_set.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "base/error.h"
#include "base/json_reader.h"

namespace zx::workloads {

std::vector<std::string> flow_pattern_names() { return {"all_to_all", "incast", "permutation", "ring"}; }

std::vector<FlowSpec> make_flow_pattern(std::string_view pattern, int num_gpus, sim::Bytes size,
                                        std::uint64_t seed) {
  const std::vector<std::string> names = flow_pattern_names();
  if (std::find(names.begin(), names.end(), pattern) == names.end()) {
    std::string message = fmt::format("unknown traffic pattern '{}'", pattern);
    if (auto guess = json::closest_match(pattern, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
    throw InputError(Diagnostic{"--pattern", "", message + fmt::format("; valid: {}", fmt::join(names, ", "))});
  }
  if (num_gpus < 2) {
    throw InputError(Diagnostic{"--pattern", "", fmt::format("a traffic pattern needs at least 2 GPUs, got {}", num_gpus)});
  }
  if (size.count() < 0) throw InputError(Diagnostic{"--size-bytes", "", "expected a size >= 0"});
  std::vector<FlowSpec> flows;
  const auto add = [&](int src, int dst) {
    flows.push_back({static_cast<std::int64_t>(flows.size()), src, dst, size, sim::TimePoint::zero()});
  };
  if (pattern == "all_to_all") {
    flows.reserve(static_cast<std::size_t>(num_gpus) * static_cast<std::size_t>(num_gpus - 1));
    for (int s = 0; s < num_gpus; ++s) {
      for (int d = 0; d < num_gpus; ++d) {
        if (s != d) add(s, d);
      }
    }
  } else if (pattern == "incast") {
    for (int s = 1; s < num_gpus; ++s) add(s, 0);
  } else if (pattern == "ring") {
    for (int s = 0; s < num_gpus; ++s) add(s, (s + 1) % num_gpus);
  } else {
    // A random derangement (no GPU sends to itself) from a fixed seed:
    // shuffle, then rotate any fixed point away (Sattolo's cycle would also do).
    std::vector<int> perm(static_cast<std::size_t>(num_gpus));
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937_64 rng(seed);
    for (int i = num_gpus - 1; i > 0; --i) {  // Sattolo: a single cycle, so no fixed point
      std::uniform_int_distribution<int> pick(0, i - 1);
      std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(pick(rng))]);
    }
    for (int s = 0; s < num_gpus; ++s) add(s, perm[static_cast<std::size_t>(s)]);
  }
  return flows;
}

std::vector<FlowSpec> parse_flow_file(std::string_view text, const std::string& source, int num_gpus) {
  json::Document doc = json::Document::parse(text, source);
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {1});
  root.allow("description");
  std::vector<FlowSpec> flows;
  std::map<std::int64_t, std::size_t> ids;
  root.require("flows");
  if (auto list = root.array("flows")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader f = list->object(i);
      FlowSpec spec;
      spec.id = static_cast<std::int64_t>(i);
      f.read_int("id", spec.id, json::IntRange{0, std::int64_t{1} << 53});
      for (const char* key : {"src_rank", "dst_rank", "size_bytes"}) f.require(key);
      const json::IntRange ranks{0, std::max(0, num_gpus - 1)};
      f.read_int("src_rank", spec.src_rank, ranks);
      f.read_int("dst_rank", spec.dst_rank, ranks);
      std::int64_t size = 0;
      if (f.read_int("size_bytes", size, json::IntRange{0, std::int64_t{1} << 50})) spec.size = sim::Bytes(size);
      double start_ns = 0;
      if (f.read_number("start_ns", start_ns, json::NumberRange{0.0, 1e15})) {
        spec.start = sim::TimePoint::zero() + sim::Duration::from_ns_ceil(start_ns);
      }
      f.finish();
      if (auto [it, fresh] = ids.emplace(spec.id, i); !fresh) {
        f.error("id", fmt::format("duplicate flow id {} (first at /flows/{})", spec.id, it->second));
      }
      flows.push_back(spec);
    }
  }
  root.finish();
  doc.throw_if_errors();
  return flows;
}

std::vector<FlowSpec> load_flow_file(const std::string& path, int num_gpus) {
  json::Document doc = json::Document::load_file(path);
  return parse_flow_file(doc.value().dump(), path, num_gpus);
}

}  // namespace zx::workloads
