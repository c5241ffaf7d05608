// Tests of the network model on the engine: closed forms for a flow alone,
// sharing and staggered starts; agreement of the flow and analytical
// fidelities when nothing is shared; conservation of bytes and the max-min
// invariants during random runs; and a randomised differential test against a
// deliberately simple reference that re-solves everything at every instant.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "models/network/flow_network.h"

namespace zx::models {
namespace {

using sim::Bytes;
using sim::Duration;
using sim::TimePoint;

constexpr double kGBps = 1e9;

std::vector<std::uint32_t> route(std::initializer_list<std::uint32_t> links) { return links; }

// One flow of 1 MB over two links (25 GB/s and 100 GB/s, latencies 1 us and
// 500 ns): first byte after 1.5 us, then 1e6 / 25e9 s = 40 us at the
// bottleneck: finish at 41.5 us exactly.
TEST(FlowNetworkTest, FlowAloneFinishesAtLatencyPlusSizeOverBottleneck) {
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{25 * kGBps, Duration::us(1)}, {100 * kGBps, Duration::ns(500)}}, fidelity);
    bool done = false;
    const FlowId id = net.start_flow(route({0, 1}), Bytes(1'000'000), [&] { done = true; });
    sim.run();
    EXPECT_TRUE(done);
    EXPECT_EQ(net.flow(id).start, TimePoint::zero());
    EXPECT_EQ(net.flow(id).first_byte, TimePoint::zero() + Duration::ns(1'500));
    EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + Duration::ns(41'500));
    EXPECT_EQ(net.link(0).bytes_carried, Bytes(1'000'000));
    EXPECT_EQ(net.link(0).busy_time, Duration::us(40));
    EXPECT_EQ(net.flows_in_flight(), 0u);
  }
}

// An added latency (a communication library's handshake) comes before the
// first byte, after the route's own: 1.5 us + 2 us, then 40 us of bytes; a
// local copy (empty route) waits for it too; a negative one is refused.
TEST(FlowNetworkTest, AddedLatencyPrecedesTheFirstByte) {
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{25 * kGBps, Duration::us(1)}, {100 * kGBps, Duration::ns(500)}}, fidelity);
    const FlowId id = net.start_flow(route({0, 1}), Bytes(1'000'000), {}, {.added_latency = Duration::us(2)});
    const FlowId local = net.start_flow(route({}), Bytes(64), {}, {.added_latency = Duration::us(3)});
    sim.run();
    EXPECT_EQ(net.flow(id).first_byte, TimePoint::zero() + Duration::ns(3'500));
    EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + Duration::ns(43'500));
    EXPECT_EQ(net.flow(local).finish, TimePoint::zero() + Duration::us(3));
    EXPECT_THROW(net.start_flow(route({0}), Bytes(1), {}, {.added_latency = Duration::ps(-1)}),
                 std::invalid_argument);
  }
}

// n equal flows on one 10 GB/s link, all starting at 0 with no latency: each
// gets 10/n GB/s and all finish at n * size / 10 GB/s, in one completion
// instant and one re-solve for the joins.
TEST(FlowNetworkTest, EqualFlowsShareALinkAndFinishTogether) {
  for (int n : {1, 2, 5, 8}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{10 * kGBps, Duration::zero()}});
    std::vector<FlowId> ids;
    for (int i = 0; i < n; ++i) ids.push_back(net.start_flow(route({0}), Bytes(1'000'000), {}));
    sim.run();
    for (FlowId id : ids) {
      EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + Duration::us(100) * n) << n;
    }
    EXPECT_EQ(net.resolves(), 1u) << "joins at one instant are one re-solve";
  }
}

// Staggered start on one 1 GB/s link: A (3 MB) starts at 0; B (1 MB) starts at
// 1 ms. A alone sends 1 MB by 1 ms; then both share 0.5 GB/s: B needs 2 ms and
// finishes at 3 ms, when A has 1 MB left; A alone again, done at 4 ms.
TEST(FlowNetworkTest, StaggeredStartClosedForm) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  const FlowId a = net.start_flow(route({0}), Bytes(3'000'000), {});
  FlowId b{};
  sim.schedule(TimePoint::zero() + Duration::ms(1),
               [&] { b = net.start_flow(route({0}), Bytes(1'000'000), {}); });
  sim.run();
  EXPECT_EQ(net.flow(b).finish, TimePoint::zero() + Duration::ms(3));
  EXPECT_EQ(net.flow(a).finish, TimePoint::zero() + Duration::ms(4));
  EXPECT_EQ(net.link(0).busy_time, Duration::ms(4));
}

// Parking lot over time: links 0 and 1 at 1 GB/s; long flow L (2 MB) on both,
// short flows S0 (0.5 MB) on link 0 and S1 (1 MB) on link 1. All get 0.5 GB/s.
// S0 ends at 1 ms; link 0 then frees up but L stays limited by link 1 (shared
// with S1) at 0.5 GB/s; S1 ends at 2 ms; L has sent 1 MB and finishes its
// last 1 MB alone at 1 GB/s: 3 ms.
TEST(FlowNetworkTest, ParkingLotOverTime) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}, {1 * kGBps, Duration::zero()}});
  const FlowId l = net.start_flow(route({0, 1}), Bytes(2'000'000), {});
  const FlowId s0 = net.start_flow(route({0}), Bytes(500'000), {});
  const FlowId s1 = net.start_flow(route({1}), Bytes(1'000'000), {});
  sim.run();
  EXPECT_EQ(net.flow(s0).finish, TimePoint::zero() + Duration::ms(1));
  EXPECT_EQ(net.flow(s1).finish, TimePoint::zero() + Duration::ms(2));
  EXPECT_EQ(net.flow(l).finish, TimePoint::zero() + Duration::ms(3));
}

// Weights and caps reach the solver: on a 9 GB/s link, weight 2 vs 1 gives 6
// and 3 GB/s; a cap of 1 GB/s on a third flow holds it there.
TEST(FlowNetworkTest, WeightsAndCaps) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{9 * kGBps, Duration::zero()}});
  const FlowId heavy = net.start_flow(route({0}), Bytes(6'000'000), {}, {.weight = 2.0});
  const FlowId light = net.start_flow(route({0}), Bytes(3'000'000), {}, {.weight = 1.0});
  sim.run(TimePoint::zero() + Duration::ns(1));
  EXPECT_EQ(net.rate(heavy), 6 * kGBps);
  EXPECT_EQ(net.rate(light), 3 * kGBps);
  sim.run();
  EXPECT_EQ(net.flow(heavy).finish, net.flow(light).finish);  // both take 1 ms
  sim::Simulator sim2;
  FlowNetwork capped(sim2, {{9 * kGBps, Duration::zero()}});
  const FlowId c = capped.start_flow(route({0}), Bytes(1'000'000), {}, {.rate_cap_bytes_per_s = 1 * kGBps});
  sim2.run();
  EXPECT_EQ(capped.flow(c).finish, TimePoint::zero() + Duration::ms(1));
}

// Zero-byte flows finish at their first byte; empty routes cost nothing.
TEST(FlowNetworkTest, ZeroSizeAndEmptyRoute) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::us(2)}});
  int done = 0;
  const FlowId zero = net.start_flow(route({0}), Bytes(0), [&] { ++done; });
  const FlowId local = net.start_flow(route({}), Bytes(1'000), [&] { ++done; });
  sim.run();
  EXPECT_EQ(done, 2);
  EXPECT_EQ(net.flow(zero).finish, TimePoint::zero() + Duration::us(2));
  EXPECT_EQ(net.flow(local).finish, TimePoint::zero());
}

TEST(FlowNetworkTest, RejectsBadInput) {
  sim::Simulator sim;
  EXPECT_THROW(FlowNetwork(sim, {{0.0, Duration::zero()}}), std::invalid_argument);
  EXPECT_THROW(FlowNetwork(sim, {{1.0, Duration::ps(-1)}}), std::invalid_argument);
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}, {1 * kGBps, Duration::zero()}});
  EXPECT_THROW(net.start_flow(route({2}), Bytes(1), {}), std::invalid_argument);
  EXPECT_THROW(net.start_flow(route({0, 1, 0}), Bytes(1), {}), std::invalid_argument);
  EXPECT_THROW(net.start_flow(route({0}), Bytes(-1), {}), std::invalid_argument);
  EXPECT_THROW(net.start_flow(route({0}), Bytes(1), {}, {.weight = 0.0}), std::invalid_argument);
  EXPECT_THROW(net.start_flow(route({0}), Bytes(1), {}, {.rate_cap_bytes_per_s = -1.0}),
               std::invalid_argument);
  EXPECT_EQ(net.num_flows(), 0u);
}

// A flow's callback can start the next flow (a chain): each starts when the
// previous finishes.
TEST(FlowNetworkTest, CallbacksCanStartFlows) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::us(1)}});
  std::vector<FlowId> chain;
  std::function<void()> next = [&] {
    if (chain.size() == 5) return;
    chain.push_back(net.start_flow(route({0}), Bytes(1'000'000), [&] { next(); }));
  };
  next();
  sim.run();
  ASSERT_EQ(chain.size(), 5u);
  for (std::size_t i = 0; i < chain.size(); ++i) {
    EXPECT_EQ(net.flow(chain[i]).finish, TimePoint::zero() + Duration::us(1'001) * static_cast<std::int64_t>(i + 1));
  }
}

struct RandomCase {
  std::vector<LinkParams> links;
  struct Flow {
    std::vector<std::uint32_t> route;
    std::int64_t size;
    std::int64_t start_ps;
    double weight;
  };
  std::vector<Flow> flows;
};

RandomCase random_case(std::mt19937_64& rng, bool disjoint) {
  RandomCase c;
  const std::size_t links = disjoint ? 40 : 2 + rng() % 10;
  for (std::size_t l = 0; l < links; ++l) {
    c.links.push_back({(1.0 + static_cast<double>(rng() % 50)) * kGBps,
                       Duration::ps(static_cast<std::int64_t>(rng() % 3'000))});
  }
  const std::size_t flows = 1 + rng() % (disjoint ? 10 : 25);
  std::uint32_t next_link = 0;
  for (std::size_t f = 0; f < flows; ++f) {
    RandomCase::Flow flow;
    const std::size_t hops = 1 + rng() % 3;
    if (disjoint) {
      for (std::size_t h = 0; h < hops; ++h) flow.route.push_back(next_link++);
    } else {
      while (flow.route.size() < std::min(hops, links)) {
        const auto l = static_cast<std::uint32_t>(rng() % links);
        if (std::find(flow.route.begin(), flow.route.end(), l) == flow.route.end()) flow.route.push_back(l);
      }
    }
    flow.size = static_cast<std::int64_t>(rng() % 5'000'000);
    // Many starts share an instant, to exercise batching.
    flow.start_ps = static_cast<std::int64_t>(rng() % 4) * 50'000 + static_cast<std::int64_t>(rng() % 2) * 7;
    flow.weight = rng() % 4 == 0 ? 2.0 : 1.0;
    c.flows.push_back(flow);
  }
  return c;
}

struct ModelCounters {
  std::uint64_t resolves = 0;
  std::uint64_t incremental_resolves = 0;
  std::uint64_t group_resolves = 0;
  std::uint64_t join_resolves = 0;
};

std::vector<TimePoint> run_model(const RandomCase& c, NetworkFidelity fidelity,
                                 std::vector<std::string>* violations = nullptr,
                                 ModelCounters* counters = nullptr, Duration quantum = Duration::zero(),
                                 double tolerance = 0.0) {
  sim::Simulator sim;
  FlowNetwork net(sim, c.links, fidelity);
  net.set_completion_quantum(quantum);
  net.set_completion_tolerance(tolerance);
  std::vector<FlowId> ids(c.flows.size());
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    sim.schedule(TimePoint::from_ps(c.flows[f].start_ps), [&, f] {
      ids[f] = net.start_flow(c.flows[f].route, Bytes(c.flows[f].size), {}, {.weight = c.flows[f].weight});
    });
  }
  // Step through the run and check the max-min invariants at many instants.
  if (violations != nullptr) {
    for (std::int64_t t = 1; t < 2'000'000'000; t = t * 3 / 2 + 1'000) {
      sim.run(TimePoint::from_ps(t));
      std::vector<double> load(c.links.size(), 0.0);
      std::vector<std::size_t> active;
      for (std::size_t f = 0; f < c.flows.size(); ++f) {
        if (sim.now() < TimePoint::from_ps(c.flows[f].start_ps)) continue;
        const double r = net.rate(ids[f]);
        if (r <= 0.0) continue;
        active.push_back(f);
        for (std::uint32_t l : c.flows[f].route) {
          if (r > c.links[l].capacity_bytes_per_s * (1 + 1e-12)) violations->push_back("flow over capacity");
          load[l] += r;
        }
      }
      for (std::size_t l = 0; l < load.size(); ++l) {
        if (load[l] > c.links[l].capacity_bytes_per_s * (1 + 1e-9)) violations->push_back("link over capacity");
      }
      for (std::size_t f : active) {
        bool saturated = false;
        for (std::uint32_t l : c.flows[f].route) {
          saturated |= load[l] >= c.links[l].capacity_bytes_per_s * (1 - 1e-9);
        }
        if (!saturated) violations->push_back("flow without a saturated link");
      }
    }
  }
  sim.run();
  if (counters != nullptr) {
    counters->resolves += net.resolves();
    counters->incremental_resolves += net.incremental_resolves();
    counters->group_resolves += net.group_resolves();
    counters->join_resolves += net.join_resolves();
  }
  std::vector<TimePoint> finish;
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    finish.push_back(net.flow(ids[f]).finish);
  }
  // No flow beats its bottleneck, quantum or not.
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    double bottleneck = std::numeric_limits<double>::infinity();
    for (std::uint32_t l : c.flows[f].route) bottleneck = std::min(bottleneck, c.links[l].capacity_bytes_per_s);
    const FlowRecord& r = net.flow(ids[f]);
    EXPECT_GE((r.finish - r.first_byte).to_seconds() * (1 + 1e-12), static_cast<double>(c.flows[f].size) / bottleneck)
        << "flow " << f << " finished faster than its bottleneck allows";
  }
  // Conservation: every link carried exactly the bytes of the flows crossing
  // it, and (when shared fairly) no faster than its capacity.
  for (std::uint32_t l = 0; l < c.links.size(); ++l) {
    std::int64_t expected = 0;
    for (const auto& flow : c.flows) {
      if (std::find(flow.route.begin(), flow.route.end(), l) != flow.route.end()) expected += flow.size;
    }
    const LinkRecord record = net.link(l);
    EXPECT_EQ(record.bytes_carried.count(), expected) << "link " << l;
    if (fidelity == NetworkFidelity::kFlow) {  // the analytical model does not share
      EXPECT_LE(static_cast<double>(expected),
                c.links[l].capacity_bytes_per_s * record.busy_time.to_seconds() * (1 + 1e-9) + 1.0)
          << "link " << l << " carried bytes faster than its capacity";
    }
  }
  return finish;
}

// The reference: no engine, no components. At every instant where something
// happens, apply every first byte and finish due, then re-solve ALL
// transferring flows from scratch; a flow's progress is integrated when its
// rate changes, and its finish is transfer_time after that, as the model does.
std::vector<TimePoint> run_reference(const RandomCase& c, std::int64_t quantum_ps = 0) {
  struct State {
    bool active = false;
    bool done = false;
    double rate = 0.0;
    double remaining = 0.0;
    std::int64_t last = 0;
    std::int64_t finish = 0;
  };
  std::vector<State> st(c.flows.size());
  std::vector<std::int64_t> first_byte(c.flows.size());
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    Duration latency = Duration::zero();
    for (std::uint32_t l : c.flows[f].route) latency += c.links[l].latency;
    first_byte[f] = c.flows[f].start_ps + latency.count_ps();
  }
  MaxMinSolver solver;
  std::vector<TimePoint> result(c.flows.size(), TimePoint::max());
  std::int64_t now = 0;
  for (;;) {
    // The next instant: a first byte or a finish.
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      if (!st[f].active && !st[f].done) next = std::min(next, first_byte[f]);
      if (st[f].active) next = std::min(next, st[f].finish);
    }
    if (next == std::numeric_limits<std::int64_t>::max()) break;
    now = next;
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      if (st[f].active && st[f].finish == now) {
        st[f].active = false;
        st[f].done = true;
        result[f] = TimePoint::from_ps(now);
      }
    }
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      if (!st[f].active && !st[f].done && first_byte[f] == now) {
        st[f].active = true;
        st[f].remaining = static_cast<double>(c.flows[f].size);
        st[f].last = now;
        if (c.flows[f].size == 0) {  // zero bytes: finishes at its first byte
          st[f].finish = now;
        }
      }
    }
    // Zero-size flows that just joined finish at this same instant.
    bool again = true;
    while (again) {
      again = false;
      for (std::size_t f = 0; f < c.flows.size(); ++f) {
        if (st[f].active && c.flows[f].size == 0) {
          st[f].active = false;
          st[f].done = true;
          result[f] = TimePoint::from_ps(now);
          again = true;
        }
      }
    }
    MaxMinProblem p;
    p.capacity.clear();
    for (const LinkParams& l : c.links) p.capacity.push_back(l.capacity_bytes_per_s);
    std::vector<std::size_t> members;
    for (std::size_t f = 0; f < c.flows.size(); ++f) {
      if (!st[f].active) continue;
      members.push_back(f);
      p.add_flow(c.flows[f].route, c.flows[f].weight);
    }
    // Links that no active flow crosses get no flows; the solver ignores them.
    const std::vector<double>& rates = solver.solve(p);
    for (std::size_t i = 0; i < members.size(); ++i) {
      State& s = st[members[i]];
      if (rates[i] == s.rate) continue;
      if (s.rate > 0.0 && now > s.last) {
        s.remaining = std::max(0.0, s.remaining - s.rate * (static_cast<double>(now - s.last) * 1e-12));
      }
      s.rate = rates[i];
      s.last = now;
      s.finish = now + transfer_time(s.remaining, s.rate).count_ps();
      if (quantum_ps > 0) s.finish = (s.finish + quantum_ps - 1) / quantum_ps * quantum_ps;
    }
  }
  return result;
}

// Hundreds of random small cases: the incremental model's finish times equal
// the from-scratch reference's to the picosecond, and the invariants hold.
TEST(FlowNetworkTest, RandomisedDifferentialAgainstReference) {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 300; ++trial) {
    const RandomCase c = random_case(rng, /*disjoint=*/false);
    std::vector<std::string> violations;
    const std::vector<TimePoint> model = run_model(c, NetworkFidelity::kFlow, trial < 60 ? &violations : nullptr);
    const std::vector<TimePoint> reference = run_reference(c);
    ASSERT_EQ(model.size(), reference.size());
    for (std::size_t f = 0; f < model.size(); ++f) {
      ASSERT_EQ(model[f].count_ps(), reference[f].count_ps()) << "trial " << trial << " flow " << f;
    }
    ASSERT_TRUE(violations.empty()) << "trial " << trial << ": " << violations.front();
  }
}

// Cases for the incremental re-solve: flows of widely different sizes (so
// they finish at many distinct instants, most with no join), starts spread
// over many instants, weights 1 and 2, up to 60 flows on up to 12 links, and
// a few symmetric groups (equal routes and sizes) that finish together.
RandomCase leave_heavy_case(std::mt19937_64& rng) {
  RandomCase c;
  const std::size_t links = 2 + rng() % 11;
  for (std::size_t l = 0; l < links; ++l) {
    c.links.push_back({(1.0 + static_cast<double>(rng() % 8)) * kGBps,
                       Duration::ps(static_cast<std::int64_t>(rng() % 2) * 1'000)});
  }
  const std::size_t flows = 5 + rng() % 56;
  for (std::size_t f = 0; f < flows; ++f) {
    RandomCase::Flow flow;
    if (f > 0 && rng() % 5 == 0) {  // a copy of the previous flow: a symmetric group
      flow = c.flows.back();
      c.flows.push_back(flow);
      continue;
    }
    const std::size_t hops = 1 + rng() % std::min<std::size_t>(4, links);
    while (flow.route.size() < hops) {
      const auto l = static_cast<std::uint32_t>(rng() % links);
      if (std::find(flow.route.begin(), flow.route.end(), l) == flow.route.end()) {
        flow.route.push_back(l);
      }
    }
    flow.size = 1'000 + static_cast<std::int64_t>(rng() % 3'000'000) *
                            static_cast<std::int64_t>(1 + rng() % 3);
    flow.start_ps = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 40) * 25'000;
    flow.weight = rng() % 3 == 0 ? 2.0 : 1.0;
    c.flows.push_back(flow);
  }
  return c;
}

// The incremental path against the from-scratch reference, to the picosecond,
// on cases built to take it often.
TEST(FlowNetworkTest, RandomisedDifferentialLeaveHeavy) {
  std::mt19937_64 rng(777);
  ModelCounters counters;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomCase c = leave_heavy_case(rng);
    std::vector<std::string> violations;
    const std::vector<TimePoint> model =
        run_model(c, NetworkFidelity::kFlow, trial < 40 ? &violations : nullptr, &counters);
    const std::vector<TimePoint> reference = run_reference(c);
    ASSERT_EQ(model.size(), reference.size());
    for (std::size_t f = 0; f < model.size(); ++f) {
      ASSERT_EQ(model[f].count_ps(), reference[f].count_ps()) << "trial " << trial << " flow " << f;
    }
    ASSERT_TRUE(violations.empty()) << "trial " << trial << ": " << violations.front();
  }
  // Most re-solves took the incremental path, by both of its ways (the
  // links' level groups, and the solver's replay of the fixed flows).
  EXPECT_GT(counters.incremental_resolves, 1'000u);
  EXPECT_GT(2 * counters.incremental_resolves, counters.resolves);
  EXPECT_GT(counters.group_resolves, 200u);
  EXPECT_GT(counters.incremental_resolves - counters.group_resolves, 200u);
  // Joins too: from a bound, not the component.
  EXPECT_GT(counters.join_resolves, 1'000u);
}

// Flows that join while others are in flight, at many instants, on a few
// hot links and many private ones, so that a joiner's bound falls anywhere
// among the levels already there: the join re-solves give the from-scratch
// reference's finish times to the picosecond.
TEST(FlowNetworkTest, RandomisedDifferentialJoinHeavy) {
  std::mt19937_64 rng(5150);
  ModelCounters counters;
  for (int trial = 0; trial < 200; ++trial) {
    RandomCase c;
    const std::size_t hot = 1 + rng() % 3;
    const std::size_t links = hot + 4 + rng() % 20;
    for (std::size_t l = 0; l < links; ++l) {
      c.links.push_back({(l < hot ? 4.0 + static_cast<double>(rng() % 8) : 0.5 + static_cast<double>(rng() % 4)) *
                             kGBps,
                         Duration::ps(static_cast<std::int64_t>(rng() % 2) * 500)});
    }
    const std::size_t flows = 10 + rng() % 50;
    for (std::size_t f = 0; f < flows; ++f) {
      RandomCase::Flow flow;
      flow.route.push_back(static_cast<std::uint32_t>(rng() % hot));
      if (rng() % 4 != 0) flow.route.push_back(static_cast<std::uint32_t>(hot + rng() % (links - hot)));
      if (rng() % 3 == 0) {
        const auto l = static_cast<std::uint32_t>(rng() % links);
        if (std::find(flow.route.begin(), flow.route.end(), l) == flow.route.end()) flow.route.push_back(l);
      }
      flow.size = 10'000 + static_cast<std::int64_t>(rng() % 2'000'000);
      flow.start_ps = static_cast<std::int64_t>(rng() % 200) * 5'000;
      flow.weight = rng() % 4 == 0 ? 2.0 : 1.0;
      c.flows.push_back(flow);
    }
    std::vector<std::string> violations;
    const std::vector<TimePoint> model =
        run_model(c, NetworkFidelity::kFlow, trial < 30 ? &violations : nullptr, &counters);
    ASSERT_EQ(model, run_reference(c)) << "trial " << trial;
    ASSERT_TRUE(violations.empty()) << "trial " << trial << ": " << violations.front();
  }
  EXPECT_GT(counters.join_resolves, 2'000u);
}

// A flow that joins a link whose flows are all held below the link's fair
// share elsewhere re-solves only itself: 200 flows at 1 GB/s (their private
// links) share a 300 GB/s link; the joiner, on the shared link alone, fills
// it at 100 GB/s, far above their level, so they stay fixed.
TEST(FlowNetworkTest, JoinResolveCoversOnlyFlowsAtOrAboveTheBound) {
  RandomCase c;
  c.links.push_back({300 * kGBps, Duration::zero()});
  constexpr std::uint32_t kSlow = 200;
  for (std::uint32_t i = 0; i < kSlow; ++i) {
    c.links.push_back({1 * kGBps, Duration::zero()});
    c.flows.push_back({.route = {0, 1 + i}, .size = 50'000'000, .start_ps = 0, .weight = 1.0});
  }
  c.flows.push_back({.route = {0}, .size = 1'000'000'000, .start_ps = 1'000'000'000, .weight = 1.0});
  sim::Simulator sim;
  FlowNetwork net(sim, c.links);
  std::vector<FlowId> ids;
  for (const auto& flow : c.flows) {
    sim.schedule(TimePoint::from_ps(flow.start_ps), [&net, &ids, &flow] {
      ids.push_back(net.start_flow(flow.route, Bytes(flow.size), {}, {.weight = flow.weight}));
    });
  }
  sim.run();
  EXPECT_EQ(net.join_resolves(), 1u)
      << "the joiner at 1 ms; at time 0 nothing was fixed, so the component was re-solved";
  EXPECT_EQ(net.resolved_flows(), kSlow + 1) << "the joiner alone at 1 ms";
  EXPECT_EQ(net.flow(ids.back()).finish, TimePoint::zero() + Duration::ms(1) + Duration::ms(10));
  const std::vector<TimePoint> reference = run_reference(c);
  for (std::size_t f = 0; f < c.flows.size(); ++f) EXPECT_EQ(net.flow(ids[f]).finish, reference[f]) << "flow " << f;
}

// A departure re-solves, of the flows at or above the leaver's level, only
// those sharing links (directly or through each other) with it: y leaves
// link 0 at 2 ms; x (links 0 and 1) and z (link 1) move, and the 100 flows
// of link 2, above y's level but on no link of theirs, keep their rates
// without a re-solve.
TEST(FlowNetworkTest, DepartureResolvesOnlyTheLeaversGroup) {
  RandomCase c;
  c.links.push_back({1 * kGBps, Duration::zero()});
  c.links.push_back({100 * kGBps, Duration::zero()});
  c.links.push_back({200 * kGBps, Duration::zero()});
  c.flows.push_back({.route = {0, 1}, .size = 100'000'000, .start_ps = 0, .weight = 1.0});     // x
  c.flows.push_back({.route = {0}, .size = 1'000'000, .start_ps = 0, .weight = 1.0});          // y
  c.flows.push_back({.route = {1}, .size = 10'000'000'000, .start_ps = 0, .weight = 1.0});     // z
  constexpr std::uint32_t kApart = 100;
  for (std::uint32_t i = 0; i < kApart; ++i) {
    c.flows.push_back({.route = {2}, .size = 100'000'000, .start_ps = 0, .weight = 1.0});
  }
  sim::Simulator sim;
  FlowNetwork net(sim, c.links);
  std::vector<FlowId> ids;
  for (const auto& flow : c.flows) ids.push_back(net.start_flow(flow.route, Bytes(flow.size), {}));
  std::uint64_t after_y = 0;
  sim.schedule(TimePoint::zero() + Duration::ms(3), [&] { after_y = net.resolved_flows(); });
  sim.run();
  EXPECT_EQ(net.flow(ids[1]).finish, TimePoint::zero() + Duration::ms(2));
  EXPECT_EQ(after_y, kApart + 3 + 2) << "all at time 0, then x and z alone at 2 ms";
  const std::vector<TimePoint> reference = run_reference(c);
  for (std::size_t f = 0; f < c.flows.size(); ++f) EXPECT_EQ(net.flow(ids[f]).finish, reference[f]) << "flow " << f;
}

// The model with recycled flow ids (handed out again as soon as possible),
// its finish times taken in the callbacks, since a recycled id's record
// describes its newest flow.
std::vector<TimePoint> run_model_recycling(const RandomCase& c, std::uint32_t block_ids, std::size_t* ids_used,
                                           Duration quantum = Duration::zero()) {
  sim::Simulator sim;
  FlowNetwork net(sim, c.links);
  net.set_completion_quantum(quantum);
  net.recycle_flow_ids(true, block_ids);
  std::vector<TimePoint> finish(c.flows.size(), TimePoint::max());
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    sim.schedule(TimePoint::from_ps(c.flows[f].start_ps), [&, f] {
      const FlowId id = net.start_flow(c.flows[f].route, Bytes(c.flows[f].size), [&, f] { finish[f] = sim.now(); },
                                       {.weight = c.flows[f].weight});
      const auto r = net.route(id);
      EXPECT_TRUE(std::equal(r.begin(), r.end(), c.flows[f].route.begin(), c.flows[f].route.end()));
    });
  }
  sim.run();
  EXPECT_EQ(net.flows_started(), c.flows.size());
  EXPECT_EQ(net.flows_in_flight(), 0u);
  if (ids_used != nullptr) *ids_used = net.num_flows();
  // Conservation holds whatever the ids.
  for (std::uint32_t l = 0; l < c.links.size(); ++l) {
    std::int64_t expected = 0;
    for (const auto& flow : c.flows) {
      if (std::find(flow.route.begin(), flow.route.end(), l) != flow.route.end()) expected += flow.size;
    }
    EXPECT_EQ(net.link(l).bytes_carried.count(), expected) << "link " << l;
  }
  return finish;
}

// Recycled ids change which flow sits at which id, so the order in which the
// solver takes them: the finish times still equal the from-scratch
// reference's to the picosecond on these cases (both ways of the incremental
// re-solve and the component re-solve run), with and without a quantum, and
// fewer ids than flows were used.
TEST(FlowNetworkTest, RecycledIdsAgainstReference) {
  std::mt19937_64 rng(9090);
  int reused = 0;  // trials that used fewer ids than flows
  for (int trial = 0; trial < 400; ++trial) {
    RandomCase c = trial % 2 == 0 ? leave_heavy_case(rng) : random_case(rng, /*disjoint=*/trial % 4 == 1);
    // Starts spread over 10 ms, so that flows finish while others start.
    for (RandomCase::Flow& flow : c.flows) flow.start_ps = static_cast<std::int64_t>(rng() % 100) * 100'000'000;
    const std::int64_t quantum_ps = trial % 3 == 0 ? 5'000 : 0;
    std::size_t ids = 0;
    const std::uint32_t block = trial % 5 == 0 ? 4 : 1;
    const std::vector<TimePoint> model = run_model_recycling(c, block, &ids, Duration::ps(quantum_ps));
    const std::vector<TimePoint> reference = run_reference(c, quantum_ps);
    ASSERT_EQ(model.size(), reference.size());
    for (std::size_t f = 0; f < model.size(); ++f) {
      ASSERT_EQ(model[f].count_ps(), reference[f].count_ps()) << "trial " << trial << " flow " << f;
    }
    reused += ids < c.flows.size() ? 1 : 0;
  }
  EXPECT_GT(reused, 200);
}

// A chain of flows, each started by the previous one's callback, runs on a
// few blocks of ids; the timing is that of the run without recycling; bad
// use is refused.
TEST(FlowNetworkTest, RecycledIdsBoundTheIdsInUse) {
  for (const std::uint32_t block : {1u, 8u}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{1 * kGBps, Duration::us(1)}, {2 * kGBps, Duration::zero()}});
    net.recycle_flow_ids(true, block);
    int started = 0;
    std::vector<TimePoint> finishes;
    std::function<void()> next = [&] {
      if (started == 1000) return;
      ++started;
      // Two flows at a time share link 0; the one also on link 1 continues the chain.
      net.start_flow(route({0}), Bytes(500'000), [&] { finishes.push_back(sim.now()); });
      net.start_flow(route({0, 1}), Bytes(500'000), [&] { next(); });
    };
    next();
    sim.run();
    EXPECT_EQ(net.flows_started(), 2000u);
    EXPECT_LE(net.num_flows(), 3 * block + 2) << "block " << block;
    // Each pair shares 1 GB/s: both finish 1 us + 1 ms after they start.
    ASSERT_EQ(finishes.size(), 1000u);
    for (std::size_t i = 0; i < finishes.size(); ++i) {
      EXPECT_EQ(finishes[i], TimePoint::zero() + Duration::us(1'001) * static_cast<std::int64_t>(i + 1));
    }
  }
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::us(1)}});
  EXPECT_THROW(net.recycle_flow_ids(true, 3), std::invalid_argument);
  EXPECT_THROW(net.recycle_flow_ids(true, 0), std::invalid_argument);
  net.start_flow(route({0}), Bytes(1), {});
  EXPECT_THROW(net.recycle_flow_ids(true), std::invalid_argument);
}

// With a completion quantum the model still equals the from-scratch
// reference to the picosecond when the reference rounds its finishes up the
// same way; every finish of a flow with bytes is on the quantum's grid; and
// the invariants (capacities, conservation, no flow beating its
// bottleneck) hold. Over the same cases, no more instants need a re-solve.
TEST(FlowNetworkTest, CompletionQuantumAgainstReference) {
  for (const std::int64_t quantum_ps : {1'000, 7'777, 250'000}) {
    std::mt19937_64 rng(31 + quantum_ps);
    ModelCounters exact;
    ModelCounters coarse;
    for (int trial = 0; trial < 200; ++trial) {
      const RandomCase c = trial % 2 == 0 ? leave_heavy_case(rng) : random_case(rng, /*disjoint=*/false);
      std::vector<std::string> violations;
      const std::vector<TimePoint> model = run_model(c, NetworkFidelity::kFlow, trial < 30 ? &violations : nullptr,
                                                     &coarse, Duration::ps(quantum_ps));
      run_model(c, NetworkFidelity::kFlow, nullptr, &exact);
      const std::vector<TimePoint> reference = run_reference(c, quantum_ps);
      ASSERT_EQ(model.size(), reference.size());
      for (std::size_t f = 0; f < model.size(); ++f) {
        ASSERT_EQ(model[f].count_ps(), reference[f].count_ps())
            << "quantum " << quantum_ps << " trial " << trial << " flow " << f;
        if (c.flows[f].size > 0) {
          ASSERT_EQ(model[f].count_ps() % quantum_ps, 0) << "quantum " << quantum_ps << " trial " << trial;
        }
      }
      ASSERT_TRUE(violations.empty()) << "trial " << trial << ": " << violations.front();
    }
    // Random sizes seldom finish within a quantum of each other: no fewer.
    EXPECT_LE(coarse.resolves, exact.resolves) << "quantum " << quantum_ps;

  }
}

// Closed forms: a flow alone finishes at its exact time rounded up to the
// quantum, at both fidelities; flows due a fraction of a quantum apart
// finish together, in one completion instant; zero-byte and local flows are
// not delayed.
TEST(FlowNetworkTest, CompletionQuantumClosedForms) {
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
    for (const auto& [quantum, finish] : {std::pair{Duration::zero(), Duration::ns(41'500)},
                                          std::pair{Duration::ns(500), Duration::ns(41'500)},
                                          std::pair{Duration::us(1), Duration::us(42)},
                                          std::pair{Duration::us(7), Duration::us(42)},
                                          std::pair{Duration::us(100), Duration::us(100)}}) {
      sim::Simulator sim;
      FlowNetwork net(sim, {{25 * kGBps, Duration::us(1)}, {100 * kGBps, Duration::ns(500)}}, fidelity);
      net.set_completion_quantum(quantum);
      EXPECT_EQ(net.completion_quantum(), quantum);
      const FlowId id = net.start_flow(route({0, 1}), Bytes(1'000'000), {});
      const FlowId zero = net.start_flow(route({0}), Bytes(0), {});
      const FlowId local = net.start_flow(route({}), Bytes(1'000), {});
      sim.run();
      EXPECT_EQ(net.flow(id).finish, TimePoint::zero() + finish) << quantum.count_ps();
      EXPECT_EQ(net.flow(zero).finish, TimePoint::zero() + Duration::us(1));
      EXPECT_EQ(net.flow(local).finish, TimePoint::zero());
    }
  }
  // Two flows on their own 1 GB/s links, due at 1000 us and 1000.5 us, and
  // both on a 100 GB/s link that never binds. With a 7 us quantum both
  // finish at 1001 us (143 x 7 us), in one completion instant. Exact, the
  // first finish re-solves the other flow (its level is at or above the
  // leaver's, and it shares a link with it): two re-solves with the joins';
  // one with the quantum, where nothing is left to re-solve.
  for (const Duration quantum : {Duration::zero(), Duration::us(7)}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{1 * kGBps, Duration::zero()},
                          {1 * kGBps, Duration::zero()},
                          {100 * kGBps, Duration::zero()}});
    net.set_completion_quantum(quantum);
    const FlowId a = net.start_flow(route({0, 2}), Bytes(1'000'000), {});
    const FlowId b = net.start_flow(route({1, 2}), Bytes(1'000'500), {});
    sim.run();
    if (quantum == Duration::zero()) {
      EXPECT_EQ(net.flow(a).finish, TimePoint::zero() + Duration::us(1'000));
      EXPECT_EQ(net.flow(b).finish, TimePoint::zero() + Duration::ns(1'000'500));
      EXPECT_EQ(net.resolves(), 2u);
    } else {
      EXPECT_EQ(net.flow(a).finish, TimePoint::zero() + Duration::us(1'001));
      EXPECT_EQ(net.flow(b).finish, TimePoint::zero() + Duration::us(1'001));
      EXPECT_EQ(net.resolves(), 1u);
    }
  }
}

TEST(FlowNetworkTest, CompletionQuantumRejectsBadUse) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  EXPECT_THROW(net.set_completion_quantum(Duration::ps(-1)), std::invalid_argument);
  net.start_flow(route({0}), Bytes(1'000), {});
  EXPECT_THROW(net.set_completion_quantum(Duration::ns(1)), std::invalid_argument);
  EXPECT_EQ(net.completion_quantum(), Duration::zero());
}

// The relative completion tolerance (the coalesced fidelity). Closed forms:
// a flow alone, transferring 1,000,001 bytes at 1 GB/s (1,000,001 ns),
// finishes on the coarsest grid of 2^k quanta within 1e-4 of that: with a
// 10 ns quantum 80 ns (100 ns / 10 ns = 10 quanta, whose power of two is 8),
// at 1,000,080 ns; with no quantum 65,536 ps (1e-4 x 1,000,001,000 ps =
// 100,000 ps), at 15,259 x 65,536 ps. A tolerance below one quantum's worth
// of the transfer keeps the quantum alone; zero bytes and local copies are
// not delayed.
TEST(FlowNetworkTest, CompletionToleranceClosedForms) {
  struct Case {
    Duration quantum;
    double tolerance;
    std::int64_t finish_ps;
  };
  for (const Case& k : {Case{Duration::ns(10), 1e-4, 1'000'080'000}, Case{Duration::zero(), 1e-4, 15'259LL * 65'536},
                        Case{Duration::ns(10), 1e-6, 1'000'010'000}, Case{Duration::ns(10), 0.0, 1'000'010'000},
                        Case{Duration::zero(), 0.0, 1'000'001'000}}) {
    for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
      sim::Simulator sim;
      FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}}, fidelity);
      net.set_completion_quantum(k.quantum);
      net.set_completion_tolerance(k.tolerance);
      EXPECT_EQ(net.completion_tolerance(), k.tolerance);
      const FlowId id = net.start_flow(route({0}), Bytes(1'000'001), {});
      const FlowId zero = net.start_flow(route({0}), Bytes(0), {});
      const FlowId local = net.start_flow(route({}), Bytes(1'000), {});
      sim.run();
      EXPECT_EQ(net.flow(id).finish.count_ps(), k.finish_ps) << k.tolerance << " " << k.quantum.count_ps();
      EXPECT_EQ(net.flow(zero).finish, TimePoint::zero());
      EXPECT_EQ(net.flow(local).finish, TimePoint::zero());
    }
  }
  // Two flows on their own links due at 1,000,010 and 1,000,030 ns, and
  // both on a link that never binds: with the 10 ns quantum alone two
  // completion instants, the joins' re-solve and the first finish's; with
  // the tolerance both finish at 1,000,080 ns (the 80 ns grid), in one.
  for (const double tolerance : {0.0, 1e-4}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{1 * kGBps, Duration::zero()},
                          {1 * kGBps, Duration::zero()},
                          {100 * kGBps, Duration::zero()}});
    net.set_completion_quantum(Duration::ns(10));
    net.set_completion_tolerance(tolerance);
    const FlowId a = net.start_flow(route({0, 2}), Bytes(1'000'010), {});
    const FlowId b = net.start_flow(route({1, 2}), Bytes(1'000'030), {});
    sim.run();
    if (tolerance == 0.0) {
      EXPECT_EQ(net.flow(a).finish, TimePoint::zero() + Duration::ns(1'000'010));
      EXPECT_EQ(net.flow(b).finish, TimePoint::zero() + Duration::ns(1'000'030));
      EXPECT_EQ(net.resolves(), 2u);
    } else {
      EXPECT_EQ(net.flow(a).finish, TimePoint::zero() + Duration::ns(1'000'080));
      EXPECT_EQ(net.flow(b).finish, TimePoint::zero() + Duration::ns(1'000'080));
      EXPECT_EQ(net.resolves(), 1u);
    }
  }
}

// Over random cases: the max-min invariants hold at every probed instant,
// bytes are conserved, no flow beats its bottleneck (run_model checks all
// three), every finish of a flow with bytes lies on the quantum's grid, the
// run is deterministic, and it needs no more re-solves than the quantum
// alone. Each finish moves from the quantum-only run's by a small share of
// the run (a flow's own delay is under the tolerance of its transfer time;
// the rest is what the delays do to the sharing).
TEST(FlowNetworkTest, CompletionToleranceAgainstQuantumAlone) {
  const Duration quantum = Duration::ns(1);
  constexpr double kTolerance = 1e-3;
  std::mt19937_64 rng(4242);
  ModelCounters alone;
  ModelCounters coalesced;
  double worst = 0.0;
  for (int trial = 0; trial < 200; ++trial) {
    const RandomCase c = trial % 2 == 0 ? leave_heavy_case(rng) : random_case(rng, /*disjoint=*/false);
    std::vector<std::string> violations;
    const std::vector<TimePoint> base = run_model(c, NetworkFidelity::kFlow, nullptr, &alone, quantum);
    const std::vector<TimePoint> model = run_model(c, NetworkFidelity::kFlow, trial < 30 ? &violations : nullptr,
                                                   &coalesced, quantum, kTolerance);
    ASSERT_TRUE(violations.empty()) << "trial " << trial << ": " << violations.front();
    ASSERT_EQ(model, run_model(c, NetworkFidelity::kFlow, nullptr, nullptr, quantum, kTolerance)) << trial;
    std::int64_t span_ps = 1;
    for (const TimePoint t : base) span_ps = std::max(span_ps, t.count_ps());
    for (std::size_t f = 0; f < model.size(); ++f) {
      if (c.flows[f].size > 0) {
        ASSERT_EQ(model[f].count_ps() % quantum.count_ps(), 0) << trial;
      }
      worst = std::max(worst, std::abs(static_cast<double>((model[f] - base[f]).count_ps())) /
                                  static_cast<double>(span_ps));
    }
  }
  EXPECT_LE(coalesced.resolves, alone.resolves);
  EXPECT_LT(worst, 5 * kTolerance);  // 1.84e-3 when written
}

TEST(FlowNetworkTest, CompletionToleranceRejectsBadUse) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}});
  for (const double bad : {-1e-9, 0.0100001, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(net.set_completion_tolerance(bad), std::invalid_argument) << bad;
  }
  net.set_completion_tolerance(FlowNetwork::kMaxCompletionTolerance);
  net.start_flow(route({0}), Bytes(1'000), {});
  EXPECT_THROW(net.set_completion_tolerance(0.0), std::invalid_argument);
  EXPECT_EQ(net.completion_tolerance(), FlowNetwork::kMaxCompletionTolerance);
}

// A case built for the incremental path: 200 slow flows, each held at 1 GB/s
// by its own link, share a 300 GB/s link with 10 fast flows, which split the
// other 100 GB/s (10 GB/s each) and finish one by one (sizes 1..10 MB). At
// each fast finish only the fast flows still running (level 10 GB/s, at or
// above the leaver's) are re-solved: 9 + 8 + ... + 1 = 45 flows in 9
// re-solves, where a component re-solve would cover all ~200 each time. The
// slow flows keep 1 GB/s throughout and finish together.
TEST(FlowNetworkTest, IncrementalResolveCoversOnlyFlowsAtOrAboveTheLeavers) {
  RandomCase c;
  c.links.push_back({300 * kGBps, Duration::zero()});
  constexpr std::uint32_t kSlow = 200;
  constexpr std::uint32_t kFast = 10;
  for (std::uint32_t i = 0; i < kSlow; ++i) {
    c.links.push_back({1 * kGBps, Duration::zero()});
    c.flows.push_back({.route = {0, 1 + i}, .size = 50'000'000, .start_ps = 0, .weight = 1.0});
  }
  for (std::uint32_t i = 0; i < kFast; ++i) {
    c.flows.push_back({.route = {0}, .size = 1'000'000 * (i + 1), .start_ps = 0, .weight = 1.0});
  }
  sim::Simulator sim;
  FlowNetwork net(sim, c.links);
  std::vector<FlowId> ids;
  for (const auto& flow : c.flows) {
    ids.push_back(net.start_flow(flow.route, Bytes(flow.size), {}, {.weight = flow.weight}));
  }
  sim.run();
  EXPECT_EQ(net.resolves() - net.incremental_resolves(), 1u)
      << "one component re-solve, for the joins (nothing to fix)";
  EXPECT_EQ(net.join_resolves(), 0u);
  EXPECT_EQ(net.incremental_resolves(), kFast - 1);
  EXPECT_EQ(net.group_resolves(), kFast - 1) << "the 200 slow flows are read from level groups";
  EXPECT_EQ(net.incremental_resolved_flows(), 45u);
  EXPECT_LT(net.resolved_flows(), kSlow + kFast + 50);
  for (std::uint32_t i = 0; i < kSlow; ++i) {
    EXPECT_EQ(net.flow(ids[i]).finish, TimePoint::zero() + Duration::ms(50));
  }
  const std::vector<TimePoint> reference = run_reference(c);
  for (std::size_t f = 0; f < c.flows.size(); ++f) {
    EXPECT_EQ(net.flow(ids[f]).finish, reference[f]) << "flow " << f;
  }
}

// Non-integer weights have no exact replay: every re-solve is a component
// re-solve, and the results still match the reference.
TEST(FlowNetworkTest, NonIntegerWeightsTakeTheComponentPath) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 50; ++trial) {
    RandomCase c = leave_heavy_case(rng);
    c.flows.front().weight = 1.5;
    ModelCounters counters;
    const std::vector<TimePoint> model = run_model(c, NetworkFidelity::kFlow, nullptr, &counters);
    EXPECT_EQ(counters.incremental_resolves, 0u);
    ASSERT_EQ(model, run_reference(c)) << "trial " << trial;
  }
}

// With no link shared, the flow and analytical fidelities agree exactly.
TEST(FlowNetworkTest, FidelitiesAgreeWithoutSharing) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 100; ++trial) {
    const RandomCase c = random_case(rng, /*disjoint=*/true);
    const std::vector<TimePoint> flow = run_model(c, NetworkFidelity::kFlow);
    const std::vector<TimePoint> analytical = run_model(c, NetworkFidelity::kAnalytical);
    ASSERT_EQ(flow, analytical) << "trial " << trial;
  }
}

// Sharing makes the flow model slower than the analytical one, never faster.
TEST(FlowNetworkTest, AnalyticalIsALowerBoundUnderSharing) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const RandomCase c = random_case(rng, /*disjoint=*/false);
    const std::vector<TimePoint> flow = run_model(c, NetworkFidelity::kFlow);
    const std::vector<TimePoint> analytical = run_model(c, NetworkFidelity::kAnalytical);
    for (std::size_t f = 0; f < flow.size(); ++f) {
      ASSERT_GE(flow[f], analytical[f]) << "trial " << trial << " flow " << f;
    }
  }
}

// Utilisation history: on a 1 GB/s link, flow A alone (0 to 1 ms) uses it
// fully, B joins at 1 ms and both still fill it, A ends at 3 ms, B at 4 ms,
// then the link is idle: samples 1.0 at 0, 1.0 stays, 0 at 4 ms.
TEST(FlowNetworkTest, LinkUtilisationHistory) {
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}}, fidelity);
    net.record_link_history(true);
    net.start_flow(route({0}), Bytes(3'000'000), {});
    sim.schedule(TimePoint::zero() + Duration::ms(1), [&] { net.start_flow(route({0}), Bytes(1'000'000), {}); });
    sim.run();
    const auto& h = net.link_history(0);
    ASSERT_FALSE(h.empty());
    EXPECT_EQ(h.front().time, TimePoint::zero());
    EXPECT_DOUBLE_EQ(h.front().utilisation, 1.0);
    EXPECT_EQ(h.back().utilisation, 0.0);
    EXPECT_EQ(h.back().time, net.flow(FlowId{0}).finish > net.flow(FlowId{1}).finish ? net.flow(FlowId{0}).finish
                                                                                       : net.flow(FlowId{1}).finish);
    for (const auto& sample : h) {
      if (fidelity == NetworkFidelity::kFlow) {
        EXPECT_LE(sample.utilisation, 1.0 + 1e-12);
      }
    }
  }
}

// At the analytical fidelity every flow runs at its bottleneck alone, so a
// link's load is the number of its flows: 1,000 flows starting together are
// one sample of 1,000 (not one per flow), and a flow that replaces a
// finished one at the same instant leaves the load, and the history, as it
// was.
TEST(FlowNetworkTest, AnalyticalHistorySamplesEachInstantOnce) {
  sim::Simulator sim;
  FlowNetwork net(sim, {{1 * kGBps, Duration::zero()}}, NetworkFidelity::kAnalytical);
  net.record_link_history(true);
  for (int i = 0; i < 999; ++i) net.start_flow(route({0}), Bytes(2'000'000), {});
  // 1 ms in, the last flow ends and another starts in its place.
  net.start_flow(route({0}), Bytes(1'000'000), [&] { net.start_flow(route({0}), Bytes(1'000'000), {}); });
  sim.run();
  const auto& h = net.link_history(0);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].time, TimePoint::zero());
  EXPECT_EQ(h[0].utilisation, 1000.0);
  EXPECT_EQ(h[1].time, TimePoint::zero() + Duration::ms(2));
  EXPECT_EQ(h[1].utilisation, 0.0);
}

TEST(FlowNetworkTest, HottestLinksByLoadRelativeToCapacity) {
  sim::Simulator sim;
  // Link 0: 10 GB/s carrying 4 MB (0.4 ms of load); link 1: 1 GB/s carrying
  // 1 MB (1 ms); link 2: unused.
  FlowNetwork net(sim, {{10 * kGBps, Duration::zero()}, {1 * kGBps, Duration::zero()},
                        {1 * kGBps, Duration::zero()}});
  net.start_flow(route({0}), Bytes(3'000'000), {});
  net.start_flow(route({0, 1}), Bytes(1'000'000), {});
  sim.run();
  EXPECT_EQ(net.hottest_links(5), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_EQ(net.hottest_links(1), (std::vector<std::uint32_t>{1}));
}

}  // namespace
}  // namespace zx::models
