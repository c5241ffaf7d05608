// File: experiments/flows_run.cc

#include "experiments/flows_run.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/check.h"
#include "base/error.h"
#include "base/text_out.h"
#include "experiments/interrupt.h"
#include "experiments/stack.h"
#include "models/network/topology_links.h"
#include "topology/router.h"

namespace zx::experiments {

double FlowsRun::utilization(std::uint32_t link) const {
  const double seconds = makespan.to_seconds();
  const models::LinkRecord r = network->link(link);
  return seconds > 0 ? r.busy_time.to_seconds() / seconds : 0.0;
}

std::unique_ptr<FlowsRun> run_flows(const topology::ClusterRequest& request, const FlowsOptions& o) {
  if (o.flows_file.empty() == o.pattern.empty()) {
    throw InputError(Diagnostic{"zionsim flows", "", "give exactly one of --flows FILE or --pattern NAME"});
  }
  auto run = std::make_unique<FlowsRun>(o, topology::load_cluster(request));
  const topology::Topology& topo = run->cluster.topology;
  const int gpus = topo.num_gpus();
  run->specs = o.flows_file.empty() ? workloads::make_flow_pattern(o.pattern, gpus, sim::Bytes(o.size_bytes), o.seed)
                                    : workloads::load_flow_file(o.flows_file, gpus);

  const topology::Router router(topo);
  run->network = make_network(run->sim, topo, o.fidelity, o.completion_quantum_ns);
  models::FlowNetwork& network = *run->network;
  const std::vector<workloads::FlowSpec>& specs = run->specs;
  run->ids.resize(specs.size());
  auto scratch = std::make_shared<models::RouteScratch>();
  for (std::size_t i = 0; i < specs.size(); ++i) {
    run->sim.schedule(specs[i].start, [&, i, scratch] {
      const workloads::FlowSpec& s = specs[i];
      run->ids[i] = models::start_gpu_flow(network, router, s.src_rank, s.dst_rank, s.size,
                                           models::gpu_pair_flow_key(s.src_rank, s.dst_rank), {}, *scratch);
    });
  }
  run->sim.run();
  check_interrupt();  // asked to stop while it ran: no output, exit 128 + the signal
  for (const models::FlowId id : run->ids) run->makespan = std::max(run->makespan, network.flow(id).finish);
  run->hottest = network.hottest_links(static_cast<std::size_t>(o.top));
  return run;
}

std::string link_name(const topology::Topology& t, std::uint32_t link) {
  const topology::LinkInfo& l = t.link(topology::LinkId{link});
  return fmt::format("{}->{}", t.node(l.src).name, t.node(l.dst).name);
}

Schema flow_schema() {
  constexpr unsigned kCsvAndJson = kCsv | kJson;
  return Schema{{
      {.name = "id", .format = Format::kInteger, .width = 6},
      {.name = "src_rank", .header = "src", .format = Format::kInteger, .width = 5},
      {.name = "dst_rank", .header = "dst", .format = Format::kInteger, .width = 5},
      {.name = "size_bytes", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "size", .width = 14, .outputs = kTable},  // "1.048576 MB"
      {.name = "start_ps", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "start", .width = 14, .outputs = kTable},  // since the start: "1 us"
      {.name = "first_byte_ps", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "finish_ps", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "finish", .width = 14, .outputs = kTable},
      {.name = "hops", .format = Format::kInteger, .width = 5, .outputs = kTable},
      {.name = "route", .outputs = kCsv},  // link ids joined by spaces
      {.name = "route", .format = Format::kJson, .outputs = kJson},
  }};
}

Row flow_row(const FlowsRun& run, std::size_t i, Output output) {
  const workloads::FlowSpec& s = run.specs[i];
  const models::FlowRecord& r = run.network->flow(run.ids[i]);
  const auto route = run.network->route(run.ids[i]);
  const bool table = output == kTable;
  const auto in_table = [&](auto value) { return table ? Cell{value()} : Cell{}; };
  const auto in_files = [&](auto value) { return table ? Cell{} : Cell{value()}; };
  std::string route_text;  // the CSV's: link ids joined by spaces
  nlohmann::ordered_json route_json = nlohmann::ordered_json::array();
  if (output == kCsv) {
    for (const std::uint32_t link : route) {
      if (!route_text.empty()) route_text += ' ';
      route_text += fmt::format_int(link).c_str();
    }
  } else if (output == kJson) {
    route_json.get_ref<nlohmann::ordered_json::array_t&>().reserve(route.size());
    for (const std::uint32_t link : route) route_json.push_back(link);
  }
  return Row{s.id,
             std::int64_t{s.src_rank},
             std::int64_t{s.dst_rank},
             in_files([&] { return s.size.count(); }),
             in_table([&] { return s.size.to_string(); }),
             in_files([&] { return r.start.count_ps(); }),
             in_table([&] { return r.start.since_start().to_string(); }),
             in_files([&] { return r.first_byte.count_ps(); }),
             in_files([&] { return r.finish.count_ps(); }),
             in_table([&] { return r.finish.since_start().to_string(); }),
             in_table([&] { return static_cast<std::int64_t>(route.size()); }),
             output == kCsv ? Cell{std::move(route_text)} : Cell{},
             output == kJson ? Cell{std::move(route_json)} : Cell{}};
}

Schema flow_link_schema() {
  return Schema{{
      {.name = "id", .format = Format::kInteger},
      {.name = "name"},
      {.name = "bytes", .format = Format::kInteger},
      {.name = "busy_ps", .format = Format::kInteger},
      {.name = "utilization", .format = Format::kReal},
  }};
}

std::vector<Row> flow_link_rows(const FlowsRun& run) {
  std::vector<Row> rows;
  for (std::uint32_t l : run.hottest) {
    const models::LinkRecord r = run.network->link(l);
    rows.push_back({std::int64_t{l}, link_name(run.cluster.topology, l), r.bytes_carried.count(),
                    r.busy_time.count_ps(), run.utilization(l)});
  }
  return rows;
}

void write_flows_table(std::ostream& out, const FlowsRun& run) {
  const models::FlowNetwork& network = *run.network;
  fmt::print(out, "cluster: {} ({} GPUs), {} flows, fidelity {}\n", run.cluster.source,
             run.cluster.topology.num_gpus(), run.specs.size(), run.options.fidelity);
  if (run.specs.size() <= kListedFlows) {
    std::vector<Row> rows;
    for (std::size_t i = 0; i < run.specs.size(); ++i) rows.push_back(flow_row(run, i, kTable));
    out << '\n';
    write_table(out, flow_schema(), rows, TableStyle{.fit = false});
  } else {
    std::vector<std::int64_t> durations;
    for (const models::FlowId id : run.ids) {
      const models::FlowRecord& r = network.flow(id);
      durations.push_back((r.finish - r.start).count_ps());
    }
    std::sort(durations.begin(), durations.end());
    const auto at = [&](double q) {
      return sim::Duration::ps(durations[static_cast<std::size_t>(q * static_cast<double>(durations.size() - 1))]);
    };
    fmt::print(out, "flow completion time: min {}, median {}, p99 {}, max {}\n", at(0).to_string(),
               at(0.5).to_string(), at(0.99).to_string(), at(1).to_string());
  }
  fmt::print(out, "\nmakespan: {}\n", run.makespan.since_start().to_string());
  fmt::print(out, "re-solves: {}\n", network.resolves());
  fmt::print(out, "\nhottest links (by bytes / capacity):\n");
  for (std::uint32_t l : run.hottest) {
    const models::LinkRecord r = network.link(l);
    fmt::print(out, "  {:>6}  {:<40} {:>14}  busy {:>5.1f}%\n", l, link_name(run.cluster.topology, l),
               r.bytes_carried.to_string(), 100.0 * run.utilization(l));
  }
}

void write_flows_csv(std::ostream& out, const FlowsRun& run) {
  const Schema schema = flow_schema();
  TextOut text(out);
  text.put(csv_header(schema));
  text.put('\n');
  fmt::memory_buffer line;
  for (std::size_t i = 0; i < run.specs.size(); ++i) {
    line.clear();
    append_csv_line(line, schema, flow_row(run, i, kCsv));
    line.push_back('\n');
    text.put(std::string_view(line.data(), line.size()));
  }
}

void write_flows_json(std::ostream& out, const FlowsRun& run) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["cluster"] = run.cluster.source;
  j["fidelity"] = run.options.fidelity;
  j["completion_quantum_ns"] = run.options.completion_quantum_ns;
  j["makespan_ps"] = run.makespan.count_ps();
  j["resolves"] = run.network->resolves();
  // The flows stream out one row at a time: the rest of the document is
  // dumped with an empty "flows" array, and the rows go in its place, each
  // as dump(1) indents it there (append_json_row), so the bytes are the
  // same.
  j["flows"] = nlohmann::ordered_json::array();
  j["hottest_links"] = json_rows(flow_link_schema(), flow_link_rows(run));
  const std::string document = j.dump(1);
  const std::string empty_flows = "\n \"flows\": []";
  const std::size_t at = document.find(empty_flows);
  ZX_CHECK(at != std::string::npos, "the flows document has its flows array");
  const Schema schema = flow_schema();
  TextOut text(out);
  text.put(std::string_view(document).substr(0, at));
  text.put("\n \"flows\": [");
  fmt::memory_buffer row;
  for (std::size_t i = 0; i < run.specs.size(); ++i) {
    row.clear();
    row.append(std::string_view(i == 0 ? "\n  " : ",\n  "));
    append_json_row(row, schema, flow_row(run, i, kJson), 2);
    text.put(std::string_view(row.data(), row.size()));
  }
  text.put(run.specs.empty() ? "]" : "\n ]");
  text.put(std::string_view(document).substr(at + empty_flows.size()));
  text.put('\n');
}

}  // namespace zx::experiments
