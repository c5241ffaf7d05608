#include "models/dlrm/sharding.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/dlrm/internal/placement.h"
#include "models/dlrm/memory.h"

namespace zx::models {
namespace {

using internal::column_shards;
using internal::format_bytes;
using internal::place_tables;

struct SchemeName {
  const char* name;
  ShardingKind kind;
};
constexpr SchemeName kSchemes[] = {{"table_wise", ShardingKind::kTableWise},
                                   {"row_wise", ShardingKind::kRowWise},
                                   {"column_wise", ShardingKind::kColumnWise},
                                   {"table_row_wise", ShardingKind::kTableRowWise},
                                   {"data_parallel", ShardingKind::kDataParallel}};

struct MemoryName {
  const char* name;
  TableMemory memory;
};
constexpr MemoryName kMemories[] = {
    {"auto", TableMemory::kAuto}, {"hbm", TableMemory::kHbm}, {"host", TableMemory::kHost}};

}  // namespace

std::string_view to_string(ShardingKind kind) {
  for (const SchemeName& s : kSchemes) {
    if (s.kind == kind) return s.name;
  }
  return "unknown";
}

std::string_view to_string(TableMemory memory) {
  for (const MemoryName& m : kMemories) {
    if (m.memory == memory) return m.name;
  }
  return "unknown";
}

std::vector<std::string> sharding_scheme_names() {
  std::vector<std::string> names = {"auto"};
  for (const SchemeName& s : kSchemes) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

double ShardingPlan::load_imbalance() const {
  if (gpus.empty()) return 1.0;
  double max = 0;
  double sum = 0;
  for (const GpuLoad& g : gpus) {
    max = std::max(max, g.embedding_seconds);
    sum += g.embedding_seconds;
  }
  // The max is at least the mean; rounding in the mean must not say otherwise.
  return sum > 0 ? std::max(1.0, max / (sum / static_cast<double>(gpus.size()))) : 1.0;
}

double ShardingPlan::max_hbm_bytes() const {
  double max = 0;
  for (const GpuLoad& g : gpus) max = std::max(max, g.hbm_bytes);
  return max;
}

std::int64_t ShardingPlan::host_memory_tables() const {
  return std::count_if(tables.begin(), tables.end(), [](const TablePlacement& t) { return t.host_memory; });
}

ShardingPlan plan_sharding(const DlrmModel& model, int num_gpus, int gpus_per_node,
                           const DeviceProfile& device, const ShardingOptions& options) {
  // Embeddings go into HBM less the reserve; each GPU then needs its
  // iteration's dense state, activations and exchange buffers
  // (models/dlrm/memory.h) within the reserve, less the headroom. When one
  // needs more, plan again with the reserve it needs: a larger batch leaves
  // less HBM to embeddings.
  const double capacity = static_cast<double>(device.hbm_capacity.count());
  ShardingOptions o = options;
  ShardingPlan plan;
  for (int pass = 0;; ++pass) {
    std::vector<std::int64_t> fell_back;
    plan = place_tables(model, num_gpus, gpus_per_node, device, o, /*spread_in_host=*/true, fell_back);
    // Tables that went row-wise during the placement are placed again as
    // row-wise from the start, with the fixed placements, as a sharding file
    // of the plan (--emit-sharding) places them: the same plan to the bit.
    ShardingOptions again = o;
    for (int round = 0; plan.fits && !fell_back.empty() && round < 8; ++round) {
      for (const std::int64_t t : fell_back) {
        again.overrides.push_back({.table = t, .kind = ShardingKind::kRowWise, .memory = TableMemory::kHost});
      }
      plan = place_tables(model, num_gpus, gpus_per_node, device, again, /*spread_in_host=*/true, fell_back);
    }
    // Host memory holds fewer tables whole per node than spread over all:
    // when that leaves no room, the tables go row-wise over every GPU.
    if (!plan.fits) {
      ShardingPlan spread = std::move(plan);
      plan = place_tables(model, num_gpus, gpus_per_node, device, o, /*spread_in_host=*/false, fell_back);
      // Neither fits: the first plan's reason, the planner's own choice.
      if (!plan.fits) plan.reason = spread.reason;
    }
    plan.hbm_reserve_fraction = o.hbm_reserve_fraction;
    if (!plan.fits) return plan;
    double needed = 0;  // the largest iteration memory of a GPU
    int worst = 0;
    bool over = false;
    const std::vector<IterationMemory> memory =
        iteration_memory(model, plan, o.batch_per_gpu, num_gpus, o.dense_optimizer, o.index_bytes);
    for (int r = 0; r < num_gpus; ++r) {
      GpuLoad& g = plan.gpus[static_cast<std::size_t>(r)];
      g.iteration_bytes = memory[static_cast<std::size_t>(r)].total_bytes();
      over |= g.hbm_bytes + g.iteration_bytes > capacity * (1 - kHbmHeadroomFraction);
      if (g.iteration_bytes > needed) {
        needed = g.iteration_bytes;
        worst = r;
      }
    }
    if (!over) return plan;
    const double reserve = std::max(needed / capacity + kHbmHeadroomFraction, o.hbm_reserve_fraction + 0.01);
    if (reserve >= 1 || pass == 4) {
      const IterationMemory& m = memory[static_cast<std::size_t>(worst)];
      plan.fits = false;
      plan.reason = fmt::format(
          "GPU {} needs {} of HBM for the iteration besides its embeddings ({} dense weights, gradients and "
          "optimizer state, {} activations, {} pooled embeddings, gradients and indices at {} samples per GPU) "
          "and {} for its embeddings, with {} of {} kept as headroom",
          worst, format_bytes(m.total_bytes()), format_bytes(m.dense_state_bytes), format_bytes(m.activation_bytes),
          format_bytes(m.exchange_bytes), o.batch_per_gpu,
          format_bytes(plan.gpus[static_cast<std::size_t>(worst)].hbm_bytes),
          format_bytes(capacity * kHbmHeadroomFraction), format_bytes(capacity));
      return plan;
    }
    o.hbm_reserve_fraction = reserve;
  }
}

namespace {

// The model's table groups: each name's tables, [first, end) among the
// expanded tables, and how many tables there are.
struct GroupIndex {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>, std::less<>> ranges;
  std::vector<std::string> names;
  std::int64_t tables = 0;
};

GroupIndex index_groups(const DlrmModel& model) {
  GroupIndex index;
  for (const TableGroup& g : model.tables) {
    index.ranges[g.name] = {index.tables, index.tables + g.count};
    index.names.push_back(g.name);
    index.tables += g.count;
  }
  return index;
}

// What one entry of "tables" names: a table or a group (one of them when the
// entry is valid).
struct EntryTarget {
  bool by_table = false;
  bool by_group = false;
  std::int64_t table = -1;
  std::string group;
};

// The entry that named each table and group first: each is named once.
struct NamedAt {
  std::map<std::int64_t, std::size_t> tables;
  std::map<std::string, std::size_t> groups;
};

// Reads entry i's "table" or "group"; reports names given twice, or both or
// neither given.
EntryTarget read_target(json::ObjectReader& t, std::size_t i, const GroupIndex& groups, NamedAt& named) {
  EntryTarget target;
  target.by_table = t.read_int("table", target.table, json::IntRange{0, std::max<std::int64_t>(0, groups.tables - 1)});
  target.by_group = t.read_enum("group", target.group, groups.names);
  if (target.by_table && !named.tables.emplace(target.table, i).second) {
    t.error("table", fmt::format("table {} is placed by /tables/{} already; name each table once", target.table,
                                 named.tables[target.table]));
  }
  if (target.by_group && !named.groups.emplace(target.group, i).second) {
    t.error("group", fmt::format("group '{}' is placed by /tables/{} already; name each group once", target.group,
                                 named.groups[target.group]));
  }
  if (target.by_table == target.by_group && !t.has("table") && !t.has("group")) t.error("", "give 'table' or 'group'");
  if (t.has("table") && t.has("group")) t.error("", "give 'table' or 'group', not both");
  return target;
}

// The dimension of the table or group an entry names, to check its column
// shards; -1 when it names neither.
std::int64_t target_dim(const DlrmModel& model, const EntryTarget& target) {
  std::int64_t dim = -1;
  if (target.by_table) {
    std::int64_t end = 0;
    for (const TableGroup& g : model.tables) {
      end += g.count;
      if (target.table < end) {
        dim = g.dim;
        break;
      }
    }
  } else if (target.by_group) {
    for (const TableGroup& g : model.tables) {
      if (g.name == target.group) dim = g.dim;
    }
  }
  return dim;
}

// "columns": the column shards' widths, which add up to `dim`. Whether they
// are usable to check "ranks" against.
bool read_columns(json::ObjectReader& t, std::int64_t dim, bool kind_ok, TableOverride& o) {
  const bool column_wise = kind_ok && o.kind == ShardingKind::kColumnWise;
  bool columns_ok = true;
  if (auto columns = t.array("columns")) {
    std::int64_t sum = 0;
    for (std::size_t k = 0; k < columns->size(); ++k) {
      std::int64_t width = 0;
      columns_ok = columns->read_int(k, width, json::IntRange{1, std::max<std::int64_t>(1, dim)}) && columns_ok;
      o.columns.push_back(width);
      sum += width;
    }
    if (kind_ok && !column_wise) {
      t.error("columns", "columns split column-wise tables only");
      columns_ok = false;
    } else if (columns_ok && dim > 0 && sum != dim) {
      t.error("columns", fmt::format("the column shards' widths add up to {}; the table's dim is {}", sum, dim));
      columns_ok = false;
    }
  }
  return columns_ok;
}

// "ranks": the GPU of each column shard, one per entry of "columns", else
// one per column shard of at most `shard_dim` columns.
void read_ranks(json::ObjectReader& t, int num_gpus, std::int64_t dim, std::int64_t shard_dim, bool kind_ok,
                bool columns_ok, TableOverride& o) {
  auto ranks = t.array("ranks");
  if (!ranks) return;
  const bool column_wise = kind_ok && o.kind == ShardingKind::kColumnWise;
  bool ranks_ok = true;
  for (std::size_t k = 0; k < ranks->size(); ++k) {
    std::int64_t rank = -1;
    ranks_ok = ranks->read_int(k, rank, json::IntRange{0, num_gpus - 1}) && ranks_ok;
    o.ranks.push_back(static_cast<int>(rank));
  }
  if (kind_ok && !column_wise) {
    t.error("ranks", "ranks place column-wise tables only (a table-wise table takes 'rank')");
  } else if (kind_ok && !o.columns.empty() && columns_ok && ranks_ok && o.ranks.size() != o.columns.size()) {
    t.error("ranks", fmt::format("expected {} ranks, one per entry of 'columns', got {}", o.columns.size(),
                                 o.ranks.size()));
  } else if (kind_ok && o.columns.empty() && dim > 0 && ranks_ok &&
             static_cast<std::int64_t>(o.ranks.size()) != column_shards(dim, shard_dim)) {
    t.error("ranks", fmt::format("expected {} ranks, one per column shard of at most {} columns (dim {}), got {}",
                                 column_shards(dim, shard_dim), shard_dim, dim, o.ranks.size()));
  }
}

// "memory": hbm, host or auto; never host for a data-parallel table.
void read_memory(json::ObjectReader& t, bool kind_ok, TableOverride& o) {
  std::string memory;
  std::vector<std::string> memories;
  for (const MemoryName& m : kMemories) memories.emplace_back(m.name);
  if (!t.read_enum("memory", memory, memories)) return;
  for (const MemoryName& m : kMemories) {
    if (memory == m.name) o.memory = m.memory;
  }
  // A data-parallel table is a copy in every GPU's HBM; in host memory
  // it would silently become another kind.
  if (kind_ok && o.kind == ShardingKind::kDataParallel && o.memory == TableMemory::kHost) {
    t.error("memory", "a data_parallel table is a copy in every GPU's HBM and cannot live in host memory; "
                      "place it table_wise, row_wise or table_row_wise there");
  }
}

// Reads entry i of "tables" and adds its overrides: to `from_tables` for a
// table, one per table of a group to `from_groups`. An entry without a valid
// kind adds none (its errors are reported).
void read_entry(json::ObjectReader& t, std::size_t i, const DlrmModel& model, const GroupIndex& groups,
                int num_gpus, int gpus_per_node, std::int64_t shard_dim, NamedAt& named,
                std::vector<TableOverride>& from_groups, std::vector<TableOverride>& from_tables) {
  const EntryTarget target = read_target(t, i, groups, named);
  std::vector<std::string> kinds;
  for (const SchemeName& s : kSchemes) kinds.emplace_back(s.name);
  std::string kind;
  t.require("kind");
  const bool kind_ok = t.read_enum("kind", kind, kinds);
  TableOverride o;
  for (const SchemeName& s : kSchemes) {
    if (kind == s.name) o.kind = s.kind;
  }
  t.read_int("rank", o.rank, json::IntRange{0, num_gpus - 1});
  t.read_int("node", o.node, json::IntRange{0, num_gpus / gpus_per_node - 1});
  if (o.rank >= 0 && kind_ok && o.kind != ShardingKind::kTableWise) {
    t.error("rank", "a rank places table-wise tables only");
  }
  if (o.node >= 0 && kind_ok && o.kind != ShardingKind::kTableRowWise) {
    t.error("node", "a node places table-row-wise tables only");
  }
  const std::int64_t dim = target_dim(model, target);
  const bool columns_ok = read_columns(t, dim, kind_ok, o);
  read_ranks(t, num_gpus, dim, shard_dim, kind_ok, columns_ok, o);
  read_memory(t, kind_ok, o);
  t.finish();
  if (!kind_ok) return;
  if (target.by_table) {
    o.table = target.table;
    from_tables.push_back(o);
  } else if (target.by_group) {
    const auto [begin, end] = groups.ranges.find(target.group)->second;
    for (std::int64_t k = begin; k < end; ++k) {
      o.table = k;
      from_groups.push_back(o);
    }
  }
}

}  // namespace

ShardingOptions parse_sharding_file(std::string_view text, const std::string& source, const DlrmModel& model,
                                    int num_gpus, int gpus_per_node) {
  json::Document doc = json::Document::parse(text, source);
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {1});
  root.allow("description");
  std::string for_model;
  if (root.read_string("model", for_model) && for_model != model.name) {
    root.error("model", fmt::format("this file places the tables of model '{}'; the run's model is '{}'", for_model,
                                    model.name));
  }
  ShardingOptions options;
  root.read_enum("default", options.scheme, sharding_scheme_names());
  const GroupIndex groups = index_groups(model);
  // Each table and group is named once; a table's own entry wins over a
  // group's that includes it, wherever it stands (group entries go first).
  NamedAt named;
  std::vector<TableOverride> from_groups;
  std::vector<TableOverride> from_tables;
  if (auto list = root.array("tables")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader t = list->object(i);
      read_entry(t, i, model, groups, num_gpus, gpus_per_node, options.column_shard_dim, named, from_groups,
                 from_tables);
    }
  }
  // Later overrides win: tables' own entries after the groups'.
  options.overrides = std::move(from_groups);
  options.overrides.insert(options.overrides.end(), from_tables.begin(), from_tables.end());
  root.finish();
  doc.throw_if_errors();
  return options;
}

std::string sharding_file_text(const ShardingPlan& plan, int gpus_per_node, const std::string& description,
                               const std::string& model) {
  std::string text = fmt::format("{{\n  \"schema_version\": 1,\n  \"description\": {},\n{}  \"default\": \"auto\",\n"
                                 "  \"tables\": [",
                                 nlohmann::json(description).dump(),
                                 model.empty() ? "" : fmt::format("  \"model\": {},\n", nlohmann::json(model).dump()));
  for (std::size_t i = 0; i < plan.tables.size(); ++i) {
    const TablePlacement& t = plan.tables[i];
    text += fmt::format("{}\n    {{\"table\": {}, \"kind\": \"{}\"", i == 0 ? "" : ",", t.table, to_string(t.kind));
    switch (t.kind) {
      case ShardingKind::kTableWise:
        text += fmt::format(", \"rank\": {}", t.shards.front().rank);
        break;
      case ShardingKind::kColumnWise: {
        std::vector<int> ranks;
        for (const Shard& s : t.shards) ranks.push_back(s.rank);
        std::vector<std::int64_t> columns;
        for (const Shard& s : t.shards) columns.push_back(s.dim);
        text += fmt::format(", \"columns\": [{}], \"ranks\": [{}]", fmt::join(columns, ", "), fmt::join(ranks, ", "));
        break;
      }
      case ShardingKind::kTableRowWise:
        text += fmt::format(", \"node\": {}", t.shards.front().rank / gpus_per_node);
        break;
      case ShardingKind::kRowWise:
      case ShardingKind::kDataParallel:
        break;
    }
    text += fmt::format(", \"memory\": \"{}\"}}", t.host_memory ? "host" : "hbm");
  }
  text += "\n  ]\n}\n";
  return text;
}

ShardingOptions load_sharding_file(const std::string& path, const DlrmModel& model, int num_gpus,
                                   int gpus_per_node) {
  json::Document doc = json::Document::load_file(path);
  return parse_sharding_file(doc.value().dump(), path, model, num_gpus, gpus_per_node);
}

}  // namespace zx::models
