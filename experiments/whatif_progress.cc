#include "experiments/whatif_progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/error.h"
#include "experiments/interrupt.h"
#include "topology/degrade.h"

namespace zx::experiments {
namespace {

// Whether any link or switch of the variant runs at partial speed: flows
// then finish at many distinct rates and each finish re-solves most of the
// fabric (docs/cluster_files.md, "Simulation time").
bool has_partial_links(const WhatIfVariant& v) {
  std::vector<std::string> degradations;
  try {
    degradations = effective_degradations(v.options);
  } catch (const InputError&) {
    return false;  // the run reports it, naming the variant
  }
  bool partial = false;
  for (const std::string& text : degradations) {
    const topology::Degradation d = topology::parse_degradation(text);
    partial = partial || (!topology::degrades_gpus({d}) && d.speed > 0 && d.speed < 1);
  }
  return partial;
}


}  // namespace

WhatIfProgress::WhatIfProgress(const std::vector<WhatIfVariant>& variants)
    : variants_(variants), start_(std::chrono::steady_clock::now()) {
  for (const WhatIfVariant& v : variants) partial_links_.push_back(has_partial_links(v));
}

void WhatIfProgress::finished(const WhatIfPoint& p, int done, int total) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed > 2.0 || total > 4) {
    write_progress(
        fmt::format("whatif: {} done ({} of {}, {:.1f} s)", point_name(p.variant, p.nodes), done, total, elapsed));
  }
}

void WhatIfProgress::running(int variant, int nodes, const models::ExecutionProgress& p, double seconds) {
  write_progress(fmt::format("whatif: {} running: {:.3f} ms simulated, {} of {} ops done ({:.0f} s)",
                             point_name(variant, nodes), p.now.since_start().to_seconds() * 1e3, p.ops_ended,
                             p.ops_total, seconds));
  const auto v = static_cast<std::size_t>(variant);
  if (!hinted_ && seconds >= 30 && variants_[v].options.fidelity == "flow") {
    hinted_ = true;
    write_progress(fmt::format(
        "whatif: {}; --fidelity linkshare shares each link among the transfers crossing "
        "it without coupling the fabric: 10x to 100x faster on an uneven fabric, where its run costs about "
        "what the healthy one does, and within 1.4e-3 of flow on the zoo (docs/network_model.md, \"Link "
        "sharing\")\n",
        partial_links_[v] ? "a link or switch at partial speed spreads the flows' finishes over many instants"
                          : "a long run: uneven bottlenecks (oversubscription, a part-filled last rack, "
                            "nccl_p2p) spread the flows' "
                            "finishes over many instants"));
  }
  // The pipelined collectives (hierarchical's default slices) cost about 3x
  // the simulation time of one slice (README, "How long a what-if takes").
  const WhatIfOptions& vo = variants_[v].options;
  const bool pipelined = !vo.algorithm_options.contains("hierarchical") &&
                         std::any_of(vo.algorithms.begin(), vo.algorithms.end(),
                                     [](const auto& a) { return a.second == "hierarchical"; });
  if (!hinted_slices_ && seconds >= 60 && pipelined) {
    hinted_slices_ = true;
    write_progress(fmt::format(
        "whatif: the collectives across servers run pipelined (hierarchical, several slices), about 3x "
        "the simulation time of one slice; --options 'hierarchical={{\"chunks\": 1}}' is the fast path "
        "for large sweeps (iterations 1-5% longer; README, \"How long a what-if takes\")"));
  }
}

std::string WhatIfProgress::point_name(int variant, int nodes) const {
  const std::string prefix =
      variants_.size() > 1 ? variants_[static_cast<std::size_t>(variant)].label() + ", " : "";
  return fmt::format("{}{} node{}", prefix, nodes, nodes == 1 ? "" : "s");
}

}  // namespace zx::experiments
