// File: experiments/plan_report.cc

#include "experiments/plan_report.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "base/error.h"
#include "experiments/interrupt.h"
#include "models/collectives/plan.h"
#include "models/compute/device_profile.h"
#include "models/execution/network_backend.h"
#include "workloads/dlrm_iteration.h"

namespace zx::experiments {
namespace {

// The GPUs the table lists without --per-gpu: the busiest ones.
constexpr std::size_t kBusiestGpus = 8;

// The search of `o` at `nodes`, a progress line at most every 10 s.
SearchResult search_with_progress(const WhatIfOptions& o, int nodes) {
  const auto start = std::chrono::steady_clock::now();
  double reported = 0;  // seconds into the search at the last report
  return search_sharding(o, nodes, SearchOptions{.max_simulations = o.search_budget},
                         [&](const SearchResult& x, const std::string& group) {
                           const double seconds =
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                           if (seconds < reported + 10.0) return;
                           reported = seconds;
                           write_progress(fmt::format(
                               "plan: search pass {}, {} tried ({} simulations, best {:.3f} ms, {:.0f} s)", x.passes,
                               group, x.simulations, x.best_iteration_time_ms, seconds));
                         });
}

template <typename F>
std::vector<double> values_of(const std::vector<PlanGpu>& gpus, F value) {
  std::vector<double> values;
  values.reserve(gpus.size());
  for (const PlanGpu& g : gpus) values.push_back(value(g));
  return values;
}

const models::TableGroup& group_of(const PlannedSize& s, const models::TablePlacement& t) {
  return s.model.tables[static_cast<std::size_t>(t.group)];
}

// Above this max/mean of the GPUs' embedding work the table says that every
// GPU waits for the busiest.
constexpr double kImbalanceNote = 1.05;

// The host-memory tables' cache in the table's footnote to the kinds.
std::string cache_note(const PlanReport& r) {
  const WhatIfOptions& o = r.options;
  const PlannedSize& s = r.size;
  if (o.index_zipf_alpha) {
    return fmt::format("hit rate {:.1f}% over their lookups (LRU, Zipf alpha {:g})", s.plan.host_cache_hit_rate * 100,
                       *o.index_zipf_alpha);
  }
  if (std::any_of(s.model.tables.begin(), s.model.tables.end(),
                  [](const models::TableGroup& g) { return g.zipf_alpha.has_value(); })) {
    return fmt::format("hit rate {:.1f}% over their lookups (LRU under each group's zipf_alpha, else {:g}%)",
                       s.plan.host_cache_hit_rate * 100, o.cache_hit_rate * 100);
  }
  return fmt::format("hit rate {:g}%", s.plan.host_cache_hit_rate * 100);
}

void write_search(std::ostream& out, const WhatIfOptions& o, const SearchResult& x) {
  fmt::print(out, "search: {} simulated iteration{} ({} fidelity), {} pass{}{}: {:.3f} ms -> {:.3f} ms ({:+.2f}%)\n",
             x.simulations, x.simulations == 1 ? "" : "s", o.fidelity, x.passes, x.passes == 1 ? "" : "es",
             x.budget_exhausted ? ", budget spent" : "", x.start_iteration_time_ms, x.best_iteration_time_ms,
             100 * (x.best_iteration_time_ms / x.start_iteration_time_ms - 1));
  for (const SearchMove& m : x.moves) {
    fmt::print(out, "  pass {}: {} ({} table{}) {} -> {}: {:.3f} ms\n", m.pass, m.group, m.tables,
               m.tables == 1 ? "" : "s", m.from, m.to, m.iteration_time_ms);
  }
  if (x.moves.empty()) fmt::print(out, "  no move shortens the iteration by 0.1% or more: the plan below is the start\n");
  fmt::print(out, "\n");
}

void write_stats_line(std::ostream& out, const char* what, const PlanStats& st) {
  fmt::print(out, "{:<26} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", what, st.min, st.mean, st.max,
             st.max_over_mean());
}

// The tables' columns are fmt's widths, a longer cell overflowing its line.
const TableStyle kTableStyle{.fit = false};

nlohmann::ordered_json search_json(const WhatIfOptions& o, const SearchResult& x) {
  nlohmann::ordered_json moves = nlohmann::ordered_json::array();
  for (const SearchMove& m : x.moves) {
    moves.push_back({{"pass", m.pass},
                     {"group", m.group},
                     {"tables", m.tables},
                     {"from", m.from},
                     {"to", m.to},
                     {"iteration_time_ms", m.iteration_time_ms}});
  }
  return {{"fidelity", o.fidelity},
          {"simulations", x.simulations},
          {"passes", x.passes},
          {"budget_exhausted", x.budget_exhausted},
          {"start_iteration_time_ms", x.start_iteration_time_ms},
          {"best_iteration_time_ms", x.best_iteration_time_ms},
          {"moves", moves}};
}

}  // namespace

PlanReport make_plan_report(const WhatIfOptions& o, int nodes, bool search) {
  WhatIfOptions planned = o;
  std::optional<SearchResult> searched;
  if (search) {
    searched = search_with_progress(o, nodes);
    planned.sharding_overrides.insert(planned.sharding_overrides.end(), searched->overrides.begin(),
                                      searched->overrides.end());
  }
  PlanReport report{.options = planned, .size = plan_whatif_size(planned, nodes), .search = std::move(searched)};
  const PlannedSize& s = report.size;
  if (!s.plan.fits) return report;
  for (int r = 0; r < s.gpus; ++r) {
    const models::GpuLoad& g = s.plan.gpus[static_cast<std::size_t>(r)];
    report.gpus.push_back(PlanGpu{.rank = r,
                                  .node = r / s.gpus_per_node,
                                  .shards = g.shards,
                                  .hbm_bytes = g.hbm_bytes,
                                  .iteration_bytes = g.iteration_bytes,
                                  .host_bytes = g.host_bytes,
                                  .embedding_ms = g.embedding_seconds * 1e3});
  }
  const models::OpGraph graph = workloads::build_dlrm_iteration(s.model, s.plan, s.gpus, s.gpus_per_node, s.device,
                                                                iteration_options(report.options, s.batch_per_gpu));
  add_exchange(graph, report.gpus);
  return report;
}

void add_exchange(const models::OpGraph& graph, std::vector<PlanGpu>& gpus) {
  namespace mc = models::collectives;
  for (const models::CollectiveCall& call : graph.collectives) {
    const mc::CollectiveRequest request = models::to_request(call);
    const auto n = static_cast<int>(request.ranks.size());
    const auto row = [&](int index) -> PlanGpu& {
      return gpus[static_cast<std::size_t>(request.ranks[static_cast<std::size_t>(index)])];
    };
    switch (request.kind) {
      case mc::CollectiveKind::kAllToAll:
        for (int i = 0; i < n; ++i) {
          for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            const std::int64_t bytes = mc::pair_size(request, i, j).count();
            row(i).sent_bytes += bytes;
            row(j).received_bytes += bytes;
          }
        }
        break;
      case mc::CollectiveKind::kReduceScatter:
      case mc::CollectiveKind::kAllGather: {
        // Reduce-scatter: each rank sends its contribution to every other
        // block to that block's owner; all-gather: each rank sends its block
        // to every other rank.
        const std::vector<sim::Bytes> blocks = mc::block_sizes(request);
        const std::int64_t total = request.bytes_per_rank.count();
        const bool scatter = request.kind == mc::CollectiveKind::kReduceScatter;
        for (int i = 0; i < n; ++i) {
          const std::int64_t block = blocks[static_cast<std::size_t>(i)].count();
          row(i).sent_bytes += scatter ? total - block : block * (n - 1);
          row(i).received_bytes += scatter ? block * (n - 1) : total - block;
        }
        break;
      }
      default:
        break;
    }
  }
}

double plan_table_bytes(const PlannedSize& s, const models::TablePlacement& t) {
  const models::TableGroup& group = group_of(s, t);
  return static_cast<double>(group.rows) *
         (static_cast<double>(group.dim * models::element_bytes(s.model.embedding_type)) + 4.0);
}

std::string rank_ranges(const models::TablePlacement& t) {
  std::vector<int> ranks;
  for (const models::Shard& s : t.shards) ranks.push_back(s.rank);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return text;
}

std::vector<PlanKind> plan_kinds(const PlanReport& report) {
  const PlannedSize& s = report.size;
  std::map<std::string, PlanKind> kinds;
  for (const models::TablePlacement& t : s.plan.tables) {
    PlanKind& k = kinds[std::string(models::to_string(t.kind))];
    ++k.tables;
    k.bytes += plan_table_bytes(s, t);
    k.host_memory_tables += t.host_memory ? 1 : 0;
  }
  std::vector<PlanKind> out;
  for (auto& [kind, k] : kinds) {
    k.kind = kind;
    out.push_back(std::move(k));
  }
  return out;
}

PlanStats plan_stats(const std::vector<double>& values) {
  PlanStats s{values.front(), 0, values.front()};
  for (const double v : values) {
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.mean += v;
  }
  s.mean /= static_cast<double>(values.size());
  return s;
}

std::vector<double> node_host_bytes(const PlanReport& report) {
  std::vector<double> nodes(static_cast<std::size_t>(report.size.gpus / report.size.gpus_per_node));
  for (const PlanGpu& g : report.gpus) nodes[static_cast<std::size_t>(g.node)] += g.host_bytes;
  return nodes;
}

std::vector<PlanGpu> busiest_gpus(std::vector<PlanGpu> gpus, std::size_t count) {
  std::stable_sort(gpus.begin(), gpus.end(),
                   [](const PlanGpu& a, const PlanGpu& b) { return a.embedding_ms > b.embedding_ms; });
  if (gpus.size() > count) gpus.resize(count);
  return gpus;
}

Schema plan_gpu_schema() {
  constexpr unsigned kCsvAndJson = kCsv | kJson;
  return Schema{{
      {.name = "rank", .header = "GPU", .format = Format::kInteger, .width = 5},
      {.name = "node", .format = Format::kInteger, .width = 5},
      {.name = "shards", .format = Format::kInteger, .width = 7},
      {.name = "hbm_gbyte", .header = "HBM (GB)", .format = Format::kFixed, .decimals = 6, .table_decimals = 3,
       .width = 10},
      {.name = "budget", .format = Format::kText, .width = 7, .outputs = kTable},  // "98.4%"
      {.name = "iteration_hbm_gbyte", .format = Format::kFixed, .decimals = 6, .outputs = kJson},
      {.name = "host_gbyte", .format = Format::kFixed, .decimals = 6, .outputs = kJson},
      {.name = "embedding_ms", .header = "embedding (ms)", .format = Format::kFixed, .decimals = 6,
       .table_decimals = 3, .width = 15},
      {.name = "sent_mbyte", .header = "sent (MB)", .format = Format::kFixed, .decimals = 1, .width = 10,
       .outputs = kTable},
      {.name = "received_mbyte", .header = "recv (MB)", .format = Format::kFixed, .decimals = 1, .width = 10,
       .outputs = kTable},
      {.name = "exchange_sent_bytes", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "exchange_received_bytes", .format = Format::kInteger, .outputs = kCsvAndJson},
      {.name = "iteration_hbm_gbyte", .format = Format::kFixed, .decimals = 6, .outputs = kCsv},
      {.name = "host_gbyte", .format = Format::kFixed, .decimals = 6, .outputs = kCsv},
  }};
}

std::vector<Row> plan_gpu_rows(const PlanReport& report, const std::vector<PlanGpu>& gpus) {
  const double budget = report.size.plan.hbm_budget_bytes;
  std::vector<Row> rows;
  for (const PlanGpu& g : gpus) {
    const double iteration_gbyte = g.iteration_bytes / 1e9;
    const double host_gbyte = g.host_bytes / 1e9;
    rows.push_back({std::int64_t{g.rank}, std::int64_t{g.node}, g.shards, g.hbm_bytes / 1e9,
                    fmt::format("{:.1f}%", 100 * g.hbm_bytes / budget), iteration_gbyte, host_gbyte, g.embedding_ms,
                    static_cast<double>(g.sent_bytes) / 1e6, static_cast<double>(g.received_bytes) / 1e6,
                    g.sent_bytes, g.received_bytes, iteration_gbyte, host_gbyte});
  }
  return rows;
}

Schema plan_table_schema() {
  return Schema{{
      {.name = "table", .format = Format::kInteger, .width = 6},
      {.name = "group", .format = Format::kText, .width = 16, .align = Align::kLeft},
      {.name = "kind", .format = Format::kText, .width = 15, .align = Align::kLeft},
      {.name = "memory", .format = Format::kText, .outputs = kCsv | kJson},  // "hbm" or "host"
      // The table's memory: a host-memory table's with its cache's hit rate.
      {.name = "memory_and_hit_rate", .header = "memory", .format = Format::kText, .width = 10, .align = Align::kLeft,
       .outputs = kTable},
      {.name = "rows", .format = Format::kInteger, .width = 10},
      {.name = "dim", .format = Format::kInteger, .width = 6},
      {.name = "gbyte", .header = "size (GB)", .format = Format::kFixed, .decimals = 6, .table_decimals = 3,
       .width = 10},
      // Nothing: two spaces between the size and the GPUs in the table.
      {.name = "", .format = Format::kText, .outputs = kTable},
      {.name = "gpus", .header = "GPUs", .format = Format::kQuotedText, .align = Align::kLeft,
       .outputs = kTable | kCsv},
      {.name = "cache_hit_rate", .format = Format::kFixed, .decimals = 6, .outputs = kCsv | kJson,
       .absent = Absent::kOmitted},  // host-memory tables only
      {.name = "shards", .format = Format::kJson, .outputs = kJson},
  }};
}

std::vector<Row> plan_table_rows(const PlanReport& report) {
  const PlannedSize& s = report.size;
  std::vector<Row> rows;
  for (const models::TablePlacement& t : s.plan.tables) {
    const models::TableGroup& group = group_of(s, t);
    nlohmann::ordered_json shards = nlohmann::ordered_json::array();
    for (const models::Shard& sh : t.shards) {
      shards.push_back({{"rank", sh.rank}, {"rows", sh.rows}, {"dim", sh.dim}, {"lookup_share", sh.lookup_share}});
    }
    rows.push_back({t.table, group.name, std::string(models::to_string(t.kind)),
                    std::string(t.host_memory ? "host" : "hbm"),
                    t.host_memory ? fmt::format("host {:.0f}%", t.cache_hit_rate * 100) : std::string("hbm"),
                    group.rows, group.dim, plan_table_bytes(s, t) / 1e9, Cell{}, rank_ranges(t),
                    t.host_memory ? Cell{t.cache_hit_rate} : Cell{}, std::move(shards)});
  }
  return rows;
}

Schema plan_kind_schema() {
  return Schema{{
      {.name = "kind", .format = Format::kText, .width = 16, .align = Align::kLeft},
      {.name = "tables", .format = Format::kInteger, .width = 7},
      {.name = "gbyte", .header = "size (GB)", .format = Format::kFixed, .decimals = 1, .width = 12,
       .outputs = kTable | kJson},
      {.name = "host_memory_tables", .header = "in host memory", .format = Format::kInteger, .width = 15},
  }};
}

std::vector<Row> plan_kind_rows(const PlanReport& report) {
  std::vector<Row> rows;
  for (const PlanKind& k : plan_kinds(report)) rows.push_back({k.kind, k.tables, k.bytes / 1e9, k.host_memory_tables});
  return rows;
}

void write_plan_table(std::ostream& out, const PlanReport& r, bool per_gpu, bool per_table) {
  const WhatIfOptions& o = r.options;
  const PlannedSize& s = r.size;
  fmt::print(out, "zionsim plan: model {} on {} node{} of {} ({} GPUs, {}), {} samples per GPU ({} global), sharding {}\n\n",
             s.model.name, s.nodes, s.nodes == 1 ? "" : "s", o.cluster.cluster, s.gpus, s.device.name,
             s.batch_per_gpu, s.batch_per_gpu * s.gpus, o.sharding);
  if (!s.plan.fits) {
    fmt::print(out, "does not fit: {}\n", s.plan.reason);
    return;
  }
  if (r.search) write_search(out, o, *r.search);
  write_table(out, plan_kind_schema(), plan_kind_rows(r), kTableStyle);
  fmt::print(out, "(size: weights and row-wise AdaGrad state; host-memory tables keep an HBM cache of {:g}% of their "
             "size, {})\n\n",
             o.cache_fraction * 100, cache_note(r));

  const PlanStats emb = plan_stats(values_of(r.gpus, [](const PlanGpu& g) { return g.embedding_ms; }));
  fmt::print(out, "per GPU                          min       mean        max   max/mean\n");
  write_stats_line(out, "HBM for embeddings (GB)", plan_stats(values_of(r.gpus, [](const PlanGpu& g) {
                     return g.hbm_bytes / 1e9;
                   })));
  write_stats_line(out, "HBM for the iteration (GB)", plan_stats(values_of(r.gpus, [](const PlanGpu& g) {
                     return g.iteration_bytes / 1e9;
                   })));
  write_stats_line(out, "embedding fwd+bwd (ms)", emb);
  write_stats_line(out, "exchange sent (MB)", plan_stats(values_of(r.gpus, [](const PlanGpu& g) {
                     return static_cast<double>(g.sent_bytes) / 1e6;
                   })));
  if (s.plan.host_memory_tables() > 0) {
    // Host memory is a node's: its GPUs' host-memory shards together.
    std::vector<double> host_gbyte = node_host_bytes(r);
    for (double& b : host_gbyte) b /= 1e9;
    const double usable_fraction = models::ShardingOptions{}.host_memory_usable_fraction;
    const double host_memory = static_cast<double>(s.cluster.host_memory.count());
    fmt::print(out, "per node\n");
    write_stats_line(out, "host memory (GB)", plan_stats(host_gbyte));
    fmt::print(out, "(of {:.1f} GB usable per node: {:g}% of {:.1f} GB)\n", host_memory * usable_fraction / 1e9,
               usable_fraction * 100, host_memory / 1e9);
  }
  fmt::print(out, "(HBM budget {:.1f} GB per GPU for embeddings after the {:.0f}% reserve; the iteration's HBM: dense "
                  "weights and\n optimizer state, activations, pooled embeddings and indices; embedding time is the "
                  "planner's estimate;\n exchange: the indices, pooled-embedding and gradient payload each GPU sends "
                  "per iteration)\n\n",
             s.plan.hbm_budget_bytes / 1e9, s.plan.hbm_reserve_fraction * 100);
  if (s.plan.balance_split_tables > 0) {
    fmt::print(out,
               "balancing: {} table{} split column-wise into {} shards to even out the GPUs' work (max/mean {:.3f} "
               "whole)\n\n",
               s.plan.balance_split_tables, s.plan.balance_split_tables == 1 ? "" : "s",
               s.plan.balance_split_shards, s.plan.whole_load_imbalance);
  }
  // Every GPU waits for the busiest in the all-to-all: say so when the plan
  // leaves one well above the mean (tables that do not divide over the
  // GPUs, or a few heavy ones), unless a search already ran.
  if (!r.search && emb.mean > 0 && emb.max / emb.mean > kImbalanceNote) {
    fmt::print(out, "note: the busiest GPU's embedding work is {:.1f}% above the mean, and every GPU waits for it in "
                    "the all-to-all;\n --search tries other schemes table by table in simulation "
                    "(docs/sharding_files.md)\n\n",
               (emb.max / emb.mean - 1) * 100);
  }

  if (!per_gpu) {
    fmt::print(out, "busiest GPUs by estimated embedding time (--per-gpu for all {}):\n", r.gpus.size());
  }
  write_table(out, plan_gpu_schema(), plan_gpu_rows(r, per_gpu ? r.gpus : busiest_gpus(r.gpus, kBusiestGpus)),
              kTableStyle);
  if (per_table) {
    out << '\n';
    write_table(out, plan_table_schema(), plan_table_rows(r), kTableStyle);
  }
}

nlohmann::ordered_json plan_report_json(const PlanReport& r) {
  const WhatIfOptions& o = r.options;
  const PlannedSize& s = r.size;
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["model"] = s.model.name;
  j["cluster"] = o.cluster.cluster;
  j["nodes"] = s.nodes;
  j["gpus"] = s.gpus;
  j["gpus_per_node"] = s.gpus_per_node;
  j["host_memory_gbyte_per_node"] = static_cast<double>(s.cluster.host_memory.count()) / 1e9;
  j["gpu"] = s.device.name;
  j["batch_per_gpu"] = s.batch_per_gpu;
  j["global_batch"] = s.batch_per_gpu * s.gpus;
  j["sharding"] = o.sharding;
  j["fits"] = s.plan.fits;
  if (!s.plan.fits) {
    j["reason"] = s.plan.reason;
    return j;
  }
  if (r.search) j["search"] = search_json(o, *r.search);
  j["hbm_budget_gbyte"] = s.plan.hbm_budget_bytes / 1e9;
  j["hbm_reserve_fraction"] = s.plan.hbm_reserve_fraction;
  j["host_cache_hit_rate"] = s.plan.host_cache_hit_rate;
  j["cache_fraction"] = o.cache_fraction;
  j["index_zipf_alpha"] = o.index_zipf_alpha ? nlohmann::ordered_json(*o.index_zipf_alpha) : nlohmann::ordered_json();
  j["load_imbalance"] = s.plan.load_imbalance();
  j["balancing"] = {{"split_tables", s.plan.balance_split_tables},
                    {"split_shards", s.plan.balance_split_shards},
                    {"whole_load_imbalance", s.plan.whole_load_imbalance}};
  j["max_hbm_gbyte"] = s.plan.max_hbm_bytes() / 1e9;
  j["host_memory_tables"] = s.plan.host_memory_tables();
  j["kinds"] = json_rows(plan_kind_schema(), plan_kind_rows(r));
  j["per_gpu"] = json_rows(plan_gpu_schema(), plan_gpu_rows(r, r.gpus));
  j["tables"] = json_rows(plan_table_schema(), plan_table_rows(r));
  return j;
}

void write_plan_csv(std::ostream& out, const PlanReport& r, bool per_table) {
  if (!r.fits()) {
    throw InputError(Diagnostic{"--format", "", fmt::format("the plan does not fit, no rows to write: {}",
                                                            r.size.plan.reason)});
  }
  if (per_table) {
    write_csv(out, plan_table_schema(), plan_table_rows(r));
  } else {
    write_csv(out, plan_gpu_schema(), plan_gpu_rows(r, r.gpus));
  }
}

std::string plan_sharding_file(const PlanReport& r) {
  const PlannedSize& s = r.size;
  return models::sharding_file_text(
      s.plan, s.gpus_per_node,
      fmt::format("zionsim plan: {} on {} node{} of {} ({} GPUs of {} per node, {}), {} samples per GPU, "
                  "sharding {}. Ranks and nodes hold for this size only.",
                  s.model.name, s.nodes, s.nodes == 1 ? "" : "s", r.options.cluster.cluster, s.gpus, s.gpus_per_node,
                  s.device.name, s.batch_per_gpu, r.options.sharding),
      s.model.name);
}

}  // namespace zx::experiments
