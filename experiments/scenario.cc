#include "experiments/scenario.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "base/hash.h"
#include "base/json_reader.h"
#include "models/execution/network_backend.h"

namespace zx::experiments {
namespace {

constexpr std::array kShardingKinds = {models::ShardingKind::kTableWise, models::ShardingKind::kRowWise,
                                       models::ShardingKind::kColumnWise, models::ShardingKind::kTableRowWise,
                                       models::ShardingKind::kDataParallel};
constexpr std::array kTableMemories = {models::TableMemory::kAuto, models::TableMemory::kHbm,
                                       models::TableMemory::kHost};

template <typename T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json override_json(const models::TableOverride& o) {
  return {{"table", o.table},
          {"kind", std::string(models::to_string(o.kind))},
          {"rank", o.rank},
          {"node", o.node},
          {"ranks", o.ranks},
          {"columns", o.columns},
          {"memory", std::string(models::to_string(o.memory))}};
}

template <typename Enum, std::size_t N>
std::vector<std::string> enum_names(const std::array<Enum, N>& values) {
  std::vector<std::string> out;
  for (Enum v : values) out.emplace_back(models::to_string(v));
  return out;
}

template <typename Enum, std::size_t N>
void read_named(json::ObjectReader& r, std::string_view key, Enum& out, const std::array<Enum, N>& values) {
  std::string name;
  if (!r.read_enum(key, name, enum_names(values))) return;
  for (Enum v : values) {
    if (models::to_string(v) == name) out = v;
  }
}

// A list of strings (each element checked), or nothing on a problem.
void read_strings(json::ObjectReader& r, std::string_view key, std::vector<std::string>& out) {
  std::optional<json::ArrayReader> a = r.array(key);
  if (!a || !a->valid()) return;
  std::vector<std::string> values(a->size());
  bool ok = true;
  for (std::size_t i = 0; i < a->size(); ++i) ok = a->read_string(i, values[i]) && ok;
  if (ok) out = std::move(values);
}

template <typename Int>
void read_ints(json::ArrayReader& a, std::vector<Int>& out, json::IntRange range) {
  std::vector<Int> values(a.size());
  bool ok = true;
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::int64_t x = 0;
    ok = a.read_int(i, x, range) && ok;
    values[i] = static_cast<Int>(x);
  }
  if (ok) out = std::move(values);
}

// A string -> string object.
void read_string_map(json::ObjectReader& r, std::string_view key, std::map<std::string, std::string>& out,
                     json::Diagnostics& d) {
  std::optional<json::ObjectReader> o = r.object(key);
  if (!o || !o->valid()) return;
  const nlohmann::json& value = *r.raw(key);
  std::map<std::string, std::string> values;
  for (const auto& [name, v] : value.items()) {
    std::string text;
    if (o->read_string(name, text)) values[name] = text;
  }
  o->finish();
  if (!d.has_errors()) out = std::move(values);
}

// null (absent), or an integer / number in range.
template <typename T, typename Range>
void read_optional(json::ObjectReader& r, std::string_view key, std::optional<T>& out, Range range) {
  const nlohmann::json* raw = r.raw(key);
  if (raw == nullptr) return;
  if (raw->is_null()) {
    out.reset();
    return;
  }
  T value{};
  bool ok = false;
  if constexpr (std::is_same_v<T, double>) {
    ok = r.read_number(key, value, range);
  } else {
    ok = r.read_int(key, value, range);
  }
  if (ok) out = value;
}

models::TableOverride read_override(json::ObjectReader o) {
  models::TableOverride out;
  o.require("table");
  o.read_int("table", out.table, {.min = 0});
  read_named(o, "kind", out.kind, kShardingKinds);
  o.read_int("rank", out.rank, {.min = -1, .max = 1 << 24});
  o.read_int("node", out.node, {.min = -1, .max = 1 << 24});
  if (std::optional<json::ArrayReader> a = o.array("ranks"); a && a->valid()) read_ints(*a, out.ranks, {.min = 0, .max = 1 << 24});
  if (std::optional<json::ArrayReader> a = o.array("columns"); a && a->valid()) read_ints(*a, out.columns, {.min = 1});
  read_named(o, "memory", out.memory, kTableMemories);
  o.finish();
  return out;
}

}  // namespace

std::map<std::string, std::string> dlrm_default_algorithms() {
  std::map<std::string, std::string> out;
  for (const char* kind : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
    out[kind] = models::default_collective_algorithms().at(kind);
  }
  return out;
}

const char* dense_optimizer_name(models::DenseOptimizer optimizer) {
  switch (optimizer) {
    case models::DenseOptimizer::kSgd: return "sgd";
    case models::DenseOptimizer::kAdagrad: return "adagrad";
    case models::DenseOptimizer::kAdam: return "adam";
  }
  return "adagrad";
}

std::optional<models::DenseOptimizer> parse_dense_optimizer_name(const std::string& name) {
  for (models::DenseOptimizer o :
       {models::DenseOptimizer::kSgd, models::DenseOptimizer::kAdagrad, models::DenseOptimizer::kAdam}) {
    if (name == dense_optimizer_name(o)) return o;
  }
  return std::nullopt;
}

nlohmann::ordered_json scenario_to_json(const Scenario& s) {
  nlohmann::ordered_json overrides = nlohmann::ordered_json::array();
  for (const models::TableOverride& o : s.sharding_overrides) overrides.push_back(override_json(o));
  nlohmann::ordered_json algorithms = nlohmann::ordered_json::object();
  for (const auto& [kind, name] : s.algorithms) algorithms[kind] = name;
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  for (const auto& [name, text] : s.algorithm_options) options[name] = text;
  nlohmann::ordered_json j{{"schema_version", kScenarioSchemaVersion},
          {"cluster",
           {{"name", s.cluster.cluster},
            {"nodes", optional_json(s.cluster.nodes)},
            {"set", s.cluster.overrides},
            {"degrade", s.cluster.degradations}}},
          {"nodes", s.nodes},
          {"model", s.model},
          {"batch_per_gpu", optional_json(s.batch_per_gpu)},
          {"global_batch", optional_json(s.global_batch)},
          {"sharding", s.sharding},
          {"search_budget", s.search_budget},
          {"sharding_overrides", std::move(overrides)},
          {"a2a_forward_dtype", s.a2a_forward_dtype},
          {"a2a_backward_dtype", s.a2a_backward_dtype},
          {"all_reduce_dtype", s.all_reduce_dtype},
          {"gpu", s.gpu},
          {"profile", s.profile},
          {"fidelity", s.fidelity},
          {"completion_quantum_ns", s.completion_quantum_ns},
          {"algorithms", std::move(algorithms)},
          {"plugins", s.plugins},
          {"schedules", s.schedules},
          {"algorithm_options", std::move(options)},
          {"fused_embeddings", s.fused_embeddings},
          {"pipeline_input", s.pipeline_input},
          {"prefetch_cache", s.prefetch_cache},
          {"cache_hit_rate", s.cache_hit_rate},
          {"index_zipf_alpha", optional_json(s.index_zipf_alpha)},
          {"cache_fraction", s.cache_fraction},
          {"hbm_reserve", s.hbm_reserve},
          {"dense_optimizer", dense_optimizer_name(s.dense_optimizer)},
          {"index_bytes", s.index_bytes},
          {"all_reduce_bucket_bytes", s.all_reduce_bucket_bytes}};
  // Written only when set, so that the scenarios (and hashes) of before
  // the knob are unchanged.
  if (s.pooling_scale != 1) j["pooling_scale"] = s.pooling_scale;
  return j;
}

Scenario scenario_from_json(const nlohmann::json& json, const std::string& source) {
  json::Diagnostics d(source);
  json::ObjectReader r(json, "", d);
  Scenario s;
  std::int64_t version = 0;
  if (r.require("schema_version")) {
    r.read_int("schema_version", version, {.min = kScenarioSchemaVersion, .max = kScenarioSchemaVersion});
  }
  if (std::optional<json::ObjectReader> c = r.object("cluster"); c && c->valid()) {
    c->read_string("name", s.cluster.cluster);
    read_optional(*c, "nodes", s.cluster.nodes, json::IntRange{.min = 1, .max = 65536});
    read_strings(*c, "set", s.cluster.overrides);
    read_strings(*c, "degrade", s.cluster.degradations);
    c->finish();
  }
  if (std::optional<json::ArrayReader> a = r.array("nodes"); a && a->valid()) {
    read_ints(*a, s.nodes, {.min = 1, .max = 65536});
    if (a->size() == 0) d.error("/nodes", "expected at least one node count, got []");
  }
  r.read_string("model", s.model);
  read_optional(r, "batch_per_gpu", s.batch_per_gpu, json::IntRange{.min = 1, .max = std::int64_t{1} << 24});
  read_optional(r, "global_batch", s.global_batch, json::IntRange{.min = 1, .max = std::int64_t{1} << 40});
  r.read_string("sharding", s.sharding);
  r.read_int("search_budget", s.search_budget, {.min = 1, .max = 100000});
  if (std::optional<json::ArrayReader> a = r.array("sharding_overrides"); a && a->valid()) {
    s.sharding_overrides.clear();
    for (std::size_t i = 0; i < a->size(); ++i) s.sharding_overrides.push_back(read_override(a->object(i)));
  }
  r.read_enum("a2a_forward_dtype", s.a2a_forward_dtype, {"", "fp32", "fp16", "bf16", "fp8"});
  r.read_enum("a2a_backward_dtype", s.a2a_backward_dtype, {"", "fp32", "fp16", "bf16", "fp8"});
  r.read_enum("all_reduce_dtype", s.all_reduce_dtype, {"fp32", "fp16", "bf16"});
  r.read_string("gpu", s.gpu);
  r.read_string("profile", s.profile);
  r.read_enum("fidelity", s.fidelity, {kFidelities.begin(), kFidelities.end()});
  r.read_number("completion_quantum_ns", s.completion_quantum_ns, {.min = 0, .max = kMaxCompletionQuantumNs});
  read_string_map(r, "algorithms", s.algorithms, d);
  read_strings(r, "plugins", s.plugins);
  read_strings(r, "schedules", s.schedules);
  read_string_map(r, "algorithm_options", s.algorithm_options, d);
  r.read_bool("fused_embeddings", s.fused_embeddings);
  r.read_bool("pipeline_input", s.pipeline_input);
  r.read_bool("prefetch_cache", s.prefetch_cache);
  r.read_number("cache_hit_rate", s.cache_hit_rate, {.min = 0, .max = 1});
  read_optional(r, "index_zipf_alpha", s.index_zipf_alpha, json::NumberRange{.min = 0, .max = 10});
  r.read_number("cache_fraction", s.cache_fraction, {.min = 0.0001, .max = 1});
  r.read_number("hbm_reserve", s.hbm_reserve, {.min = 0, .max = 0.95});
  std::string optimizer;
  if (r.read_enum("dense_optimizer", optimizer, {"sgd", "adagrad", "adam"})) {
    s.dense_optimizer = *parse_dense_optimizer_name(optimizer);
  }
  std::int64_t index_bytes = s.index_bytes;
  if (r.read_int("index_bytes", index_bytes, {.min = 4, .max = 8})) {
    if (index_bytes != 4 && index_bytes != 8) d.error("/index_bytes", fmt::format("expected 4 or 8, got {}", index_bytes));
    s.index_bytes = static_cast<int>(index_bytes);
  }
  r.read_int("all_reduce_bucket_bytes", s.all_reduce_bucket_bytes, {.min = 1, .max = std::int64_t{1} << 40});
  r.read_number("pooling_scale", s.pooling_scale, {.min = 0.01, .max = 100});
  r.finish();
  d.throw_if_errors();
  return s;
}

models::DlrmModel scenario_model(const Scenario& s) {
  models::DlrmModel model = models::load_model(s.model);
  for (models::TableGroup& g : model.tables) g.pooling *= s.pooling_scale;
  return model;
}

std::string scenario_hash(const Scenario& scenario) {
  return fmt::format("{:016x}", fnv1a_64(scenario_to_json(scenario).dump()));
}

}  // namespace zx::experiments
