// Tests of BundleBuilder: the bundle it builds is the one of routing every
// transfer whole and adding it (the same parts in the same order, the same
// size and first byte, the same finish), on every kind of server and fabric
// the presets have, with empty transfers, transfers to oneself, pairs of
// one server and keys that spread over the spines.

#include "models/network/bundle_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/network/link_share.h"
#include "models/network/topology_links.h"
#include "sim/simulator.h"
#include "topology/presets.h"
#include "topology/router.h"

namespace zx::models {
namespace {

struct Transfer {
  int src;
  int dst;
  sim::Bytes size;
  std::uint64_t key;
  sim::Duration added_latency;
};

// Every ordered pair (self included), sizes 0 to ~1 MB with every fifth
// empty, keys and added latencies varying per pair.
std::vector<Transfer> all_pairs(int gpus, std::uint64_t seed) {
  std::vector<Transfer> out;
  std::uint64_t x = seed;
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const std::int64_t size = (x >> 33) % 5 == 0 ? 0 : static_cast<std::int64_t>((x >> 20) % 1'000'000);
      out.push_back(Transfer{s, d, sim::Bytes(size), x ^ 0xabcdefULL,
                             sim::Duration::ns(static_cast<std::int64_t>((x >> 40) % 3) * 400)});
    }
  }
  return out;
}

struct Built {
  std::vector<LinkShareNetwork::PendingPart> parts;
  sim::TimePoint first_byte;
  sim::TimePoint finish;
  sim::Bytes size;
  std::vector<std::int64_t> link_bytes;
};

Built run(const topology::Router& router, const std::vector<Transfer>& transfers, bool builder,
          std::uint64_t* split = nullptr) {
  sim::Simulator simulator;
  LinkShareNetwork share(simulator, link_params(router.topology()));
  BundleBuilder b(router, share);
  RouteScratch scratch;
  for (const Transfer& x : transfers) {
    if (builder) {
      b.add_gpu_transfer(x.src, x.dst, x.size, x.key, x.added_latency);
    } else {
      route_gpus(router, x.src, x.dst, x.key, scratch);
      share.add(scratch.links, x.size, 1.0, x.added_latency);
    }
  }
  if (builder) b.flush();
  if (split != nullptr) *split = b.split_transfers();
  const std::uint32_t id = share.start([] {});
  Built out;
  const auto pending = share.pending_parts(id);
  out.parts.assign(pending.begin(), pending.end());
  simulator.run();
  out.first_byte = share.record(id).first_byte;
  out.finish = share.record(id).finish;
  out.size = share.record(id).size;
  for (std::uint32_t l = 0; l < share.num_links(); ++l) out.link_bytes.push_back(share.link(l).bytes_carried.count());
  return out;
}

TEST(BundleBuilderTest, BuildsTheBundleOfRoutingEveryTransferWhole) {
  std::vector<std::pair<std::string, topology::Topology>> cases;
  cases.emplace_back("zionex/6", topology::build_cluster(topology::preset_spec("zionex", 6)));
  cases.emplace_back("zionex/20", topology::build_cluster(topology::preset_spec("zionex", 20)));
  for (const char* preset : {"zion", "hgx", "dgx-a100", "gb200-nvl72"}) {
    cases.emplace_back(preset, topology::build_cluster(topology::preset_spec(preset, 3)));
  }
  for (const auto& [name, t] : cases) {
    SCOPED_TRACE(name);
    const topology::Router router(t);
    const std::vector<Transfer> transfers = all_pairs(t.num_gpus(), 7);
    std::uint64_t split = 0;
    const Built fast = run(router, transfers, /*builder=*/true, &split);
    const Built whole = run(router, transfers, /*builder=*/false);
    ASSERT_EQ(fast.parts.size(), whole.parts.size());
    for (std::size_t i = 0; i < fast.parts.size(); ++i) {
      ASSERT_EQ(fast.parts[i], whole.parts[i]) << "part " << i;
    }
    EXPECT_EQ(fast.first_byte, whole.first_byte);
    EXPECT_EQ(fast.finish, whole.finish);
    EXPECT_EQ(fast.size, whole.size);
    EXPECT_EQ(fast.link_bytes, whole.link_bytes);
    // On ZionEX every pair of two servers goes by the fixed paths.
    if (name.starts_with("zionex")) {
      const auto gpus = static_cast<std::uint64_t>(t.num_gpus());
      EXPECT_EQ(split, gpus * (gpus - 8));
    }
  }
}

// Several bundles from one builder: each flush starts afresh.
TEST(BundleBuilderTest, EachFlushIsABundleOfItsOwn) {
  const topology::Topology t = topology::build_cluster(topology::preset_spec("zionex", 4));
  const topology::Router router(t);
  sim::Simulator simulator;
  LinkShareNetwork share(simulator, link_params(t));
  BundleBuilder b(router, share);
  b.add_gpu_transfer(0, 9, sim::Bytes(1000), 1, sim::Duration::zero());
  b.flush();
  const std::uint32_t first = share.start([] {});
  b.add_gpu_transfer(3, 20, sim::Bytes(500), 2, sim::Duration::zero());
  b.add_gpu_transfer(3, 21, sim::Bytes(0), 3, sim::Duration::ns(5000));
  b.flush();
  const std::uint32_t second = share.start([] {});

  RouteScratch scratch;
  route_gpus(router, 0, 9, 1, scratch);
  ASSERT_EQ(share.pending_parts(first).size(), scratch.links.size());
  for (std::size_t i = 0; i < scratch.links.size(); ++i) {
    EXPECT_EQ(share.pending_parts(first)[i], (LinkShareNetwork::PendingPart{scratch.links[i], 1000.0, 1.0}));
  }
  route_gpus(router, 3, 20, 2, scratch);
  ASSERT_EQ(share.pending_parts(second).size(), scratch.links.size());
  EXPECT_EQ(share.record(second).size, sim::Bytes(500));
  // The empty transfer puts nothing on its links but its delay counts.
  route_gpus(router, 3, 21, 3, scratch);
  sim::Duration delay = sim::Duration::ns(5000);
  for (std::uint32_t l : scratch.links) delay += share.link_latency(l);
  EXPECT_EQ(share.record(second).first_byte, sim::TimePoint() + delay);
}

}  // namespace
}  // namespace zx::models
