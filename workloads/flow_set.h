// File: workloads/flow_set.h
//
// A set of point-to-point flows between GPU ranks: the input of
// `zionsim flows`. From a file (JSON, schema_version 1):
//
//   {"schema_version": 1,
//    "flows": [{"id": 0, "src_rank": 0, "dst_rank": 9, "size_bytes": 1048576, "start_ns": 0}]}
//
// or from a named traffic pattern over all GPUs of a cluster: all_to_all
// (every ordered pair), permutation (a fixed-seed random derangement),
// incast (everyone to rank 0) and ring (i to i+1).

#ifndef ZIONSIM_WORKLOADS_FLOW_SET_H_
#define ZIONSIM_WORKLOADS_FLOW_SET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "sim/units.h"

namespace zx::workloads {

struct FlowSpec {
  std::int64_t id = 0;
  int src_rank = 0;
  int dst_rank = 0;
  sim::Bytes size;
  sim::TimePoint start;
};

/// Traffic pattern names, sorted.
std::vector<std::string> flow_pattern_names();

/// Flows of `pattern` over `num_gpus` ranks, `size` each, all starting at 0.
/// Throws zx::InputError for an unknown pattern (naming the valid ones) or
/// fewer than 2 GPUs.
std::vector<FlowSpec> make_flow_pattern(std::string_view pattern, int num_gpus, sim::Bytes size,
                                        std::uint64_t seed = 1);

/// Reads a flows file; every problem is reported with its JSON pointer.
/// Ranks are checked against `num_gpus`; ids must be unique.
std::vector<FlowSpec> load_flow_file(const std::string& path, int num_gpus);
std::vector<FlowSpec> parse_flow_file(std::string_view text, const std::string& source, int num_gpus);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_FLOW_SET_H_
