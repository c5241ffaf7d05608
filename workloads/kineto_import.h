// File: workloads/kineto_import.h
//
// Imports PyTorch profiler (Kineto) traces as an op graph: the Chrome-trace
// JSON that torch.profiler's export_chrome_trace / tensorboard_trace_handler
// writes (.json, or .json.gz as tensorboard_trace_handler(use_gzip=True)
// writes it), one file per rank. What the importer reads, and where the format
// facts come from (Kineto's ChromeTraceLogger output, libkineto's
// CudaMetadataFields, PyTorch's record_param_comms metadata as Holistic Trace
// Analysis reads it; see kineto_import.cc for the details):
//
//   * GPU activity: "ph": "X" events with "cat" "kernel", "gpu_memcpy" or
//     "gpu_memset", "ts"/"dur" in microseconds, args "stream", "device",
//     "correlation" (the CUPTI correlation id of the launching runtime call;
//     CUPTI hands them out in increasing order per process, so they give the
//     CPU launch order).
//   * Every GPU stream becomes a stream of the graph named "stream<N>"
//     (shared by all ranks); every kernel a compute op with its measured
//     duration, ops of a stream in GPU execution order (by "ts").
//   * NCCL kernels ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)",
//     "ncclKernel_AllReduce_RING_LL_Sum_float(...)") become collective ops.
//     The kind comes from the enclosing record_param_comms CPU op's
//     "Collective name" when there is one, else from the kernel name; the
//     size is max("In msg nelems", "Out msg nelems") x the size of "dtype"
//     (the buffer nccl-tests counts), refused beyond 1e15 bytes; the members
//     from "Process Group Ranks". An all_to_allv's "In split size" of every
//     member (element counts to each member, in group order) gives the byte
//     matrix, checked against each member's "Out split size"; empty ("[]")
//     or truncated ("[1, 2, ...]") splits leave the even split of the size. Without record_param_comms the size is 0 bytes, the dtype
//     fp32 and the members every rank (documented fallback). The n-th NCCL
//     collective of each rank in one process group (in launch order) is one
//     CollectiveCall; counts and kinds must agree across ranks.
//   * Dependencies beyond stream order: a "cuda_sync" "Stream Wait Event"
//     (args "stream", "wait_on_stream", "wait_on_cuda_event_record_corr_id";
//     written when the profiler runs with enable_cuda_sync_events) makes the
//     first kernel launched on "stream" after the wait depend on the last
//     kernel launched on "wait_on_stream" before the cudaEventRecord
//     (without such events, the cudaEventRecord / cudaStreamWaitEvent
//     runtime calls of the launching thread give the pair instead); a
//     cudaDeviceSynchronize or cudaStreamSynchronize ("cuda_runtime") makes
//     the first kernel of every stream launched after it depend on the last
//     kernel of every stream launched before it.
//
// Simplifications (documented in kineto_import.cc): CPU-side gaps (the GPU
// idle while the host prepares the next launch) are not modelled, so a
// replay packs each stream's kernels back to back within their
// dependencies; cudaStreamSynchronize is treated as device-wide; NCCL
// point-to-point kernels (SendRecv) that no record_param_comms names as an
// all-to-all stay compute ops with their measured time.

#ifndef ZIONSIM_WORKLOADS_KINETO_IMPORT_H_
#define ZIONSIM_WORKLOADS_KINETO_IMPORT_H_

#include <string>
#include <vector>

#include "models/execution/op_graph.h"

namespace zx::workloads {

/// Imports one Kineto trace file per rank. A file's rank is its
/// distributedInfo.rank when present, else its position in `rank_files`.
/// Throws zx::InputError naming the file and the JSON pointer of the event.
models::OpGraph import_kineto(const std::vector<std::string>& rank_files);

/// True when `path` is a JSON object with a "traceEvents" array (a Chrome
/// trace, as torch.profiler writes); false otherwise, also when unreadable.
bool looks_like_kineto(const std::string& path);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_KINETO_IMPORT_H_
