// File: experiments/whatif_progress.h
//
// What a what-if sweep says on stderr while it runs.

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_PROGRESS_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_PROGRESS_H_

#include <chrono>
#include <string>
#include <vector>

#include "experiments/whatif.h"
#include "models/execution/executor.h"

namespace zx::experiments {

// The progress lines of a what-if sweep on stderr (write_progress): each
// point as it finishes, a long point while it runs, and once each, the
// hints that make a long run faster.
class WhatIfProgress {
 public:
  explicit WhatIfProgress(const std::vector<WhatIfVariant>& variants);
  void finished(const WhatIfPoint& p, int done, int total) const;
  void running(int variant, int nodes, const models::ExecutionProgress& p, double seconds);

 private:
  // "nic-gbit=400, 64 nodes" with --vary, "64 nodes" without.
  std::string point_name(int variant, int nodes) const;

  const std::vector<WhatIfVariant>& variants_;
  std::chrono::steady_clock::time_point start_;
  std::vector<bool> partial_links_;
  bool hinted_ = false;
  bool hinted_slices_ = false;
};

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_PROGRESS_H_
