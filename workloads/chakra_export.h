// File: workloads/chakra_export.h
//
// An op graph as Chakra execution traces: one chakra_et::File per rank, for
// `zionsim whatif --emit-trace PREFIX.et` (PREFIX.<rank>.et, Chakra's
// naming). What Chakra's schema says, it says as Chakra's converters do:
//
//   compute op        COMP_NODE, duration_micros (rounded to the nearest
//                     microsecond), is_cpu_op false
//   collective op     COMM_COLL_NODE, comm_type (CollectiveCommType),
//                     comm_size (bytes per rank, as nccl-tests counts it),
//                     pg_name (one name per member set: "zionsim_group_<g>")
//   send / recv op    COMM_SEND_NODE / COMM_RECV_NODE, comm_src, comm_dst,
//                     comm_size, comm_tag (the transfer's index: unique)
//   host copy op      MEM_LOAD_NODE (to the GPU) / MEM_STORE_NODE,
//                     tensor_size (bytes)
//   delay op          METADATA_NODE with duration_micros
//   dependencies      data_deps (the op's deps, all on its own rank; a
//                     dependency on another rank cannot be written) and
//                     ctrl_deps (the op before it on its stream: Chakra has
//                     no streams, and its runners start a node as soon as its
//                     dependencies are done)
//
// What the schema cannot say travels in attributes named zionsim_*, which
// other tools ignore and import_chakra reads back, so that the round trip
// gives the same graph and simulates to the same picosecond:
// zionsim_duration_ps, zionsim_stream, zionsim_category, zionsim_kind
// ("delay", "host_copy"), zionsim_to_device, zionsim_dtype,
// zionsim_algorithm, zionsim_root, zionsim_group_ranks (the members in group
// order), zionsim_all_to_all_v_row (this member's row of an all-to-all-v),
// zionsim_op and zionsim_collective (the graph's own numbering); and in the
// GlobalMetadata, zionsim_compute_durations_measured.

#ifndef ZIONSIM_WORKLOADS_CHAKRA_EXPORT_H_
#define ZIONSIM_WORKLOADS_CHAKRA_EXPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "models/execution/op_graph.h"
#include "workloads/chakra_et.h"

namespace zx::workloads {

/// Called once per rank, in rank order, with that rank's file; the file is
/// gone when the call returns, so an export holds one rank's nodes at a time.
using ChakraRankSink = std::function<void(int rank, const chakra_et::File& file)>;

/// Gives each rank's file to `each_rank`. Throws zx::InputError (source
/// "--emit-trace") for what Chakra cannot express: a dependency between
/// ranks or a cycle (before any rank is given), a collective kind without a
/// CollectiveCommType, collectives of one group issued in different orders
/// on different members (found at the first rank that differs: the ranks
/// given before it are to be discarded, as the CLI's temporary files are).
void export_chakra(const models::OpGraph& graph, const ChakraRankSink& each_rank);

/// One file per rank (index = rank), in memory: for tests and small graphs.
std::vector<chakra_et::File> export_chakra(const models::OpGraph& graph);

/// The file of rank r for a prefix path "X.et" (or "X.et.gz"): "X.r.et"
/// ("X.r.et.gz"). Throws zx::InputError unless the path ends in .et or .et.gz.
std::string chakra_rank_path(const std::string& path, int rank);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_CHAKRA_EXPORT_H_
