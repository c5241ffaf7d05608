// Tests of the linkshare fidelity (link_share.h): closed forms for a
// transfer alone, for parts sharing a link by weight, for a bundle whose
// links are not shared, for caps; conservation of bytes; and a randomised
// differential test of the virtual-time engine against a reference that
// recomputes every part's rate at every instant.

#include "models/network/link_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "models/network/flow_network.h"

namespace zx::models {
namespace {

using sim::Bytes;
using sim::Duration;
using sim::TimePoint;

constexpr double kGBps = 1e9;

std::vector<std::uint32_t> route(std::initializer_list<std::uint32_t> links) { return links; }

// One transfer alone is what the flow fidelity gives it: first byte after
// its route's latency, then size / bottleneck (1 MB at 25 GB/s: 40 us).
TEST(LinkShareTest, TransferAloneMatchesTheFlowFidelity) {
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kLinkShare}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{25 * kGBps, Duration::us(1)}, {100 * kGBps, Duration::ns(500)}}, fidelity);
    bool done = false;
    const FlowId id = net.start_flow(route({0, 1}), Bytes(1'000'000), [&] { done = true; },
                                     {.added_latency = Duration::us(2)});
    sim.run();
    EXPECT_TRUE(done);
    EXPECT_EQ(net.flow(id).first_byte, TimePoint::zero() + Duration::ns(3'500));
    EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + Duration::ns(43'500));
    EXPECT_EQ(net.link(0).bytes_carried, Bytes(1'000'000));
    EXPECT_EQ(net.link(0).busy_time, Duration::us(40));
    // Under linkshare each link serves its part alone: the 100 GB/s link is
    // through with it in 10 us, where the flow holds it at 25 GB/s for 40.
    EXPECT_EQ(net.link(1).busy_time, Duration::us(fidelity == NetworkFidelity::kFlow ? 40 : 10));
    EXPECT_EQ(net.flows_in_flight(), 0u);
  }
}

// A bundle of three transfers on one link (weight 3) beside a single
// transfer (weight 1): the link gives the bundle 3/4 of 40 GB/s. Bundle
// 3 MB: 3e6 / 30e9 = 100 us; single 1 MB at 10 GB/s: 100 us too, both done
// together. Then a single 2 MB alone after 1 MB: 1 MB at 10 GB/s (100 us)
// and the rest at 40 GB/s (25 us).
TEST(LinkShareTest, PartsShareALinkByWeight) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{40 * kGBps, Duration::zero()}});
  for (int i = 0; i < 3; ++i) net.add(route({0}), Bytes(1'000'000), 1.0, Duration::zero());
  const std::uint32_t bundle = net.start({});
  net.add(route({0}), Bytes(2'000'000), 1.0, Duration::zero());
  const std::uint32_t single = net.start({});
  sim.run();
  EXPECT_EQ(net.record(bundle).finish, TimePoint::zero() + Duration::us(100));
  EXPECT_EQ(net.record(single).finish, TimePoint::zero() + Duration::us(125));
  EXPECT_EQ(net.record(bundle).size, Bytes(3'000'000));
  EXPECT_EQ(net.link(0).bytes_carried, Bytes(5'000'000));
  EXPECT_EQ(net.link(0).busy_time, Duration::us(125));
}

// Busy time counts busy periods only, and a link asked mid-period counts
// up to now: 1 MB at 40 GB/s (25 us) from 0, idle, 2 MB (50 us) from 100
// us; at 110 us the link has been busy 25 + 10 us, at the end 75 us. Slots
// freed by the first period's parts are taken again by later ones (the
// free list), and every byte is counted once.
TEST(LinkShareTest, BusyTimeOverPeriodsAndMidPeriod) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{40 * kGBps, Duration::zero()}, {40 * kGBps, Duration::zero()}});
  net.add(route({0, 1}), Bytes(1'000'000), 1.0, Duration::zero());
  net.start({});
  sim.run(TimePoint::zero() + Duration::us(100));
  EXPECT_EQ(net.link(0).busy_time, Duration::us(25));
  for (int i = 0; i < 2; ++i) net.add(route({0}), Bytes(1'000'000), 1.0, Duration::zero());
  net.start({});
  net.add(route({1}), Bytes(500'000), 1.0, Duration::zero());
  net.start({});
  sim.run(TimePoint::zero() + Duration::us(110));
  EXPECT_EQ(net.link(0).busy_time, Duration::us(35));
  EXPECT_EQ(net.link(1).busy_time, Duration::us(35));
  sim.run();
  EXPECT_EQ(net.link(0).busy_time, Duration::us(75));
  EXPECT_EQ(net.link(0).bytes_carried, Bytes(3'000'000));
  EXPECT_EQ(net.link(1).busy_time, Duration::us(25 + 12) + Duration::ns(500));
  EXPECT_EQ(net.link(1).bytes_carried, Bytes(1'500'000));
  EXPECT_EQ(net.bundles_in_flight(), 0u);
}

// A bundle whose transfers cross different links takes its most loaded
// link's time, and its latency is its slowest transfer's: a ring step.
TEST(LinkShareTest, BundleTakesItsMostLoadedLink) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{10 * kGBps, Duration::us(1)}, {20 * kGBps, Duration::us(3)}, {5 * kGBps, Duration::zero()}});
  net.add(route({0}), Bytes(1'000'000), 1.0, Duration::zero());          // 100 us
  net.add(route({1, 2}), Bytes(400'000), 1.0, Duration::us(1));          // 80 us on link 2
  net.add(route({2}), Bytes(0), 1.0, Duration::us(10));                  // nothing, but its latency counts
  bool done = false;
  const std::uint32_t id = net.start([&] { done = true; });
  sim.run();
  EXPECT_TRUE(done);
  EXPECT_EQ(net.record(id).first_byte, TimePoint::zero() + Duration::us(10));
  EXPECT_EQ(net.record(id).finish, TimePoint::zero() + Duration::us(110));
  EXPECT_EQ(net.link(2).bytes_carried, Bytes(400'000));
  EXPECT_EQ(net.link(1).busy_time, Duration::us(20));
}

// A capped part takes its cap when that is below its share and leaves the
// rest to the others: 10 GB/s link, cap 2 GB/s: the other gets 8 GB/s.
// Uncapped 800 kB: 100 us; capped 400 kB: 200 us at 2 GB/s. A cap above the
// share changes nothing.
TEST(LinkShareTest, CapsAreWaterFilled) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{10 * kGBps, Duration::zero()}});
  net.add(route({0}), Bytes(400'000), 1.0, Duration::zero());
  const std::uint32_t capped = net.start({}, 2 * kGBps);
  net.add(route({0}), Bytes(800'000), 1.0, Duration::zero());
  const std::uint32_t free = net.start({});
  net.add(route({0}), Bytes(0), 1.0, Duration::zero());
  sim.run();
  EXPECT_EQ(net.record(free).finish, TimePoint::zero() + Duration::us(100));
  EXPECT_EQ(net.record(capped).finish, TimePoint::zero() + Duration::us(200));
}

// An empty bundle is done after its latency; callbacks can start bundles.
TEST(LinkShareTest, EmptyBundlesAndChainedStarts) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  std::vector<TimePoint> finishes;
  net.add(route({}), Bytes(0), 1.0, Duration::us(3));
  net.start([&] {
    finishes.push_back(sim.now());
    net.add(route({0}), Bytes(1'000), 1.0, Duration::zero());
    net.start([&] { finishes.push_back(sim.now()); });
  });
  sim.run();
  ASSERT_EQ(finishes.size(), 2u);
  EXPECT_EQ(finishes[0], TimePoint::zero() + Duration::us(3));
  EXPECT_EQ(finishes[1], TimePoint::zero() + Duration::us(4));
  EXPECT_EQ(net.bundles_in_flight(), 0u);
}

// The completion quantum rounds a finish up to its next multiple.
TEST(LinkShareTest, CompletionQuantumRoundsFinishesUp) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  net.set_completion_quantum(Duration::ns(10));
  net.add(route({0}), Bytes(1'001), 1.0, Duration::zero());  // 1,001 ns
  const std::uint32_t id = net.start({});
  sim.run();
  EXPECT_EQ(net.record(id).finish, TimePoint::zero() + Duration::ns(1'010));
}

// With recycling, ids follow the bundles in flight.
TEST(LinkShareTest, RecycledIdsFollowTheBundlesInFlight) {
  sim::Simulator sim;
  LinkShareNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  net.recycle_ids(true);
  int left = 100;
  std::function<void()> next = [&] {
    if (--left == 0) return;
    net.add(route({0}), Bytes(100), 1.0, Duration::zero());
    net.start([&] { next(); });
  };
  net.add(route({0}), Bytes(100), 1.0, Duration::zero());
  net.start([&] { next(); });
  sim.run();
  EXPECT_EQ(net.bundles_started(), 100u);
  EXPECT_EQ(net.num_ids(), 1u);
  EXPECT_EQ(net.link(0).bytes_carried, Bytes(10'000));
}

// The reference: every part's remaining bytes, all rates water-filled again
// at every instant anything joins or leaves, time advanced to the earliest
// finish. Finish times in seconds (doubles), no rounding.
struct RefPart {
  int bundle;
  std::uint32_t link;
  double remaining;
  double weight;
  double cap;
};
std::vector<double> reference(const std::vector<LinkParams>& links, const std::vector<double>& starts,
                              const std::vector<std::vector<RefPart>>& bundles) {
  std::vector<double> finish(bundles.size(), -1.0);
  std::vector<int> left(bundles.size());
  std::vector<RefPart> active;
  std::vector<std::size_t> order(bundles.size());
  for (std::size_t b = 0; b < bundles.size(); ++b) {
    order[b] = b;
    left[b] = static_cast<int>(bundles[b].size());
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return starts[a] < starts[b]; });
  std::size_t next = 0;
  double now = 0.0;
  while (next < order.size() || !active.empty()) {
    while (next < order.size() && starts[order[next]] <= now) {
      const std::size_t b = order[next++];
      if (bundles[b].empty()) finish[b] = now;
      for (const RefPart& p : bundles[b]) active.push_back(p);
    }
    std::vector<double> rate(active.size(), 0.0);
    for (std::uint32_t l = 0; l < links.size(); ++l) {
      std::vector<std::size_t> on;
      for (std::size_t i = 0; i < active.size(); ++i) {
        if (active[i].link == l) on.push_back(i);
      }
      std::stable_sort(on.begin(), on.end(), [&](std::size_t a, std::size_t b) {
        return active[a].cap / active[a].weight < active[b].cap / active[b].weight;
      });
      double capacity = links[l].capacity_bytes_per_s;
      double weight = 0.0;
      for (std::size_t i : on) weight += active[i].weight;
      for (std::size_t i : on) {
        rate[i] = std::min(capacity * active[i].weight / weight, active[i].cap);
        capacity -= rate[i];
        weight -= active[i].weight;
      }
    }
    double dt = next < order.size() ? starts[order[next]] - now : std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < active.size(); ++i) dt = std::min(dt, active[i].remaining / rate[i]);
    now += dt;
    std::vector<RefPart> kept;
    for (std::size_t i = 0; i < active.size(); ++i) {
      active[i].remaining -= rate[i] * dt;
      if (active[i].remaining <= 1e-6 * active[i].weight) {
        if (--left[static_cast<std::size_t>(active[i].bundle)] == 0) finish[static_cast<std::size_t>(active[i].bundle)] = now;
      } else {
        kept.push_back(active[i]);
      }
    }
    active = std::move(kept);
  }
  return finish;
}

// Random bundles over random links, staggered, some capped: every finish
// within 1e-9 relative (plus a picosecond per event of rounding) of the
// reference's.
TEST(LinkShareTest, RandomisedDifferentialAgainstReference) {
  std::mt19937_64 rng(20261206);
  for (int trial = 0; trial < 30; ++trial) {
    const int num_links = 1 + static_cast<int>(rng() % 6);
    std::vector<LinkParams> links;
    for (int l = 0; l < num_links; ++l) {
      links.push_back({(1.0 + static_cast<double>(rng() % 100)) * kGBps, Duration::zero()});
    }
    const int num_bundles = 1 + static_cast<int>(rng() % 40);
    std::vector<double> starts;
    std::vector<std::vector<RefPart>> parts;
    sim::Simulator sim;
    LinkShareNetwork net(sim, links);
    std::vector<std::uint32_t> ids(static_cast<std::size_t>(num_bundles));
    for (int b = 0; b < num_bundles; ++b) {
      const std::int64_t start_ns = static_cast<std::int64_t>(rng() % 5'000);
      const bool capped = rng() % 5 == 0;
      const double cap = capped ? (0.5 + static_cast<double>(rng() % 20)) * kGBps : std::numeric_limits<double>::infinity();
      starts.push_back(static_cast<double>(start_ns) * 1e-9);
      std::map<std::uint32_t, std::pair<double, double>> per_link;  // bytes, weight
      std::vector<std::pair<std::vector<std::uint32_t>, std::int64_t>> transfers;
      const int num_transfers = 1 + static_cast<int>(rng() % 4);
      for (int t = 0; t < num_transfers; ++t) {
        std::vector<std::uint32_t> r;
        for (std::uint32_t l = 0; l < static_cast<std::uint32_t>(num_links); ++l) {
          if (rng() % 2 == 0) r.push_back(l);
        }
        const std::int64_t size = 1'000 + static_cast<std::int64_t>(rng() % 2'000'000);
        transfers.emplace_back(r, size);
        for (std::uint32_t l : r) {
          per_link[l].first += static_cast<double>(size);
          per_link[l].second += 1.0;
        }
      }
      std::vector<RefPart> mine;
      for (const auto& [l, bw] : per_link) mine.push_back(RefPart{b, l, bw.first, bw.second, cap * bw.second});
      parts.push_back(mine);
      sim.schedule(TimePoint::zero() + Duration::ns(start_ns), [&, b, transfers, cap] {
        for (const auto& [r, size] : transfers) net.add(r, Bytes(size), 1.0, Duration::zero());
        ids[static_cast<std::size_t>(b)] = net.start({}, cap);
      });
    }
    sim.run();
    const std::vector<double> expected = reference(links, starts, parts);
    for (int b = 0; b < num_bundles; ++b) {
      const double got = net.record(ids[static_cast<std::size_t>(b)]).finish.count_ps() * 1e-12;
      EXPECT_NEAR(got, expected[static_cast<std::size_t>(b)], 1e-9 * expected[static_cast<std::size_t>(b)] + 200e-12)
          << "trial " << trial << " bundle " << b;
    }
  }
}

// The fidelity behind FlowNetwork: link records and hottest links come from
// it, and a route is not kept.
TEST(LinkShareTest, FlowNetworkDelegates) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}, {4 * kGBps, Duration::zero()}}, NetworkFidelity::kLinkShare);
  ASSERT_NE(net.link_share(), nullptr);
  EXPECT_EQ(to_string(net.fidelity()), "linkshare");
  const FlowId id = net.start_flow(route({0, 1}), Bytes(1'000), {});
  net.record_link_history(true);
  sim.run();
  EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + Duration::us(1));
  EXPECT_EQ(net.hottest_links(1), std::vector<std::uint32_t>{0});
  EXPECT_EQ(net.flows_started(), 1u);
  EXPECT_EQ(std::vector<std::uint32_t>(net.route(id).begin(), net.route(id).end()), route({0, 1}));
  net.link_share()->add(route({1}), Bytes(10), 1.0, Duration::zero());
  const FlowId bundle{net.link_share()->start({})};
  EXPECT_TRUE(net.route(bundle).empty());
  EXPECT_THROW(net.start_flow(route({0, 0}), Bytes(1), {}), std::invalid_argument);
  ASSERT_FALSE(net.link_history(0).empty());
  EXPECT_DOUBLE_EQ(net.link_history(0).front().utilisation, 1.0);
  EXPECT_DOUBLE_EQ(net.link_history(0).back().utilisation, 0.0);
}

}  // namespace
}  // namespace zx::models
