#include "tools/registries.h"

#include <algorithm>

namespace zx::tools {

std::vector<RegistryListing> all_registries() {
  // The topology, collectives and model-zoo packages fill these in as they
  // land; the categories exist now so that scripts can rely on them.
  std::vector<RegistryListing> listings = {
      {"clusters", {}},
      {"collectives", {}},
      {"models", {}},
  };
  for (RegistryListing& listing : listings) {
    std::sort(listing.entries.begin(), listing.entries.end());
  }
  return listings;
}

}  // namespace zx::tools
