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

// A GPU activity: a kernel, memcpy or memset on a stream.
void read_gpu_event(json::ObjectReader& args, GpuEvent g, RankTrace& t) {
  args.require("stream");
  args.require("correlation");
  args.read_int("stream", g.stream, {.min = 0});
  args.read_int("correlation", g.correlation, {.min = 0});
  t.gpu.push_back(std::move(g));
}

// A CUDA runtime call: the launch a correlation id names, and the syncs,
// event records and stream waits among them.
void read_runtime_call(json::ObjectReader& args, const nlohmann::json& raw, const std::string& name, double ts,
                       RankTrace& t) {
  std::int64_t correlation = -1;
  if (!args.read_int("correlation", correlation, {.min = 0})) return;
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
}

// A CUDA sync event "Stream Wait Event".
void read_stream_wait(json::ObjectReader& args, RankTrace& t) {
  StreamWait w;
  args.require("stream");
  args.require("correlation");
  args.read_int("stream", w.stream, {.min = 0});
  args.read_int("correlation", w.correlation, {.min = 0});
  args.read_int("wait_on_stream", w.wait_on_stream);
  args.read_int("wait_on_cuda_event_record_corr_id", w.record_correlation);
  t.waits.push_back(w);
}

// An all_to_allv's "In split size" and "Out split size": element counts
// to and from each member.
void read_split_sizes(json::ObjectReader& args, ParamComms& c) {
  for (const auto& [key, out] : {std::pair{"In split size", &c.in_splits}, std::pair{"Out split size", &c.out_splits}}) {
    std::string text;
    if (!args.read_string(key, text)) continue;
    const nlohmann::json j =
        json::json_depth_ok(text) ? nlohmann::json::parse(text, nullptr, false) : nlohmann::json();
    if (!j.is_array()) {
      // PyTorch truncates long lists ("[1, 2, ...]"): not given, then.
      if (text.find("...") == std::string::npos) {
        args.error(key, fmt::format("expected a list of element counts like \"[4, 4]\", got \"{}\"", text));
      }
      continue;
    }
    for (const nlohmann::json& v : j) {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0) {
        args.error(key, fmt::format("expected non-negative element counts, got \"{}\"", text));
        out->clear();
        break;
      }
      out->push_back(v.get<std::int64_t>());
    }
  }
}

// The process group's ranks. PyTorch truncates long rank lists ("[0, 1, 2,
// ...]"); the group is then "Group size" ranks from "Global rank start" by
// "Global rank stride".
void read_group_ranks(json::ObjectReader& args, ParamComms& c) {
  std::int64_t size = -1;
  std::int64_t start = -1;
  std::int64_t stride = -1;
  args.read_int("Group size", size, {.min = 1, .max = 1 << 20});
  args.read_int("Global rank start", start, {.min = 0, .max = 1 << 20});
  args.read_int("Global rank stride", stride, {.min = 1, .max = 1 << 20});
  std::string ranks;
  if (args.read_string("Process Group Ranks", ranks)) {
    if (auto parsed = parse_rank_list(ranks)) {
      c.ranks = std::move(*parsed);
    } else if (size > 0 && start >= 0 && stride > 0) {
      for (std::int64_t k = 0; k < size; ++k)
        c.ranks.push_back(static_cast<int>(start + k * stride));
    } else {
      args.error("Process Group Ranks",
                 fmt::format("expected a list of ranks like \"[0, 1]\", got \"{}\"", ranks));
    }
  }
}

// A record_param_comms CPU op: the collective it wraps, its type, sizes and group.
ParamComms read_param_comms(json::ObjectReader& args, const nlohmann::json& raw, std::size_t i, double ts,
                            double dur) {
  ParamComms c{.index = i, .ts = ts, .dur = dur};
  if (const auto it = raw.find("tid"); it != raw.end() && it->is_number_integer()) {
    c.tid = it->get<std::int64_t>();
  }
  args.read_string("Collective name", c.collective_name);
  if (args.read_string("dtype", c.dtype) && !dtype_info(c.dtype)) {
    args.error("dtype", fmt::format("unknown dtype \"{}\"", c.dtype));
  }
  args.read_int("In msg nelems", c.in_nelems, {.min = 0});
  args.read_int("Out msg nelems", c.out_nelems, {.min = 0});
  c.pointer = fmt::format("/traceEvents/{}", i);
  read_split_sizes(args, c);
  read_group_ranks(args, c);
  return c;
}

// Event i of traceEvents, if it is one the importer uses: a complete ("X")
// GPU activity, runtime call, Stream Wait Event or record_param_comms.
void read_event(json::ArrayReader& events, const nlohmann::json& raw, std::size_t i, RankTrace& t) {
  if (!raw.is_object()) {
    events.object(i);  // reports "expected an object"
    return;
  }
  const std::string cat = string_or_empty(raw, "cat");
  const std::string ph = string_or_empty(raw, "ph");
  const std::string name = string_or_empty(raw, "name");
  if (ph != "X") return;
  const bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
  const bool runtime = cat == "cuda_runtime";
  const bool sync = cat == "cuda_sync" && name == "Stream Wait Event";
  const bool comms = cat == "cpu_op" && name == "record_param_comms";
  if (!gpu && !runtime && !sync && !comms) return;

  json::ObjectReader ev = events.object(i);
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
  if (!args || !args->valid()) return;

  if (gpu) {
    read_gpu_event(*args, GpuEvent{.index = i, .cat = cat, .name = name, .ts = ts, .dur = dur}, t);
  } else if (runtime) {
    read_runtime_call(*args, raw, name, ts, t);
  } else if (sync) {
    read_stream_wait(*args, t);
  } else {
    t.comms.push_back(read_param_comms(*args, raw, i, ts, dur));
  }
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
  for (std::size_t i = 0; i < events->size(); ++i) read_event(*events, list[i], i, t);
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

// Rank r's ops, each GPU event of its file in execution order, and the
// dependencies its stream waits and syncs imply (the rules at the top).
class RankOps {
 public:
  RankOps(models::OpGraph& g, const RankTrace& t, int r, const std::map<std::size_t, std::int64_t>& collective_of);
  void add_stream_waits();
  void add_fallback_waits();
  void add_sync_waits();

 private:
  std::optional<std::size_t> first_after(std::int64_t stream, std::int64_t corr) const;
  std::optional<std::size_t> last_before(std::int64_t stream, std::int64_t corr) const;
  void add_dep(std::size_t consumer, std::size_t producer);
  std::optional<std::int64_t> tid_of(std::size_t gi) const;

  models::OpGraph& g_;
  const RankTrace& t_;
  std::vector<std::uint32_t> op_of_;
  // stream -> GPU event indices in correlation (launch) order
  std::map<std::int64_t, std::vector<std::size_t>> launched_;
};

RankOps::RankOps(models::OpGraph& g, const RankTrace& t, int r,
                 const std::map<std::size_t, std::int64_t>& collective_of)
    : g_(g), t_(t), op_of_(t.gpu.size()) {
  for (std::size_t gi = 0; gi < t.gpu.size(); ++gi) {
    const GpuEvent& e = t.gpu[gi];
    models::Op op;
    op.rank = r;
    op.stream = g.stream(fmt::format("stream{}", e.stream));
    op.name = e.name;
    if (const auto it = collective_of.find(gi); it != collective_of.end()) {
      op.kind = models::OpKind::kCollective;
      op.collective = it->second;
      op.category = mc::to_string(g.collectives[static_cast<std::size_t>(it->second)].kind);
    } else {
      op.kind = models::OpKind::kCompute;
      op.duration = from_us(e.dur);
      op.category = e.cat == "kernel" ? "compute" : e.cat == "gpu_memcpy" ? "memcpy" : "memset";
    }
    op_of_[gi] = g.add(std::move(op));
    launched_[e.stream].push_back(gi);
  }
  for (auto& [stream, list] : launched_) {
    std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
      return t.gpu[a].correlation < t.gpu[b].correlation;
    });
  }
}

std::optional<std::size_t> RankOps::first_after(std::int64_t stream, std::int64_t corr) const {
  const auto it = launched_.find(stream);
  if (it == launched_.end()) return std::nullopt;
  for (std::size_t gi : it->second) {
    if (t_.gpu[gi].correlation > corr) return gi;
  }
  return std::nullopt;
}

std::optional<std::size_t> RankOps::last_before(std::int64_t stream, std::int64_t corr) const {
  const auto it = launched_.find(stream);
  if (it == launched_.end()) return std::nullopt;
  std::optional<std::size_t> found;
  for (std::size_t gi : it->second) {
    if (t_.gpu[gi].correlation < corr) found = gi;
  }
  return found;
}

void RankOps::add_dep(std::size_t consumer, std::size_t producer) {
  if (t_.gpu[consumer].stream == t_.gpu[producer].stream) return;  // stream order already
  std::vector<std::uint32_t>& deps = g_.ops[op_of_[consumer]].deps;
  if (std::find(deps.begin(), deps.end(), op_of_[producer]) == deps.end()) {
    deps.push_back(op_of_[producer]);
  }
}

std::optional<std::int64_t> RankOps::tid_of(std::size_t gi) const {
  const auto it = t_.launches.find(t_.gpu[gi].correlation);
  if (it == t_.launches.end()) return std::nullopt;
  return it->second.tid;
}

// Stream Wait Events: the consumer waits for its producer.
void RankOps::add_stream_waits() {
  for (const StreamWait& w : t_.waits) {
    if (w.wait_on_stream < 0 || w.record_correlation < 0) continue;
    const auto consumer = first_after(w.stream, w.correlation);
    const auto producer = last_before(w.wait_on_stream, w.record_correlation);
    if (consumer && producer) add_dep(*consumer, *producer);
  }
}

// Fallback pairing of cudaEventRecord and cudaStreamWaitEvent by thread,
// for a file without Stream Wait Events.
void RankOps::add_fallback_waits() {
  if (!t_.waits.empty()) return;
  for (const auto& [wait, tid] : t_.wait_calls) {
    std::int64_t record = -1;
    for (const auto& [corr, record_tid] : t_.records) {
      if (record_tid == tid && corr < wait) record = std::max(record, corr);
    }
    if (record < 0) continue;
    std::optional<std::size_t> consumer;
    std::optional<std::size_t> producer;
    for (std::size_t gi = 0; gi < t_.gpu.size(); ++gi) {
      if (tid_of(gi) != tid) continue;
      const std::int64_t c = t_.gpu[gi].correlation;
      if (c > wait && (!consumer || c < t_.gpu[*consumer].correlation)) consumer = gi;
      if (c < record && (!producer || c > t_.gpu[*producer].correlation)) producer = gi;
    }
    if (consumer && producer) add_dep(*consumer, *producer);
  }
}

// Device and stream syncs: every stream's next op waits for every other
// stream's last.
void RankOps::add_sync_waits() {
  for (std::int64_t c : t_.syncs) {
    for (const auto& [s, list_s] : launched_) {
      const auto consumer = first_after(s, c);
      if (!consumer) continue;
      for (const auto& [w, list_w] : launched_) {
        if (const auto producer = last_before(w, c)) add_dep(*consumer, *producer);
      }
    }
  }
}

// The graph of one Kineto trace per rank, stage by stage: the files read
// and given their ranks, each rank's NCCL collectives grouped by process
// group, the groups matched across ranks into collective calls, then each
// rank's ops. Every check throws at the first problem.
class KinetoGraph {
 public:
  explicit KinetoGraph(const std::vector<std::string>& rank_files)
      : rank_files_(rank_files), n_(static_cast<int>(rank_files.size())) {
    g_.num_ranks = n_;
    g_.compute_durations_measured = true;  // profiled next to the job's own communication
  }

  void read_ranks();
  void group_collectives();
  void match_collectives();
  void add_ops();
  // Checks the graph as a whole and hands it over.
  models::OpGraph finish();

 private:
  using GroupKey = std::vector<int>;  // the group's ranks; empty: every rank

  const std::vector<RankCollective>& list_of(std::size_t f, const GroupKey& key) const;
  std::size_t file_of(int rank) const {
    return static_cast<std::size_t>(file_of_rank_[static_cast<std::size_t>(rank)]);
  }
  void match_group(const GroupKey& key);
  void check_group(const GroupKey& key, const std::vector<int>& members, std::size_t ref) const;
  void add_collective(const GroupKey& key, const std::vector<int>& members, std::size_t k);
  void add_all_to_all_v(const GroupKey& key, const std::vector<int>& members, std::size_t k,
                        models::CollectiveCall& call) const;

  const std::vector<std::string>& rank_files_;
  const int n_;
  std::vector<RankTrace> traces_;
  std::vector<int> file_of_rank_;
  // Per file: its collectives, grouped by process group, in launch order.
  std::vector<std::map<GroupKey, std::vector<RankCollective>>> by_group_;
  // (file, gpu event) -> collective index
  std::vector<std::map<std::size_t, std::int64_t>> collective_of_;
  const std::vector<RankCollective> none_;  // a group's list in a file without it
  models::OpGraph g_;
};

// Reads the files; each is the rank its distributedInfo says (else its
// position), once, within the files given.
void KinetoGraph::read_ranks() {
  file_of_rank_.assign(static_cast<std::size_t>(n_), -1);
  for (int f = 0; f < n_; ++f) {
    RankTrace t = read_rank(rank_files_[static_cast<std::size_t>(f)]);
    if (t.rank < 0) t.rank = f;
    if (t.world_size >= 0 && t.world_size != n_) {
      throw InputError(
          Diagnostic{t.source, "/distributedInfo/world_size",
                     fmt::format("world_size {} but {} trace files given", t.world_size, n_)});
    }
    if (t.rank >= n_) {
      throw InputError(
          Diagnostic{t.source, "/distributedInfo/rank",
                     fmt::format("rank {} out of range for {} trace files", t.rank, n_)});
    }
    int& slot = file_of_rank_[static_cast<std::size_t>(t.rank)];
    if (slot >= 0) {
      throw InputError(Diagnostic{t.source, "/distributedInfo/rank",
                                  fmt::format("rank {} already given by {}", t.rank,
                                              rank_files_[static_cast<std::size_t>(slot)])});
    }
    slot = f;
    traces_.push_back(std::move(t));
  }
}

// Collectives of each rank, grouped by process group, in launch order.
void KinetoGraph::group_collectives() {
  by_group_.resize(traces_.size());
  for (std::size_t f = 0; f < traces_.size(); ++f) {
    std::vector<RankCollective> list;
    for (std::size_t gi = 0; gi < traces_[f].gpu.size(); ++gi) {
      if (auto c = classify(traces_[f], gi)) list.push_back(std::move(*c));
    }
    std::stable_sort(
        list.begin(), list.end(), [&](const RankCollective& a, const RankCollective& b) {
          return traces_[f].gpu[a.gpu_event].correlation < traces_[f].gpu[b.gpu_event].correlation;
        });
    for (RankCollective& c : list) {
      for (int r : c.ranks) {
        if (r >= n_) {
          const std::size_t ev = traces_[f].gpu[c.gpu_event].index;
          throw InputError(Diagnostic{traces_[f].source, fmt::format("/traceEvents/{}", ev),
                                      fmt::format("process group {} names rank {}, but only {} "
                                                  "trace files given",
                                                  ranks_text(c.ranks), r, n_)});
        }
      }
      by_group_[f][c.ranks].push_back(std::move(c));
    }
  }
}

const std::vector<RankCollective>& KinetoGraph::list_of(std::size_t f, const GroupKey& key) const {
  const auto it = by_group_[f].find(key);
  return it == by_group_[f].end() ? none_ : it->second;
}

void KinetoGraph::match_collectives() {
  collective_of_.resize(traces_.size());
  std::set<GroupKey> groups;
  for (const auto& m : by_group_) {
    for (const auto& [key, list] : m) groups.insert(key);
  }
  for (const GroupKey& key : groups) match_group(key);
}

// One process group: every member issues the same kinds in the same order;
// the k-th of each member is collective call k of the group.
void KinetoGraph::match_group(const GroupKey& key) {
  std::vector<int> members = key;
  if (members.empty()) {
    for (int r = 0; r < n_; ++r) members.push_back(r);
  }
  // The first member's file is the reference.
  const std::size_t ref = file_of(members[0]);
  check_group(key, members, ref);
  for (std::size_t k = 0; k < list_of(ref, key).size(); ++k) add_collective(key, members, k);
}

void KinetoGraph::check_group(const GroupKey& key, const std::vector<int>& members, std::size_t ref) const {
  const std::vector<RankCollective>& ref_list = list_of(ref, key);
  for (int r : members) {
    const std::size_t f = file_of(r);
    const std::vector<RankCollective>& list = list_of(f, key);
    if (list.size() != ref_list.size()) {
      throw InputError(Diagnostic{
          traces_[f].source, "/traceEvents",
          fmt::format("{} NCCL collective(s) in process group {}, but {} has {}", list.size(),
                      ranks_text(key), traces_[ref].source, ref_list.size())});
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (list[k].kind != ref_list[k].kind) {
        throw InputError(Diagnostic{
            traces_[f].source,
            fmt::format("/traceEvents/{}", traces_[f].gpu[list[k].gpu_event].index),
            fmt::format("NCCL collective {} of process group {} is {}, but in {} it is {}", k,
                        ranks_text(key), mc::to_string(list[k].kind), traces_[ref].source,
                        mc::to_string(ref_list[k].kind))});
      }
    }
  }
}

// Collective call k of a group: the reference's kind and type, the largest
// size any member gives.
void KinetoGraph::add_collective(const GroupKey& key, const std::vector<int>& members, std::size_t k) {
  const RankCollective& ref = list_of(file_of(members[0]), key)[k];
  models::CollectiveCall call;
  call.kind = ref.kind;
  call.ranks = members;
  call.dtype = ref.dtype;
  std::int64_t bytes = 0;
  for (int r : members) bytes = std::max(bytes, list_of(file_of(r), key)[k].bytes);
  call.bytes_per_rank = sim::Bytes(bytes);
  if (call.kind == mc::CollectiveKind::kAllToAll) add_all_to_all_v(key, members, k, call);
  const std::int64_t index = static_cast<std::int64_t>(g_.collectives.size());
  g_.collectives.push_back(std::move(call));
  for (int r : members) {
    const std::size_t f = file_of(r);
    collective_of_[f][list_of(f, key)[k].gpu_event] = index;
  }
}

// all_to_allv: each member's "In split size" is its row of the byte
// matrix; every member's "Out split size" must be its column.
void KinetoGraph::add_all_to_all_v(const GroupKey& key, const std::vector<int>& members, std::size_t k,
                                   models::CollectiveCall& call) const {
  bool all_rows = true;
  for (int r : members) all_rows &= list_of(file_of(r), key)[k].send_bytes.size() == members.size();
  if (!all_rows) return;
  for (int r : members) call.all_to_all_v_bytes.push_back(list_of(file_of(r), key)[k].send_bytes);
  for (std::size_t j = 0; j < members.size(); ++j) {
    const std::size_t f = file_of(members[j]);
    const RankCollective& c = list_of(f, key)[k];
    if (c.receive_bytes.empty()) continue;
    std::vector<std::int64_t> column;
    for (const auto& row : call.all_to_all_v_bytes) column.push_back(row[j]);
    if (c.receive_bytes != column) {
      throw InputError(Diagnostic{
          traces_[f].source, c.pointer,
          fmt::format("all_to_allv {} of process group {}: Out split size gives bytes [{}] from the members, "
                      "but their In split sizes send [{}]",
                      k, ranks_text(key), fmt::join(c.receive_bytes, ", "), fmt::join(column, ", "))});
    }
  }
}

// Ops, rank by rank, each rank's GPU events in execution order.
void KinetoGraph::add_ops() {
  for (int r = 0; r < n_; ++r) {
    const std::size_t f = file_of(r);
    RankOps ops(g_, traces_[f], r, collective_of_[f]);
    ops.add_stream_waits();
    ops.add_fallback_waits();
    ops.add_sync_waits();
  }
}

models::OpGraph KinetoGraph::finish() {
  const std::vector<models::OpGraphProblem> problems = models::validate(g_);
  if (!problems.empty()) {
    std::vector<Diagnostic> list;
    for (const models::OpGraphProblem& p : problems) {
      list.push_back(Diagnostic{rank_files_[0], "", fmt::format("imported graph: {}", p.message)});
    }
    throw InputError(std::move(list));
  }
  return std::move(g_);
}

}  // namespace

models::OpGraph import_kineto(const std::vector<std::string>& rank_files) {
  if (rank_files.empty()) {
    throw InputError(Diagnostic{"<kineto>", "", "no trace files given"});
  }
  KinetoGraph graph(rank_files);
  graph.read_ranks();
  graph.group_collectives();
  graph.match_collectives();
  graph.add_ops();
  return graph.finish();
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
