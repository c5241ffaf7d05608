#include "models/dlrm/internal/placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/compute/cost_models.h"
#include "models/dlrm/cache_model.h"

namespace zx::models::internal {
namespace {

constexpr ShardingKind kKinds[] = {ShardingKind::kTableWise, ShardingKind::kRowWise, ShardingKind::kColumnWise,
                                   ShardingKind::kTableRowWise, ShardingKind::kDataParallel};

}  // namespace

std::string format_bytes(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.2f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.1f} MB", bytes / 1e6);
}

void check_request(const ShardingOptions& options, int num_gpus, int gpus_per_node) {
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
}

PlanRequest make_request(const DlrmModel& model, int num_gpus, int gpus_per_node, const DeviceProfile& device,
                         const ShardingOptions& options) {
  check_request(options, num_gpus, gpus_per_node);
  const int num_nodes = num_gpus / gpus_per_node;
  const double node_host_capacity = options.host_memory_bytes_per_node * options.host_memory_usable_fraction;
  const double hbm_budget = static_cast<double>(device.hbm_capacity.count()) * (1.0 - options.hbm_reserve_fraction);
  return PlanRequest{.model = model,
                     .device = device,
                     .options = options,
                     .num_gpus = num_gpus,
                     .gpus_per_node = gpus_per_node,
                     .num_nodes = num_nodes,
                     .node_host_capacity = node_host_capacity,
                     .host_capacity = node_host_capacity * num_nodes,
                     .global_batch = options.batch_per_gpu * num_gpus,
                     .elem = element_bytes(model.embedding_type),
                     .hbm_budget = hbm_budget,
                     .total_budget = hbm_budget * num_gpus};
}

TableMemory memory_of(const Overrides& overrides, const Candidate& c) {
  const TableOverride* o = overrides[static_cast<std::size_t>(c.table)];
  return o != nullptr ? o->memory : TableMemory::kAuto;
}

double table_seconds(const PlanRequest& request, std::int64_t dim, double pooling) {
  const DeviceProfile& device = request.device;
  const EmbeddingShape shape{.batch = request.global_batch,
                             .tables = 1,
                             .pooling = pooling,
                             .dim = dim,
                             .weight_type = request.model.embedding_type,
                             .output_type = request.model.embedding_type,
                             .index_bytes = request.options.index_bytes};
  // Per-kernel fixed costs (launches, the backward's sort) are paid once
  // per GPU, not per table: left out of a table's share.
  const sim::Duration t = embedding_forward_fused(device, shape).time + embedding_backward_fused(device, shape).time -
                          device.kernel_launch * 2 - sim::Duration::from_ns_ceil(device.embedding_backward_overhead_ns);
  return t.to_seconds();
}

double host_seconds(const PlanRequest& request, const Candidate& c) {
  // The evicted rows go back over the host link at the same time as the
  // misses come in (workloads/dlrm_iteration.cc).
  const double misses = (1.0 - c.hit) * static_cast<double>(request.global_batch) * c.pooling;
  const double row = static_cast<double>(c.dim * request.elem);
  return c.seconds + misses * row / static_cast<double>(request.device.host_to_device_bandwidth.count());
}

double hbm_demand(const PlanRequest& request, const Candidate& c) {
  if (c.host) return c.bytes * request.options.host_cache_fraction;
  return c.kind == ShardingKind::kDataParallel ? c.bytes * request.num_gpus : c.bytes;
}

double HitRates::operator()(const PlanRequest& request, const Candidate& c) {
  const ShardingOptions& options = request.options;
  // --index-zipf-alpha, else the table group's own skew, else the fixed rate.
  const std::optional<double> alpha =
      options.index_zipf_alpha ? options.index_zipf_alpha
                               : request.model.tables[static_cast<std::size_t>(c.group)].zipf_alpha;
  if (!alpha) return options.host_cache_hit_rate;
  // A shard of a row-wise table sees the table's skew over its share of the rows.
  const int parts = c.kind == ShardingKind::kRowWise        ? request.num_gpus
                    : c.kind == ShardingKind::kTableRowWise ? request.gpus_per_node
                                                            : 1;
  const std::int64_t rows = std::max<std::int64_t>(1, c.rows / parts);
  const auto key = std::pair{rows, *alpha};
  auto it = lru_.find(key);
  if (it == lru_.end()) {
    it = lru_.emplace(key, lru_hit_rate_zipf(static_cast<double>(rows),
                                             options.host_cache_fraction * static_cast<double>(rows), *alpha))
             .first;
  }
  return it->second;
}

namespace {

// auto's kind for one table (its bytes are known), and whether it needs
// host memory.
void choose_auto_kind(const PlanRequest& request, bool spread_in_host, Candidate& c) {
  const ShardingOptions& options = request.options;
  const double half_budget = request.hbm_budget / 2;
  if (request.num_gpus > 1 && c.bytes <= options.data_parallel_max_bytes) {
    c.kind = ShardingKind::kDataParallel;
  } else if (c.bytes > half_budget) {
    // Spread over one node's GPUs (table-row-wise): in their HBM when a
    // share fits half a GPU's budget, else in the node's host memory
    // behind their caches. Row-wise over every GPU instead makes each
    // GPU reduce-scatter the whole global batch's partial pools of the
    // table, which grows with the cluster (model F on 64 ZionEX nodes:
    // 116.9 ms row-wise, 9.5 ms table-row-wise in host memory).
    if (request.num_nodes > 1 && c.bytes / request.gpus_per_node <= half_budget) {
      c.kind = ShardingKind::kTableRowWise;
    } else if (spread_in_host && request.num_nodes > 1 && c.bytes <= request.node_host_capacity &&
               c.bytes * options.host_cache_fraction / request.gpus_per_node <= half_budget) {
      c.kind = ShardingKind::kTableRowWise;
      c.needs_host = true;
    } else {
      c.kind = ShardingKind::kRowWise;
    }
  }
}

}  // namespace

std::vector<Candidate> choose_kinds(const PlanRequest& request, bool spread_in_host) {
  const DlrmModel& model = request.model;
  std::vector<Candidate> candidates;
  for (std::size_t g = 0; g < model.tables.size(); ++g) {
    const TableGroup& group = model.tables[g];
    const double bytes =
        static_cast<double>(group.rows) * (static_cast<double>(group.dim * request.elem) + kRowStateBytes);
    const double seconds = table_seconds(request, group.dim, group.pooling);
    for (std::int64_t i = 0; i < group.count; ++i) {
      Candidate c{.table = static_cast<std::int64_t>(candidates.size()),
                  .group = static_cast<std::int64_t>(g),
                  .rows = group.rows,
                  .dim = group.dim,
                  .pooling = group.pooling,
                  .bytes = bytes,
                  .seconds = seconds,
                  .kind = ShardingKind::kTableWise};
      if (!request.is_auto()) {
        for (const ShardingKind kind : kKinds) {
          if (request.options.scheme == to_string(kind)) c.kind = kind;
        }
      } else {
        choose_auto_kind(request, spread_in_host, c);
      }
      candidates.push_back(c);
    }
  }
  return candidates;
}

void spread_heavy_exchange(const PlanRequest& request, std::vector<Candidate>& candidates) {
  // A table's exchange crosses its owner's NIC: its lookups' indices in, its
  // pooled embeddings out and their gradients back, per sample. Table-wise,
  // a few such tables make their owners' NICs the iteration's bottleneck
  // (DLRM-DCNv2's 26 tables on 16 H100 nodes: 8.5 ms table-wise, 2.5 ms
  // spread); many small tables (models A and I) stay whole.
  if (!request.is_auto() || request.num_nodes <= 1) return;
  const auto exchange = [&](const Candidate& c) {
    return c.pooling * request.options.index_bytes + 2.0 * static_cast<double>(c.dim * request.elem);
  };
  double total = 0;
  for (const Candidate& c : candidates) {
    if (c.kind != ShardingKind::kDataParallel) total += exchange(c);
  }
  for (Candidate& c : candidates) {
    if (c.kind == ShardingKind::kTableWise && exchange(c) > kSpreadExchangeShares * total / request.num_gpus) {
      c.kind = ShardingKind::kTableRowWise;
    }
  }
}

Overrides apply_overrides(const ShardingOptions& options, std::vector<Candidate>& candidates) {
  Overrides override_of(candidates.size(), nullptr);
  for (const TableOverride& o : options.overrides) {
    if (o.table < 0 || o.table >= static_cast<std::int64_t>(candidates.size())) {
      throw InputError(Diagnostic{"sharding", "", fmt::format("table {} does not exist ({} tables)", o.table,
                                                              candidates.size())});
    }
    candidates[static_cast<std::size_t>(o.table)].kind = o.kind;
    candidates[static_cast<std::size_t>(o.table)].needs_host = false;  // the file decides
    override_of[static_cast<std::size_t>(o.table)] = &o;
  }
  return override_of;
}

Placement start_placement(const PlanRequest& request, std::vector<Candidate> candidates) {
  Placement placement;
  placement.plan.gpus.resize(static_cast<std::size_t>(request.num_gpus));
  placement.plan.host_cache_hit_rate = request.options.host_cache_hit_rate;
  placement.plan.hbm_budget_bytes = request.hbm_budget;
  placement.candidates = std::move(candidates);
  for (const Candidate& c : placement.candidates) placement.demand += hbm_demand(request, c);
  return placement;
}

void move_to_host(const PlanRequest& request, HitRates& hits, Placement& placement, std::size_t table) {
  Candidate& c = placement.candidates[table];
  placement.demand -= hbm_demand(request, c);
  c.host = true;
  // A replicated table in host memory would be replicated per node; keep
  // one copy, table-wise. Sharded tables keep their shards, each in host
  // memory with its own HBM cache.
  if (c.kind == ShardingKind::kDataParallel) c.kind = ShardingKind::kTableWise;
  c.hit = hits(request, c);
  placement.demand += hbm_demand(request, c);
  placement.host_bytes += c.bytes;
}

namespace {

// The tables auto spreads in host memory (while the nodes have room in
// total; the rest row-wise, in HBM or host memory as the demand decides) and
// those a sharding file puts there.
void move_required_to_host(const PlanRequest& request, const Overrides& overrides, HitRates& hits,
                           Placement& placement) {
  for (Candidate& c : placement.candidates) {
    const auto index = static_cast<std::size_t>(c.table);
    if (c.needs_host) {
      c.needs_host = placement.host_bytes + c.bytes <= request.host_capacity;
      if (c.needs_host) {
        move_to_host(request, hits, placement, index);
      } else {
        c.kind = ShardingKind::kRowWise;
      }
      continue;
    }
    if (memory_of(overrides, c) != TableMemory::kHost) continue;
    if (request.options.host_memory_bytes_per_node <= 0) {
      throw InputError(Diagnostic{"sharding", "",
                                  fmt::format("table {} is placed in host memory but host memory is disabled",
                                              c.table)});
    }
    move_to_host(request, hits, placement, index);
  }
}

// Why neither HBM nor host memory holds the model's tables.
std::string no_memory_reason(const PlanRequest& request) {
  const DlrmModel& model = request.model;
  std::int64_t rows = 0;
  for (const TableGroup& t : model.tables) rows += t.count * t.rows;
  return fmt::format(
      "{} needs {} for its embeddings (weights and row-wise state): {} GPUs have {} of HBM after "
      "the {:g}% reserve and {} node{} {} of usable host memory (each table there keeps {:g}% of its "
      "size in HBM as its cache)",
      model.name, format_bytes(model.embedding_bytes() + kRowStateBytes * static_cast<double>(rows)),
      request.num_gpus, format_bytes(request.total_budget), request.options.hbm_reserve_fraction * 100,
      request.num_nodes, request.num_nodes == 1 ? "" : "s", format_bytes(request.host_capacity),
      request.options.host_cache_fraction * 100);
}

// The largest tables (not pinned to HBM) move to host memory until the rest
// fit HBM. False, with the plan's reason, when they cannot.
bool make_room_in_hbm(const PlanRequest& request, const Overrides& overrides, HitRates& hits, Placement& placement) {
  const double room = request.total_budget * kPackingSlack;
  if (placement.demand <= room && placement.host_bytes <= 0) return true;
  ShardingPlan& plan = placement.plan;
  if (request.options.host_memory_bytes_per_node <= 0) {
    plan.fits = false;
    plan.reason = fmt::format(
        "{} needs {} of HBM for its embeddings (weights and row-wise state) but {} GPUs have {} after "
        "the {:g}% reserve, and host memory is disabled",
        request.model.name, format_bytes(placement.demand), request.num_gpus, format_bytes(request.total_budget),
        request.options.hbm_reserve_fraction * 100);
    return false;
  }
  const std::vector<Candidate>& candidates = placement.candidates;
  std::vector<std::size_t> by_size(candidates.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](std::size_t a, std::size_t b) { return candidates[a].bytes > candidates[b].bytes; });
  for (std::size_t i : by_size) {
    if (placement.demand <= room) break;
    const Candidate& c = candidates[i];
    if (c.host || memory_of(overrides, c) == TableMemory::kHbm) continue;
    move_to_host(request, hits, placement, i);
  }
  if (placement.demand > room || placement.host_bytes > request.host_capacity) {
    plan.fits = false;
    plan.reason = no_memory_reason(request);
    return false;
  }
  return true;
}

}  // namespace

bool assign_memory(const PlanRequest& request, const Overrides& overrides, HitRates& hits, Placement& placement) {
  move_required_to_host(request, overrides, hits, placement);
  return make_room_in_hbm(request, overrides, hits, placement);
}

void place_shard(const ShardingOptions& options, ShardingPlan& plan, std::size_t placement, const Shard& shard,
                 double bytes, double seconds) {
  plan.tables[placement].shards.push_back(shard);
  GpuLoad& g = plan.gpus[static_cast<std::size_t>(shard.rank)];
  g.hbm_bytes += bytes;
  // A host-memory shard's HBM is its cache: cache fraction of its bytes.
  if (plan.tables[placement].host_memory) g.host_bytes += bytes / options.host_cache_fraction;
  g.embedding_seconds += seconds;
  ++g.shards;
}

void place_rows(const ShardingOptions& options, ShardingPlan& plan, std::size_t placement, int first_rank, int parts,
                std::int64_t rows, std::int64_t dim, double bytes, double seconds) {
  for (int i = 0; i < parts; ++i) {
    const std::int64_t part = split_rows(rows, parts, i);
    const double share = static_cast<double>(part) / static_cast<double>(rows);
    place_shard(options, plan, placement, {first_rank + i, part, dim, share}, bytes * share, seconds * share);
  }
}

namespace {

// A column-wise table's pieces: a sharding file's widths and ranks, else
// column_shard_dim columns each (the last narrower) where LPT puts them.
void add_column_pieces(const PlanRequest& request, const Candidate& c, const TableOverride* fixed,
                       std::size_t index, double hbm_bytes, double seconds, std::vector<Piece>& pieces) {
  const ShardingOptions& options = request.options;
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
                                            c.table, widths.size(), fmt::join(widths, ", "), c.dim, ranks.size())});
  }
  for (std::size_t k = 0; k < widths.size(); ++k) {
    const std::int64_t dim = widths[k];
    const double fraction = static_cast<double>(dim) / static_cast<double>(c.dim);
    pieces.push_back({index, c.rows, dim, 1.0, hbm_bytes * fraction,
                      table_seconds(request, dim, c.pooling) * (c.host ? seconds / c.seconds : 1.0),
                      ranks.empty() ? -1 : ranks[k], static_cast<int>(k)});
  }
}

}  // namespace

std::vector<Piece> lay_out_tables(const PlanRequest& request, const Overrides& overrides, Placement& placement) {
  const ShardingOptions& options = request.options;
  ShardingPlan& plan = placement.plan;
  std::vector<Piece> pieces;
  for (const Candidate& c : placement.candidates) {
    const std::size_t index = plan.tables.size();
    plan.tables.push_back({.table = c.table,
                           .group = c.group,
                           .kind = c.kind,
                           .host_memory = c.host,
                           .cache_hit_rate = c.host ? c.hit : 1.0});
    const double seconds = c.host ? host_seconds(request, c) : c.seconds;
    // HBM a shard takes: all of it, or only its cache when in host memory.
    const double hbm_bytes = c.host ? c.bytes * options.host_cache_fraction : c.bytes;
    const TableOverride* fixed = overrides[static_cast<std::size_t>(c.table)];
    switch (c.kind) {
      case ShardingKind::kRowWise:
        place_rows(options, plan, index, 0, request.num_gpus, c.rows, c.dim, hbm_bytes, seconds);
        break;
      case ShardingKind::kDataParallel:
        for (int r = 0; r < request.num_gpus; ++r) {
          place_shard(options, plan, index, {r, c.rows, c.dim, 1.0 / request.num_gpus}, c.bytes,
                      seconds / request.num_gpus);
        }
        break;
      case ShardingKind::kColumnWise:
        add_column_pieces(request, c, fixed, index, hbm_bytes, seconds, pieces);
        break;
      case ShardingKind::kTableRowWise:
        pieces.push_back({index, c.rows, c.dim, 1.0, hbm_bytes, seconds});
        break;
      case ShardingKind::kTableWise:
        pieces.push_back({index, c.rows, c.dim, 1.0, hbm_bytes, seconds, fixed != nullptr ? fixed->rank : -1});
        break;
    }
  }
  return pieces;
}

double mean_work(const PlanRequest& request, const ShardingPlan& plan, const std::vector<Piece>& pieces) {
  double level = 0;
  for (const GpuLoad& g : plan.gpus) level += g.embedding_seconds;
  for (const Piece& p : pieces) level += p.seconds;
  return level / request.num_gpus;
}

namespace {

// Host memory node n's host-memory shards take.
double node_host_bytes(const PlanRequest& request, const ShardingPlan& plan, int n) {
  double used = 0;
  for (int i = 0; i < request.gpus_per_node; ++i) {
    used += plan.gpus[static_cast<std::size_t>(n * request.gpus_per_node + i)].host_bytes;
  }
  return used;
}

// Whether node n's host memory has room for a host-memory piece whose HBM
// cache takes `cache_bytes`.
bool node_host_room(const PlanRequest& request, const ShardingPlan& plan, int n, double cache_bytes) {
  return node_host_bytes(request, plan, n) + cache_bytes / request.options.host_cache_fraction <=
         request.node_host_capacity;
}

// Whether a host-memory table spread row-wise over every GPU has room on
// each: its cache's share in HBM, its share of each node's host memory.
bool row_wise_fits(const PlanRequest& request, const ShardingPlan& plan, const Candidate& c) {
  for (int n = 0; n < request.num_nodes; ++n) {
    const double node_share = c.bytes * request.options.host_cache_fraction / request.num_nodes;
    if (!node_host_room(request, plan, n, node_share)) return false;
    for (int i = 0; i < request.gpus_per_node; ++i) {
      const GpuLoad& g = plan.gpus[static_cast<std::size_t>(n * request.gpus_per_node + i)];
      if (g.hbm_bytes + node_share / request.gpus_per_node > plan.hbm_budget_bytes) return false;
    }
  }
  return true;
}

// Whether balancing may split a table: auto placed it table-wise in HBM and
// no sharding file names it.
bool splittable(const PlanRequest& request, const Overrides& overrides, const Placement& placement,
                const TablePlacement& t) {
  return request.is_auto() && request.options.split_to_balance && t.kind == ShardingKind::kTableWise &&
         !t.host_memory && overrides[static_cast<std::size_t>(t.table)] == nullptr &&
         placement.candidates[static_cast<std::size_t>(t.table)].dim > 1;
}

// The tables left over may fit in HBM in total but not in the gaps the
// others left: such a table goes to host memory, only its cache in HBM,
// when it may and host memory has room. Updates the piece's bytes and cost.
bool move_piece_to_host(const PlanRequest& request, const Overrides& overrides, HitRates& hits,
                        Placement& placement, Piece& piece) {
  TablePlacement& t = placement.plan.tables[piece.placement];
  const Candidate& c = placement.candidates[static_cast<std::size_t>(t.table)];
  if (c.host || memory_of(overrides, c) == TableMemory::kHbm || request.options.host_memory_bytes_per_node <= 0 ||
      placement.host_bytes + c.bytes > request.host_capacity) {
    return false;
  }
  move_to_host(request, hits, placement, static_cast<std::size_t>(t.table));
  t.host_memory = true;
  t.cache_hit_rate = c.hit;
  piece.bytes = c.bytes * request.options.host_cache_fraction;
  piece.seconds = host_seconds(request, c);
  return true;
}

// A piece a sharding file pins to a GPU. Throws zx::InputError for a GPU
// that does not exist; false, with the plan's reason, when it has no room.
bool place_pinned_piece(const PlanRequest& request, ShardingPlan& plan, const Piece& p) {
  const TablePlacement& t = plan.tables[p.placement];
  if (p.fixed_rank >= request.num_gpus) {
    throw InputError(Diagnostic{"sharding", "", fmt::format("table {} is placed on GPU {} but there are {} GPUs",
                                                            t.table, p.fixed_rank, request.num_gpus)});
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
  place_shard(request.options, plan, p.placement, {p.fixed_rank, p.rows, p.dim, p.share}, p.bytes, p.seconds);
  return true;
}

// The least-loaded node (only `only_node` when >= 0) with room for a
// 1/gpus_per_node share of `bytes` on each GPU, and in its host memory for a
// host-memory table; -1 if none.
int least_loaded_node_with_room(const PlanRequest& request, const ShardingPlan& plan, int only_node,
                                bool host_memory, double bytes) {
  int best_node = -1;
  double best_load = 0;
  for (int n = 0; n < request.num_nodes; ++n) {
    if (only_node >= 0 && n != only_node) continue;
    double load = 0;
    bool room = !host_memory || node_host_room(request, plan, n, bytes);
    for (int i = 0; i < request.gpus_per_node; ++i) {
      const GpuLoad& g = plan.gpus[static_cast<std::size_t>(n * request.gpus_per_node + i)];
      load += g.embedding_seconds;
      room = room && g.hbm_bytes + bytes / request.gpus_per_node <= plan.hbm_budget_bytes;
    }
    if (room && (best_node < 0 || load < best_load)) {
      best_node = n;
      best_load = load;
    }
  }
  return best_node;
}

// Why no node takes a table-row-wise piece: for a host-memory table, the
// host memory of the node a sharding file names, else of the emptiest node.
std::string no_node_reason(const PlanRequest& request, const ShardingPlan& plan, const TablePlacement& t,
                           const Candidate& c, const Piece& piece, int only_node) {
  if (!t.host_memory) {
    return fmt::format("no node has room for table {} ({}) split over its {} GPUs", t.table,
                       format_bytes(piece.bytes), request.gpus_per_node);
  }
  double used = 0;
  for (int n = 0; n < request.num_nodes; ++n) {
    if (only_node >= 0 && n != only_node) continue;
    const double u = node_host_bytes(request, plan, n);
    if (only_node >= 0 || n == 0 || u < used) used = u;
  }
  return fmt::format(
      "no node has room for table {} ({} in host memory, its {} cache split over a node's {} GPUs): {} has {} "
      "of its {} of usable host memory taken",
      t.table, format_bytes(c.bytes), format_bytes(piece.bytes), request.gpus_per_node,
      only_node >= 0 ? fmt::format("node {}, where the sharding file puts it,", only_node) : "the emptiest node",
      format_bytes(used), format_bytes(request.node_host_capacity));
}

// A table-row-wise piece on the least-loaded node with room, moving its
// table to host memory if need be. auto's host-memory tables that no node
// has room for go row-wise over every GPU instead (listed in `fell_back`).
bool place_table_row_wise(const PlanRequest& request, const Overrides& overrides, HitRates& hits,
                          Placement& placement, Piece piece, std::vector<std::int64_t>& fell_back) {
  ShardingPlan& plan = placement.plan;
  TablePlacement& t = plan.tables[piece.placement];
  Candidate& c = placement.candidates[static_cast<std::size_t>(t.table)];
  const TableOverride* fixed = overrides[static_cast<std::size_t>(t.table)];
  const int only_node = fixed != nullptr && fixed->node >= 0 ? fixed->node : -1;
  int best_node = least_loaded_node_with_room(request, plan, only_node, t.host_memory, piece.bytes);
  if (best_node < 0 && move_piece_to_host(request, overrides, hits, placement, piece)) {
    best_node = least_loaded_node_with_room(request, plan, only_node, t.host_memory, piece.bytes);
  }
  if (best_node < 0 && c.needs_host && row_wise_fits(request, plan, c)) {
    c.kind = t.kind = ShardingKind::kRowWise;
    fell_back.push_back(c.table);
    c.hit = hits(request, c);
    t.cache_hit_rate = c.hit;
    place_rows(request.options, plan, piece.placement, 0, request.num_gpus, c.rows, c.dim,
               c.bytes * request.options.host_cache_fraction, host_seconds(request, c));
    return true;
  }
  if (best_node < 0) {
    plan.fits = false;
    plan.reason = no_node_reason(request, plan, t, c, piece, only_node);
    return false;
  }
  place_rows(request.options, plan, piece.placement, best_node * request.gpus_per_node, request.gpus_per_node,
             piece.rows, piece.dim, piece.bytes, piece.seconds);
  return true;
}

// The least-loaded GPU with room for `bytes` of HBM (and in its node's host
// memory for a host-memory table); -1 if none.
int least_loaded_gpu_with_room(const PlanRequest& request, const ShardingPlan& plan, bool host_memory,
                               double bytes) {
  int best = -1;
  for (int r = 0; r < request.num_gpus; ++r) {
    const GpuLoad& g = plan.gpus[static_cast<std::size_t>(r)];
    if (g.hbm_bytes + bytes > plan.hbm_budget_bytes) continue;
    if (host_memory && !node_host_room(request, plan, r / request.gpus_per_node, bytes)) continue;
    if (best < 0 || g.embedding_seconds < plan.gpus[static_cast<std::size_t>(best)].embedding_seconds) best = r;
  }
  return best;
}

// A table-wise or column piece on the least-loaded GPU with room, moving a
// table-wise table to host memory if need be. Its GPU, or -1 with the plan's
// reason.
int place_on_least_loaded_gpu(const PlanRequest& request, const Overrides& overrides, HitRates& hits,
                              Placement& placement, const Piece& p) {
  ShardingPlan& plan = placement.plan;
  const TablePlacement& t = plan.tables[p.placement];
  Piece piece = p;
  int best = least_loaded_gpu_with_room(request, plan, t.host_memory, piece.bytes);
  if (best < 0 && t.kind == ShardingKind::kTableWise &&
      move_piece_to_host(request, overrides, hits, placement, piece)) {
    best = least_loaded_gpu_with_room(request, plan, t.host_memory, piece.bytes);
  }
  if (best < 0) {
    plan.fits = false;
    plan.reason = fmt::format("no GPU has room for table {} ({}); the fullest GPU holds {} of {}", t.table,
                              format_bytes(p.bytes), format_bytes(plan.max_hbm_bytes()),
                              format_bytes(plan.hbm_budget_bytes));
    return -1;
  }
  place_shard(request.options, plan, piece.placement, {best, piece.rows, piece.dim, piece.share}, piece.bytes,
              piece.seconds);
  return best;
}

}  // namespace

bool place_pieces(const PlanRequest& request, const Overrides& overrides, HitRates& hits, Placement& placement,
                  std::vector<Piece> pieces, double level, std::vector<std::size_t>* over,
                  std::vector<std::int64_t>& fell_back) {
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    if (a.seconds != b.seconds) return a.seconds > b.seconds;
    return a.bytes > b.bytes;
  });
  for (const Piece& p : pieces) {
    const TablePlacement& t = placement.plan.tables[p.placement];
    if (p.fixed_rank >= 0) {
      if (!place_pinned_piece(request, placement.plan, p)) return false;
      continue;
    }
    if (t.kind == ShardingKind::kTableRowWise) {
      if (!place_table_row_wise(request, overrides, hits, placement, p, fell_back)) return false;
      continue;
    }
    const int rank = place_on_least_loaded_gpu(request, overrides, hits, placement, p);
    if (rank < 0) return false;
    if (over != nullptr && splittable(request, overrides, placement, t) &&
        placement.plan.gpus[static_cast<std::size_t>(rank)].embedding_seconds > level) {
      over->push_back(p.placement);
    }
  }
  return true;
}

double busiest_cost(const PlanRequest& request, const Placement& placement) {
  // The two terms follow each other on the iteration's critical path. A
  // column shard's owner takes a copy of all its table's indices, and every
  // GPU sends it one, so splitting can cost more exchange than it saves work
  // (DLRM-DCNv2 on 2 nodes; model A on 48 and 192 nodes).
  const ShardingOptions& options = request.options;
  const ShardingPlan& plan = placement.plan;
  double most = 0;
  for (const GpuLoad& g : plan.gpus) most = std::max(most, g.embedding_seconds);
  if (options.exchange_bytes_per_second <= 0) return most;
  const double pooled_bytes = (options.exchange_forward_bytes > 0 ? options.exchange_forward_bytes : request.elem) +
                              (options.exchange_backward_bytes > 0 ? options.exchange_backward_bytes : request.elem);
  std::vector<double> exchange(static_cast<std::size_t>(request.num_gpus), 0.0);
  // Every GPU also sends its own samples' indices to every shard's owner:
  // a column shard is one more copy of its table's indices from each GPU.
  double index_sends = 0;
  for (const TablePlacement& t : plan.tables) {
    if (t.kind == ShardingKind::kDataParallel) continue;
    const Candidate& c = placement.candidates[static_cast<std::size_t>(t.table)];
    for (const Shard& sh : t.shards) {
      index_sends += static_cast<double>(options.batch_per_gpu) * c.pooling * sh.lookup_share * options.index_bytes;
    }
  }
  for (const TablePlacement& t : plan.tables) {
    if (t.kind == ShardingKind::kDataParallel) continue;
    const Candidate& c = placement.candidates[static_cast<std::size_t>(t.table)];
    for (const Shard& sh : t.shards) {
      // A table-row-wise shard sends its node's share of the pools after
      // the reduce-scatter inside the node.
      const double pooled_dim = t.kind == ShardingKind::kTableRowWise
                                    ? static_cast<double>(sh.dim) / request.gpus_per_node
                                    : static_cast<double>(sh.dim);
      exchange[static_cast<std::size_t>(sh.rank)] +=
          static_cast<double>(request.global_batch) *
          (c.pooling * sh.lookup_share * options.index_bytes + pooled_dim * pooled_bytes);
    }
  }
  return most + (index_sends + *std::max_element(exchange.begin(), exchange.end())) / options.exchange_bytes_per_second;
}

std::vector<Piece> split_for_balance(const PlanRequest& request, const std::vector<Piece>& pieces,
                                     const std::vector<std::size_t>& over, std::int64_t k, Placement& placement) {
  std::vector<char> split(placement.plan.tables.size(), 0);
  for (std::size_t i : over) split[i] = 1;
  double largest = 0;
  for (const Piece& p : pieces) {
    if (split[p.placement] != 0) largest = std::max(largest, p.seconds);
  }
  std::vector<Piece> split_pieces;
  for (const Piece& p : pieces) {
    std::int64_t parts = 1;
    if (split[p.placement] != 0) {
      parts = static_cast<std::int64_t>(std::ceil(static_cast<double>(k) * p.seconds / largest - 1e-9));
      parts = std::min(p.dim, std::max(parts, column_shards(p.dim, request.options.column_shard_dim)));
    }
    if (parts < 2) {
      split_pieces.push_back(p);
      continue;
    }
    TablePlacement& t = placement.plan.tables[p.placement];
    t.kind = ShardingKind::kColumnWise;
    const double pooling = placement.candidates[static_cast<std::size_t>(t.table)].pooling;
    for (std::int64_t j = 0; j < parts; ++j) {
      const std::int64_t width = p.dim / parts + (j < p.dim % parts ? 1 : 0);
      // As add_column_pieces computes a shard, to the bit: a sharding file
      // of this plan must give it back.
      split_pieces.push_back({p.placement, p.rows, width, 1.0,
                              p.bytes * (static_cast<double>(width) / static_cast<double>(p.dim)),
                              table_seconds(request, width, pooling), -1, static_cast<int>(j)});
    }
  }
  return split_pieces;
}

void balance(const PlanRequest& request, const Overrides& overrides, HitRates& hits, const Placement& before,
             const std::vector<Piece>& pieces, const std::vector<std::size_t>& over, Placement& placement,
             std::vector<std::int64_t>& fell_back) {
  // When the tables do not divide over the GPUs, LPT leaves some GPUs a whole
  // table above the rest (model A's 4,096 equal tables on 768 GPUs: 256 GPUs
  // with 6, the others 5, 12.5% above the mean), and every GPU waits for the
  // busiest in the all-to-all. Each column shard costs its own kernel time
  // and a copy of the table's indices, hence the trade-off in busiest_cost.
  const Placement whole = placement;
  const double whole_busiest = busiest_cost(request, placement);
  std::optional<Placement> best;
  double best_busiest = whole_busiest;
  for (std::int64_t k = 2; k <= kMostBalancingShards; ++k) {
    placement = before;
    std::vector<Piece> split_pieces = split_for_balance(request, pieces, over, k, placement);
    if (!place_pieces(request, overrides, hits, placement, std::move(split_pieces), 0, nullptr, fell_back)) continue;
    const double most = busiest_cost(request, placement);
    if (most < best_busiest * (1 - 1e-9)) {
      best_busiest = most;
      best = placement;
    }
  }
  placement = best && best_busiest < whole_busiest * (1 - kSplitGain) ? *best : whole;
  ShardingPlan& plan = placement.plan;
  plan.whole_load_imbalance = whole.plan.load_imbalance();
  for (const TablePlacement& t : plan.tables) {
    if (t.kind != whole.plan.tables[static_cast<std::size_t>(t.table)].kind) {
      ++plan.balance_split_tables;
      plan.balance_split_shards += static_cast<std::int64_t>(t.shards.size());
    }
  }
}

std::optional<double> mean_host_hit_rate(const PlanRequest& request, const std::vector<Candidate>& candidates) {
  const auto skewed = [&](const Candidate& c) {
    return c.host &&
           (request.options.index_zipf_alpha || request.model.tables[static_cast<std::size_t>(c.group)].zipf_alpha);
  };
  if (std::none_of(candidates.begin(), candidates.end(), skewed)) return std::nullopt;
  double lookups = 0;
  double hits = 0;
  for (const Candidate& c : candidates) {
    if (!c.host) continue;
    lookups += c.pooling;
    hits += c.pooling * c.hit;
  }
  return lookups > 0 ? hits / lookups : 1.0;
}

ShardingPlan place_tables(const DlrmModel& model, int num_gpus, int gpus_per_node, const DeviceProfile& device,
                          const ShardingOptions& options, bool spread_in_host, std::vector<std::int64_t>& fell_back) {
  fell_back.clear();
  const PlanRequest request = make_request(model, num_gpus, gpus_per_node, device, options);
  std::vector<Candidate> candidates = choose_kinds(request, spread_in_host);
  spread_heavy_exchange(request, candidates);
  const Overrides overrides = apply_overrides(options, candidates);
  Placement placement = start_placement(request, std::move(candidates));
  HitRates hits;
  if (!assign_memory(request, overrides, hits, placement)) return std::move(placement.plan);
  // Fixed placements first (row-wise and data-parallel), then LPT for the rest.
  const std::vector<Piece> pieces = lay_out_tables(request, overrides, placement);
  const Placement before = placement;
  const double level = mean_work(request, placement.plan, pieces) * (1 + kSplitTolerance);
  std::vector<std::size_t> over;
  if (!place_pieces(request, overrides, hits, placement, pieces, level, &over, fell_back)) {
    return std::move(placement.plan);
  }
  // Balancing (auto): the tables that took their GPU more than
  // kSplitTolerance above the mean may go column-wise.
  if (!over.empty()) {
    balance(request, overrides, hits, before, pieces, over, placement, fell_back);
  } else {
    placement.plan.whole_load_imbalance = placement.plan.load_imbalance();
  }
  if (const std::optional<double> rate = mean_host_hit_rate(request, placement.candidates)) {
    placement.plan.host_cache_hit_rate = *rate;
  }
  return std::move(placement.plan);
}

}  // namespace zx::models::internal
