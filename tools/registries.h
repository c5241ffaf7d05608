// File: tools/registries.h
//
// One place that gathers every registry of names the CLI exposes (cluster
// presets, collective algorithms, models), for `zionsim list` and for the
// "valid: ..." part of error messages. Each later package contributes its
// registry here; entries are sorted by name so listings are deterministic.

#ifndef ZIONSIM_TOOLS_REGISTRIES_H_
#define ZIONSIM_TOOLS_REGISTRIES_H_

#include <string>
#include <utility>
#include <vector>

namespace zx::tools {

struct RegistryListing {
  std::string category;  ///< "clusters", "collectives", "models"
  /// (name, one-line description), sorted by name.
  std::vector<std::pair<std::string, std::string>> entries;
};

struct AlgorithmSources;

/// Every registry, in a fixed order; collective algorithms include those of
/// `sources` (plug-ins and schedule files) when given.
std::vector<RegistryListing> all_registries(const AlgorithmSources* sources = nullptr);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_REGISTRIES_H_
