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
  struct Layer {
    std::string name;
    std::int64_t in;
    std::int64_t out;
  };
  using Deps = std::vector<std::vector<std::uint32_t>>;  // per rank

  // The stages of build(), in order: the plan_ and count_ ones work out
  // sizes from the model and the plan; the add_ ones add the ops, in the
  // graph's order, each keeping what later stages wait for.
  void resolve_types();
  void add_streams();
  void plan_volumes();
  void count_converted_elements();
  void plan_layers();
  void plan_dense_gradients();
  void add_input_exchange();
  void add_cache_copies();
  void add_embedding_forward();
  void add_dense_forward();
  void add_top_backward();
  void add_gradient_exchange();
  void add_bottom_and_embedding_backward();
  void add_gradient_buckets();
  void add_optimizer();

  // The pooled embeddings' exchange, forward (all-to-all, then the
  // reduce-scatters of row-wise and table-row-wise shards) or backward
  // (all-to-all, then all-gathers); returns each rank's collective ops.
  Deps add_embedding_exchange(const Matrix& a2a_bytes, DataType type, mc::CollectiveKind row_kind,
                              const std::string& row_category, const Deps& deps);
  // Adds one collective over `ranks` and one op per member on `stream`,
  // each depending on deps[rank]; returns the op of each rank (or -1).
  std::vector<std::int64_t> collective(models::CollectiveCall call, int stream, const std::string& category,
                                       const std::vector<std::vector<std::uint32_t>>& deps);
  std::uint32_t compute(int rank, int stream, const std::string& name, const std::string& category,
                        Duration duration, std::vector<std::uint32_t> deps);
  // A conversion kernel between the embeddings' type and a wire type
  // (quantized communication); none to do takes no time.
  std::uint32_t convert(int r, const char* name, std::int64_t elements, DataType from, DataType to,
                        std::vector<std::uint32_t> deps);
  Duration embedding_time(int rank, bool backward) const;
  Duration interaction_time(bool backward) const;
  std::int64_t cache_miss_bytes(int rank) const;
  // Per rank, the op `ops[rank]` as its one dependency (none where -1).
  Deps each(const std::vector<std::int64_t>& ops) const;
  Deps each(const std::vector<std::uint32_t>& ops) const;
  // What this iteration's first ops wait for: the copy, unless pipelined.
  std::vector<std::uint32_t> input_ready(int r) const;
  // The GPUs of node `node`.
  std::vector<int> node_members(std::size_t node) const;

  const models::DlrmModel& model_;
  const models::ShardingPlan& plan_;
  const int n_;
  const int gpn_;
  const models::DeviceProfile& device_;
  const IterationOptions& o_;
  OpGraph g_;

  // Element types: the tables', on the wire forward and backward, of the
  // dense gradients, and of the dense math.
  DataType emb_t_ = DataType::kFp32;
  DataType fwd_t_ = DataType::kFp32;
  DataType bwd_t_ = DataType::kFp32;
  DataType ar_t_ = DataType::kFp32;
  DataType math_t_ = DataType::kFp32;
  // Streams.
  int compute_s_ = -1;
  int emb_comm_ = -1;
  int dense_comm_ = -1;
  int h2d_s_ = -1;
  int input_comm_ = -1;
  // Communication volumes from the plan.
  Matrix indices_;      // [src][dst] bytes of indices
  Matrix pooled_;       // [src][dst] bytes of pooled embeddings forward
  Matrix pooled_grad_;  // [src][dst] bytes of their gradients backward
  std::int64_t row_wise_dims_ = 0;
  std::vector<std::int64_t> node_dims_;  // per node: table-row-wise dims
  double data_parallel_bytes_ = 0;
  std::vector<std::int64_t> owned_elements_;  // per rank: pooled values it sends
  std::int64_t received_elements_ = 0;        // B x all pooled dims
  std::vector<int> all_;                      // every rank
  std::vector<Layer> bottom_;
  std::vector<Layer> top_;
  // Per rank, the ops later stages wait for.
  std::vector<std::uint32_t> h2d_;
  std::vector<std::int64_t> input_a2a_;
  Deps cache_ready_;
  std::vector<std::uint32_t> emb_fwd_;
  Deps fwd_comm_done_;  // the pooled embeddings' exchange
  std::vector<std::uint32_t> last_;  // the top MLP's last forward layer
  std::vector<std::uint32_t> interaction_bwd_;
  std::vector<std::map<std::string, std::uint32_t>> bwd_op_;  // layer name -> its backward op
  Deps grads_arrived_;  // the embedding gradients' exchange
  Deps buckets_done_;   // the dense gradients' all-reduces
  // Dense gradients in backward order: (layer name, bytes).
  std::vector<std::pair<std::string, std::int64_t>> grads_;
  std::int64_t params_ = 0;  // dense parameters, all reduced
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

Builder::Deps Builder::each(const std::vector<std::int64_t>& ops) const {
  Deps deps(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    const std::int64_t op = ops[static_cast<std::size_t>(r)];
    if (op >= 0) deps[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(op));
  }
  return deps;
}

Builder::Deps Builder::each(const std::vector<std::uint32_t>& ops) const {
  return each(std::vector<std::int64_t>(ops.begin(), ops.end()));
}

std::vector<std::uint32_t> Builder::input_ready(int r) const {
  return o_.pipeline_input ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{h2d_[static_cast<std::size_t>(r)]};
}

std::vector<int> Builder::node_members(std::size_t node) const {
  std::vector<int> members;
  for (int i = 0; i < gpn_; ++i) members.push_back(static_cast<int>(node) * gpn_ + i);
  return members;
}

std::uint32_t Builder::convert(int r, const char* name, std::int64_t elements, DataType from, DataType to,
                               std::vector<std::uint32_t> deps) {
  return compute(r, compute_s_, name, "quantization",
                 elements > 0 ? models::convert(device_, elements, from, to).time : Duration::zero(), std::move(deps));
}

Duration Builder::interaction_time(bool backward) const {
  const std::int64_t B = o_.batch_per_gpu;
  switch (model_.interaction.kind) {
    case models::InteractionKind::kDot:
      return backward ? models::dot_interaction_backward(device_, B, model_.interaction_features(),
                                                         model_.bottom_mlp.output(), math_t_).time
                      : models::dot_interaction_forward(device_, B, model_.interaction_features(),
                                                        model_.bottom_mlp.output(), math_t_).time;
    case models::InteractionKind::kDcn: {
      Duration t = Duration::zero();
      for (std::int64_t l = 0; l < model_.interaction.cross_layers; ++l) {
        t += backward ? models::dcn_cross_layer_backward(device_, B, model_.interaction_output(),
                                                         model_.interaction.rank, math_t_).time
                      : models::dcn_cross_layer_forward(device_, B, model_.interaction_output(),
                                                        model_.interaction.rank, math_t_).time;
      }
      return t;
    }
    case models::InteractionKind::kNone: break;
  }
  return Duration::zero();
}

OpGraph Builder::build() {
  resolve_types();
  add_streams();
  plan_volumes();
  count_converted_elements();
  plan_layers();
  plan_dense_gradients();
  add_input_exchange();
  add_cache_copies();
  add_embedding_forward();
  add_dense_forward();
  add_top_backward();
  add_gradient_exchange();
  add_bottom_and_embedding_backward();
  add_gradient_buckets();
  add_optimizer();
  return std::move(g_);
}

// The element types; a bad name in the options throws, naming its flag.
void Builder::resolve_types() {
  emb_t_ = model_.embedding_type;
  fwd_t_ = o_.a2a_forward_dtype.empty() ? emb_t_ : parse_type(o_.a2a_forward_dtype, "--a2a-precision");
  bwd_t_ = o_.a2a_backward_dtype.empty() ? emb_t_ : parse_type(o_.a2a_backward_dtype, "--a2a-backward-precision");
  ar_t_ = parse_type(o_.all_reduce_dtype, "--all-reduce-precision");
  // A100/H100 run fp32 GEMMs on TF32 tensor cores (PyTorch's allow_tf32), as
  // MAD-Max's ZionEX config assumes (f32_flops 156e12).
  math_t_ = model_.dense_type == DataType::kFp32 ? DataType::kTf32 : model_.dense_type;
}

void Builder::add_streams() {
  g_.num_ranks = n_;
  compute_s_ = g_.stream("compute");
  emb_comm_ = g_.stream("emb_comm");
  dense_comm_ = g_.stream("dense_comm");
  h2d_s_ = g_.stream("h2d");
  input_comm_ = o_.pipeline_input ? g_.stream("input_comm") : emb_comm_;
}

// Communication volumes from the plan: the indices and pooled embeddings
// each rank sends each other, the dims that row-wise and table-row-wise
// shards reduce-scatter, and the data-parallel tables' gradient bytes.
void Builder::plan_volumes() {
  const std::int64_t B = o_.batch_per_gpu;
  indices_.assign(static_cast<std::size_t>(n_), std::vector<std::int64_t>(static_cast<std::size_t>(n_), 0));
  pooled_ = indices_;
  node_dims_.assign(static_cast<std::size_t>(n_ / gpn_), 0);
  for (const models::TablePlacement& t : plan_.tables) {
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    if (t.kind == models::ShardingKind::kDataParallel) {
      data_parallel_bytes_ += static_cast<double>(group.rows * group.dim) * models::element_bytes(ar_t_);
      continue;
    }
    for (const models::Shard& s : t.shards) {
      const auto idx = static_cast<std::int64_t>(static_cast<double>(B) * group.pooling * s.lookup_share) * o_.index_bytes;
      for (int r = 0; r < n_; ++r) indices_[static_cast<std::size_t>(r)][static_cast<std::size_t>(s.rank)] += idx;
      if (t.kind == models::ShardingKind::kTableWise || t.kind == models::ShardingKind::kColumnWise) {
        for (int r = 0; r < n_; ++r) {
          pooled_[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(r)] += B * s.dim * models::element_bytes(fwd_t_);
        }
      } else if (t.kind == models::ShardingKind::kTableRowWise) {
        // After the node's reduce-scatter each of its GPUs holds 1/gpn of the pools.
        for (int r = 0; r < n_; ++r) {
          pooled_[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(r)] +=
              B * group.dim * models::element_bytes(fwd_t_) / gpn_;
        }
      }
    }
    if (t.kind == models::ShardingKind::kRowWise) row_wise_dims_ += group.dim;
    if (t.kind == models::ShardingKind::kTableRowWise) {
      node_dims_[static_cast<std::size_t>(t.shards.front().rank / gpn_)] += group.dim;
    }
  }
  pooled_grad_.assign(static_cast<std::size_t>(n_), std::vector<std::int64_t>(static_cast<std::size_t>(n_), 0));
  for (int a = 0; a < n_; ++a) {
    for (int b = 0; b < n_; ++b) {
      pooled_grad_[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] =
          pooled_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] / models::element_bytes(fwd_t_) *
          models::element_bytes(bwd_t_);
    }
  }
  all_.resize(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) all_[static_cast<std::size_t>(r)] = r;
}

// Quantized communication (ISCA 2022, 5.3): when the wire type differs
// from the embeddings', every rank converts what it sends before the
// exchange and what it receives after it, forward and backward.
void Builder::count_converted_elements() {
  const std::int64_t B = o_.batch_per_gpu;
  const std::int64_t global = B * n_;
  owned_elements_.assign(static_cast<std::size_t>(n_), 0);
  for (const models::TablePlacement& t : plan_.tables) {
    if (t.kind == models::ShardingKind::kDataParallel) continue;
    const models::TableGroup& group = model_.tables[static_cast<std::size_t>(t.group)];
    received_elements_ += B * group.dim;
    for (const models::Shard& s : t.shards) {
      owned_elements_[static_cast<std::size_t>(s.rank)] +=
          global * (t.kind == models::ShardingKind::kTableWise || t.kind == models::ShardingKind::kColumnWise
                        ? s.dim
                        : group.dim);
    }
  }
}

// The MLPs' layers: bottom_mlp.i and top_mlp.i, each from the width before.
void Builder::plan_layers() {
  std::int64_t in = model_.bottom_mlp.input;
  for (std::size_t i = 0; i < model_.bottom_mlp.widths.size(); ++i) {
    bottom_.push_back({fmt::format("bottom_mlp.{}", i), in, model_.bottom_mlp.widths[i]});
    in = model_.bottom_mlp.widths[i];
  }
  in = model_.top_mlp.input;
  for (std::size_t i = 0; i < model_.top_mlp.widths.size(); ++i) {
    top_.push_back({fmt::format("top_mlp.{}", i), in, model_.top_mlp.widths[i]});
    in = model_.top_mlp.widths[i];
  }
}

// 1. Inputs: host-to-device copy, then the indices all-to-all. The copy is
// a DMA transfer, not a kernel: a host copy op on its own stream (the
// backend runs it over the server's PCIe links, beside the NIC's traffic),
// which the breakdown does not count as compute. Pipelined, it carries a later batch
// (TorchRec's pipeline copies batch i+2 while batch i trains) and nothing
// of this iteration waits for it; it still bounds the iteration from
// below (the next iteration cannot start before its batch is on the GPU).
void Builder::add_input_exchange() {
  const std::int64_t input_bytes =
      o_.batch_per_gpu * (model_.dense_features * kDenseInputBytes +
                          static_cast<std::int64_t>(model_.lookups_per_sample()) * o_.index_bytes);
  h2d_.resize(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    Op copy;
    copy.kind = OpKind::kHostCopy;
    copy.rank = r;
    copy.stream = h2d_s_;
    copy.name = o_.pipeline_input ? "input_h2d_later_batch" : "input_h2d";
    copy.category = "input_copy";
    copy.bytes = sim::Bytes(input_bytes);
    copy.to_device = true;
    h2d_[static_cast<std::size_t>(r)] = g_.add(std::move(copy));
  }
  input_a2a_.assign(static_cast<std::size_t>(n_), -1);
  if (n_ > 1) {
    input_a2a_ = collective({.kind = mc::CollectiveKind::kAllToAll,
                             .ranks = all_,
                             .all_to_all_v_bytes = indices_,
                             .dtype = mc::DataType::kFp32},
                            input_comm_, o_.pipeline_input ? "input_all_to_all_next_batch" : "input_all_to_all",
                            o_.pipeline_input ? Deps(static_cast<std::size_t>(n_)) : each(h2d_));
  }
}

// The HBM cache of host-memory tables (FBGEMM's UVM caching): before the
// embedding forward, the rows its lookups miss are fetched from host
// memory, and as many evicted rows (each updated by an earlier backward)
// are written back: two host copies, one each way, over the server's PCIe
// links (the GPUs behind one CPU socket share its link). Inline, the
// forward waits for both; prefetched (TorchRec's
// PrefetchTrainPipelineSparseDist), they fetch the next batch's rows
// beside this iteration and nothing waits for them.
void Builder::add_cache_copies() {
  cache_ready_.assign(static_cast<std::size_t>(n_), {});
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
      if (!o_.pipeline_input && input_a2a_[static_cast<std::size_t>(r)] >= 0) {
        deps.push_back(static_cast<std::uint32_t>(input_a2a_[static_cast<std::size_t>(r)]));
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
      if (!o_.prefetch_cache) cache_ready_[static_cast<std::size_t>(r)].push_back(id);
    }
  }
}

// 2. Embedding forward, the conversion of what each rank sends, and the
// pooled-embedding exchange.
void Builder::add_embedding_forward() {
  emb_fwd_.resize(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    std::vector<std::uint32_t> deps = input_ready(r);
    if (!o_.pipeline_input && input_a2a_[static_cast<std::size_t>(r)] >= 0) {
      deps.push_back(static_cast<std::uint32_t>(input_a2a_[static_cast<std::size_t>(r)]));
    }
    const std::vector<std::uint32_t>& cache = cache_ready_[static_cast<std::size_t>(r)];
    deps.insert(deps.end(), cache.begin(), cache.end());
    emb_fwd_[static_cast<std::size_t>(r)] =
        compute(r, compute_s_, "embedding_forward", "embedding", embedding_time(r, false), deps);
  }
  if (fwd_t_ != emb_t_ && n_ > 1) {
    for (int r = 0; r < n_; ++r) {
      emb_fwd_[static_cast<std::size_t>(r)] = convert(r, "quantize_pooled", owned_elements_[static_cast<std::size_t>(r)],
                                                      emb_t_, fwd_t_, {emb_fwd_[static_cast<std::size_t>(r)]});
    }
  }
  fwd_comm_done_.assign(static_cast<std::size_t>(n_), {});
  if (n_ > 1) {
    fwd_comm_done_ = add_embedding_exchange(pooled_, fwd_t_, mc::CollectiveKind::kReduceScatter, "reduce_scatter",
                                            each(emb_fwd_));
  }
}

Builder::Deps Builder::add_embedding_exchange(const Matrix& a2a_bytes, DataType type, mc::CollectiveKind row_kind,
                                              const std::string& row_category, const Deps& deps) {
  const std::int64_t global = o_.batch_per_gpu * n_;
  Deps done(static_cast<std::size_t>(n_));
  // Adds one collective; each member's op joins its list.
  const auto add = [&](models::CollectiveCall call, const std::string& category) {
    const std::vector<int> members = call.ranks;
    const std::vector<std::int64_t> ops = collective(std::move(call), emb_comm_, category, deps);
    for (int r : members) done[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(ops[static_cast<std::size_t>(r)]));
  };
  add({.kind = mc::CollectiveKind::kAllToAll, .ranks = all_, .all_to_all_v_bytes = a2a_bytes, .dtype = wire_type(type)},
      "all_to_all");
  if (row_wise_dims_ > 0) {
    add({.kind = row_kind, .ranks = all_,
         .bytes_per_rank = sim::Bytes(global * row_wise_dims_ * models::element_bytes(type)),
         .dtype = wire_type(type)},
        row_category);
  }
  for (std::size_t node = 0; node < node_dims_.size(); ++node) {
    if (node_dims_[node] == 0 || gpn_ == 1) continue;
    add({.kind = row_kind, .ranks = node_members(node),
         .bytes_per_rank = sim::Bytes(global * node_dims_[node] * models::element_bytes(type)),
         .dtype = wire_type(type)},
        row_category);
  }
  return done;
}

// 3. Dense forward: bottom MLP (needs only the dense input), interaction, top MLP.
void Builder::add_dense_forward() {
  const std::int64_t B = o_.batch_per_gpu;
  last_.resize(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::vector<std::uint32_t> bottom_done = input_ready(r);  // the dense input, then each layer
    for (const Layer& l : bottom_) {
      bottom_done = {compute(r, compute_s_, l.name + ".forward", "mlp",
                             models::linear_forward(device_, B, l.in, l.out, math_t_).time, bottom_done)};
    }
    std::vector<std::uint32_t> deps = fwd_comm_done_[R];
    deps.insert(deps.end(), bottom_done.begin(), bottom_done.end());
    if (fwd_t_ != emb_t_ && n_ > 1) {
      deps = {convert(r, "dequantize_pooled", received_elements_, fwd_t_, emb_t_, deps)};
    }
    std::uint32_t prev = compute(r, compute_s_, "interaction.forward", "interaction", interaction_time(false), deps);
    for (const Layer& l : top_) {
      prev = compute(r, compute_s_, l.name + ".forward", "mlp",
                     models::linear_forward(device_, B, l.in, l.out, math_t_).time, {prev});
    }
    last_[R] = prev;
  }
}

// The dense gradients in the order backward produces them: the top MLP's
// layers, the interaction's (DCN's cross layers; none for dot), the bottom
// MLP's; weights and biases, in the all-reduce's type.
void Builder::plan_dense_gradients() {
  const int ar_bytes = models::element_bytes(ar_t_);
  for (auto it = top_.rbegin(); it != top_.rend(); ++it) grads_.push_back({it->name, (it->in * it->out + it->out) * ar_bytes});
  const std::int64_t interaction_params =
      model_.interaction.kind == models::InteractionKind::kDcn
          ? model_.interaction.cross_layers * (2 * model_.interaction_output() * model_.interaction.rank + model_.interaction_output())
          : 0;
  grads_.push_back({"interaction", interaction_params * ar_bytes});
  for (auto it = bottom_.rbegin(); it != bottom_.rend(); ++it) grads_.push_back({it->name, (it->in * it->out + it->out) * ar_bytes});
}

// 4. Backward: top MLP, interaction, then (beside the embedding gradient
// exchange) the bottom MLP; gradients all-reduced in buckets as they appear.
// This stage: the top MLP and the interaction.
void Builder::add_top_backward() {
  const std::int64_t B = o_.batch_per_gpu;
  bwd_op_.resize(static_cast<std::size_t>(n_));
  interaction_bwd_.resize(static_cast<std::size_t>(n_));
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::uint32_t prev = last_[R];
    for (auto it = top_.rbegin(); it != top_.rend(); ++it) {
      prev = compute(r, compute_s_, it->name + ".backward", "mlp",
                     models::linear_backward(device_, B, it->in, it->out, math_t_).time, {prev});
      bwd_op_[R][it->name] = prev;
    }
    interaction_bwd_[R] = compute(r, compute_s_, "interaction.backward", "interaction", interaction_time(true), {prev});
    bwd_op_[R]["interaction"] = interaction_bwd_[R];
  }
}

// Embedding gradient exchange (reverse of the forward one), after the
// conversion of what each rank sends.
void Builder::add_gradient_exchange() {
  grads_arrived_.assign(static_cast<std::size_t>(n_), {});
  if (n_ <= 1) return;
  std::vector<std::uint32_t> grads_ready = interaction_bwd_;
  if (bwd_t_ != emb_t_) {
    for (int r = 0; r < n_; ++r) {
      grads_ready[static_cast<std::size_t>(r)] =
          convert(r, "quantize_gradients", received_elements_, emb_t_, bwd_t_, {interaction_bwd_[static_cast<std::size_t>(r)]});
    }
  }
  grads_arrived_ =
      add_embedding_exchange(pooled_grad_, bwd_t_, mc::CollectiveKind::kAllGather, "all_gather", each(grads_ready));
}

// The bottom MLP's backward, then the embedding backward (with the fused
// optimizer) once its gradients have arrived.
void Builder::add_bottom_and_embedding_backward() {
  const std::int64_t B = o_.batch_per_gpu;
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::uint32_t prev = interaction_bwd_[R];
    for (auto it = bottom_.rbegin(); it != bottom_.rend(); ++it) {
      prev = compute(r, compute_s_, it->name + ".backward", "mlp",
                     models::linear_backward(device_, B, it->in, it->out, math_t_).time, {prev});
      bwd_op_[R][it->name] = prev;
    }
    std::vector<std::uint32_t> deps = grads_arrived_[R];
    deps.push_back(prev);
    if (bwd_t_ != emb_t_ && n_ > 1) {
      deps = {convert(r, "dequantize_gradients", owned_elements_[R], bwd_t_, emb_t_, deps)};
    }
    compute(r, compute_s_, "embedding_backward", "embedding", embedding_time(r, true), deps);
  }
}

// Dense gradient buckets, in backward order; data-parallel tables' gradients
// ride in the last bucket. Each all-reduce waits for the backward op that
// completes its bucket.
void Builder::add_gradient_buckets() {
  const int ar_bytes = models::element_bytes(ar_t_);
  buckets_done_.assign(static_cast<std::size_t>(n_), {});
  std::int64_t bucket = 0;
  for (std::size_t i = 0; i < grads_.size(); ++i) {
    bucket += grads_[i].second;
    params_ += grads_[i].second / ar_bytes;
    const bool final_bucket = i + 1 == grads_.size();
    if (bucket < o_.all_reduce_bucket_bytes && !final_bucket) continue;
    if (final_bucket) bucket += static_cast<std::int64_t>(data_parallel_bytes_);
    if (bucket > 0 && n_ > 1) {
      Deps deps(static_cast<std::size_t>(n_));
      for (int r = 0; r < n_; ++r) deps[static_cast<std::size_t>(r)].push_back(bwd_op_[static_cast<std::size_t>(r)][grads_[i].first]);
      const auto ar = collective({.kind = mc::CollectiveKind::kAllReduce, .ranks = all_, .bytes_per_rank = sim::Bytes(bucket),
                                  .dtype = wire_type(ar_t_)},
                                 dense_comm_, "all_reduce", deps);
      for (int r = 0; r < n_; ++r) buckets_done_[static_cast<std::size_t>(r)].push_back(static_cast<std::uint32_t>(ar[static_cast<std::size_t>(r)]));
    }
    bucket = 0;
  }
}

// The dense optimizer, after every bucket's all-reduce and the last backward op.
void Builder::add_optimizer() {
  for (int r = 0; r < n_; ++r) {
    const auto R = static_cast<std::size_t>(r);
    std::vector<std::uint32_t> deps = buckets_done_[R];
    deps.push_back(bwd_op_[R][grads_.back().first]);
    compute(r, compute_s_, "dense_optimizer", "optimizer",
            models::dense_optimizer_step(device_, std::max<std::int64_t>(1, params_), o_.dense_optimizer).time, deps);
  }
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
