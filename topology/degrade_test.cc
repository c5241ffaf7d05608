// Tests of degraded hardware (--degrade): the selector syntax and its
// errors; degraded links keep ids, endpoints, latency and efficiency and
// carry exactly SPEED of their bandwidth; degradations of one link multiply;
// GPU speeds per rank; load_cluster applies the request's degradations.

#include "topology/degrade.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "topology/cluster_file.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::topology {
namespace {

std::string error_of(const auto& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.diagnostics().front().to_string();
  }
  return "no error";
}

std::vector<Degradation> parse_all(const std::vector<std::string>& texts) {
  std::vector<Degradation> out;
  for (const std::string& t : texts) out.push_back(parse_degradation(t));
  return out;
}

LinkId only_link(const Topology& t, const std::string& src, const std::string& dst) {
  std::vector<LinkId> found;
  for (const LinkId l : t.out_links(*t.find(src))) {
    if (t.link(l).dst == *t.find(dst)) found.push_back(l);
  }
  EXPECT_EQ(found.size(), 1u) << src << "->" << dst;
  return found.front();
}

TEST(DegradeTest, ParsesEverySelector) {
  const Degradation gpu = parse_degradation("gpu:3=0.5");
  EXPECT_EQ(gpu.target, Degradation::Target::kGpu);
  EXPECT_EQ(gpu.first_rank, 3);
  EXPECT_EQ(gpu.last_rank, 3);
  EXPECT_EQ(gpu.speed, 0.5);
  EXPECT_EQ(gpu.text, "gpu:3=0.5");
  const Degradation range = parse_degradation("gpu:8-15=0.9");
  EXPECT_EQ(range.first_rank, 8);
  EXPECT_EQ(range.last_rank, 15);
  const Degradation link = parse_degradation("link:node0/nic0->rack0/rsw=0.25");
  EXPECT_EQ(link.target, Degradation::Target::kLink);
  EXPECT_EQ(link.src, "node0/nic0");
  EXPECT_EQ(link.dst, "rack0/rsw");
  EXPECT_EQ(link.speed, 0.25);
  const Degradation device = parse_degradation("device:spine1=1");
  EXPECT_EQ(device.target, Degradation::Target::kDevice);
  EXPECT_EQ(device.device, "spine1");
  EXPECT_EQ(device.speed, 1.0);
  EXPECT_EQ(parse_degradation("gpu:0=0.001").speed, 0.001);
  EXPECT_TRUE(degrades_gpus({gpu, link}));
  EXPECT_FALSE(degrades_gpus({link, device}));
}

TEST(DegradeTest, BadSelectorsAndSpeedsAreNamedErrors) {
  EXPECT_EQ(error_of([] { parse_degradation("gpu:3"); }).substr(0, 25), "--degrade: 'gpu:3': expec");
  EXPECT_NE(error_of([] { parse_degradation("gpu:3=0.0001"); }).find("in [0.001, 1] (0: failed), got 0.0001"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("link:a->b=-0.5"); }).find("got -0.5"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:3=1.5"); }).find("got 1.5; a faster part is a --set"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:3=half"); }).find("got 'half'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:3=0.5x"); }).find("got '0.5x'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:3=nan"); }).find("got 'nan'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:-1=0.5"); }).find("a GPU rank or a range"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:5-2=0.5"); }).find("the range 5-2 is empty"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:x=0.5"); }).find("got 'x'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpus:1=0.5"); }).find("unknown selector 'gpus' (did you mean 'gpu'?)"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("link:node0/nic0=0.5"); }).find("expected a link as SRC->DST"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("link:->x=0.5"); }).find("SRC->DST"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("device:=0.5"); }).find("expected SELECTOR=SPEED"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("gpu:1=0.5", "--vary degrade"); }).find("no error"), std::string::npos);
  EXPECT_EQ(error_of([] { parse_degradation("gpu=0.5", "--vary degrade"); }).substr(0, 15), "--vary degrade:");
}

TEST(DegradeTest, ADegradedDeviceCarriesSpeedOfItsBandwidthAndNothingElseChanges) {
  const Topology healthy = build_cluster(preset_spec("zionex", 2));
  const Topology slow = degrade_links(healthy, parse_all({"device:node0/nic0=0.5"}));
  ASSERT_EQ(slow.num_nodes(), healthy.num_nodes());
  ASSERT_EQ(slow.num_links(), healthy.num_links());
  const NodeId nic = *healthy.find("node0/nic0");
  int degraded = 0;
  for (std::uint32_t i = 0; i < healthy.num_links(); ++i) {
    const LinkInfo& h = healthy.link(LinkId{i});
    const LinkInfo& s = slow.link(LinkId{i});
    EXPECT_EQ(s.src, h.src);
    EXPECT_EQ(s.dst, h.dst);
    EXPECT_EQ(s.kind, h.kind);
    EXPECT_EQ(s.latency, h.latency);
    EXPECT_EQ(s.efficiency, h.efficiency);
    if (h.src == nic || h.dst == nic) {
      ++degraded;
      EXPECT_EQ(s.bandwidth.count(), h.bandwidth.count() / 2) << i;
    } else {
      EXPECT_EQ(s.bandwidth, h.bandwidth) << i;
    }
  }
  // Its PCIe link, both ways, and its Ethernet cable, both ways.
  EXPECT_EQ(degraded, 4);
  for (std::uint32_t n = 0; n < healthy.num_nodes(); ++n) {
    EXPECT_EQ(slow.node(NodeId{n}).name, healthy.node(NodeId{n}).name);
  }
  EXPECT_EQ(slow.num_gpus(), healthy.num_gpus());
}

TEST(DegradeTest, ALinkIsOneDirectionAndDegradationsMultiply) {
  const Topology healthy = build_cluster(preset_spec("zionex", 2));
  const LinkId up = only_link(healthy, "node0/nic0", "rack0/rsw");
  const LinkId down = only_link(healthy, "rack0/rsw", "node0/nic0");
  const Topology slow =
      degrade_links(healthy, parse_all({"link:node0/nic0->rack0/rsw=0.5", "device:node0/nic0=0.5"}));
  EXPECT_EQ(slow.link(up).bandwidth.count(), healthy.link(up).bandwidth.count() / 4);
  EXPECT_EQ(slow.link(down).bandwidth.count(), healthy.link(down).bandwidth.count() / 2);
  // GPU degradations leave the links alone; none at all returns the same graph.
  const Topology same = degrade_links(healthy, parse_all({"gpu:0=0.5"}));
  for (std::uint32_t i = 0; i < healthy.num_links(); ++i) {
    EXPECT_EQ(same.link(LinkId{i}).bandwidth, healthy.link(LinkId{i}).bandwidth);
  }
}

TEST(DegradeTest, UnknownDevicesLinksAndRanksAreNamedErrors) {
  const Topology t = build_cluster(preset_spec("zionex", 2));
  EXPECT_EQ(error_of([&] { degrade_links(t, parse_all({"device:node0/nic9=0.5"})); }),
            "--degrade: 'device:node0/nic9=0.5': no device 'node0/nic9' in this cluster (did you mean "
            "'node0/nic0'?); `zionsim topology --format json` lists the devices");
  EXPECT_EQ(error_of([&] { degrade_links(t, parse_all({"link:node0/nic0->node0/gpu1=0.5"})); }),
            "--degrade: 'link:node0/nic0->node0/gpu1=0.5': no link from 'node0/nic0' to 'node0/gpu1'; links "
            "from 'node0/nic0' go to: node0/pcie_nic0, rack0/rsw");
  EXPECT_EQ(error_of([&] { degrade_links(t, parse_all({"gpu:10-16=0.5"})); }),
            "--degrade: 'gpu:10-16=0.5': GPU rank 16 does not exist: the cluster has 16 GPUs (ranks 0..15)");
  EXPECT_NE(error_of([&] { gpu_speeds(t, parse_all({"gpu:99=0.5"})); }).find("rank 99 does not exist"),
            std::string::npos);
}

// A failed spine (SPEED 0): its links leave the graph, everything else
// keeps its bandwidth, and a route between racks (ECMP over the spines
// left) never crosses it. Failing every spine cuts the racks apart; a NIC's
// link or a GPU cannot fail.
TEST(DegradeTest, FailedSwitchesLeaveTheFabricAndRoutesAvoidThem) {
  const Topology healthy = build_cluster(preset_spec("zionex", 32));
  const NodeId spine = *healthy.find("spine3");
  const Topology failed = degrade_links(healthy, parse_all({"device:spine3=0"}));
  const std::size_t spine_links = healthy.out_links(spine).size() + healthy.in_links(spine).size();
  EXPECT_EQ(spine_links, 4u);  // to and from each of the two racks
  EXPECT_EQ(failed.num_links(), healthy.num_links() - spine_links);
  EXPECT_EQ(failed.num_nodes(), healthy.num_nodes());
  EXPECT_TRUE(failed.out_links(*failed.find("spine3")).empty());
  EXPECT_TRUE(failed.in_links(*failed.find("spine3")).empty());
  const Router router(failed);
  std::set<std::string> spines_used;
  for (std::uint64_t key = 0; key < 64; ++key) {
    for (const LinkId l : router.route(failed.gpu(0), failed.gpu(128), key)) {
      const std::string& name = failed.node(failed.link(l).dst).name;
      if (name.starts_with("spine")) spines_used.insert(name);
    }
  }
  EXPECT_EQ(spines_used.size(), 7u);
  EXPECT_FALSE(spines_used.contains("spine3"));

  std::vector<std::string> all;
  for (int s = 0; s < 8; ++s) all.push_back("device:spine" + std::to_string(s) + "=0");
  EXPECT_NE(error_of([&] { degrade_links(healthy, parse_all(all)); })
                .find("with these failed, rack0/rsw and rack1/rsw cannot reach each other"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { degrade_links(healthy, parse_all({"device:rack0/rsw=0"})); }),
            "--degrade: 'device:rack0/rsw=0': the link node0/nic0->rack0/rsw cannot fail: only links between "
            "Ethernet switches can (every GPU leaves through its own NIC, so a NIC's link at 0 would cut its GPU "
            "off); give it a speed in [0.001, 1] instead");
  EXPECT_NE(error_of([] { parse_degradation("gpu:0=0"); }).find("a GPU at speed 0 never finishes"),
            std::string::npos);
  // One direction of one rack uplink fails: the other direction stays.
  const Topology one_way = degrade_links(healthy, parse_all({"link:rack0/rsw->spine0=0"}));
  EXPECT_EQ(one_way.num_links(), healthy.num_links() - 1);
}

TEST(DegradeTest, GpuSpeedsPerRankMultiply) {
  const Topology t = build_cluster(preset_spec("zionex", 1));
  EXPECT_TRUE(gpu_speeds(t, parse_all({"device:node0/nic0=0.5"})).empty());
  const std::vector<double> speeds = gpu_speeds(t, parse_all({"gpu:2-3=0.5", "gpu:3=0.5"}));
  EXPECT_EQ(speeds, (std::vector<double>{1, 1, 0.5, 0.25, 1, 1, 1, 1}));
  // node:N is every GPU of server N: ranks 8..15 of a 3-node ZionEX for node 1.
  const Topology three = build_cluster(preset_spec("zionex", 3));
  const std::vector<double> node = gpu_speeds(three, parse_all({"node:1=0.5", "gpu:8=0.5"}));
  ASSERT_EQ(node.size(), 24u);
  for (int r = 0; r < 24; ++r) {
    EXPECT_EQ(node[static_cast<std::size_t>(r)], r == 8 ? 0.25 : (r >= 8 && r < 16 ? 0.5 : 1.0)) << r;
  }
  EXPECT_EQ(gpu_speeds(three, parse_all({"node:1-2=0.8"})), gpu_speeds(three, parse_all({"gpu:8-23=0.8"})));
  EXPECT_TRUE(degrades_gpus(parse_all({"node:0=0.9"})));
  EXPECT_EQ(error_of([&] { degrade_links(three, parse_all({"node:2-3=0.5"})); }),
            "--degrade: 'node:2-3=0.5': node 3 does not exist: the cluster has 3 nodes with GPUs (0..2)");
  EXPECT_NE(error_of([] { parse_degradation("node:x=0.5"); }).find("a node (server) index"), std::string::npos);
  EXPECT_NE(error_of([] { parse_degradation("node:1=0"); }).find("speed 0 never finishes"), std::string::npos);
}

TEST(DegradeTest, LoadClusterAppliesTheRequestsDegradations) {
  ClusterRequest request;
  request.nodes = 2;
  request.degradations = {"gpu:1=0.8", "device:node1/nic7=0.5"};
  const LoadedCluster loaded = load_cluster(request);
  EXPECT_EQ(loaded.source, "preset zionex, degraded: gpu:1=0.8, device:node1/nic7=0.5");
  ASSERT_EQ(loaded.gpu_speed.size(), 16u);
  EXPECT_EQ(loaded.gpu_speed[1], 0.8);
  EXPECT_EQ(loaded.gpu_speed[0], 1.0);
  const LinkId up = only_link(loaded.topology, "node1/nic7", "rack0/rsw");
  EXPECT_EQ(loaded.topology.link(up).bandwidth, sim::BytesPerSecond::from_gbit_per_s(200).scaled(0.5));
  request.degradations = {"device:node2/nic0=0.5"};
  EXPECT_NE(error_of([&] { load_cluster(request); }).find("no device 'node2/nic0'"), std::string::npos);
  request.degradations.clear();
  EXPECT_TRUE(load_cluster(request).gpu_speed.empty());
  EXPECT_EQ(load_cluster(request).source, "preset zionex");
}

// A cluster file's "degrade" list: applied like --degrade (the flags on top),
// its problems reported with their JSON pointers, all at once; the explicit
// form `topology --format json` writes keeps the slow GPUs as a list and the
// slow links in their bandwidths, and reads back to the same cluster.
TEST(DegradeTest, ClusterFilesCarryDegradations) {
  const LoadedCluster file = parse_cluster(
      R"({"schema_version": 1, "preset": "zionex", "nodes": 2,
          "degrade": ["gpu:3=0.5", "device:node1/nic2=0.5"]})",
      "bad.json");
  EXPECT_EQ(file.source, "bad.json, degraded: gpu:3=0.5, device:node1/nic2=0.5");
  ASSERT_EQ(file.gpu_speed.size(), 16u);
  EXPECT_EQ(file.gpu_speed[3], 0.5);
  const LinkId up = only_link(file.topology, "node1/nic2", "rack0/rsw");
  EXPECT_EQ(file.topology.link(up).bandwidth, sim::BytesPerSecond::from_gbit_per_s(200).scaled(0.5));

  std::ostringstream written;
  write_cluster_json(written, file.topology, file.source, file.degradations);
  EXPECT_NE(written.str().find("\"degrade\": [\"gpu:3=0.5\"]"), std::string::npos);
  const LoadedCluster back = parse_cluster(written.str(), "written.json");
  EXPECT_EQ(back.gpu_speed, file.gpu_speed);
  ASSERT_EQ(back.topology.num_links(), file.topology.num_links());
  for (std::uint32_t i = 0; i < file.topology.num_links(); ++i) {
    EXPECT_EQ(back.topology.link(LinkId{i}).bandwidth, file.topology.link(LinkId{i}).bandwidth) << i;
  }

  try {
    parse_cluster(R"({"schema_version": 1, "preset": "zionex", "degrade": ["gpu:3=2", 5, "gpu:0=0.5"]})", "bad.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].to_string().substr(0, 33), "bad.json: /degrade/0: 'gpu:3=2': ");
    EXPECT_EQ(e.diagnostics()[1].to_string(), "bad.json: /degrade/1: expected a string, got 5");
  }
  EXPECT_EQ(error_of([] {
              parse_cluster(R"({"schema_version": 1, "preset": "zionex", "degrade": ["gpu:1=1", "gpu:8=0.5"]})",
                            "bad.json");
            }),
            "bad.json: /degrade/1: 'gpu:8=0.5': GPU rank 8 does not exist: the cluster has 8 GPUs (ranks 0..7)");
  // The flags apply on top of the file's list.
  ClusterRequest request;
  request.cluster = "zionex";
  request.nodes = 2;
  request.degradations = {"gpu:3=0.5"};
  const LoadedCluster flags = load_cluster(request);
  EXPECT_EQ(flags.gpu_speed[3], 0.5);
}

}  // namespace
}  // namespace zx::topology
