#include "tools/registries.h"

#include <algorithm>

#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "topology/presets.h"

namespace zx::tools {

std::vector<RegistryListing> all_registries() {
  // Collective algorithms join when their registry lands; the category
  // exists now so that scripts can rely on it.
  std::vector<RegistryListing> listings = {
      {"clusters", topology::preset_descriptions()},
      {"collectives", {}},
      {"gpus", models::device_profile_descriptions()},
      {"models", models::model_zoo_descriptions()},
  };
  for (RegistryListing& listing : listings) {
    std::sort(listing.entries.begin(), listing.entries.end());
  }
  return listings;
}

}  // namespace zx::tools
