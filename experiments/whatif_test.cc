// Tests of the what-if simulation: the sanity properties a user relies on.
// More NIC bandwidth, fp16 instead of fp32 communication and fused kernels
// never make an iteration slower, nor a higher all-to-all efficiency; more GPUs at a fixed per-GPU batch never
// lower total throughput on a non-oversubscribed fabric; ZionEX is much
// faster than Zion for model A at 16 nodes; a model that cannot fit is
// reported, not simulated; runs are deterministic.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "experiments/whatif.h"

namespace zx::experiments {
namespace {

namespace mc = models::collectives;

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

// The planner gets each cluster's host memory: model F's 24 TB of tables
// do not fit 8 ZionEX nodes (1.5 TB of host memory each), and do with 4 TB
// each, every node's host-memory tables within 90% of it.
TEST(WhatIfTest, HostMemoryComesFromTheCluster) {
  WhatIfOptions o;
  o.model = "dlrm-f";
  const PlannedSize zionex = plan_whatif_size(o, 8);
  EXPECT_FALSE(zionex.plan.fits);
  EXPECT_NE(zionex.plan.reason.find("8 nodes 10.80 TB of usable host memory"), std::string::npos)
      << zionex.plan.reason;
  o.cluster.overrides = {"host.memory_gbyte=4000"};
  const PlannedSize big = plan_whatif_size(o, 8);
  ASSERT_TRUE(big.plan.fits) << big.plan.reason;
  EXPECT_EQ(big.cluster.host_memory, sim::Bytes(4'000'000'000'000));
  EXPECT_GT(big.plan.host_memory_tables(), 0);
  std::vector<double> per_node(8, 0.0);
  for (std::size_t r = 0; r < big.plan.gpus.size(); ++r) per_node[r / 8] += big.plan.gpus[r].host_bytes;
  for (double bytes : per_node) EXPECT_LE(bytes, 0.9 * 4e12 * (1 + 1e-12));
  EXPECT_GT(*std::max_element(per_node.begin(), per_node.end()), 0.9 * 1.5e12) << "would have fitted 1.5 TB";
}

// --vary cluster=...: each variant on its own cluster and that cluster's
// GPUs; an unknown preset is an error naming the knob.
TEST(WhatIfTest, VaryCluster) {
  WhatIfOptions o = small_model();
  apply_whatif_variation(o, "cluster", "hgx-b200");
  const PlannedSize b200 = plan_whatif_size(o, 1);
  EXPECT_EQ(b200.device.name, "b200");
  ASSERT_TRUE(b200.cluster.spec.has_value());
  EXPECT_EQ(b200.cluster.spec->preset, "hgx-b200");
  const WhatIfPoint on_b200 = one(o, 1);
  const WhatIfPoint on_zionex = one(small_model(), 1);
  ASSERT_TRUE(on_b200.fits && on_zionex.fits);
  EXPECT_LT(on_b200.iteration_time_ms, on_zionex.iteration_time_ms);
  try {
    parse_whatif_variation("cluster=zionex,hgx-h200");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--vary: cluster: unknown cluster 'hgx-h200'; valid: dgx-a100, gb200-nvl72, gb300-nvl72, hgx, hgx-b200, hgx-b300, zion, zionex, or the path of a "
              ".json cluster file");
  }
}

// The same 72 GPUs as one GB200 NVL72 rack or as nine HGX B200 servers:
// in the rack the embedding all-to-all stays on NVLink (900 GB/s per GPU)
// instead of 400 Gb/s NICs, so it hides behind compute, and the iteration
// takes well under half the time.
TEST(WhatIfTest, Nvl72RackKeepsTheAllToAllOnNvlink) {
  WhatIfOptions rack = small_model();
  rack.cluster.cluster = "gb200-nvl72";
  WhatIfOptions servers = small_model();
  servers.cluster.cluster = "hgx-b200";
  const WhatIfPoint r = one(rack, 1);
  const WhatIfPoint h = one(servers, 9);
  ASSERT_TRUE(r.fits && h.fits) << r.reason << h.reason;
  EXPECT_EQ(r.gpus, 72);
  EXPECT_EQ(h.gpus, 72);
  EXPECT_EQ(r.gpu, "gb200");
  EXPECT_LT(r.iteration_time_ms, 0.5 * h.iteration_time_ms) << r.iteration_time_ms << " " << h.iteration_time_ms;
  EXPECT_LT(r.breakdown.exposed_all_to_all_ms, 0.1 * h.breakdown.exposed_all_to_all_ms);
  EXPECT_NE(h.bottleneck.find("exposed all-to-all"), std::string::npos) << h.bottleneck;
}

// --algo KIND=auto: the iteration is the one the chosen algorithms run,
// bit for bit (the candidates' trial runs touch nothing of it): model A
// small on one HGX server, where every collective kind is tuned, has the
// fingerprint of the run that names each kind's choice. The choices are
// kept, each the fastest of its candidates' recorded times.
TEST(WhatIfTest, AutoRunsItsChoices) {
  WhatIfOptions o = small_model();
  o.cluster.cluster = "hgx";
  for (const char* kind : {"all_reduce", "all_to_all", "reduce_scatter", "all_gather"}) o.algorithms[kind] = "auto";
  const WhatIfPoint tuned = one(o, 1);
  ASSERT_TRUE(tuned.fits) << tuned.reason;
  ASSERT_FALSE(tuned.auto_choices.empty());
  WhatIfOptions named = o;
  for (const models::AutoChoice& c : tuned.auto_choices) {
    const std::string kind(models::collectives::to_string(c.kind));
    // One choice per kind here, else naming one would not be the same run.
    ASSERT_TRUE(named.algorithms[kind] == "auto" || named.algorithms[kind] == c.chosen) << kind;
    named.algorithms[kind] = c.chosen;
    std::optional<sim::Duration> least;
    std::string fastest;
    for (const models::AutoChoice::Candidate& k : c.candidates) {
      if (k.time && (!least || *k.time < *least)) {
        least = *k.time;
        fastest = k.algorithm;
      }
    }
    EXPECT_EQ(c.chosen, fastest) << kind;
  }
  const WhatIfPoint plain = one(named, 1);
  EXPECT_EQ(plain.fingerprint, tuned.fingerprint);
  EXPECT_EQ(plain.iteration_time_ms, tuned.iteration_time_ms);
  EXPECT_TRUE(plain.auto_choices.empty());
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
  // Compute is the same either way once communication takes no SMs from it
  // (with SmContention, compute depends on when communication runs).
  WhatIfOptions free_sms = small_model();
  free_sms.cluster.overrides.push_back("gpu.communication_sms=0");
  WhatIfOptions free_sms_analytical = free_sms;
  free_sms_analytical.fidelity = "analytical";
  EXPECT_EQ(one(free_sms_analytical, 2).breakdown.compute_ms, one(free_sms, 2).breakdown.compute_ms);
  // The same flows either way; only max-min sharing re-solves, each re-solve
  // is one engine event and covers at least one flow.
  EXPECT_GT(a.flows, 0u);
  EXPECT_EQ(a.flows, c.flows);
  EXPECT_EQ(a.resolves, b.resolves);
  EXPECT_GT(a.resolves, 0u);
  EXPECT_LE(a.resolves, a.events);
  EXPECT_GE(a.resolved_flows, a.resolves);
  EXPECT_EQ(c.resolves, 0u);
  EXPECT_EQ(c.resolved_flows, 0u);
}

// linkshare (models/network/link_share.h) against flow: deterministic,
// within a thousandth of flow's iteration on the small model (the zoo's
// table is in docs/network_model.md, "Link sharing"), and the same on an
// uneven fabric, where it runs one bundle per collective step rather than
// one flow per transfer.
TEST(WhatIfTest, LinkShareIsWithinAThousandthOfFlow) {
  for (const char* knob : {"", "oversubscription"}) {
    WhatIfOptions flow = small_model();
    if (*knob != 0) flow.cluster.overrides.push_back("fabric.oversubscription=2");
    WhatIfOptions share = flow;
    share.fidelity = "linkshare";
    const WhatIfPoint f = one(flow, 4);
    const WhatIfPoint s = one(share, 4);
    const WhatIfPoint again = one(share, 4);
    EXPECT_EQ(s.fingerprint, again.fingerprint);
    EXPECT_EQ(s.iteration_time_ms, again.iteration_time_ms);
    EXPECT_NEAR(s.iteration_time_ms, f.iteration_time_ms, 1e-3 * f.iteration_time_ms) << knob;
    EXPECT_LT(s.flows * 10, f.flows) << knob;  // bundles, not transfers
  }
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

// Communication kernels hold SMs (the A100 profile: 16 of 108): every
// compute op then takes at least its duration and at most its duration at
// the slowest speed the rank's communication streams allow; the time lost
// is what the breakdown reports; communication_sms = 0 is the plain model.
TEST(WhatIfTest, CommunicationKernelsSlowComputeWithinBounds) {
  WhatIfOptions o = small_model();
  o.nodes = {2};
  o.threads = 1;
  const WhatIfPoint on = run_whatif(o, 2).front();
  o.cluster.overrides.push_back("gpu.communication_sms=0");
  const WhatIfPoint off = run_whatif(o, 2).front();
  ASSERT_TRUE(on.fits && off.fits);
  EXPECT_EQ(off.breakdown.compute_slowed_by_communication_ms, 0.0);
  EXPECT_GT(on.breakdown.compute_slowed_by_communication_ms, 0.0);
  EXPECT_GT(on.breakdown.compute_ms, off.breakdown.compute_ms);
  EXPECT_NE(on.fingerprint, off.fingerprint);
  const models::OpGraph& g = *on.graph;
  // At most every non-compute stream runs a communication kernel at once.
  const int comm_streams = static_cast<int>(g.stream_names.size()) - 1;
  const models::SmContention contention{.sm_count = 108, .communication_sms = 16};
  const double slowest = contention.compute_speed(comm_streams);
  std::vector<double> slowed_ps(static_cast<std::size_t>(g.num_ranks), 0.0);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].kind != models::OpKind::kCompute) continue;
    const models::OpTiming& t = on.execution->ops[i];
    const std::int64_t took = (t.end - t.start).count_ps();
    const std::int64_t alone = g.ops[i].duration.count_ps();
    EXPECT_GE(took, alone) << g.ops[i].name;
    EXPECT_LE(took, static_cast<std::int64_t>(std::ceil(static_cast<double>(alone) / slowest)) + 2) << g.ops[i].name;
    slowed_ps[static_cast<std::size_t>(g.ops[i].rank)] += static_cast<double>(took - alone);
  }
  double mean_ms = 0;
  for (int r = 0; r < g.num_ranks; ++r) {
    EXPECT_EQ(on.execution->ranks[static_cast<std::size_t>(r)].compute_slowed_by_communication.count_ps(),
              static_cast<std::int64_t>(slowed_ps[static_cast<std::size_t>(r)]));
    mean_ms += slowed_ps[static_cast<std::size_t>(r)] / 1e9 / g.num_ranks;
  }
  EXPECT_NEAR(on.breakdown.compute_slowed_by_communication_ms, mean_ms, 1e-9);
}

// Degraded hardware (--degrade). At full speed a degradation changes
// nothing, to the bit. A straggler's kernels take exactly 1/SPEED as long
// (to the picosecond per op), the iteration cannot end before its compute
// stream does, the healthy GPUs wait for it, and a slower straggler never
// makes the iteration shorter (1% for max-min anomalies, as above). A NIC
// at half speed slows the exchanges.
double ms(sim::Duration d) { return d.to_seconds() * 1e3; }

TEST(WhatIfDegradeTest, StragglersAndSlowNics) {
  const auto kept = [](const std::vector<std::string>& degradations) {
    WhatIfOptions o = small_model();
    o.nodes = {2};
    o.threads = 1;
    o.cluster.degradations = degradations;
    // Closed forms of kernel time: communication takes no SMs from compute.
    o.cluster.overrides.push_back("gpu.communication_sms=0");
    return run_whatif(o, 2).front();
  };
  const WhatIfPoint base = kept({});
  ASSERT_TRUE(base.fits) << base.reason;
  const WhatIfPoint full = kept({"gpu:0-15=1", "device:node0/nic0=1", "link:rack0/rsw->node1/nic3=1"});
  EXPECT_EQ(full.fingerprint, base.fingerprint);
  EXPECT_EQ(full.iteration_time_ms, base.iteration_time_ms);

  const WhatIfPoint slow = kept({"gpu:3=0.5"});
  ASSERT_EQ(slow.graph->ops.size(), base.graph->ops.size());
  sim::Duration straggler_stream = sim::Duration::zero();
  for (std::size_t i = 0; i < base.graph->ops.size(); ++i) {
    const models::Op& b = base.graph->ops[i];
    const models::Op& s = slow.graph->ops[i];
    if (b.rank == 3 && b.kind == models::OpKind::kCompute) {
      EXPECT_LE(std::abs(s.duration.count_ps() - 2 * b.duration.count_ps()), 1) << b.name;
      if (slow.graph->stream_names[static_cast<std::size_t>(s.stream)] == "compute") straggler_stream += s.duration;
    } else {
      EXPECT_EQ(s.duration, b.duration) << b.name << " on rank " << b.rank;
    }
  }
  EXPECT_GT(straggler_stream, sim::Duration::zero());
  EXPECT_GE(slow.iteration_time_ms, straggler_stream.to_seconds() * 1e3);
  EXPECT_GT(slow.iteration_time_ms, base.iteration_time_ms);
  EXPECT_GT(slow.breakdown.other_ms, base.breakdown.other_ms);  // the others wait for it
  // The straggler is the busiest GPU, with twice its kernel time (on one
  // stream its kernels do not overlap); the busiest is never below the mean.
  EXPECT_EQ(slow.busiest_gpu_rank, 3);
  EXPECT_GE(base.busiest_gpu_compute_ms, base.breakdown.compute_ms);
  EXPECT_NEAR(slow.busiest_gpu_compute_ms, 2 * ms(base.execution->ranks[3].compute),
              1e-6 * slow.busiest_gpu_compute_ms);
  const WhatIfPoint slower = kept({"gpu:3=0.25"});
  const WhatIfPoint mild = kept({"gpu:3=0.9"});
  EXPECT_GE(mild.iteration_time_ms, base.iteration_time_ms * 0.99);
  EXPECT_GE(slow.iteration_time_ms, mild.iteration_time_ms * 0.99);
  EXPECT_GE(slower.iteration_time_ms, slow.iteration_time_ms * 0.99);

  const WhatIfPoint nic = kept({"device:node0/nic0=0.5"});
  EXPECT_GT(nic.iteration_time_ms, base.iteration_time_ms);
  EXPECT_GT(nic.breakdown.exposed_all_to_all_ms + nic.breakdown.exposed_all_reduce_ms,
            base.breakdown.exposed_all_to_all_ms + base.breakdown.exposed_all_reduce_ms);
  EXPECT_EQ(nic.breakdown.compute_ms, base.breakdown.compute_ms);
}

TEST(WhatIfDegradeTest, VaryDegradeAndBadDegradations) {
  WhatIfOptions base = small_model();
  base.nodes = {2};
  base.threads = 1;
  base.cluster.degradations = {"gpu:1=0.9"};
  const std::vector<WhatIfVariant> variants = expand_whatif_variations(
      base, {parse_whatif_variation("degrade=none,gpu:0=0.5+device:node0/nic0=0.5")});
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0].options.cluster.degradations, (std::vector<std::string>{"gpu:1=0.9"}));
  EXPECT_EQ(variants[1].options.cluster.degradations,
            (std::vector<std::string>{"gpu:1=0.9", "gpu:0=0.5", "device:node0/nic0=0.5"}));
  EXPECT_EQ(variants[1].label(), "degrade=gpu:0=0.5+device:node0/nic0=0.5");
  const std::vector<std::vector<WhatIfPoint>> points = run_whatif_variants(variants);
  WhatIfOptions alone = base;
  alone.cluster.degradations = {"gpu:1=0.9", "gpu:0=0.5", "device:node0/nic0=0.5"};
  EXPECT_EQ(points[1].front().fingerprint, one(alone, 2).fingerprint);
  EXPECT_EQ(points[0].front().fingerprint, one(base, 2).fingerprint);

  for (const char* text : {"degrade=gpu:0", "degrade=gpu:0=2", "degrade=gpu:0=0.5+", "degrade=+gpu:0=0.5",
                           "degrade=cpu:0=0.5"}) {
    EXPECT_THROW(parse_whatif_variation(text), InputError) << text;
  }
  // A rank that exists at 2 nodes but not at 1: refused before anything runs.
  WhatIfOptions sweep = small_model();
  sweep.nodes = {2, 1};
  sweep.cluster.degradations = {"gpu:12=0.5"};
  try {
    run_whatif(sweep);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(e.diagnostics().front().message.find("GPU rank 12 does not exist: the cluster has 8 GPUs"),
              std::string::npos)
        << e.diagnostics().front().message;
  }
}

// Every combination, the first knob outermost; each variant carries the
// options its settings give.
TEST(WhatIfVaryTest, ExpandsTheProductInOrder) {
  const std::vector<WhatIfVariation> vary = {parse_whatif_variation("nic-gbit=100,400"),
                                             parse_whatif_variation("a2a-precision=fp32,fp16,bf16")};
  const std::vector<WhatIfVariant> variants = expand_whatif_variations(small_model(), vary);
  ASSERT_EQ(variants.size(), 6u);
  EXPECT_EQ(variants[0].label(), "nic-gbit=100 a2a-precision=fp32");
  EXPECT_EQ(variants[2].label(), "nic-gbit=100 a2a-precision=bf16");
  EXPECT_EQ(variants[3].label(), "nic-gbit=400 a2a-precision=fp32");
  EXPECT_EQ(variants[5].options.a2a_forward_dtype, "bf16");
  EXPECT_EQ(variants[5].options.cluster.overrides, std::vector<std::string>{"nic.bandwidth_gbit_per_s=400"});
  EXPECT_EQ(variants[5].options.model, "dlrm-a-small");
  EXPECT_EQ(expand_whatif_variations(small_model(), {}).size(), 1u);
  EXPECT_EQ(expand_whatif_variations(small_model(), {}).front().label(), "base");

  WhatIfOptions o;
  apply_whatif_variation(o, "embeddings", "unfused");
  apply_whatif_variation(o, "pipeline", "off");
  apply_whatif_variation(o, "algo.all-to-all", "hierarchical");
  apply_whatif_variation(o, "batch-per-gpu", "1024");
  apply_whatif_variation(o, "fabric.oversubscription", "2");
  EXPECT_FALSE(o.fused_embeddings);
  EXPECT_FALSE(o.pipeline_input);
  EXPECT_EQ(o.algorithms.at("all_to_all"), "hierarchical");
  EXPECT_EQ(o.batch_per_gpu, 1024);
  EXPECT_EQ(o.cluster.overrides, std::vector<std::string>{"fabric.oversubscription=2"});
}

// A variant's points are the points of the same options run alone, to the
// bit (same fingerprint), and scaling is measured within each variant.
TEST(WhatIfVaryTest, VariantsEqualSeparateRuns) {
  WhatIfOptions base = small_model();
  base.nodes = {1, 2};
  base.threads = 2;
  const std::vector<WhatIfVariant> variants = expand_whatif_variations(
      base, {parse_whatif_variation("nic-gbit=100,400"), parse_whatif_variation("embeddings=fused,unfused")});
  const std::vector<std::vector<WhatIfPoint>> all = run_whatif_variants(variants);
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t v = 0; v < all.size(); ++v) {
    ASSERT_EQ(all[v].size(), 2u);
    WhatIfOptions alone = small_model();
    alone.cluster.overrides = {v < 2 ? "nic.bandwidth_gbit_per_s=100" : "nic.bandwidth_gbit_per_s=400"};
    alone.fused_embeddings = v % 2 == 0;
    for (std::size_t i = 0; i < 2; ++i) {
      const WhatIfPoint& p = all[v][i];
      const WhatIfPoint q = one(alone, base.nodes[i]);
      EXPECT_EQ(p.variant, static_cast<int>(v));
      EXPECT_EQ(p.nodes, base.nodes[i]);
      EXPECT_EQ(p.fingerprint, q.fingerprint) << variants[v].label() << " at " << p.nodes;
      EXPECT_EQ(p.iteration_time_ms, q.iteration_time_ms);
    }
    EXPECT_EQ(all[v][0].scaling_efficiency, 1.0);
    EXPECT_EQ(all[v][1].scaling_efficiency,
              (all[v][1].samples_per_s / all[v][1].gpus) / (all[v][0].samples_per_s / all[v][0].gpus));
  }
  // The knobs act: a faster NIC never slows the 2-node iteration, fused
  // kernels never lose to unfused ones.
  EXPECT_LE(all[2][1].iteration_time_ms, all[0][1].iteration_time_ms);
  EXPECT_LE(all[0][1].iteration_time_ms, all[1][1].iteration_time_ms);
}

// --sensitivity: the base and one variant per resource, each with that
// resource doubled from the base's own value; each equals the same --set run
// alone. Model A-small's compute is HBM-bound: faster HBM helps.
// A faster part can make the iteration slightly slower (a scheduling
// anomaly: twice the NVLink bandwidth here moves the dense all-reduce's NIC
// phase earlier, onto the all-to-all: +0.16%), so the others are only held
// to within 1% of the base.
TEST(WhatIfSensitivityTest, OneResourceAtATime) {
  WhatIfOptions base = small_model();
  base.nodes = {2};
  base.threads = 2;
  base.cluster.overrides = {"fabric.oversubscription=4"};
  const std::vector<WhatIfVariant> variants = sensitivity_variants(base, 2);
  std::vector<std::string> labels;
  for (const WhatIfVariant& v : variants) {
    ASSERT_EQ(v.settings.size(), 1u);
    EXPECT_EQ(v.settings.front().first, "sensitivity");
    labels.push_back(v.settings.front().second);
  }
  // ZionEX's A100: 200 Gb/s NICs, 300 GB/s NVLink, 1,555 GB/s HBM, 12 GB/s
  // host-to-device; racks 4:1 here.
  EXPECT_EQ(labels, (std::vector<std::string>{"base", "nic.bandwidth_gbit_per_s=400", "nvlink.bandwidth_gbyte_per_s=600",
                                              "gpu.hbm.bandwidth_gbyte_per_s=3110", "gpu.peak_tflops.*=2x",
                                              "host-to-device=2x", "fabric.oversubscription=2"}));
  const std::vector<std::vector<WhatIfPoint>> all = run_whatif_variants(variants);
  ASSERT_EQ(all.size(), variants.size());
  for (std::size_t v = 1; v < all.size(); ++v) {
    EXPECT_LE(all[v][0].iteration_time_ms, 1.01 * all[0][0].iteration_time_ms) << labels[v];
  }
  // The input copy is pipelined behind the iteration: a faster one changes
  // it only through the GPU's PCIe link, which the copy shares with what the
  // NIC delivers (under 1% here). Without the pipeline the iteration waits
  // for it.
  EXPECT_NEAR(all[5][0].iteration_time_ms, all[0][0].iteration_time_ms, 0.01 * all[0][0].iteration_time_ms);
  WhatIfOptions serial = base;
  serial.pipeline_input = false;
  WhatIfOptions serial_fast_copy = serial;
  serial_fast_copy.cluster.overrides.push_back("gpu.host_to_device_gbyte_per_s=24");
  // The two GPUs behind a PCIe switch share its Gen3 x16 host link (14.4
  // GB/s of payload): a faster DMA engine alone changes nothing, the variant
  // doubles the link too.
  EXPECT_EQ(one(serial_fast_copy, 2).iteration_time_ms, one(serial, 2).iteration_time_ms);
  serial_fast_copy.cluster.overrides.push_back("pcie.host_lanes=32");
  EXPECT_LT(one(serial_fast_copy, 2).iteration_time_ms, 0.95 * one(serial, 2).iteration_time_ms);
  // A copy slow enough to outlast the iteration bounds it, and the
  // bottleneck says so.
  WhatIfOptions slow_copy = base;
  slow_copy.cluster.overrides.push_back("gpu.host_to_device_gbyte_per_s=0.5");
  const WhatIfPoint input_bound = one(slow_copy, 2);
  EXPECT_GT(input_bound.iteration_time_ms, all[0][0].iteration_time_ms);
  EXPECT_EQ(input_bound.bottleneck.rfind("input copy (host to GPU); busiest link", 0), 0u) << input_bound.bottleneck;
  EXPECT_EQ(all[0][0].bottleneck.rfind("input copy", 0), std::string::npos) << all[0][0].bottleneck;
  // The HBM variant is the base with that one --set.
  WhatIfOptions hbm = base;
  hbm.cluster.overrides.push_back("gpu.hbm.bandwidth_gbyte_per_s=3110");
  EXPECT_EQ(one(hbm, 2).fingerprint, all[3][0].fingerprint);
  EXPECT_LT(all[3][0].iteration_time_ms, all[0][0].iteration_time_ms);
  // Without oversubscription there is no uplink variant, and with every
  // table in HBM no host-memory one.
  EXPECT_EQ(sensitivity_variants(small_model(), 2).size(), 6u);
  EXPECT_THROW(sensitivity_variants(small_model(), 1), InputError);
}

// Where tables live in host memory (model F on 16 ZionEX nodes) or cannot
// all be placed (on 8), --sensitivity also doubles the servers' host memory.
TEST(WhatIfSensitivityTest, HostMemoryWhereTablesLiveThere) {
  WhatIfOptions f;
  f.model = "dlrm-f";
  for (const std::vector<int>& nodes : {std::vector<int>{16}, std::vector<int>{8}}) {
    f.nodes = nodes;
    const std::vector<WhatIfVariant> variants = sensitivity_variants(f, 2);
    ASSERT_EQ(variants.size(), 7u) << nodes.front();
    EXPECT_EQ(variants.back().settings.front().second, "host.memory_gbyte=3000") << nodes.front();
    EXPECT_EQ(variants.back().options.cluster.overrides.back(), "host.memory_gbyte=3000");
  }
  // 2 TB on an HGX server.
  f.cluster.cluster = "hgx";
  EXPECT_EQ(sensitivity_variants(f, 2).back().settings.front().second, "host.memory_gbyte=4000");
  // On a GB200 rack host copies cross each GPU's NVLink-C2C link, not PCIe:
  // the host-to-device variant doubles that link with the DMA rate.
  f.cluster.cluster = "gb200-nvl72";
  f.nodes = {1};
  bool found = false;
  for (const WhatIfVariant& v : sensitivity_variants(f, 2)) {
    if (v.settings.front().second != "host-to-device=2x") continue;
    found = true;
    const std::vector<std::string>& o = v.options.cluster.overrides;
    EXPECT_NE(std::find(o.begin(), o.end(), "host.c2c_bandwidth_gbyte_per_s=450"), o.end()) << o.back();
    EXPECT_EQ(std::find_if(o.begin(), o.end(), [](const std::string& x) { return x.starts_with("pcie."); }), o.end());
  }
  EXPECT_TRUE(found);
}

// Model F on 16 nodes keeps 57 of its 64 tables in host memory behind an
// HBM cache. Each GPU fetches its misses before the embedding forward, the
// two GPUs behind one CPU socket over its one Gen3 x16 link: the pair's
// fetches cannot end before both their bytes crossed it at 15.75 GB/s (the
// link's rate before protocol overhead). Prefetched for the next batch they
// leave the critical path: faster. With a slow DMA engine the bottleneck
// names the cache misses, as waiting (inline) or as the iteration's end
// (prefetched).
TEST(WhatIfTest, HostMemoryTablesWaitForTheirCacheMisses) {
  WhatIfOptions o;
  o.model = "dlrm-f";
  o.nodes = {16};
  o.threads = 1;
  const WhatIfPoint inline_point = run_whatif(o, 16).front();
  ASSERT_TRUE(inline_point.graph && inline_point.execution);
  const models::OpGraph& g = *inline_point.graph;
  const models::ExecutionResult& r = *inline_point.execution;
  std::vector<std::uint32_t> fetch(8, 0);
  for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].rank < 8 && g.ops[i].name == "embedding_cache_fetch") fetch[static_cast<std::size_t>(g.ops[i].rank)] = i;
  }
  for (int pair = 0; pair < 4; ++pair) {
    const models::Op& a = g.ops[fetch[static_cast<std::size_t>(2 * pair)]];
    const models::Op& b = g.ops[fetch[static_cast<std::size_t>(2 * pair + 1)]];
    ASSERT_EQ(a.name, "embedding_cache_fetch");
    ASSERT_EQ(b.name, "embedding_cache_fetch");
    ASSERT_GT(a.bytes.count(), 10'000'000);
    const models::OpTiming& ta = r.ops[fetch[static_cast<std::size_t>(2 * pair)]];
    const models::OpTiming& tb = r.ops[fetch[static_cast<std::size_t>(2 * pair + 1)]];
    const double window_s = (std::max(ta.end, tb.end) - std::min(ta.start, tb.start)).to_seconds();
    EXPECT_GE(window_s, static_cast<double>(a.bytes.count() + b.bytes.count()) / 15.75e9) << pair;
  }
  for (std::uint32_t i = 0; i < g.ops.size(); ++i) {
    if (g.ops[i].name != "embedding_forward") continue;
    for (const std::uint32_t d : g.ops[i].deps) EXPECT_GE(r.ops[i].start, r.ops[d].end);
  }
  EXPECT_GT(inline_point.breakdown.other_ms, 1.0);

  WhatIfOptions ahead = o;
  ahead.prefetch_cache = true;
  const WhatIfPoint prefetched = one(ahead, 16);
  EXPECT_LT(prefetched.iteration_time_ms, inline_point.iteration_time_ms - 1.0);

  o.cluster.overrides.push_back("gpu.host_to_device_gbyte_per_s=0.5");
  ahead.cluster.overrides = o.cluster.overrides;
  const WhatIfPoint waiting = one(o, 16);
  EXPECT_EQ(waiting.bottleneck.rfind("other (waiting: embedding cache misses, host memory over PCIe); busiest", 0), 0u)
      << waiting.bottleneck;
  const WhatIfPoint ending = one(ahead, 16);
  EXPECT_EQ(ending.bottleneck.rfind("embedding cache misses (host memory over PCIe); busiest", 0), 0u)
      << ending.bottleneck;
  EXPECT_LT(ending.iteration_time_ms, waiting.iteration_time_ms);
}

// Zipf lookups give each host-memory table its LRU hit rate: the same
// iteration, to the bit, as that rate given as a fixed one; more skew means
// fewer misses, a faster iteration. Row-wise, so that model F's tables are
// all alike (auto puts 48 of them table-row-wise on 16 nodes, shards of
// other sizes).
TEST(WhatIfTest, ZipfLookupsSetTheCacheHitRate) {
  WhatIfOptions o;
  o.model = "dlrm-f";
  o.sharding = "row_wise";
  o.index_zipf_alpha = 1.05;
  const PlannedSize planned = plan_whatif_size(o, 16);
  ASSERT_TRUE(planned.plan.fits);
  ASSERT_TRUE(planned.plan.tables.front().host_memory);
  const double rate = planned.plan.tables.front().cache_hit_rate;  // model F's tables are alike
  EXPECT_NEAR(planned.plan.host_cache_hit_rate, rate, 1e-12);
  for (const models::TablePlacement& t : planned.plan.tables) {
    if (t.host_memory) {
      EXPECT_EQ(t.cache_hit_rate, rate);
    }
  }
  const WhatIfPoint zipf = one(o, 16);
  WhatIfOptions fixed;
  fixed.model = "dlrm-f";
  fixed.sharding = "row_wise";
  fixed.cache_hit_rate = rate;
  EXPECT_EQ(one(fixed, 16).fingerprint, zipf.fingerprint);
  WhatIfOptions skewed = o;
  skewed.index_zipf_alpha = 1.2;
  EXPECT_LT(one(skewed, 16).iteration_time_ms, zipf.iteration_time_ms);
  fixed.cache_hit_rate = 1.0;  // nothing to fetch
  EXPECT_LT(one(fixed, 16).iteration_time_ms, one(skewed, 16).iteration_time_ms);
}

// The dense optimizer's state takes HBM (Adam: two fp32 values per weight,
// SGD none) and its step time; a larger HBM reserve leaves less to the
// embeddings, which move to host memory and wait for their cache misses.
TEST(WhatIfTest, OptimizerAndReserveAreKnobs) {
  WhatIfOptions sgd = small_model();
  apply_whatif_variation(sgd, "dense-optimizer", "sgd");
  WhatIfOptions adam = small_model();
  apply_whatif_variation(adam, "dense-optimizer", "adam");
  EXPECT_EQ(adam.dense_optimizer, models::DenseOptimizer::kAdam);
  const WhatIfPoint a = one(adam, 1);
  const WhatIfPoint s = one(sgd, 1);
  EXPECT_GT(a.iteration_time_ms, s.iteration_time_ms);
  const double params = static_cast<double>(models::load_model("dlrm-a-small").dense_parameters());
  EXPECT_NEAR(a.max_iteration_hbm_gbyte - s.max_iteration_hbm_gbyte, 8 * params / 1e9, 1e-9);

  WhatIfOptions reserved = small_model();
  apply_whatif_variation(reserved, "hbm-reserve", "0.9");
  const WhatIfPoint r = one(reserved, 1);
  EXPECT_GE(r.hbm_reserve_fraction, 0.9);
  EXPECT_GT(r.host_memory_tables, 0);
  const WhatIfPoint base = one(small_model(), 1);
  EXPECT_EQ(base.host_memory_tables, 0);
  EXPECT_GT(r.iteration_time_ms, base.iteration_time_ms);
  EXPECT_THROW(apply_whatif_variation(reserved, "hbm-reserve", "1"), InputError);
  EXPECT_THROW(apply_whatif_variation(reserved, "dense-optimizer", "adamw"), InputError);
}

// DDP's bucket size: tiny buckets all-reduce each gradient on its own, one
// larger than the dense model takes one bucket; the bytes all-reduced are
// the same.
TEST(WhatIfTest, AllReduceBucketIsAKnob) {
  const auto all_reduces = [](const std::string& mib) {
    WhatIfOptions o = small_model();
    apply_whatif_variation(o, "all-reduce-bucket-mib", mib);
    o.nodes = {2};
    o.threads = 1;
    const WhatIfPoint p = run_whatif(o, 2).front();
    std::pair<int, std::int64_t> count_bytes{0, 0};
    for (const models::CollectiveCall& c : p.graph->collectives) {
      if (c.kind != mc::CollectiveKind::kAllReduce) continue;
      ++count_bytes.first;
      count_bytes.second += c.bytes_per_rank.count();
    }
    return count_bytes;
  };
  const auto [tiny_count, tiny_bytes] = all_reduces("0.001");
  const auto [default_count, default_bytes] = all_reduces("100");
  const auto [one_count, one_bytes] = all_reduces("65536");
  EXPECT_EQ(one_count, 1);
  EXPECT_GT(tiny_count, one_count);
  EXPECT_GE(tiny_count, default_count);
  EXPECT_GE(default_count, one_count);
  EXPECT_EQ(tiny_bytes, one_bytes);
  EXPECT_EQ(default_bytes, one_bytes);
  EXPECT_THROW(all_reduces("0"), InputError);
}

// Longer sparse features: every table's pooling factor scaled. The indices
// the input all-to-all carries scale with it; the pooled embeddings the
// embedding all-to-all carries do not (one vector per table and sample,
// whatever its lookups); the iteration takes longer.
TEST(WhatIfTest, PoolingScaleIsAKnob) {
  const auto a2a_bytes = [](const std::string& scale) {
    WhatIfOptions o = small_model();
    apply_whatif_variation(o, "pooling-scale", scale);
    o.nodes = {2};
    o.threads = 1;
    const WhatIfPoint p = run_whatif(o, 2).front();
    std::map<std::string, double> bytes;  // by the collective op's category
    std::set<std::int64_t> seen;
    for (const models::Op& op : p.graph->ops) {
      if (op.collective < 0 || !seen.insert(op.collective).second) continue;
      const models::CollectiveCall& c = p.graph->collectives[static_cast<std::size_t>(op.collective)];
      if (c.kind != mc::CollectiveKind::kAllToAll) continue;
      for (const auto& row : c.all_to_all_v_bytes) {
        for (const std::int64_t b : row) bytes[op.category] += static_cast<double>(b);
      }
    }
    return std::pair{bytes, p.iteration_time_ms};
  };
  const auto [base, base_ms] = a2a_bytes("1");
  const auto [twice, twice_ms] = a2a_bytes("2");
  const std::string input = base.contains("input_all_to_all_next_batch") ? "input_all_to_all_next_batch" : "input_all_to_all";
  ASSERT_GT(base.at(input), 0);
  EXPECT_NEAR(twice.at(input), 2 * base.at(input), 1e-3 * base.at(input));
  for (const auto& [category, bytes] : base) {
    if (category != input) {
      EXPECT_EQ(twice.at(category), bytes) << category;
    }
  }
  EXPECT_GT(twice_ms, base_ms);
  WhatIfOptions o = small_model();
  apply_whatif_variation(o, "pooling-scale", "0.5");
  const models::DlrmModel model = scenario_model(o);
  const models::DlrmModel own = models::load_model(o.model);
  for (std::size_t g = 0; g < own.tables.size(); ++g) EXPECT_EQ(model.tables[g].pooling, 0.5 * own.tables[g].pooling);
  EXPECT_THROW(apply_whatif_variation(o, "pooling-scale", "0"), InputError);
}

// Model I waits for its input on the hosts' PCIe links (148 MB of int64
// indices per GPU): int32 indices halve that copy, and the iteration is no
// longer input-bound.
TEST(WhatIfTest, Int32IndicesUnblockModelI) {
  WhatIfOptions wide;
  wide.model = "dlrm-i";
  WhatIfOptions narrow = wide;
  apply_whatif_variation(narrow, "index-dtype", "int32");
  EXPECT_EQ(narrow.index_bytes, 4);
  const WhatIfPoint w = one(wide, 8);
  const WhatIfPoint n = one(narrow, 8);
  EXPECT_EQ(w.bottleneck.rfind("input copy (host to GPU)", 0), 0u) << w.bottleneck;
  EXPECT_EQ(n.bottleneck.rfind("input copy", 0), std::string::npos) << n.bottleneck;
  EXPECT_LT(n.iteration_time_ms, 0.9 * w.iteration_time_ms);
  EXPECT_THROW(apply_whatif_variation(narrow, "index-dtype", "int16"), InputError);
}

// Bad knobs and values are refused before anything runs, and an error found
// while checking a variant names it.
TEST(WhatIfVaryTest, BadVariationsAreRefused) {
  for (const char* text : {"nic-gbit", "nic-gbit=", "=1,2", "nic-gbit=1,,2", "nic-gbit=1,", "nic-gbit=1,1",
                           "nic-gbit=fast", "nic-gbit=-1", "oversubscription=0.5", "batch-per-gpu=2.5",
                           "a2a-precision=fp4", "embeddings=yes", "pipeline=true", "fidelity=packet",
                           "completion-quantum-ns=nan", "algo.all_to_al=direct", "nics=1,2", "nodes=1,2"}) {
    EXPECT_THROW(parse_whatif_variation(text), InputError) << text;
  }
  EXPECT_THROW(expand_whatif_variations(small_model(), {parse_whatif_variation("nic-gbit=100"),
                                                        parse_whatif_variation("nic-gbit=200")}),
               InputError);
  WhatIfOptions base = small_model();
  base.nodes = {1};
  const std::vector<WhatIfVariant> variants =
      expand_whatif_variations(base, {parse_whatif_variation("gpu=a100-40gb,h900")});
  try {
    run_whatif_variants(variants);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.diagnostics().front().message;
    EXPECT_NE(message.find("'h900'"), std::string::npos) << message;
    EXPECT_NE(message.find("(in the variant gpu=h900)"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace zx::experiments
