// Tests of the what-if simulation: the sanity properties a user relies on.
// More NIC bandwidth, fp16 instead of fp32 communication and fused kernels
// never make an iteration slower, nor a higher all-to-all efficiency; more GPUs at a fixed per-GPU batch never
// lower total throughput on a non-oversubscribed fabric; ZionEX is much
// faster than Zion for model A at 16 nodes; a model that cannot fit is
// reported, not simulated; runs are deterministic.

#include <gtest/gtest.h>

#include "base/error.h"
#include "tools/whatif.h"

namespace zx::tools {
namespace {

WhatIfPoint one(WhatIfOptions o, int nodes) {
  o.nodes = {nodes};
  o.threads = 1;
  return run_whatif(o).front();
}

WhatIfOptions small_model() {
  WhatIfOptions o;
  o.model = "dlrm-a-small";
  return o;
}

TEST(WhatIfTest, FasterPartsNeverSlowDown) {
  const WhatIfPoint base = one(small_model(), 2);
  ASSERT_TRUE(base.fits) << base.reason;
  WhatIfOptions faster_nic = small_model();
  faster_nic.cluster.overrides = {"nic.bandwidth_gbit_per_s=400"};
  EXPECT_LE(one(faster_nic, 2).iteration_time_ms, base.iteration_time_ms);
  // A fabric that gives all-to-all traffic half its bandwidth: the
  // all-to-all takes longer, the iteration never gets shorter.
  WhatIfOptions lossy = small_model();
  lossy.cluster.overrides = {"nic.all_to_all_efficiency=0.5"};
  const WhatIfPoint lossy_point = one(lossy, 2);
  EXPECT_GE(lossy_point.iteration_time_ms, base.iteration_time_ms);
  EXPECT_GT(lossy_point.breakdown.exposed_all_to_all_ms + lossy_point.breakdown.overlapped_communication_ms,
            base.breakdown.exposed_all_to_all_ms + base.breakdown.overlapped_communication_ms);
  WhatIfOptions unfused = small_model();
  unfused.fused_embeddings = false;
  EXPECT_GE(one(unfused, 2).iteration_time_ms, base.iteration_time_ms);

  // DCNv2 keeps fp32 embeddings: fp16 on the wire halves the all-to-all.
  WhatIfOptions dcn;
  dcn.model = "dlrm-dcnv2";
  dcn.batch_per_gpu = 4096;
  const WhatIfPoint fp32 = one(dcn, 2);
  dcn.a2a_forward_dtype = "fp16";
  const WhatIfPoint fp16 = one(dcn, 2);
  EXPECT_LE(fp16.iteration_time_ms, fp32.iteration_time_ms);
  EXPECT_LT(fp16.breakdown.exposed_all_to_all_ms + fp16.breakdown.overlapped_communication_ms,
            fp32.breakdown.exposed_all_to_all_ms + fp32.breakdown.overlapped_communication_ms);
}

TEST(WhatIfTest, MoreGpusNeverLowerThroughput) {
  WhatIfOptions o = small_model();
  o.nodes = {1, 2, 4};
  const std::vector<WhatIfPoint> points = run_whatif(o);
  for (std::size_t i = 1; i < points.size(); ++i) {
    ASSERT_TRUE(points[i].fits);
    EXPECT_GE(points[i].samples_per_s, points[i - 1].samples_per_s) << points[i].nodes;
    EXPECT_EQ(points[i].global_batch, 512LL * points[i].gpus);
  }
  EXPECT_DOUBLE_EQ(points[0].scaling_efficiency, 1.0);
  // The breakdown adds up to the iteration time.
  for (const WhatIfPoint& p : points) {
    const Breakdown& b = p.breakdown;
    EXPECT_NEAR(b.compute_ms + b.exposed_all_to_all_ms + b.exposed_all_reduce_ms + b.other_ms, p.iteration_time_ms,
                1e-6 * p.iteration_time_ms);
  }
}

TEST(WhatIfTest, ZionExIsMuchFasterThanZionForModelA) {
  WhatIfOptions zionex;
  zionex.model = "dlrm-a";
  WhatIfOptions zion = zionex;
  zion.cluster.cluster = "zion";
  const WhatIfPoint fast = one(zionex, 16);
  const WhatIfPoint slow = one(zion, 16);
  ASSERT_TRUE(fast.fits && slow.fits);
  EXPECT_GT(fast.samples_per_s, 2.0 * slow.samples_per_s);
}

TEST(WhatIfTest, ModelThatDoesNotFitIsReported) {
  WhatIfOptions o;
  o.model = "dlrm-a";
  const WhatIfPoint p = one(o, 1);
  EXPECT_FALSE(p.fits);
  EXPECT_NE(p.reason.find("needs 1.64 TB"), std::string::npos) << p.reason;
  EXPECT_EQ(p.iteration_time_ms, 0.0);
}

TEST(WhatIfTest, DeterministicAndAnalyticalIsALowerBound) {
  const WhatIfPoint a = one(small_model(), 2);
  const WhatIfPoint b = one(small_model(), 2);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.iteration_time_ms, b.iteration_time_ms);
  WhatIfOptions analytical = small_model();
  analytical.fidelity = "analytical";
  const WhatIfPoint c = one(analytical, 2);
  EXPECT_LE(c.iteration_time_ms, a.iteration_time_ms);
  EXPECT_EQ(c.breakdown.compute_ms, a.breakdown.compute_ms);
}

TEST(WhatIfTest, BadInputs) {
  WhatIfOptions o = small_model();
  o.global_batch = 1000;  // not a multiple of 16 GPUs
  EXPECT_THROW(one(o, 2), InputError);
  WhatIfOptions algo = small_model();
  algo.algorithms["all_reduce"] = "rign";
  EXPECT_THROW(one(algo, 2), InputError);
  WhatIfOptions model = small_model();
  model.model = "dlrm-b";
  EXPECT_THROW(one(model, 1), InputError);
}

}  // namespace
}  // namespace zx::tools
