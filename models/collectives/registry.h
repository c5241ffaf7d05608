// File: models/collectives/registry.h
//
// Collective algorithms by name (STYLE.md 10.5): a registry of factories with
// one-line descriptions, filled explicitly by register_builtin_collectives()
// (no static self-registration: Bazel drops unreferenced objects from static
// libraries). Each factory parses its algorithm's typed options from JSON at
// this boundary and reports every problem with its JSON pointer. Names and
// "valid: ..." errors follow SimGrid's ModuleGroup.

#ifndef ZIONSIM_MODELS_COLLECTIVES_REGISTRY_H_
#define ZIONSIM_MODELS_COLLECTIVES_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/collectives/collective_algorithm.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models::collectives {

/// How the executor carries out the calls of a registered algorithm.
enum class AlgorithmRole {
  /// lower() gives a plan of transfers that the network model carries: the
  /// built-in algorithms, plug-ins and schedule files.
  kPlan,
  /// A closed-form model predicts the call's time; nothing is lowered and no
  /// flow runs (NCCL's own cost model: "nccl", "nccl-2.13", "nccl-2.20").
  kCostModel,
  /// Picks, for each distinct call, one of the plan algorithms, which then
  /// runs the call (the network backend's "auto").
  kTuner,
};

class CollectiveRegistry {
 public:
  /// Builds an algorithm from its options object (read keys from it; the
  /// registry reports unknown keys and throws).
  using Factory = std::function<std::unique_ptr<CollectiveAlgorithm>(json::ObjectReader& options)>;

  /// Adds an algorithm. A duplicate name is a programming error (InvariantError).
  void add(std::string name, std::string description, Factory factory,
           AlgorithmRole role = AlgorithmRole::kPlan);

  /// Moves every algorithm of `other` here, appending `description_suffix` to
  /// each description. A name taken here is a programming error: callers that
  /// take names from users (plug-ins, schedule files) check contains() first
  /// and report an InputError. The plug-in loader stages a plug-in's
  /// registrations in a fresh registry and merges them only once all checks pass.
  void merge(CollectiveRegistry&& other, std::string_view description_suffix = {});
  /// Replaces every factory f by wrap(name, f): how the plug-in loader puts
  /// its checks around the algorithms a plug-in registered.
  void wrap_factories(const std::function<Factory(const std::string& name, Factory inner)>& wrap);

  /// The algorithm `name` with options from `options_json` (a JSON object;
  /// empty text means {}). Throws zx::InputError for an unknown name, e.g.
  ///   unknown collective algorithm 'rign' (did you mean 'ring'?); valid: direct, ...
  /// or for bad options, e.g.
  ///   options of collective algorithm 'ring': /chunks: expected an integer in [1, 1024], got 0
  std::unique_ptr<CollectiveAlgorithm> create(std::string_view name,
                                              std::string_view options_json = {}) const;

  bool contains(std::string_view name) const { return entries_.contains(name); }
  /// Every name: the plan algorithms, then the cost models, then the
  /// tuners, each group sorted (the order listings and "valid:" lists use).
  std::vector<std::string> names() const;
  /// Sorted names of the algorithms of one role.
  std::vector<std::string> names(AlgorithmRole role) const;
  /// The role `name` was registered with; nullopt when it is not registered.
  std::optional<AlgorithmRole> role(std::string_view name) const;
  /// (name, description) pairs in names()' order, for help texts and error messages.
  std::vector<std::pair<std::string, std::string>> describe() const;

 private:
  struct Entry {
    std::string description;
    Factory factory;
    AlgorithmRole role = AlgorithmRole::kPlan;
  };
  std::map<std::string, Entry, std::less<>> entries_;  // ordered: deterministic listings
};

/// Adds ring, double_binary_tree, halving_doubling, hierarchical, tree,
/// direct and pairwise.
void register_builtin_collectives(CollectiveRegistry& registry);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_REGISTRY_H_
