// Tests of `zionsim flows`' run and report on one ZionEX node (8 GPUs):
// exactly one source of flows; a flows file's flows with their exact start
// times, the flow to itself with no route, the makespan the latest finish;
// a row per flow in the CSV and JSON, whose streamed document is the bytes
// of nlohmann's dump(1) of the same document built whole; the table's list
// up to 32 flows and percentiles above; the hottest links. The command's
// text is tests/golden/'s and tests/cli_end_to_end_test.sh's.

#include "experiments/flows_run.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/result_schema.h"
#include "topology/cluster_file.h"

namespace zx::experiments {
namespace {

topology::ClusterRequest one_node() {
  topology::ClusterRequest r;
  r.nodes = 1;
  return r;
}

FlowsOptions pattern(const std::string& name) {
  FlowsOptions o;
  o.pattern = name;
  return o;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

template <typename W>
std::string written(W write, const FlowsRun& run) {
  std::ostringstream out;
  write(out, run);
  return out.str();
}

TEST(FlowsRunTest, ExactlyOneSourceOfFlows) {
  for (const FlowsOptions& o : {FlowsOptions{}, FlowsOptions{.flows_file = "f.json", .pattern = "ring"}}) {
    try {
      run_flows(one_node(), o);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u);
      EXPECT_EQ(e.diagnostics()[0].source, "zionsim flows");
      EXPECT_EQ(e.diagnostics()[0].message, "give exactly one of --flows FILE or --pattern NAME");
    }
  }
}

// Flows from a file: each starts when the file says, a flow to itself
// takes no link and no time, and the makespan is the latest finish.
TEST(FlowsRunTest, FlowsOfAFile) {
  const std::string path = ::testing::TempDir() + "/flows_run_test.json";
  std::ofstream(path) << R"({"schema_version": 1, "flows": [
      {"id": 10, "src_rank": 0, "dst_rank": 1, "size_bytes": 1048576, "start_ns": 0},
      {"id": 11, "src_rank": 3, "dst_rank": 3, "size_bytes": 100, "start_ns": 5},
      {"id": 12, "src_rank": 7, "dst_rank": 2, "size_bytes": 4096, "start_ns": 1000}]})";
  const auto run = run_flows(one_node(), FlowsOptions{.flows_file = path, .top = 2});
  ASSERT_EQ(run->specs.size(), 3u);
  ASSERT_EQ(run->ids.size(), 3u);
  EXPECT_EQ(run->cluster.topology.num_gpus(), 8);
  const models::FlowRecord& self = run->network->flow(run->ids[1]);
  EXPECT_EQ(self.start.count_ps(), 5000);
  EXPECT_EQ(self.finish.count_ps(), 5000);
  EXPECT_TRUE(run->network->route(run->ids[1]).empty());
  EXPECT_EQ(run->network->flow(run->ids[2]).start.count_ps(), 1000000);
  std::int64_t latest = 0;
  for (const models::FlowId id : run->ids) {
    const models::FlowRecord& r = run->network->flow(id);
    EXPECT_LE(r.start.count_ps(), r.first_byte.count_ps());
    EXPECT_LE(r.first_byte.count_ps(), r.finish.count_ps());
    latest = std::max(latest, r.finish.count_ps());
  }
  EXPECT_EQ(run->makespan.count_ps(), latest);
  EXPECT_EQ(run->hottest.size(), 2u);

  // The CSV: its header, a row per flow, the file's ids; the flow to
  // itself has an empty route.
  const std::vector<std::string> csv = lines_of(written(write_flows_csv, *run));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[0], "id,src_rank,dst_rank,size_bytes,start_ps,first_byte_ps,finish_ps,route");
  EXPECT_EQ(csv[2], "11,3,3,100,5000,5000,5000,");
  EXPECT_EQ(csv[1].rfind("10,0,1,1048576,0,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[3].rfind("12,7,2,4096,1000000,", 0), 0u) << csv[3];

  // The table lists them with their hops.
  const std::string table = written(write_flows_table, *run);
  EXPECT_NE(table.find("cluster: preset zionex (8 GPUs), 3 flows, fidelity flow\n\n"
                       "    id   src   dst           size          start         finish  hops\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("\n    11     3     3          100 B           5 ns           5 ns     0\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("\nhottest links (by bytes / capacity):\n"), std::string::npos);
}

// The streamed JSON is the document built whole and dumped with indent 1.
TEST(FlowsRunTest, StreamedJsonIsTheWholeDocument) {
  const auto run = run_flows(one_node(), pattern("ring"));
  ASSERT_EQ(run->specs.size(), 8u);
  const std::string streamed = written(write_flows_json, *run);
  const nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(streamed);
  std::vector<Row> rows;
  for (std::size_t i = 0; i < run->specs.size(); ++i) rows.push_back(flow_row(*run, i, kJson));
  nlohmann::ordered_json whole = parsed;
  whole["flows"] = json_rows(flow_schema(), rows);
  EXPECT_EQ(streamed, whole.dump(1) + "\n");
  ASSERT_EQ(parsed.at("flows").size(), 8u);
  EXPECT_EQ(parsed.at("schema_version"), 1);
  EXPECT_EQ(parsed.at("cluster"), "preset zionex");
  EXPECT_EQ(parsed.at("makespan_ps"), run->makespan.count_ps());
  const nlohmann::ordered_json& first = parsed.at("flows")[0];
  EXPECT_EQ(first.at("src_rank"), run->specs[0].src_rank);
  EXPECT_EQ(first.at("route").size(), run->network->route(run->ids[0]).size());
  // Ten links, the default, each with its name and share of the makespan.
  const nlohmann::ordered_json& links = parsed.at("hottest_links");
  ASSERT_EQ(links.size(), 10u);
  for (std::size_t k = 0; k < links.size(); ++k) {
    const std::uint32_t l = run->hottest[k];
    EXPECT_EQ(links[k].at("id"), l);
    EXPECT_EQ(links[k].at("name"), link_name(run->cluster.topology, l));
    EXPECT_EQ(links[k].at("utilization"), run->utilization(l));
  }
  EXPECT_EQ(lines_of(written(write_flows_csv, *run)).size(), 9u);

  // No flows: the empty array, as dump(1) writes it.
  const std::string path = ::testing::TempDir() + "/flows_run_test_empty.json";
  std::ofstream(path) << R"({"schema_version": 1, "flows": []})";
  const auto none = run_flows(one_node(), FlowsOptions{.flows_file = path});
  const std::string empty = written(write_flows_json, *none);
  EXPECT_EQ(empty, nlohmann::ordered_json::parse(empty).dump(1) + "\n");
  EXPECT_NE(empty.find("\n \"flows\": [],\n"), std::string::npos) << empty;
  EXPECT_EQ(written(write_flows_csv, *none),
            "id,src_rank,dst_rank,size_bytes,start_ps,first_byte_ps,finish_ps,route\n");
}

// Above 32 flows the table gives the completion times' percentiles.
TEST(FlowsRunTest, TableOfManyFlows) {
  const auto run = run_flows(one_node(), pattern("all_to_all"));
  EXPECT_EQ(run->specs.size(), 56u);
  const std::string table = written(write_flows_table, *run);
  EXPECT_NE(table.find("), 56 flows, fidelity flow\nflow completion time: min "), std::string::npos) << table;
  EXPECT_EQ(table.find("  hops\n"), std::string::npos);
  EXPECT_EQ(lines_of(written(write_flows_csv, *run)).size(), 57u);
}

}  // namespace
}  // namespace zx::experiments
