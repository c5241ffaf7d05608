#include "experiments/trace_run_report.h"

#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "experiments/knobs.h"
#include "experiments/report_format.h"
#include "experiments/result_schema.h"

namespace zx::experiments {
namespace {

namespace ex = ::zx::experiments;

constexpr std::size_t kCriticalOps = 20;  // of the critical path, the table's last
constexpr std::string_view kAutoRan = "auto ran (per distinct call, the fastest candidate alone on an idle network";

// The one run's row per rank in the table, the CSV and the JSON's "ranks":
// its busy and idle time, its communication exposed and overlapped, and the
// compute that communication slowed (ms).
ex::Schema rank_schema() {
  constexpr ex::Format kFixed = ex::Format::kFixed;
  return ex::Schema{{
      {.name = "rank", .format = ex::Format::kInteger, .width = 6},
      {.name = "compute_ms", .header = "compute ms", .format = kFixed, .decimals = 6, .table_decimals = 3,
       .width = 12},
      {.name = "idle_ms", .header = "idle ms", .format = kFixed, .decimals = 6, .table_decimals = 3, .width = 12},
      {.name = "exposed_communication_ms", .header = "exposed comm", .format = kFixed, .decimals = 6,
       .table_decimals = 3, .width = 14},
      {.name = "overlapped_communication_ms", .header = "overlapped", .format = kFixed, .decimals = 6,
       .table_decimals = 3, .width = 14},
      {.name = "compute_slowed_by_communication_ms", .header = "slowed by comm", .format = kFixed, .decimals = 6,
       .table_decimals = 3, .width = 14},
  }};
}

std::vector<ex::Row> rank_rows(const TraceRunDetail& d) {
  std::vector<ex::Row> rows;
  for (const RankTimes& t : d.ranks) {
    rows.push_back({std::int64_t{t.rank}, t.compute_ms, t.idle_ms, t.exposed_ms, t.overlapped_ms,
                    t.slowed_by_communication_ms});
  }
  return rows;
}

// With --vary, a variant's row in the table, the CSV and the JSON's
// "results": its knobs (in JSON, its settings and what it ran on), its
// iteration against the first variant's, the ranks' mean times (ms) and the
// busiest link; the JSON adds the fingerprint and the tuner's and NCCL's
// picks.
ex::Schema variant_schema(const TraceRunReport& report) {
  constexpr ex::Format kFixed = ex::Format::kFixed;
  constexpr ex::Absent kOmitted = ex::Absent::kOmitted;
  std::vector<Settings> settings;
  for (const TraceRunVariant& v : report.variants) settings.push_back(v.settings);
  ex::Schema s{ex::knob_columns(settings)};
  s.columns.insert(
      s.columns.end(),
      {{.name = "variant", .format = ex::Format::kJson, .outputs = ex::kJson},
       {.name = "cluster", .format = ex::Format::kText, .outputs = ex::kJson},
       {.name = "fidelity", .format = ex::Format::kText, .outputs = ex::kJson},
       {.name = "completion_quantum_ns", .format = kFixed, .outputs = ex::kJson},
       {.name = "iteration_time_ms", .header = "iter (ms)", .format = kFixed, .decimals = 6, .width = 12,
        .table_before = "| "},
       {.name = "speedup_vs_first_variant", .header = "speedup", .format = kFixed, .decimals = 4,
        .table_decimals = 3, .width = 8, .table_suffix = "x"},
       {.name = "compute_ms_mean", .header = "compute", .format = kFixed, .decimals = 6, .table_decimals = 3,
        .width = 10, .table_before = "| "},
       {.name = "exposed_communication_ms_mean", .header = "exposed", .format = kFixed, .decimals = 6,
        .table_decimals = 3, .width = 10},
       {.name = "overlapped_communication_ms_mean", .header = "overlap", .format = kFixed, .decimals = 6,
        .table_decimals = 3, .width = 10},
       {.name = "busiest_link", .header = "busiest link", .format = ex::Format::kQuotedText, .table_before = "| "},
       {.name = "fingerprint", .format = ex::Format::kText, .outputs = ex::kJson},
       {.name = "auto_choices", .format = ex::Format::kJson, .outputs = ex::kJson, .absent = kOmitted},
       {.name = "nccl_choices", .format = ex::Format::kJson, .outputs = ex::kJson, .absent = kOmitted}});
  return s;
}

std::vector<ex::Row> variant_rows(const TraceRunReport& report) {
  const auto choices = [](const std::vector<models::AutoChoice>& c) {
    return c.empty() ? ex::Cell{} : ex::Cell{auto_choices_json(c)};
  };
  std::vector<ex::Row> rows;
  for (const TraceRunVariant& v : report.variants) {
    const TraceRunSummary& s = v.summary;
    ex::Row& row = rows.emplace_back();
    for (const auto& [key, value] : v.settings) row.emplace_back(value);
    row.insert(row.end(), {settings_json(v.settings), s.cluster, v.scenario.fidelity,
                           v.scenario.completion_quantum_ns, s.iteration_ms, v.speedup, s.compute_ms, s.exposed_ms,
                           s.overlapped_ms, s.busiest_link, fmt::format("{:016x}", s.fingerprint),
                           choices(s.auto_choices), choices(s.nccl_choices)});
  }
  return rows;
}

void print_run_json(const TraceRunReport& report, std::ostream& out) {
  const TraceRunVariant& v = report.variants.front();
  const TraceRunDetail& d = *report.detail;
  nlohmann::ordered_json ranks = ex::json_rows(rank_schema(), rank_rows(d));
  nlohmann::ordered_json path = nlohmann::ordered_json::array();
  for (const CriticalPathOp& op : d.critical_path) {
    path.push_back({{"op", op.op}, {"rank", op.rank}, {"name", op.name}, {"start_ps", op.start.count_ps()},
                    {"end_ps", op.end.count_ps()}});
  }
  nlohmann::ordered_json links = nlohmann::ordered_json::array();
  for (const LinkLoad& l : d.hottest_links) {
    links.push_back({{"id", l.id}, {"name", l.name}, {"bytes", l.bytes.count()}, {"busy_ps", l.busy.count_ps()}});
  }
  nlohmann::ordered_json j{{"schema_version", 1}, {"trace", report.trace_name}, {"cluster", v.summary.cluster},
                           {"fidelity", v.scenario.fidelity},
                           {"completion_quantum_ns", v.scenario.completion_quantum_ns},
                           {"iteration_time_ms", v.summary.iteration_ms},
                           {"fingerprint", fmt::format("{:016x}", v.summary.fingerprint)}, {"ranks", std::move(ranks)},
                           {"critical_path", std::move(path)}, {"hottest_links", std::move(links)}};
  if (!v.summary.auto_choices.empty()) j["auto_choices"] = auto_choices_json(v.summary.auto_choices);
  if (!v.summary.nccl_choices.empty()) j["nccl_choices"] = auto_choices_json(v.summary.nccl_choices);
  out << j.dump(1) << '\n';
}

void print_run_csv(const TraceRunDetail& d, std::ostream& out) { ex::write_csv(out, rank_schema(), rank_rows(d)); }

void print_run_table(const TraceRunReport& report, std::ostream& out) {
  const TraceRunSummary& s = report.variants.front().summary;
  const TraceRunDetail& d = *report.detail;
  fmt::print(out, "trace {} ({} ranks, {} ops) on {}\n\n", report.trace_name, s.ranks, s.ops, s.cluster);
  fmt::print(out, "iteration time: {:.6f} ms\n\n", s.iteration_ms);
  ex::write_table(out, rank_schema(), rank_rows(d), ex::TableStyle{.fit = false});
  const std::size_t n = d.critical_path.size();
  fmt::print(out, "\ncritical path ({} ops{}):\n", n, n > kCriticalOps ? fmt::format(", last {}", kCriticalOps) : "");
  for (std::size_t k = n > kCriticalOps ? n - kCriticalOps : 0; k < n; ++k) {
    const CriticalPathOp& op = d.critical_path[k];
    fmt::print(out, "  op {:>6}  rank {:>4}  {:<12} {:<28} {:>14} -> {:>14}\n", op.op, op.rank, op.stream,
               op.name.empty() ? op.kind : op.name, op.start.since_start().to_string(),
               op.end.since_start().to_string());
  }
  fmt::print(out, "\nhottest links:\n");
  for (const LinkLoad& l : d.hottest_links) {
    fmt::print(out, "  {:<40} {:>14}  busy {}\n", l.name, l.bytes.to_string(), l.busy.to_string());
  }
  if (!s.auto_choices.empty()) {
    fmt::print(out, "\n{}; --format json has each one's time):\n  {}\n", kAutoRan,
               auto_choices_summary(s.auto_choices));
  }
  if (!s.nccl_choices.empty()) {
    fmt::print(out, "\n{}:\n  {}\n", kNcclChoicesTitle, auto_choices_summary(s.nccl_choices));
  }
}

void print_variants_json(const TraceRunReport& report, const std::vector<std::string>& vary, std::ostream& out) {
  const nlohmann::ordered_json j{{"schema_version", 1},
                                 {"trace", report.trace_name},
                                 {"vary", variations_json(vary)},
                                 {"results", ex::json_rows(variant_schema(report), variant_rows(report))}};
  out << j.dump(1) << '\n';
}

void print_variants_csv(const TraceRunReport& report, std::ostream& out) {
  ex::write_csv(out, variant_schema(report), variant_rows(report));
}

// Per variant, its `choices`, under `title`; nothing where no variant has any.
void print_choices(const std::vector<TraceRunVariant>& variants, std::string_view title,
                   std::vector<models::AutoChoice> TraceRunSummary::*choices, std::ostream& out) {
  bool titled = false;
  for (const TraceRunVariant& v : variants) {
    if ((v.summary.*choices).empty()) continue;
    if (!std::exchange(titled, true)) fmt::print(out, "{}:\n", title);
    fmt::print(out, "  {}: {}\n", settings_label(v.settings), auto_choices_summary(v.summary.*choices));
  }
}

void print_variants_table(const TraceRunReport& report, std::ostream& out) {
  const std::vector<TraceRunVariant>& variants = report.variants;
  fmt::print(out, "trace {} ({} ranks, {} ops)\n\n", report.trace_name, variants.front().summary.ranks,
             variants.front().summary.ops);
  ex::write_table(out, variant_schema(report), variant_rows(report), ex::TableStyle{.fit = false});
  fmt::print(out, "\ncompute, exposed and overlapped communication: ms, means over ranks; speedup: the first "
                  "variant's iteration time over this one's.\n");
  print_choices(variants, fmt::format("{})", kAutoRan), &TraceRunSummary::auto_choices, out);
  print_choices(variants, kNcclChoicesTitle, &TraceRunSummary::nccl_choices, out);
}

}  // namespace

void write_trace_run_report(const TraceRunReport& report, const std::string& format,
                            const std::vector<std::string>& vary, std::ostream& out) {
  if (format == "json") report.detail ? print_run_json(report, out) : print_variants_json(report, vary, out);
  if (format == "csv") report.detail ? print_run_csv(*report.detail, out) : print_variants_csv(report, out);
  if (format == "table") report.detail ? print_run_table(report, out) : print_variants_table(report, out);
}

}  // namespace zx::experiments
