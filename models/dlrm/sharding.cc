#include "models/dlrm/sharding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/compute/cost_models.h"
#include "models/dlrm/cache_model.h"
#include "models/dlrm/memory.h"

namespace zx::models {
namespace {

constexpr double kRowStateBytes = 4;  // row-wise AdaGrad: one fp32 per row
// How many GPUs' shares of the exchange one table may take before auto
// spreads it. Tuned, not derived: in DLRM-DCNv2 on 2 to 32 ZionEX nodes, A100
// and H100, 3 never trained slower than keeping tables whole, while 1 to 2
// lost up to 10% on 2 nodes and 4 to 6 left gains at 4 and 8 nodes.
constexpr double kSpreadExchangeShares = 3;
// Balancing (place_tables): a table placed whole is split column-wise when it
// took its GPU more than this share above the mean embedding work, into at
// most kMostBalancingShards shards, if that lowers the busiest GPU's work by
// at least kSplitGain. Chosen, not derived: 2% leaves LPT's small unevenness
// among unequal tables alone; model A's 4,096 tables at 24, 48 and 96 nodes
// (192, 384, 768 GPUs) balance exactly with 3 shards each.
constexpr double kSplitTolerance = 0.02;
constexpr double kSplitGain = 0.01;
constexpr std::int64_t kMostBalancingShards = 8;

struct SchemeName {
  const char* name;
  ShardingKind kind;
};
constexpr SchemeName kSchemes[] = {{"table_wise", ShardingKind::kTableWise},
                                   {"row_wise", ShardingKind::kRowWise},
                                   {"column_wise", ShardingKind::kColumnWise},
                                   {"table_row_wise", ShardingKind::kTableRowWise},
                                   {"data_parallel", ShardingKind::kDataParallel}};

std::int64_t column_shards(std::int64_t dim, std::int64_t shard_dim) { return (dim + shard_dim - 1) / shard_dim; }

std::string format_bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.2f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.1f} MB", bytes / 1e6);
}

// One table to place, with its estimates.
struct Candidate {
  std::int64_t table;
  std::int64_t group;
  std::int64_t rows;
  std::int64_t dim;
  double pooling;
  double bytes;    // weights + row-wise state
  double seconds;  // fused TBE forward + backward for all global lookups
  ShardingKind kind;
  bool host = false;
  double hit = 1.0;  // host: the HBM cache's hit rate
  // auto chose table-row-wise in host memory: a node's GPUs cannot hold the
  // table in HBM; if no node has host memory left for it, it goes row-wise.
  bool needs_host = false;
};

// A piece to place on a GPU by the LPT pass.
struct Piece {
  std::size_t placement;  // index into plan.tables
  std::int64_t rows;
  std::int64_t dim;
  double share;
  double bytes;
  double seconds;
  int fixed_rank = -1;  // where a sharding file pins it; -1: the planner chooses
  int column_shard = -1;  // column-wise: which shard, for messages
};

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

namespace {

// One placement with options.hbm_reserve_fraction of HBM kept back.
// `spread_in_host`: auto may put a table too large for a node's HBM
// table-row-wise in a node's host memory (else row-wise over every GPU);
// those no node had host memory left for went row-wise instead, during the
// placement, and are listed in `fell_back`.
ShardingPlan place_tables(const DlrmModel& model, int num_gpus, int gpus_per_node, const DeviceProfile& device,
                          const ShardingOptions& options, bool spread_in_host,
                          std::vector<std::int64_t>& fell_back) {
  fell_back.clear();
  const std::vector<std::string> schemes = sharding_scheme_names();
  if (std::find(schemes.begin(), schemes.end(), options.scheme) == schemes.end()) {
    std::string message = fmt::format("unknown sharding scheme '{}'", options.scheme);
    if (auto guess = json::closest_match(options.scheme, schemes)) {
      message += fmt::format(" (did you mean '{}'?)", *guess);
    }
    throw InputError(Diagnostic{"--sharding", "", message + fmt::format("; valid: {}", fmt::join(schemes, ", "))});
  }
  if (num_gpus < 1 || gpus_per_node < 1 || num_gpus % gpus_per_node != 0 || options.batch_per_gpu < 1 ||
      !(options.hbm_reserve_fraction >= 0 && options.hbm_reserve_fraction < 1) ||
      !(options.host_cache_hit_rate >= 0 && options.host_cache_hit_rate <= 1) ||
      !(options.host_cache_fraction > 0 && options.host_cache_fraction <= 1) ||
      (options.index_zipf_alpha && !(*options.index_zipf_alpha >= 0 && *options.index_zipf_alpha <= 10)) ||
      (options.index_bytes != 4 && options.index_bytes != 8)) {
    throw InputError(Diagnostic{"sharding", "",
                                fmt::format("invalid sharding request: {} GPUs in servers of {}, batch "
                                            "{}, reserve {}, hit rate {}, cache fraction {}, Zipf alpha {}",
                                            num_gpus, gpus_per_node, options.batch_per_gpu,
                                            options.hbm_reserve_fraction, options.host_cache_hit_rate,
                                            options.host_cache_fraction, options.index_zipf_alpha.value_or(-1))});
  }
  const int num_nodes = num_gpus / gpus_per_node;
  // Host memory one node lends to tables.
  const double node_host_capacity = options.host_memory_bytes_per_node * options.host_memory_usable_fraction;
  const double host_capacity = node_host_capacity * num_nodes;
  const std::int64_t global_batch = options.batch_per_gpu * num_gpus;
  const int elem = element_bytes(model.embedding_type);

  ShardingPlan plan;
  plan.gpus.resize(static_cast<std::size_t>(num_gpus));
  plan.host_cache_hit_rate = options.host_cache_hit_rate;
  plan.hbm_budget_bytes =
      static_cast<double>(device.hbm_capacity.count()) * (1.0 - options.hbm_reserve_fraction);
  const double total_budget = plan.hbm_budget_bytes * num_gpus;

  // Cost of a full table (all global lookups), per distinct shape.
  const auto table_seconds = [&](std::int64_t dim, double pooling) {
    const EmbeddingShape shape{.batch = global_batch,
                               .tables = 1,
                               .pooling = pooling,
                               .dim = dim,
                               .weight_type = model.embedding_type,
                               .output_type = model.embedding_type,
                               .index_bytes = options.index_bytes};
    // Per-kernel fixed costs (launches, the backward's sort) are paid once
    // per GPU, not per table: left out of a table's share.
    const sim::Duration t = embedding_forward_fused(device, shape).time +
                            embedding_backward_fused(device, shape).time - device.kernel_launch * 2 -
                            sim::Duration::from_ns_ceil(device.embedding_backward_overhead_ns);
    return t.to_seconds();
  };
  // A host-memory table's kernel reads its HBM cache after the misses were
  // fetched over the host link (the evicted rows go back the other way at
  // the same time; workloads/dlrm_iteration.cc).
  const auto host_seconds = [&](const Candidate& c) {
    const double misses = (1.0 - c.hit) * static_cast<double>(global_batch) * c.pooling;
    const double row = static_cast<double>(c.dim * elem);
    return c.seconds + misses * row / static_cast<double>(device.host_to_device_bandwidth.count());
  };
  // A host-memory table's hit rate: the fixed one, or an LRU cache of the
  // cache fraction of each shard's rows under Zipf lookups (a shard of a
  // row-wise table sees the table's skew over its share of the rows).
  std::map<std::pair<std::int64_t, double>, double> lru_hits;
  const auto hit_rate = [&](const Candidate& c) {
    // --index-zipf-alpha, else the table group's own skew, else the fixed rate.
    const std::optional<double> alpha =
        options.index_zipf_alpha ? options.index_zipf_alpha : model.tables[static_cast<std::size_t>(c.group)].zipf_alpha;
    if (!alpha) return options.host_cache_hit_rate;
    const int parts = c.kind == ShardingKind::kRowWise        ? num_gpus
                      : c.kind == ShardingKind::kTableRowWise ? gpus_per_node
                                                              : 1;
    const std::int64_t rows = std::max<std::int64_t>(1, c.rows / parts);
    const auto key = std::pair{rows, *alpha};
    auto it = lru_hits.find(key);
    if (it == lru_hits.end()) {
      it = lru_hits
               .emplace(key, lru_hit_rate_zipf(static_cast<double>(rows),
                                               options.host_cache_fraction * static_cast<double>(rows), *alpha))
               .first;
    }
    return it->second;
  };

  // Expand the groups into tables and choose each table's kind.
  std::vector<Candidate> candidates;
  for (std::size_t g = 0; g < model.tables.size(); ++g) {
    const TableGroup& group = model.tables[g];
    const double bytes = static_cast<double>(group.rows) * (static_cast<double>(group.dim * elem) + kRowStateBytes);
    const double seconds = table_seconds(group.dim, group.pooling);
    for (std::int64_t i = 0; i < group.count; ++i) {
      Candidate c{.table = static_cast<std::int64_t>(candidates.size()),
                  .group = static_cast<std::int64_t>(g),
                  .rows = group.rows,
                  .dim = group.dim,
                  .pooling = group.pooling,
                  .bytes = bytes,
                  .seconds = seconds,
                  .kind = ShardingKind::kTableWise};
      if (options.scheme != "auto") {
        for (const SchemeName& s : kSchemes) {
          if (options.scheme == s.name) c.kind = s.kind;
        }
      } else if (num_gpus > 1 && bytes <= options.data_parallel_max_bytes) {
        c.kind = ShardingKind::kDataParallel;
      } else if (bytes > plan.hbm_budget_bytes / 2) {
        // Spread over one node's GPUs (table-row-wise): in their HBM when a
        // share fits half a GPU's budget, else in the node's host memory
        // behind their caches. Row-wise over every GPU instead makes each
        // GPU reduce-scatter the whole global batch's partial pools of the
        // table, which grows with the cluster (model F on 64 ZionEX nodes:
        // 116.9 ms row-wise, 9.5 ms table-row-wise in host memory).
        if (num_nodes > 1 && bytes / gpus_per_node <= plan.hbm_budget_bytes / 2) {
          c.kind = ShardingKind::kTableRowWise;
        } else if (spread_in_host && num_nodes > 1 && bytes <= node_host_capacity &&
                   bytes * options.host_cache_fraction / gpus_per_node <= plan.hbm_budget_bytes / 2) {
          c.kind = ShardingKind::kTableRowWise;
          c.needs_host = true;
        } else {
          c.kind = ShardingKind::kRowWise;
        }
      }
      candidates.push_back(c);
    }
  }
  // auto, across nodes: a table whose exchange would cross its owner's NIC
  // more than kSpreadExchangeShares GPUs' shares of every table's exchange
  // (its lookups' indices in, its pooled embeddings out and their gradients
  // back, per sample) goes table-row-wise, spread over one node's GPUs and
  // NICs. Table-wise, a few such tables make their owners' NICs the
  // iteration's bottleneck (DLRM-DCNv2's 26 tables on 16 H100 nodes: 8.5 ms
  // table-wise, 2.5 ms spread); many small tables (models A and I) stay whole.
  if (options.scheme == "auto" && num_nodes > 1) {
    const auto exchange = [&](const Candidate& c) {
      return c.pooling * options.index_bytes + 2.0 * static_cast<double>(c.dim * elem);
    };
    double total = 0;
    for (const Candidate& c : candidates) {
      if (c.kind != ShardingKind::kDataParallel) total += exchange(c);
    }
    for (Candidate& c : candidates) {
      if (c.kind == ShardingKind::kTableWise && exchange(c) > kSpreadExchangeShares * total / num_gpus) {
        c.kind = ShardingKind::kTableRowWise;
      }
    }
  }
  // Sharding-file choices win over the scheme.
  std::vector<const TableOverride*> override_of(candidates.size(), nullptr);
  for (const TableOverride& o : options.overrides) {
    if (o.table < 0 || o.table >= static_cast<std::int64_t>(candidates.size())) {
      throw InputError(Diagnostic{"sharding", "", fmt::format("table {} does not exist ({} tables)", o.table,
                                                              candidates.size())});
    }
    candidates[static_cast<std::size_t>(o.table)].kind = o.kind;
    candidates[static_cast<std::size_t>(o.table)].needs_host = false;  // the file decides
    override_of[static_cast<std::size_t>(o.table)] = &o;
  }

  // HBM demand; tables a sharding file puts in host memory go there, then
  // the largest of the others (unless pinned to HBM) move until the rest fits.
  const auto hbm_demand = [&](const Candidate& c) {
    if (c.host) return c.bytes * options.host_cache_fraction;
    return c.kind == ShardingKind::kDataParallel ? c.bytes * num_gpus : c.bytes;
  };
  const auto memory_of = [&](const Candidate& c) {
    const TableOverride* o = override_of[static_cast<std::size_t>(c.table)];
    return o != nullptr ? o->memory : TableMemory::kAuto;
  };
  double demand = 0;
  for (const Candidate& c : candidates) demand += hbm_demand(c);
  double host_bytes = 0;
  const auto move_to_host = [&](Candidate& c) {
    demand -= hbm_demand(c);
    c.host = true;
    // A replicated table in host memory would be replicated per node; keep
    // one copy, table-wise. Sharded tables keep their shards, each in host
    // memory with its own HBM cache.
    if (c.kind == ShardingKind::kDataParallel) c.kind = ShardingKind::kTableWise;
    c.hit = hit_rate(c);
    demand += hbm_demand(c);
    host_bytes += c.bytes;
  };
  for (Candidate& c : candidates) {
    if (c.needs_host) {
      // Table-row-wise in host memory while the nodes have room in total;
      // the rest row-wise, in HBM or host memory as the demand decides.
      c.needs_host = host_bytes + c.bytes <= host_capacity;
      if (c.needs_host) {
        move_to_host(c);
      } else {
        c.kind = ShardingKind::kRowWise;
      }
      continue;
    }
    if (memory_of(c) != TableMemory::kHost) continue;
    if (options.host_memory_bytes_per_node <= 0) {
      throw InputError(Diagnostic{"sharding", "",
                                  fmt::format("table {} is placed in host memory but host memory is disabled",
                                              c.table)});
    }
    move_to_host(c);
  }
  const double slack = 0.97;  // leave room for uneven packing
  if (demand > total_budget * slack || host_bytes > 0) {
    if (options.host_memory_bytes_per_node <= 0) {
      plan.fits = false;
      plan.reason = fmt::format(
          "{} needs {} of HBM for its embeddings (weights and row-wise state) but {} GPUs have {} after "
          "the {:g}% reserve, and host memory is disabled",
          model.name, format_bytes(demand), num_gpus, format_bytes(total_budget),
          options.hbm_reserve_fraction * 100);
      return plan;
    }
    std::vector<std::size_t> by_size(candidates.size());
    std::iota(by_size.begin(), by_size.end(), 0);
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](std::size_t a, std::size_t b) { return candidates[a].bytes > candidates[b].bytes; });
    for (std::size_t i : by_size) {
      if (demand <= total_budget * slack) break;
      Candidate& c = candidates[i];
      if (c.host || memory_of(c) == TableMemory::kHbm) continue;
      move_to_host(c);
    }
    if (demand > total_budget * slack || host_bytes > host_capacity) {
      plan.fits = false;
      plan.reason = fmt::format(
          "{} needs {} for its embeddings (weights and row-wise state): {} GPUs have {} of HBM after "
          "the {:g}% reserve and {} node{} {} of usable host memory (each table there keeps {:g}% of its "
          "size in HBM as its cache)",
          model.name, format_bytes(model.embedding_bytes() + kRowStateBytes * [&] {
            std::int64_t rows = 0;
            for (const TableGroup& t : model.tables) rows += t.count * t.rows;
            return static_cast<double>(rows);
          }()),
          num_gpus, format_bytes(total_budget), options.hbm_reserve_fraction * 100, num_nodes,
          num_nodes == 1 ? "" : "s", format_bytes(host_capacity), options.host_cache_fraction * 100);
      return plan;
    }
  }

  // Fixed placements first (row-wise and data-parallel), then LPT for the rest.
  std::vector<Piece> pieces;
  const auto place = [&](std::size_t placement, int rank, std::int64_t rows, std::int64_t dim,
                         double share, double bytes, double seconds) {
    plan.tables[placement].shards.push_back({rank, rows, dim, share});
    GpuLoad& g = plan.gpus[static_cast<std::size_t>(rank)];
    g.hbm_bytes += bytes;
    // A host-memory shard's HBM is its cache: cache fraction of its bytes.
    if (plan.tables[placement].host_memory) g.host_bytes += bytes / options.host_cache_fraction;
    g.embedding_seconds += seconds;
    ++g.shards;
  };
  const auto split_rows = [](std::int64_t rows, int parts, int i) {
    return rows / parts + (i < rows % parts ? 1 : 0);
  };
  for (const Candidate& c : candidates) {
    const std::size_t index = plan.tables.size();
    plan.tables.push_back({.table = c.table,
                           .group = c.group,
                           .kind = c.kind,
                           .host_memory = c.host,
                           .cache_hit_rate = c.host ? c.hit : 1.0});
    const double seconds = c.host ? host_seconds(c) : c.seconds;
    // HBM a shard takes: all of it, or only its cache when in host memory.
    const double hbm_bytes = c.host ? c.bytes * options.host_cache_fraction : c.bytes;
    switch (c.kind) {
      case ShardingKind::kRowWise:
        for (int r = 0; r < num_gpus; ++r) {
          const std::int64_t rows = split_rows(c.rows, num_gpus, r);
          const double share = static_cast<double>(rows) / static_cast<double>(c.rows);
          place(index, r, rows, c.dim, share, hbm_bytes * share, seconds * share);
        }
        break;
      case ShardingKind::kDataParallel:
        for (int r = 0; r < num_gpus; ++r) {
          place(index, r, c.rows, c.dim, 1.0 / num_gpus, c.bytes, seconds / num_gpus);
        }
        break;
      case ShardingKind::kColumnWise: {
        const TableOverride* fixed = override_of[static_cast<std::size_t>(c.table)];
        // The shards' widths: a sharding file's, else column_shard_dim each
        // (the last narrower).
        std::vector<std::int64_t> widths = fixed != nullptr ? fixed->columns : std::vector<std::int64_t>{};
        if (widths.empty()) {
          for (std::int64_t k = 0; k < column_shards(c.dim, options.column_shard_dim); ++k) {
            widths.push_back(std::min(options.column_shard_dim, c.dim - k * options.column_shard_dim));
          }
        } else if (std::any_of(widths.begin(), widths.end(), [](std::int64_t w) { return w < 1; }) ||
                   std::accumulate(widths.begin(), widths.end(), std::int64_t{0}) != c.dim) {
          throw InputError(Diagnostic{"sharding", "",
                                      fmt::format("table {}'s column shards are {} columns wide; they must be at "
                                                  "least 1 each and add up to its dim, {}",
                                                  c.table, fmt::join(widths, ", "), c.dim)});
        }
        const std::vector<int> no_ranks;
        const std::vector<int>& ranks = fixed != nullptr ? fixed->ranks : no_ranks;
        if (!ranks.empty() && ranks.size() != widths.size()) {
          throw InputError(Diagnostic{"sharding", "",
                                      fmt::format("table {} has {} column shards ({} columns wide; dim {}) but {} "
                                                  "ranks are given for them",
                                                  c.table, widths.size(), fmt::join(widths, ", "), c.dim,
                                                  ranks.size())});
        }
        for (std::size_t k = 0; k < widths.size(); ++k) {
          const std::int64_t dim = widths[k];
          const double fraction = static_cast<double>(dim) / static_cast<double>(c.dim);
          pieces.push_back({index, c.rows, dim, 1.0, hbm_bytes * fraction,
                            table_seconds(dim, c.pooling) * (c.host ? seconds / c.seconds : 1.0),
                            ranks.empty() ? -1 : ranks[k], static_cast<int>(k)});
        }
        break;
      }
      case ShardingKind::kTableRowWise:
        pieces.push_back({index, c.rows, c.dim, 1.0, hbm_bytes, seconds});
        break;
      case ShardingKind::kTableWise: {
        const TableOverride* fixed = override_of[static_cast<std::size_t>(c.table)];
        pieces.push_back({index, c.rows, c.dim, 1.0, hbm_bytes, seconds, fixed != nullptr ? fixed->rank : -1});
        break;
      }
    }
  }

  // Longest processing time first: biggest cost, then biggest bytes, then
  // table. False, with plan.fits and plan.reason set, when a piece has no
  // room. `over`, when given, collects the tables that balancing may split
  // (splittable) and that left their GPU above `level`.
  const auto splittable = [&](const TablePlacement& t) {
    return options.scheme == "auto" && options.split_to_balance && t.kind == ShardingKind::kTableWise &&
           !t.host_memory && override_of[static_cast<std::size_t>(t.table)] == nullptr &&
           candidates[static_cast<std::size_t>(t.table)].dim > 1;
  };
  // Whether node n's host memory has room for a host-memory piece whose HBM
  // cache takes `cache_bytes`.
  const auto node_host_room = [&](int n, double cache_bytes) {
    double used = 0;
    for (int i = 0; i < gpus_per_node; ++i) used += plan.gpus[static_cast<std::size_t>(n * gpus_per_node + i)].host_bytes;
    return used + cache_bytes / options.host_cache_fraction <= node_host_capacity;
  };
  // Whether a host-memory table spread row-wise over every GPU has room on
  // each: its cache's share in HBM, its share of each node's host memory.
  const auto row_wise_fits = [&](const Candidate& c) {
    for (int n = 0; n < num_nodes; ++n) {
      const double node_share = c.bytes * options.host_cache_fraction / num_nodes;
      if (!node_host_room(n, node_share)) return false;
      for (int i = 0; i < gpus_per_node; ++i) {
        const GpuLoad& g = plan.gpus[static_cast<std::size_t>(n * gpus_per_node + i)];
        if (g.hbm_bytes + node_share / gpus_per_node > plan.hbm_budget_bytes) return false;
      }
    }
    return true;
  };
  const auto place_pieces = [&](std::vector<Piece> pieces, double level, std::vector<std::size_t>* over) {
    std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
      if (a.seconds != b.seconds) return a.seconds > b.seconds;
      return a.bytes > b.bytes;
    });
    for (const Piece& p : pieces) {
      TablePlacement& t = plan.tables[p.placement];
      const TableOverride* fixed = override_of[static_cast<std::size_t>(t.table)];
      if (p.fixed_rank >= 0) {
        if (p.fixed_rank >= num_gpus) {
          throw InputError(Diagnostic{"sharding", "", fmt::format("table {} is placed on GPU {} but there are {} GPUs",
                                                                  t.table, p.fixed_rank, num_gpus)});
        }
        const GpuLoad& g = plan.gpus[static_cast<std::size_t>(p.fixed_rank)];
        if (g.hbm_bytes + p.bytes > plan.hbm_budget_bytes) {
          plan.fits = false;
          plan.reason = fmt::format("{}table {} ({}) does not fit on GPU {}, where the sharding file puts it: "
                                    "it holds {} of {}",
                                    p.column_shard >= 0 ? fmt::format("column shard {} of ", p.column_shard) : "",
                                    t.table, format_bytes(p.bytes), p.fixed_rank, format_bytes(g.hbm_bytes),
                                    format_bytes(plan.hbm_budget_bytes));
          return false;
        }
        place(p.placement, p.fixed_rank, p.rows, p.dim, p.share, p.bytes, p.seconds);
        continue;
      }
      Candidate& c = candidates[static_cast<std::size_t>(t.table)];
      Piece piece = p;
      // The tables left over may fit in HBM in total but not in the gaps the
      // others left: such a table goes to host memory, only its cache in HBM.
      const auto to_host = [&] {
        if (c.host || memory_of(c) == TableMemory::kHbm || options.host_memory_bytes_per_node <= 0 ||
            host_bytes + c.bytes > host_capacity) {
          return false;
        }
        move_to_host(c);
        t.host_memory = true;
        t.cache_hit_rate = c.hit;
        piece.bytes = c.bytes * options.host_cache_fraction;
        piece.seconds = host_seconds(c);
        return true;
      };
      if (t.kind == ShardingKind::kTableRowWise) {
        // The least-loaded node with room for a 1/gpus_per_node share on each
        // GPU, and in its host memory for a host-memory table.
        const auto least_loaded_node_with_room = [&](double bytes) {
          int best_node = -1;
          double best_load = 0;
          for (int n = 0; n < num_nodes; ++n) {
            if (fixed != nullptr && fixed->node >= 0 && n != fixed->node) continue;
            double load = 0;
            bool room = !t.host_memory || node_host_room(n, bytes);
            for (int i = 0; i < gpus_per_node; ++i) {
              const GpuLoad& g = plan.gpus[static_cast<std::size_t>(n * gpus_per_node + i)];
              load += g.embedding_seconds;
              room = room && g.hbm_bytes + bytes / gpus_per_node <= plan.hbm_budget_bytes;
            }
            if (room && (best_node < 0 || load < best_load)) {
              best_node = n;
              best_load = load;
            }
          }
          return best_node;
        };
        int best_node = least_loaded_node_with_room(piece.bytes);
        if (best_node < 0 && to_host()) best_node = least_loaded_node_with_room(piece.bytes);
        if (best_node < 0 && c.needs_host && row_wise_fits(c)) {
          // No node has host memory left for all of it: auto spreads it over
          // every GPU (and node) instead.
          c.kind = t.kind = ShardingKind::kRowWise;
          fell_back.push_back(c.table);
          c.hit = hit_rate(c);
          t.cache_hit_rate = c.hit;
          const double bytes = c.bytes * options.host_cache_fraction;
          const double seconds = host_seconds(c);
          for (int r = 0; r < num_gpus; ++r) {
            const std::int64_t rows = split_rows(c.rows, num_gpus, r);
            const double share = static_cast<double>(rows) / static_cast<double>(c.rows);
            place(piece.placement, r, rows, c.dim, share, bytes * share, seconds * share);
          }
          continue;
        }
        if (best_node < 0) {
          plan.fits = false;
          if (t.host_memory) {
            // The host memory of the node a sharding file names, else of the
            // emptiest node.
            int node = fixed != nullptr && fixed->node >= 0 ? fixed->node : -1;
            double used = 0;
            for (int n = 0; n < num_nodes; ++n) {
              if (node >= 0 && n != node) continue;
              double u = 0;
              for (int i = 0; i < gpus_per_node; ++i) u += plan.gpus[static_cast<std::size_t>(n * gpus_per_node + i)].host_bytes;
              if (node >= 0 || n == 0 || u < used) used = u;
            }
            plan.reason = fmt::format(
                "no node has room for table {} ({} in host memory, its {} cache split over a node's {} GPUs): {} has {} "
                "of its {} of usable host memory taken",
                t.table, format_bytes(c.bytes), format_bytes(piece.bytes), gpus_per_node,
                node >= 0 ? fmt::format("node {}, where the sharding file puts it,", node) : "the emptiest node",
                format_bytes(used), format_bytes(node_host_capacity));
          } else {
            plan.reason = fmt::format("no node has room for table {} ({}) split over its {} GPUs", t.table,
                                      format_bytes(piece.bytes), gpus_per_node);
          }
          return false;
        }
        for (int i = 0; i < gpus_per_node; ++i) {
          const std::int64_t rows = split_rows(piece.rows, gpus_per_node, i);
          const double share = static_cast<double>(rows) / static_cast<double>(piece.rows);
          place(piece.placement, best_node * gpus_per_node + i, rows, piece.dim, share, piece.bytes * share,
                piece.seconds * share);
        }
        continue;
      }
      const auto least_loaded_with_room = [&](double bytes) {
        int best = -1;
        for (int r = 0; r < num_gpus; ++r) {
          const GpuLoad& g = plan.gpus[static_cast<std::size_t>(r)];
          if (g.hbm_bytes + bytes > plan.hbm_budget_bytes) continue;
          if (t.host_memory && !node_host_room(r / gpus_per_node, bytes)) continue;
          if (best < 0 || g.embedding_seconds < plan.gpus[static_cast<std::size_t>(best)].embedding_seconds) best = r;
        }
        return best;
      };
      int best = least_loaded_with_room(piece.bytes);
      if (best < 0 && t.kind == ShardingKind::kTableWise && to_host()) best = least_loaded_with_room(piece.bytes);
      if (best < 0) {
        plan.fits = false;
        plan.reason = fmt::format("no GPU has room for table {} ({}); the fullest GPU holds {} of {}",
                                  t.table, format_bytes(p.bytes), format_bytes(plan.max_hbm_bytes()),
                                  format_bytes(plan.hbm_budget_bytes));
        return false;
      }
      place(piece.placement, best, piece.rows, piece.dim, piece.share, piece.bytes, piece.seconds);
      if (over != nullptr && splittable(t) && plan.gpus[static_cast<std::size_t>(best)].embedding_seconds > level) {
        over->push_back(piece.placement);
      }
    }
    return true;
  };
  // The mean embedding work per GPU: no plan's busiest GPU does less.
  double level = 0;
  for (const GpuLoad& g : plan.gpus) level += g.embedding_seconds;
  for (const Piece& p : pieces) level += p.seconds;
  level /= num_gpus;
  struct State {
    ShardingPlan plan;
    std::vector<Candidate> candidates;
    double demand;
    double host_bytes;
  };
  const State before{plan, candidates, demand, host_bytes};
  const auto restore = [&](const State& s) {
    plan = s.plan;
    candidates = s.candidates;
    demand = s.demand;
    host_bytes = s.host_bytes;
  };
  // What balancing minimises: the busiest GPU's embedding work plus the
  // busiest GPU's exchange (indices in, pooled embeddings out, their gradients
  // back, in their wire types) at options.exchange_bytes_per_second; the two
  // follow each other on the iteration's critical path. A column shard's
  // owner takes a copy of all its table's indices, and every GPU sends it
  // one, so splitting can cost more exchange than it saves work (DLRM-DCNv2
  // on 2 nodes; model A on 48 and 192 nodes).
  const auto busiest = [&] {
    double most = 0;
    for (const GpuLoad& g : plan.gpus) most = std::max(most, g.embedding_seconds);
    if (options.exchange_bytes_per_second <= 0) return most;
    const double pooled_bytes = (options.exchange_forward_bytes > 0 ? options.exchange_forward_bytes : elem) +
                                (options.exchange_backward_bytes > 0 ? options.exchange_backward_bytes : elem);
    std::vector<double> exchange(static_cast<std::size_t>(num_gpus), 0.0);
    // Every GPU also sends its own samples' indices to every shard's owner:
    // a column shard is one more copy of its table's indices from each GPU.
    double index_sends = 0;
    for (const TablePlacement& t : plan.tables) {
      if (t.kind == ShardingKind::kDataParallel) continue;
      const Candidate& c = candidates[static_cast<std::size_t>(t.table)];
      for (const Shard& sh : t.shards) {
        index_sends += static_cast<double>(options.batch_per_gpu) * c.pooling * sh.lookup_share * options.index_bytes;
      }
    }
    for (const TablePlacement& t : plan.tables) {
      if (t.kind == ShardingKind::kDataParallel) continue;
      const Candidate& c = candidates[static_cast<std::size_t>(t.table)];
      for (const Shard& sh : t.shards) {
        // A table-row-wise shard sends its node's share of the pools after
        // the reduce-scatter inside the node.
        const double pooled_dim = t.kind == ShardingKind::kTableRowWise
                                      ? static_cast<double>(sh.dim) / gpus_per_node
                                      : static_cast<double>(sh.dim);
        exchange[static_cast<std::size_t>(sh.rank)] +=
            static_cast<double>(global_batch) *
            (c.pooling * sh.lookup_share * options.index_bytes + pooled_dim * pooled_bytes);
      }
    }
    return most +
           (index_sends + *std::max_element(exchange.begin(), exchange.end())) / options.exchange_bytes_per_second;
  };
  std::vector<std::size_t> over;
  if (!place_pieces(pieces, level * (1 + kSplitTolerance), &over)) return plan;
  // Balancing (auto): when the tables do not divide over the GPUs, LPT leaves
  // some GPUs a whole table above the rest (model A's 4,096 equal tables on
  // 768 GPUs: 256 GPUs with 6, the others 5, 12.5% above the mean), and every
  // GPU waits for the busiest in the all-to-all. The tables that took their
  // GPU more than kSplitTolerance above the mean go column-wise instead, in k
  // even shards (a bigger table among them in proportionally more, none wider
  // than column_shard_dim), for k = 2 to kMostBalancingShards; each column
  // shard costs its own kernel time and a copy of the table's indices. The
  // plan with the least `busiest` cost wins if it beats keeping the tables
  // whole by kSplitGain.
  if (!over.empty()) {
    const State whole{plan, candidates, demand, host_bytes};
    const double whole_busiest = busiest();
    std::vector<char> split(plan.tables.size(), 0);
    for (std::size_t i : over) split[i] = 1;
    double largest = 0;
    for (const Piece& p : pieces) {
      if (split[p.placement] != 0) largest = std::max(largest, p.seconds);
    }
    std::optional<State> best;
    double best_busiest = whole_busiest;
    for (std::int64_t k = 2; k <= kMostBalancingShards; ++k) {
      restore(before);
      std::vector<Piece> split_pieces;
      for (const Piece& p : pieces) {
        std::int64_t parts = 1;
        if (split[p.placement] != 0) {
          parts = static_cast<std::int64_t>(std::ceil(static_cast<double>(k) * p.seconds / largest - 1e-9));
          parts = std::min(p.dim, std::max(parts, column_shards(p.dim, options.column_shard_dim)));
        }
        if (parts < 2) {
          split_pieces.push_back(p);
          continue;
        }
        TablePlacement& t = plan.tables[p.placement];
        t.kind = ShardingKind::kColumnWise;
        const double pooling = candidates[static_cast<std::size_t>(t.table)].pooling;
        for (std::int64_t j = 0; j < parts; ++j) {
          const std::int64_t width = p.dim / parts + (j < p.dim % parts ? 1 : 0);
          // As the column-wise case above computes a shard, to the bit: a
          // sharding file of this plan must give it back.
          split_pieces.push_back({p.placement, p.rows, width, 1.0,
                                  p.bytes * (static_cast<double>(width) / static_cast<double>(p.dim)),
                                  table_seconds(width, pooling), -1, static_cast<int>(j)});
        }
      }
      if (!place_pieces(std::move(split_pieces), 0, nullptr)) continue;
      const double most = busiest();
      if (most < best_busiest * (1 - 1e-9)) {
        best_busiest = most;
        best = State{plan, candidates, demand, host_bytes};
      }
    }
    const double whole_imbalance = whole.plan.load_imbalance();
    restore(best && best_busiest < whole_busiest * (1 - kSplitGain) ? *best : whole);
    plan.whole_load_imbalance = whole_imbalance;
    for (const TablePlacement& t : plan.tables) {
      if (t.kind != whole.plan.tables[static_cast<std::size_t>(t.table)].kind) {
        ++plan.balance_split_tables;
        plan.balance_split_shards += static_cast<std::int64_t>(t.shards.size());
      }
    }
  } else {
    plan.whole_load_imbalance = plan.load_imbalance();
  }
  if (std::any_of(candidates.begin(), candidates.end(), [&](const Candidate& c) {
        return c.host && (options.index_zipf_alpha || model.tables[static_cast<std::size_t>(c.group)].zipf_alpha);
      })) {
    // Rates differ by table: the hit rate over all host-memory lookups.
    double lookups = 0;
    double hits = 0;
    for (const Candidate& c : candidates) {
      if (!c.host) continue;
      lookups += c.pooling;
      hits += c.pooling * c.hit;
    }
    plan.host_cache_hit_rate = lookups > 0 ? hits / lookups : 1.0;
  }
  return plan;
}

}  // namespace

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
  std::vector<std::string> kinds;
  for (const SchemeName& s : kSchemes) kinds.emplace_back(s.name);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>, std::less<>> groups;  // name -> [first, end)
  std::int64_t first = 0;
  std::vector<std::string> group_names;
  for (const TableGroup& g : model.tables) {
    groups[g.name] = {first, first + g.count};
    group_names.push_back(g.name);
    first += g.count;
  }
  const std::int64_t tables = first;
  // Each table and group is named once; a table's own entry wins over a
  // group's that includes it, wherever it stands (group entries go first).
  std::map<std::int64_t, std::size_t> table_entry;
  std::map<std::string, std::size_t> group_entry;
  std::vector<TableOverride> from_groups;
  std::vector<TableOverride> from_tables;
  if (auto list = root.array("tables")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader t = list->object(i);
      std::int64_t table = -1;
      std::string group;
      const bool by_table = t.read_int("table", table, json::IntRange{0, std::max<std::int64_t>(0, tables - 1)});
      const bool by_group = t.read_enum("group", group, group_names);
      if (by_table && !table_entry.emplace(table, i).second) {
        t.error("table", fmt::format("table {} is placed by /tables/{} already; name each table once", table,
                                     table_entry[table]));
      }
      if (by_group && !group_entry.emplace(group, i).second) {
        t.error("group", fmt::format("group '{}' is placed by /tables/{} already; name each group once", group,
                                     group_entry[group]));
      }
      if (by_table == by_group && !t.has("table") && !t.has("group")) t.error("", "give 'table' or 'group'");
      if (t.has("table") && t.has("group")) t.error("", "give 'table' or 'group', not both");
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
      // The table's dimension, to check its column shards.
      std::int64_t dim = -1;
      if (by_table) {
        std::int64_t end = 0;
        for (const TableGroup& g : model.tables) {
          end += g.count;
          if (table < end) {
            dim = g.dim;
            break;
          }
        }
      } else if (by_group) {
        for (const TableGroup& g : model.tables) {
          if (g.name == group) dim = g.dim;
        }
      }
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
      if (auto ranks = t.array("ranks")) {
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
                   static_cast<std::int64_t>(o.ranks.size()) != column_shards(dim, options.column_shard_dim)) {
          t.error("ranks", fmt::format("expected {} ranks, one per column shard of at most {} columns (dim {}), "
                                       "got {}",
                                       column_shards(dim, options.column_shard_dim), options.column_shard_dim, dim,
                                       o.ranks.size()));
        }
      }
      std::string memory;
      std::vector<std::string> memories;
      for (const MemoryName& m : kMemories) memories.emplace_back(m.name);
      if (t.read_enum("memory", memory, memories)) {
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
      t.finish();
      if (!kind_ok) continue;
      if (by_table) {
        o.table = table;
        from_tables.push_back(o);
      } else if (by_group) {
        const auto [begin, end] = groups[group];
        for (std::int64_t k = begin; k < end; ++k) {
          o.table = k;
          from_groups.push_back(o);
        }
      }
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
