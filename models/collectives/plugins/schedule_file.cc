// File: models/collectives/plugins/schedule_file.cc
//
// Reading, checking and lowering schedule files (see schedule_file.h and
// docs/collective_schedules.md).

#include "models/collectives/plugins/schedule_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/collectives/testing/plan_checker.h"

namespace zx::models::collectives {
namespace {

constexpr int kMaxGroupSize = 1024;
constexpr std::int64_t kMaxWeight = 1'000'000;

// Which end points the chunks of each kind name (plan.h's table).
bool wants_origin(CollectiveKind kind) {
  return kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAll ||
         kind == CollectiveKind::kBroadcast;
}
bool wants_destination(CollectiveKind kind) {
  return kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllToAll ||
         kind == CollectiveKind::kReduce;
}

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (CollectiveKind k : all_collective_kinds()) out.emplace_back(to_string(k));
  return out;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The chunks of one transfer: each element an index or a [begin, end) pair.
std::vector<ChunkRange> read_chunk_list(const nlohmann::json& list, const std::string& pointer,
                                        std::size_t num_chunks, json::Diagnostics& diagnostics) {
  std::vector<ChunkRange> out;
  if (!list.is_array() || list.empty()) {
    diagnostics.error(pointer,
                      fmt::format("expected a non-empty array of chunk indices and [begin, end) "
                                  "pairs, got {}",
                                  json::describe(list)));
    return out;
  }
  const auto last = static_cast<std::int64_t>(num_chunks) - 1;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& item = list[i];
    const std::string where = fmt::format("{}/{}", pointer, i);
    if (item.is_number_integer()) {
      const std::int64_t c = item.get<std::int64_t>();
      if (c < 0 || c > last) {
        diagnostics.error(where, fmt::format("expected a chunk index in [0, {}], got {}", last, c));
        continue;
      }
      out.push_back({static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c + 1)});
    } else if (item.is_array() && item.size() == 2 && item[0].is_number_integer() &&
               item[1].is_number_integer()) {
      const std::int64_t begin = item[0].get<std::int64_t>();
      const std::int64_t end = item[1].get<std::int64_t>();
      if (begin < 0 || begin >= end) {
        diagnostics.error(where, fmt::format("expected a non-empty chunk range [begin, end), got "
                                             "[{}, {})",
                                             begin, end));
      } else if (end > last + 1) {
        diagnostics.error(where, fmt::format("chunk range [{}, {}) is out of bounds: the schedule "
                                             "has {} chunks",
                                             begin, end, num_chunks));
      } else {
        out.push_back({static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)});
      }
    } else {
      diagnostics.error(where, fmt::format("expected a chunk index or a [begin, end) pair, got {}",
                                           json::describe(item)));
    }
  }
  return out;
}

void read_chunks(json::ObjectReader& root, Schedule& s, bool kind_ok, bool n_ok,
                 json::Diagnostics& diagnostics) {
  if (!root.require("chunks")) return;
  std::optional<json::ArrayReader> chunks = root.array("chunks");
  if (!chunks) return;
  if (chunks->size() == 0) {
    root.error("chunks", "expected at least one chunk");
    return;
  }
  const json::IntRange ranks{.min = 0, .max = n_ok ? s.group_size - 1 : kMaxGroupSize - 1};
  const std::size_t errors_before = diagnostics.list().size();
  std::optional<int> root_rank;
  for (std::size_t i = 0; i < chunks->size(); ++i) {
    json::ObjectReader c = chunks->object(i);
    ScheduleChunk chunk;
    c.read_int("weight", chunk.weight, {.min = 1, .max = kMaxWeight});
    int rank = 0;
    if (c.read_int("origin", rank, ranks)) chunk.origin = rank;
    if (c.read_int("destination", rank, ranks)) chunk.destination = rank;
    c.finish();
    s.chunks.push_back(chunk);
    if (!c.valid() || !kind_ok) continue;
    const std::string_view kind = to_string(s.kind);
    for (const auto& [key, wanted, verb] :
         {std::tuple{"origin", wants_origin(s.kind), "start"},
          std::tuple{"destination", wants_destination(s.kind), "end"}}) {
      if (wanted && !c.has(key)) {
        c.error("", fmt::format("missing required key '{}': {} chunks {} at one rank", key, kind,
                                verb));
      } else if (!wanted && c.has(key)) {
        c.error(key, fmt::format("{} chunks {} at every rank; remove '{}'", kind, verb, key));
      }
    }
    // Broadcast and reduce have one root: every chunk starts (ends) there.
    const std::optional<int> end = s.kind == CollectiveKind::kBroadcast ? chunk.origin
                                   : s.kind == CollectiveKind::kReduce  ? chunk.destination
                                                                        : std::nullopt;
    if (end) {
      if (!root_rank) {
        root_rank = end;
      } else if (*end != *root_rank) {
        c.error(s.kind == CollectiveKind::kBroadcast ? "origin" : "destination",
                fmt::format("a {} has one root: chunk 0 names rank {}, this chunk rank {}", kind,
                            *root_rank, *end));
      }
    }
  }
  s.root = root_rank.value_or(0);
  if (!kind_ok || !n_ok || diagnostics.list().size() != errors_before) return;
  // Every part of the data must have a chunk to carry it (a byte count with
  // no chunk could not be delivered at any message size).
  const int n = s.group_size;
  if (s.kind == CollectiveKind::kReduceScatter || s.kind == CollectiveKind::kAllGather) {
    const bool gather = s.kind == CollectiveKind::kAllGather;
    for (int r = 0; r < n; ++r) {
      const bool covered = std::any_of(s.chunks.begin(), s.chunks.end(), [&](const auto& c) {
        return (gather ? c.origin : c.destination) == r;
      });
      if (!covered) {
        root.error("chunks", fmt::format("no chunk {} rank {}: every rank's block of a {} needs "
                                         "at least one chunk",
                                         gather ? "starts at" : "ends at", r, to_string(s.kind)));
      }
    }
  } else if (s.kind == CollectiveKind::kAllToAll) {
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        const bool covered = std::any_of(s.chunks.begin(), s.chunks.end(), [&](const auto& c) {
          return c.origin == a && c.destination == b;
        });
        if (!covered) {
          root.error("chunks", fmt::format("no chunk goes from rank {} to rank {}: every (origin, "
                                           "destination) pair of an all_to_all, a rank to "
                                           "itself included, needs at least one chunk",
                                           a, b));
        }
      }
    }
  }
}

void read_steps(json::ObjectReader& root, Schedule& s, bool kind_ok, bool n_ok,
                json::Diagnostics& diagnostics) {
  if (!root.require("steps")) return;
  std::optional<json::ArrayReader> steps = root.array("steps");
  if (!steps) return;
  const json::IntRange ranks{.min = 0, .max = n_ok ? s.group_size - 1 : kMaxGroupSize - 1};
  for (std::size_t i = 0; i < steps->size(); ++i) {
    json::ObjectReader st = steps->object(i);
    ScheduleStep step;
    if (std::optional<json::ArrayReader> after = st.array("after")) {
      for (std::size_t j = 0; j < after->size(); ++j) {
        std::int64_t a = 0;
        if (!after->read_int(j, a, {.min = 0})) continue;
        if (a >= static_cast<std::int64_t>(i)) {
          diagnostics.error(
              after->element_pointer(j),
              i == 0 ? fmt::format("the first step cannot follow a step, got {}", a)
                     : fmt::format("expected an earlier step in [0, {}], got {}", i - 1, a));
          continue;
        }
        step.after.push_back(static_cast<std::uint32_t>(a));
      }
      std::sort(step.after.begin(), step.after.end());
      step.after.erase(std::unique(step.after.begin(), step.after.end()), step.after.end());
    }
    st.require("transfers");
    if (std::optional<json::ArrayReader> transfers = st.array("transfers")) {
      for (std::size_t j = 0; j < transfers->size(); ++j) {
        json::ObjectReader t = transfers->object(j);
        ScheduleTransfer x;
        const bool src_ok = t.require("src") && t.read_int("src", x.src, ranks);
        const bool dst_ok = t.require("dst") && t.read_int("dst", x.dst, ranks);
        if (src_ok && dst_ok && x.src == x.dst) {
          t.error("",
                  fmt::format("src and dst are both rank {}: a transfer joins two ranks", x.src));
        }
        std::string op;
        if (t.require("op") && t.read_enum("op", op, {"copy", "reduce"})) {
          x.op = op == "reduce" ? TransferOp::kReduce : TransferOp::kCopy;
          if (kind_ok && x.op == TransferOp::kReduce && !is_reduction(s.kind)) {
            t.error("op", fmt::format("{} reduces nothing: expected 'copy'", to_string(s.kind)));
          }
        }
        if (t.require("chunks")) {
          if (const nlohmann::json* list = t.raw("chunks")) {
            x.chunks =
                read_chunk_list(*list, t.pointer() + "/chunks", s.chunks.size(), diagnostics);
          }
        }
        t.finish();
        step.transfers.push_back(std::move(x));
      }
    }
    st.finish();
    s.steps.push_back(std::move(step));
  }
}

// Splits `total` bytes over `weights` in proportion, on element boundaries:
// chunk i gets the elements between floor(E * W_{i-1} / W) and
// floor(E * W_i / W), W_i the running sum, so the pieces add up exactly;
// a trailing partial element goes to the last piece, as split_bytes does.
std::vector<sim::Bytes> apportion(sim::Bytes total, const std::vector<std::int64_t>& weights,
                                  int element_bytes) {
  const std::int64_t elements = total.count() / element_bytes;
  const std::int64_t partial = total.count() % element_bytes;
  std::int64_t sum = 0;
  for (std::int64_t w : weights) sum += w;
  std::vector<sim::Bytes> out;
  std::int64_t running = 0;
  std::int64_t given = 0;
  for (std::int64_t w : weights) {
    running += w;
    // 128-bit: elements (up to 2^62) times a running weight sum overflows 64 bits.
    const auto upto = static_cast<std::int64_t>(static_cast<__int128>(elements) * running / sum);
    out.emplace_back((upto - given) * element_bytes);
    given = upto;
  }
  out.back() += sim::Bytes(partial);
  return out;
}

// The part of the data chunk c belongs to, and that part's size in `request`.
std::vector<sim::Bytes> chunk_sizes(const Schedule& s, const CollectiveRequest& request) {
  const int n = s.group_size;
  std::map<std::int64_t, std::vector<std::size_t>> parts;  // part key -> chunk indices
  const auto key = [&](const ScheduleChunk& c) -> std::int64_t {
    switch (s.kind) {
      case CollectiveKind::kReduceScatter:
        return *c.destination;
      case CollectiveKind::kAllGather:
        return *c.origin;
      case CollectiveKind::kAllToAll:
        return std::int64_t{*c.origin} * n + *c.destination;
      default:
        return 0;
    }
  };
  for (std::size_t i = 0; i < s.chunks.size(); ++i) parts[key(s.chunks[i])].push_back(i);
  const std::vector<sim::Bytes> blocks =
      s.kind == CollectiveKind::kReduceScatter || s.kind == CollectiveKind::kAllGather
          ? block_sizes(request)
          : std::vector<sim::Bytes>{};
  std::vector<sim::Bytes> out(s.chunks.size());
  for (const auto& [part, members] : parts) {
    sim::Bytes total = request.bytes_per_rank;
    if (!blocks.empty()) total = blocks[static_cast<std::size_t>(part)];
    if (s.kind == CollectiveKind::kAllToAll) {
      total = pair_size(request, static_cast<int>(part / n), static_cast<int>(part % n));
    }
    std::vector<std::int64_t> weights;
    for (std::size_t i : members) weights.push_back(s.chunks[i].weight);
    const std::vector<sim::Bytes> sizes = apportion(total, weights, size_bytes(request.dtype));
    for (std::size_t k = 0; k < members.size(); ++k) out[members[k]] = sizes[k];
  }
  return out;
}

[[noreturn]] void throw_for(const Schedule& s, std::string message) {
  throw InputError(Diagnostic{.message = fmt::format("collective algorithm '{}' (schedule {}): {}",
                                                     s.name, s.source, message)});
}

// The JSON pointer of a checker message that starts "step S: " or "step S
// transfer T: " ("/steps/S", "/steps/S/transfers/T"), else empty. (Not
// std::regex: GCC 12 reports false -Wmaybe-uninitialized inside it at -O1.)
std::string checker_location(std::string_view error) {
  const auto number = [&](std::string_view prefix) -> std::optional<std::string> {
    if (!error.starts_with(prefix)) return std::nullopt;
    error.remove_prefix(prefix.size());
    std::size_t digits = 0;
    while (digits < error.size() && error[digits] >= '0' && error[digits] <= '9') ++digits;
    if (digits == 0) return std::nullopt;
    std::string out(error.substr(0, digits));
    error.remove_prefix(digits);
    return out;
  };
  const std::optional<std::string> step = number("step ");
  if (!step) return "";
  std::string location = "/steps/" + *step;
  if (const std::optional<std::string> transfer = number(" transfer ")) {
    location += "/transfers/" + *transfer;
  }
  return error.starts_with(":") ? location : "";
}

Schedule read_schedule(json::Document& doc) {
  Schedule s;
  s.source = doc.diagnostics().source();
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {kScheduleSchemaVersion});
  if (root.require("name") && root.read_string("name", s.name) && !valid_name(s.name)) {
    root.error("name", fmt::format("expected a name of lower-case letters, digits and '_' "
                                   "starting with a letter (at most 64), got \"{}\"",
                                   s.name));
  }
  root.read_string("description", s.description);
  std::string kind;
  const bool kind_ok =
      root.require("collective") && root.read_enum("collective", kind, kind_names());
  if (kind_ok) s.kind = *parse_collective_kind(kind);
  const bool n_ok = root.require("group_size") &&
                    root.read_int("group_size", s.group_size, {.min = 1, .max = kMaxGroupSize});
  read_chunks(root, s, kind_ok, n_ok, doc.diagnostics());
  read_steps(root, s, kind_ok, n_ok, doc.diagnostics());
  root.finish();
  doc.throw_if_errors();
  if (s.description.empty()) {
    s.description = fmt::format("{} on {} ranks from a schedule file", kind, s.group_size);
  }
  return s;
}

}  // namespace

Schedule parse_schedule(std::string_view text, std::string source) {
  json::Document doc = json::Document::parse(text, std::move(source));
  return read_schedule(doc);
}

Schedule load_schedule_file(const std::string& path) {
  json::Document doc = json::Document::load_file(path);  // throws for unreadable files
  return read_schedule(doc);
}

ScheduleAlgorithm::ScheduleAlgorithm(std::shared_ptr<const Schedule> schedule)
    : schedule_(std::move(schedule)) {}

CollectivePlan ScheduleAlgorithm::lower(const CollectiveRequest& request,
                                        const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const Schedule& s = *schedule_;
  const int n = static_cast<int>(request.ranks.size());
  if (n != s.group_size) {
    throw_for(s, fmt::format("the schedule is for {} ranks; the group has {}", s.group_size, n));
  }
  if ((s.kind == CollectiveKind::kBroadcast || s.kind == CollectiveKind::kReduce) &&
      request.root != s.root) {
    throw_for(s, fmt::format("the schedule's root is rank {}; the request's root is {}", s.root,
                             request.root));
  }
  CollectivePlan plan{.kind = s.kind, .group_size = n};
  const std::vector<sim::Bytes> sizes = chunk_sizes(s, request);
  for (std::size_t c = 0; c < s.chunks.size(); ++c) {
    plan.chunks.push_back(Chunk{
        .size = sizes[c], .origin = s.chunks[c].origin, .destination = s.chunks[c].destination});
  }
  // Steps keep their indices (even if empty at this size), so `after` and
  // error messages refer to the file's steps.
  for (const ScheduleStep& step : s.steps) {
    Step out{.after = step.after};
    std::map<int, sim::Bytes> work;
    for (const ScheduleTransfer& x : step.transfers) {
      sim::Bytes size;
      for (const ChunkRange& r : x.chunks) {
        for (std::uint32_t c = r.begin; c < r.end; ++c) size += sizes[c];
      }
      if (size == sim::Bytes(0)) continue;  // nothing to move at this message size
      out.transfers.push_back(
          Transfer{.src = x.src, .dst = x.dst, .size = size, .op = x.op, .chunks = x.chunks});
      if (x.op == TransferOp::kReduce) work[x.dst] += size;
    }
    for (const auto& [rank, bytes] : work) out.local_work.push_back({rank, bytes});
    plan.steps.push_back(std::move(out));
  }
  return plan;
}

CollectiveRequest sample_request(const Schedule& s) {
  CollectiveRequest r{.kind = s.kind, .dtype = DataType::kFp8, .root = s.root};
  for (int i = 0; i < s.group_size; ++i) r.ranks.push_back(i);
  // With fp8 (1-byte elements) a part of P bytes gives each of its chunks at
  // least floor(P * w / W) >= 1 byte when P >= W, its weight sum.
  std::map<std::int64_t, std::int64_t> part_weight;
  for (const ScheduleChunk& c : s.chunks) {
    std::int64_t key = 0;
    if (s.kind == CollectiveKind::kReduceScatter) key = *c.destination;
    if (s.kind == CollectiveKind::kAllGather) key = *c.origin;
    if (s.kind == CollectiveKind::kAllToAll)
      key = std::int64_t{*c.origin} * s.group_size + *c.destination;
    part_weight[key] += c.weight;
  }
  std::int64_t largest = 0;
  for (const auto& [key, w] : part_weight) largest = std::max(largest, w);
  const bool split = s.kind == CollectiveKind::kReduceScatter ||
                     s.kind == CollectiveKind::kAllGather || s.kind == CollectiveKind::kAllToAll;
  r.bytes_per_rank = sim::Bytes(split ? largest * s.group_size : largest);
  return r;
}

void validate_schedule(const Schedule& s) {
  const CollectiveRequest request = sample_request(s);
  const ScheduleAlgorithm algorithm(std::make_shared<const Schedule>(s));
  const CollectivePlan plan = algorithm.lower(request, TopologyView::packed(s.group_size, 8));
  const testing::PlanReport report = testing::check_plan(plan, request);
  if (report.ok()) return;
  // The checker names steps and transfers by index, which are the file's.
  std::vector<Diagnostic> diagnostics;
  for (const std::string& error : report.errors) {
    diagnostics.push_back(
        Diagnostic{.source = s.source,
                   .location = checker_location(error),
                   .message = fmt::format("schedule '{}' ({} on {} ranks) fails its check: {}",
                                          s.name, to_string(s.kind), s.group_size, error)});
  }
  throw InputError(std::move(diagnostics));
}

std::string register_schedule_file(const std::string& path, CollectiveRegistry& registry) {
  auto schedule = std::make_shared<const Schedule>(load_schedule_file(path));
  validate_schedule(*schedule);
  if (registry.contains(schedule->name)) {
    throw InputError(Diagnostic{
        .source = path,
        .location = "/name",
        .message = fmt::format("collective algorithm '{}' is already registered", schedule->name)});
  }
  CollectiveRegistry staged;
  staged.add(schedule->name, schedule->description, [schedule](json::ObjectReader&) {
    return std::make_unique<ScheduleAlgorithm>(schedule);
  });
  registry.merge(std::move(staged),
                 fmt::format(" [schedule {}]", std::filesystem::path(path).filename().string()));
  return schedule->name;
}

}  // namespace zx::models::collectives
