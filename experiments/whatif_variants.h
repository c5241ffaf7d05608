// File: experiments/whatif_variants.h
//
// The variants of a what-if sweep: the knobs --vary sweeps (every
// combination), the --scenario lists (one variant each, --vary's
// combinations inside each), or --sensitivity's one resource at a time,
// checked against each other and against the flags given with them.

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_VARIANTS_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_VARIANTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "experiments/knobs.h"
#include "experiments/whatif.h"

namespace zx::experiments {

/// The most points (variants x sizes) one whatif simulates.
inline constexpr std::size_t kMaxWhatIfPoints = 1000;

struct WhatIfVariantRequest {
  std::vector<std::string> vary;       ///< --vary KEY=V1,V2,... texts
  std::vector<std::string> scenarios;  ///< --scenario 'KEY=VALUE ...' texts
  double sensitivity = 0;              ///< --sensitivity FACTOR; 0: off
  GivenFlags given;                    ///< the flags given, for the conflict checks
  /// The flag that writes one iteration (--timeline, --emit-trace) when one
  /// was given: several variants are then refused, naming it.
  std::string one_iteration_flag;
};

/// The variants `r` asks for on top of `o`; `o` alone when it asks for none.
/// Throws zx::InputError, naming the flag: a malformed or repeated knob or
/// scenario, a knob swept twice or contradicted by a flag, --sensitivity with
/// --vary or --scenario, several variants with one_iteration_flag, more than
/// kMaxWhatIfPoints points.
std::vector<WhatIfVariant> whatif_variants(const WhatIfOptions& o, const WhatIfVariantRequest& r);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_VARIANTS_H_
