// File: workloads/trace.h
//
// The zionsim trace format: an op graph (models/execution/op_graph.h) as a
// JSON file, schema_version 1, documented in docs/traces.md. Traces are how
// users drive the simulator with their own jobs, and how `zionsim whatif
// --emit-trace` hands a generated iteration to `zionsim run`: writing then
// reading a graph gives the same graph, so it simulates to the same
// picosecond.
//
// Reading validates everything and reports every problem with the file and
// the JSON pointer: types, unknown keys, unique op ids, dependencies that
// exist, no cycle (one cycle reported by its op ids), collectives issued by
// exactly their members, sends matched by receives.

#ifndef ZIONSIM_WORKLOADS_TRACE_H_
#define ZIONSIM_WORKLOADS_TRACE_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/compute/device_profile.h"
#include "models/execution/op_graph.h"

namespace zx::workloads {

/// Reads a trace. Compute ops may give a fixed `duration_ps` / `duration_ns`
/// or a `kernel` the cost models price with `device` (required then). With
/// `algorithms`, a collective's "algorithm" must be one of them (checked at
/// its pointer, with the rest of the file). Problems of the graph as a whole
/// (membership, pairs, cycles) name ops, collectives and transfers by their
/// ids in the file. Throws zx::InputError listing every problem.
models::OpGraph parse_trace(std::string_view text, const std::string& source,
                            const models::DeviceProfile* device = nullptr,
                            const std::vector<std::string>* algorithms = nullptr);
models::OpGraph load_trace(const std::string& path, const models::DeviceProfile* device = nullptr,
                           const std::vector<std::string>* algorithms = nullptr);

/// Writes a graph as a trace (durations in integer picoseconds).
void write_trace(std::ostream& out, const models::OpGraph& graph);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_TRACE_H_
