#include "tools/registries.h"

#include <algorithm>

#include "topology/presets.h"

namespace zx::tools {

std::vector<RegistryListing> all_registries() {
  // The collectives and model-zoo packages fill theirs in as they land; the
  // categories exist now so that scripts can rely on them.
  std::vector<RegistryListing> listings = {
      {"clusters", topology::preset_descriptions()},
      {"collectives", {}},
      {"models", {}},
  };
  for (RegistryListing& listing : listings) {
    std::sort(listing.entries.begin(), listing.entries.end());
  }
  return listings;
}

}  // namespace zx::tools
