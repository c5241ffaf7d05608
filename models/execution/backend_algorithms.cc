// File: models/execution/backend_algorithms.cc
//
// NCCL's cost model and the tuner as registry entries (see
// backend_algorithms.h).

#include "models/execution/backend_algorithms.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/json_reader.h"

namespace zx::models {
namespace {

namespace mc = collectives;

AutoOptions read_auto_options(json::ObjectReader& root, const mc::CollectiveRegistry& registry) {
  AutoOptions out;
  if (std::optional<json::ArrayReader> list = root.array("candidates")) {
    if (list->size() == 0) root.error("candidates", "expected at least one algorithm");
    const std::vector<std::string> valid = registry.names(mc::AlgorithmRole::kPlan);
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string name;
      if (!list->read_string(i, name)) continue;
      const std::optional<mc::AlgorithmRole> role = registry.role(name);
      if (name == kAutoAlgorithm) {
        list->error(i, "'auto' cannot be its own candidate");
      } else if (role == mc::AlgorithmRole::kCostModel) {
        list->error(i, fmt::format("'{}' is NCCL's closed-form cost model, not a plan the flows "
                                   "carry; the candidates are algorithms: {}",
                                   name, fmt::join(valid, ", ")));
      } else if (role != mc::AlgorithmRole::kPlan) {
        std::string message = fmt::format("unknown collective algorithm '{}'", name);
        if (const auto guess = json::closest_match(name, valid)) message += fmt::format(" (did you mean '{}'?)", *guess);
        list->error(i, message + fmt::format("; valid: {}", fmt::join(valid, ", ")));
      } else if (std::find(out.candidates.begin(), out.candidates.end(), name) != out.candidates.end()) {
        list->error(i, fmt::format("'{}' is listed twice", name));
      } else {
        out.candidates.push_back(std::move(name));
      }
    }
  }
  root.read_bool("exhaustive", out.exhaustive);
  return out;
}

nccl::NcclAllowed read_nccl_options(json::ObjectReader& root) {
  nccl::NcclAllowed allowed;
  const auto read = [&](const char* key, void (*parse)(std::string_view, nccl::NcclAllowed&)) {
    std::string list;
    if (!root.read_string(key, list)) return;
    try {
      parse(list, allowed);
    } catch (const InputError& e) {
      root.error(key, e.diagnostics().empty() ? std::string(e.what()) : e.diagnostics().front().message);
    }
  };
  read("algo", &nccl::parse_nccl_algo);
  read("proto", &nccl::parse_nccl_proto);
  return allowed;
}

// Options text read as the registry reads an algorithm's: one document named
// after the algorithm, every problem at its pointer, unknown keys reported.
template <typename Read>
auto read_options(std::string_view options_json, std::string_view name, Read read) {
  json::Document doc = json::Document::parse(options_json.empty() ? "{}" : options_json,
                                             fmt::format("options of collective algorithm '{}'", name));
  json::ObjectReader root = doc.root();
  auto out = read(root);
  root.finish();
  doc.throw_if_errors();
  return out;
}

[[noreturn]] void refuse_lowering(std::string_view name, std::string_view what) {
  throw InputError(Diagnostic{"collective", "",
                              fmt::format("collective algorithm '{}' is {}: it has no plan to lower", name, what)});
}

}  // namespace

std::string auto_algorithm_description() {
  return "per distinct call, the fastest of its candidates, each simulated alone on an idle copy of the network "
         "(NCCL's tuner picks per call from its cost model); options candidates (default: every algorithm that "
         "runs the kind) and exhaustive (true: time every candidate to its end, not only until it has lost)";
}

AutoOptions parse_auto_options(std::string_view options_json, const mc::CollectiveRegistry& registry) {
  return read_options(options_json, kAutoAlgorithm,
                      [&](json::ObjectReader& root) { return read_auto_options(root, registry); });
}

nccl::NcclAllowed parse_nccl_options(std::string_view options_json, const std::string& name) {
  return read_options(options_json, name, [](json::ObjectReader& root) { return read_nccl_options(root); });
}

NcclCostModelAlgorithm::NcclCostModelAlgorithm(std::string name, std::optional<nccl::NcclVersion> version,
                                               nccl::NcclAllowed allowed)
    : name_(std::move(name)), version_(version), allowed_(std::move(allowed)) {}

mc::CollectivePlan NcclCostModelAlgorithm::lower(const mc::CollectiveRequest&, const mc::TopologyView&) const {
  refuse_lowering(name_, "NCCL's closed-form cost model");
}

mc::CollectivePlan AutoTunerAlgorithm::lower(const mc::CollectiveRequest&, const mc::TopologyView&) const {
  refuse_lowering(kAutoAlgorithm, "the backend's tuner, which picks a plan algorithm per call");
}

void register_backend_algorithms(mc::CollectiveRegistry& registry) {
  const auto add_nccl = [&registry](std::string name, std::string description,
                                    std::optional<nccl::NcclVersion> version) {
    registry.add(
        name, std::move(description),
        [name, version](json::ObjectReader& o) {
          return std::make_unique<NcclCostModelAlgorithm>(name, version, read_nccl_options(o));
        },
        mc::AlgorithmRole::kCostModel);
  };
  for (const nccl::NcclVersionInfo& v : nccl::nccl_versions()) {
    add_nccl(fmt::format("nccl-{}", v.name), fmt::format("NCCL's own cost model: {}", v.description), v.version);
  }
  add_nccl("nccl",
           "NCCL's cost model with the current constants (nccl-2.20): picks algorithm and protocol as NCCL "
           "would; options algo, proto (NCCL_ALGO, NCCL_PROTO: {\"algo\": \"Ring\", \"proto\": \"^LL128\"})",
           std::nullopt);
  registry.add(
      kAutoAlgorithm, auto_algorithm_description(),
      [&registry](json::ObjectReader& o) {
        return std::make_unique<AutoTunerAlgorithm>(read_auto_options(o, registry));
      },
      mc::AlgorithmRole::kTuner);
}

std::optional<mc::AlgorithmRole> backend_algorithm_role(std::string_view name) {
  static const mc::CollectiveRegistry* const registry = [] {
    auto* r = new mc::CollectiveRegistry;  // never freed: read until exit
    register_backend_algorithms(*r);
    return r;
  }();
  return registry->role(name);
}

bool is_nccl_cost_model(std::string_view name) { return backend_algorithm_role(name) == mc::AlgorithmRole::kCostModel; }

bool is_auto_tuner(std::string_view name) { return backend_algorithm_role(name) == mc::AlgorithmRole::kTuner; }

}  // namespace zx::models
