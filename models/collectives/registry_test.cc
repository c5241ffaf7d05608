// Tests of the collective registry: the built-ins are all present with
// descriptions, sorted; an unknown name is an input error that suggests the
// closest name and lists the valid ones; bad or unknown options are input
// errors naming the JSON pointer; adding a name twice is a programming error;
// merge() moves another registry's algorithms in with a description suffix.
// And a sweep: every built-in lowers every kind it supports, with its options
// at their defaults and with chunking, into a plan the checker proves right
// (n = 16, two ZionEX servers).

#include "models/collectives/registry.h"

#include <gtest/gtest.h>

#include "base/check.h"
#include "base/error.h"
#include "models/collectives/ring.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

CollectiveRegistry builtins() {
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  return registry;
}

std::string error_of(const CollectiveRegistry& registry, std::string_view name,
                     std::string_view options = {}) {
  try {
    registry.create(name, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RegistryTest, BuiltinsAreSortedWithDescriptions) {
  const CollectiveRegistry registry = builtins();
  EXPECT_EQ(registry.names(),
            (std::vector<std::string>{"direct", "double_binary_tree", "halving_doubling",
                                      "hierarchical", "nccl_p2p", "nvls", "pairwise", "ring", "tree"}));
  for (const auto& [name, description] : registry.describe()) {
    EXPECT_FALSE(description.empty()) << name;
    EXPECT_EQ(registry.create(name)->name(), name);
  }
}

TEST(RegistryTest, RolesGroupTheNames) {
  // Plan algorithms first, then cost models, then tuners, each sorted: the
  // order of listings and of "valid:" lists.
  CollectiveRegistry registry;
  const auto ring = [](json::ObjectReader& o) { return std::make_unique<RingAlgorithm>(parse_ring_options(o)); };
  registry.add("zeta_tuner", "t", ring, AlgorithmRole::kTuner);
  registry.add("b_model", "m", ring, AlgorithmRole::kCostModel);
  registry.add("y_plan", "p", ring);
  registry.add("a_model", "m", ring, AlgorithmRole::kCostModel);
  registry.add("x_plan", "p", ring, AlgorithmRole::kPlan);
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"x_plan", "y_plan", "a_model", "b_model", "zeta_tuner"}));
  EXPECT_EQ(registry.names(AlgorithmRole::kPlan), (std::vector<std::string>{"x_plan", "y_plan"}));
  EXPECT_EQ(registry.names(AlgorithmRole::kCostModel), (std::vector<std::string>{"a_model", "b_model"}));
  EXPECT_EQ(registry.role("y_plan"), AlgorithmRole::kPlan);
  EXPECT_EQ(registry.role("zeta_tuner"), AlgorithmRole::kTuner);
  EXPECT_EQ(registry.role("ring"), std::nullopt);
  std::vector<std::string> described;
  for (const auto& [name, description] : registry.describe()) described.push_back(name);
  EXPECT_EQ(described, registry.names());
  EXPECT_EQ(error_of(registry, "a_mdoel"),
            "unknown collective algorithm 'a_mdoel' (did you mean 'a_model'?); valid: x_plan, y_plan, a_model, "
            "b_model, zeta_tuner");
  // merge() keeps each entry's role.
  CollectiveRegistry other;
  other.add("c_model", "m", ring, AlgorithmRole::kCostModel);
  registry.merge(std::move(other));
  EXPECT_EQ(registry.role("c_model"), AlgorithmRole::kCostModel);
}

TEST(RegistryTest, UnknownNameSuggestsAndListsValidNames) {
  EXPECT_EQ(error_of(builtins(), "rign"),
            "unknown collective algorithm 'rign' (did you mean 'ring'?); valid: direct, "
            "double_binary_tree, halving_doubling, hierarchical, nccl_p2p, nvls, pairwise, ring, tree");
  EXPECT_EQ(error_of(builtins(), "xyzzy"),
            "unknown collective algorithm 'xyzzy'; valid: direct, double_binary_tree, "
            "halving_doubling, hierarchical, nccl_p2p, nvls, pairwise, ring, tree");
}

TEST(RegistryTest, OptionsAreCheckedWithPointers) {
  const CollectiveRegistry registry = builtins();
  EXPECT_EQ(error_of(registry, "ring", R"({"chunks": 0, "channels": 2})"),
            "options of collective algorithm 'ring': /chunks: expected an integer in [1, 1024], "
            "got 0");
  EXPECT_EQ(error_of(registry, "ring", R"({"chunk": 4})"),
            "options of collective algorithm 'ring': unknown key 'chunk' (did you mean "
            "'chunks'?)");
  EXPECT_EQ(error_of(registry, "direct", R"({"window": 4})"),
            "options of collective algorithm 'direct': unknown key 'window'");
  EXPECT_EQ(
      error_of(registry, "tree", R"([1])"),
      "options of collective algorithm 'tree': expected an object, got an array of 1 element");
  EXPECT_EQ(error_of(registry, "ring", R"({"chunks": 4, "channels": 2})"), "(no error)");
}

TEST(RegistryTest, DuplicateNameIsAProgrammingError) {
  CollectiveRegistry registry = builtins();
  EXPECT_THROW(registry.add("ring", "again", [](json::ObjectReader&) { return nullptr; }),
               InvariantError);
}

TEST(RegistryTest, MergeMovesAlgorithmsWithADescriptionSuffix) {
  CollectiveRegistry registry = builtins();
  CollectiveRegistry extra;
  extra.add("mine", "my algorithm",
            [](json::ObjectReader&) { return std::make_unique<RingAlgorithm>(); });
  registry.merge(std::move(extra), " [plug-in libmine.so]");
  EXPECT_TRUE(registry.contains("mine"));
  EXPECT_EQ(registry.names().size(), builtins().names().size() + 1);
  for (const auto& [name, description] : registry.describe()) {
    if (name == "mine") {
      EXPECT_EQ(description, "my algorithm [plug-in libmine.so]");
    }
  }
  EXPECT_EQ(registry.create("mine")->name(), "ring");
  // A clash is a programming error: the loaders check contains() first.
  CollectiveRegistry clash;
  clash.add("ring", "again",
            [](json::ObjectReader&) { return std::make_unique<RingAlgorithm>(); });
  EXPECT_THROW(registry.merge(std::move(clash)), InvariantError);
}

TEST(RegistryTest, EveryBuiltinLowersEveryKindItSupports) {
  const CollectiveRegistry registry = builtins();
  const TopologyView servers = TopologyView::packed(16, 8);
  // NVLS lowers only inside one NVLink domain whose switch reduces.
  TopologyView domain = TopologyView::packed(16, 16);
  domain.set_switch_reduces(true);
  int lowered = 0;
  for (const std::string& name : registry.names()) {
    for (std::string_view options : {"", R"({"chunks": 2})"}) {
      if (!options.empty() && (name == "direct" || name == "pairwise" ||
                               name == "halving_doubling" || name == "hierarchical" || name == "nccl_p2p")) {
        continue;  // no options
      }
      const auto algorithm = registry.create(name, options);
      const TopologyView& view = name == "nvls" ? domain : servers;
      for (CollectiveKind kind : all_collective_kinds()) {
        CollectiveRequest req{.kind = kind, .bytes_per_rank = sim::Bytes(1 << 16), .root = 5};
        for (int i = 0; i < 16; ++i) req.ranks.push_back(100 + i);
        if (!algorithm->supports(kind)) {
          EXPECT_THROW(algorithm->lower(req, view), InputError) << name;
          continue;
        }
        const auto report = testing::check_plan(algorithm->lower(req, view), req);
        EXPECT_TRUE(report.ok()) << name << " " << to_string(kind) << "\n" << report.summary();
        ++lowered;
      }
    }
  }
  EXPECT_EQ(lowered, 2 * 5 + 2 * 1 + 2 * 2 + 1 + 4 + 1 + 1 + 1 + 2 * 3);
}

}  // namespace
}  // namespace zx::models::collectives
