#include "experiments/scenario.h"

#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/knobs.h"

namespace zx::experiments {
namespace {

// Every field away from its default, each to a value no other field has.
Scenario everything_set() {
  Scenario s;
  s.cluster.cluster = "hgx";
  s.cluster.nodes = 4;
  s.cluster.overrides = {"nic.bandwidth_gbit_per_s=400", "fabric.oversubscription=2"};
  s.cluster.degradations = {"gpu:0=0.5"};
  s.nodes = {2, 8, 16};
  s.model = "dlrm-a-small";
  s.batch_per_gpu = 1024;
  s.global_batch = 65536;
  s.sharding = "search";
  s.search_budget = 17;
  s.sharding_overrides = {
      models::TableOverride{.table = 3, .kind = models::ShardingKind::kColumnWise, .ranks = {1, 2}, .columns = {64, 64},
                            .memory = models::TableMemory::kHost},
      models::TableOverride{.table = 0, .kind = models::ShardingKind::kTableRowWise, .node = 1}};
  s.a2a_forward_dtype = "fp8";
  s.a2a_backward_dtype = "bf16";
  s.all_reduce_dtype = "fp16";
  s.gpu = "h200";
  s.profile = "profile.json";
  s.fidelity = "coalesced";
  s.completion_quantum_ns = 0.1;  // not exact in binary: must still round-trip
  s.algorithms["all_to_all"] = "nccl_p2p";
  s.plugins = {"libx.so"};
  s.schedules = {"ring.json"};
  s.algorithm_options = {{"nccl_p2p", R"({"channels": 4})"}};
  s.fused_embeddings = false;
  s.pipeline_input = false;
  s.prefetch_cache = true;
  s.cache_hit_rate = 1.0 / 3.0;
  s.index_zipf_alpha = 1.05;
  s.cache_fraction = 0.02;
  s.hbm_reserve = 0.3;
  s.dense_optimizer = models::DenseOptimizer::kAdam;
  s.index_bytes = 4;
  s.all_reduce_bucket_bytes = 1 << 20;
  return s;
}

TEST(Scenario, JsonRoundTripsEveryField) {
  const Scenario s = everything_set();
  const nlohmann::ordered_json j = scenario_to_json(s);
  const Scenario back = scenario_from_json(nlohmann::json::parse(j.dump()), "s.json");
  EXPECT_EQ(back, s);
  EXPECT_EQ(scenario_to_json(back).dump(), j.dump());
  // Every field of the struct is in the form: one changed field changes it.
  EXPECT_NE(scenario_to_json(Scenario{}).dump(), j.dump());
  EXPECT_EQ(scenario_from_json(nlohmann::json::parse(scenario_to_json(Scenario{}).dump()), "d.json"), Scenario{});
}

// A knob added after the form was fixed is written only when set: the
// scenarios (and hashes) written before it are unchanged.
TEST(Scenario, LaterKnobsAreWrittenOnlyWhenSet) {
  EXPECT_FALSE(scenario_to_json(Scenario{}).contains("pooling_scale"));
  Scenario s;
  s.pooling_scale = 2.5;
  const nlohmann::ordered_json j = scenario_to_json(s);
  EXPECT_EQ(j["pooling_scale"], 2.5);
  EXPECT_EQ(scenario_from_json(nlohmann::json::parse(j.dump()), "s.json"), s);
  EXPECT_NE(scenario_hash(s), scenario_hash(Scenario{}));
}

TEST(Scenario, AbsentKeysKeepDefaults) {
  const Scenario s = scenario_from_json(nlohmann::json::parse(R"({"schema_version": 1, "model": "dlrm-b"})"), "x");
  Scenario want;
  want.model = "dlrm-b";
  EXPECT_EQ(s, want);
}

TEST(Scenario, HashIsStableAndSeparates) {
  // Pinned: a change of the JSON form (or of the default algorithms, which
  // everything_set keeps for three kinds) changes it. A new field (read as
  // its default where absent): update the pin; a field renamed, removed or
  // read differently: bump kScenarioSchemaVersion too.
  EXPECT_EQ(scenario_hash(everything_set()), "dbc60160abd7e10a");
  EXPECT_EQ(scenario_hash(Scenario{}), scenario_hash(Scenario{}));
  EXPECT_EQ(scenario_hash(Scenario{}).size(), 16u);
  Scenario a;
  Scenario b;
  b.completion_quantum_ns = std::nextafter(10.0, 11.0);  // one ulp apart
  EXPECT_NE(scenario_hash(a), scenario_hash(b));
  EXPECT_EQ(scenario_hash(everything_set()), scenario_hash(scenario_from_json(
                                                 nlohmann::json::parse(scenario_to_json(everything_set()).dump()), "x")));
}

TEST(Scenario, BadInputNamesThePointer) {
  const auto error_of = [](const char* text) {
    try {
      scenario_from_json(nlohmann::json::parse(text), "s.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of(R"({"model": "x"})").find("schema_version"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 2})").find("/schema_version"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "nodes": [1, 0]})").find("/nodes/1"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "nodes": []})").find("/nodes"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "fidelity": "exact"})").find("/fidelity"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "modle": "x"})").find("did you mean 'model'"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "cluster": {"nodes": 0}})").find("/cluster/nodes"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "index_bytes": 6})").find("/index_bytes"), std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "algorithms": {"all_to_all": 3}})").find("/algorithms/all_to_all"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema_version": 1, "sharding_overrides": [{"kind": "row_wise"}]})")
                .find("/sharding_overrides/0"),
            std::string::npos);
  EXPECT_NE(error_of(R"([1])").find("expected"), std::string::npos);
}

// Every knob takes its examples on every command it claims, changes the
// scenario, and is refused by the others.
TEST(Knobs, EveryKnobOnEveryCommandItClaims) {
  for (const Knob& knob : knobs()) {
    const std::string key = knob.key == "algo.KIND"     ? "algo.all_to_all"
                            : knob.key == "SECTION.KEY" ? "nic.all_to_all_efficiency"
                                                        : std::string(knob.key);
    ASSERT_NE(knob.examples.find(','), std::string_view::npos) << key;
    const std::string first(knob.examples.substr(0, knob.examples.find(',')));
    const std::string second(knob.examples.substr(knob.examples.find(',') + 1));
    for (Sweeper sweeper : {Sweeper::kWhatif, Sweeper::kRun, Sweeper::kCollective}) {
      Scenario a, b;
      if (!knob.for_sweeper(sweeper)) {
        EXPECT_THROW(apply_knob(a, key, first, sweeper), InputError) << key << " on " << sweeper_name(sweeper);
        continue;
      }
      EXPECT_NO_THROW(parse_knob_variation(key + "=" + std::string(knob.examples), sweeper)) << key;
      apply_knob(a, key, first, sweeper);
      apply_knob(b, key, second, sweeper);
      // The field it sets is in the JSON form, both ways.
      EXPECT_NE(scenario_hash(a), scenario_hash(b)) << key << " on " << sweeper_name(sweeper);
      EXPECT_EQ(scenario_from_json(nlohmann::json::parse(scenario_to_json(b).dump()), "b"), b) << key;
      if (knob.get != nullptr) {
        EXPECT_EQ(knob.get(a), first) << key;
        EXPECT_EQ(knob.get(b), second) << key;
      }
      EXPECT_NE(knob_keys(sweeper).find(knob.key), std::string::npos);
      EXPECT_NE(knob_help(sweeper).find(knob.key), std::string::npos);
    }
  }
}

TEST(Knobs, UnknownAndElsewhere) {
  Scenario s;
  try {
    apply_knob(s, "nic-gbits", "1", Sweeper::kCollective);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("valid: nodes, nic-gbit, oversubscription, cluster, gpu, degrade, SECTION.KEY"),
              std::string::npos)
        << e.what();
  }
  try {
    apply_knob(s, "nodes", "2", Sweeper::kWhatif);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("whatif sweeps the cluster size itself"), std::string::npos) << e.what();
  }
  EXPECT_THROW(apply_knob(s, "algo.all_to_al", "direct", Sweeper::kWhatif), InputError);
  EXPECT_THROW(apply_knob(s, "batch-per-gpu", "0", Sweeper::kWhatif), InputError);
  EXPECT_THROW(apply_knob(s, "degrade", "gpu:0=0.5++gpu:1=0.5", Sweeper::kWhatif), InputError);
}

TEST(Knobs, ConflictsWithFlagsAndEachOther) {
  const auto refused = [](const std::vector<std::string>& vary, const GivenFlags& given) {
    std::vector<Variation> v;
    for (const std::string& text : vary) v.push_back(parse_variation(text));
    try {
      check_knob_conflicts(v, given);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused({"nic-gbit=1,2"}, {{"--nic-gbit"}, {}, {}}).find("give --nic-gbit or --vary nic-gbit=..., not both"),
            std::string::npos);
  EXPECT_NE(refused({"embeddings=fused,unfused"}, {{"--unfused"}, {}, {}}).find("give --unfused"), std::string::npos);
  EXPECT_NE(refused({"cache-hit-rate=0.5", "index-zipf-alpha=1"}, {}).find("exclude each other"), std::string::npos);
  EXPECT_NE(refused({"index-zipf-alpha=1"}, {{"--cache-hit-rate"}, {}, {}}).find("exclude each other"),
            std::string::npos);
  EXPECT_NE(refused({"algo.all-to-all=direct"}, {{}, {"all_to_all"}, {}}).find("give --algo all_to_all=..."),
            std::string::npos);
  EXPECT_NE(refused({"oversubscription=2"}, {{}, {}, {"fabric.oversubscription=4"}}).find("give it once"),
            std::string::npos);
  // Degradations add to --degrade's: no conflict.
  EXPECT_EQ(refused({"degrade=none,gpu:0=0.5"}, {{"--degrade"}, {}, {}}), "");
  EXPECT_EQ(refused({"nic-gbit=1,2"}, {{"--oversubscription"}, {"all_reduce"}, {"nic.latency_ns=2"}}), "");
}

TEST(Knobs, CombinationsAreTheProductFirstOutermost) {
  const std::vector<Settings> all =
      all_combinations({parse_variation("a=1,2"), parse_variation("b=x,y,z")});
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(settings_label(all[0]), "a=1 b=x");
  EXPECT_EQ(settings_label(all[2]), "a=1 b=z");
  EXPECT_EQ(settings_label(all[3]), "a=2 b=x");
  EXPECT_EQ(settings_label({}), "base");
  EXPECT_THROW(all_combinations({parse_variation("a=1"), parse_variation("a=2")}), InputError);
  EXPECT_THROW(parse_variation("a=1,,2"), InputError);
  EXPECT_THROW(parse_variation("a=1,1"), InputError);
}

}  // namespace
}  // namespace zx::experiments
