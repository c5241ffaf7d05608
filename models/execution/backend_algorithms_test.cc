// Tests of NCCL's cost model and the tuner as registry entries: their names
// and roles, the options each object carries (the version a name fixes,
// NCCL_ALGO/NCCL_PROTO, the tuner's candidates), the exact errors of bad
// options, and that neither lowers to a plan. And the backend dispatching on
// the role: "nccl" runs no flow, "auto" runs a plan algorithm's flows.

#include "models/execution/backend_algorithms.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/collectives/topology_view.h"
#include "models/execution/network_backend.h"
#include "models/execution/testing/backend_rig.h"

namespace zx::models {
namespace {

namespace mc = collectives;

mc::CollectiveRegistry full_registry() {
  mc::CollectiveRegistry registry;
  mc::register_builtin_collectives(registry);
  register_backend_algorithms(registry);
  return registry;
}

std::string error_of(const mc::CollectiveRegistry& registry, std::string_view name, std::string_view options) {
  try {
    (void)registry.create(name, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BackendAlgorithmsTest, RegisteredWithTheirRoles) {
  mc::CollectiveRegistry registry;
  register_backend_algorithms(registry);
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"nccl", "nccl-2.13", "nccl-2.20", "auto"}));
  EXPECT_EQ(registry.names(mc::AlgorithmRole::kCostModel),
            (std::vector<std::string>{"nccl", "nccl-2.13", "nccl-2.20"}));
  EXPECT_EQ(registry.role("auto"), mc::AlgorithmRole::kTuner);
  EXPECT_EQ(backend_algorithm_role("nccl-2.13"), mc::AlgorithmRole::kCostModel);
  EXPECT_EQ(backend_algorithm_role("auto"), mc::AlgorithmRole::kTuner);
  EXPECT_EQ(backend_algorithm_role("ring"), std::nullopt);
  EXPECT_TRUE(is_nccl_cost_model("nccl"));
  EXPECT_FALSE(is_nccl_cost_model("auto"));
  EXPECT_TRUE(is_auto_tuner("auto"));
  EXPECT_FALSE(is_auto_tuner("ring"));
  // Registered first, they keep plug-ins and schedule files off their names.
  mc::CollectiveRegistry full = full_registry();
  EXPECT_TRUE(full.contains("nccl"));
  EXPECT_EQ(full.names().back(), "auto");
}

TEST(BackendAlgorithmsTest, CostModelObjectsCarryVersionAndNcclVariables) {
  const mc::CollectiveRegistry registry = full_registry();
  const auto v213 = registry.create("nccl-2.13");
  const auto& m213 = dynamic_cast<const NcclCostModelAlgorithm&>(*v213);
  EXPECT_EQ(m213.version(), nccl::NcclVersion::kV2_13);
  EXPECT_EQ(dynamic_cast<const NcclCostModelAlgorithm&>(*registry.create("nccl-2.20")).version(),
            nccl::NcclVersion::kV2_20);
  const auto plain = registry.create("nccl", R"({"algo": "Ring", "proto": "^LL128"})");
  const auto& model = dynamic_cast<const NcclCostModelAlgorithm&>(*plain);
  EXPECT_EQ(model.version(), std::nullopt);  // the backend's configured constants
  nccl::NcclAllowed expected;
  nccl::parse_nccl_algo("Ring", expected);
  nccl::parse_nccl_proto("^LL128", expected);
  EXPECT_EQ(model.allowed().algorithms, expected.algorithms);
  EXPECT_EQ(model.allowed().protocols, expected.protocols);
  // The machine input takes the object's version, else the options'.
  NetworkBackendOptions options;
  options.nccl_version = nccl::NcclVersion::kV2_20;
  EXPECT_EQ(nccl_machine_input(options, m213).version, nccl::NcclVersion::kV2_13);
  EXPECT_EQ(nccl_machine_input(options, model).version, nccl::NcclVersion::kV2_20);
  EXPECT_EQ(nccl_machine_input(options, "nccl-2.13").version, nccl::NcclVersion::kV2_13);
  EXPECT_THROW((void)nccl_machine_input(options, "ring"), InputError);
}

TEST(BackendAlgorithmsTest, BadOptionsGiveExactErrors) {
  const mc::CollectiveRegistry registry = full_registry();
  EXPECT_EQ(error_of(registry, "nccl", R"({"algoo": "Ring"})"),
            "options of collective algorithm 'nccl': unknown key 'algoo' (did you mean 'algo'?)");
  EXPECT_EQ(error_of(registry, "auto", R"({"candidates": ["ring", "nccl", "auto", "rign", "ring"]})"),
            "options of collective algorithm 'auto': /candidates/1: 'nccl' is NCCL's closed-form cost model, not a "
            "plan the flows carry; the candidates are algorithms: direct, double_binary_tree, halving_doubling, "
            "hierarchical, nccl_p2p, nvls, pairwise, ring, tree\n"
            "options of collective algorithm 'auto': /candidates/2: 'auto' cannot be its own candidate\n"
            "options of collective algorithm 'auto': /candidates/3: unknown collective algorithm 'rign' (did you "
            "mean 'ring'?); valid: direct, double_binary_tree, halving_doubling, hierarchical, nccl_p2p, nvls, "
            "pairwise, ring, tree\n"
            "options of collective algorithm 'auto': /candidates/4: 'ring' is listed twice");
  // parse_auto_options reads the same text the same way.
  EXPECT_EQ(parse_auto_options(R"({"candidates": ["nvls", "ring"], "exhaustive": true})", registry).candidates,
            (std::vector<std::string>{"nvls", "ring"}));
}

TEST(BackendAlgorithmsTest, NeitherLowersToAPlan) {
  const mc::CollectiveRegistry registry = full_registry();
  mc::CollectiveRequest request;
  request.ranks = {0, 1};
  request.bytes_per_rank = sim::Bytes(1024);
  const mc::TopologyView view = mc::TopologyView::packed(2, 8);
  EXPECT_THROW((void)registry.create("nccl")->lower(request, view), InputError);
  EXPECT_THROW((void)registry.create("auto")->lower(request, view), InputError);
}

TEST(BackendAlgorithmsTest, BackendDispatchesOnTheRole) {
  mc::CollectiveRequest request;
  for (int r = 0; r < 16; ++r) request.ranks.push_back(r);
  request.bytes_per_rank = sim::Bytes(1 << 20);
  // NCCL's cost model: a time, no flow.
  {
    testing::BackendRig rig(2);
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry);
    backend.run(request, "nccl", {});
    rig.sim.run();
    EXPECT_GT(rig.sim.now().since_start(), sim::Duration::zero());
    EXPECT_EQ(rig.network.flows_started(), 0u);
    EXPECT_EQ(backend.nccl_choices().size(), 1u);
  }
  // The tuner: a plan algorithm's flows, and its choice recorded.
  {
    testing::BackendRig rig(2);
    NetworkBackendOptions options;
    options.algorithm_options["auto"] = R"({"candidates": ["ring"]})";
    NetworkBackend backend(rig.sim, rig.network, rig.router, rig.registry, options);
    backend.run(request, "auto", {});
    rig.sim.run();
    EXPECT_GT(rig.network.flows_started(), 0u);
    ASSERT_EQ(backend.auto_choices().size(), 1u);
    EXPECT_EQ(backend.auto_choices().front().chosen, "ring");
  }
  // Without the backend's entries in its registry, the names are unknown.
  {
    testing::BackendRig rig(2);
    mc::CollectiveRegistry plans;
    mc::register_builtin_collectives(plans);
    NetworkBackend backend(rig.sim, rig.network, rig.router, plans);
    EXPECT_THROW(backend.run(request, "nccl", {}), InputError);
  }
}

}  // namespace
}  // namespace zx::models
