// The trace is valid JSON with one slice per op at the op's times (in
// microseconds), process and thread names, and critical-path arrows.

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "models/execution/executor.h"
#include "models/execution/timeline.h"

namespace zx::models {
namespace {

namespace mc = models::collectives;

std::string fmt_name(int k) { return "GPU 0 -> GPU 1 #" + std::to_string(k); }

class NoComm : public CommunicationBackend {
 public:
  void start_collective(const OpGraph&, std::int64_t, sim::EventCallback) override {}
  void start_transfer(const OpGraph&, std::int64_t, sim::EventCallback) override {}
  void start_host_copy(const OpGraph&, std::uint32_t, sim::EventCallback) override {}
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

// A compute op slowed by a communication kernel holding SMs says by how
// much: 1,000 ns of work beside a 500 ns collective at 80% speed ends at
// 1,100 ns (executor_test has the closed form); the collective's slice and
// an unslowed op carry no such argument.
class HalfMicrosecondCollectives : public CommunicationBackend {
 public:
  explicit HalfMicrosecondCollectives(sim::Simulator& s) : sim_(s) {}
  void start_collective(const OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::ns(500), std::move(done));
  }
  void start_transfer(const OpGraph&, std::int64_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }
  void start_host_copy(const OpGraph&, std::uint32_t, sim::EventCallback done) override {
    sim_.schedule_after(sim::Duration::zero(), std::move(done));
  }

 private:
  sim::Simulator& sim_;
};

TEST(TimelineTest, SlowedComputeSaysByHowMuch) {
  OpGraph g;
  g.num_ranks = 1;
  const int s = g.stream("compute");
  const int c = g.stream("comm");
  Op work;
  work.stream = s;
  work.name = "work";
  work.duration = sim::Duration::ns(1'000);
  const std::uint32_t first = g.add(work);
  Op after = work;
  after.name = "after";
  after.deps = {first};
  g.add(after);
  g.collectives.push_back({.kind = mc::CollectiveKind::kAllReduce, .ranks = {0}, .bytes_per_rank = sim::Bytes(1)});
  Op comm;
  comm.kind = OpKind::kCollective;
  comm.stream = c;
  comm.collective = 0;
  comm.name = "ar";
  g.add(comm);
  sim::Simulator sim;
  HalfMicrosecondCollectives backend(sim);
  const ExecutionResult r = execute(sim, g, backend, SmContention{.sm_count = 100, .communication_sms = 20});
  std::ostringstream out;
  write_chrome_trace(out, g, r);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  int seen = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++seen;
    if (e["name"] == "work") {
      EXPECT_EQ(e["args"]["slowed_by_communication_ps"], 100'000);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 1.1);
    } else {
      EXPECT_FALSE(e["args"].contains("slowed_by_communication_ps")) << e["name"];
    }
  }
  EXPECT_EQ(seen, 3);
}

// NICs become processes after the GPUs and the counter process; each
// transfer is a matched async begin/end pair on each NIC it crossed, at its
// start and finish; an arrow joins its sending and receiving ops; only
// dependencies across streams get arrows; limits are counted in metadata.
TEST(TimelineTest, NicTracksTransfersAndArrows) {
  OpGraph g;
  g.num_ranks = 2;
  const int compute = g.stream("compute");
  const int comm = g.stream("comm");
  Op a;
  a.rank = 0;
  a.stream = compute;
  a.name = "a";
  a.duration = sim::Duration::us(2);
  const std::uint32_t ia = g.add(a);
  Op send;
  send.kind = OpKind::kDelay;  // stands in for the sending op
  send.rank = 0;
  send.stream = comm;
  send.name = "send";
  send.duration = sim::Duration::us(3);
  send.deps = {ia};  // across streams: one dependency arrow
  const std::uint32_t isend = g.add(send);
  Op recv = send;
  recv.rank = 1;
  recv.name = "recv";
  recv.deps = {};
  recv.duration = sim::Duration::us(6);
  const std::uint32_t irecv = g.add(recv);
  Op after = a;
  after.name = "after";
  after.deps = {ia};  // same stream: no arrow
  g.add(after);
  sim::Simulator sim;
  NoComm backend;
  const ExecutionResult r = execute(sim, g, backend);

  NetworkActivity net;
  net.nic_names = {"node0/nic0", "node1/nic0"};
  for (int k = 0; k < 3; ++k) {
    TransferSlice t;
    t.name = fmt_name(k);
    t.src_rank = 0;
    t.dst_rank = 1;
    t.bytes = 1000 + k;
    t.start_ps = 2'000'000 + k;
    t.finish_ps = 4'000'000 + k;
    t.tx_nics = {0};
    t.rx_nics = {1};
    t.from_op = isend;
    t.to_op = irecv;
    net.transfers.push_back(t);
  }
  TimelineLimits limits;
  limits.max_transfers = 2;
  std::ostringstream out;
  const TimelineStats stats = write_chrome_trace(out, g, r, net, limits);
  const nlohmann::json trace = nlohmann::json::parse(out.str());
  EXPECT_EQ(stats.transfer_slices, 4u);  // 2 transfers x (tx + rx)
  EXPECT_EQ(stats.transfers_left_out, 1u);
  EXPECT_EQ(stats.transfer_arrows, 2u);
  EXPECT_EQ(stats.dependency_arrows, 1u);
  EXPECT_EQ(trace["otherData"]["zionsim"]["transfers_left_out"], 1);

  std::map<std::string, int> process_pid;
  std::map<std::pair<std::string, std::uint64_t>, nlohmann::json> begins;
  int ends = 0;
  int dependency = 0;
  int transfer_arrows = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_pid[e["args"]["name"]] = e["pid"];
    if (e["ph"] == "b") begins[{e["cat"], e["id"].get<std::uint64_t>()}] = e;
    if (e["ph"] == "s" && e["cat"] == "dependency") {
      ++dependency;
      EXPECT_EQ(e["tid"], compute);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2.0);  // when "a" ended
    }
    if (e["ph"] == "s" && e["cat"] == "transfer") {
      ++transfer_arrows;
      EXPECT_EQ(e["pid"], 0);
      EXPECT_EQ(e["tid"], comm);
    }
    if (e["ph"] == "f" && e["cat"] == "transfer") {
      EXPECT_EQ(e["pid"], 1);
    }
  }
  EXPECT_EQ(dependency, 1);
  EXPECT_EQ(transfer_arrows, 2);
  EXPECT_EQ(process_pid.at("NIC node0/nic0"), 3);  // after GPU 0, GPU 1 and the counters' pid 2
  EXPECT_EQ(process_pid.at("NIC node1/nic0"), 4);
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "e") continue;
    ++ends;
    const auto it = begins.find({e["cat"], e["id"].get<std::uint64_t>()});
    ASSERT_NE(it, begins.end());
    const nlohmann::json& b = it->second;
    EXPECT_EQ(b["pid"], e["pid"]);
    EXPECT_EQ(b["name"], e["name"]);
    EXPECT_EQ(b["pid"], e["cat"] == "tx" ? 3 : 4);
    EXPECT_EQ(b["args"]["finish_ps"].get<std::int64_t>() - b["args"]["start_ps"].get<std::int64_t>(), 2'000'000);
    EXPECT_DOUBLE_EQ(e["ts"].get<double>() - b["ts"].get<double>(), 2.0);
  }
  EXPECT_EQ(ends, 4);
  EXPECT_EQ(begins.size(), 4u);
}

}  // namespace
}  // namespace zx::models
