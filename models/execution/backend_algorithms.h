// File: models/execution/backend_algorithms.h
//
// The collective algorithms that the network backend carries out without a
// plan of their own, registered in the same registry as the plan algorithms
// so that every name a user can give is one registry's (listings,
// did-you-mean, options checked before anything runs):
//
//   * "nccl", "nccl-2.13", "nccl-2.20" (AlgorithmRole::kCostModel): NCCL's
//     closed-form cost model (models/nccl) predicts the call's time, from
//     NCCL's own tuning tables; no flow runs. "nccl" takes the constants the
//     backend is configured with (NetworkBackendOptions::nccl_version).
//   * "auto" (AlgorithmRole::kTuner): for each distinct call, the backend
//     times every candidate plan algorithm on an idle copy of the network and
//     runs the fastest (network_backend.h says how).
//
// The backend dispatches on the registry's role; these objects carry their
// parsed options. lower() refuses: they have no plan.

#ifndef ZIONSIM_MODELS_EXECUTION_BACKEND_ALGORITHMS_H_
#define ZIONSIM_MODELS_EXECUTION_BACKEND_ALGORITHMS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collectives/collective_algorithm.h"
#include "models/collectives/registry.h"
#include "models/nccl/nccl_model.h"

namespace zx::json {
class ObjectReader;
}  // namespace zx::json

namespace zx::models {

/// The tuner's name.
inline constexpr const char* kAutoAlgorithm = "auto";
/// One line for `zionsim list collectives`.
std::string auto_algorithm_description();

/// The tuner's options (algorithm_options["auto"]), e.g.
/// {"candidates": ["ring", "nvls"]}: the algorithms it chooses among, in the
/// order ties go. Without "candidates", every plan algorithm of the registry
/// (plug-ins and schedule files included) that runs the call's kind, by
/// name, but "nccl_p2p" (its trials cost the flow model 10-100x the
/// others'; a list may name it). Candidates are plan algorithms: not
/// "auto", nor NCCL's cost model (a prediction, not a plan the flows
/// carry). {"exhaustive": true} runs every candidate to its end, so that
/// each has a time; by default a trial stops once it is slower than the
/// best so far (same choice, less work).
struct AutoOptions {
  std::vector<std::string> candidates;
  bool exhaustive = false;
};
/// Throws zx::InputError naming the bad entry: not an object, an unknown
/// key, an empty or repeated candidate, a name the registry lacks (with a
/// suggestion) or one that is not a plan algorithm.
AutoOptions parse_auto_options(std::string_view options_json, const collectives::CollectiveRegistry& registry);

/// The options of NCCL's cost model (algorithm_options["nccl"], and of
/// "nccl-2.13" / "nccl-2.20"), NCCL's own environment variables as JSON
/// keys: {"algo": "Ring,Tree", "proto": "^LL128"} is NCCL_ALGO=Ring,Tree
/// NCCL_PROTO=^LL128 (models/nccl: parse_nccl_algo, parse_nccl_proto).
/// Throws zx::InputError naming the bad key or name.
nccl::NcclAllowed parse_nccl_options(std::string_view options_json, const std::string& name);

/// NCCL's cost model as a registered algorithm.
class NcclCostModelAlgorithm final : public collectives::CollectiveAlgorithm {
 public:
  /// `version` nullopt: the backend's configured constants ("nccl").
  NcclCostModelAlgorithm(std::string name, std::optional<nccl::NcclVersion> version, nccl::NcclAllowed allowed);
  std::string_view name() const override { return name_; }
  /// NCCL's model prices every kind zionsim has.
  bool supports(collectives::CollectiveKind) const override { return true; }
  /// Throws zx::InputError: a cost model has no plan.
  collectives::CollectivePlan lower(const collectives::CollectiveRequest& request,
                                    const collectives::TopologyView& topology) const override;
  std::optional<nccl::NcclVersion> version() const { return version_; }
  const nccl::NcclAllowed& allowed() const { return allowed_; }

 private:
  std::string name_;
  std::optional<nccl::NcclVersion> version_;
  nccl::NcclAllowed allowed_;
};

/// The backend's tuner as a registered algorithm.
class AutoTunerAlgorithm final : public collectives::CollectiveAlgorithm {
 public:
  explicit AutoTunerAlgorithm(AutoOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return kAutoAlgorithm; }
  /// It runs every kind some candidate runs (which, is decided per call).
  bool supports(collectives::CollectiveKind) const override { return true; }
  /// Throws zx::InputError: the tuner has no plan of its own.
  collectives::CollectivePlan lower(const collectives::CollectiveRequest& request,
                                    const collectives::TopologyView& topology) const override;
  const AutoOptions& options() const { return options_; }

 private:
  AutoOptions options_;
};

/// Registers "nccl", "nccl-2.13", "nccl-2.20" (kCostModel) and "auto"
/// (kTuner) in `registry`. Register them before plug-ins and schedule files,
/// which then cannot take their names. "auto" checks its candidates against
/// `registry` itself when it is created, so `registry` must outlive its use
/// and not be merged into another.
void register_backend_algorithms(collectives::CollectiveRegistry& registry);

/// The role `name` has among the algorithms above; nullopt for any other
/// name. For callers that hold no registry (flag parsing, labels): whether a
/// name is NCCL's cost model or the tuner.
std::optional<collectives::AlgorithmRole> backend_algorithm_role(std::string_view name);
/// Shorthands: backend_algorithm_role(name) is kCostModel, kTuner.
bool is_nccl_cost_model(std::string_view name);
bool is_auto_tuner(std::string_view name);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_BACKEND_ALGORITHMS_H_
