// Tests of the iteration's HBM estimate and of the planner's reserve: a
// small model by hand, and model A, whose reserve grows with the batch until
// the embeddings move to host memory and, at last, nothing fits.

#include "models/dlrm/memory.h"

#include <gtest/gtest.h>

#include <string>

#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

namespace zx::models {
namespace {

const DeviceProfile& a100() {
  static const DeviceProfile p = builtin_device_profile("a100-40gb");
  return p;
}

// Two tables of dim 4, pooling 2, one per GPU (table-wise); bottom MLP 3 -> 5,
// no interaction, top MLP 6 -> 1; fp32 dense, fp16 embeddings; 10 samples per
// GPU on 2 GPUs, Adagrad:
//   dense state  (3x5+5 + 6x1+1 = 27 weights) x (4 + 4 + 4)            =   324
//   activations  10 x ((3+5) + (6+1) + 2 x 6 widest) x 4                 = 1,080
//   exchange     received 2 x 10 x 8 dims x 2 + produced 2 x 20 x 4 x 2
//                + indices 3 x 10 x 4 lookups x 8 + received 20 x 2 x 8  = 1,920
TEST(IterationMemoryTest, SmallModelByHand) {
  DlrmModel m;
  m.name = "tiny";
  m.dense_features = 3;
  m.embedding_type = DataType::kFp16;
  m.dense_type = DataType::kFp32;
  m.tables = {TableGroup{.name = "t", .count = 2, .rows = 1000, .dim = 4, .pooling = 2}};
  m.bottom_mlp = Mlp{.input = 3, .widths = {5}};
  m.interaction.kind = InteractionKind::kNone;
  m.top_mlp = Mlp{.input = 6, .widths = {1}};
  ShardingPlan plan;
  plan.tables = {TablePlacement{.table = 0, .group = 0, .kind = ShardingKind::kTableWise, .shards = {{0, 1000, 4, 1.0}}},
                 TablePlacement{.table = 1, .group = 0, .kind = ShardingKind::kTableWise, .shards = {{1, 1000, 4, 1.0}}}};
  const IterationMemory mem = iteration_memory(m, plan, 10, 2, DenseOptimizer::kAdagrad)[0];
  EXPECT_EQ(mem.dense_state_bytes, 324);
  EXPECT_EQ(mem.activation_bytes, 1080);
  EXPECT_EQ(mem.exchange_bytes, 1920);
  EXPECT_EQ(mem.total_bytes(), 3324);
  // SGD keeps no state; a replica produces only its GPU's samples and
  // receives no indices: 2x10x8x2 + 2x(10x4)x2 + 960 = 1,440.
  EXPECT_EQ(iteration_memory(m, plan, 10, 2, DenseOptimizer::kSgd)[0].dense_state_bytes, 216);
  plan.tables[0].kind = ShardingKind::kDataParallel;
  EXPECT_EQ(iteration_memory(m, plan, 10, 2, DenseOptimizer::kAdagrad)[0].exchange_bytes, 1440);
  // GPU 1 keeps table 1: it produces 20 x 4 values and receives 40 indices.
  EXPECT_EQ(iteration_memory(m, plan, 10, 2, DenseOptimizer::kAdagrad)[1].exchange_bytes, 1920);
}

// Model A on 8 nodes: at 512 samples per GPU the iteration (6.8 GB) fits the
// default 25% reserve, which stays; at 4,096 it needs 27 GB, the planner
// keeps that much back, moves tables to host memory, and every GPU fits with
// the headroom; at 16,384 the iteration alone exceeds HBM.
TEST(IterationMemoryTest, TheReserveGrowsWithTheBatch) {
  const DlrmModel a = load_model("dlrm-a");
  const double capacity = static_cast<double>(a100().hbm_capacity.count());
  ShardingOptions o;
  const ShardingPlan base = plan_sharding(a, 64, 8, a100(), o);
  ASSERT_TRUE(base.fits) << base.reason;
  EXPECT_EQ(base.hbm_reserve_fraction, 0.25);
  EXPECT_EQ(base.host_memory_tables(), 0);
  EXPECT_GT(base.gpus[0].iteration_bytes, 6e9);
  EXPECT_LT(base.gpus[0].iteration_bytes, 0.2 * capacity);

  o.batch_per_gpu = 4096;
  const ShardingPlan large = plan_sharding(a, 64, 8, a100(), o);
  ASSERT_TRUE(large.fits) << large.reason;
  EXPECT_GT(large.hbm_reserve_fraction, 0.6);
  EXPECT_GT(large.host_memory_tables(), 0);
  for (const GpuLoad& g : large.gpus) {
    EXPECT_GT(g.iteration_bytes, 20e9);
    EXPECT_LE(g.hbm_bytes + g.iteration_bytes, (1 - kHbmHeadroomFraction) * capacity);
    EXPECT_LE(g.hbm_bytes, large.hbm_budget_bytes);
  }

  o.batch_per_gpu = 16384;
  const ShardingPlan huge = plan_sharding(a, 64, 8, a100(), o);
  EXPECT_FALSE(huge.fits);
  EXPECT_NE(huge.reason.find("at 16384 samples per GPU"), std::string::npos) << huge.reason;
}

}  // namespace
}  // namespace zx::models
