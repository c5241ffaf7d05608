// File: experiments/plan_report.h
//
// The report of `zionsim plan`: the embedding sharding plan of one cluster
// size, as the planner (or a sharding file, or the sharding search) makes
// it. Per GPU: its shards, HBM for embeddings and for the iteration, host
// memory, the planner's estimate of its embedding work, and the payload of
// the embedding exchange it sends and receives; per sharding kind: tables,
// size and how many sit in host memory; per table: where it went.
//
// The tabular parts have a schema each (experiments/result_schema.h): the
// per-GPU rows, the per-table rows and the per-kind rows, from which the
// table, the CSV and the JSON arrays are written. The rest (the table's
// header, summary and notes, the JSON's top-level keys and nesting) is
// written by hand here. tools/plan_command.cc reads the flags and calls
// these.

#ifndef ZIONSIM_EXPERIMENTS_PLAN_REPORT_H_
#define ZIONSIM_EXPERIMENTS_PLAN_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/plan_search.h"
#include "experiments/result_schema.h"
#include "experiments/whatif.h"
#include "models/dlrm/sharding.h"
#include "models/execution/op_graph.h"

namespace zx::experiments {

/// One GPU of the plan.
struct PlanGpu {
  int rank = 0;
  int node = 0;
  std::int64_t shards = 0;
  double hbm_bytes = 0;        ///< embeddings: weights, state, host-memory tables' caches
  double iteration_bytes = 0;  ///< HBM the iteration needs besides embeddings
  double host_bytes = 0;       ///< its host-memory shards' bytes in its node's host memory
  double embedding_ms = 0;     ///< the planner's estimate of its TBE forward + backward
  std::int64_t sent_bytes = 0;      ///< embedding exchange payload leaving the GPU
  std::int64_t received_bytes = 0;  ///< and arriving at it
};

/// The tables of one sharding kind.
struct PlanKind {
  std::string kind;  ///< models::to_string(ShardingKind)
  std::int64_t tables = 0;
  double bytes = 0;  ///< weights and row-wise state (plan_table_bytes)
  std::int64_t host_memory_tables = 0;
};

/// Least, mean and largest of a quantity over GPUs (or nodes).
struct PlanStats {
  double min = 0;
  double mean = 0;
  double max = 0;
  /// max / mean; 1 when the mean is not positive.
  double max_over_mean() const { return mean > 0 ? max / mean : 1.0; }
};

struct PlanReport {
  /// The options planned with: with --search, its choices appended to
  /// sharding_overrides.
  WhatIfOptions options;
  PlannedSize size;
  std::vector<PlanGpu> gpus;  ///< by rank; empty when the plan does not fit
  std::optional<SearchResult> search;

  bool fits() const { return size.plan.fits; }
};

/// The plan of `o` at `nodes` (plan_whatif_size), and each GPU's row: the
/// planner's loads and the exchange of the iteration whatif would simulate
/// (add_exchange). With `search`, first the sharding search from `o`
/// (search_sharding, at most o.search_budget simulations; a progress line
/// through write_progress at most every 10 s), the plan then with its
/// choices. Throws zx::InputError for bad input, or (search) when the
/// starting plan does not fit; a plan that does not fit otherwise comes
/// back with fits() false and no GPU rows.
PlanReport make_plan_report(const WhatIfOptions& o, int nodes, bool search = false);

/// Adds to `gpus` (indexed by rank) the payload of every embedding exchange
/// of `graph` (indices and pooled-embedding all-to-alls, reduce-scatters and
/// all-gathers of row-wise shards): what must leave each GPU and arrive at
/// it, whatever algorithm carries it. The dense all-reduce is not counted.
void add_exchange(const models::OpGraph& graph, std::vector<PlanGpu>& gpus);

/// A table's bytes: its rows x (dim x element size + 4), weights and
/// row-wise AdaGrad state.
double plan_table_bytes(const PlannedSize& size, const models::TablePlacement& table);

/// "0-7,16,18-19": the GPUs of a table's shards, in ranges.
std::string rank_ranges(const models::TablePlacement& table);

/// The tables by sharding kind, in the kinds' alphabetical order.
std::vector<PlanKind> plan_kinds(const PlanReport& report);

/// Over `values` (not empty), in their order.
PlanStats plan_stats(const std::vector<double>& values);

/// Each node's host memory taken by its GPUs' host-memory shards (bytes).
std::vector<double> node_host_bytes(const PlanReport& report);

/// The `count` of `gpus` with the most embedding work, busiest first (ties:
/// in their order).
std::vector<PlanGpu> busiest_gpus(std::vector<PlanGpu> gpus, std::size_t count);

/// The per-GPU rows: the table's GPU, node, shards, HBM, share of the
/// budget, embedding time and exchange (MB); the CSV's and JSON's bytes and
/// GB. JSON and the CSV list iteration_hbm_gbyte and host_gbyte at
/// different places, so each has a column of its own for them.
Schema plan_gpu_schema();
std::vector<Row> plan_gpu_rows(const PlanReport& report, const std::vector<PlanGpu>& gpus);

/// The per-table rows (the plan's tables in order): group, kind, memory
/// (the table's shows a host-memory table's hit rate), rows, dim, size, the
/// GPUs (table and CSV), the hit rate (CSV and JSON) and the shards (JSON).
Schema plan_table_schema();
std::vector<Row> plan_table_rows(const PlanReport& report);

/// The per-kind rows (table and JSON).
Schema plan_kind_schema();
std::vector<Row> plan_kind_rows(const PlanReport& report);

/// The table: the plan's header line, the search, the kinds, the per-GPU
/// summary (and per node, with host-memory tables), the notes, the busiest
/// GPUs (`per_gpu`: every GPU) and with `per_table` every table.
void write_plan_table(std::ostream& out, const PlanReport& report, bool per_gpu, bool per_table);

/// The JSON document (schema_version 1; docs/output_formats.md).
nlohmann::ordered_json plan_report_json(const PlanReport& report);

/// The CSV: a row per GPU, or with `per_table` per table. Throws
/// zx::InputError naming --format when the plan does not fit.
void write_plan_csv(std::ostream& out, const PlanReport& report, bool per_table);

/// The plan as a sharding file that pins every table
/// (models::sharding_file_text), described as this size's. The plan must
/// fit.
std::string plan_sharding_file(const PlanReport& report);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_PLAN_REPORT_H_
