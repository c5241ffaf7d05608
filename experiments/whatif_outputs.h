// File: experiments/whatif_outputs.h
//
// The files a what-if writes of one iteration: the largest size's timeline
// (Chrome/Perfetto) and its trace (zionsim JSON, or Chakra files per rank).

#ifndef ZIONSIM_EXPERIMENTS_WHATIF_OUTPUTS_H_
#define ZIONSIM_EXPERIMENTS_WHATIF_OUTPUTS_H_

#include <string>
#include <vector>

#include "experiments/output_file.h"
#include "experiments/whatif.h"

namespace zx::experiments {

/// Whether an --emit-trace path asks for Chakra files (X.et, X.et.gz: one
/// per rank, X.<rank>.et).
bool is_chakra_prefix(const std::string& path);

/// The largest size of `points` (one variant's, by size) that kept its
/// iteration, as a Chrome/Perfetto trace in `file` (opened for `path`,
/// --timeline), put in place. Throws zx::InputError when no size kept one
/// (the largest does not fit).
void write_whatif_timeline(const std::vector<WhatIfPoint>& points, const std::string& path, OutputFile& file);

/// The same iteration as a zionsim trace in `first`, or, when `chakra`, as
/// Chakra execution traces, one file per rank (rank 0's is `first`), all
/// written before any is put in place (--emit-trace `path`).
void write_whatif_trace(const std::vector<WhatIfPoint>& points, const std::string& path, bool chakra,
                        OutputFile& first);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_WHATIF_OUTPUTS_H_
