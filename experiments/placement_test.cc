// Tests of placed_map and ResultCache: the shares of a sweep partition its
// tasks and each share computes only its own; merged outcomes are decoded,
// not computed, and a malformed one names its file; kept results are read
// instead of computed and computed ones are kept; a cache's identity
// separates tasks and survives a new cache on the same directory.

#include "experiments/placement.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "experiments/sweep_cache.h"

namespace zx::experiments {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::function<ordered_json(const int&)> kEncode = [](const int& x) { return ordered_json(x); };
const std::function<int(const json&)> kDecode = [](const json& j) { return j.get<int>(); };

TEST(PlacedMapTest, SharesPartitionTheTasksAndComputeOnlyTheirOwn) {
  const std::vector<double> costs = {5, 1, 4, 4, 2, 8, 3};
  std::set<std::size_t> seen;
  for (int k = 0; k < 3; ++k) {
    std::atomic<int> calls{0};
    const PlacedResults<int> r = placed_map<int>(
        costs.size(), 2, costs, TaskPlacement{.shard = Shard{k, 3}},
        [&](std::size_t t) {
          ++calls;
          return static_cast<int>(10 * t);
        },
        kEncode, kDecode);
    EXPECT_EQ(static_cast<std::size_t>(calls.load()), r.computed.size());
    EXPECT_EQ(r.computed, shard_tasks(costs, Shard{k, 3}));
    for (const std::size_t t : r.computed) {
      EXPECT_EQ(r.results[t], static_cast<int>(10 * t));
      EXPECT_TRUE(seen.insert(t).second) << "task " << t << " in two shares";
    }
    const auto outcomes = shard_outcomes(r, kEncode);
    ASSERT_EQ(outcomes.size(), r.computed.size());
    for (const auto& [t, o] : outcomes) EXPECT_EQ(o, ordered_json({{"result", 10 * t}}));
  }
  EXPECT_EQ(seen.size(), costs.size());
}

TEST(PlacedMapTest, MergedOutcomesAreDecodedNotComputed) {
  std::map<std::size_t, json> merged = {{0, {{"result", 7}}}, {1, {{"result", 9}}}};
  const std::vector<double> costs = {1, 1};
  const auto never = [](std::size_t) -> int { throw std::logic_error("computed"); };
  const PlacedResults<int> r =
      placed_map<int>(2, 1, costs, TaskPlacement{.merged = &merged, .merged_source = "the shards a, b"}, never,
                      kEncode, kDecode);
  EXPECT_EQ(r.results, (std::vector<int>{7, 9}));
  // A count that is not the command's, a result that does not decode, and
  // an error carried in an outcome: each an InputError naming the shards.
  const std::vector<double> three = {1, 1, 1};
  EXPECT_THROW(placed_map<int>(3, 1, three, TaskPlacement{.merged = &merged, .merged_source = "s"}, never, kEncode,
                               kDecode),
               InputError);
  merged[1] = {{"result", "nine"}};
  try {
    placed_map<int>(2, 1, costs, TaskPlacement{.merged = &merged, .merged_source = "the shards a, b"}, never, kEncode,
                    kDecode);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().source, "the shards a, b");
    EXPECT_EQ(e.diagnostics().front().location, "/tasks/1/result");
  }
  merged[1] = {{"no result", 1}};
  EXPECT_THROW(placed_map<int>(2, 1, costs, TaskPlacement{.merged = &merged, .merged_source = "s"}, never, kEncode,
                               kDecode),
               InputError);
}

TEST(PlacedMapTest, KeptTasksAreReadAndComputedOnesKept) {
  std::map<std::size_t, ordered_json> store = {{2, {{"result", -2}}}};
  std::mutex mutex;
  TaskPlacement p;
  p.kept = [&](std::size_t t) -> std::optional<KeptOutcome> {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!store.contains(t)) return std::nullopt;
    return KeptOutcome{json::parse(store.at(t).dump()), "kept.json"};
  };
  p.keep = [&](std::size_t t, const ordered_json& outcome) {
    const std::lock_guard<std::mutex> lock(mutex);
    store[t] = outcome;
  };
  std::atomic<int> calls{0};
  const auto compute = [&](std::size_t t) {
    ++calls;
    return static_cast<int>(t);
  };
  const std::vector<double> costs = {1, 1, 1, 1};
  PlacedResults<int> r = placed_map<int>(4, 2, costs, p, compute, kEncode, kDecode);
  EXPECT_EQ(r.results, (std::vector<int>{0, 1, -2, 3}));
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(store.size(), 4u);
  r = placed_map<int>(4, 2, costs, p, compute, kEncode, kDecode);
  EXPECT_EQ(r.results, (std::vector<int>{0, 1, -2, 3}));
  EXPECT_EQ(calls.load(), 3) << "a rerun computes nothing kept";
}

TEST(ResultCacheTest, KeepsByIdentity) {
  const std::string dir = std::string(::testing::TempDir()) + "/result_cache_test";
  std::filesystem::remove_all(dir);
  const ResultCache cache("--results", dir, {"collective", "--nodes", "2"});
  const ordered_json a{{"algorithm", "ring"}, {"bytes", 1024}};
  const ordered_json b{{"algorithm", "ring"}, {"bytes", 2048}};
  EXPECT_FALSE(cache.load(a, {}).has_value());
  cache.store(a, {}, ordered_json{{"result", 1.5}});
  ASSERT_TRUE(cache.load(a, {}).has_value());
  EXPECT_EQ(cache.load(a, {})->outcome, json({{"result", 1.5}}));
  EXPECT_FALSE(cache.load(b, {}).has_value()) << "another task";
  const ResultCache same("--results", dir, {"collective", "--nodes", "2"});
  EXPECT_TRUE(same.load(a, {}).has_value()) << "a new cache on the same directory";
  const ResultCache other("--results", dir, {"collective", "--nodes", "4"});
  EXPECT_FALSE(other.load(a, {}).has_value()) << "another command";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  const ordered_json id = cache.identity(a, {});
  EXPECT_EQ(id["command"], ordered_json({"collective", "--nodes", "2"}));
  EXPECT_EQ(id["bytes"], 1024);
  EXPECT_TRUE(id.contains("zionsim_binary"));
}

TEST(ShardOfTest, OffExplicitOrNone) {
  EXPECT_FALSE(shard_of("off").has_value());
  EXPECT_EQ(shard_of("1/4"), (Shard{1, 4}));
  EXPECT_THROW(shard_of("4/4"), InputError);
}

}  // namespace
}  // namespace zx::experiments
