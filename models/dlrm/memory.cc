#include "models/dlrm/memory.h"

#include <algorithm>

namespace zx::models {
namespace {

constexpr double kPipelinedBatches = 3;   // batches i, i+1, i+2 (TrainPipelineSparseDist)
constexpr double kOptimizerStateBytes = 4;  // fp32 per value

double optimizer_values(DenseOptimizer optimizer) {
  switch (optimizer) {
    case DenseOptimizer::kSgd: return 0;
    case DenseOptimizer::kAdagrad: return 1;  // sum of squared gradients
    case DenseOptimizer::kAdam: return 2;     // first and second moments
  }
  return 0;
}

// Per sample: every layer's input and ReLU output; the widest layer.
void add_mlp(const Mlp& mlp, double& saved, double& widest) {
  std::int64_t in = mlp.input;
  widest = std::max(widest, static_cast<double>(in));
  for (const std::int64_t out : mlp.widths) {
    saved += static_cast<double>(in + out);
    widest = std::max(widest, static_cast<double>(out));
    in = out;
  }
}

}  // namespace

std::vector<IterationMemory> iteration_memory(const DlrmModel& model, const ShardingPlan& plan,
                                              std::int64_t batch_per_gpu, int num_gpus, DenseOptimizer optimizer,
                                              int index_bytes) {
  IterationMemory m;
  const double dense = element_bytes(model.dense_type);
  const double emb = element_bytes(model.embedding_type);
  const double batch = static_cast<double>(batch_per_gpu);
  const double global = batch * num_gpus;

  m.dense_state_bytes = static_cast<double>(model.dense_parameters()) *
                        (2 * dense + optimizer_values(optimizer) * kOptimizerStateBytes);

  double saved = 0;  // per sample, elements
  double widest = 0;
  add_mlp(model.bottom_mlp, saved, widest);
  add_mlp(model.top_mlp, saved, widest);
  switch (model.interaction.kind) {
    case InteractionKind::kDot:
      saved += static_cast<double>(model.interaction_features() * model.bottom_mlp.output() +
                                   model.interaction_output());
      break;
    case InteractionKind::kDcn:
      saved += static_cast<double>(model.interaction_output()) +
               static_cast<double>(model.interaction.cross_layers) *
                   static_cast<double>(model.interaction_output() + model.interaction.rank);
      widest = std::max(widest, static_cast<double>(model.interaction_output()));
      break;
    case InteractionKind::kNone: break;
  }
  m.activation_bytes = batch * (saved + 2 * widest) * dense;

  double dims = 0;  // every table's pooled width, as the interaction receives it
  for (const TableGroup& g : model.tables) dims += static_cast<double>(g.count * g.dim);
  // Per GPU: the pooled values its shards produce, the lookups they serve.
  std::vector<double> produced(static_cast<std::size_t>(num_gpus), 0.0);
  std::vector<double> indices_received(static_cast<std::size_t>(num_gpus), 0.0);
  for (const TablePlacement& t : plan.tables) {
    const TableGroup& group = model.tables[static_cast<std::size_t>(t.group)];
    const bool replica = t.kind == ShardingKind::kDataParallel;
    for (const Shard& s : t.shards) {
      const auto r = static_cast<std::size_t>(s.rank);
      produced[r] += (replica ? batch : global) * static_cast<double>(s.dim);
      if (!replica) indices_received[r] += global * group.pooling * s.lookup_share;
    }
  }
  std::vector<IterationMemory> out(static_cast<std::size_t>(num_gpus), m);
  for (std::size_t r = 0; r < out.size(); ++r) {
    out[r].exchange_bytes = 2 * batch * dims * emb + 2 * produced[r] * emb +
                            (kPipelinedBatches * batch * model.lookups_per_sample() + indices_received[r]) *
                                index_bytes;
  }
  return out;
}

}  // namespace zx::models
