// File: workloads/chakra_export.cc

#include "workloads/chakra_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <queue>

#include "base/check.h"
#include "base/error.h"

namespace zx::workloads {
namespace {

using chakra_et::Attribute;

// et_def.proto's NodeType and CollectiveCommType numbers
// (mlcommons/chakra at 21585d8f2d65603d791d2121e3d4632351120262).
constexpr std::int64_t kMetadataNode = 1, kMemLoadNode = 2, kMemStoreNode = 3, kCompNode = 4, kSendNode = 5,
                       kRecvNode = 6, kCollNode = 7;
std::int64_t comm_type(models::collectives::CollectiveKind kind) {
  using enum models::collectives::CollectiveKind;
  switch (kind) {
    case kAllReduce:
      return 0;
    case kReduce:
      return 1;
    case kAllGather:
      return 2;
    case kBroadcast:
      return 5;
    case kAllToAll:
      return 6;
    case kReduceScatter:
      return 7;
  }
  ZX_UNREACHABLE("bad CollectiveKind");
}

Attribute bool_attr(const std::string& name, bool v) {
  Attribute a{.name = name};
  a.boolean = v;
  return a;
}

// Sets a node's attributes in place, reusing the strings and lists of the
// node that held the slot before (the File is reused from rank to rank), so
// that an export makes no allocation per node once its buffers have grown.
// What it sets is what a fresh Attribute{.name = name} with the one value
// would be; the slots left over are dropped at the end.
class Attributes {
 public:
  explicit Attributes(std::vector<Attribute>& attr) : attr_(attr) {}
  Attributes(const Attributes&) = delete;
  Attributes& operator=(const Attributes&) = delete;
  ~Attributes() { attr_.resize(used_); }

  void integer(std::string_view name, std::int64_t v) { next(name, 0, false).integer = v; }
  void boolean(std::string_view name, bool v) { next(name, 0, false).boolean = v; }
  void text(std::string_view name, std::string_view v) {
    Attribute& a = next(name, 0, true);
    if (a.text) {
      a.text->assign(v);
    } else {
      a.text.emplace(v);
    }
  }
  template <typename Range>
  void list(std::string_view name, const Range& values) {
    next(name, 10, false).integers.assign(values.begin(), values.end());
  }

 private:
  Attribute& next(std::string_view name, int value_field, bool keep_text) {
    if (used_ == attr_.size()) attr_.emplace_back();
    Attribute& a = attr_[used_++];
    a.name.assign(name);
    a.value_field = value_field;
    a.integer.reset();
    a.integer_too_large = false;
    a.boolean.reset();
    if (!keep_text) a.text.reset();
    a.real.reset();
    a.integers.clear();
    return a;
  }

  std::vector<Attribute>& attr_;
  std::size_t used_ = 0;
};

std::uint64_t micros(sim::Duration d) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, (d.count_ps() + 500'000) / 1'000'000));
}

}  // namespace

std::string chakra_rank_path(const std::string& path, int rank) {
  for (const std::string tail : {".et.gz", ".et"}) {
    if (path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0) {
      return fmt::format("{}.{}{}", path.substr(0, path.size() - tail.size()), rank, tail);
    }
  }
  throw InputError(Diagnostic{"--emit-trace", "", fmt::format("a Chakra trace prefix ends in .et or .et.gz, got '{}'", path)});
}

void export_chakra(const models::OpGraph& g, const ChakraRankSink& each_rank) {
  const auto fail = [](std::string what) { throw InputError(Diagnostic{"--emit-trace", "", std::move(what)}); };
  const std::size_t n = g.ops.size();
  // Each rank's ops in a topological order of deps and stream order, the
  // smallest op index first where free (the order the importer restores).
  std::vector<std::vector<std::uint32_t>> dependents(n);
  std::vector<std::uint32_t> pending(n, 0);
  std::vector<std::int64_t> stream_previous(n, -1);
  std::map<std::pair<int, int>, std::uint32_t> last_on_stream;
  for (std::uint32_t i = 0; i < n; ++i) {
    const models::Op& op = g.ops[i];
    for (std::uint32_t d : op.deps) {
      if (g.ops[d].rank != op.rank) {
        fail(fmt::format("op {} ('{}', rank {}) depends on op {} of rank {}: Chakra's dependencies stay within a rank",
                         i, op.name, op.rank, d, g.ops[d].rank));
      }
      dependents[d].push_back(i);
      ++pending[i];
    }
    const auto key = std::pair{op.rank, op.stream};
    if (const auto it = last_on_stream.find(key); it != last_on_stream.end()) {
      stream_previous[i] = it->second;
      dependents[it->second].push_back(i);
      ++pending[i];
    }
    last_on_stream[key] = i;
  }
  std::vector<std::vector<std::uint32_t>> order(static_cast<std::size_t>(g.num_ranks));
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::size_t placed = 0;
  while (!ready.empty()) {
    const std::uint32_t i = ready.top();
    ready.pop();
    order[static_cast<std::size_t>(g.ops[i].rank)].push_back(i);
    ++placed;
    for (std::uint32_t d : dependents[i]) {
      if (--pending[d] == 0) ready.push(d);
    }
  }
  if (placed != n) fail("the graph has a dependency cycle");

  // Process groups: one name per member set, in order of first use.
  std::map<std::vector<int>, int> numbered;  // first-use order
  std::vector<int> group_of(g.collectives.size());
  for (std::size_t c = 0; c < g.collectives.size(); ++c) {
    group_of[c] = numbered.emplace(g.collectives[c].ranks, static_cast<int>(numbered.size())).first->second;
  }
  // Chakra matches the k-th collective of a group on every member: each
  // member must issue its group's collectives in one order.
  std::map<int, std::vector<std::int64_t>> sequence_of_group;
  std::vector<std::uint64_t> id_of(n);  // an op's node id in its rank's file
  chakra_et::File file;  // reused from rank to rank (see Attributes)
  for (int r = 0; r < g.num_ranks; ++r) {
    file.metadata = chakra_et::GlobalMetadata{"0.0.4", {}};
    file.metadata->attr.push_back(bool_attr("zionsim_compute_durations_measured", g.compute_durations_measured));
    std::map<int, std::vector<std::int64_t>> sequence;
    std::size_t count = 0;
    for (std::uint32_t i : order[static_cast<std::size_t>(r)]) {
      const models::Op& op = g.ops[i];
      if (count == file.nodes.size()) file.nodes.emplace_back();
      chakra_et::Node& node = file.nodes[count];
      node.id = count++;
      id_of[i] = node.id;
      node.name.assign(op.name);
      node.type = 0;
      node.ctrl_deps.clear();
      node.data_deps.clear();
      node.start_time_micros = 0;
      node.duration_micros = 0;
      Attributes attr(node.attr);
      for (std::uint32_t d : op.deps) node.data_deps.push_back(id_of[d]);
      if (stream_previous[i] >= 0 &&
          std::find(op.deps.begin(), op.deps.end(), static_cast<std::uint32_t>(stream_previous[i])) == op.deps.end()) {
        node.ctrl_deps.push_back(id_of[static_cast<std::size_t>(stream_previous[i])]);
      }
      attr.integer("zionsim_op", i);
      attr.text("zionsim_stream", g.stream_names.at(static_cast<std::size_t>(op.stream)));
      attr.text("zionsim_category", op.category);
      switch (op.kind) {
        case models::OpKind::kCompute:
        case models::OpKind::kDelay:
          node.type = op.kind == models::OpKind::kCompute ? kCompNode : kMetadataNode;
          node.duration_micros = micros(op.duration);
          attr.integer("zionsim_duration_ps", op.duration.count_ps());
          if (op.kind == models::OpKind::kCompute) {
            attr.boolean("is_cpu_op", false);
          } else {
            attr.text("zionsim_kind", "delay");
          }
          break;
        case models::OpKind::kHostCopy:
          node.type = op.to_device ? kMemLoadNode : kMemStoreNode;
          attr.integer("tensor_size", op.bytes.count());
          attr.text("zionsim_kind", "host_copy");
          attr.boolean("zionsim_to_device", op.to_device);
          break;
        case models::OpKind::kCollective: {
          const models::CollectiveCall& c = g.collectives.at(static_cast<std::size_t>(op.collective));
          node.type = kCollNode;
          const int group = group_of[static_cast<std::size_t>(op.collective)];
          sequence[group].push_back(op.collective);
          attr.integer("comm_type", comm_type(c.kind));
          attr.integer("comm_size", c.bytes_per_rank.count());
          attr.text("pg_name", fmt::format("zionsim_group_{}", group));
          attr.integer("zionsim_collective", op.collective);
          attr.list("zionsim_group_ranks", c.ranks);
          attr.text("zionsim_dtype", models::collectives::to_string(c.dtype));
          if (!c.algorithm.empty()) attr.text("zionsim_algorithm", c.algorithm);
          if (c.root != 0) attr.integer("zionsim_root", c.root);
          if (!c.all_to_all_v_bytes.empty()) {
            const auto member = std::find(c.ranks.begin(), c.ranks.end(), r) - c.ranks.begin();
            attr.list("zionsim_all_to_all_v_row", c.all_to_all_v_bytes.at(static_cast<std::size_t>(member)));
          }
          break;
        }
        case models::OpKind::kSend:
        case models::OpKind::kRecv: {
          const models::TransferCall& t = g.transfers.at(static_cast<std::size_t>(op.transfer));
          node.type = op.kind == models::OpKind::kSend ? kSendNode : kRecvNode;
          attr.integer("comm_src", t.src);
          attr.integer("comm_dst", t.dst);
          attr.integer("comm_tag", op.transfer);
          attr.integer("comm_size", t.size.count());
          break;
        }
      }
    }
    file.nodes.resize(count);
    for (auto& [group, list] : sequence) {
      auto [it, added] = sequence_of_group.try_emplace(group, list);
      if (!added && it->second != list) {
        fail(fmt::format("rank {} issues the collectives of process group zionsim_group_{} in another order than "
                         "another member: Chakra matches them by order",
                         r, group));
      }
    }
    std::vector<std::uint32_t>().swap(order[static_cast<std::size_t>(r)]);
    each_rank(r, file);
  }
}

std::vector<chakra_et::File> export_chakra(const models::OpGraph& g) {
  std::vector<chakra_et::File> files;
  files.reserve(static_cast<std::size_t>(std::max(0, g.num_ranks)));
  export_chakra(g, [&](int, const chakra_et::File& file) { files.push_back(file); });
  return files;
}

}  // namespace zx::workloads
