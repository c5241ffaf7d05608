// File: tools/writers_benchmark.cc
//
// The writers of large outputs, each against a baseline measured in the same
// run: bytes per second (bytes_per_second, as the library prints it). Each
// streams through base/text_out.h, whose buffer is bounded by its flush size
// plus one record whatever the output's size (base/text_out_test.cc).
//
//   bazel build --config=opt //tools:writers_benchmark
//   bazel-bin/tools/writers_benchmark
//
//   Trace/*        `whatif --emit-trace X.json` of model A: write_trace
//                  against the same records built as nlohmann objects and
//                  dumped one by one (the writer before base/text_out), and
//                  as one nlohmann document (how flows was written at first).
//   Timeline       `whatif --timeline` of model A (64 ranks shown).
//   Chakra         `whatif --emit-trace X.et`: export and encode, all ranks.
//   Flows/*        `flows --pattern all_to_all --format json|csv|table`
//                  end to end on 32 nodes (65,280 flows): the simulation is
//                  the same in all three, so json - table and csv - table is
//                  the writing; write_MB_per_s is that rate.
//
// Output goes to a stream that only counts bytes, so the disk is not
// measured. Peak memory: run one benchmark per process (--benchmark_filter)
// and read peak_rss_MiB. Figures of a run are in the closing note of the
// change that added this file, not here, so that nothing here drifts.

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <vector>

#include "base/testing/peak_memory.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "experiments/whatif.h"
#include "workloads/chakra_et.h"
#include "workloads/chakra_export.h"
#include "workloads/trace.h"

namespace zx::tools {
namespace {

// An ostream that counts what it is given and keeps nothing.
class CountingBuffer : public std::streambuf {
 public:
  std::uint64_t count() const { return count_; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) ++count_;
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    count_ += static_cast<std::uint64_t>(n);
    return n;
  }

 private:
  std::uint64_t count_ = 0;
};

// Model A on `nodes` nodes, simulated once per process, its graph and
// network activity kept (what --timeline and --emit-trace write).
const WhatIfPoint& model_a(int nodes) {
  static std::map<int, WhatIfPoint> points;
  auto it = points.find(nodes);
  if (it == points.end()) {
    WhatIfOptions options;
    options.model = "dlrm-a";
    options.nodes = {nodes};
    options.threads = 1;
    it = points.emplace(nodes, std::move(run_whatif(options, nodes).front())).first;
  }
  return it->second;
}

void finish(benchmark::State& state, std::uint64_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["output_MB"] = static_cast<double>(bytes) / state.iterations() / 1e6;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

void BM_TraceTextOut(benchmark::State& state) {
  const models::OpGraph& g = *model_a(static_cast<int>(state.range(0))).graph;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    workloads::write_trace(out, g);
    bytes += buffer.count();
  }
  finish(state, bytes);
}
BENCHMARK(BM_TraceTextOut)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

// The ops as the previous writer made them: one ordered_json per record.
nlohmann::ordered_json op_record(const models::OpGraph& g, std::size_t i) {
  const models::Op& op = g.ops[i];
  nlohmann::ordered_json j;
  j["id"] = i;
  j["rank"] = op.rank;
  j["stream"] = g.stream_names[static_cast<std::size_t>(op.stream)];
  j["kind"] = models::to_string(op.kind);
  if (!op.name.empty()) j["name"] = op.name;
  if (!op.category.empty()) j["category"] = op.category;
  if (op.kind == models::OpKind::kCompute || op.kind == models::OpKind::kDelay) j["duration_ps"] = op.duration.count_ps();
  if (op.kind == models::OpKind::kCollective) j["collective"] = op.collective;
  if (op.kind == models::OpKind::kSend || op.kind == models::OpKind::kRecv) j["transfer"] = op.transfer;
  if (!op.deps.empty()) j["deps"] = op.deps;
  return j;
}

// Baseline: the ops (nearly all of a trace's bytes) as nlohmann records.
void BM_TraceNlohmannPerRecord(benchmark::State& state) {
  const models::OpGraph& g = *model_a(static_cast<int>(state.range(0))).graph;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    for (std::size_t i = 0; i < g.ops.size(); ++i) out << (i == 0 ? "\n    " : ",\n    ") << op_record(g, i).dump();
    bytes += buffer.count();
  }
  finish(state, bytes);
}
BENCHMARK(BM_TraceNlohmannPerRecord)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

// Baseline: the ops as one nlohmann document, then dumped.
void BM_TraceNlohmannDocument(benchmark::State& state) {
  const models::OpGraph& g = *model_a(static_cast<int>(state.range(0))).graph;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < g.ops.size(); ++i) ops.push_back(op_record(g, i));
    out << ops.dump(1);
    bytes += buffer.count();
  }
  finish(state, bytes);
}
BENCHMARK(BM_TraceNlohmannDocument)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Timeline(benchmark::State& state) {
  const WhatIfPoint& p = model_a(static_cast<int>(state.range(0)));
  models::TimelineLimits limits;
  limits.max_ranks = kTimelineRanks;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    CountingBuffer buffer;
    std::ostream out(&buffer);
    models::write_chrome_trace(out, *p.graph, *p.execution, *p.network_activity, limits);
    bytes += buffer.count();
  }
  finish(state, bytes);
}
BENCHMARK(BM_Timeline)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Chakra(benchmark::State& state) {
  const models::OpGraph& g = *model_a(static_cast<int>(state.range(0))).graph;
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    workloads::export_chakra(g, [&](int, const workloads::chakra_et::File& file) {
      bytes += workloads::chakra_et::encode(file).size();
    });
  }
  finish(state, bytes);
}
BENCHMARK(BM_Chakra)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

// `flows` end to end; the table run is the baseline (the same simulation,
// a few hundred bytes out).
double flows_seconds(const std::string& format, std::uint64_t& bytes) {
  CountingBuffer buffer;
  std::ostream out(&buffer);
  std::ostringstream err;
  const auto begin = std::chrono::steady_clock::now();
  const int status = run_cli({"flows", "--nodes", "32", "--pattern", "all_to_all", "--format", format}, out, err);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (status != 0) throw std::runtime_error(err.str());
  bytes = buffer.count();
  return seconds;
}

void BM_Flows(benchmark::State& state, const char* format) {
  std::uint64_t bytes = 0;
  std::uint64_t table_bytes = 0;
  double write_seconds = 0;
  for (auto _ : state) {
    std::uint64_t b = 0;
    const double with_output = flows_seconds(format, b);
    state.PauseTiming();
    const double simulation = flows_seconds("table", table_bytes);
    state.ResumeTiming();
    bytes += b;
    write_seconds += with_output - simulation;
  }
  finish(state, bytes);
  state.counters["write_MB_per_s"] = write_seconds > 0 ? static_cast<double>(bytes) / write_seconds / 1e6 : 0;
}
BENCHMARK_CAPTURE(BM_Flows, json, "json")->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Flows, csv, "csv")->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace zx::tools
