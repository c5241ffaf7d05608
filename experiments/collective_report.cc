#include "experiments/collective_report.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "experiments/distribution.h"
#include "experiments/knobs.h"
#include "experiments/result_schema.h"
#include "experiments/svg_plot.h"
#include "models/execution/backend_algorithms.h"

namespace zx::experiments {
namespace {

namespace ex = ::zx::experiments;
using models::collectives::to_string;
using ::zx::experiments::to_string;

// Below the table: the variants, what NCCL's model and the tuner ran, NCCL's
// graphs (as NCCL_DEBUG=INFO lists them), the definitions, the latencies,
// and the channels the ring and the trees would need to be NCCL's.
void write_footnotes(std::ostream& out, const CollectiveSweepReport& report, const std::vector<std::string>& labels) {
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    if (report.varied()) fmt::print(out, "# {}: {} ranks of {}\n", settings_label(v.settings), v.ranks, v.cluster);
  }
  for (std::size_t c = 0; c < labels.size(); ++c) {
    const std::string& a = report.rows[c].algorithm;
    if (!ex::picks_per_call(a)) continue;
    fmt::print(out, "# {} ran {} ({})\n", labels[c], ex::describe_choices(ex::choice_spans(report, c)),
               models::is_nccl_cost_model(a) ? "algorithm/protocol as NCCL's tuner picks them, by its cost model"
                                             : "the fastest of its candidates, each alone on an idle network");
  }
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    for (const auto& [algorithm, graphs] : v.nccl_graphs) {
      fmt::print(out, "# {}'s graphs (NCCL's topology search, replayed){}: {}\n", algorithm,
                 report.varied() ? ", " + settings_label(v.settings) : "", to_string(graphs));
    }
  }
  fmt::print(out, "# algbw = size / time; busbw = algbw x {} (nccl-tests); GB/s\n",
             ex::bus_factor_formula(report.kind));
  const topology::CommunicationLatencies& c = report.communication;
  fmt::print(out, "# communication library{}: launch {}, per transfer {} inside a server, {} between servers{}{}\n",
             report.varied() ? " (first variant)" : "", c.launch.to_string(), c.transfer.to_string(),
             c.network_transfer.to_string(),
             c.peer_gap > sim::Duration::zero() ? fmt::format(", {} between a rank's peers", c.peer_gap.to_string())
                                                : "",
             report.has_nccl_columns() ? " (not in the nccl columns: NCCL's cost model has its own)" : "");
  for (const std::string& line : ex::channel_advice(report.default_channels)) fmt::print(out, "# {}\n", line);
}

void write_report_table(std::ostream& out, const CollectiveSweepRequest& r, const CollectiveSweepReport& report) {
  const ex::CollectiveSweepVariant& first = report.variants.front();
  const std::string ranks = report.varied() ? "the ranks of each variant" : fmt::format("{} ranks", first.ranks);
  const std::string where = report.varies("cluster") ? "the ranks and cluster of each variant"
                                                     : fmt::format("{} of {}", ranks, first.cluster);
  fmt::print(out, "# zionsim collective: {} on {}, {}{}, fidelity {}\n#\n", to_string(r.kind), where,
             to_string(r.dtype), r.wire ? fmt::format(" (on the wire: {})", to_string(*r.wire)) : "", r.scenario.fidelity);
  const ex::TableGroups groups = ex::collective_sweep_groups(report);
  ex::write_table(out, ex::collective_sweep_schema(report), ex::collective_sweep_rows(report), groups,
                  {.header_prefix = "# ", .row_prefix = "  ", .fit = false});
  write_footnotes(out, report, groups.labels);
}

nlohmann::ordered_json report_json(const CollectiveSweepRequest& r, const CollectiveSweepReport& report) {
  nlohmann::ordered_json j = {{"schema_version", 1}, {"cluster", report.variants.front().cluster}, {"op", to_string(r.kind)}};
  if (!report.varied()) j["ranks"] = report.variants.front().ranks;
  j["dtype"] = to_string(r.dtype);
  if (r.wire) j["quantize"] = to_string(*r.wire);
  j["fidelity"] = r.scenario.fidelity;
  j["completion_quantum_ns"] = r.scenario.completion_quantum_ns;
  if (report.varied()) j["vary"] = variations_json(r.vary);
  j["results"] = ex::json_rows(ex::collective_sweep_schema(report), ex::collective_sweep_rows(report));
  if (!report.has_nccl_columns()) return j;
  nlohmann::ordered_json graphs = nlohmann::ordered_json::array();
  for (const ex::CollectiveSweepVariant& v : report.variants) {
    for (const auto& [algorithm, g] : v.nccl_graphs) {
      nlohmann::ordered_json entry;
      if (report.varied()) entry["variant"] = settings_json(v.settings);
      entry["algorithm"] = algorithm;
      entry.update(to_json(g));
      graphs.push_back(std::move(entry));
    }
  }
  j["nccl_graphs"] = std::move(graphs);
  return j;
}

}  // namespace

// A curve per column: every algorithm of every variant.
void write_collective_plot(std::ostream& file, const CollectiveSweepRequest& r, const CollectiveSweepReport& report) {
  const std::vector<std::string> labels = ex::column_labels(report);
  std::vector<experiments::CollectiveSeries> series(labels.size());
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    experiments::CollectiveSeries& s = series[i % labels.size()];
    s.label = labels[i % labels.size()];
    s.size_bytes.push_back(static_cast<double>(report.rows[i].bytes));
    s.time_us.push_back(report.rows[i].time_us);
    s.busbw_gbyte_per_s.push_back(report.rows[i].busbw);
  }
  experiments::write_collective_svg(file, series, fmt::format("{} on {}, {}", to_string(r.kind), report.variants.front().cluster, to_string(r.dtype)));
}

void write_collective_report(std::ostream& out, const std::string& format, const CollectiveSweepRequest& request,
                             const CollectiveSweepReport& report) {
  if (format == "json") out << report_json(request, report).dump(1) << '\n';
  if (format == "csv") write_csv(out, collective_sweep_schema(report), collective_sweep_rows(report));
  if (format == "table") write_report_table(out, request, report);
}

}  // namespace zx::experiments
