// File: workloads/dlrm_iteration.h
//
// One DLRM training iteration as a per-rank op graph (models/execution):
// Neo's hybrid parallelism on ZionEX, as TorchRec runs it.
//
// Per GPU, with B samples (the per-GPU batch) and three streams:
//
//   compute     embedding forward (its shards, for all samples they serve),
//               bottom MLP forward, interaction, top MLP forward and loss,
//               top MLP backward, interaction backward, bottom MLP backward,
//               embedding backward with the fused optimizer, dense optimizer
//   emb_comm    indices all-to-all (input distribution; see pipelining),
//               pooled-embedding all-to-all forward (and reduce-scatter for
//               row-wise shards), gradient all-to-all backward (and
//               all-gather for row-wise shards)
//   dense_comm  dense-gradient all-reduce in buckets (DDP, 25 MB by default),
//               each issued when the backward ops producing it finish, so it
//               overlaps the rest of backward; data-parallel tables' gradients
//               join the last bucket
//   h2d         the batch's input copy from host memory (a DMA transfer:
//               a host copy op, not counted as compute)
//   cache_fetch, cache_writeback (only with host-memory tables)
//               the HBM cache's misses fetched from host memory and the
//               evicted rows written back, before the embedding forward
//               (or, with prefetch_cache, for the next batch beside it)
//
// With pipelining on (TorchRec's TrainPipelineSparseDist), the input copy
// carries a later batch (the pipeline copies batch i+2 to the GPU and
// distributes batch i+1's indices while batch i trains) and the indices
// all-to-all the next batch; both run from the start of the iteration beside
// everything else, off the critical path, though an iteration never ends
// before its copy does. Off, the embedding forward and the bottom MLP wait for
// the copy, and the embedding forward for the all-to-all after it.
//
// Sizes: the pooled all-to-all carries B x dim x element bytes per table from
// its owner to every rank; the indices all-to-all B x pooling x 8 bytes per
// table (int64 indices) to the owner; row-wise shards reduce-scatter the
// partial pools of all global samples; table-row-wise shards do the same
// inside their node, then all-to-all across nodes.

#ifndef ZIONSIM_WORKLOADS_DLRM_ITERATION_H_
#define ZIONSIM_WORKLOADS_DLRM_ITERATION_H_

#include <cstdint>
#include <map>
#include <string>

#include "models/compute/cost_models.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/op_graph.h"

namespace zx::workloads {

struct IterationOptions {
  std::int64_t batch_per_gpu = 512;
  /// Element types on the wire: pooled embeddings forward, their gradients
  /// backward, dense gradients. Defaults: the paper's quantized setting is
  /// fp16 forward, bf16 backward; here the model's own types unless set.
  std::string a2a_forward_dtype;   ///< empty: the model's embedding type
  std::string a2a_backward_dtype;  ///< empty: the model's embedding type
  std::string all_reduce_dtype = "fp32";
  bool fused_embeddings = true;
  bool pipeline_input = true;
  /// Host-memory tables' HBM cache: fetch the next batch's misses beside
  /// this iteration (TorchRec's PrefetchTrainPipelineSparseDist) instead of
  /// before this batch's embedding forward (its TrainPipelineSparseDist).
  bool prefetch_cache = false;
  /// Bytes per embedding index: 8 (int64, as TorchRec's KeyedJaggedTensor
  /// carries them by default) or 4 (int32).
  int index_bytes = 8;
  /// DDP gradient bucket size (PyTorch's bucket_cap_mb default: 25 MB).
  std::int64_t all_reduce_bucket_bytes = 25 * 1024 * 1024;
  models::DenseOptimizer dense_optimizer = models::DenseOptimizer::kAdagrad;
  /// Collective algorithm per collective kind ("all_to_all" -> "direct");
  /// copied into every collective of that kind.
  std::map<std::string, std::string> algorithms;
};

/// Builds the iteration. The plan must fit (plan.fits) and cover
/// `num_gpus` GPUs. Throws zx::InputError for bad options.
models::OpGraph build_dlrm_iteration(const models::DlrmModel& model, const models::ShardingPlan& plan,
                                     int num_gpus, int gpus_per_node, const models::DeviceProfile& device,
                                     const IterationOptions& options);

}  // namespace zx::workloads

#endif  // ZIONSIM_WORKLOADS_DLRM_ITERATION_H_
