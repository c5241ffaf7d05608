// Tests of the links' utilisation history (link_history.h): a sample per
// change, one per instant, pending links sampled once at their instant; and,
// through the flow network, samples that integrate to the bytes each link
// carried at both sharing fidelities.

#include "models/network/link_history.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/network/flow_network.h"

namespace zx::models {
namespace {

using sim::Bytes;
using sim::Duration;
using sim::TimePoint;

TEST(LinkHistoryTest, OneSamplePerChangeAndInstant) {
  LinkHistory history(3);
  EXPECT_FALSE(history.recording());
  EXPECT_TRUE(history.samples(1).empty());
  EXPECT_TRUE(history.samples(7).empty());  // beyond the links: empty too
  history.record(1, TimePoint::from_ps(10), 0.5);
  history.record(1, TimePoint::from_ps(10), 0.75);  // same instant: replaces
  history.record(1, TimePoint::from_ps(20), 0.75);  // unchanged: dropped
  history.record(1, TimePoint::from_ps(30), 0.0);
  const std::vector<LinkHistory::Sample>& h = history.samples(1);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].time, TimePoint::from_ps(10));
  EXPECT_EQ(h[0].utilisation, 0.75);
  EXPECT_EQ(h[1].time, TimePoint::from_ps(30));
  EXPECT_EQ(h[1].utilisation, 0.0);
  EXPECT_TRUE(history.samples(0).empty());
}

TEST(LinkHistoryTest, PendingLinksAreSampledOnceAtTheirInstant) {
  LinkHistory history(4);
  const TimePoint t = TimePoint::from_ps(100);
  EXPECT_FALSE(history.pending_before(t));
  history.note(std::vector<std::uint32_t>{2, 0}, t);
  history.note(std::vector<std::uint32_t>{0, 3}, t);
  EXPECT_FALSE(history.pending_before(t));
  EXPECT_TRUE(history.pending_before(TimePoint::from_ps(101)));
  EXPECT_TRUE(history.samples(2).empty());  // not until flushed
  std::vector<std::uint32_t> asked;
  history.flush([&](std::uint32_t l) {
    asked.push_back(l);
    return 0.25 * l;
  });
  EXPECT_EQ(asked, (std::vector<std::uint32_t>{2, 0, 3}));  // each once, as noted
  EXPECT_FALSE(history.pending_before(TimePoint::from_ps(101)));
  ASSERT_EQ(history.samples(3).size(), 1u);
  EXPECT_EQ(history.samples(3)[0].time, t);
  EXPECT_EQ(history.samples(3)[0].utilisation, 0.75);
  // Marks are cleared: the link is noted (and sampled) again later.
  history.note(std::vector<std::uint32_t>{3}, TimePoint::from_ps(200));
  history.flush([](std::uint32_t) { return 0.0; });
  EXPECT_EQ(history.samples(3).size(), 2u);
  history.flush([](std::uint32_t) -> double { ADD_FAILURE() << "nothing pending"; return 0; });
}

// The integral of utilisation x capacity over a link's samples is the bytes
// it carried (up to the picosecond rounding of each finish).
double integral_bytes(const std::vector<LinkHistory::Sample>& h, double capacity) {
  double bytes = 0;
  for (std::size_t i = 0; i + 1 < h.size(); ++i) {
    bytes += h[i].utilisation * capacity * (h[i + 1].time - h[i].time).to_seconds();
  }
  return bytes;
}

TEST(LinkHistoryTest, SamplesIntegrateToTheBytesCarried) {
  constexpr double kCapacity = 10e9;
  for (NetworkFidelity fidelity : {NetworkFidelity::kFlow, NetworkFidelity::kAnalytical}) {
    sim::Simulator sim;
    FlowNetwork net(sim, {{kCapacity, Duration::ns(100)}, {2 * kCapacity, Duration::ns(50)}, {kCapacity, Duration::zero()}},
                    fidelity);
    net.record_link_history(true);
    net.start_flow(std::vector<std::uint32_t>{0, 1}, Bytes(3'000'000), {});
    net.start_flow(std::vector<std::uint32_t>{1, 2}, Bytes(1'000'000), {});
    sim.schedule(TimePoint::from_ps(50'000'000), [&] {
      net.start_flow(std::vector<std::uint32_t>{1}, Bytes(2'000'000), {});
    });
    sim.run();
    for (std::uint32_t l = 0; l < net.num_links(); ++l) {
      const std::vector<LinkHistory::Sample>& h = net.link_history(l);
      ASSERT_FALSE(h.empty()) << to_string(fidelity) << " link " << l;
      EXPECT_EQ(h.back().utilisation, 0.0) << to_string(fidelity) << " link " << l;
      const double capacity = net.link_params()[l].capacity_bytes_per_s;
      EXPECT_NEAR(integral_bytes(h, capacity), static_cast<double>(net.link(l).bytes_carried.count()), 1.0)
          << to_string(fidelity) << " link " << l;
    }
  }
}

}  // namespace
}  // namespace zx::models
