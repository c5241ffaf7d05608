// File: models/collectives/registry.cc
//
// CollectiveRegistry and the built-in algorithms' registrations.

#include "models/collectives/registry.h"

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/all_to_all.h"
#include "models/collectives/halving_doubling.h"
#include "models/collectives/hierarchical.h"
#include "models/collectives/nccl_p2p.h"
#include "models/collectives/nvls.h"
#include "models/collectives/ring.h"
#include "models/collectives/tree.h"

namespace zx::models::collectives {

void CollectiveRegistry::add(std::string name, std::string description, Factory factory, AlgorithmRole role) {
  ZX_CHECK(!entries_.contains(name), "collective algorithm '" + name + "' registered twice");
  ZX_CHECK(factory != nullptr, "collective algorithm '" + name + "' has no factory");
  entries_.emplace(std::move(name), Entry{std::move(description), std::move(factory), role});
}

void CollectiveRegistry::merge(CollectiveRegistry&& other, std::string_view description_suffix) {
  for (auto& [name, entry] : other.entries_) {
    ZX_CHECK(!entries_.contains(name), "collective algorithm '" + name + "' registered twice");
  }
  for (auto& [name, entry] : other.entries_) {
    entries_.emplace(name, Entry{entry.description + std::string(description_suffix),
                                 std::move(entry.factory), entry.role});
  }
  other.entries_.clear();
}

void CollectiveRegistry::wrap_factories(
    const std::function<Factory(const std::string& name, Factory inner)>& wrap) {
  for (auto& [name, entry] : entries_) entry.factory = wrap(name, std::move(entry.factory));
}

std::vector<std::string> CollectiveRegistry::names() const {
  std::vector<std::string> out;
  for (AlgorithmRole role : {AlgorithmRole::kPlan, AlgorithmRole::kCostModel, AlgorithmRole::kTuner}) {
    for (std::string& name : names(role)) out.push_back(std::move(name));
  }
  return out;
}

std::vector<std::string> CollectiveRegistry::names(AlgorithmRole role) const {
  std::vector<std::string> out;
  for (const auto& [name, entry] : entries_) {
    if (entry.role == role) out.push_back(name);
  }
  return out;
}

std::optional<AlgorithmRole> CollectiveRegistry::role(std::string_view name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) return std::nullopt;
  return it->second.role;
}

std::vector<std::pair<std::string, std::string>> CollectiveRegistry::describe() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : names()) out.emplace_back(name, entries_.find(name)->second.description);
  return out;
}

std::unique_ptr<CollectiveAlgorithm> CollectiveRegistry::create(
    std::string_view name, std::string_view options_json) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) {
    std::string message = fmt::format("unknown collective algorithm '{}'", name);
    if (auto guess = json::closest_match(name, names())) {
      message += fmt::format(" (did you mean '{}'?)", *guess);
    }
    message += fmt::format("; valid: {}", fmt::join(names(), ", "));
    throw InputError(Diagnostic{.message = std::move(message)});
  }
  json::Document doc =
      json::Document::parse(options_json.empty() ? "{}" : options_json,
                            fmt::format("options of collective algorithm '{}'", name));
  json::ObjectReader root = doc.root();
  std::unique_ptr<CollectiveAlgorithm> algorithm = it->second.factory(root);
  root.finish();
  doc.throw_if_errors();
  ZX_CHECK(algorithm != nullptr, "collective algorithm factory returned null");
  return algorithm;
}

void register_builtin_collectives(CollectiveRegistry& registry) {
  registry.add(
      "ring",
      "NCCL ring: all-reduce, reduce-scatter, all-gather, broadcast, reduce; options "
      "chunks, channels (default 1; each leaves a server through its own NIC, as NCCL's rings use every NIC)",
      [](json::ObjectReader& o) { return std::make_unique<RingAlgorithm>(parse_ring_options(o)); });
  registry.add("double_binary_tree",
               "all-reduce on two complementary binary trees over the servers, a chain inside each (NCCL, "
               "Sanders et al. 2009); options chunks, channels (default 1; each leaves a server through its own "
               "NIC), layout (servers, or flat: the trees over all members)",
               [](json::ObjectReader& o) {
                 return std::make_unique<DoubleBinaryTreeAlgorithm>(parse_double_binary_tree_options(o));
               });
  registry.add(
      "tree", "pipelined binary tree: broadcast, reduce; option chunks",
      [](json::ObjectReader& o) { return std::make_unique<TreeAlgorithm>(parse_tree_options(o)); });
  registry.add("halving_doubling",
               "Rabenseifner all-reduce: recursive halving then doubling (MPICH), any group size",
               [](json::ObjectReader&) { return std::make_unique<HalvingDoublingAlgorithm>(); });
  registry.add("hierarchical",
               "two-level: a ring inside each server, one rail per local rank across servers "
               "(mixed radix, halving/doubling or a ring): all-reduce, reduce-scatter, all-gather, all-to-all; "
               "options across (auto, halving_doubling, mixed_radix, ring), chunks or chunk_bytes (pipelined slices)",
               [](json::ObjectReader& o) {
                 return std::make_unique<HierarchicalAlgorithm>(parse_hierarchical_options(o));
               });
  registry.add("nvls",
               "NVLink SHARP (NCCL's NVLS): the NVLink switch reduces and multicasts, inside one NVLink domain whose "
               "switch can (H100 and later): all-reduce, reduce-scatter, all-gather; options chunks or chunk_bytes (pipelined "
               "slices; default 1 MiB each, at most 64)",
               [](json::ObjectReader& o) { return std::make_unique<NvlsAlgorithm>(parse_nvls_options(o)); });
  registry.add("direct", "all-to-all(-v): every pair at once, one step",
               [](json::ObjectReader&) { return std::make_unique<DirectAllToAllAlgorithm>(); });
  registry.add("nccl_p2p",
               "all-to-all(-v) as NCCL schedules grouped send/recv: its peer order, channels, pieces and work items, "
               "PXN relays across servers; options NCCL's own variables (NCCL_MAX_P2P_NCHANNELS, "
               "NCCL_NCHANNELS_PER_NET_PEER, NCCL_P2P_NET_CHUNKSIZE, NCCL_PXN_DISABLE, ...) and version (2.13, 2.20)",
               [](json::ObjectReader& o) { return std::make_unique<NcclP2pAlgorithm>(parse_nccl_p2p_options(o)); });
  registry.add("pairwise", "all-to-all(-v): n-1 rounds of pairwise exchange (MPICH)",
               [](json::ObjectReader&) { return std::make_unique<PairwiseAllToAllAlgorithm>(); });
}

}  // namespace zx::models::collectives
