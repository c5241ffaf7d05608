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
