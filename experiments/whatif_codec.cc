#include "experiments/whatif_codec.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"
#include "models/collectives/plan.h"
#include "sim/time.h"
#include "experiments/interrupt.h"

namespace zx::experiments {
namespace {

using ordered_json = nlohmann::ordered_json;
using json = nlohmann::json;

ordered_json number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

ordered_json duration(sim::Duration d) { return d.count_ps(); }

// Reads the members of one object, each checked, naming the file and the
// member's JSON pointer when it is missing or of the wrong type.
class Reader {
 public:
  Reader(const json& object, const std::string& source, std::string where)
      : object_(object), source_(source), where_(std::move(where)) {
    if (!object_.is_object()) fail("", "expected an object");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(Diagnostic{source_, key.empty() ? where_ : where_ + "/" + key, message});
  }
  const json& member(const std::string& key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(key, "missing");
    return *it;
  }
  double real(const std::string& key) const {
    const json& v = member(key);
    if (v.is_number()) return v.get<double>();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    fail(key, fmt::format("expected a number, got {}", v.dump()));
  }
  std::int64_t integer(const std::string& key) const {
    const json& v = member(key);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(key, fmt::format("expected a whole number below 2^63, got {}", v.dump()));
    }
    if (!v.is_number_integer()) fail(key, fmt::format("expected a whole number, got {}", v.dump()));
    return v.get<std::int64_t>();
  }
  int small(const std::string& key) const {
    const std::int64_t v = integer(key);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      fail(key, fmt::format("expected a whole number of at most 10 digits, got {}", v));
    }
    return static_cast<int>(v);
  }
  std::uint64_t counter(const std::string& key) const {
    const json& v = member(key);
    if (!v.is_number_unsigned()) fail(key, fmt::format("expected a whole number >= 0, got {}", v.dump()));
    return v.get<std::uint64_t>();
  }
  bool boolean(const std::string& key) const {
    const json& v = member(key);
    if (!v.is_boolean()) fail(key, fmt::format("expected true or false, got {}", v.dump()));
    return v.get<bool>();
  }
  std::string text(const std::string& key) const {
    const json& v = member(key);
    if (!v.is_string()) fail(key, fmt::format("expected a string, got {}", v.dump()));
    return v.get<std::string>();
  }
  const json& array(const std::string& key) const {
    const json& v = member(key);
    if (!v.is_array()) fail(key, fmt::format("expected an array, got {}", v.dump()));
    return v;
  }
  Reader object(const std::string& key) const { return Reader(member(key), source_, where_ + "/" + key); }
  Reader element(const std::string& key, std::size_t i) const {
    return Reader(array(key)[i], source_, fmt::format("{}/{}/{}", where_, key, i));
  }
  std::optional<sim::Duration> maybe_duration(const std::string& key) const {
    if (member(key).is_null()) return std::nullopt;
    return sim::Duration::ps(integer(key));
  }

 private:
  const json& object_;
  const std::string& source_;
  std::string where_;
};

ordered_json candidates_to_json(const std::vector<models::AutoChoice::Candidate>& list) {
  ordered_json candidates = ordered_json::array();
  for (const models::AutoChoice::Candidate& k : list) {
    candidates.push_back({{"algorithm", k.algorithm},
                          {"time_ps", k.time ? ordered_json(k.time->count_ps()) : ordered_json(nullptr)},
                          {"refused", k.refused},
                          {"slower_than_ps", k.slower_than ? ordered_json(k.slower_than->count_ps()) : ordered_json(nullptr)}});
  }
  return candidates;
}

std::vector<models::AutoChoice::Candidate> candidates_from_json(const Reader& c, const std::string& key) {
  std::vector<models::AutoChoice::Candidate> out;
  const json& candidates = c.array(key);
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    const Reader k = c.element(key, j);
    out.push_back(models::AutoChoice::Candidate{.algorithm = k.text("algorithm"),
                                                .time = k.maybe_duration("time_ps"),
                                                .refused = k.text("refused"),
                                                .slower_than = k.maybe_duration("slower_than_ps")});
  }
  return out;
}

ordered_json choices_to_json(const std::vector<models::AutoChoice>& choices) {
  ordered_json out = ordered_json::array();
  for (const models::AutoChoice& c : choices) {
    ordered_json candidates = candidates_to_json(c.candidates);
    out.push_back({{"kind", std::string(models::collectives::to_string(c.kind))},
                   {"ranks", c.ranks},
                   {"bytes_per_rank", c.bytes_per_rank.count()},
                   {"dtype", std::string(models::collectives::to_string(c.dtype))},
                   {"chosen", c.chosen},
                   {"candidates", std::move(candidates)}});
  }
  return out;
}

std::vector<models::AutoChoice> choices_from_json(const Reader& r, const std::string& key) {
  std::vector<models::AutoChoice> out;
  const json& list = r.array(key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Reader c = r.element(key, i);
    models::AutoChoice choice;
    const auto kind = models::collectives::parse_collective_kind(c.text("kind"));
    if (!kind) c.fail("kind", "expected a collective kind, got '" + c.text("kind") + "'");
    choice.kind = *kind;
    choice.ranks = c.small("ranks");
    choice.bytes_per_rank = sim::Bytes(c.integer("bytes_per_rank"));
    const auto dtype = models::collectives::parse_data_type(c.text("dtype"));
    if (!dtype) c.fail("dtype", "expected a data type, got '" + c.text("dtype") + "'");
    choice.dtype = *dtype;
    choice.chosen = c.text("chosen");
    choice.candidates = candidates_from_json(c, "candidates");
    out.push_back(std::move(choice));
  }
  return out;
}

}  // namespace

ordered_json encode_real(double x) { return number(x); }

double decode_real(const json& v, const std::string& source, const std::string& where) {
  if (v.is_number()) return v.get<double>();
  if (v == "inf") return std::numeric_limits<double>::infinity();
  if (v == "-inf") return -std::numeric_limits<double>::infinity();
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw InputError(Diagnostic{source, where, fmt::format("expected a number, got {}", v.dump())});
}

ordered_json encode_auto_choices(const std::vector<models::AutoChoice>& choices) { return choices_to_json(choices); }

std::vector<models::AutoChoice> decode_auto_choices(const json& list, const std::string& source,
                                                    const std::string& where) {
  const std::string parent = where.substr(0, where.rfind('/'));
  const std::string key = where.substr(where.rfind('/') + 1);
  const json wrapper = {{key, list}};
  return choices_from_json(Reader(wrapper, source, parent), key);
}

ordered_json candidates_json(const std::vector<models::AutoChoice::Candidate>& candidates) {
  ordered_json out = ordered_json::array();
  for (const models::AutoChoice::Candidate& k : candidates) {
    ordered_json one;
    one["algorithm"] = k.algorithm;
    if (k.time) {
      one["time_us"] = k.time->to_seconds() * 1e6;
    } else if (k.slower_than) {
      one["slower_than_us"] = k.slower_than->to_seconds() * 1e6;
    } else {
      one["refused"] = k.refused;
    }
    out.push_back(std::move(one));
  }
  return out;
}

ordered_json encode_candidates(const std::vector<models::AutoChoice::Candidate>& candidates) {
  return candidates_to_json(candidates);
}

std::vector<models::AutoChoice::Candidate> decode_candidates(const json& list, const std::string& source,
                                                             const std::string& where) {
  const std::string parent = where.substr(0, where.rfind('/'));
  const std::string key = where.substr(where.rfind('/') + 1);
  const json wrapper = {{key, list}};
  return candidates_from_json(Reader(wrapper, source, parent), key);
}

ordered_json whatif_point_to_json(const WhatIfPoint& p) {
  const Breakdown& b = p.breakdown;
  return ordered_json{
      {"variant", p.variant},
      {"nodes", p.nodes},
      {"gpus", p.gpus},
      {"gpu", p.gpu},
      {"communication",
       {{"launch_ps", duration(p.communication.launch)},
        {"transfer_ps", duration(p.communication.transfer)},
        {"network_transfer_ps", duration(p.communication.network_transfer)},
        {"peer_gap_ps", duration(p.communication.peer_gap)}}},
      {"global_batch", p.global_batch},
      {"fits", p.fits},
      {"reason", p.reason},
      {"iteration_time_ms", number(p.iteration_time_ms)},
      {"samples_per_s", number(p.samples_per_s)},
      {"scaling_efficiency", number(p.scaling_efficiency)},
      {"breakdown",
       {{"compute_ms", number(b.compute_ms)},
        {"exposed_all_to_all_ms", number(b.exposed_all_to_all_ms)},
        {"exposed_all_reduce_ms", number(b.exposed_all_reduce_ms)},
        {"other_ms", number(b.other_ms)},
        {"overlapped_communication_ms", number(b.overlapped_communication_ms)},
        {"compute_slowed_by_communication_ms", number(b.compute_slowed_by_communication_ms)}}},
      {"bottleneck", p.bottleneck},
      {"load_imbalance", number(p.load_imbalance)},
      {"balance_split_tables", p.balance_split_tables},
      {"busiest_gpu_rank", p.busiest_gpu_rank},
      {"busiest_gpu_compute_ms", number(p.busiest_gpu_compute_ms)},
      {"search_simulations", p.search_simulations},
      {"search_start_iteration_time_ms", number(p.search_start_iteration_time_ms)},
      {"search_moves", p.search_moves},
      {"host_memory_tables", p.host_memory_tables},
      {"max_hbm_gbyte", number(p.max_hbm_gbyte)},
      {"max_iteration_hbm_gbyte", number(p.max_iteration_hbm_gbyte)},
      {"hbm_reserve_fraction", number(p.hbm_reserve_fraction)},
      {"cache_hit_rate", number(p.cache_hit_rate)},
      {"auto_choices", choices_to_json(p.auto_choices)},
      {"nccl_choices", choices_to_json(p.nccl_choices)},
      {"wall_seconds", number(p.wall_seconds)},
      {"fingerprint", p.fingerprint},
      {"events", p.events},
      {"flows", p.flows},
      {"resolves", p.resolves},
      {"resolved_flows", p.resolved_flows},
  };
}

WhatIfPoint whatif_point_from_json(const json& doc, const std::string& source, const std::string& where) {
  const Reader r(doc, source, where);
  WhatIfPoint p;
  p.variant = r.small("variant");
  p.nodes = r.small("nodes");
  p.gpus = r.small("gpus");
  p.gpu = r.text("gpu");
  const Reader c = r.object("communication");
  p.communication.launch = sim::Duration::ps(c.integer("launch_ps"));
  p.communication.transfer = sim::Duration::ps(c.integer("transfer_ps"));
  p.communication.network_transfer = sim::Duration::ps(c.integer("network_transfer_ps"));
  p.communication.peer_gap = sim::Duration::ps(c.integer("peer_gap_ps"));
  p.global_batch = r.integer("global_batch");
  p.fits = r.boolean("fits");
  p.reason = r.text("reason");
  p.iteration_time_ms = r.real("iteration_time_ms");
  p.samples_per_s = r.real("samples_per_s");
  p.scaling_efficiency = r.real("scaling_efficiency");
  const Reader b = r.object("breakdown");
  p.breakdown.compute_ms = b.real("compute_ms");
  p.breakdown.exposed_all_to_all_ms = b.real("exposed_all_to_all_ms");
  p.breakdown.exposed_all_reduce_ms = b.real("exposed_all_reduce_ms");
  p.breakdown.other_ms = b.real("other_ms");
  p.breakdown.overlapped_communication_ms = b.real("overlapped_communication_ms");
  p.breakdown.compute_slowed_by_communication_ms = b.real("compute_slowed_by_communication_ms");
  p.bottleneck = r.text("bottleneck");
  p.load_imbalance = r.real("load_imbalance");
  p.balance_split_tables = r.integer("balance_split_tables");
  p.busiest_gpu_rank = r.small("busiest_gpu_rank");
  p.busiest_gpu_compute_ms = r.real("busiest_gpu_compute_ms");
  p.search_simulations = r.small("search_simulations");
  p.search_start_iteration_time_ms = r.real("search_start_iteration_time_ms");
  p.search_moves = r.small("search_moves");
  p.host_memory_tables = r.integer("host_memory_tables");
  p.max_hbm_gbyte = r.real("max_hbm_gbyte");
  p.max_iteration_hbm_gbyte = r.real("max_iteration_hbm_gbyte");
  p.hbm_reserve_fraction = r.real("hbm_reserve_fraction");
  p.cache_hit_rate = r.real("cache_hit_rate");
  p.auto_choices = choices_from_json(r, "auto_choices");
  p.nccl_choices = choices_from_json(r, "nccl_choices");
  p.wall_seconds = r.real("wall_seconds");
  p.fingerprint = r.counter("fingerprint");
  p.events = r.counter("events");
  p.flows = r.counter("flows");
  p.resolves = r.counter("resolves");
  p.resolved_flows = r.counter("resolved_flows");
  return p;
}

ordered_json error_to_json(std::exception_ptr error) {
  ZX_CHECK(error != nullptr, "an error to encode");
  try {
    std::rethrow_exception(error);
  } catch (const InputError& x) {
    ordered_json diagnostics = ordered_json::array();
    for (const Diagnostic& d : x.diagnostics()) {
      diagnostics.push_back({{"source", d.source}, {"location", d.location}, {"message", d.message}});
    }
    return {{"kind", "input"}, {"diagnostics", std::move(diagnostics)}};
  } catch (const Interrupted&) {
    return {{"kind", "interrupted"}};
  } catch (const sim::RangeError& x) {
    return {{"kind", "range"}, {"message", x.describe()}};
  } catch (const InvariantError& x) {
    return {{"kind", "invariant"}, {"message", x.what()}};
  } catch (const std::exception& x) {
    return {{"kind", "other"}, {"message", x.what()}};
  } catch (...) {
    return {{"kind", "other"}, {"message", "unknown exception"}};
  }
}

void rethrow_error_json(const json& error, const std::string& source, const std::string& where) {
  const Reader e(error, source, where);
  const std::string kind = e.text("kind");
  if (kind == "input") {
    std::vector<Diagnostic> diagnostics;
    const json& list = e.array("diagnostics");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Reader d = e.element("diagnostics", i);
      diagnostics.push_back(Diagnostic{d.text("source"), d.text("location"), d.text("message")});
    }
    if (diagnostics.empty()) e.fail("diagnostics", "expected at least one diagnostic");
    throw InputError(std::move(diagnostics));
  }
  if (kind == "interrupted") throw Interrupted();
  if (kind == "range") throw sim::UnitRangeError(e.text("message"));
  if (kind == "invariant") throw InvariantError(e.text("message"));
  if (kind == "other") throw std::runtime_error(e.text("message"));
  e.fail("kind", "expected input, interrupted, range, invariant or other, got '" + kind + "'");
}

ordered_json task_outcome_to_json(const WhatIfPoint* point, std::exception_ptr error) {
  if (!error) {
    ZX_CHECK(point != nullptr, "an outcome is a point or an error");
    return ordered_json{{"point", whatif_point_to_json(*point)}};
  }
  return ordered_json{{"error", error_to_json(error)}};
}

WhatIfPoint point_or_rethrow(const json& outcome, const std::string& source, const std::string& where) {
  const Reader r(outcome, source, where);
  if (outcome.contains("point")) return whatif_point_from_json(r.member("point"), source, where + "/point");
  rethrow_error_json(r.member("error"), source, where + "/error");
}

}  // namespace zx::experiments
