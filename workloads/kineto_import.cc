// File: workloads/kineto_import.cc
//
// The Kineto (torch.profiler) trace importer; kineto_import.h says what is
// imported. Format facts, and where they come from:
//
//   * Kineto's ChromeTraceLogger writes {"schemaVersion", "deviceProperties",
//     "distributedInfo": {"backend", "rank", "world_size"}, "traceEvents":
//     [...]}; times are microseconds (doubles). GPU activities are "X"
//     events with "cat" "kernel" / "gpu_memcpy" / "gpu_memset", "pid" the
//     device, "tid" the stream, and args "device", "stream", "correlation",
//     "External id". Runtime calls are "cat": "cuda_runtime" with args
//     "correlation"; "ac2g" flow events ("s" on the runtime call, "f" on the
//     kernel, "id" = correlation) draw the launch arrows and are not needed
//     here, the correlation id carries the same link.
//   * CUDA sync events (libkineto CudaSyncActivity, enabled by
//     _ExperimentalConfig(enable_cuda_sync_events=True)): "cat": "cuda_sync",
//     name "Stream Wait Event", args "stream" (the waiting stream),
//     "correlation" (the cudaStreamWaitEvent call), "wait_on_stream" (the
//     stream the event was recorded on) and
//     "wait_on_cuda_event_record_corr_id" (the cudaEventRecord call). HTA's
//     critical-path analysis uses the same fields.
//   * PyTorch's c10d profiling wraps each collective in a "record_param_comms"
//     CPU op with args "Collective name" ("allreduce", "_allgather_base",
//     "reduce_scatter_tensor_coalesced", "all_to_allv", ...), "dtype" (c10
//     ScalarType names: "Float", "Half", "BFloat16", ...), "In msg nelems",
//     "Out msg nelems", "Group size", "Process Group Ranks" (a string,
//     "[0, 1]"). HTA computes message bytes as max(in, out) nelems x dtype
//     size; so do we (it is nccl-tests' size for every kind).
//   * NCCL kernel names: NCCL >= 2.19 "ncclDevKernel_<Func>_<Op>_<type>_<algo>_<proto>(...)",
//     older "ncclKernel_<Func>_<algo>_<proto>_<Op>_<type>(...)".
//
// Rules (trace-replay style, as Chakra's and HTA's replayers do):
//   * CPU launch order is correlation-id order (CUPTI ids increase per
//     process). A kernel is "launched after" a runtime call when its
//     correlation is larger.
//   * A record_param_comms op encloses the NCCL kernel's launch when its
//     [ts, ts + dur] contains the ts of the launching runtime call (same
//     correlation) on the same thread; the innermost one wins.
//   * Stream Wait Event: consumer = first GPU op on "stream" with
//     correlation > the wait's correlation; producer = last GPU op on
//     "wait_on_stream" with correlation < the record's. A consumer depends on
//     its producer. Missing either: no dependency.
//   * Fallback when a file has no "Stream Wait Event" (profiled without
//     enable_cuda_sync_events): a cudaStreamWaitEvent runtime call with
//     correlation w, after the latest cudaEventRecord (correlation e < w) of
//     the same CPU thread: the first GPU op launched by that thread after w
//     depends on the last GPU op it launched before e, when they run on
//     different streams. This is the pattern of ProcessGroupNCCL (record on
//     the current stream, wait on the NCCL stream, launch the NCCL kernel)
//     and of torch.cuda.Stream.wait_stream; a wait on an event recorded
//     elsewhere may be attributed to the wrong producer.
//   * cudaDeviceSynchronize / cudaStreamSynchronize with correlation c: for
//     every stream, its first GPU op with correlation > c depends on the last
//     GPU op of every other stream with correlation < c. (A stream sync only
//     names the thread, not the stream, in the runtime event; we treat it as
//     device-wide, which can only add waits.)
//   * Not modelled: host-side gaps (no delay ops); event syncs
//     (cudaEventSynchronize); CUDA graphs.

#include "workloads/kineto_import.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"

namespace zx::workloads {
namespace {

namespace mc = models::collectives;

struct GpuEvent {
  std::size_t index = 0;  // in traceEvents
  std::string cat;
  std::string name;
  double ts = 0;
  double dur = 0;
  std::int64_t stream = 0;
  std::int64_t correlation = 0;
};

struct StreamWait {
  std::int64_t stream = 0;
  std::int64_t wait_on_stream = -1;
  std::int64_t correlation = 0;
  std::int64_t record_correlation = -1;
};

struct ParamComms {
  std::size_t index = 0;
  std::int64_t tid = 0;
  double ts = 0;
  double dur = 0;
  std::string collective_name;
  std::string dtype;
  std::int64_t in_nelems = -1;
  std::int64_t out_nelems = -1;
  std::vector<int> ranks;  // empty: not given
  // all_to_allv: elements to (in) and from (out) each member, in group
  // order; empty when not given ("[]") or truncated ("[1, 2, ...]").
  std::vector<std::int64_t> in_splits, out_splits;
  std::string pointer;  // "/traceEvents/i"
};

struct Launch {
  std::int64_t tid = 0;
  double ts = 0;
};

// One NCCL collective of one rank, before matching across ranks.
struct RankCollective {
  std::size_t gpu_event = 0;  // index into RankTrace::gpu
  mc::CollectiveKind kind = mc::CollectiveKind::kAllReduce;
  mc::DataType dtype = mc::DataType::kFp32;
  std::int64_t bytes = 0;
  std::vector<int> ranks;  // empty: every rank
  std::vector<std::int64_t> send_bytes;     // all_to_allv: to each member, in group order
  std::vector<std::int64_t> receive_bytes;  // and from each
  std::string pointer;                      // of the record_param_comms event
};

struct RankTrace {
  std::string source;
  int rank = -1;
  int world_size = -1;
  std::vector<GpuEvent> gpu;  // sorted by (ts, correlation) after reading
  std::vector<StreamWait> waits;
  std::vector<std::int64_t> syncs;  // correlations of device/stream syncs
  // Runtime cudaEventRecord / cudaStreamWaitEvent calls: (correlation, tid).
  std::vector<std::pair<std::int64_t, std::int64_t>> records;
  std::vector<std::pair<std::int64_t, std::int64_t>> wait_calls;
  std::vector<ParamComms> comms;
  std::map<std::int64_t, Launch> launches;  // correlation -> runtime call
};

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// The zionsim kind of a c10d "Collective name", or nullopt if not a collective we map.
std::optional<mc::CollectiveKind> kind_from_collective_name(std::string_view name) {
  const std::string n = lower(name);
  if (n.find("allreduce") != std::string::npos) return mc::CollectiveKind::kAllReduce;
  if (n.find("allgather") != std::string::npos) return mc::CollectiveKind::kAllGather;
  if (n.find("reducescatter") != std::string::npos) return mc::CollectiveKind::kReduceScatter;
  if (n.find("alltoall") != std::string::npos) return mc::CollectiveKind::kAllToAll;
  if (n.find("broadcast") != std::string::npos) return mc::CollectiveKind::kBroadcast;
  if (n == "reduce") return mc::CollectiveKind::kReduce;
  return std::nullopt;
}

bool is_nccl_kernel(std::string_view name) {
  return name.starts_with("ncclDevKernel_") || name.starts_with("ncclKernel_");
}

// The kind from an NCCL kernel name, or "" (SendRecv, Generic, unknown).
std::optional<mc::CollectiveKind> kind_from_kernel_name(std::string_view name) {
  name.remove_prefix(name.starts_with("ncclDevKernel_") ? 14 : 11);
  const std::size_t end = name.find_first_of("_(");
  const std::string_view func = name.substr(0, end);
  if (func == "AllReduce") return mc::CollectiveKind::kAllReduce;
  if (func == "AllGather") return mc::CollectiveKind::kAllGather;
  if (func == "ReduceScatter") return mc::CollectiveKind::kReduceScatter;
  if (func == "Broadcast") return mc::CollectiveKind::kBroadcast;
  if (func == "Reduce") return mc::CollectiveKind::kReduce;
  return std::nullopt;
}

// Bytes per element and zionsim dtype of a c10 ScalarType name.
std::optional<std::pair<int, mc::DataType>> dtype_info(std::string_view name) {
  using enum mc::DataType;
  static const std::map<std::string, std::pair<int, mc::DataType>, std::less<>> table = {
      {"Float", {4, kFp32}},  {"Half", {2, kFp16}},          {"BFloat16", {2, kBf16}},
      {"Double", {8, kFp32}}, {"Int", {4, kFp32}},           {"Long", {8, kFp32}},
      {"Short", {2, kFp16}},  {"Char", {1, kFp32}},          {"Byte", {1, kFp32}},
      {"Bool", {1, kFp32}},   {"Float8_e4m3fn", {1, kFp32}}, {"Float8_e5m2", {1, kFp32}},
  };
  const auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// "[0, 1, 2]" -> {0, 1, 2}; nullopt if not of that form.
std::optional<std::vector<int>> parse_rank_list(const std::string& text) {
  if (!json::json_depth_ok(text)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return std::nullopt;
  std::vector<int> ranks;
  for (const nlohmann::json& r : j) {
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > 1 << 20) {
      return std::nullopt;
    }
    ranks.push_back(r.get<int>());
  }
  return ranks;
}

std::string string_or_empty(const nlohmann::json& event, const char* key) {
  const auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : std::string();
}

RankTrace read_rank(const std::string& path) {
  json::Document doc = json::Document::load_file(path);
  json::ObjectReader root = doc.root();
  RankTrace t;
  t.source = path;
  if (!root.valid()) doc.throw_if_errors();
  if (auto info = root.object("distributedInfo"); info && info->valid()) {
    info->read_int("rank", t.rank, {.min = 0, .max = 1 << 20});
    info->read_int("world_size", t.world_size, {.min = 1, .max = 1 << 20});
  }
  root.require("traceEvents");
  std::optional<json::ArrayReader> events = root.array("traceEvents");
  if (!events || !events->valid()) {
    doc.throw_if_errors();
    return t;
  }
  const nlohmann::json& list = doc.value()["traceEvents"];
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& raw = list[i];
    if (!raw.is_object()) {
      events->object(i);  // reports "expected an object"
      continue;
    }
    const std::string cat = string_or_empty(raw, "cat");
    const std::string ph = string_or_empty(raw, "ph");
    const std::string name = string_or_empty(raw, "name");
    if (ph != "X") continue;
    const bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    const bool runtime = cat == "cuda_runtime";
    const bool sync = cat == "cuda_sync" && name == "Stream Wait Event";
    const bool comms = cat == "cpu_op" && name == "record_param_comms";
    if (!gpu && !runtime && !sync && !comms) continue;

    json::ObjectReader ev = events->object(i);
    double ts = 0;
    double dur = 0;
    ev.require("ts");
    ev.read_number("ts", ts);
    if (gpu || comms) {
      ev.require("dur");
      // At most 1e12 us: the 1e15 ns every trace's op durations are held to
      // (README, "Limits on inputs"); beyond it a duration would not fit the
      // simulated clock.
      ev.read_number("dur", dur, {.min = 0, .max = 1e12});
    }
    if (gpu || sync) ev.require("args");
    std::optional<json::ObjectReader> args = ev.object("args");
    if (!args || !args->valid()) continue;

    if (gpu) {
      GpuEvent g{.index = i, .cat = cat, .name = name, .ts = ts, .dur = dur};
      args->require("stream");
      args->require("correlation");
      args->read_int("stream", g.stream, {.min = 0});
      args->read_int("correlation", g.correlation, {.min = 0});
      t.gpu.push_back(std::move(g));
    } else if (runtime) {
      std::int64_t correlation = -1;
      if (!args->read_int("correlation", correlation, {.min = 0})) continue;
      std::int64_t tid = 0;
      if (const auto it = raw.find("tid"); it != raw.end() && it->is_number_integer()) {
        tid = it->get<std::int64_t>();
      }
      t.launches[correlation] = Launch{tid, ts};
      if (name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize") {
        t.syncs.push_back(correlation);
      } else if (name == "cudaEventRecord" || name == "cudaEventRecordWithFlags") {
        t.records.emplace_back(correlation, tid);
      } else if (name == "cudaStreamWaitEvent") {
        t.wait_calls.emplace_back(correlation, tid);
      }
    } else if (sync) {
      StreamWait w;
      args->require("stream");
      args->require("correlation");
      args->read_int("stream", w.stream, {.min = 0});
      args->read_int("correlation", w.correlation, {.min = 0});
      args->read_int("wait_on_stream", w.wait_on_stream);
      args->read_int("wait_on_cuda_event_record_corr_id", w.record_correlation);
      t.waits.push_back(w);
    } else {
      ParamComms c{.index = i, .ts = ts, .dur = dur};
      if (const auto it = raw.find("tid"); it != raw.end() && it->is_number_integer()) {
        c.tid = it->get<std::int64_t>();
      }
      args->read_string("Collective name", c.collective_name);
      if (args->read_string("dtype", c.dtype) && !dtype_info(c.dtype)) {
        args->error("dtype", fmt::format("unknown dtype \"{}\"", c.dtype));
      }
      args->read_int("In msg nelems", c.in_nelems, {.min = 0});
      args->read_int("Out msg nelems", c.out_nelems, {.min = 0});
      c.pointer = fmt::format("/traceEvents/{}", i);
      for (const auto& [key, out] : {std::pair{"In split size", &c.in_splits}, std::pair{"Out split size", &c.out_splits}}) {
        std::string text;
        if (!args->read_string(key, text)) continue;
        const nlohmann::json j =
            json::json_depth_ok(text) ? nlohmann::json::parse(text, nullptr, false) : nlohmann::json();
        if (!j.is_array()) {
          // PyTorch truncates long lists ("[1, 2, ...]"): not given, then.
          if (text.find("...") == std::string::npos) {
            args->error(key, fmt::format("expected a list of element counts like \"[4, 4]\", got \"{}\"", text));
          }
          continue;
        }
        for (const nlohmann::json& v : j) {
          if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
            args->error(key, fmt::format("expected non-negative element counts, got \"{}\"", text));
            out->clear();
            break;
          }
          out->push_back(v.get<std::int64_t>());
        }
      }
      // PyTorch truncates long rank lists ("[0, 1, 2, ...]"); the group is
      // then "Group size" ranks from "Global rank start" by "Global rank stride".
      std::int64_t size = -1;
      std::int64_t start = -1;
      std::int64_t stride = -1;
      args->read_int("Group size", size, {.min = 1, .max = 1 << 20});
      args->read_int("Global rank start", start, {.min = 0, .max = 1 << 20});
      args->read_int("Global rank stride", stride, {.min = 1, .max = 1 << 20});
      std::string ranks;
      if (args->read_string("Process Group Ranks", ranks)) {
        if (auto parsed = parse_rank_list(ranks)) {
          c.ranks = std::move(*parsed);
        } else if (size > 0 && start >= 0 && stride > 0) {
          for (std::int64_t k = 0; k < size; ++k)
            c.ranks.push_back(static_cast<int>(start + k * stride));
        } else {
          args->error("Process Group Ranks",
                      fmt::format("expected a list of ranks like \"[0, 1]\", got \"{}\"", ranks));
        }
      }
      t.comms.push_back(std::move(c));
    }
  }
  doc.throw_if_errors();
  std::stable_sort(t.gpu.begin(), t.gpu.end(), [](const GpuEvent& a, const GpuEvent& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.correlation < b.correlation;
  });
  return t;
}

// The bytes of `nelems` elements of `elem` bytes, refused beyond the 1e15
// bytes per rank every size in zionsim is limited to (README, "Limits"), so
// that an element count of 2^62 is an error and not an overflow.
std::int64_t checked_bytes(const RankTrace& t, const ParamComms& p, std::int64_t nelems, int elem, const char* what) {
  constexpr std::int64_t kMaxBytes = 1'000'000'000'000'000;
  if (nelems > kMaxBytes / elem) {
    throw InputError(Diagnostic{t.source, p.pointer,
                                fmt::format("{} of {} elements of {} bytes is more than the limit of 1e15 bytes", what,
                                            nelems, elem)});
  }
  return nelems * elem;
}

// What the NCCL kernel `g` of `t` is, or nullopt if it stays a compute op.
std::optional<RankCollective> classify(const RankTrace& t, std::size_t gi) {
  const GpuEvent& g = t.gpu[gi];
  if (g.cat != "kernel" || !is_nccl_kernel(g.name)) return std::nullopt;
  RankCollective c;
  c.gpu_event = gi;
  std::optional<mc::CollectiveKind> kind = kind_from_kernel_name(g.name);
  const ParamComms* enclosing = nullptr;
  if (const auto launch = t.launches.find(g.correlation); launch != t.launches.end()) {
    for (const ParamComms& p : t.comms) {
      if (p.tid != launch->second.tid || p.ts > launch->second.ts ||
          launch->second.ts > p.ts + p.dur) {
        continue;
      }
      if (enclosing == nullptr || p.ts >= enclosing->ts) enclosing = &p;
    }
  }
  if (enclosing != nullptr) {
    if (const auto named = kind_from_collective_name(enclosing->collective_name)) kind = named;
    if (const auto info = dtype_info(enclosing->dtype)) {
      c.dtype = info->second;
      c.bytes = checked_bytes(t, *enclosing, std::max<std::int64_t>(0, std::max(enclosing->in_nelems, enclosing->out_nelems)),
                              info->first, "max(In msg nelems, Out msg nelems)");
      if (kind == mc::CollectiveKind::kAllToAll) {
        for (std::int64_t n : enclosing->in_splits) {
          c.send_bytes.push_back(checked_bytes(t, *enclosing, n, info->first, "an In split size"));
        }
        for (std::int64_t n : enclosing->out_splits) {
          c.receive_bytes.push_back(checked_bytes(t, *enclosing, n, info->first, "an Out split size"));
        }
      }
    }
    c.ranks = enclosing->ranks;
    c.pointer = enclosing->pointer;
  }
  if (!kind) return std::nullopt;
  c.kind = *kind;
  return c;
}

std::string ranks_text(const std::vector<int>& ranks) {
  return ranks.empty() ? "(all ranks)" : fmt::format("[{}]", fmt::join(ranks, ", "));
}

sim::Duration from_us(double us) {
  // llround of a value past int64 is undefined; the clock's range is checked.
  if (!(std::abs(us) < 9.2e12)) sim::internal::throw_time_overflow("a Kineto duration");
  return sim::Duration::ps(std::llround(us * 1e6));
}

}  // namespace

models::OpGraph import_kineto(const std::vector<std::string>& rank_files) {
  if (rank_files.empty()) {
    throw InputError(Diagnostic{"<kineto>", "", "no trace files given"});
  }
  const int n = static_cast<int>(rank_files.size());
  std::vector<RankTrace> traces;
  std::vector<int> file_of_rank(static_cast<std::size_t>(n), -1);
  for (int f = 0; f < n; ++f) {
    RankTrace t = read_rank(rank_files[static_cast<std::size_t>(f)]);
    if (t.rank < 0) t.rank = f;
    if (t.world_size >= 0 && t.world_size != n) {
      throw InputError(
          Diagnostic{t.source, "/distributedInfo/world_size",
                     fmt::format("world_size {} but {} trace files given", t.world_size, n)});
    }
    if (t.rank >= n) {
      throw InputError(
          Diagnostic{t.source, "/distributedInfo/rank",
                     fmt::format("rank {} out of range for {} trace files", t.rank, n)});
    }
    int& slot = file_of_rank[static_cast<std::size_t>(t.rank)];
    if (slot >= 0) {
      throw InputError(Diagnostic{t.source, "/distributedInfo/rank",
                                  fmt::format("rank {} already given by {}", t.rank,
                                              rank_files[static_cast<std::size_t>(slot)])});
    }
    slot = f;
    traces.push_back(std::move(t));
  }

  // Collectives of each rank, grouped by process group, in launch order.
  using GroupKey = std::vector<int>;
  std::vector<std::map<GroupKey, std::vector<RankCollective>>> by_group(traces.size());
  for (std::size_t f = 0; f < traces.size(); ++f) {
    std::vector<RankCollective> list;
    for (std::size_t gi = 0; gi < traces[f].gpu.size(); ++gi) {
      if (auto c = classify(traces[f], gi)) list.push_back(std::move(*c));
    }
    std::stable_sort(
        list.begin(), list.end(), [&](const RankCollective& a, const RankCollective& b) {
          return traces[f].gpu[a.gpu_event].correlation < traces[f].gpu[b.gpu_event].correlation;
        });
    for (RankCollective& c : list) {
      for (int r : c.ranks) {
        if (r >= n) {
          const std::size_t ev = traces[f].gpu[c.gpu_event].index;
          throw InputError(Diagnostic{traces[f].source, fmt::format("/traceEvents/{}", ev),
                                      fmt::format("process group {} names rank {}, but only {} "
                                                  "trace files given",
                                                  ranks_text(c.ranks), r, n)});
        }
      }
      by_group[f][c.ranks].push_back(std::move(c));
    }
  }

  models::OpGraph g;
  g.num_ranks = n;
  g.compute_durations_measured = true;  // profiled next to the job's own communication
  // (file, gpu event) -> collective index
  std::vector<std::map<std::size_t, std::int64_t>> collective_of(traces.size());
  std::set<GroupKey> groups;
  for (const auto& m : by_group) {
    for (const auto& [key, list] : m) groups.insert(key);
  }
  for (const GroupKey& key : groups) {
    std::vector<int> members = key;
    if (members.empty()) {
      for (int r = 0; r < n; ++r) members.push_back(r);
    }
    // The first member's file is the reference.
    const std::size_t ref =
        static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(members[0])]);
    const std::vector<RankCollective> none;
    auto list_of = [&](std::size_t f) -> const std::vector<RankCollective>& {
      const auto it = by_group[f].find(key);
      return it == by_group[f].end() ? none : it->second;
    };
    const std::vector<RankCollective>& ref_list = list_of(ref);
    for (int r : members) {
      const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
      const std::vector<RankCollective>& list = list_of(f);
      if (list.size() != ref_list.size()) {
        throw InputError(Diagnostic{
            traces[f].source, "/traceEvents",
            fmt::format("{} NCCL collective(s) in process group {}, but {} has {}", list.size(),
                        ranks_text(key), traces[ref].source, ref_list.size())});
      }
      for (std::size_t k = 0; k < list.size(); ++k) {
        if (list[k].kind != ref_list[k].kind) {
          throw InputError(Diagnostic{
              traces[f].source,
              fmt::format("/traceEvents/{}", traces[f].gpu[list[k].gpu_event].index),
              fmt::format("NCCL collective {} of process group {} is {}, but in {} it is {}", k,
                          ranks_text(key), mc::to_string(list[k].kind), traces[ref].source,
                          mc::to_string(ref_list[k].kind))});
        }
      }
    }
    for (std::size_t k = 0; k < ref_list.size(); ++k) {
      models::CollectiveCall call;
      call.kind = ref_list[k].kind;
      call.ranks = members;
      call.dtype = ref_list[k].dtype;
      std::int64_t bytes = 0;
      for (int r : members) {
        const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
        bytes = std::max(bytes, list_of(f)[k].bytes);
      }
      call.bytes_per_rank = sim::Bytes(bytes);
      // all_to_allv: each member's "In split size" is its row of the byte
      // matrix; every member's "Out split size" must be its column.
      if (call.kind == mc::CollectiveKind::kAllToAll) {
        bool all_rows = true;
        for (int r : members) {
          const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
          all_rows &= list_of(f)[k].send_bytes.size() == members.size();
        }
        if (all_rows) {
          for (int r : members) {
            const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
            call.all_to_all_v_bytes.push_back(list_of(f)[k].send_bytes);
          }
          for (std::size_t j = 0; j < members.size(); ++j) {
            const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(members[j])]);
            const RankCollective& c = list_of(f)[k];
            if (c.receive_bytes.empty()) continue;
            std::vector<std::int64_t> column;
            for (const auto& row : call.all_to_all_v_bytes) column.push_back(row[j]);
            if (c.receive_bytes != column) {
              throw InputError(Diagnostic{
                  traces[f].source, c.pointer,
                  fmt::format("all_to_allv {} of process group {}: Out split size gives bytes [{}] from the members, "
                              "but their In split sizes send [{}]",
                              k, ranks_text(key), fmt::join(c.receive_bytes, ", "), fmt::join(column, ", "))});
            }
          }
        }
      }
      const std::int64_t index = static_cast<std::int64_t>(g.collectives.size());
      g.collectives.push_back(std::move(call));
      for (int r : members) {
        const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
        collective_of[f][list_of(f)[k].gpu_event] = index;
      }
    }
  }

  // Ops, rank by rank, each rank's GPU events in execution order.
  for (int r = 0; r < n; ++r) {
    const std::size_t f = static_cast<std::size_t>(file_of_rank[static_cast<std::size_t>(r)]);
    const RankTrace& t = traces[f];
    std::vector<std::uint32_t> op_of(t.gpu.size());
    // stream -> GPU event indices in correlation (launch) order
    std::map<std::int64_t, std::vector<std::size_t>> launched;
    for (std::size_t gi = 0; gi < t.gpu.size(); ++gi) {
      const GpuEvent& e = t.gpu[gi];
      models::Op op;
      op.rank = r;
      op.stream = g.stream(fmt::format("stream{}", e.stream));
      op.name = e.name;
      if (const auto it = collective_of[f].find(gi); it != collective_of[f].end()) {
        op.kind = models::OpKind::kCollective;
        op.collective = it->second;
        op.category = mc::to_string(g.collectives[static_cast<std::size_t>(it->second)].kind);
      } else {
        op.kind = models::OpKind::kCompute;
        op.duration = from_us(e.dur);
        op.category = e.cat == "kernel" ? "compute" : e.cat == "gpu_memcpy" ? "memcpy" : "memset";
      }
      op_of[gi] = g.add(std::move(op));
      launched[e.stream].push_back(gi);
    }
    for (auto& [stream, list] : launched) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return t.gpu[a].correlation < t.gpu[b].correlation;
      });
    }
    auto first_after = [&](std::int64_t stream, std::int64_t corr) -> std::optional<std::size_t> {
      const auto it = launched.find(stream);
      if (it == launched.end()) return std::nullopt;
      for (std::size_t gi : it->second) {
        if (t.gpu[gi].correlation > corr) return gi;
      }
      return std::nullopt;
    };
    auto last_before = [&](std::int64_t stream, std::int64_t corr) -> std::optional<std::size_t> {
      const auto it = launched.find(stream);
      if (it == launched.end()) return std::nullopt;
      std::optional<std::size_t> found;
      for (std::size_t gi : it->second) {
        if (t.gpu[gi].correlation < corr) found = gi;
      }
      return found;
    };
    auto add_dep = [&](std::size_t consumer, std::size_t producer) {
      if (t.gpu[consumer].stream == t.gpu[producer].stream) return;  // stream order already
      std::vector<std::uint32_t>& deps = g.ops[op_of[consumer]].deps;
      if (std::find(deps.begin(), deps.end(), op_of[producer]) == deps.end()) {
        deps.push_back(op_of[producer]);
      }
    };
    for (const StreamWait& w : t.waits) {
      if (w.wait_on_stream < 0 || w.record_correlation < 0) continue;
      const auto consumer = first_after(w.stream, w.correlation);
      const auto producer = last_before(w.wait_on_stream, w.record_correlation);
      if (consumer && producer) add_dep(*consumer, *producer);
    }
    if (t.waits.empty()) {
      // Fallback pairing of cudaEventRecord and cudaStreamWaitEvent by thread.
      auto tid_of = [&](std::size_t gi) -> std::optional<std::int64_t> {
        const auto it = t.launches.find(t.gpu[gi].correlation);
        if (it == t.launches.end()) return std::nullopt;
        return it->second.tid;
      };
      for (const auto& [wait, tid] : t.wait_calls) {
        std::int64_t record = -1;
        for (const auto& [corr, record_tid] : t.records) {
          if (record_tid == tid && corr < wait) record = std::max(record, corr);
        }
        if (record < 0) continue;
        std::optional<std::size_t> consumer;
        std::optional<std::size_t> producer;
        for (std::size_t gi = 0; gi < t.gpu.size(); ++gi) {
          if (tid_of(gi) != tid) continue;
          const std::int64_t c = t.gpu[gi].correlation;
          if (c > wait && (!consumer || c < t.gpu[*consumer].correlation)) consumer = gi;
          if (c < record && (!producer || c > t.gpu[*producer].correlation)) producer = gi;
        }
        if (consumer && producer) add_dep(*consumer, *producer);
      }
    }
    for (std::int64_t c : t.syncs) {
      for (const auto& [s, list_s] : launched) {
        const auto consumer = first_after(s, c);
        if (!consumer) continue;
        for (const auto& [w, list_w] : launched) {
          if (const auto producer = last_before(w, c)) add_dep(*consumer, *producer);
        }
      }
    }
  }

  const std::vector<models::OpGraphProblem> problems = models::validate(g);
  if (!problems.empty()) {
    std::vector<Diagnostic> list;
    for (const models::OpGraphProblem& p : problems) {
      list.push_back(Diagnostic{rank_files[0], "", fmt::format("imported graph: {}", p.message)});
    }
    throw InputError(std::move(list));
  }
  return g;
}

bool looks_like_kineto(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path);
  } catch (const InputError&) {
    return false;
  }
  if (!json::json_depth_ok(text)) return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return false;
  const auto it = j.find("traceEvents");
  return it != j.end() && it->is_array();
}

}  // namespace zx::workloads
