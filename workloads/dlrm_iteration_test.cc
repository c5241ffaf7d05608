// Tests of the DLRM iteration graph: it is a valid op graph, its collectives
// carry the sizes the sharding implies (pooled all-to-all: batch x pooled
// dims x element size), its all-reduce buckets carry every dense gradient
// once, and it runs to completion on the executor.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"
#include "models/execution/executor.h"
#include "workloads/dlrm_iteration.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

const models::DeviceProfile& a100() {
  static const models::DeviceProfile p = models::builtin_device_profile("a100-40gb");
  return p;
}

// Communication that takes no time, so the run shows the compute alone.
class InstantBackend : public models::CommunicationBackend {
 public:
  explicit InstantBackend(sim::Simulator& s) : sim_(s) {}
  void start_collective(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }
  void start_transfer(const models::OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }
  void start_host_copy(const models::OpGraph&, std::uint32_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }

 private:
  sim::Simulator& sim_;
};

std::int64_t matrix_total(const std::vector<std::vector<std::int64_t>>& m) {
  std::int64_t total = 0;
  for (const auto& row : m) total = std::accumulate(row.begin(), row.end(), total);
  return total;
}

// Model A-small, 8 GPUs, table-wise: the pooled all-to-all moves, from each
// table's owner to each of the 8 GPUs, 512 samples x 94 dims x 2 bytes; the
// indices all-to-all 512 x 15 lookups x 8 bytes per table per GPU.
TEST(DlrmIterationTest, CollectiveSizesFollowTheSharding) {
  const models::DlrmModel m = models::load_model("dlrm-a-small");
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, a100(), {});
  ASSERT_TRUE(plan.fits) << plan.reason;
  const models::OpGraph g = build_dlrm_iteration(m, plan, 8, 8, a100(), {});
  EXPECT_TRUE(models::validate(g).empty());
  std::map<std::string, int> kinds;
  std::int64_t all_reduce_bytes = 0;
  for (const models::CollectiveCall& c : g.collectives) {
    ++kinds[std::string(mc::to_string(c.kind))];
    if (c.kind == mc::CollectiveKind::kAllReduce) all_reduce_bytes += c.bytes_per_rank.count();
  }
  EXPECT_EQ(kinds["all_to_all"], 3);  // indices (next batch), pooled forward, gradients backward
  EXPECT_EQ(kinds["reduce_scatter"], 0);
  const std::int64_t tables = 4096;
  EXPECT_EQ(matrix_total(g.collectives[0].all_to_all_v_bytes), 8 * 512 * tables * 15 * 8);
  EXPECT_EQ(matrix_total(g.collectives[1].all_to_all_v_bytes), 8 * 512 * tables * 94 * 2);
  // Every dense gradient (fp32) is all-reduced once: 20 layers of 3994^2 + 3994.
  EXPECT_EQ(all_reduce_bytes, 20LL * (3994 * 3994 + 3994) * 4);
  EXPECT_GE(kinds["all_reduce"], 2);  // 25 MB buckets: the 1.28 GB of gradients in many
}

// Row-wise tables use a reduce-scatter of all global samples' partial pools
// forward and an all-gather backward; fp16 forward / bf16 backward types apply.
TEST(DlrmIterationTest, RowWiseUsesReduceScatterAndPrecisionsApply) {
  const models::DlrmModel m = models::load_model("dlrm-a-small");
  models::ShardingOptions o;
  o.scheme = "row_wise";
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, a100(), o);
  IterationOptions io;
  io.a2a_forward_dtype = "fp16";
  io.a2a_backward_dtype = "bf16";
  const models::OpGraph g = build_dlrm_iteration(m, plan, 8, 8, a100(), io);
  EXPECT_TRUE(models::validate(g).empty());
  bool found_rs = false;
  bool found_ag = false;
  for (const models::CollectiveCall& c : g.collectives) {
    if (c.kind == mc::CollectiveKind::kReduceScatter) {
      found_rs = true;
      EXPECT_EQ(c.bytes_per_rank.count(), 8LL * 512 * 4096 * 94 * 2);
      EXPECT_EQ(c.dtype, mc::DataType::kFp16);
    }
    if (c.kind == mc::CollectiveKind::kAllGather) {
      found_ag = true;
      EXPECT_EQ(c.dtype, mc::DataType::kBf16);
    }
  }
  EXPECT_TRUE(found_rs);
  EXPECT_TRUE(found_ag);
}

// Table-row-wise tables reduce-scatter inside their node (one collective per
// node that owns such tables, over that node's 8 GPUs) and all-gather
// backward; column-wise tables send their column shards like table-wise ones;
// data-parallel tables add their whole gradient to the all-reduce.
TEST(DlrmIterationTest, EverySchemeHasItsCollectives) {
  const models::DlrmModel m = models::load_model("dlrm-dcnv2");
  for (const char* scheme : {"table_row_wise", "column_wise", "data_parallel"}) {
    models::ShardingOptions so;
    so.scheme = scheme;
    const models::ShardingPlan plan = models::plan_sharding(m, 16, 8, a100(), so);
    ASSERT_TRUE(plan.fits) << plan.reason;
    const models::OpGraph g = build_dlrm_iteration(m, plan, 16, 8, a100(), {});
    EXPECT_TRUE(models::validate(g).empty()) << scheme;
    std::int64_t all_reduce = 0;
    int node_reduce_scatters = 0;
    std::int64_t pooled = 0;
    for (const models::CollectiveCall& c : g.collectives) {
      if (c.kind == mc::CollectiveKind::kAllReduce) all_reduce += c.bytes_per_rank.count();
      if (c.kind == mc::CollectiveKind::kReduceScatter && c.ranks.size() == 8) ++node_reduce_scatters;
      if (c.kind == mc::CollectiveKind::kAllToAll && &c == &g.collectives[1]) pooled = matrix_total(c.all_to_all_v_bytes);
    }
    const std::string s = scheme;
    if (s == "table_row_wise") {
      EXPECT_GE(node_reduce_scatters, 1);
      EXPECT_LE(node_reduce_scatters, 2);
    }
    if (s == "column_wise") {
      // Every table's 128 columns reach every GPU: 16 x 512 x 26 x 128 x 4 bytes.
      EXPECT_EQ(pooled, 16LL * 512 * 26 * 128 * 4);
    }
    if (s == "data_parallel") {
      // Tables kept in HBM are replicated; their gradients join the all-reduce.
      std::int64_t replicated = 0;
      for (const models::TablePlacement& t : plan.tables) {
        if (t.kind == models::ShardingKind::kDataParallel) {
          const models::TableGroup& grp = m.tables[static_cast<std::size_t>(t.group)];
          replicated += grp.rows * grp.dim * 4;
        }
      }
      EXPECT_GT(replicated, 0);
      EXPECT_GE(all_reduce, replicated);
    }
  }
}

// With instant communication the iteration runs to completion, every rank's
// compute stream is busy for the same time (balanced tables), and the
// embedding backward comes after the forward.
TEST(DlrmIterationTest, RunsOnTheExecutor) {
  for (const char* name : {"dlrm-a-small", "dlrm-dcnv2"}) {
    const models::DlrmModel m = models::load_model(name);
    const models::ShardingPlan plan = models::plan_sharding(m, 16, 8, a100(), {});
    ASSERT_TRUE(plan.fits) << plan.reason;
    const models::OpGraph g = build_dlrm_iteration(m, plan, 16, 8, a100(), {});
    sim::Simulator sim;
    InstantBackend backend(sim);
    const models::ExecutionResult r = models::execute(sim, g, backend);
    EXPECT_GT(r.makespan, sim::TimePoint::zero()) << name;
    EXPECT_GT(r.time_by_category.at("mlp"), sim::Duration::zero()) << name;
    EXPECT_GT(r.time_by_category.at("embedding"), sim::Duration::zero()) << name;
    EXPECT_FALSE(r.critical_path.empty());
  }
}

// Quantized communication adds one conversion per direction and side: four
// kernels per rank when forward and backward both differ from the tables' type.
TEST(DlrmIterationTest, QuantizationAddsConversionKernels) {
  const models::DlrmModel m = models::load_model("dlrm-dcnv2");  // fp32 tables
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, a100(), {});
  IterationOptions o;
  o.a2a_forward_dtype = "fp16";
  o.a2a_backward_dtype = "bf16";
  const models::OpGraph g = build_dlrm_iteration(m, plan, 8, 8, a100(), o);
  EXPECT_TRUE(models::validate(g).empty());
  int conversions = 0;
  for (const models::Op& op : g.ops) {
    if (op.category == "quantization" && op.rank == 0) ++conversions;
  }
  EXPECT_EQ(conversions, 4);
  const models::OpGraph plain = build_dlrm_iteration(m, plan, 8, 8, a100(), {});
  for (const models::Op& op : plain.ops) EXPECT_NE(op.category, "quantization");
}

// Fused embeddings are never slower than unfused ones for the same plan.
TEST(DlrmIterationTest, FusedNeverSlower) {
  const models::DlrmModel m = models::load_model("dlrm-a-small");
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, a100(), {});
  sim::Duration times[2];
  for (int fused = 0; fused < 2; ++fused) {
    IterationOptions o;
    o.fused_embeddings = fused == 1;
    const models::OpGraph g = build_dlrm_iteration(m, plan, 8, 8, a100(), o);
    sim::Simulator sim;
    InstantBackend backend(sim);
    times[fused] = models::execute(sim, g, backend).makespan.since_start();
  }
  EXPECT_LT(times[1], times[0]);
}

// Model A-small on 8 GPUs, its table 0 in host memory on GPU 3: before the
// embedding forward, GPU 3 fetches the rows its lookups miss in the HBM
// cache, (1 - 0.9) x 4,096 samples x 15 lookups x 94 dims x 2 bytes =
// 1,155,072 bytes, and writes as many evicted rows back; the forward waits
// for both, and its kernels take as long as with the same shards in HBM.
// Prefetched, the copies carry the next batch and nothing waits for them.
TEST(DlrmIterationTest, HostMemoryTablesFetchTheirCacheMisses) {
  const models::DlrmModel m = models::load_model("dlrm-a-small");
  models::ShardingOptions so;
  so.scheme = "table_wise";
  so.overrides.push_back({.table = 0, .kind = models::ShardingKind::kTableWise, .rank = 3});
  so.overrides.back().memory = models::TableMemory::kHost;
  const models::ShardingPlan in_host = models::plan_sharding(m, 8, 8, a100(), so);
  ASSERT_TRUE(in_host.fits) << in_host.reason;
  ASSERT_EQ(in_host.host_memory_tables(), 1);
  ASSERT_TRUE(in_host.tables[0].host_memory);
  models::ShardingPlan in_hbm = in_host;  // the same shards, all in HBM
  in_hbm.tables[0].host_memory = false;
  ASSERT_EQ(in_host.host_cache_hit_rate, 0.9);

  const auto find = [](const models::OpGraph& g, int rank, const std::string& name) -> std::int64_t {
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      if (g.ops[i].rank == rank && g.ops[i].name == name) return static_cast<std::int64_t>(i);
    }
    return -1;
  };
  const models::OpGraph plain = build_dlrm_iteration(m, in_hbm, 8, 8, a100(), {});
  const models::OpGraph g = build_dlrm_iteration(m, in_host, 8, 8, a100(), {});
  ASSERT_TRUE(models::validate(g).empty());
  for (const std::string& stream : plain.stream_names) EXPECT_EQ(stream.rfind("cache_", 0), std::string::npos);
  EXPECT_EQ(g.ops.size(), plain.ops.size() + 2);
  const std::int64_t fetch = find(g, 3, "embedding_cache_fetch");
  const std::int64_t writeback = find(g, 3, "embedding_cache_writeback");
  ASSERT_GE(fetch, 0);
  ASSERT_GE(writeback, 0);
  for (const std::int64_t i : {fetch, writeback}) {
    const models::Op& op = g.ops[static_cast<std::size_t>(i)];
    EXPECT_EQ(op.kind, models::OpKind::kHostCopy);
    EXPECT_EQ(op.category, "embedding_cache");
    EXPECT_EQ(op.bytes, sim::Bytes(1'155'072));
    EXPECT_EQ(op.to_device, i == fetch);
  }
  for (int r = 0; r < 8; ++r) {
    if (r == 3) continue;
    EXPECT_LT(find(g, r, "embedding_cache_fetch"), 0) << r;
  }
  const models::Op& forward = g.ops[static_cast<std::size_t>(find(g, 3, "embedding_forward"))];
  for (const std::int64_t i : {fetch, writeback}) {
    EXPECT_NE(std::find(forward.deps.begin(), forward.deps.end(), static_cast<std::uint32_t>(i)), forward.deps.end());
  }
  EXPECT_EQ(forward.duration, plain.ops[static_cast<std::size_t>(find(plain, 3, "embedding_forward"))].duration);
  const models::Op& backward = g.ops[static_cast<std::size_t>(find(g, 3, "embedding_backward"))];
  EXPECT_EQ(backward.duration, plain.ops[static_cast<std::size_t>(find(plain, 3, "embedding_backward"))].duration);

  IterationOptions ahead;
  ahead.prefetch_cache = true;
  const models::OpGraph p = build_dlrm_iteration(m, in_host, 8, 8, a100(), ahead);
  const std::int64_t next = find(p, 3, "embedding_cache_fetch_next_batch");
  ASSERT_GE(next, 0);
  ASSERT_GE(find(p, 3, "embedding_cache_writeback_next_batch"), 0);
  EXPECT_TRUE(p.ops[static_cast<std::size_t>(next)].deps.empty());
  for (const models::Op& op : p.ops) {
    for (const std::uint32_t d : op.deps) EXPECT_NE(p.ops[d].category, "embedding_cache") << op.name;
  }
}

// int32 indices halve what carries indices: each GPU's input copy, 512 x
// (3,994 dense features x 4 + 4,096 tables x 15 lookups x 4) = 134,008,832
// bytes instead of 259,837,952, and the indices all-to-all; the pooled
// embeddings' exchange stays.
TEST(DlrmIterationTest, Int32IndicesHalveTheIndexTraffic) {
  const models::DlrmModel m = models::load_model("dlrm-a-small");
  const models::ShardingPlan plan = models::plan_sharding(m, 8, 8, a100(), {});
  IterationOptions narrow;
  narrow.index_bytes = 4;
  const models::OpGraph wide_graph = build_dlrm_iteration(m, plan, 8, 8, a100(), {});
  const models::OpGraph narrow_graph = build_dlrm_iteration(m, plan, 8, 8, a100(), narrow);
  const auto input_copy = [](const models::OpGraph& g) {
    for (const models::Op& op : g.ops) {
      if (op.kind == models::OpKind::kHostCopy && op.rank == 0) return op.bytes;
    }
    return sim::Bytes(-1);
  };
  EXPECT_EQ(input_copy(wide_graph), sim::Bytes(259'837'952));
  EXPECT_EQ(input_copy(narrow_graph), sim::Bytes(134'008'832));
  ASSERT_EQ(wide_graph.collectives.size(), narrow_graph.collectives.size());
  // The first collective is the indices all-to-all, the second the pooled one.
  EXPECT_EQ(2 * matrix_total(narrow_graph.collectives[0].all_to_all_v_bytes),
            matrix_total(wide_graph.collectives[0].all_to_all_v_bytes));
  EXPECT_EQ(matrix_total(narrow_graph.collectives[1].all_to_all_v_bytes),
            matrix_total(wide_graph.collectives[1].all_to_all_v_bytes));
}

}  // namespace
}  // namespace zx::workloads
