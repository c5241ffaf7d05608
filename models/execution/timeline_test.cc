// The trace is valid JSON with one slice per op at the op's times (in
// microseconds), process and thread names, and critical-path arrows.

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "models/execution/executor.h"
#include "models/execution/timeline.h"

namespace zx::models {
namespace {

class NoComm : public CommunicationBackend {
 public:
  void start_collective(const OpGraph&, std::int64_t, sim::EventCallback) override {}
  void start_transfer(const OpGraph&, std::int64_t, sim::EventCallback) override {}
};

TEST(TimelineTest, SlicesAndArrows) {
  OpGraph g;
  g.num_ranks = 2;
  const int s = g.stream("compute");
  for (int r = 0; r < 2; ++r) {
    Op a;
    a.rank = r;
    a.stream = s;
    a.name = "a";
    a.duration = sim::Duration::ps(1'500'000 + r);
    g.add(a);
    Op b = a;
    b.name = "b";
    b.deps = {static_cast<std::uint32_t>(g.ops.size() - 1)};
    g.add(b);
  }
  sim::Simulator sim;
  NoComm backend;
  const ExecutionResult r = execute(sim, g, backend);
  std::ostringstream out;
  write_chrome_trace(out, g, r);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  int slices = 0;
  int arrows = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices;
    if (e["ph"] == "s" || e["ph"] == "f") ++arrows;
  }
  EXPECT_EQ(slices, 4);
  EXPECT_EQ(arrows, 2);  // one arrow (start + finish) along the 2-op critical path
  // Rank 1's second op: ready at 1.500001 us, lasting 1.500001 us.
  bool found = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["pid"] == 1 && e["name"] == "b") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.500001);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.500001);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  // Counter series become counter events of a "network links" process.
  std::ostringstream with_counters;
  write_chrome_trace(with_counters, g, r, 0, {{"link 7", {{0, 1.0}, {2'000'000, 0.25}}}});
  const nlohmann::json counted = nlohmann::json::parse(with_counters.str());
  int counter_events = 0;
  for (const auto& e : counted["traceEvents"]) {
    if (e["ph"] == "C") {
      ++counter_events;
      EXPECT_EQ(e["pid"], 2);
    }
  }
  EXPECT_EQ(counter_events, 2);
  // With max_ranks 1 only rank 0 appears.
  std::ostringstream one;
  write_chrome_trace(one, g, r, 1);
  const nlohmann::json only_rank_0 = nlohmann::json::parse(one.str());
  for (const auto& e : only_rank_0["traceEvents"]) EXPECT_EQ(e["pid"], 0);
}

}  // namespace
}  // namespace zx::models
