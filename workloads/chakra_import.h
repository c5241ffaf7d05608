// File: workloads/chakra_import.h
//
// Importer for MLCommons Chakra execution traces (github.com/mlcommons/chakra)
// in their JSON form: one file per rank, as chakra's jsonizer
// (src/jsonizer/jsonizer.py) writes it from the protobuf .et file, i.e. the
// GlobalMetadata message followed by every Node message, each printed by
// protobuf's MessageToJson and simply concatenated. A file holding one JSON
// array of the same objects is accepted too. The nodes become a
// models::OpGraph, the structure the native trace reader (trace.h) and the
// generators produce, so `zionsim run` simulates both alike.
//
// Mapping (the node schema is schema/protobuf/et_def.proto in mlcommons/chakra):
//   * rank r is rank_files[r];
//   * COMP_NODE -> compute op of duration_micros, on stream "compute" (GPU
//     ops) or "host" (attr is_cpu_op true);
//   * COMM_COLL_NODE -> collective op on stream "comm"; the k-th collective
//     of a process group (attr pg_name; absent: every rank) on each of its
//     member ranks forms one CollectiveCall, kind from attr comm_type,
//     bytes_per_rank from attr comm_size; members must agree on both;
//   * COMM_SEND_NODE / COMM_RECV_NODE -> send op (stream "send") and recv op
//     (stream "recv"), paired in order by (comm_src, comm_dst, comm_tag) into
//     TransferCalls of comm_size bytes;
//   * MEM_LOAD_NODE / MEM_STORE_NODE -> delay ops of duration_micros on
//     stream "memory"; METADATA_NODE -> zero-length delay on "host";
//   * data_deps and ctrl_deps -> deps (node ids within the same rank file).
// Chakra runs a node as soon as its dependencies are done; zionsim streams
// run in order, so each rank's ops are placed in a topological order of its
// dependencies (file order where free), which keeps stream order from adding
// cycles.
//
// Every problem is reported as a zx::InputError naming the file and the JSON
// pointer into the file's sequence of objects ("/3" is the fourth object,
// the metadata being "/0"), as the native trace reader does.

#ifndef ZIONSIM_WORKLOADS_CHAKRA_IMPORT_H_
#define ZIONSIM_WORKLOADS_CHAKRA_IMPORT_H_

#include <string>
#include <vector>

#include "models/execution/op_graph.h"

namespace zx::workloads {

/// Imports one Chakra JSON trace per rank (rank r = rank_files[r]). Throws
/// zx::InputError listing every problem found.
models::OpGraph import_chakra(const std::vector<std::string>& rank_files);

/// True if the file looks like a Chakra JSON trace (its first object is
/// Chakra's GlobalMetadata or a Chakra node), false otherwise or if it
/// cannot be read. Native zionsim traces (schema_version) are not Chakra.
bool looks_like_chakra(const std::string& path);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_CHAKRA_IMPORT_H_
