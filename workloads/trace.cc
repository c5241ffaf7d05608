#include "workloads/trace.h"

#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text_out.h"
#include "base/json_reader.h"
#include "models/compute/cost_models.h"

namespace zx::workloads {
namespace {

constexpr int kSchemaVersion = 1;
const std::vector<std::string> kOpKinds = {"collective", "compute", "delay", "host_copy", "recv", "send"};
const std::vector<std::string> kCollectiveKinds = {"all_gather", "all_reduce", "all_to_all", "broadcast", "reduce",
                                                   "reduce_scatter"};
const std::vector<std::string> kTypes = {"bf16", "fp16", "fp32", "fp8"};

models::OpKind op_kind(const std::string& s) {
  if (s == "collective") return models::OpKind::kCollective;
  if (s == "send") return models::OpKind::kSend;
  if (s == "recv") return models::OpKind::kRecv;
  if (s == "delay") return models::OpKind::kDelay;
  if (s == "host_copy") return models::OpKind::kHostCopy;
  return models::OpKind::kCompute;
}

// A compute op's kernel, priced by the cost models.
sim::Duration kernel_time(json::ObjectReader& k, const models::DeviceProfile* device) {
  std::string type;
  k.require("type");
  if (!k.read_enum("type", type, {"embedding_backward", "embedding_forward", "gemm"})) return sim::Duration::zero();
  std::string dtype = "fp16";
  k.read_enum("dtype", dtype, kTypes);
  const models::DataType t = models::parse_data_type(dtype);
  if (type == "gemm") {
    std::int64_t m = 0, n = 0, kk = 0, batch = 1;
    for (const char* key : {"m", "n", "k"}) k.require(key);
    const json::IntRange dims{1, std::int64_t{1} << 32};
    const bool ok = k.read_int("m", m, dims) & k.read_int("n", n, dims) & k.read_int("k", kk, dims);
    k.read_int("batch", batch, dims);
    k.finish();
    if (!ok || device == nullptr) return sim::Duration::zero();
    return models::gemm(*device, m, n, kk, t, batch).time;
  }
  models::EmbeddingShape s;
  for (const char* key : {"batch", "tables", "pooling", "dim"}) k.require(key);
  const json::IntRange dims{1, std::int64_t{1} << 40};
  bool ok = k.read_int("batch", s.batch, dims) & k.read_int("tables", s.tables, dims) &
            k.read_number("pooling", s.pooling, json::NumberRange{0.0, 1e9, true}) & k.read_int("dim", s.dim, dims);
  k.finish();
  s.weight_type = t;
  s.output_type = t;
  if (!ok || device == nullptr) return sim::Duration::zero();
  return type == "embedding_forward" ? models::embedding_forward_fused(*device, s).time
                                     : models::embedding_backward_fused(*device, s).time;
}

}  // namespace

namespace {

// Reads a trace document into an op graph, part by part (header,
// collectives, transfers, ops), each part reporting every problem at its
// JSON pointer; then resolves dependencies by op id and checks the graph as
// a whole. The file's ids become indices; problems of the whole graph name
// things by those ids and point at where they were read.
class TraceReader {
 public:
  TraceReader(json::Document& doc, const models::DeviceProfile* device, const std::vector<std::string>* algorithms)
      : doc_(doc), device_(device), algorithms_(algorithms) {}

  models::OpGraph read();

 private:
  // Whether an op gave its duration in picoseconds or nanoseconds.
  struct Timing {
    bool has_ps = false;
    bool has_ns = false;
  };

  void read_streams(json::ObjectReader& root);
  void read_collectives(json::ObjectReader& root);
  models::CollectiveCall read_collective(json::ObjectReader& c);
  void read_all_to_all_v(json::ObjectReader& c, models::CollectiveCall& call);
  void read_transfers(json::ObjectReader& root);
  void read_ops(json::ObjectReader& root);
  models::Op read_op(json::ObjectReader& o, std::size_t i, std::vector<std::int64_t>& deps);
  Timing read_timing(json::ObjectReader& o, models::Op& op, const std::string& kind, bool kind_known);
  void read_call(json::ObjectReader& o, models::Op& op);
  void read_host_copy(json::ObjectReader& o, models::Op& op, Timing timing);
  void resolve_deps();
  void check_graph();

  json::Document& doc_;
  const models::DeviceProfile* device_;
  const std::vector<std::string>* algorithms_;
  models::OpGraph g_;
  // Problems of the graph as a whole name things by the file's ids.
  models::OpGraphNames names_;
  std::vector<std::string> collective_pointer_;
  std::vector<std::string> transfer_pointer_;
  std::vector<std::string> op_pointer_;
  std::map<std::int64_t, std::size_t> collective_index_;  // file id -> index
  std::map<std::int64_t, std::size_t> transfer_index_;
  std::map<std::int64_t, std::uint32_t> op_index_;
  std::vector<std::vector<std::int64_t>> raw_deps_;  // per op: the file's ids
};

models::OpGraph TraceReader::read() {
  json::ObjectReader root = doc_.root();
  doc_.check_schema_version(root, {kSchemaVersion});
  root.allow("description");
  root.require("ranks");
  root.read_int("ranks", g_.num_ranks, json::IntRange{1, 1 << 24});
  std::string durations = "alone";
  root.read_enum("compute_durations", durations, {"alone", "measured"});
  g_.compute_durations_measured = durations == "measured";
  read_streams(root);
  read_collectives(root);
  read_transfers(root);
  read_ops(root);
  root.finish();
  doc_.throw_if_errors();
  resolve_deps();
  doc_.throw_if_errors();
  check_graph();
  doc_.throw_if_errors();
  return std::move(g_);
}

void TraceReader::read_streams(json::ObjectReader& root) {
  root.require("streams");
  if (auto streams = root.array("streams")) {
    for (std::size_t i = 0; i < streams->size(); ++i) {
      std::string name;
      if (streams->read_string(i, name)) {
        if (std::find(g_.stream_names.begin(), g_.stream_names.end(), name) != g_.stream_names.end()) {
          doc_.diagnostics().error(streams->element_pointer(i), fmt::format("duplicate stream '{}'", name));
        }
        g_.stream_names.push_back(name);
      }
    }
  }
}

void TraceReader::read_collectives(json::ObjectReader& root) {
  if (auto list = root.array("collectives")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader c = list->object(i);
      std::int64_t id = static_cast<std::int64_t>(i);
      c.read_int("id", id, json::IntRange{0, std::int64_t{1} << 53});
      names_.collective_ids.push_back(id);
      collective_pointer_.push_back(list->element_pointer(i));
      if (!collective_index_.emplace(id, i).second) c.error("id", fmt::format("duplicate collective id {}", id));
      g_.collectives.push_back(read_collective(c));
    }
  }
}

// One collective's call, after its id.
models::CollectiveCall TraceReader::read_collective(json::ObjectReader& c) {
  models::CollectiveCall call;
  c.require("kind");
  std::string kind;
  // read_enum accepts only kCollectiveKinds, which are the kinds' names.
  if (c.read_enum("kind", kind, kCollectiveKinds)) call.kind = *models::collectives::parse_collective_kind(kind);
  c.require("ranks");
  if (auto ranks = c.array("ranks")) {
    for (std::size_t k = 0; k < ranks->size(); ++k) {
      std::int64_t r = 0;
      if (ranks->read_int(k, r, json::IntRange{0, g_.num_ranks - 1})) call.ranks.push_back(static_cast<int>(r));
    }
  }
  std::int64_t size = 0;
  if (c.read_int("size_bytes", size, json::IntRange{0, std::int64_t{1} << 50})) call.bytes_per_rank = sim::Bytes(size);
  read_all_to_all_v(c, call);
  std::string dtype;
  if (c.read_enum("dtype", dtype, kTypes)) call.dtype = *models::collectives::parse_data_type(dtype);
  if (algorithms_ != nullptr) {
    c.read_enum("algorithm", call.algorithm, *algorithms_);
  } else {
    c.read_string("algorithm", call.algorithm);
  }
  c.read_int("root", call.root, json::IntRange{0, 1 << 24});
  c.finish();
  return call;
}

// An all-to-all-v's optional byte matrix: n x n non-negative byte counts,
// n = the group size.
void TraceReader::read_all_to_all_v(json::ObjectReader& c, models::CollectiveCall& call) {
  const nlohmann::json* m = c.raw("all_to_all_v_bytes");
  if (m == nullptr) return;
  const std::size_t n = call.ranks.size();
  bool ok = m->is_array() && m->size() == n;
  for (std::size_t r = 0; ok && r < n; ++r) {
    const nlohmann::json& row = (*m)[r];
    ok = row.is_array() && row.size() == n;
    std::vector<std::int64_t> values;
    for (std::size_t k = 0; ok && k < n; ++k) {
      ok = row[k].is_number_integer() && row[k].get<std::int64_t>() >= 0;
      if (ok) values.push_back(row[k].get<std::int64_t>());
    }
    if (ok) call.all_to_all_v_bytes.push_back(std::move(values));
  }
  if (!ok) {
    c.error("all_to_all_v_bytes", fmt::format("expected a {} x {} matrix of non-negative integers "
                                              "(the group's size), got {}", n, n, json::describe(*m)));
    call.all_to_all_v_bytes.clear();
  }
}

void TraceReader::read_transfers(json::ObjectReader& root) {
  if (auto list = root.array("transfers")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader t = list->object(i);
      models::TransferCall call;
      std::int64_t id = static_cast<std::int64_t>(i);
      t.read_int("id", id, json::IntRange{0, std::int64_t{1} << 53});
      names_.transfer_ids.push_back(id);
      transfer_pointer_.push_back(list->element_pointer(i));
      if (!transfer_index_.emplace(id, i).second) t.error("id", fmt::format("duplicate transfer id {}", id));
      for (const char* key : {"src", "dst", "size_bytes"}) t.require(key);
      t.read_int("src", call.src, json::IntRange{0, g_.num_ranks - 1});
      t.read_int("dst", call.dst, json::IntRange{0, g_.num_ranks - 1});
      std::int64_t size = 0;
      if (t.read_int("size_bytes", size, json::IntRange{0, std::int64_t{1} << 50})) call.size = sim::Bytes(size);
      t.finish();
      g_.transfers.push_back(call);
    }
  }
}

void TraceReader::read_ops(json::ObjectReader& root) {
  root.require("ops");
  if (auto list = root.array("ops")) {
    g_.ops.reserve(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
      json::ObjectReader o = list->object(i);
      std::vector<std::int64_t> deps;
      models::Op op = read_op(o, i, deps);
      raw_deps_.push_back(std::move(deps));
      op_pointer_.push_back(list->element_pointer(i));
      g_.ops.push_back(std::move(op));
    }
  }
}

// Op `i`; its dependencies, as the file's op ids, go to `deps`.
models::Op TraceReader::read_op(json::ObjectReader& o, std::size_t i, std::vector<std::int64_t>& deps) {
  models::Op op;
  std::int64_t id = static_cast<std::int64_t>(i);
  o.read_int("id", id, json::IntRange{0, std::int64_t{1} << 53});
  names_.op_ids.push_back(id);
  if (!op_index_.emplace(id, static_cast<std::uint32_t>(i)).second) {
    o.error("id", fmt::format("duplicate op id {}", id));
  }
  o.require("rank");
  o.read_int("rank", op.rank, json::IntRange{0, std::max(0, g_.num_ranks - 1)});
  std::string stream;
  o.require("stream");
  if (o.read_enum("stream", stream, g_.stream_names)) op.stream = g_.stream(stream);
  std::string kind = "compute";
  o.require("kind");
  const bool kind_known = o.read_enum("kind", kind, kOpKinds);
  op.kind = op_kind(kind);
  o.read_string("name", op.name);
  o.read_string("category", op.category);
  const Timing timing = read_timing(o, op, kind, kind_known);
  read_call(o, op);
  if (auto d = o.array("deps")) {
    for (std::size_t k = 0; k < d->size(); ++k) {
      std::int64_t dep = 0;
      if (d->read_int(k, dep)) deps.push_back(dep);
    }
  }
  if (op.kind == models::OpKind::kHostCopy) read_host_copy(o, op, timing);
  o.allow("collective");
  o.allow("transfer");
  o.allow("size_bytes");
  o.allow("direction");
  o.finish();
  return op;
}

// An op's duration: duration_ps, duration_ns or a kernel the GPU profile
// prices.
TraceReader::Timing TraceReader::read_timing(json::ObjectReader& o, models::Op& op, const std::string& kind,
                                             bool kind_known) {
  std::int64_t ps = 0;
  double ns = 0;
  Timing t;
  t.has_ps = o.read_int("duration_ps", ps, json::IntRange{0, std::int64_t{1} << 62});
  t.has_ns = o.read_number("duration_ns", ns, json::NumberRange{0.0, 1e15});
  if (t.has_ps) op.duration = sim::Duration::ps(ps);
  if (t.has_ns) op.duration = sim::Duration::from_ns_ceil(ns);
  if (auto k = o.object("kernel")) {
    if (device_ == nullptr) {
      o.error("kernel", "a kernel needs a GPU profile to be priced (--gpu or --profile)");
    } else {
      op.duration = kernel_time(*k, device_);
    }
  }
  if (t.has_ps && t.has_ns) o.error("", "give the duration once: duration_ps or duration_ns");
  // A compute op or a delay says how long it takes, once: a missing
  // duration is not 0 ns, and a kernel beside a duration is not the
  // kernel's price silently winning.
  if (kind_known && (op.kind == models::OpKind::kCompute || op.kind == models::OpKind::kDelay)) {
    const bool has_kernel = o.has("kernel");
    if (!t.has_ps && !t.has_ns && !has_kernel && !o.has("duration_ps") && !o.has("duration_ns")) {
      o.error("", fmt::format("a {} op needs its duration: duration_ns, duration_ps or kernel", kind));
    } else if (has_kernel && (o.has("duration_ps") || o.has("duration_ns"))) {
      o.error("", "give the duration once: a kernel (priced by the GPU profile) or duration_ns / duration_ps");
    }
  }
  return t;
}

// A collective op's collective, a send's or receive's transfer, by file id.
void TraceReader::read_call(json::ObjectReader& o, models::Op& op) {
  std::int64_t ref = -1;
  if (op.kind == models::OpKind::kCollective && o.require("collective") && o.read_int("collective", ref)) {
    auto it = collective_index_.find(ref);
    if (it == collective_index_.end()) {
      o.error("collective", fmt::format("collective {} does not exist", ref));
    } else {
      op.collective = static_cast<std::int64_t>(it->second);
    }
  }
  if ((op.kind == models::OpKind::kSend || op.kind == models::OpKind::kRecv) && o.require("transfer") &&
      o.read_int("transfer", ref)) {
    auto it = transfer_index_.find(ref);
    if (it == transfer_index_.end()) {
      o.error("transfer", fmt::format("transfer {} does not exist", ref));
    } else {
      op.transfer = static_cast<std::int64_t>(it->second);
    }
  }
}

// A host copy's size and direction; it takes no duration.
void TraceReader::read_host_copy(json::ObjectReader& o, models::Op& op, Timing timing) {
  std::int64_t size = 0;
  if (o.require("size_bytes") && o.read_int("size_bytes", size, json::IntRange{0, std::int64_t{1} << 50})) {
    op.bytes = sim::Bytes(size);
  }
  std::string direction = "h2d";
  o.read_enum("direction", direction, {"d2h", "h2d"});
  op.to_device = direction == "h2d";
  if (timing.has_ps || timing.has_ns || o.has("kernel")) {
    o.error("", "a host_copy takes size_bytes, not a duration or kernel");
  }
}

// Dependencies by id.
void TraceReader::resolve_deps() {
  for (std::size_t i = 0; i < g_.ops.size(); ++i) {
    for (std::size_t k = 0; k < raw_deps_[i].size(); ++k) {
      auto it = op_index_.find(raw_deps_[i][k]);
      if (it == op_index_.end()) {
        doc_.diagnostics().error(fmt::format("{}/deps/{}", op_pointer_[i], k),
                                 fmt::format("op {} does not exist", raw_deps_[i][k]));
      } else {
        g_.ops[i].deps.push_back(it->second);
      }
    }
  }
}

// The graph as a whole: cycles, collective membership, send/recv pairs.
void TraceReader::check_graph() {
  for (const models::OpGraphProblem& p : models::validate(g_, &names_)) {
    // At the op, collective or transfer the problem is about.
    const std::string where = p.op >= 0           ? op_pointer_[static_cast<std::size_t>(p.op)]
                              : p.collective >= 0 ? collective_pointer_[static_cast<std::size_t>(p.collective)]
                              : p.transfer >= 0   ? transfer_pointer_[static_cast<std::size_t>(p.transfer)]
                                                  : "";
    doc_.diagnostics().error(where, p.message);
  }
}

models::OpGraph read_trace(json::Document& doc, const models::DeviceProfile* device,
                           const std::vector<std::string>* algorithms) {
  return TraceReader(doc, device, algorithms).read();
}

}  // namespace

models::OpGraph parse_trace(std::string_view text, const std::string& source, const models::DeviceProfile* device,
                            const std::vector<std::string>* algorithms) {
  json::Document doc = json::Document::parse(text, source);
  return read_trace(doc, device, algorithms);
}

models::OpGraph load_trace(const std::string& path, const models::DeviceProfile* device,
                           const std::vector<std::string>* algorithms) {
  // Parsed once: a million-op trace is about 100 MB of JSON.
  json::Document doc = json::Document::load_file(path);
  return read_trace(doc, device, algorithms);
}

namespace {

// A list of integers as nlohmann's compact dump() writes it: [1,2,3].
template <typename Range>
void put_int_array(TextOut& out, const Range& values) {
  out.print("[{}]", fmt::join(values, ","));
}

}  // namespace

// Each record is written as the compact dump() of an ordered_json object
// would write it, formatted straight into one bounded buffer
// (base/text_out.h): the output is what it was when records were nlohmann
// objects, in memory that does not grow with the trace.
void write_trace(std::ostream& out, const models::OpGraph& g) {
  TextOut text(out);
  text.print("{{\n  \"schema_version\": {},\n  \"ranks\": {},\n", kSchemaVersion, g.num_ranks);
  if (g.compute_durations_measured) text.put("  \"compute_durations\": \"measured\",\n");
  text.put("  \"streams\": [");
  for (std::size_t s = 0; s < g.stream_names.size(); ++s) {
    if (s > 0) text.put(',');
    text.json_string(g.stream_names[s]);
  }
  text.put("],\n  \"collectives\": [");
  for (std::size_t i = 0; i < g.collectives.size(); ++i) {
    const models::CollectiveCall& c = g.collectives[i];
    text.print(R"({}{{"id":{},"kind":{},"ranks":)", i == 0 ? "\n    " : ",\n    ", i,
               JsonString{models::collectives::to_string(c.kind)});
    put_int_array(text, c.ranks);
    text.print(R"(,"size_bytes":{})", c.bytes_per_rank.count());
    if (!c.all_to_all_v_bytes.empty()) {
      text.put(R"(,"all_to_all_v_bytes":[)");
      for (std::size_t r = 0; r < c.all_to_all_v_bytes.size(); ++r) {
        if (r > 0) text.put(',');
        put_int_array(text, c.all_to_all_v_bytes[r]);
      }
      text.put(']');
    }
    text.print(R"(,"dtype":{})", JsonString{models::collectives::to_string(c.dtype)});
    if (!c.algorithm.empty()) text.print(R"(,"algorithm":{})", JsonString{c.algorithm});
    if (c.root != 0) text.print(R"(,"root":{})", c.root);
    text.put('}');
  }
  text.put("\n  ],\n  \"transfers\": [");
  for (std::size_t i = 0; i < g.transfers.size(); ++i) {
    const models::TransferCall& t = g.transfers[i];
    text.print(R"({}{{"id":{},"src":{},"dst":{},"size_bytes":{}}})", i == 0 ? "\n    " : ",\n    ", i, t.src, t.dst,
               t.size.count());
  }
  text.put("\n  ],\n  \"ops\": [");
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const models::Op& op = g.ops[i];
    text.print(R"({}{{"id":{},"rank":{},"stream":{},"kind":{})", i == 0 ? "\n    " : ",\n    ", i, op.rank,
               JsonString{g.stream_names[static_cast<std::size_t>(op.stream)]}, JsonString{models::to_string(op.kind)});
    if (!op.name.empty()) text.print(R"(,"name":{})", JsonString{op.name});
    if (!op.category.empty()) text.print(R"(,"category":{})", JsonString{op.category});
    if (op.kind == models::OpKind::kCompute || op.kind == models::OpKind::kDelay) {
      text.print(R"(,"duration_ps":{})", op.duration.count_ps());
    }
    if (op.kind == models::OpKind::kCollective) text.print(R"(,"collective":{})", op.collective);
    if (op.kind == models::OpKind::kSend || op.kind == models::OpKind::kRecv) {
      text.print(R"(,"transfer":{})", op.transfer);
    }
    if (op.kind == models::OpKind::kHostCopy) {
      text.print(R"(,"size_bytes":{},"direction":"{}")", op.bytes.count(), op.to_device ? "h2d" : "d2h");
    }
    if (!op.deps.empty()) {
      text.put(R"(,"deps":)");
      put_int_array(text, op.deps);
    }
    text.put('}');
  }
  text.put("\n  ]\n}\n");
}

}  // namespace zx::workloads
