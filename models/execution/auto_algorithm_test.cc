// Tests of "auto", the network backend's tuner: it runs each call with the
// candidate that is fastest alone on an idle network, so its time is the
// least of the candidates' own times, to the picosecond; ties go to the
// first candidate; a choice is made once per distinct call; candidates that
// cannot run a call are skipped, with their reason kept; its options are
// validated.

#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "models/collectives/registry.h"
#include "models/execution/network_backend.h"
#include "models/execution/testing/backend_rig.h"
#include "models/network/flow_network.h"
#include "models/network/topology_links.h"
#include "topology/presets.h"
#include "topology/router.h"
#include "topology/topology.h"

namespace zx::models {
namespace {

using sim::Duration;

using Rig = testing::BackendRig;

collectives::CollectiveRequest request_of(collectives::CollectiveKind kind, int ranks, std::int64_t bytes) {
  collectives::CollectiveRequest r;
  r.kind = kind;
  for (int i = 0; i < ranks; ++i) r.ranks.push_back(i);
  r.bytes_per_rank = sim::Bytes(bytes);
  return r;
}

// The time of `request` run with `algorithm` on a fresh network; nullopt
// when the algorithm cannot run it.
std::optional<Duration> time_alone(int nodes, std::string_view preset, const NetworkBackendOptions& options,
                                   const collectives::CollectiveRequest& request, const std::string& algorithm) {
  Rig rig(nodes, preset);
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
  try {
    backend.run(request, algorithm, {});
  } catch (const InputError&) {
    return std::nullopt;
  }
  rig.sim.run();
  return rig.sim.now().since_start();
}

NetworkBackendOptions options_for(std::string_view preset) {
  NetworkBackendOptions o;
  o.software = {.launch = Duration::ns(6600), .transfer = Duration::ns(400), .network_transfer = Duration::ns(1200)};
  if (preset == "hgx") o.nvls_efficiency = 0.731;
  return o;
}

// Across clusters, kinds and sizes: auto's time is the least candidate's
// time alone (exactly: the same plan on the same idle links), its choice is
// the first candidate with that time, and the times it recorded are the
// candidates' own. By default the trials race and a loser's stops at the
// winner's time (`slower_than`, which its own time exceeds); with
// "exhaustive" each has its full time; both choose the same.
TEST(AutoAlgorithmTest, RunsTheFastestCandidate) {
  struct Case {
    std::string_view preset;
    int nodes;
    collectives::CollectiveKind kind;
  };
  const Case cases[] = {{"zionex", 2, collectives::CollectiveKind::kAllReduce},
                        {"hgx", 1, collectives::CollectiveKind::kAllReduce},
                        {"hgx", 1, collectives::CollectiveKind::kAllGather},
                        {"zionex", 2, collectives::CollectiveKind::kAllToAll}};
  std::set<std::string> chosen;
  int stopped = 0;
  for (const Case& c : cases) {
    for (std::int64_t bytes : {std::int64_t{8} << 10, std::int64_t{64} << 20}) {
      for (const bool exhaustive : {false, true}) {
        NetworkBackendOptions options = options_for(c.preset);
        const collectives::CollectiveRequest request = request_of(c.kind, c.nodes * 8, bytes);
        Rig rig(c.nodes, c.preset);
        NetworkBackendOptions with = options;
        if (exhaustive) with.algorithm_options[kAutoAlgorithm] = R"({"exhaustive": true})";
        NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, with);
        backend.run(request, kAutoAlgorithm, {});
        rig.sim.run();
        const std::string label = fmt::format("{} x{} {} {}{}", c.preset, c.nodes, collectives::to_string(c.kind),
                                              bytes, exhaustive ? " exhaustive" : "");
        ASSERT_EQ(backend.auto_choices().size(), 1u) << label;
        const AutoChoice& choice = backend.auto_choices().front();
        std::optional<Duration> best;
        std::string best_name;
        std::size_t runs_kind = 0;
        std::vector<const AutoChoice::Candidate*> losers;
        for (const std::string& name : rig.registry.names(collectives::AlgorithmRole::kPlan)) {
          // nccl_p2p is a candidate only when listed (NcclP2pOnlyWhenListed).
          if (name == "nccl_p2p" || !rig.registry.create(name)->supports(c.kind)) continue;
          ++runs_kind;
          const std::optional<Duration> t = time_alone(c.nodes, c.preset, options, request, name);
          const auto it = std::find_if(choice.candidates.begin(), choice.candidates.end(),
                                       [&](const AutoChoice::Candidate& k) { return k.algorithm == name; });
          ASSERT_NE(it, choice.candidates.end()) << label << " " << name;
          EXPECT_EQ(it->refused.empty(), t.has_value()) << label << " " << name;
          if (it->slower_than) {
            EXPECT_FALSE(exhaustive) << label << " " << name;
            EXPECT_FALSE(it->time.has_value()) << label << " " << name;
            ASSERT_TRUE(t.has_value()) << label << " " << name;
            EXPECT_GT(*t, *it->slower_than) << label << " " << name;
            losers.push_back(&*it);
            ++stopped;
          } else {
            EXPECT_EQ(it->time, t) << label << " " << name;
          }
          if (t && (!best || *t < *best)) {
            best = t;
            best_name = name;
          }
        }
        EXPECT_EQ(choice.candidates.size(), runs_kind) << label;  // only those that run the kind
        ASSERT_TRUE(best.has_value()) << label;
        EXPECT_EQ(rig.sim.now().since_start(), *best) << label;
        EXPECT_EQ(choice.chosen, best_name) << label;
        for (const AutoChoice::Candidate* k : losers) EXPECT_EQ(k->slower_than, best) << label << " " << k->algorithm;
        EXPECT_EQ(choice.ranks, c.nodes * 8);
        EXPECT_EQ(choice.bytes_per_rank.count(), bytes);
        chosen.insert(choice.chosen);
      }
    }
  }
  // The cases are not all won by one algorithm (else this proves little),
  // and the race stopped some losers early.
  EXPECT_GE(chosen.size(), 3u);
  EXPECT_GT(stopped, 0);
}

// On one ZionEX server the two-level algorithm is a ring (one level): the
// same time, so the candidate listed first wins.
TEST(AutoAlgorithmTest, TiesGoToTheCandidateListedFirst) {
  const collectives::CollectiveRequest request = request_of(collectives::CollectiveKind::kAllReduce, 8, 1 << 20);
  const NetworkBackendOptions plain = options_for("zionex");
  ASSERT_EQ(time_alone(1, "zionex", plain, request, "ring"), time_alone(1, "zionex", plain, request, "hierarchical"));
  for (const auto& [list, first] : {std::pair<const char*, const char*>{R"(["ring", "hierarchical"])", "ring"},
                                    {R"(["hierarchical", "ring"])", "hierarchical"}}) {
    Rig rig(1, "zionex");
    NetworkBackendOptions options = plain;
    options.algorithm_options[kAutoAlgorithm] = fmt::format(R"({{"candidates": {}}})", list);
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    backend.run(request, kAutoAlgorithm, {});
    rig.sim.run();
    ASSERT_EQ(backend.auto_choices().size(), 1u);
    EXPECT_EQ(backend.auto_choices().front().chosen, first) << list;
    EXPECT_EQ(backend.auto_choices().front().candidates.size(), 2u);
  }
}

// A call seen before reuses its choice: the same request twice is one
// choice; another size, another group or another all-to-all-v matrix (of
// the same total) is a new one. The default algorithm "auto" works like a
// named one.
TEST(AutoAlgorithmTest, ChoosesOncePerDistinctCall) {
  Rig rig(1, "zionex");
  NetworkBackendOptions options = options_for("zionex");
  options.default_algorithms["all_reduce"] = kAutoAlgorithm;
  options.default_algorithms["all_to_all"] = kAutoAlgorithm;
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
  const collectives::CollectiveRequest a = request_of(collectives::CollectiveKind::kAllReduce, 8, 1 << 20);
  int done = 0;
  const auto count = [&] { ++done; };
  backend.run(a, kAutoAlgorithm, count);
  backend.run(a, "", count);
  EXPECT_EQ(backend.auto_choices().size(), 1u);
  backend.run(request_of(collectives::CollectiveKind::kAllReduce, 8, 2 << 20), kAutoAlgorithm, count);
  backend.run(request_of(collectives::CollectiveKind::kAllReduce, 4, 1 << 20), kAutoAlgorithm, count);
  EXPECT_EQ(backend.auto_choices().size(), 3u);
  collectives::CollectiveRequest v = request_of(collectives::CollectiveKind::kAllToAll, 2, 0);
  v.all_to_all_v_bytes = {{0, 4096}, {1024, 0}};
  backend.run(v, "", count);
  backend.run(v, "", count);
  v.all_to_all_v_bytes = {{0, 1024}, {4096, 0}};
  backend.run(v, "", count);
  ASSERT_EQ(backend.auto_choices().size(), 5u);
  EXPECT_EQ(backend.auto_choices()[3].bytes_per_rank.count(), 4096);  // the most any rank sends
  rig.sim.run();
  EXPECT_EQ(done, 7);
}

// Candidates that cannot run the call are skipped with their reason: NVLink
// SHARP on an A100 server (its switch does not reduce), an all-to-all
// algorithm for an all-reduce. With none left the call is an input error
// that gives each reason.
TEST(AutoAlgorithmTest, SkipsCandidatesThatCannotRunTheCall) {
  const collectives::CollectiveRequest request = request_of(collectives::CollectiveKind::kAllReduce, 8, 1 << 20);
  {
    Rig rig(1, "zionex");
    NetworkBackendOptions options = options_for("zionex");
    options.algorithm_options[kAutoAlgorithm] = R"({"candidates": ["nvls", "direct", "ring"]})";
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    backend.run(request, kAutoAlgorithm, {});
    rig.sim.run();
    const AutoChoice& c = backend.auto_choices().at(0);
    EXPECT_EQ(c.chosen, "ring");
    ASSERT_EQ(c.candidates.size(), 3u);
    EXPECT_FALSE(c.candidates[0].time.has_value());
    EXPECT_NE(c.candidates[0].refused.find("switch"), std::string::npos) << c.candidates[0].refused;
    EXPECT_EQ(c.candidates[1].refused, "does not run all_reduce");
    EXPECT_EQ(c.candidates[2].time, time_alone(1, "zionex", options_for("zionex"), request, "ring"));
  }
  Rig rig(1, "zionex");
  NetworkBackendOptions options = options_for("zionex");
  options.algorithm_options[kAutoAlgorithm] = R"({"candidates": ["nvls", "pairwise"]})";
  NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
  try {
    backend.run(request, kAutoAlgorithm, {});
    FAIL() << "expected an input error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("auto: no candidate runs this all_reduce of 8 ranks"), std::string::npos) << what;
    EXPECT_NE(what.find("nvls: "), std::string::npos) << what;
    EXPECT_NE(what.find("pairwise: does not run all_reduce"), std::string::npos) << what;
  }
  EXPECT_TRUE(backend.auto_choices().empty());
}

TEST(AutoAlgorithmTest, OptionsAreValidated) {
  collectives::CollectiveRegistry registry;
  collectives::register_builtin_collectives(registry);
  register_backend_algorithms(registry);
  EXPECT_TRUE(parse_auto_options("", registry).candidates.empty());
  EXPECT_EQ(parse_auto_options(R"({"candidates": ["nvls", "ring"]})", registry).candidates,
            (std::vector<std::string>{"nvls", "ring"}));
  EXPECT_FALSE(parse_auto_options("", registry).exhaustive);
  EXPECT_TRUE(parse_auto_options(R"({"exhaustive": true})", registry).exhaustive);
  const std::pair<const char*, const char*> bad[] = {
      {R"({"candidate": ["ring"]})", "unknown key 'candidate' (did you mean 'candidates'?)"},
      {R"({"candidates": []})", "/candidates: expected at least one algorithm"},
      {R"({"candidates": ["rign"]})", "/candidates/0: unknown collective algorithm 'rign' (did you mean 'ring'?)"},
      {R"({"candidates": ["ring", "ring"]})", "/candidates/1: 'ring' is listed twice"},
      {R"({"candidates": ["nccl"]})", "/candidates/0: 'nccl' is NCCL's closed-form cost model"},
      {R"({"candidates": ["auto"]})", "/candidates/0: 'auto' cannot be its own candidate"},
      {R"({"candidates": "ring"})", "/candidates: expected an array"},
      {R"([1])", "expected an object"},
      {R"({"exhaustive": 1})", "/exhaustive: expected true or false, got 1"},
      {R"({"exhaustiv": true})", "unknown key 'exhaustiv' (did you mean 'exhaustive'?)"},
  };
  for (const auto& [text, expected] : bad) {
    try {
      (void)parse_auto_options(text, registry);
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << text << ": " << e.what();
    }
  }
}

// NCCL's point-to-point all-to-all is no default candidate (its trials cost
// the flow model too much at scale), but a list may name it.
TEST(AutoAlgorithmTest, NcclP2pOnlyWhenListed) {
  const collectives::CollectiveRequest request = request_of(collectives::CollectiveKind::kAllToAll, 16, 1 << 20);
  for (bool listed : {false, true}) {
    Rig rig(2, "zionex");
    NetworkBackendOptions options = options_for("zionex");
    if (listed) options.algorithm_options[kAutoAlgorithm] = R"({"candidates": ["nccl_p2p", "direct"]})";
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    backend.run(request, kAutoAlgorithm, {});
    rig.sim.run();
    std::vector<std::string> names;
    for (const AutoChoice::Candidate& c : backend.auto_choices().at(0).candidates) names.push_back(c.algorithm);
    EXPECT_EQ(std::find(names.begin(), names.end(), "nccl_p2p") != names.end(), listed);
    EXPECT_NE(std::find(names.begin(), names.end(), "direct"), names.end());
  }
}

}  // namespace
}  // namespace zx::models
