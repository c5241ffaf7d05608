// File: models/execution/op_graph.h
//
// The per-rank operation graph the executor runs: what one training
// iteration (or any traced job) does on every GPU. Workload generators and
// trace importers (workloads/) produce it; the executor (executor.h) runs it
// on the engine. It lives in models/ so that the executor can see it without
// depending on workloads/.
//
// Semantics.
//   * Every op belongs to one rank (GPU) and one stream of that rank (named,
//     e.g. "compute", "comm"). Ops of one stream run one at a time, in the
//     order they appear in `ops` (CUDA stream order).
//   * An op starts when it is at the head of its stream and every op in
//     `deps` has finished (data dependencies and cross-stream event waits).
//   * A compute op occupies its stream for `duration`.
//   * A collective op names a collective by `collective` (an index into
//     OpGraph::collectives). Every member rank of that collective has exactly
//     one op for it; the collective starts when all of them are ready (as an
//     NCCL kernel waits for its peers) and they all finish when it finishes.
//   * A send op and a recv op with the same `transfer` index form one
//     point-to-point transfer; it starts when both are ready.
//   * A delay op waits `duration` without occupying anything but its stream
//     (host-side gaps, data loading stalls).
//   * A host copy op moves `bytes` between the rank's host memory and the
//     GPU (`to_device`: host to GPU) by DMA: no SMs, its time set by the
//     links it crosses (the backend runs it; over the cluster's PCIe links,
//     where it shares them with the NIC's traffic).

#ifndef ZIONSIM_MODELS_EXECUTION_OP_GRAPH_H_
#define ZIONSIM_MODELS_EXECUTION_OP_GRAPH_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/collectives/kinds.h"
#include "sim/time.h"
#include "sim/units.h"

namespace zx::models {

enum class OpKind { kCompute, kCollective, kSend, kRecv, kDelay, kHostCopy };

std::string_view to_string(OpKind kind);

/// A collective call shared by the ops of its members. Its kind and element
/// type are typed: whoever builds the graph (a generator, a trace reader)
/// turns names into them and reports a bad name where it read it.
struct CollectiveCall {
  collectives::CollectiveKind kind = collectives::CollectiveKind::kAllReduce;
  std::vector<int> ranks;         ///< member GPU ranks, in group order
  sim::Bytes bytes_per_rank;      ///< as nccl-tests counts it
  std::vector<std::vector<std::int64_t>> all_to_all_v_bytes;  ///< optional [src][dst]
  collectives::DataType dtype = collectives::DataType::kFp32;
  std::string algorithm;          ///< a registry name; empty: the run's default for this kind
  int root = 0;
};

/// A point-to-point transfer shared by one send and one recv op.
struct TransferCall {
  int src = 0;
  int dst = 0;
  sim::Bytes size;
};

struct Op {
  OpKind kind = OpKind::kCompute;
  int rank = 0;
  int stream = 0;          ///< index into OpGraph::stream_names
  std::string name;        ///< "emb_fwd", "bottom_mlp_fwd.3"; free text
  std::string category;    ///< for breakdowns: "compute", "all_to_all", "all_reduce", ...
  sim::Duration duration;  ///< compute and delay ops
  std::int64_t collective = -1;  ///< collective ops: index into OpGraph::collectives
  std::int64_t transfer = -1;    ///< send and recv ops: index into OpGraph::transfers
  sim::Bytes bytes;              ///< host copy ops: bytes moved
  bool to_device = true;         ///< host copy ops: host to GPU (false: GPU to host)
  std::vector<std::uint32_t> deps;  ///< indices into OpGraph::ops
};

struct OpGraph {
  int num_ranks = 0;
  std::vector<std::string> stream_names;  ///< shared by all ranks: "compute", "comm", ...
  std::vector<Op> ops;
  std::vector<CollectiveCall> collectives;
  std::vector<TransferCall> transfers;
  /// True when the compute durations were measured on GPUs that ran the
  /// job's communication beside them (an imported profiler trace): they
  /// already include what communication kernels took from compute, and the
  /// executor does not slow them again (SmContention in executor.h). False
  /// for durations of a kernel alone (cost models, zionsim's own traces).
  bool compute_durations_measured = false;

  /// Adds an op and returns its index.
  std::uint32_t add(Op op);
  /// The index of a stream name, adding it if new.
  int stream(const std::string& name);
};

/// Degraded GPUs (straggler what-ifs): every compute op of rank r takes
/// duration / speed_by_rank[r], rounded to the nearest picosecond. Delay ops
/// (DMA, host gaps) and communication keep their time. `speed_by_rank`
/// empty: no change; otherwise ranks beyond its end are healthy. Throws
/// zx::InvariantError for a speed outside (0, 1] or a time past the int64
/// picosecond range.
void slow_compute(OpGraph& graph, std::span<const double> speed_by_rank);

/// A problem found by validate(): the op (or -1) and what is wrong.
struct OpGraphProblem {
  std::int64_t op = -1;
  std::string message;
  std::int64_t collective = -1;  ///< the collective (index) a problem of no op is about, or -1
  std::int64_t transfer = -1;    ///< the transfer (index) a problem of no op is about, or -1
};

/// How validate() names ops, collectives and transfers in its messages: by
/// their positions (the default), or by the ids of the file they came from.
struct OpGraphNames {
  std::vector<std::int64_t> op_ids;          ///< per op; empty: positions
  std::vector<std::int64_t> collective_ids;  ///< per collective; empty: positions
  std::vector<std::int64_t> transfer_ids;    ///< per transfer; empty: positions
};

/// Checks the graph: ranks and streams in range, dependencies that exist,
/// no cycle (through deps and stream order; one cycle is reported by its op
/// indices), every collective issued exactly once by each member and by no
/// one else, every transfer with exactly one send on its src and one recv on
/// its dst, non-negative durations and sizes. Returns every problem found.
std::vector<OpGraphProblem> validate(const OpGraph& graph, const OpGraphNames* names = nullptr);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_OP_GRAPH_H_
