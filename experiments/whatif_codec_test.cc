#include "experiments/whatif_codec.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "base/check.h"
#include "base/error.h"
#include "sim/time.h"
#include "experiments/interrupt.h"
#include "experiments/sweep_cache.h"

namespace zx::experiments {
namespace {

// Every field set, none to its default; doubles that do not print short.
WhatIfPoint full_point() {
  WhatIfPoint p;
  p.variant = 3;
  p.nodes = 48;
  p.gpus = 384;
  p.gpu = "h100-80gb";
  p.communication.launch = sim::Duration::ps(6600123);
  p.communication.transfer = sim::Duration::ps(400001);
  p.communication.network_transfer = sim::Duration::ps(1200007);
  p.communication.peer_gap = sim::Duration::ps(2450000);
  p.global_batch = 196608;
  p.fits = true;
  p.reason = "a \"quoted\" reason\nover two lines";
  p.iteration_time_ms = 72.18102412345678;
  p.samples_per_s = 1.0 / 3.0;
  p.scaling_efficiency = std::nextafter(1.0, 0.0);
  p.breakdown = {.compute_ms = 0.1 + 0.2,
                 .exposed_all_to_all_ms = 1e-300,
                 .exposed_all_reduce_ms = 5e-324,
                 .other_ms = -0.0,
                 .overlapped_communication_ms = 12345.678901234567,
                 .compute_slowed_by_communication_ms = std::numeric_limits<double>::infinity()};
  p.bottleneck = "exposed all-to-all; busiest link node0/nic0->rack0/rsw (97% busy)";
  p.load_imbalance = std::numeric_limits<double>::quiet_NaN();
  p.balance_split_tables = 17;
  p.busiest_gpu_rank = 301;
  p.busiest_gpu_compute_ms = -std::numeric_limits<double>::infinity();
  p.search_simulations = 42;
  p.search_start_iteration_time_ms = 73.5;
  p.search_moves = 5;
  p.host_memory_tables = 9;
  p.max_hbm_gbyte = 39.99999999999999;
  p.max_iteration_hbm_gbyte = 2.5;
  p.hbm_reserve_fraction = 0.25;
  p.cache_hit_rate = 0.875;
  models::AutoChoice choice;
  choice.kind = models::collectives::CollectiveKind::kAllToAll;
  choice.ranks = 384;
  choice.bytes_per_rank = sim::Bytes(123456789);
  choice.dtype = models::collectives::DataType::kBf16;
  choice.chosen = "nccl_p2p";
  choice.candidates.push_back({.algorithm = "direct", .time = sim::Duration::ps(987654321)});
  choice.candidates.push_back({.algorithm = "nccl_p2p", .time = std::nullopt, .refused = "", .slower_than = sim::Duration::ps(5)});
  choice.candidates.push_back({.algorithm = "pairwise", .time = std::nullopt, .refused = "needs a power of two"});
  p.auto_choices = {choice};
  choice.chosen = "ring";
  p.nccl_choices = {choice, choice};
  p.wall_seconds = 12.75;
  p.fingerprint = 0xfedcba9876543210ull;
  p.events = 1ull << 40;
  p.flows = 1850368;
  p.resolves = 3091;
  p.resolved_flows = 15832686;
  return p;
}

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

WhatIfPoint trip(const WhatIfPoint& p) {
  const std::string text = whatif_point_to_json(p).dump();
  return whatif_point_from_json(nlohmann::json::parse(text), "test", "");
}

TEST(WhatIfCodec, RoundTripIsExact) {
  const WhatIfPoint p = full_point();
  const WhatIfPoint q = trip(p);
  // The JSON of the point read back is the JSON written, and so every field.
  EXPECT_EQ(whatif_point_to_json(q).dump(), whatif_point_to_json(p).dump());
  EXPECT_TRUE(same_bits(q.iteration_time_ms, p.iteration_time_ms));
  EXPECT_TRUE(same_bits(q.samples_per_s, p.samples_per_s));
  EXPECT_TRUE(same_bits(q.scaling_efficiency, p.scaling_efficiency));
  EXPECT_TRUE(same_bits(q.breakdown.compute_ms, p.breakdown.compute_ms));
  EXPECT_TRUE(same_bits(q.breakdown.exposed_all_reduce_ms, 5e-324));
  EXPECT_TRUE(same_bits(q.breakdown.other_ms, -0.0));
  EXPECT_TRUE(std::isinf(q.breakdown.compute_slowed_by_communication_ms));
  EXPECT_TRUE(std::isnan(q.load_imbalance));
  EXPECT_EQ(q.busiest_gpu_compute_ms, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(q.reason, p.reason);
  EXPECT_EQ(q.communication.peer_gap, p.communication.peer_gap);
  EXPECT_EQ(q.fingerprint, p.fingerprint);
  EXPECT_EQ(q.events, p.events);
  ASSERT_EQ(q.auto_choices.size(), 1u);
  EXPECT_EQ(q.auto_choices[0].kind, models::collectives::CollectiveKind::kAllToAll);
  EXPECT_EQ(q.auto_choices[0].dtype, models::collectives::DataType::kBf16);
  EXPECT_EQ(q.auto_choices[0].bytes_per_rank, sim::Bytes(123456789));
  ASSERT_EQ(q.auto_choices[0].candidates.size(), 3u);
  EXPECT_EQ(q.auto_choices[0].candidates[0].time, sim::Duration::ps(987654321));
  EXPECT_FALSE(q.auto_choices[0].candidates[1].time.has_value());
  EXPECT_EQ(q.auto_choices[0].candidates[1].slower_than, sim::Duration::ps(5));
  EXPECT_EQ(q.auto_choices[0].candidates[2].refused, "needs a power of two");
  EXPECT_EQ(q.nccl_choices.size(), 2u);
}

TEST(WhatIfCodec, MalformedPointsNameTheMember) {
  nlohmann::json doc = nlohmann::json::parse(whatif_point_to_json(full_point()).dump());
  const auto error_of = [](const nlohmann::json& d) {
    try {
      whatif_point_from_json(d, "shard.json", "/results/4/outcome/point");
    } catch (const InputError& e) {
      return e.diagnostics().front().to_string();
    }
    return std::string("accepted");
  };
  nlohmann::json d = doc;
  d.erase("flows");
  EXPECT_EQ(error_of(d), "shard.json: /results/4/outcome/point/flows: missing");
  d = doc;
  d["breakdown"]["other_ms"] = "fast";
  EXPECT_EQ(error_of(d), "shard.json: /results/4/outcome/point/breakdown/other_ms: expected a number, got \"fast\"");
  d = doc;
  d["nodes"] = 1e12;
  EXPECT_NE(error_of(d).find("/nodes: expected a whole number"), std::string::npos);
  d = doc;
  d["events"] = -1;
  EXPECT_NE(error_of(d).find("/events: expected a whole number >= 0"), std::string::npos);
  d = doc;
  d["auto_choices"][0]["kind"] = "all_to_none";
  EXPECT_NE(error_of(d).find("/auto_choices/0/kind: expected a collective kind"), std::string::npos);
  EXPECT_EQ(error_of(nlohmann::json::array()), "shard.json: /results/4/outcome/point: expected an object");
}

template <typename Thrown>
std::exception_ptr pointer(Thrown e) {
  try {
    throw e;
  } catch (...) {
    return std::current_exception();
  }
}

TEST(WhatIfCodec, ErrorsComeBackAsThrown) {
  const auto back = [](std::exception_ptr e) {
    return nlohmann::json::parse(task_outcome_to_json(nullptr, e).dump());
  };
  try {
    point_or_rethrow(back(pointer(InputError({Diagnostic{"--model", "", "unknown model 'x'"},
                                               Diagnostic{"c.json", "/nodes", "expected a number"}}))),
                     "t", "");
    ADD_FAILURE() << "no throw";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[1].to_string(), "c.json: /nodes: expected a number");
  }
  EXPECT_THROW(point_or_rethrow(back(pointer(Interrupted())), "t", ""), Interrupted);
  try {
    point_or_rethrow(back(pointer(sim::TimeOverflowError("time past 106 days"))), "t", "");
    ADD_FAILURE() << "no throw";
  } catch (const sim::RangeError& e) {
    EXPECT_STREQ(e.describe(), "time past 106 days");
  }
  EXPECT_THROW(point_or_rethrow(back(pointer(InvariantError("broken"))), "t", ""), InvariantError);
  EXPECT_THROW(point_or_rethrow(back(pointer(std::runtime_error("disk"))), "t", ""), std::runtime_error);
  const WhatIfPoint p = full_point();
  EXPECT_EQ(point_or_rethrow(nlohmann::json::parse(task_outcome_to_json(&p, nullptr).dump()), "t", "").nodes, 48);
  try {
    point_or_rethrow(nlohmann::json::parse(R"({"error": {"kind": "gone"}})"), "s.json", "/results/0/outcome");
    ADD_FAILURE() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].to_string(),
              "s.json: /results/0/outcome/error/kind: expected input, interrupted, range, invariant or other, got "
              "'gone'");
  }
}

// --results keys a point by the words that shape it: the flags that choose
// which points exist or where output goes are left out (with their values;
// --vary's every value), the others kept in order.
TEST(SweepCache, PointShapingWords) {
  EXPECT_EQ(point_shaping_words({"whatif", "--model", "dlrm-a", "--nodes", "8,16", "--vary", "nic-gbit=200,400",
                                 "oversubscription=1,2", "--set", "nic.latency_ns=700", "--format=csv", "--threads",
                                 "2", "--skip-memory-check", "--unfused", "--results", "dir", "--shard", "0/2"}),
            (std::vector<std::string>{"whatif", "--model", "dlrm-a", "--set", "nic.latency_ns=700", "--unfused"}));
}

}  // namespace
}  // namespace zx::experiments
