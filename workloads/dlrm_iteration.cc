#include "workloads/dlrm_iteration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;
using models::DataType;
using models::KernelCost;
using models::Op;
using models::OpGraph;
using models::OpKind;
using sim::Duration;

constexpr std::int64_t kDenseInputBytes = 4;  // fp32 dense features

DataType parse_type(const std::string& name, const char* flag) {
  try {
    return models::parse_data_type(name);
  } catch (const std::invalid_argument& e) {
    throw InputError(Diagnostic{flag, "", e.what()});
  }
}

// The element type a collective carries for a tensor of type `t`: TF32 is
// a math mode, its tensors are 4-byte fp32 in memory and on the wire.
mc::DataType wire_type(DataType t) {
  switch (t) {
    case DataType::kFp32:
    case DataType::kTf32:
      return mc::DataType::kFp32;
    case DataType::kFp16:
      return mc::DataType::kFp16;
    case DataType::kBf16:
      return mc::DataType::kBf16;
    case DataType::kFp8:
      return mc::DataType::kFp8;
  }
  ZX_UNREACHABLE("bad DataType");
}

using Matrix = std::vector<std::vector<std::int64_t>>;

// Per-rank lists of shard shapes, grouped so each shape is costed once.
struct ShapeKey {
  std::int64_t batch;
  double pooling;
  std::int64_t dim;
  auto operator<=>(const ShapeKey&) const = default;
};

class Builder {
 public:
  Builder(const models::DlrmModel& model, const models::ShardingPlan& plan, int n, int gpn,
          const models::DeviceProfile& device, const IterationOptions& o)
      : model_(model), plan_(plan), n_(n), gpn_(gpn), device_(device), o_(o) {}

  OpGraph build();

 private:
  struct Collective {
    std::int64_t index;
    std::string category;
  };
  // Adds one collective over `ranks` and one op per member on `stream`,
  // each depending on deps[rank]; returns the op of each rank (or -1).
  std::vector<std::int64_t> collective(models::CollectiveCall call, int stream, const std::string& category,
                                       const std::vector<std::vector<std::uint32_t>>& deps);
  std::uint32_t compute(int rank, int stream, const std::string& name, const std::string& category,
                        Duration duration, std::vector<std::uint32_t> deps);
  Duration embedding_time(int rank, bool backward) const;
  std::int64_t cache_miss_bytes(int rank) const;

  const models::DlrmModel& model_;
  const models::ShardingPlan& plan_;
  const int n_;
  const int gpn_;
  const models::DeviceProfile& device_;
  const IterationOptions& o_;
  OpGraph g_;
};

std::uint32_t Builder::compute(int rank, int stream, const std::string& name, const std::string& category,
                               Duration duration, std::vector<std::uint32_t> deps) {
  Op op;
  op.kind = OpKind::kCompute;
  op.rank = rank;
  op.stream = stream;
  op.name = name;
  op.category = category;
  op.duration = duration;
  op.deps = std::move(deps);
  return g_.add(std::move(op));
}

std::vector<std::int64_t> Builder::collective(models::CollectiveCall call, int stream,
                                              const std::string& category,
                                              const std::vector<std::vector<std::uint32_t>>& deps) {
  const std::string name(models::collectives::to_string(call.kind));
  if (auto it = o_.algorithms.find(name); it != o_.algorithms.end()) call.algorithm = it->second;
  const std::vector<int> ranks = call.ranks;
  g_.collectives.push_back(std::move(call));
  const auto index = static_cast<std::int64_t>(g_.collectives.size() - 1);
  std::vector<std::int64_t> ops(static_cast<std::size_t>(n_), -1);
  for (int r : ranks) {
    Op op;
    op.kind = OpKind::kCollective;
    op.rank = r;
    op.stream = stream;
    op.name = name;
    op.category = category;
    op.collective = index;
    op.deps = deps[static_cast<std::size_t>(r)];
    ops[static_cast<std::size_t>(r)] = g_.add(std::move(op));
  }
  return ops;
}

Duration Builder::embedding_time(int rank, bool backward) const {
  const std::int64_t global = o_.batch_per_gpu * n_;
  std::map<ShapeKey, std::int64_t> shapes;
  for (const models::TablePlacement& t : plan_.tables) {
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    for (const models::Shard& s : t.shards) {
      if (s.rank != rank) continue;
      ShapeKey key{global, group.pooling, s.dim};
      switch (t.kind) {
        case models::ShardingKind::kRowWise:
        case models::ShardingKind::kTableRowWise:
          key.pooling = group.pooling * s.lookup_share;
          break;
        case models::ShardingKind::kDataParallel:
          key.batch = o_.batch_per_gpu;
          break;
        case models::ShardingKind::kTableWise:
        case models::ShardingKind::kColumnWise:
          break;
      }
      // A row-wise shard of a table with fewer rows than GPUs can be empty.
      if (key.pooling <= 0 || s.rows == 0) continue;
      ++shapes[key];
    }
  }
  Duration total = Duration::zero();
  int kernels = 0;
  for (const auto& [key, count] : shapes) {
    const models::EmbeddingShape shape{.batch = key.batch,
                                       .tables = count,
                                       .pooling = key.pooling,
                                       .dim = key.dim,
                                       .weight_type = model_.embedding_type,
                                       .output_type = model_.embedding_type,
                                       .index_bytes = o_.index_bytes};
    KernelCost c;
    if (o_.fused_embeddings) {
      c = backward ? models::embedding_backward_fused(device_, shape) : models::embedding_forward_fused(device_, shape);
    } else {
      c = backward ? models::embedding_backward_unfused(device_, shape)
                   : models::embedding_forward_unfused(device_, shape);
    }
    // A host-memory table's kernel reads its HBM cache, which the cache
    // fetch filled before it (cache_miss_bytes): the same kernel.
    total += c.time;
    kernels += c.kernels;
  }
  // Fused: one kernel launch for all shards of this GPU.
  if (o_.fused_embeddings && kernels > 1) total -= device_.kernel_launch * (kernels - 1);
  return total;
}

// The rows of its host-memory shards that one iteration misses in the HBM
// cache: (1 - hit rate) of the lookups, a row of dim elements each. Each is
// a lookup, not a distinct row (an upper bound when a batch repeats rows).
std::int64_t Builder::cache_miss_bytes(int rank) const {
  const double global = static_cast<double>(o_.batch_per_gpu * n_);
  double bytes = 0;
  for (const models::TablePlacement& t : plan_.tables) {
    if (!t.host_memory) continue;
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    for (const models::Shard& s : t.shards) {
      if (s.rank != rank || s.rows == 0) continue;
      const bool row_sharded =
          t.kind == models::ShardingKind::kRowWise || t.kind == models::ShardingKind::kTableRowWise;
      const double lookups = global * group.pooling * (row_sharded ? s.lookup_share : 1.0);
      bytes += (1.0 - t.cache_hit_rate) * lookups *
               static_cast<double>(s.dim * models::element_bytes(model_.embedding_type));
    }
  }
  return static_cast<std::int64_t>(std::ceil(bytes));
}

OpGraph Builder::build() {
  const std::int64_t B = o_.batch_per_gpu;
  const std::int64_t global = B * n_;
  const DataType emb_t = model_.embedding_type;
  const DataType fwd_t = o_.a2a_forward_dtype.empty() ? emb_t : parse_type(o_.a2a_forward_dtype, "--a2a-precision");
  const DataType bwd_t = o_.a2a_backward_dtype.empty() ? emb_t : parse_type(o_.a2a_backward_dtype, "--a2a-backward-precision");
  const DataType ar_t = parse_type(o_.all_reduce_dtype, "--all-reduce-precision");
  // A100/H100 run fp32 GEMMs on TF32 tensor cores (PyTorch's allow_tf32), as
  // MAD-Max's ZionEX config assumes (f32_flops 156e12).
  const DataType math_t = model_.dense_type == DataType::kFp32 ? DataType::kTf32 : model_.dense_type;

  g_.num_ranks = n_;
  const int compute_s = g_.stream("compute");
  const int emb_comm = g_.stream("emb_comm");
  const int dense_comm = g_.stream("dense_comm");
  const int h2d_s = g_.stream("h2d");
  const int input_comm = o_.pipeline_input ? g_.stream("input_comm") : emb_comm;

  // Communication volumes from the plan.
  Matrix indices(static_cast<std::size_t>(n_), std::vector<std::int64_t>(static_cast<std::size_t>(n_), 0));
  Matrix pooled = indices;
  std::int64_t row_wise_dims = 0;
  std::vector<std::int64_t> node_dims(static_cast<std::size_t>(n_ / gpn_), 0);
  double data_parallel_bytes = 0;
  for (const models::TablePlacement& t : plan_.tables) {
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    if (t.kind == models::ShardingKind::kDataParallel) {
      data_parallel_bytes += static_cast<double>(group.rows * group.dim) * models::element_bytes(ar_t);
      continue;
    }
    for (const models::Shard& s : t.shards) {
      const auto idx = static_cast<std::int64_t>(static_cast<double>(B) * group.pooling * s.lookup_share) * o_.index_bytes;
      for (int r = 0; r < n_; ++r) indices[static_cast<std::size_t>(r)][static_cast<std::size_t>(s.rank)] += idx;
      if (t.kind == models::ShardingKind::kTableWise || t.kind == models::ShardingKind::kColumnWise) {
        for (int r = 0; r < n_; ++r) {
          pooled[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(r)] += B * s.dim * models::element_bytes(fwd_t);
        }
      } else if (t.kind == models::ShardingKind::kTableRowWise) {
        // After the node's reduce-scatter each of its GPUs holds 1/gpn of the pools.
        for (int r = 0; r < n_; ++r) {
          pooled[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(r)] +=
              B * group.dim * models::element_bytes(fwd_t) / gpn_;
        }
      }
    }
    if (t.kind == models::ShardingKind::kRowWise) row_wise_dims += group.dim;
    if (t.kind == models::ShardingKind::kTableRowWise) {
      node_dims[static_cast<std::size_t>(t.shards.front().rank / gpn_)] += group.dim;
    }
  }
  Matrix pooled_grad(static_cast<std::size_t>(n_), std::vector<std::int64_t>(static_cast<std::size_t>(n_), 0));
  for (int a = 0; a < n_; ++a) {
    for (int b = 0; b < n_; ++b) {
      pooled_grad[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] =
          pooled[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] / models::element_bytes(fwd_t) *
          models::element_bytes(bwd_t);
    }
  }
  std::vector<int> all(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) all[static_cast<std::size_t>(r)] = r;
  const auto none = std::vector<std::vector<std::uint32_t>>(static_cast<std::size_t>(n_));
  const auto each = [&](const std::vector<std::int64_t>& ops) {
    std::vector<std::vector<std::uint32_t>> deps(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      if (ops[static_cast<std::size_t>(r)] >= 0) deps[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(ops[static_cast<std::size_t>(r)]));
    }
    return deps;
  };
  const auto per_rank = [&](const std::vector<std::uint32_t>& ops) {
    std::vector<std::int64_t> out(ops.begin(), ops.end());
    return out;
  };

  // 1. Inputs: host-to-device copy, then the indices all-to-all. The copy is
  // a DMA transfer, not a kernel: a host copy op on its own stream (the
  // backend runs it over the server's PCIe links, beside the NIC's traffic),
  // which the breakdown does not count as compute. Pipelined, it carries a later batch
  // (TorchRec's pipeline copies batch i+2 while batch i trains) and nothing
  // of this iteration waits for it; it still bounds the iteration from
  // below (the next iteration cannot start before its batch is on the GPU).
  const std::int64_t input_bytes =
      B * (model_.dense_features * kDenseInputBytes +
           static_cast<std::int64_t>(model_.lookups_per_sample()) * o_.index_bytes);
  std::vector<std::uint32_t> h2d(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    Op copy;
    copy.kind = OpKind::kHostCopy;
    copy.rank = r;
    copy.stream = h2d_s;
    copy.name = o_.pipeline_input ? "input_h2d_later_batch" : "input_h2d";
    copy.category = "input_copy";
    copy.bytes = sim::Bytes(input_bytes);
    copy.to_device = true;
    h2d[static_cast<std::size_t>(r)] = g_.add(std::move(copy));
  }
  // What this iteration's first ops wait for: the copy, unless pipelined.
  const auto input_ready = [&](int r) {
    return o_.pipeline_input ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{h2d[static_cast<std::size_t>(r)]};
  };
  std::vector<std::int64_t> input_a2a(static_cast<std::size_t>(n_), -1);
  if (n_ > 1) {
    input_a2a = collective({.kind = mc::CollectiveKind::kAllToAll,
                            .ranks = all,
                            .all_to_all_v_bytes = indices,
                            .dtype = mc::DataType::kFp32},
                           input_comm, o_.pipeline_input ? "input_all_to_all_next_batch" : "input_all_to_all",
                           o_.pipeline_input ? none : each(per_rank(h2d)));
  }

  // The HBM cache of host-memory tables (FBGEMM's UVM caching): before the
  // embedding forward, the rows its lookups miss are fetched from host
  // memory, and as many evicted rows (each updated by an earlier backward)
  // are written back: two host copies, one each way, over the server's PCIe
  // links (the GPUs behind one CPU socket share its link). Inline, the
  // forward waits for both; prefetched (TorchRec's
  // PrefetchTrainPipelineSparseDist), they fetch the next batch's rows
  // beside this iteration and nothing waits for them.
  std::vector<std::vector<std::uint32_t>> cache_ready(static_cast<std::size_t>(n_));
  {
    int fetch_s = -1;
    int writeback_s = -1;
    for (int r = 0; r < n_; ++r) {
      const std::int64_t bytes = cache_miss_bytes(r);
      if (bytes <= 0) continue;
      if (fetch_s < 0) {
        fetch_s = g_.stream("cache_fetch");
        writeback_s = g_.stream("cache_writeback");
      }
      std::vector<std::uint32_t> deps;
      if (!o_.prefetch_cache) {
        deps = input_ready(r);
        if (!o_.pipeline_input && input_a2a[static_cast<std::size_t>(r)] >= 0) {
          deps.push_back(static_cast<std::uint32_t>(input_a2a[static_cast<std::size_t>(r)]));
        }
      }
      for (const bool to_device : {true, false}) {
        Op copy;
        copy.kind = OpKind::kHostCopy;
        copy.rank = r;
        copy.stream = to_device ? fetch_s : writeback_s;
        copy.name = std::string(to_device ? "embedding_cache_fetch" : "embedding_cache_writeback") +
                    (o_.prefetch_cache ? "_next_batch" : "");
        copy.category = "embedding_cache";
        copy.bytes = sim::Bytes(bytes);
        copy.to_device = to_device;
        copy.deps = deps;
        const std::uint32_t id = g_.add(std::move(copy));
        if (!o_.prefetch_cache) cache_ready[static_cast<std::size_t>(r)].push_back(id);
      }
    }
  }

  // 2. Embedding forward and the pooled-embedding exchange.
  std::vector<std::uint32_t> emb_fwd(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    std::vector<std::uint32_t> deps = input_ready(r);
    if (!o_.pipeline_input && input_a2a[static_cast<std::size_t>(r)] >= 0) {
      deps.push_back(static_cast<std::uint32_t>(input_a2a[static_cast<std::size_t>(r)]));
    }
    const std::vector<std::uint32_t>& cache = cache_ready[static_cast<std::size_t>(r)];
    deps.insert(deps.end(), cache.begin(), cache.end());
    emb_fwd[static_cast<std::size_t>(r)] =
        compute(r, compute_s, "embedding_forward", "embedding", embedding_time(r, false), deps);
  }
  // Quantized communication (ISCA 2022, 5.3): when the wire type differs
  // from the embeddings', every rank converts what it sends before the
  // exchange and what it receives after it, forward and backward.
  std::vector<std::int64_t> owned_elements(static_cast<std::size_t>(n_), 0);  // pooled values it sends
  std::int64_t received_elements = 0;                                         // B x all pooled dims
  for (const models::TablePlacement& t : plan_.tables) {
    if (t.kind == models::ShardingKind::kDataParallel) continue;
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    received_elements += B * group.dim;
    for (const models::Shard& s : t.shards) {
      owned_elements[static_cast<std::size_t>(s.rank)] +=
          global * (t.kind == models::ShardingKind::kTableWise || t.kind == models::ShardingKind::kColumnWise
                        ? s.dim
                        : group.dim);
    }
  }
  const auto convert_op = [&](int r, const char* name, std::int64_t elements, DataType from, DataType to,
                              std::vector<std::uint32_t> deps) {
    return compute(r, compute_s, name, "quantization",
                   elements > 0 ? models::convert(device_, elements, from, to).time : Duration::zero(),
                   std::move(deps));
  };
  if (fwd_t != emb_t && n_ > 1) {
    for (int r = 0; r < n_; ++r) {
      emb_fwd[static_cast<std::size_t>(r)] = convert_op(r, "quantize_pooled", owned_elements[static_cast<std::size_t>(r)],
                                                        emb_t, fwd_t, {emb_fwd[static_cast<std::size_t>(r)]});
    }
  }
  std::vector<std::vector<std::uint32_t>> pooled_ready = each(per_rank(emb_fwd));
  std::vector<std::vector<std::uint32_t>> fwd_comm_done(static_cast<std::size_t>(n_));
  if (n_ > 1) {
    const auto a2a = collective({.kind = mc::CollectiveKind::kAllToAll, .ranks = all, .all_to_all_v_bytes = pooled,
                                 .dtype = wire_type(fwd_t)},
                                emb_comm, "all_to_all", pooled_ready);
    for (int r = 0; r < n_; ++r) fwd_comm_done[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(a2a[static_cast<std::size_t>(r)]));
    if (row_wise_dims > 0) {
      const auto rs = collective({.kind = mc::CollectiveKind::kReduceScatter, .ranks = all,
                                  .bytes_per_rank = sim::Bytes(global * row_wise_dims * models::element_bytes(fwd_t)),
                                  .dtype = wire_type(fwd_t)},
                                 emb_comm, "reduce_scatter", pooled_ready);
      for (int r = 0; r < n_; ++r) fwd_comm_done[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(rs[static_cast<std::size_t>(r)]));
    }
    for (std::size_t node = 0; node < node_dims.size(); ++node) {
      if (node_dims[node] == 0 || gpn_ == 1) continue;
      std::vector<int> members;
      for (int i = 0; i < gpn_; ++i) members.push_back(static_cast<int>(node) * gpn_ + i);
      const auto rs = collective({.kind = mc::CollectiveKind::kReduceScatter, .ranks = members,
                                  .bytes_per_rank = sim::Bytes(global * node_dims[node] * models::element_bytes(fwd_t)),
                                  .dtype = wire_type(fwd_t)},
                                 emb_comm, "reduce_scatter", pooled_ready);
      for (int m : members) fwd_comm_done[static_cast<std::size_t>(m)].push_back(static_cast<std::uint32_t>(rs[static_cast<std::size_t>(m)]));
    }
  }

  // 3. Dense forward: bottom MLP (needs only the dense input), interaction, top MLP.
  std::vector<std::uint32_t> last(static_cast<std::size_t>(n_));
  struct Layer {
    std::string name;
    std::int64_t in;
    std::int64_t out;
  };
  std::vector<Layer> bottom;
  std::vector<Layer> top;
  {
    std::int64_t in = model_.bottom_mlp.input;
    for (std::size_t i = 0; i < model_.bottom_mlp.widths.size(); ++i) {
      bottom.push_back({fmt::format("bottom_mlp.{}", i), in, model_.bottom_mlp.widths[i]});
      in = model_.bottom_mlp.widths[i];
    }
    in = model_.top_mlp.input;
    for (std::size_t i = 0; i < model_.top_mlp.widths.size(); ++i) {
      top.push_back({fmt::format("top_mlp.{}", i), in, model_.top_mlp.widths[i]});
      in = model_.top_mlp.widths[i];
    }
  }
  const auto interaction_cost = [&](bool backward) {
    switch (model_.interaction.kind) {
      case models::InteractionKind::kDot:
        return backward ? models::dot_interaction_backward(device_, B, model_.interaction_features(),
                                                           model_.bottom_mlp.output(), math_t).time
                        : models::dot_interaction_forward(device_, B, model_.interaction_features(),
                                                          model_.bottom_mlp.output(), math_t).time;
      case models::InteractionKind::kDcn: {
        Duration t = Duration::zero();
        for (std::int64_t l = 0; l < model_.interaction.cross_layers; ++l) {
          t += backward ? models::dcn_cross_layer_backward(device_, B, model_.interaction_output(),
                                                           model_.interaction.rank, math_t).time
                        : models::dcn_cross_layer_forward(device_, B, model_.interaction_output(),
                                                          model_.interaction.rank, math_t).time;
        }
        return t;
      }
      case models::InteractionKind::kNone: break;
    }
    return Duration::zero();
  };
  std::vector<std::uint32_t> interaction_fwd(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::vector<std::uint32_t> bottom_done = input_ready(r);  // the dense input, then each layer
    for (const Layer& l : bottom) {
      bottom_done = {compute(r, compute_s, l.name + ".forward", "mlp",
                             models::linear_forward(device_, B, l.in, l.out, math_t).time, bottom_done)};
    }
    std::vector<std::uint32_t> deps = fwd_comm_done[R];
    deps.insert(deps.end(), bottom_done.begin(), bottom_done.end());
    if (fwd_t != emb_t && n_ > 1) {
      deps = {convert_op(r, "dequantize_pooled", received_elements, fwd_t, emb_t, deps)};
    }
    interaction_fwd[R] = compute(r, compute_s, "interaction.forward", "interaction", interaction_cost(false), deps);
    std::uint32_t prev = interaction_fwd[R];
    for (const Layer& l : top) {
      prev = compute(r, compute_s, l.name + ".forward", "mlp",
                     models::linear_forward(device_, B, l.in, l.out, math_t).time, {prev});
    }
    last[R] = prev;
  }

  // 4. Backward: top MLP, interaction, then (beside the embedding gradient
  // exchange) the bottom MLP; gradients all-reduced in buckets as they appear.
  const int ar_bytes = models::element_bytes(ar_t);
  std::vector<std::pair<std::string, std::int64_t>> grads;  // backward order: (op name, bytes)
  for (auto it = top.rbegin(); it != top.rend(); ++it) grads.push_back({it->name, (it->in * it->out + it->out) * ar_bytes});
  const std::int64_t interaction_params =
      model_.interaction.kind == models::InteractionKind::kDcn
          ? model_.interaction.cross_layers * (2 * model_.interaction_output() * model_.interaction.rank + model_.interaction_output())
          : 0;
  grads.push_back({"interaction", interaction_params * ar_bytes});
  for (auto it = bottom.rbegin(); it != bottom.rend(); ++it) grads.push_back({it->name, (it->in * it->out + it->out) * ar_bytes});

  std::vector<std::map<std::string, std::uint32_t>> bwd_op(static_cast<std::size_t>(n_));
  std::vector<std::uint32_t> interaction_bwd(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::uint32_t prev = last[R];
    for (auto it = top.rbegin(); it != top.rend(); ++it) {
      prev = compute(r, compute_s, it->name + ".backward", "mlp",
                     models::linear_backward(device_, B, it->in, it->out, math_t).time, {prev});
      bwd_op[R][it->name] = prev;
    }
    interaction_bwd[R] = compute(r, compute_s, "interaction.backward", "interaction", interaction_cost(true), {prev});
    bwd_op[R]["interaction"] = interaction_bwd[R];
  }
  // Embedding gradient exchange (reverse of the forward one).
  std::vector<std::vector<std::uint32_t>> grads_arrived(static_cast<std::size_t>(n_));
  if (n_ > 1) {
    std::vector<std::uint32_t> grads_ready = interaction_bwd;
    if (bwd_t != emb_t) {
      for (int r = 0; r < n_; ++r) {
        grads_ready[static_cast<std::size_t>(r)] =
            convert_op(r, "quantize_gradients", received_elements, emb_t, bwd_t, {interaction_bwd[static_cast<std::size_t>(r)]});
      }
    }
    const auto deps = each(per_rank(grads_ready));
    const auto a2a = collective({.kind = mc::CollectiveKind::kAllToAll, .ranks = all, .all_to_all_v_bytes = pooled_grad,
                                 .dtype = wire_type(bwd_t)},
                                emb_comm, "all_to_all", deps);
    for (int r = 0; r < n_; ++r) grads_arrived[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(a2a[static_cast<std::size_t>(r)]));
    if (row_wise_dims > 0) {
      const auto ag = collective({.kind = mc::CollectiveKind::kAllGather, .ranks = all,
                                  .bytes_per_rank = sim::Bytes(global * row_wise_dims * models::element_bytes(bwd_t)),
                                  .dtype = wire_type(bwd_t)},
                                 emb_comm, "all_gather", deps);
      for (int r = 0; r < n_; ++r) grads_arrived[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(ag[static_cast<std::size_t>(r)]));
    }
    for (std::size_t node = 0; node < node_dims.size(); ++node) {
      if (node_dims[node] == 0 || gpn_ == 1) continue;
      std::vector<int> members;
      for (int i = 0; i < gpn_; ++i) members.push_back(static_cast<int>(node) * gpn_ + i);
      const auto ag = collective({.kind = mc::CollectiveKind::kAllGather, .ranks = members,
                                  .bytes_per_rank = sim::Bytes(global * node_dims[node] * models::element_bytes(bwd_t)),
                                  .dtype = wire_type(bwd_t)},
                                 emb_comm, "all_gather", deps);
      for (int m : members) grads_arrived[static_cast<std::size_t>(m)].push_back(static_cast<std::uint32_t>(ag[static_cast<std::size_t>(m)]));
    }
  }
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::uint32_t prev = interaction_bwd[R];
    for (auto it = bottom.rbegin(); it != bottom.rend(); ++it) {
      prev = compute(r, compute_s, it->name + ".backward", "mlp",
                     models::linear_backward(device_, B, it->in, it->out, math_t).time, {prev});
      bwd_op[R][it->name] = prev;
    }
    std::vector<std::uint32_t> deps = grads_arrived[R];
    deps.push_back(prev);
    if (bwd_t != emb_t && n_ > 1) {
      deps = {convert_op(r, "dequantize_gradients", owned_elements[R], bwd_t, emb_t, deps)};
    }
    compute(r, compute_s, "embedding_backward", "embedding", embedding_time(r, true), deps);
  }

  // Dense gradient buckets, in backward order; data-parallel tables' gradients
  // ride in the last bucket.
  std::vector<std::vector<std::uint32_t>> buckets_done(static_cast<std::size_t>(n_));
  std::int64_t params = 0;
  std::int64_t bucket = 0;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    bucket += grads[i].second;
    params += grads[i].second / ar_bytes;
    const bool final_bucket = i + 1 == grads.size();
    if (bucket < o_.all_reduce_bucket_bytes && !final_bucket) continue;
    if (final_bucket) bucket += static_cast<std::int64_t>(data_parallel_bytes);
    if (bucket > 0 && n_ > 1) {
      std::vector<std::vector<std::uint32_t>> deps(static_cast<std::size_t>(n_));
      for (int r = 0; r < n_; ++r) deps[static_cast<std::size_t>(r)].push_back(bwd_op[static_cast<std::size_t>(r)][grads[i].first]);
      const auto ar = collective({.kind = mc::CollectiveKind::kAllReduce, .ranks = all, .bytes_per_rank = sim::Bytes(bucket),
                                  .dtype = wire_type(ar_t)},
                                 dense_comm, "all_reduce", deps);
      for (int r = 0; r < n_; ++r) buckets_done[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(ar[static_cast<std::size_t>(r)]));
    }
    bucket = 0;
  }
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::vector<std::uint32_t> deps = buckets_done[R];
    deps.push_back(bwd_op[R][grads.back().first]);
    compute(r, compute_s, "dense_optimizer", "optimizer",
            models::dense_optimizer_step(device_, std::max<std::int64_t>(1, params), o_.dense_optimizer).time, deps);
  }
  return std::move(g_);
}

}  // namespace

models::OpGraph build_dlrm_iteration(const models::DlrmModel& model, const models::ShardingPlan& plan,
                                     int num_gpus, int gpus_per_node, const models::DeviceProfile& device,
                                     const IterationOptions& options) {
  if (!plan.fits) throw InputError(Diagnostic{"sharding", "", plan.reason});
  if (num_gpus < 1 || gpus_per_node < 1 || num_gpus % gpus_per_node != 0 ||
      plan.gpus.size() != static_cast<std::size_t>(num_gpus)) {
    throw InputError(Diagnostic{"iteration", "", fmt::format("a plan for {} GPUs cannot run on {} GPUs",
                                                             plan.gpus.size(), num_gpus)});
  }
  if (options.batch_per_gpu < 1) {
    throw InputError(Diagnostic{"--batch-per-gpu", "", fmt::format("expected >= 1, got {}", options.batch_per_gpu)});
  }
  return Builder(model, plan, num_gpus, gpus_per_node, device, options).build();
}

}  // namespace zx::workloads
