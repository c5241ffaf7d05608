#include "experiments/knobs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "models/collectives/plan.h"
#include "models/dlrm/sharding.h"
#include "topology/degrade.h"
#include "topology/presets.h"

namespace zx::experiments {
namespace {

constexpr unsigned kWhatif = static_cast<unsigned>(Sweeper::kWhatif);
constexpr unsigned kRun = static_cast<unsigned>(Sweeper::kRun);
constexpr unsigned kCollective = static_cast<unsigned>(Sweeper::kCollective);
constexpr unsigned kAll = kWhatif | kRun | kCollective;

InputError bad_value(const std::string& key, const std::string& value, const std::string& expected) {
  return InputError(Diagnostic{"--vary", key, fmt::format("expected {}, got '{}'", expected, value)});
}

void set_cluster_key(Scenario& s, const std::string& key, const std::string& value) {
  s.cluster.overrides.push_back(*cluster_override(key, value));  // checked when the cluster loads
}

// none, or SELECTOR=SPEED parts joined by '+', each added to the request's
// degradations on top of --degrade; the syntax is checked now, the names
// when the cluster loads (topology/degrade.h).
void add_degradations(Scenario& s, const std::string& key, const std::string& value) {
  if (value == "none") return;
  std::size_t begin = 0;
  while (begin <= value.size()) {
    const std::size_t plus = std::min(value.find('+', begin), value.size());
    const std::string part = value.substr(begin, plus - begin);
    if (part.empty()) throw InputError(Diagnostic{"--vary", key, fmt::format("'{}': an empty part between '+'", value)});
    topology::parse_degradation(part, "--vary degrade");
    s.cluster.degradations.push_back(part);
    begin = plus + 1;
  }
}

void set_algorithm(Scenario& s, const std::string& key, const std::string& value) {
  const std::string kind = key.substr(key.find('.') + 1);
  const auto parsed = models::collectives::parse_collective_kind(kind);
  if (!parsed) {
    throw InputError(Diagnostic{"--vary", key,
                                fmt::format("unknown collective kind '{}'; valid: all_reduce, reduce_scatter, "
                                            "all_gather, all_to_all, broadcast, reduce",
                                            kind)});
  }
  s.algorithms[std::string(models::collectives::to_string(*parsed))] = value;
}

constexpr const char* kA2aTypes[] = {"fp32", "fp16", "bf16", "fp8"};

// The table. Each apply sets the Scenario field(s) the knob stands for.
const Knob kKnobs[] = {
    {.key = "nodes", .flag = "--nodes", .values = "servers, 1 to 8192", .examples = "1,2",
     .help = "the cluster's size", .sweepers = kRun | kCollective,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.cluster.nodes = static_cast<int>(knob_integer(k, v, 1, 8192));
     },
     .elsewhere = "whatif sweeps the cluster size itself: give --nodes N,N,..."},
    {.key = "nic-gbit", .flag = "--nic-gbit", .values = "Gb/s, 0.001 to 1e6", .examples = "100,400",
     .help = "What if the NICs were this fast (Gb/s; as --set nic.bandwidth_gbit_per_s)", .sweepers = kAll,
     .apply = set_cluster_key, .declares_flag = true},
    {.key = "oversubscription", .flag = "--oversubscription", .values = "N:1, 1 to 1024", .examples = "1,2",
     .help = "What if the racks were oversubscribed N:1 (as --set fabric.oversubscription)", .sweepers = kAll,
     .apply = set_cluster_key, .declares_flag = true},
    {.key = "cluster", .flag = "--cluster", .values = "a preset or a .json cluster file", .examples = "zionex,hgx",
     .help = "A cluster preset or cluster file", .sweepers = kAll,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       check_cluster_name(k, v);
       s.cluster.cluster = v;
     }},
    {.key = "gpu", .flag = "--gpu", .values = "a GPU profile name or .json file", .examples = "a100-40gb,h100-sxm",
     .help = "GPU profile: a built-in or a .json profile file", .sweepers = kAll,
     .apply = [](Scenario& s, const std::string&, const std::string& v) { s.gpu = v; }},
    {.key = "profile", .flag = "--profile", .values = "a GPU profile file", .examples = "a.json,b.json",
     .help = "A GPU profile file (a calibration result)", .sweepers = kWhatif | kRun,
     .apply = [](Scenario& s, const std::string&, const std::string& v) { s.profile = v; }},
    {.key = "model", .flag = "--model", .values = "a zoo model or model file", .examples = "dlrm-a,dlrm-a-small",
     .help = "A zoo model (zionsim list models) or a .json model file", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string&, const std::string& v) { s.model = v; },
     .declares_flag = true, .get = [](const Scenario& s) { return s.model; }, .group = FlagGroup::kModel},
    {.key = "sharding", .flag = "--sharding", .values = "a scheme, search, or a sharding file",
     .examples = "auto,row_wise",
     .help = "Embedding sharding: a scheme (auto, table_wise, row_wise, column_wise, table_row_wise, data_parallel), "
             "search (at each size, the plan search's fastest; see --search-budget) or a sharding file "
             "(docs/sharding_files.md)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.sharding = check_sharding(k, v); },
     .declares_flag = true, .get = [](const Scenario& s) { return s.sharding; }, .group = FlagGroup::kModel},
    {.key = "batch-per-gpu", .flag = "--batch-per-gpu", .values = "samples, 1 to 2^24", .examples = "256,512",
     .help = "Samples per GPU per iteration (default 512)", .sweepers = kWhatif, .excludes = "global-batch",
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.batch_per_gpu = knob_integer(k, v, 1, std::int64_t{1} << 24);
     },
     .declares_flag = true, .group = FlagGroup::kModel},
    {.key = "global-batch", .flag = "--global-batch", .values = "samples, 1 to 2^40", .examples = "4096,8192",
     .help = "Samples per iteration over all GPUs (instead of --batch-per-gpu)", .sweepers = kWhatif,
     .excludes = "batch-per-gpu",
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.global_batch = knob_integer(k, v, 1, std::int64_t{1} << 40);
     },
     .declares_flag = true, .group = FlagGroup::kModel},
    {.key = "a2a-precision", .flag = "--a2a-precision", .values = "fp32, fp16, bf16, fp8", .examples = "fp32,fp16",
     .help = "Element type of the pooled-embedding all-to-all (quantized communication); default: the "
             "embeddings' type (fp16 for the built-in models)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.a2a_forward_dtype = knob_one_of(k, v, kA2aTypes);
     },
     .declares_flag = true},
    {.key = "a2a-backward-precision", .flag = "--a2a-backward-precision", .values = "fp32, fp16, bf16, fp8",
     .examples = "fp32,bf16", .help = "Element type of the gradient all-to-all (default: as forward)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.a2a_backward_dtype = knob_one_of(k, v, kA2aTypes);
     },
     .declares_flag = true},
    {.key = "all-reduce-precision", .flag = "--all-reduce-precision", .values = "fp32, fp16, bf16",
     .examples = "fp32,bf16", .help = "Element type of the dense gradient all-reduce", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.all_reduce_dtype = knob_one_of(k, v, {"fp32", "fp16", "bf16"});
     },
     .declares_flag = true,
     .get = [](const Scenario& s) { return s.all_reduce_dtype; }},
    {.key = "fidelity", .flag = "--fidelity", .values = "flow, coalesced, linkshare, analytical", .examples = "flow,analytical",
     .help = "The network model's fidelity", .sweepers = kWhatif | kRun,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.fidelity = knob_one_of(k, v, kFidelities); }},
    {.key = "completion-quantum-ns", .flag = "--completion-quantum-ns", .values = "ns, 0 to 10000",
     .examples = "0,10", .help = "Flow finish times round up to multiples of this; 0: exact", .sweepers = kWhatif | kRun,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.completion_quantum_ns = knob_number(k, v, 0, kMaxCompletionQuantumNs);
     }},
    {.key = "embeddings", .flag = "--unfused", .values = "fused, unfused", .examples = "fused,unfused",
     .help = "Unfused embedding kernels (one per table, separate optimizer)", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.fused_embeddings = knob_one_of(k, v, {"fused", "unfused"}) == "fused";
     },
     .declares_flag = true, .switch_value = "unfused"},
    {.key = "pipeline", .flag = "--no-pipeline", .values = "on, off", .examples = "on,off",
     .help = "Do not overlap the next batch's input distribution", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.pipeline_input = knob_one_of(k, v, {"on", "off"}) == "on";
     },
     .declares_flag = true, .switch_value = "off"},
    {.key = "prefetch-cache", .flag = "--prefetch-cache", .values = "off, on", .examples = "off,on",
     .help = "Host-memory tables: fetch the next batch's HBM-cache misses beside the iteration "
             "(TorchRec's PrefetchTrainPipelineSparseDist) instead of before the embedding forward",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.prefetch_cache = knob_one_of(k, v, {"on", "off"}) == "on";
     },
     .declares_flag = true, .switch_value = "on"},
    {.key = "cache-hit-rate", .flag = "--cache-hit-rate", .values = "0 to 1", .examples = "0.5,0.9",
     .help = "Host-memory tables: share of lookups their HBM cache serves, every table alike", .sweepers = kWhatif,
     .excludes = "index-zipf-alpha",
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.cache_hit_rate = knob_number(k, v, 0, 1);
       s.index_zipf_alpha.reset();
     },
     .declares_flag = true, .get = [](const Scenario& s) { return fmt::format("{}", s.cache_hit_rate); },
     .group = FlagGroup::kModel},
    {.key = "index-zipf-alpha", .flag = "--index-zipf-alpha", .values = "0 to 10", .examples = "0.8,1.2",
     .help = "Host-memory tables: lookups are Zipf(ALPHA) over each table's rows; each table's hit rate is an LRU "
             "cache's (instead of --cache-hit-rate)",
     .sweepers = kWhatif, .excludes = "cache-hit-rate",
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.index_zipf_alpha = knob_number(k, v, 0, 10); },
     .declares_flag = true, .group = FlagGroup::kModel},
    {.key = "cache-fraction", .flag = "--cache-fraction", .values = "0.0001 to 1", .examples = "0.01,0.1",
     .help = "Host-memory tables: HBM given to each one's cache, as a share of its size", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.cache_fraction = knob_number(k, v, 0.0001, 1); },
     .declares_flag = true, .get = [](const Scenario& s) { return fmt::format("{}", s.cache_fraction); },
     .group = FlagGroup::kModel},
    {.key = "hbm-reserve", .flag = "--hbm-reserve", .values = "0 to 0.95", .examples = "0.25,0.5",
     .help = "Share of HBM the planner keeps from embeddings, at least (more when the iteration needs it)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.hbm_reserve = knob_number(k, v, 0, 0.95); },
     .declares_flag = true, .get = [](const Scenario& s) { return fmt::format("{}", s.hbm_reserve); },
     .group = FlagGroup::kModel},
    {.key = "dense-optimizer", .flag = "--dense-optimizer", .values = "sgd, adagrad, adam", .examples = "sgd,adam",
     .help = "The dense MLPs' optimizer: its step and its state in HBM", .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.dense_optimizer = *parse_dense_optimizer_name(knob_one_of(k, v, {"sgd", "adagrad", "adam"}));
     },
     .declares_flag = true, .get = [](const Scenario& s) { return std::string(dense_optimizer_name(s.dense_optimizer)); },
     .group = FlagGroup::kModel},
    {.key = "index-dtype", .flag = "--index-dtype", .values = "int64, int32", .examples = "int64,int32",
     .help = "Embedding indices' type (the input copy, the indices all-to-all, the kernels' reads)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.index_bytes = knob_one_of(k, v, {"int64", "int32"}) == "int32" ? 4 : 8;
     },
     .declares_flag = true, .get = [](const Scenario& s) { return std::string(s.index_bytes == 4 ? "int32" : "int64"); },
     .group = FlagGroup::kModel},
    // PyTorch DDP's bucket_cap_mb, in MiB as DDP counts it (bucket_cap_mb *
    // 1024 * 1024; pytorch/pytorch, torch/nn/parallel/distributed.py).
    {.key = "all-reduce-bucket-mib", .flag = "--all-reduce-bucket-mib", .values = "MiB, 0.001 to 65536",
     .examples = "25,100", .help = "Dense gradients are all-reduced in buckets of at least this size (DDP's bucket_cap_mb)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) {
       s.all_reduce_bucket_bytes = std::llround(knob_number(k, v, 0.001, 65536) * 1048576.0);
     },
     .declares_flag = true,
     .get = [](const Scenario& s) { return fmt::format("{}", static_cast<double>(s.all_reduce_bucket_bytes) / 1048576.0); }},
    {.key = "pooling-scale", .flag = "--pooling-scale", .values = "0.01 to 100", .examples = "1,2",
     .help = "What if every embedding feature looked up this many times as many rows per sample (each table's "
             "pooling factor, its multi-hot size, scaled: longer or shorter sparse features)",
     .sweepers = kWhatif,
     .apply = [](Scenario& s, const std::string& k, const std::string& v) { s.pooling_scale = knob_number(k, v, 0.01, 100); },
     .declares_flag = true,
     .get = [](const Scenario& s) { return fmt::format("{}", s.pooling_scale); }},
    {.key = "algo.KIND", .flag = "--algo", .values = "a collective algorithm for KIND", .examples = "direct,hierarchical",
     .help = "The collective algorithm of one kind (as --algo KIND=NAME): algo.all_to_all=direct,hierarchical",
     .sweepers = kWhatif | kRun, .apply = set_algorithm},
    // No flag to contradict: the values add to --degrade's.
    {.key = "degrade", .values = "none, or SELECTOR=SPEED parts joined by +", .examples = "none,device:node0/nic0=0.5",
     .help = "Parts below their rated speed, added to --degrade's: degrade=none,gpu:0=0.8,device:node0/nic0=0.5",
     .sweepers = kAll, .apply = add_degradations},
    {.key = "SECTION.KEY", .values = "a cluster key as --set takes it", .examples = "1,0.5",
     .help = "Any cluster key --set takes: nic.all_to_all_efficiency=0.27,1", .sweepers = kAll,
     .apply = set_cluster_key},
};

}  // namespace

const char* sweeper_name(Sweeper sweeper) {
  switch (sweeper) {
    case Sweeper::kWhatif: return "whatif";
    case Sweeper::kRun: return "run";
    case Sweeper::kCollective: return "collective";
  }
  return "?";
}

std::span<const Knob> knobs() { return kKnobs; }

const Knob* find_knob(std::string_view key) {
  const std::string_view pattern = key.starts_with("algo.")                   ? "algo.KIND"
                                   : key.find('.') != std::string_view::npos ? "SECTION.KEY"
                                                                              : key;
  for (const Knob& k : kKnobs) {
    if (k.key == pattern) return &k;
  }
  return nullptr;
}

std::string knob_keys(Sweeper sweeper) {
  std::vector<std::string_view> keys;
  for (const Knob& k : kKnobs) {
    if (k.for_sweeper(sweeper)) keys.push_back(k.key);
  }
  return fmt::format("{}", fmt::join(keys, ", "));
}

std::string knob_help(Sweeper sweeper) {
  std::vector<std::string> parts;
  for (const Knob& k : kKnobs) {
    if (k.for_sweeper(sweeper)) parts.push_back(fmt::format("{} ({})", k.key, k.values));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

void apply_knob(Scenario& s, const std::string& key, const std::string& value, Sweeper sweeper) {
  const Knob* knob = find_knob(key);
  if (knob == nullptr || !knob->for_sweeper(sweeper)) {
    if (knob != nullptr && !knob->elsewhere.empty()) throw InputError(Diagnostic{"--vary", key, std::string(knob->elsewhere)});
    throw InputError(Diagnostic{"--vary", key, fmt::format("unknown knob '{}'; valid: {}", key, knob_keys(sweeper))});
  }
  knob->apply(s, key, value);
}

Variation parse_variation(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("expected KEY=V1,V2,... (nic-gbit=100,200,400), got '{}'", text)});
  }
  Variation v;
  v.key = text.substr(0, eq);
  std::stringstream in(text.substr(eq + 1));
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) throw InputError(Diagnostic{"--vary", v.key, fmt::format("empty value in '{}'", text)});
    if (std::find(v.values.begin(), v.values.end(), item) != v.values.end()) {
      throw InputError(Diagnostic{"--vary", v.key, fmt::format("value '{}' given twice", item)});
    }
    v.values.push_back(item);
  }
  if (text.back() == ',') throw InputError(Diagnostic{"--vary", v.key, fmt::format("empty value in '{}'", text)});
  return v;
}

Variation parse_knob_variation(const std::string& text, Sweeper sweeper) {
  Variation v = parse_variation(text);
  Scenario probe;
  for (const std::string& value : v.values) apply_knob(probe, v.key, value, sweeper);
  return v;
}

std::vector<Settings> all_combinations(const std::vector<Variation>& variations) {
  for (std::size_t i = 0; i < variations.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (variations[i].key == variations[j].key) {
        throw InputError(Diagnostic{"--vary", variations[i].key, "the same knob varied twice; give its values once"});
      }
    }
  }
  std::vector<Settings> out{Settings{}};
  for (const Variation& v : variations) {
    std::vector<Settings> next;
    for (const Settings& prefix : out) {
      for (const std::string& value : v.values) {
        Settings s = prefix;
        s.emplace_back(v.key, value);
        next.push_back(std::move(s));
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string settings_label(const Settings& settings) {
  if (settings.empty()) return "base";
  std::string out;
  for (const auto& [key, value] : settings) out += fmt::format("{}{}={}", out.empty() ? "" : " ", key, value);
  return out;
}

nlohmann::ordered_json knob_value_json(const std::string& value) {
  double x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (value.empty() || ec != std::errc() || ptr != end || !std::isfinite(x)) return value;
  std::int64_t i = 0;
  const auto [iptr, iec] = std::from_chars(value.data(), end, i);
  if (iec == std::errc() && iptr == end) return i;
  return x;
}

nlohmann::ordered_json variations_json(const std::vector<std::string>& texts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const std::string& text : texts) {
    const Variation v = parse_variation(text);
    nlohmann::ordered_json values = nlohmann::ordered_json::array();
    for (const std::string& value : v.values) values.push_back(knob_value_json(value));
    out[v.key] = std::move(values);
  }
  return out;
}

nlohmann::ordered_json settings_json(const Settings& settings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : settings) out[key] = knob_value_json(value);
  return out;
}

void check_knob_conflicts(const std::vector<Variation>& varied, const GivenFlags& given) {
  for (const Variation& v : varied) {
    const Knob* knob = find_knob(v.key);
    if (knob == nullptr) continue;
    if (v.key.starts_with("algo.")) {
      const auto kind = models::collectives::parse_collective_kind(v.key.substr(5));
      if (kind && given.algorithm_kinds.contains(std::string(models::collectives::to_string(*kind)))) {
        throw InputError(Diagnostic{"--vary", v.key, fmt::format("give --algo {}=... or --vary {}=..., not both",
                                                                models::collectives::to_string(*kind), v.key)});
      }
    } else if (!knob->flag.empty() && given.flags.contains(std::string(knob->flag))) {
      throw InputError(Diagnostic{"--vary", v.key, fmt::format("give {} or --vary {}=..., not both", knob->flag, v.key)});
    }
    if (!knob->excludes.empty()) {
      const Knob* other = find_knob(knob->excludes);
      const bool varied_too = std::any_of(varied.begin(), varied.end(),
                                          [&](const Variation& w) { return w.key == knob->excludes; });
      if (varied_too || given.flags.contains(std::string(other->flag))) {
        throw InputError(Diagnostic{"--vary", v.key, fmt::format("{} and {} exclude each other", v.key, knob->excludes)});
      }
    }
    // A cluster key (or the one a knob sets) also set with --set.
    if (const std::optional<std::string> set = cluster_override(v.key, v.values.front())) {
      const std::string key = set->substr(0, set->find('='));
      for (const std::string& other : given.overrides) {
        if (other.substr(0, other.find('=')) == key) {
          throw InputError(Diagnostic{"--vary", v.key, fmt::format("'{}' is also set by '{}'; give it once", key, other)});
        }
      }
    }
  }
}

double knob_number(const std::string& key, const std::string& value, double lo, double hi) {
  double x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (ec != std::errc() || ptr != end || !std::isfinite(x) || x < lo || x > hi) {
    throw bad_value(key, value, fmt::format("a number in [{}, {}]", lo, hi));
  }
  return x;
}

std::int64_t knob_integer(const std::string& key, const std::string& value, std::int64_t lo, std::int64_t hi) {
  std::int64_t x = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (ec != std::errc() || ptr != end || x < lo || x > hi) {
    throw bad_value(key, value, fmt::format("an integer in [{}, {}]", lo, hi));
  }
  return x;
}

const std::string& knob_one_of(const std::string& key, const std::string& value,
                               std::initializer_list<const char*> valid) {
  return knob_one_of(key, value, std::span<const char* const>(valid.begin(), valid.size()));
}

const std::string& knob_one_of(const std::string& key, const std::string& value,
                               std::span<const char* const> valid) {
  for (const char* v : valid) {
    if (value == v) return value;
  }
  throw bad_value(key, value, fmt::format("one of {}", fmt::join(valid, ", ")));
}

std::optional<std::string> cluster_override(const std::string& key, const std::string& value) {
  if (key == "nic-gbit") {
    knob_number(key, value, 1e-3, 1e6);
    return "nic.bandwidth_gbit_per_s=" + value;
  }
  if (key == "oversubscription") {
    knob_number(key, value, 1, 1024);
    return "fabric.oversubscription=" + value;
  }
  if (key.find('.') != std::string::npos && !key.starts_with("algo.")) return key + "=" + value;
  return std::nullopt;
}

const std::string& check_sharding(const std::string& key, const std::string& value) {
  const std::vector<std::string> names = models::sharding_scheme_names();
  if (value.find('/') != std::string::npos || value.ends_with(".json") || value == "search" ||
      std::find(names.begin(), names.end(), value) != names.end()) {
    return value;
  }
  throw InputError(Diagnostic{"--vary", key,
                              fmt::format("unknown sharding scheme '{}'; valid: {}, search, or a .json sharding file",
                                          value, fmt::join(names, ", "))});
}

void check_cluster_name(const std::string& key, const std::string& value) {
  if (topology::is_cluster_path(value)) return;
  std::vector<std::string> names;
  for (const auto& [name, description] : topology::preset_descriptions()) names.push_back(name);
  if (std::find(names.begin(), names.end(), value) != names.end()) return;
  throw InputError(Diagnostic{"--vary", key,
                              fmt::format("unknown cluster '{}'; valid: {}, or the path of a .json cluster file", value,
                                          fmt::join(names, ", "))});
}

}  // namespace zx::experiments
