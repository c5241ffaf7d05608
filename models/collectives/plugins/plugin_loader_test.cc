// Tests of the shared-library plug-in loader: the worked example
// (libbidirectional_ring.so) loads, appears in the registry's listing with
// its plug-in tag, takes options, and lowers all-reduces the plan checker
// proves right and that use both directions of the ring; and each way a
// plug-in can be unusable (no file, not a library, not a plug-in, API
// version 2, a name clash, loaded twice) is an input error with its exact
// text that leaves the registry as it was.

#include "models/collectives/plugins/plugin_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <utility>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

std::string runfile(const std::string& name) {
  const std::string relative = "models/collectives/plugins/" + name;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return relative;
  return std::string(srcdir) + "/" + workspace + "/" + relative;
}

CollectiveRegistry builtins() {
  CollectiveRegistry registry;
  register_builtin_collectives(registry);
  return registry;
}

std::string load_error(const std::string& path, CollectiveRegistry& registry) {
  try {
    load_collective_plugin(path, registry);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

CollectiveRequest all_reduce(int n, std::int64_t bytes, DataType dtype = DataType::kFp32) {
  CollectiveRequest r{
      .kind = CollectiveKind::kAllReduce, .bytes_per_rank = sim::Bytes(bytes), .dtype = dtype};
  for (int i = 0; i < n; ++i) r.ranks.push_back(i);
  return r;
}

TEST(PluginLoaderTest, ExamplePluginLoadsAndIsListed) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("libbidirectional_ring.so");
  EXPECT_EQ(load_collective_plugin(path, registry), std::vector<std::string>{"bidirectional_ring"});
  EXPECT_TRUE(registry.contains("bidirectional_ring"));
  bool listed = false;
  for (const auto& [name, description] : registry.describe()) {
    if (name != "bidirectional_ring") continue;
    listed = true;
    EXPECT_THAT(description, ::testing::StartsWith("all-reduce: two half-buffer rings"));
    EXPECT_THAT(description, ::testing::EndsWith(" [plug-in libbidirectional_ring.so]"));
  }
  EXPECT_TRUE(listed);
  EXPECT_EQ(registry.names().size(), builtins().names().size() + 1);
}

TEST(PluginLoaderTest, ExamplePluginLowersPlansTheCheckerProves) {
  CollectiveRegistry registry = builtins();
  load_collective_plugin(runfile("libbidirectional_ring.so"), registry);
  for (const std::string options : {"", R"({"chunks": 3})"}) {
    const auto algorithm = registry.create("bidirectional_ring", options);
    EXPECT_EQ(algorithm->name(), "bidirectional_ring");
    EXPECT_TRUE(algorithm->supports(CollectiveKind::kAllReduce));
    EXPECT_FALSE(algorithm->supports(CollectiveKind::kAllToAll));
    for (const int n : {1, 2, 3, 8, 16}) {
      for (const std::int64_t bytes : {0, 4, 1000, 1 << 20}) {
        const CollectiveRequest req = all_reduce(n, bytes);
        const CollectivePlan plan = algorithm->lower(req, TopologyView::packed(n, 8));
        const testing::PlanReport report = testing::check_plan(plan, req);
        EXPECT_TRUE(report.ok()) << "n=" << n << " bytes=" << bytes << " options=" << options
                                 << "\n"
                                 << report.summary();
      }
    }
  }
  // Both directions: every rank sends to both ring neighbours, and each
  // sends 2(n-1)/n of the buffer in all, as the one-way ring does.
  const auto algorithm = registry.create("bidirectional_ring");
  const CollectiveRequest req = all_reduce(8, 8 * 1024);
  const CollectivePlan plan = algorithm->lower(req, TopologyView::packed(8, 8));
  std::set<std::pair<int, int>> links;
  for (const Step& step : plan.steps) {
    for (const Transfer& x : step.transfers) links.emplace(x.src, x.dst);
  }
  EXPECT_EQ(links.size(), 16u);
  const testing::PlanReport report = testing::check_plan(plan, req);
  for (const sim::Bytes sent : report.bytes_sent) EXPECT_EQ(sent, sim::Bytes(2 * 7 * 1024));
  EXPECT_EQ(report.critical_path_steps, 14u);
}

TEST(PluginLoaderTest, PluginOptionsAreChecked) {
  CollectiveRegistry registry = builtins();
  load_collective_plugin(runfile("libbidirectional_ring.so"), registry);
  try {
    registry.create("bidirectional_ring", R"({"chunks": 0, "chunkz": 2})");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "options of collective algorithm 'bidirectional_ring': /chunks: expected an integer "
              "in [1, 1024], got 0\n"
              "options of collective algorithm 'bidirectional_ring': unknown key 'chunkz' (did "
              "you mean 'chunks'?)");
  }
  // A request the plug-in cannot lower: its own InputError reaches the caller.
  CollectiveRequest bad = all_reduce(4, 64);
  bad.kind = CollectiveKind::kAllToAll;
  EXPECT_THROW(registry.create("bidirectional_ring")->lower(bad, TopologyView::packed(4, 8)),
               InputError);
}

TEST(PluginLoaderTest, IncompatiblePluginIsRefused) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("libincompatible_plugin.so");
  EXPECT_EQ(load_error(path, registry),
            "plug-in " + path +
                " was built for collective plug-in API version 2; this zionsim supports version 1 "
                "(rebuild the plug-in against this zionsim's headers)");
  EXPECT_EQ(registry.names(), builtins().names());
}

TEST(PluginLoaderTest, MissingFileIsRefused) {
  CollectiveRegistry registry = builtins();
  EXPECT_EQ(load_error("/nonexistent/libmine.so", registry),
            "plug-in /nonexistent/libmine.so: no such file");
}

TEST(PluginLoaderTest, FileThatIsNotALibraryIsRefusedWithDlerror) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("testdata/not_a_library.so");
  const std::string error = load_error(path, registry);
  // The tail is dlerror()'s, which names the file and says why.
  EXPECT_THAT(error, ::testing::StartsWith("plug-in " + path + " cannot be loaded: "));
  EXPECT_THAT(error, ::testing::HasSubstr("not_a_library.so"));
}

TEST(PluginLoaderTest, LibraryWithoutEntryPointsIsRefused) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("libnot_a_plugin.so");
  EXPECT_EQ(load_error(path, registry),
            "plug-in " + path +
                " does not export zionsim_collective_plugin_api_version(); is it a zionsim "
                "collective plug-in? (see models/collectives/plugins/plugin_api.h)");
}

TEST(PluginLoaderTest, NameClashIsRefusedAndNothingIsAdded) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("libclashing_plugin.so");
  EXPECT_EQ(load_error(path, registry),
            "plug-in " + path +
                " registers collective algorithm 'ring', which is already registered (by zionsim "
                "or an earlier plug-in)");
  EXPECT_FALSE(registry.contains("another_ring"));
  EXPECT_EQ(registry.names(), builtins().names());
}

TEST(PluginLoaderTest, LoadingTwiceIsANameClash) {
  CollectiveRegistry registry = builtins();
  const std::string path = runfile("libbidirectional_ring.so");
  load_collective_plugin(path, registry);
  EXPECT_EQ(load_error(path, registry),
            "plug-in " + path +
                " registers collective algorithm 'bidirectional_ring', which is already "
                "registered (by zionsim or an earlier plug-in)");
}

// A plug-in's plans are checked as schedule files are: each wrong plan is an
// input error naming the plug-in, the algorithm and the request, with the
// plan checker's findings.
std::string lower_error(const CollectiveRegistry& registry, const std::string& name, int n) {
  const auto algorithm = registry.create(name);
  try {
    algorithm->lower(all_reduce(n, 1024), TopologyView::packed(n, 8));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PluginLoaderTest, WrongPlansOfAPluginAreInputErrors) {
  CollectiveRegistry registry = builtins();
  load_collective_plugin(runfile("libfaulty_plugin.so"), registry);
  const std::string what =
      "collective algorithm '{}' of plug-in libfaulty_plugin.so (all_reduce of 1024 bytes per "
      "rank on 4 ranks) ";
  const auto prefix = [&](const std::string& name) {
    std::string s = what;
    s.replace(s.find("{}"), 2, name);
    return s;
  };
  EXPECT_EQ(lower_error(registry, "throws", 4), prefix("throws") + "failed: the plug-in ran out of ideas");
  EXPECT_EQ(lower_error(registry, "waits_on_later_step", 4),
            prefix("waits_on_later_step") +
                "returned a wrong plan:\n  step 0: follows step 1, which is not earlier");
  EXPECT_EQ(lower_error(registry, "rank_out_of_range", 4),
            prefix("rank_out_of_range") + "returned a wrong plan:\n  step 0 transfer 0: bad endpoints 0 -> 9");
  EXPECT_EQ(lower_error(registry, "short_transfer", 4),
            prefix("short_transfer") +
                "returned a wrong plan:\n  step 0 transfer 0: size 1 but its chunks hold 1024 bytes");
  EXPECT_EQ(lower_error(registry, "empty", 4),
            prefix("empty") + "returned a wrong plan:\n  chunks hold 0 bytes, the buffer is 1024");
  // Well formed, but it reduces nothing: the replay finds the wrong result.
  EXPECT_THAT(lower_error(registry, "no_reduction", 4),
              ::testing::StartsWith(prefix("no_reduction") +
                                    "returned a wrong plan:\n  rank 0 ends with chunk 0 = {0}, "
                                    "expected {0,1,2,3}"));
}

TEST(PluginLoaderTest, CheckedPluginAlgorithmKeepsItsNameAndPlans) {
  // The checks change nothing of a right plan: the wrapped example lowers the
  // same plan, step for step, as the checker sees it.
  CollectiveRegistry registry = builtins();
  load_collective_plugin(runfile("libbidirectional_ring.so"), registry);
  const auto algorithm = registry.create("bidirectional_ring");
  EXPECT_EQ(algorithm->name(), "bidirectional_ring");
  const CollectiveRequest req = all_reduce(8, 8 * 1024);
  const CollectivePlan first = algorithm->lower(req, TopologyView::packed(8, 8));
  const CollectivePlan again = algorithm->lower(req, TopologyView::packed(8, 8));  // replay cached
  EXPECT_EQ(first.steps.size(), again.steps.size());
  EXPECT_EQ(testing::check_plan(first, req).total_bytes, testing::check_plan(again, req).total_bytes);
}

}  // namespace
}  // namespace zx::models::collectives
