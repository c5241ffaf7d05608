// File: models/dlrm/memory.h
//
// The HBM a GPU needs for one training iteration besides its embedding
// weights and caches: what the sharding planner must leave free. TorchRec's
// planner reserves it the same way (a share of HBM, at least the dense
// tensors' and inputs' estimate); here the estimate counts, per GPU:
//
//   dense state   the MLPs' (and DCN's) weights and gradients in the dense
//                 type, plus the optimizer's state in fp32 (Adagrad one
//                 value per weight, Adam two, SGD none); DDP's gradient
//                 buckets alias the gradients (gradient_as_bucket_view).
//   activations   per sample, what the backward keeps: each MLP layer's
//                 input and ReLU output, the interaction's input and output
//                 (dot: the F x D feature matrix; DCN: x0 and each cross
//                 layer's input and low-rank projection), plus the largest
//                 layer's output gradient and input gradient in flight; in
//                 the dense type.
//   exchange      the pooled embeddings the GPU receives (its samples x all
//                 tables' dims) and their gradients; what its shards produce
//                 for the samples they serve (table-wise, column-wise,
//                 row-wise and table-row-wise shards: every global sample,
//                 row-wise ones the whole dim before the reduce-scatter;
//                 replicas: its own samples) and their gradients, in the
//                 embedding type; its samples' indices for three batches
//                 (TorchRec's pipeline holds batches i, i+1 and i+2) and the
//                 indices its shards receive (int64 by default).
//
// Left out: quantized communication's extra wire-type copies, the
// collectives' own buffers, the CUDA context and workspaces, and the
// allocator's fragmentation: kHbmHeadroomFraction stands for them.

#ifndef ZIONSIM_MODELS_DLRM_MEMORY_H_
#define ZIONSIM_MODELS_DLRM_MEMORY_H_

#include <cstdint>
#include <vector>

#include "models/compute/cost_models.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models {

/// HBM left for the CUDA context, cuBLAS and NCCL workspaces, collective
/// buffers and the caching allocator's fragmentation (assumption: 5%).
inline constexpr double kHbmHeadroomFraction = 0.05;

struct IterationMemory {
  double dense_state_bytes = 0;
  double activation_bytes = 0;
  double exchange_bytes = 0;
  double total_bytes() const { return dense_state_bytes + activation_bytes + exchange_bytes; }
};

/// The estimate for every GPU of `plan` (by rank: its shards), with
/// `batch_per_gpu` samples per GPU on `num_gpus` GPUs; one pass over the
/// plan's shards.
std::vector<IterationMemory> iteration_memory(const DlrmModel& model, const ShardingPlan& plan,
                                              std::int64_t batch_per_gpu, int num_gpus, DenseOptimizer optimizer,
                                              int index_bytes = 8);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_DLRM_MEMORY_H_
