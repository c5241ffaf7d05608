#include "tools/registries.h"

#include <algorithm>

#include <fmt/format.h>

#include "models/collectives/registry.h"
#include "tools/algorithm_sources.h"
#include "models/execution/network_backend.h"
#include "models/nccl/nccl_model.h"

#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "topology/presets.h"

namespace zx::tools {

namespace {

std::vector<std::pair<std::string, std::string>> collective_algorithms(const AlgorithmSources* sources) {
  models::collectives::CollectiveRegistry registry;
  fill_registry(sources != nullptr ? *sources : AlgorithmSources{}, registry);
  std::vector<std::pair<std::string, std::string>> out = registry.describe();
  // Analytical algorithms the network backend runs on NCCL's cost model.
  for (const models::nccl::NcclVersionInfo& v : models::nccl::nccl_versions()) {
    out.emplace_back(fmt::format("nccl-{}", v.name), fmt::format("NCCL's own cost model: {}", v.description));
  }
  out.emplace_back("nccl",
                   "NCCL's cost model with the current constants (nccl-2.20): picks algorithm and protocol as NCCL "
                   "would; options algo, proto (NCCL_ALGO, NCCL_PROTO: {\"algo\": \"Ring\", \"proto\": \"^LL128\"})");
  // The network backend's tuner.
  out.emplace_back(models::kAutoAlgorithm, models::auto_algorithm_description());
  return out;
}

}  // namespace

std::vector<RegistryListing> all_registries(const AlgorithmSources* sources) {
  std::vector<RegistryListing> listings = {
      {"clusters", topology::preset_descriptions()},
      {"collectives", collective_algorithms(sources)},
      {"gpus", models::device_profile_descriptions()},
      {"models", models::model_zoo_descriptions()},
  };
  for (RegistryListing& listing : listings) {
    std::sort(listing.entries.begin(), listing.entries.end());
  }
  return listings;
}

}  // namespace zx::tools
