// `zionsim plan`: the embedding sharding plan of one cluster size, as the
// planner (or a sharding file) makes it: where every table goes, how full
// each GPU's HBM is, how even the embedding work and the embedding exchange
// are; and, with --emit-sharding, the plan as a sharding file to edit and
// feed back to whatif --sharding.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/collectives/plan.h"
#include "models/dlrm/sharding.h"
#include "models/execution/network_backend.h"
#include "experiments/interrupt.h"
#include "tools/cli_checks.h"
#include "tools/algorithm_sources.h"
#include "tools/backend_options.h"
#include "tools/cli.h"
#include "tools/cluster_options.h"
#include "tools/commands.h"
#include "tools/model_options.h"
#include "experiments/plan_search.h"
#include "tools/variations.h"
#include "experiments/whatif.h"
#include "workloads/dlrm_iteration.h"

namespace zx::tools {
namespace {

struct Flags {
  int nodes = 0;
  std::string format = "table";
  std::string emit_sharding;
  bool per_gpu = false;
  bool per_table = false;
  bool search = false;
  std::vector<std::string> algorithms;
  bool unfused = false;
  bool skip_memory_check = false;
  bool no_pipeline = false;
  bool prefetch_cache = false;
};

// The GPUs the table format lists without --per-gpu: the busiest ones.
constexpr std::size_t kBusiestGpus = 8;

struct GpuRow {
  int rank = 0;
  int node = 0;
  std::int64_t shards = 0;
  double hbm_bytes = 0;
  double iteration_bytes = 0;  // HBM the iteration needs besides embeddings
  double host_bytes = 0;       // its host-memory shards' bytes in its node's host memory
  double embedding_ms = 0;
  std::int64_t sent_bytes = 0;      // embedding exchange payload leaving the GPU
  std::int64_t received_bytes = 0;  // and arriving at it
};

struct Report {
  PlannedSize size;
  std::vector<GpuRow> gpus;  // empty when the plan does not fit
  std::optional<SearchResult> search;
};

// The payload of every embedding exchange of the iteration (indices and
// pooled-embedding all-to-alls, reduce-scatters and all-gathers of
// row-wise shards): what must leave each GPU and arrive at it, whatever
// algorithm carries it. The dense all-reduce is not counted.
void add_exchange(const models::OpGraph& graph, std::vector<GpuRow>& gpus) {
  namespace mc = models::collectives;
  for (const models::CollectiveCall& call : graph.collectives) {
    const mc::CollectiveRequest request = models::to_request(call);
    const auto n = static_cast<int>(request.ranks.size());
    const auto row = [&](int index) -> GpuRow& { return gpus[static_cast<std::size_t>(request.ranks[static_cast<std::size_t>(index)])]; };
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

Report make_report(const WhatIfOptions& o, int nodes) {
  Report report{.size = plan_whatif_size(o, nodes)};
  const PlannedSize& s = report.size;
  if (!s.plan.fits) return report;
  for (int r = 0; r < s.gpus; ++r) {
    const models::GpuLoad& g = s.plan.gpus[static_cast<std::size_t>(r)];
    report.gpus.push_back(GpuRow{.rank = r,
                                 .node = r / s.gpus_per_node,
                                 .shards = g.shards,
                                 .hbm_bytes = g.hbm_bytes,
                                 .iteration_bytes = g.iteration_bytes,
                                 .host_bytes = g.host_bytes,
                                 .embedding_ms = g.embedding_seconds * 1e3});
  }
  const models::OpGraph graph = workloads::build_dlrm_iteration(s.model, s.plan, s.gpus, s.gpus_per_node, s.device,
                                                                iteration_options(o, s.batch_per_gpu));
  add_exchange(graph, report.gpus);
  return report;
}

struct Stats {
  double min = 0;
  double mean = 0;
  double max = 0;
};

template <typename F>
Stats stats_of(const std::vector<GpuRow>& gpus, F value) {
  Stats s{value(gpus.front()), 0, value(gpus.front())};
  for (const GpuRow& g : gpus) {
    const double v = value(g);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.mean += v;
  }
  s.mean /= static_cast<double>(gpus.size());
  return s;
}

double table_bytes(const PlannedSize& s, const models::TablePlacement& t) {
  const models::TableGroup& group = s.model.tables[static_cast<std::size_t>(t.group)];
  return static_cast<double>(group.rows) *
         (static_cast<double>(group.dim * models::element_bytes(s.model.embedding_type)) + 4.0);
}

// "0-7,16,18-19": a table's GPUs, compressed into ranges.
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

struct KindRow {
  std::int64_t tables = 0;
  double bytes = 0;
  std::int64_t host = 0;
};

std::map<std::string, KindRow> kinds_of(const PlannedSize& s) {
  std::map<std::string, KindRow> kinds;
  for (const models::TablePlacement& t : s.plan.tables) {
    KindRow& k = kinds[std::string(models::to_string(t.kind))];
    ++k.tables;
    k.bytes += table_bytes(s, t);
    k.host += t.host_memory ? 1 : 0;
  }
  return kinds;
}

std::string group_name(const PlannedSize& s, const models::TablePlacement& t) {
  return s.model.tables[static_cast<std::size_t>(t.group)].name;
}

void print_table(std::ostream& out, const WhatIfOptions& o, const Flags& f, const Report& r) {
  const PlannedSize& s = r.size;
  fmt::print(out, "zionsim plan: model {} on {} node{} of {} ({} GPUs, {}), {} samples per GPU ({} global), sharding {}\n\n",
             s.model.name, s.nodes, s.nodes == 1 ? "" : "s", o.cluster.cluster, s.gpus, s.device.name,
             s.batch_per_gpu, s.batch_per_gpu * s.gpus, o.sharding);
  if (!s.plan.fits) {
    fmt::print(out, "does not fit: {}\n", s.plan.reason);
    return;
  }
  if (r.search) {
    const SearchResult& x = *r.search;
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
  const Stats hbm = stats_of(r.gpus, [](const GpuRow& g) { return g.hbm_bytes / 1e9; });
  const Stats iteration = stats_of(r.gpus, [](const GpuRow& g) { return g.iteration_bytes / 1e9; });
  const Stats emb = stats_of(r.gpus, [](const GpuRow& g) { return g.embedding_ms; });
  const Stats sent = stats_of(r.gpus, [](const GpuRow& g) { return static_cast<double>(g.sent_bytes) / 1e6; });
  const double budget = s.plan.hbm_budget_bytes / 1e9;
  fmt::print(out, "{:<16} {:>7} {:>12} {:>15}\n", "kind", "tables", "size (GB)", "in host memory");
  for (const auto& [kind, k] : kinds_of(s)) {
    fmt::print(out, "{:<16} {:>7} {:>12.1f} {:>15}\n", kind, k.tables, k.bytes / 1e9, k.host);
  }
  fmt::print(out, "(size: weights and row-wise AdaGrad state; host-memory tables keep an HBM cache of {:g}% of their "
             "size, {})\n\n",
             o.cache_fraction * 100,
             o.index_zipf_alpha ? fmt::format("hit rate {:.1f}% over their lookups (LRU, Zipf alpha {:g})",
                                              s.plan.host_cache_hit_rate * 100, *o.index_zipf_alpha)
             : std::any_of(s.model.tables.begin(), s.model.tables.end(),
                           [](const models::TableGroup& g) { return g.zipf_alpha.has_value(); })
                 ? fmt::format("hit rate {:.1f}% over their lookups (LRU under each group's zipf_alpha, else {:g}%)",
                               s.plan.host_cache_hit_rate * 100, o.cache_hit_rate * 100)
                 : fmt::format("hit rate {:g}%", s.plan.host_cache_hit_rate * 100));
  fmt::print(out, "per GPU                          min       mean        max   max/mean\n");
  const auto line = [&](const char* what, const Stats& st) {
    fmt::print(out, "{:<26} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f}\n", what, st.min, st.mean, st.max,
               st.mean > 0 ? st.max / st.mean : 1.0);
  };
  line("HBM for embeddings (GB)", hbm);
  line("HBM for the iteration (GB)", iteration);
  line("embedding fwd+bwd (ms)", emb);
  line("exchange sent (MB)", sent);
  if (s.plan.host_memory_tables() > 0) {
    // Host memory is a node's: its GPUs' host-memory shards together.
    std::vector<GpuRow> nodes(static_cast<std::size_t>(s.gpus / s.gpus_per_node));
    for (const GpuRow& g : r.gpus) nodes[static_cast<std::size_t>(g.node)].host_bytes += g.host_bytes;
    const double usable_fraction = models::ShardingOptions{}.host_memory_usable_fraction;
    const double host_memory = static_cast<double>(s.cluster.host_memory.count());
    fmt::print(out, "per node\n");
    line("host memory (GB)", stats_of(nodes, [](const GpuRow& g) { return g.host_bytes / 1e9; }));
    fmt::print(out, "(of {:.1f} GB usable per node: {:g}% of {:.1f} GB)\n", host_memory * usable_fraction / 1e9,
               usable_fraction * 100, host_memory / 1e9);
  }
  fmt::print(out, "(HBM budget {:.1f} GB per GPU for embeddings after the {:.0f}% reserve; the iteration's HBM: dense "
                  "weights and\n optimizer state, activations, pooled embeddings and indices; embedding time is the "
                  "planner's estimate;\n exchange: the indices, pooled-embedding and gradient payload each GPU sends "
                  "per iteration)\n\n",
             budget, s.plan.hbm_reserve_fraction * 100);
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
  constexpr double kImbalanceNote = 1.05;
  if (!r.search && emb.mean > 0 && emb.max / emb.mean > kImbalanceNote) {
    fmt::print(out, "note: the busiest GPU's embedding work is {:.1f}% above the mean, and every GPU waits for it in "
                    "the all-to-all;\n --search tries other schemes table by table in simulation "
                    "(docs/sharding_files.md)\n\n",
               (emb.max / emb.mean - 1) * 100);
  }

  std::vector<GpuRow> shown = r.gpus;
  if (!f.per_gpu) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const GpuRow& a, const GpuRow& b) { return a.embedding_ms > b.embedding_ms; });
    if (shown.size() > kBusiestGpus) shown.resize(kBusiestGpus);
    fmt::print(out, "busiest GPUs by estimated embedding time (--per-gpu for all {}):\n", r.gpus.size());
  }
  fmt::print(out, "{:>5} {:>5} {:>7} {:>10} {:>7} {:>15} {:>10} {:>10}\n", "GPU", "node", "shards", "HBM (GB)",
             "budget", "embedding (ms)", "sent (MB)", "recv (MB)");
  for (const GpuRow& g : shown) {
    fmt::print(out, "{:>5} {:>5} {:>7} {:>10.3f} {:>6.1f}% {:>15.3f} {:>10.1f} {:>10.1f}\n", g.rank, g.node, g.shards,
               g.hbm_bytes / 1e9, 100 * g.hbm_bytes / s.plan.hbm_budget_bytes, g.embedding_ms,
               static_cast<double>(g.sent_bytes) / 1e6, static_cast<double>(g.received_bytes) / 1e6);
  }
  if (f.per_table) {
    // A host-memory table's memory shows its cache's hit rate.
    fmt::print(out, "\n{:>6} {:<16} {:<15} {:<10} {:>10} {:>6} {:>10}  {}\n", "table", "group", "kind", "memory", "rows",
               "dim", "size (GB)", "GPUs");
    for (const models::TablePlacement& t : s.plan.tables) {
      const models::TableGroup& group = s.model.tables[static_cast<std::size_t>(t.group)];
      fmt::print(out, "{:>6} {:<16} {:<15} {:<10} {:>10} {:>6} {:>10.3f}  {}\n", t.table, group_name(s, t),
                 models::to_string(t.kind),
                 t.host_memory ? fmt::format("host {:.0f}%", t.cache_hit_rate * 100) : std::string("hbm"), group.rows,
                 group.dim, table_bytes(s, t) / 1e9, rank_ranges(t));
    }
  }
}

void print_json(std::ostream& out, const WhatIfOptions& o, const Report& r) {
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
    out << j.dump(2) << '\n';
    return;
  }
  if (r.search) {
    const SearchResult& x = *r.search;
    nlohmann::ordered_json moves = nlohmann::ordered_json::array();
    for (const SearchMove& m : x.moves) {
      moves.push_back({{"pass", m.pass},
                       {"group", m.group},
                       {"tables", m.tables},
                       {"from", m.from},
                       {"to", m.to},
                       {"iteration_time_ms", m.iteration_time_ms}});
    }
    j["search"] = {{"fidelity", o.fidelity},
                   {"simulations", x.simulations},
                   {"passes", x.passes},
                   {"budget_exhausted", x.budget_exhausted},
                   {"start_iteration_time_ms", x.start_iteration_time_ms},
                   {"best_iteration_time_ms", x.best_iteration_time_ms},
                   {"moves", moves}};
  }
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
  nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
  for (const auto& [kind, k] : kinds_of(s)) {
    kinds.push_back({{"kind", kind}, {"tables", k.tables}, {"gbyte", k.bytes / 1e9}, {"host_memory_tables", k.host}});
  }
  j["kinds"] = kinds;
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuRow& g : r.gpus) {
    gpus.push_back({{"rank", g.rank},
                    {"node", g.node},
                    {"shards", g.shards},
                    {"hbm_gbyte", g.hbm_bytes / 1e9},
                    {"iteration_hbm_gbyte", g.iteration_bytes / 1e9},
                    {"host_gbyte", g.host_bytes / 1e9},
                    {"embedding_ms", g.embedding_ms},
                    {"exchange_sent_bytes", g.sent_bytes},
                    {"exchange_received_bytes", g.received_bytes}});
  }
  j["per_gpu"] = gpus;
  nlohmann::ordered_json tables = nlohmann::ordered_json::array();
  for (const models::TablePlacement& t : s.plan.tables) {
    const models::TableGroup& group = s.model.tables[static_cast<std::size_t>(t.group)];
    nlohmann::ordered_json shards = nlohmann::ordered_json::array();
    for (const models::Shard& sh : t.shards) {
      shards.push_back({{"rank", sh.rank}, {"rows", sh.rows}, {"dim", sh.dim}, {"lookup_share", sh.lookup_share}});
    }
    nlohmann::ordered_json table = {{"table", t.table},
                                    {"group", group.name},
                                    {"kind", models::to_string(t.kind)},
                                    {"memory", t.host_memory ? "host" : "hbm"},
                                    {"rows", group.rows},
                                    {"dim", group.dim},
                                    {"gbyte", table_bytes(s, t) / 1e9}};
    if (t.host_memory) table["cache_hit_rate"] = t.cache_hit_rate;
    table["shards"] = shards;
    tables.push_back(std::move(table));
  }
  j["tables"] = tables;
  out << j.dump(2) << '\n';
}

void print_csv(std::ostream& out, const Flags& f, const Report& r) {
  const PlannedSize& s = r.size;
  if (!s.plan.fits) {
    throw InputError(Diagnostic{"--format", "", fmt::format("the plan does not fit, no rows to write: {}",
                                                            s.plan.reason)});
  }
  if (f.per_table) {
    fmt::print(out, "table,group,kind,memory,rows,dim,gbyte,gpus,cache_hit_rate\n");
    for (const models::TablePlacement& t : s.plan.tables) {
      const models::TableGroup& group = s.model.tables[static_cast<std::size_t>(t.group)];
      fmt::print(out, "{},{},{},{},{},{},{:.6f},\"{}\",{}\n", t.table, csv_field(group.name), models::to_string(t.kind),
                 t.host_memory ? "host" : "hbm", group.rows, group.dim, table_bytes(s, t) / 1e9, rank_ranges(t),
                 t.host_memory ? fmt::format("{:.6f}", t.cache_hit_rate) : "");
    }
    return;
  }
  fmt::print(out,
             "rank,node,shards,hbm_gbyte,embedding_ms,exchange_sent_bytes,exchange_received_bytes,iteration_hbm_gbyte,"
             "host_gbyte\n");
  for (const GpuRow& g : r.gpus) {
    fmt::print(out, "{},{},{},{:.6f},{:.6f},{},{},{:.6f},{:.6f}\n", g.rank, g.node, g.shards, g.hbm_bytes / 1e9,
               g.embedding_ms, g.sent_bytes, g.received_bytes, g.iteration_bytes / 1e9, g.host_bytes / 1e9);
  }
}

int run(const WhatIfOptions& given, const Flags& f, std::ostream& out) {
  WhatIfOptions o = given;
  std::optional<SearchResult> searched;
  if (f.search) {
    const auto start = std::chrono::steady_clock::now();
    double reported = 0;  // seconds into the search at the last report
    searched = search_sharding(o, f.nodes, SearchOptions{.max_simulations = o.search_budget},
                               [&](const SearchResult& x, const std::string& group) {
                                 const double seconds =
                                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                                 if (seconds < reported + 10.0) return;
                                 reported = seconds;
                                 write_progress(fmt::format(
                                     "plan: search pass {}, {} tried ({} simulations, best {:.3f} ms, {:.0f} s)",
                                     x.passes, group, x.simulations, x.best_iteration_time_ms, seconds));
                               });
    o.sharding_overrides.insert(o.sharding_overrides.end(), searched->overrides.begin(), searched->overrides.end());
  }
  Report report = make_report(o, f.nodes);
  report.search = std::move(searched);
  if (!f.emit_sharding.empty() && !report.size.plan.fits) {
    throw InputError(Diagnostic{"--emit-sharding", "", fmt::format("the plan does not fit, nothing to write: {}",
                                                                   report.size.plan.reason)});
  }
  if (f.format == "json") {
    print_json(out, o, report);
  } else if (f.format == "csv") {
    print_csv(out, f, report);
  } else {
    print_table(out, o, f, report);
  }
  if (!f.emit_sharding.empty()) {
    const PlannedSize& s = report.size;
    OutputFile file = open_output_file("--emit-sharding", f.emit_sharding);
    file << models::sharding_file_text(
        s.plan, s.gpus_per_node,
        fmt::format("zionsim plan: {} on {} node{} of {} ({} GPUs of {} per node, {}), {} samples per GPU, "
                    "sharding {}. Ranks and nodes hold for this size only.",
                    s.model.name, s.nodes, s.nodes == 1 ? "" : "s", o.cluster.cluster, s.gpus, s.gpus_per_node,
                    s.device.name, s.batch_per_gpu, o.sharding),
        s.model.name);
    close_output_file("--emit-sharding", f.emit_sharding, file);
  }
  return kExitOk;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "plan", "Show the embedding sharding plan of one cluster size: placements, HBM, balance; write it as a file");
  auto request = add_cluster_options(*cmd, /*with_nodes=*/false, DegradeFlag::kLinksAndGpus);
  auto options = std::make_shared<WhatIfOptions>();
  auto f = std::make_shared<Flags>();
  cmd->add_option("--nodes", f->nodes, "Cluster size in servers")->required()->check(in_range(1, 8192));
  auto batch = add_model_options(*cmd, *options, /*with_search=*/false);
  cmd->add_option("--a2a-precision", options->a2a_forward_dtype,
                  "Element type of the pooled-embedding all-to-all (for the exchange volume)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--a2a-backward-precision", options->a2a_backward_dtype,
                  "Element type of the gradient all-to-all (default: as forward)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8"}));
  cmd->add_option("--format", f->format, "Output format")->check(CLI::IsMember({"table", "json", "csv"}))->capture_default_str();
  cmd->add_flag("--per-gpu", f->per_gpu, "List every GPU (the table lists the busiest few)");
  cmd->add_flag("--per-table", f->per_table, "List every table: kind, memory, GPUs (csv: one row per table)");
  cmd->add_option("--all-reduce-precision", options->all_reduce_dtype, "Element type of the dense gradient all-reduce (for --search)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  add_network_flags(*cmd, options->fidelity, options->completion_quantum_ns);
  cmd->add_option("--algo", f->algorithms, "Collective algorithm per kind (for --search), e.g. --algo all_to_all=hierarchical; nccl or auto alone: every kind")
      ->option_text("KIND=NAME")
      ->take_all();
  cmd->add_flag("--unfused", f->unfused, "Unfused embedding kernels (for --search)");
  cmd->add_flag("--no-pipeline", f->no_pipeline, "Do not overlap the next batch's input distribution (for --search)");
  cmd->add_flag("--prefetch-cache", f->prefetch_cache,
                "Fetch host-memory tables' cache misses for the next batch beside the iteration (for --search)");
  cmd->add_flag("--search", f->search,
                "Search for the sharding that trains fastest in simulation: each table group's kinds are simulated "
                "in turn, heaviest first, and kept when faster (experiments/plan_search.h)");
  cmd->add_option("--search-budget", options->search_budget, "Most iterations --search simulates")
      ->check(in_range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "Simulations run in parallel by --search (0: all cores)")
      ->check(in_range(0, 1024));
  cmd->add_flag("--skip-memory-check", f->skip_memory_check,
                "--search: simulate even when the estimated memory exceeds what this machine has available");
  cmd->add_option("--emit-sharding", f->emit_sharding,
                  "Write the plan as a sharding file that pins every table (edit it, then whatif --sharding FILE)")
      ->option_text("FILE");
  auto sources = add_algorithm_options(*cmd);
  cmd->parse_complete_callback([request, options, batch, sources, f, action = context.action] {
    *action = [request, options, batch, sources, f](std::ostream& out) {
      WhatIfOptions o = *options;
      o.cluster = *request;
      o.plugins = sources->plugins;
      o.schedules = sources->schedules;
      o.algorithm_options = parse_algorithm_options(sources->options);
      apply_model_flags(*batch, o);
      for (const auto& [kind, name] : parse_algorithm_flags(f->algorithms)) o.algorithms[kind] = name;
      std::vector<std::string> used;
      for (const auto& [kind, name] : o.algorithms) used.push_back(name);
      check_algorithm_options_used(o.algorithm_options, used);
      o.fused_embeddings = !f->unfused;
      o.memory_check = !f->skip_memory_check;
      o.pipeline_input = !f->no_pipeline;
      o.prefetch_cache = f->prefetch_cache;
      if (!o.cluster.degradations.empty() && !f->search) {
        // The planner plans for healthy hardware (as TorchRec's does): a
        // degraded part changes only what --search simulates.
        throw InputError(Diagnostic{"--degrade", "",
                                    "changes only simulated iterations, and the planner plans for healthy hardware: "
                                    "add --search (the plan that trains fastest on the degraded cluster), or use "
                                    "whatif"});
      }
      return run(o, *f, out);
    };
  });
}

}  // namespace zx::tools
