#include "experiments/whatif_outputs.h"

#include <utility>

#include "base/error.h"
#include "base/input_file.h"
#include "models/execution/timeline.h"
#include "workloads/chakra_export.h"
#include "workloads/trace.h"

namespace zx::experiments {

// --emit-trace X.et or X.et.gz: Chakra files, one per rank.
bool is_chakra_prefix(const std::string& path) {
  for (const std::string tail : {".et", ".et.gz"}) {
    if (path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) return true;
  }
  return false;
}


void write_whatif_timeline(const std::vector<WhatIfPoint>& points, const std::string& path, OutputFile& file) {
  const WhatIfPoint* largest = nullptr;
  for (const WhatIfPoint& p : points) {
    if (p.graph && p.execution && p.network_activity) largest = &p;
  }
  if (largest == nullptr) {
    throw InputError(Diagnostic{"--timeline", "", "the largest cluster size does not fit; no timeline to write"});
  }
  models::TimelineLimits limits;
  limits.max_ranks = kTimelineRanks;
  models::write_chrome_trace(file, *largest->graph, *largest->execution, *largest->network_activity, limits);
  close_output_file("--timeline", path, file);
}

void write_whatif_trace(const std::vector<WhatIfPoint>& points, const std::string& path, bool chakra,
                        OutputFile& first) {
  const WhatIfPoint* largest = nullptr;
  for (const WhatIfPoint& p : points) {
    if (p.graph) largest = &p;
  }
  if (largest == nullptr) {
    throw InputError(Diagnostic{"--emit-trace", "", "the largest cluster size does not fit; no trace to write"});
  }
  if (!chakra) {
    workloads::write_trace(first, *largest->graph);
    close_output_file("--emit-trace", path, first);
    return;
  }
  // One rank at a time: its nodes, its encoding and its descriptor are let
  // go before the next rank's are made. Every file is written (to its
  // temporary path) before any is renamed into place, so a failure at any
  // rank leaves no partial trace.
  std::vector<OutputFile> outputs;
  std::vector<std::string> paths;
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  workloads::export_chakra(*largest->graph, [&](int r, const workloads::chakra_et::File& file) {
    paths.push_back(workloads::chakra_rank_path(path, r));
    outputs.push_back(r == 0 ? std::move(first) : open_output_file("--emit-trace", paths.back()));
    const std::string bytes = workloads::chakra_et::encode(file);
    const std::string out = gz ? gzip(bytes) : bytes;
    outputs.back().write(out.data(), static_cast<std::streamsize>(out.size()));
    finish_output_file("--emit-trace", paths.back(), outputs.back());
  });
  for (std::size_t r = 0; r < outputs.size(); ++r) close_output_file("--emit-trace", paths[r], outputs[r]);
}

}  // namespace zx::experiments
