// File: workloads/chakra_import.cc
//
// The Chakra JSON importer (see chakra_import.h): reads each rank's file into
// nodes, checks them, orders each rank topologically, then matches
// collectives across ranks and sends with receives, and builds the OpGraph.

#include "workloads/chakra_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <queue>
#include <sstream>
#include <tuple>

#include "base/check.h"
#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"
#include "workloads/chakra_et.h"

namespace zx::workloads {
namespace {

// NodeType, from mlcommons/chakra schema/protobuf/et_def.proto (enum NodeType).
const std::vector<std::string> kNodeTypes = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE",
                                             "MEM_STORE_NODE", "COMP_NODE",      "COMM_SEND_NODE",
                                             "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE",
                                             "BATCH_NODE",     "CHECKPOINT_NODE"};
enum NodeType {
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kSend = 5,
  kRecv = 6,
  kColl = 7
};

// CollectiveCommType, from mlcommons/chakra schema/protobuf/et_def.proto (enum
// CollectiveCommType), and the zionsim collective each maps to ("" = not
// supported). REDUCE_SCATTER_BLOCK is a reduce-scatter with equal blocks;
// BARRIER is modelled as an all-reduce of comm_size (normally 0) bytes.
const std::vector<std::string> kCommTypes = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};
const std::vector<std::string> kCollectiveKinds = {
    "all_reduce", "reduce",         "all_gather",     "",          "", "broadcast",
    "all_to_all", "reduce_scatter", "reduce_scatter", "all_reduce"};

// Attribute values. AttributeProto (et_def.proto) holds one of many typed
// fields; protobuf's JSON mapping (MessageToJson, used by the jsonizer) names
// them in lowerCamelCase ("int64Val") and writes 64-bit integers as strings.
// The proto field names ("int64_val") are accepted as well, as protobuf's own
// JSON parser does.
const std::vector<std::string> kIntValueKeys = {
    "int32Val",   "int64Val",    "uint32Val",   "uint64Val",    "sint32Val",
    "sint64Val",  "fixed32Val",  "fixed64Val",  "sfixed32Val",  "sfixed64Val",
    "int32_val",  "int64_val",   "uint32_val",  "uint64_val",   "sint32_val",
    "sint64_val", "fixed32_val", "fixed64_val", "sfixed32_val", "sfixed64_val"};

struct Dep {
  std::int64_t id = 0;
  std::string pointer;
  bool ctrl = false;  // from ctrl_deps
};

// One Chakra node as read from a file.
struct Node {
  std::int64_t id = 0;  // proto3 leaves out zero values: no "id" means 0
  std::string name;
  int type = 0;
  std::vector<Dep> deps;  // data_deps then ctrl_deps
  std::int64_t duration_us = 0;
  bool is_cpu_op = false;
  std::optional<std::int64_t> comm_type, comm_size, comm_src, comm_dst, comm_tag;
  std::string pg_name;
  std::string pointer;  // "/3"
  // zionsim's own attributes (chakra_import.h), written by export_chakra so
  // that a graph survives the round trip exactly.
  std::optional<std::string> z_stream, z_category, z_kind, z_dtype, z_algorithm;
  std::optional<std::int64_t> z_duration_ps, z_root, z_op, z_collective, tensor_size;
  std::optional<bool> z_to_device;
  std::optional<std::vector<std::int64_t>> z_group_ranks, z_all_to_all_v_row;
};

struct RankTrace {
  std::string file;
  std::optional<bool> measured;  // GlobalMetadata's zionsim_compute_durations_measured
  std::vector<Node> nodes;
  std::vector<std::size_t> order;  // topological order of nodes
};

// An integer in protobuf's JSON form: a number, or a string of digits.
std::optional<std::int64_t> proto_int(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s.size() > 18) return std::nullopt;
    std::size_t start = s[0] == '-' ? 1 : 0;
    if (start == s.size()) return std::nullopt;
    for (std::size_t i = start; i < s.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    }
    return std::stoll(s);
  }
  return std::nullopt;
}

// The key under which a field is present: its JSON name or its proto name.
std::string field_key(json::ObjectReader& o, const std::string& camel, const std::string& snake) {
  o.allow(camel);
  o.allow(snake);
  return o.has(snake) && !o.has(camel) ? snake : camel;
}

// Reads an integer field (either spelling) that must lie in [min, max].
bool read_field_int(json::ObjectReader& o, const std::string& camel, const std::string& snake,
                    std::int64_t& out, std::int64_t min, std::int64_t max) {
  const std::string key = field_key(o, camel, snake);
  const nlohmann::json* v = o.raw(key);
  if (v == nullptr) return false;
  const std::optional<std::int64_t> n = proto_int(*v);
  if (!n || *n < min || *n > max) {
    o.error(key,
            fmt::format("expected an integer in [{}, {}], got {}", min, max, json::describe(*v)));
    return false;
  }
  out = *n;
  return true;
}

// An integer of protobuf's JSON form, any 64-bit one: nullopt when not an
// integer at all; `too_large` when beyond int64 (a uint64 or fixed64 value).
std::optional<std::int64_t> wide_int(const nlohmann::json& v, bool& too_large) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    too_large |= u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(std::min<std::uint64_t>(u, std::numeric_limits<std::int64_t>::max()));
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  std::int64_t out = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (end != s.data() + s.size() || s.empty()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    too_large = true;
    return std::numeric_limits<std::int64_t>::max();
  }
  if (ec != std::errc()) return std::nullopt;
  return out;
}

bool zionsim_reads(const std::string& name);

// An AttributeProto in protobuf's JSON form, as the decoder gives it from
// the wire: the member of the oneof that is set (lowerCamelCase, or the
// proto field name), integers as numbers or strings of digits.
chakra_et::Attribute attribute_from_json(json::ObjectReader& a) {
  chakra_et::Attribute out;
  a.require("name");
  a.read_string("name", out.name);
  a.allow("docString");
  a.allow("doc_string");
  for (const std::string& key : kIntValueKeys) {
    a.allow(key);
    if (const nlohmann::json* v = a.raw(key)) {
      out.value_field = 9;
      if (const std::optional<std::int64_t> n = wide_int(*v, out.integer_too_large)) {
        out.integer = n;
      } else if (zionsim_reads(out.name)) {
        a.error(key, fmt::format("expected an integer, got {}", json::describe(*v)));
      }
    }
  }
  const auto key_of = [&a](const std::string& camel, const std::string& snake) { return field_key(a, camel, snake); };
  if (const std::string key = key_of("boolVal", "bool_val"); a.has(key)) {
    out.value_field = 27;
    if (a.raw(key)->is_boolean()) {
      out.boolean = a.raw(key)->get<bool>();
    } else if (zionsim_reads(out.name)) {
      a.error(key, fmt::format("expected true or false, got {}", json::describe(*a.raw(key))));
    }
  }
  if (const std::string key = key_of("stringVal", "string_val"); a.has(key)) {
    out.value_field = 29;
    if (a.raw(key)->is_string()) {
      out.text = a.raw(key)->get<std::string>();
    } else if (zionsim_reads(out.name)) {
      a.error(key, fmt::format("expected a string, got {}", json::describe(*a.raw(key))));
    }
  }
  for (const auto& [camel, snake] : {std::pair{"doubleVal", "double_val"}, std::pair{"floatVal", "float_val"}}) {
    const std::string key = key_of(camel, snake);
    if (const nlohmann::json* v = a.raw(key)) {
      out.value_field = 3;
      if (v->is_number()) out.real = v->get<double>();
    }
  }
  for (const auto& [camel, snake] : {std::pair{"int64List", "int64_list"}, std::pair{"int32List", "int32_list"},
                                     std::pair{"uint64List", "uint64_list"}, std::pair{"uint32List", "uint32_list"},
                                     std::pair{"sint64List", "sint64_list"}}) {
    const std::string key = key_of(camel, snake);
    const nlohmann::json* v = a.raw(key);
    if (v == nullptr) continue;
    out.value_field = 10;
    const nlohmann::json* values = v->is_object() && v->contains("values") ? &(*v)["values"] : nullptr;
    if (v->is_object() && values == nullptr) continue;  // an empty list: proto3 leaves "values" out
    if (values == nullptr || !values->is_array()) {
      if (zionsim_reads(out.name)) a.error(key, fmt::format("expected {{\"values\": [integers]}}, got {}", json::describe(*v)));
      continue;
    }
    for (std::size_t i = 0; i < values->size(); ++i) {
      if (const std::optional<std::int64_t> n = wide_int((*values)[i], out.integer_too_large)) {
        out.integers.push_back(*n);
      } else if (zionsim_reads(out.name)) {
        a.error(fmt::format("{}/values/{}", key, i), fmt::format("expected an integer, got {}", json::describe((*values)[i])));
      }
    }
  }
  // The other members (lists of reals, bools, strings, bytes) are not used.
  for (const char* other : {"doubleList", "double_list", "floatList", "float_list", "fixed32List", "fixed32_list",
                            "fixed64List", "fixed64_list", "sfixed32List", "sfixed32_list", "sfixed64List",
                            "sfixed64_list", "sint32List", "sint32_list", "boolList", "bool_list", "stringList",
                            "string_list", "bytesVal", "bytes_val", "bytesList", "bytes_list"}) {
    if (a.has(other) && out.value_field == 0) out.value_field = 32;
    a.allow(other);
  }
  a.finish();
  return out;
}

const char* value_field_name(int field);

// The attributes zionsim reads (apply_attribute); others are skipped unread.
bool zionsim_reads(const std::string& name) {
  static const std::vector<std::string> kRead = {
      "comm_type",        "comm_size",         "comm_src",         "comm_dst",          "comm_tag",
      "is_cpu_op",        "pg_name",           "tensor_size",      "zionsim_duration_ps", "zionsim_root",
      "zionsim_op",       "zionsim_collective", "zionsim_stream",  "zionsim_category",  "zionsim_kind",
      "zionsim_dtype",    "zionsim_algorithm", "zionsim_to_device", "zionsim_group_ranks",
      "zionsim_all_to_all_v_row", "zionsim_compute_durations_measured"};
  return std::find(kRead.begin(), kRead.end(), name) != kRead.end();
}

// Takes what zionsim uses of an attribute into `node`; other attributes
// (num_ops, tensor_size of compute nodes, involved_dim, ...) are ignored.
void apply_attribute(Node& node, const chakra_et::Attribute& a, const std::string& at, json::Diagnostics& diagnostics) {
  const auto need = [&](bool ok, const char* what) {
    if (!ok) {
      diagnostics.error(at, fmt::format("attribute '{}' needs {}, got {}", a.name, what, value_field_name(a.value_field)));
    }
    return ok;
  };
  const auto non_negative = [&](std::optional<std::int64_t>& out) {
    if (!need(a.integer.has_value(), "an integer value (int64_val, uint64_val, int32_val, ...)")) return;
    if (a.integer_too_large || *a.integer < 0) {
      diagnostics.error(at, fmt::format("attribute '{}': expected a non-negative integer below 2^63, got {}", a.name,
                                        a.integer_too_large ? "a value of 2^63 or more" : std::to_string(*a.integer)));
      return;
    }
    out = *a.integer;
  };
  const auto text = [&](std::optional<std::string>& out) {
    if (need(a.text.has_value(), "a string_val")) out = *a.text;
  };
  const auto list = [&](std::optional<std::vector<std::int64_t>>& out) {
    if (!need(a.value_field == 8 || a.value_field == 10 || a.value_field == 12 || a.value_field == 14 ||
                  a.value_field == 18,
              "an integer list (int64_list)")) {
      return;
    }
    for (std::int64_t v : a.integers) {
      if (v < 0 || a.integer_too_large) {
        diagnostics.error(at, fmt::format("attribute '{}': expected non-negative integers below 2^63", a.name));
        return;
      }
    }
    out = a.integers;
  };
  const std::map<std::string, std::optional<std::int64_t>*> ints = {
      {"comm_type", &node.comm_type},       {"comm_size", &node.comm_size},       {"comm_src", &node.comm_src},
      {"comm_dst", &node.comm_dst},         {"comm_tag", &node.comm_tag},         {"zionsim_duration_ps", &node.z_duration_ps},
      {"zionsim_root", &node.z_root},       {"zionsim_op", &node.z_op},           {"zionsim_collective", &node.z_collective},
      {"tensor_size", &node.tensor_size}};
  const std::map<std::string, std::optional<std::string>*> texts = {
      {"zionsim_stream", &node.z_stream}, {"zionsim_category", &node.z_category}, {"zionsim_kind", &node.z_kind},
      {"zionsim_dtype", &node.z_dtype},   {"zionsim_algorithm", &node.z_algorithm}};
  if (const auto it = ints.find(a.name); it != ints.end()) {
    // tensor_size is Chakra's on every node kind; zionsim reads it only for
    // its host copies, so a tensor_size of another kind is not checked.
    if (a.name == "tensor_size" && !a.integer) return;
    non_negative(*it->second);
  } else if (const auto t = texts.find(a.name); t != texts.end()) {
    text(*t->second);
  } else if (a.name == "is_cpu_op") {
    if (need(a.boolean.has_value(), "a bool_val")) node.is_cpu_op = *a.boolean;
  } else if (a.name == "zionsim_to_device") {
    if (need(a.boolean.has_value(), "a bool_val")) node.z_to_device = *a.boolean;
  } else if (a.name == "pg_name") {
    std::optional<std::string> pg;
    text(pg);
    if (pg) node.pg_name = *pg;
  } else if (a.name == "zionsim_group_ranks") {
    list(node.z_group_ranks);
  } else if (a.name == "zionsim_all_to_all_v_row") {
    list(node.z_all_to_all_v_row);
  }
}

// Reads node `i` of a file; reports problems to `diagnostics`.
Node read_node(json::ObjectReader& o, Node node, json::Diagnostics& diagnostics) {
  constexpr std::int64_t kMaxId = std::int64_t{1} << 53;
  read_field_int(o, "id", "id", node.id, 0, kMaxId);
  o.read_string("name", node.name);
  if (const nlohmann::json* t = o.raw("type")) {
    std::optional<std::int64_t> n;
    if (t->is_string()) {
      const auto it = std::find(kNodeTypes.begin(), kNodeTypes.end(), t->get<std::string>());
      if (it != kNodeTypes.end()) n = it - kNodeTypes.begin();
    } else if (t->is_number_integer()) {
      n = t->get<std::int64_t>();
    }
    if (!n || *n < 0 || *n >= static_cast<std::int64_t>(kNodeTypes.size())) {
      o.error("type", fmt::format("unknown node type {}", json::describe(*t)));
      node.type = -1;
    } else {
      node.type = static_cast<int>(*n);
    }
  }
  if (node.type == 0) o.error("", "node type missing (INVALID_NODE)");
  if (node.type == 8 || node.type == 9 || node.type == 10) {
    o.error(
        "type",
        fmt::format("node type {} is not supported; supported: COMP_NODE, COMM_COLL_NODE, "
                    "COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, METADATA_NODE",
                    kNodeTypes[static_cast<std::size_t>(node.type)]));
  }
  for (const auto& [camel, snake] :
       {std::pair{"dataDeps", "data_deps"}, std::pair{"ctrlDeps", "ctrl_deps"}}) {
    const std::string key = field_key(o, camel, snake);
    const nlohmann::json* deps = o.raw(key);
    if (deps == nullptr) continue;
    if (!deps->is_array()) {
      o.error(key, fmt::format("expected an array of node ids, got {}", json::describe(*deps)));
      continue;
    }
    for (std::size_t k = 0; k < deps->size(); ++k) {
      const std::string pointer = fmt::format("{}/{}/{}", o.pointer(), key, k);
      const std::optional<std::int64_t> id = proto_int((*deps)[k]);
      if (!id || *id < 0) {
        diagnostics.error(pointer,
                          fmt::format("expected a node id, got {}", json::describe((*deps)[k])));
      } else {
        node.deps.push_back({*id, pointer, std::string(camel) == "ctrlDeps"});
      }
    }
  }
  read_field_int(o, "durationMicros", "duration_micros", node.duration_us, 0,
                 std::int64_t{1} << 40);
  std::int64_t ignored = 0;
  read_field_int(o, "startTimeMicros", "start_time_micros", ignored, 0, std::int64_t{1} << 62);
  o.allow("inputs");
  o.allow("outputs");
  if (auto attrs = o.array("attr")) {
    for (std::size_t k = 0; k < attrs->size(); ++k) {
      json::ObjectReader a = attrs->object(k);
      if (!a.valid()) continue;
      apply_attribute(node, attribute_from_json(a), a.pointer(), diagnostics);
    }
  }
  o.finish();
  return node;
}

// JSON (the jsonizer's dump) starts with '{' or '[' after any whitespace;
// a protobuf stream starts with a message size.
bool is_json_text(std::string_view bytes) {
  const std::size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[');
}

// The values of a JSON file: the concatenated objects the jsonizer writes,
// or one JSON array of them.
nlohmann::json read_values(const std::string& path, const std::string& text) {
  json::check_json_depth(text, path);
  std::istringstream in(text);
  nlohmann::json values = nlohmann::json::array();
  while (true) {
    in >> std::ws;
    if (in.peek() == std::char_traits<char>::eof()) break;
    nlohmann::json v;
    try {
      in >> v;
    } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond double
      throw InputError(Diagnostic{path, fmt::format("/{}", values.size()),
                                  fmt::format("not valid JSON: {}", e.what())});
    }
    values.push_back(std::move(v));
  }
  if (values.size() == 1 && values[0].is_array()) return values[0];
  return values;
}

const char* value_field_name(int field) {
  static const char* const kNames[] = {
      "none",         "name",         "doc_string",   "double_val",   "double_list", "float_val",
      "float_list",   "int32_val",    "int32_list",   "int64_val",    "int64_list",  "uint32_val",
      "uint32_list",  "uint64_val",   "uint64_list",  "sint32_val",   "sint32_list", "sint64_val",
      "sint64_list",  "fixed32_val",  "fixed32_list", "fixed64_val",  "fixed64_list", "sfixed32_val",
      "sfixed32_list", "sfixed64_val", "sfixed64_list", "bool_val",   "bool_list",   "string_val",
      "string_list",  "bytes_val",    "bytes_list"};
  return field >= 0 && field <= 32 ? kNames[field] : "an unknown field";
}

// Node k of a protobuf file, checked as read_node checks a JSON one.
Node from_et(const chakra_et::Node& e, const std::string& pointer, json::Diagnostics& diagnostics) {
  constexpr std::uint64_t kMaxId = std::uint64_t{1} << 53;
  Node node;
  node.pointer = pointer;
  if (e.id > kMaxId) {
    diagnostics.error(pointer + "/id", fmt::format("expected a node id in [0, {}], got {}", kMaxId, e.id));
  }
  node.id = static_cast<std::int64_t>(std::min(e.id, kMaxId));
  node.name = e.name;
  if (e.type == 0) {
    diagnostics.error(pointer, "node type missing (INVALID_NODE)");
  } else if (e.type < 0 || e.type >= static_cast<std::int64_t>(kNodeTypes.size())) {
    diagnostics.error(pointer + "/type", fmt::format("unknown node type {} (et_def.proto's NodeType has 1 to {})", e.type,
                                                     kNodeTypes.size() - 1));
    node.type = -1;
  } else if (e.type >= 8) {
    diagnostics.error(pointer + "/type",
                      fmt::format("node type {} is not supported; supported: COMP_NODE, COMM_COLL_NODE, "
                                  "COMM_SEND_NODE, COMM_RECV_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, METADATA_NODE",
                                  kNodeTypes[static_cast<std::size_t>(e.type)]));
    node.type = static_cast<int>(e.type);
  } else {
    node.type = static_cast<int>(e.type);
  }
  for (const auto& [key, ids] : {std::pair{"data_deps", &e.data_deps}, std::pair{"ctrl_deps", &e.ctrl_deps}}) {
    for (std::size_t k = 0; k < ids->size(); ++k) {
      const std::string at = fmt::format("{}/{}/{}", pointer, key, k);
      if ((*ids)[k] > kMaxId) {
        diagnostics.error(at, fmt::format("expected a node id in [0, {}], got {}", kMaxId, (*ids)[k]));
      } else {
        node.deps.push_back({static_cast<std::int64_t>((*ids)[k]), at, std::string(key) == "ctrl_deps"});
      }
    }
  }
  constexpr std::uint64_t kMaxDuration = std::uint64_t{1} << 40;
  if (e.duration_micros > kMaxDuration) {
    diagnostics.error(pointer + "/duration_micros",
                      fmt::format("expected an integer in [0, {}], got {}", kMaxDuration, e.duration_micros));
  } else {
    node.duration_us = static_cast<std::int64_t>(e.duration_micros);
  }
  for (std::size_t k = 0; k < e.attr.size(); ++k) {
    apply_attribute(node, e.attr[k], fmt::format("{}/attr/{}", pointer, k), diagnostics);
  }
  return node;
}

// The nodes of one rank's file as they are read, and where each id is; a
// second node of an id is an error, reported as it is read.
struct RankNodes {
  RankTrace& rank;
  json::Diagnostics& diagnostics;
  std::map<std::int64_t, std::size_t> by_id;

  void add(Node node) {
    if (!by_id.emplace(node.id, rank.nodes.size()).second) {
      diagnostics.error(node.pointer, fmt::format("duplicate node id {} (first at {})", node.id,
                                                  rank.nodes[by_id[node.id]].pointer));
    }
    rank.nodes.push_back(std::move(node));
  }
};

// The jsonizer's JSON: the GlobalMetadata {version, attr}, then the nodes.
void read_json_nodes(const std::string& path, const std::string& bytes, RankNodes& nodes) {
  const nlohmann::json values = read_values(path, bytes);
  if (values.empty()) nodes.diagnostics.error("", "no Chakra nodes in the file");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string pointer = fmt::format("/{}", i);
    json::ObjectReader o(values[i], pointer, nodes.diagnostics);
    if (i == 0 && o.has("version")) {  // GlobalMetadata {version, attr}
      std::string version;
      o.read_string("version", version);
      if (auto attrs = o.array("attr")) {
        for (std::size_t k = 0; k < attrs->size(); ++k) {
          json::ObjectReader a = attrs->object(k);
          if (!a.valid()) continue;
          const chakra_et::Attribute attribute = attribute_from_json(a);
          if (attribute.name == "zionsim_compute_durations_measured") nodes.rank.measured = attribute.boolean;
        }
      }
      o.finish();
      continue;
    }
    Node node;
    node.pointer = pointer;
    nodes.add(read_node(o, std::move(node), nodes.diagnostics));
  }
}

// A protobuf .et stream; pointers name the message ("/0": the metadata).
// A stream that does not decode throws at once.
void read_et_nodes(const std::string& path, const std::string& bytes, RankNodes& nodes) {
  const chakra_et::DecodeResult decoded = chakra_et::decode(bytes);
  if (decoded.error) {
    const chakra_et::DecodeError& e = *decoded.error;
    throw InputError(Diagnostic{
        path, e.message >= 0 ? fmt::format("/{}", e.message) : "",
        fmt::format("not a valid Chakra protobuf trace (et_def.proto): at byte {}{}: {}{}", e.offset,
                    e.message >= 0 ? fmt::format(", in message {}", e.message) : "", e.what,
                    e.message == 0 && e.offset < 16 && bytes.find('\0') == std::string::npos
                        ? " (neither JSON, which starts with '{' or '[', nor a protobuf stream)"
                        : "")});
  }
  const std::size_t first_node = decoded.file.metadata ? 1 : 0;
  if (decoded.file.metadata) {
    for (const chakra_et::Attribute& a : decoded.file.metadata->attr) {
      if (a.name == "zionsim_compute_durations_measured") nodes.rank.measured = a.boolean;
    }
  }
  if (decoded.file.nodes.empty()) nodes.diagnostics.error("", "no Chakra nodes in the file");
  for (std::size_t k = 0; k < decoded.file.nodes.size(); ++k) {
    nodes.add(from_et(decoded.file.nodes[k], fmt::format("/{}", k + first_node), nodes.diagnostics));
  }
}

// Dependencies name nodes of this file; order the nodes topologically,
// taking the earliest ready node in file order first.
void order_nodes(RankNodes& nodes) {
  RankTrace& rank = nodes.rank;
  const std::size_t n = rank.nodes.size();
  std::vector<std::vector<std::size_t>> dependents(n);
  std::vector<std::size_t> pending(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const Dep& d : rank.nodes[i].deps) {
      const auto it = nodes.by_id.find(d.id);
      if (it == nodes.by_id.end()) {
        nodes.diagnostics.error(d.pointer, fmt::format("node {} does not exist in this rank's trace", d.id));
      } else {
        dependents[it->second].push_back(i);
        ++pending[i];
      }
    }
  }
  if (nodes.diagnostics.has_errors()) return;
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    rank.order.push_back(i);
    for (std::size_t d : dependents[i]) {
      if (--pending[d] == 0) ready.push(d);
    }
  }
  if (rank.order.size() != n) {
    std::vector<std::string> stuck;
    for (std::size_t i = 0; i < n; ++i) {
      if (pending[i] > 0) stuck.push_back(std::to_string(rank.nodes[i].id));
    }
    nodes.diagnostics.error("", fmt::format("dependency cycle among nodes {}", fmt::join(stuck, ", ")));
  }
}

// One rank's file, JSON or protobuf, read, checked and ordered; its
// problems go to `all`.
RankTrace read_rank(const std::string& path, std::vector<Diagnostic>& all) {
  RankTrace rank;
  rank.file = path;
  const std::string bytes = read_input_file(path);
  json::Diagnostics diagnostics(path);
  RankNodes nodes{.rank = rank, .diagnostics = diagnostics};
  if (is_json_text(bytes)) {
    read_json_nodes(path, bytes, nodes);
  } else {
    read_et_nodes(path, bytes, nodes);
  }
  order_nodes(nodes);
  all.insert(all.end(), diagnostics.list().begin(), diagnostics.list().end());
  return rank;
}

std::string group_label(const std::string& pg) {
  return pg.empty() ? "the default process group" : fmt::format("process group '{}'", pg);
}

}  // namespace

// Puts ops in zionsim_op order, collectives in zionsim_collective order and
// transfers in comm_tag order, when those are a permutation (else leaves the
// graph as imported: it is as valid either way).
void renumber(models::OpGraph& g, const std::vector<RankTrace>& ranks,
              const std::vector<std::vector<std::uint32_t>>& op_of) {
  const std::size_t n = g.ops.size();
  std::vector<std::uint32_t> new_index(n, 0);
  std::vector<bool> taken(n, false);
  std::vector<std::int64_t> collective_key(g.collectives.size(), -1);
  std::vector<std::int64_t> transfer_key(g.transfers.size(), -1);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (std::size_t i = 0; i < ranks[r].nodes.size(); ++i) {
      const Node& node = ranks[r].nodes[i];
      const std::uint32_t op = op_of[r][i];
      if (*node.z_op < 0 || static_cast<std::uint64_t>(*node.z_op) >= n || taken[static_cast<std::size_t>(*node.z_op)]) return;
      taken[static_cast<std::size_t>(*node.z_op)] = true;
      new_index[op] = static_cast<std::uint32_t>(*node.z_op);
      const models::Op& o = g.ops[op];
      if (o.collective >= 0) {
        if (!node.z_collective) return;
        collective_key[static_cast<std::size_t>(o.collective)] = *node.z_collective;
      }
      if (o.transfer >= 0 && node.comm_tag) transfer_key[static_cast<std::size_t>(o.transfer)] = *node.comm_tag;
    }
  }
  const auto permutation = [](const std::vector<std::int64_t>& key) -> std::optional<std::vector<std::int64_t>> {
    std::vector<std::int64_t> to(key.size(), -1);
    std::vector<bool> seen(key.size(), false);
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (key[i] < 0 || static_cast<std::size_t>(key[i]) >= key.size() || seen[static_cast<std::size_t>(key[i])]) {
        return std::nullopt;
      }
      seen[static_cast<std::size_t>(key[i])] = true;
      to[i] = key[i];
    }
    return to;
  };
  const std::optional<std::vector<std::int64_t>> collectives = permutation(collective_key);
  const std::optional<std::vector<std::int64_t>> transfers = permutation(transfer_key);
  if (!collectives || !transfers) return;
  // Stream names in order of first use by the renumbered ops.
  std::vector<models::Op> ops(n);
  for (std::size_t i = 0; i < n; ++i) {
    models::Op op = std::move(g.ops[i]);
    for (std::uint32_t& d : op.deps) d = new_index[d];
    if (op.collective >= 0) op.collective = (*collectives)[static_cast<std::size_t>(op.collective)];
    if (op.transfer >= 0) op.transfer = (*transfers)[static_cast<std::size_t>(op.transfer)];
    ops[new_index[i]] = std::move(op);
  }
  std::vector<models::CollectiveCall> calls(g.collectives.size());
  for (std::size_t c = 0; c < calls.size(); ++c) calls[static_cast<std::size_t>((*collectives)[c])] = std::move(g.collectives[c]);
  std::vector<models::TransferCall> moves(g.transfers.size());
  for (std::size_t t = 0; t < moves.size(); ++t) moves[static_cast<std::size_t>((*transfers)[t])] = g.transfers[t];
  const std::vector<std::string> old_streams = g.stream_names;
  g.stream_names.clear();
  g.ops.clear();
  for (models::Op& op : ops) {
    op.stream = g.stream(old_streams[static_cast<std::size_t>(op.stream)]);
    g.ops.push_back(std::move(op));
  }
  g.collectives = std::move(calls);
  g.transfers = std::move(moves);
}

namespace {

// Builds the OpGraph of the ranks' checked nodes, stage by stage: an op per
// node (in each rank's topological order), their dependencies, the
// collectives matched across ranks, the transfers paired; then checks the
// whole graph. Problems are collected, each with its file and pointer.
class ChakraGraph {
 public:
  explicit ChakraGraph(const std::vector<RankTrace>& ranks) : ranks_(ranks) {
    g_.num_ranks = static_cast<int>(ranks.size());
    g_.compute_durations_measured = true;  // duration_micros were measured in the traced run
  }

  void add_ops();
  // A trace zionsim exported (every node numbered by zionsim_op; see
  // chakra_export.h) says its stream order with control dependencies on the
  // op before on the stream: those are the stream's order again, not deps.
  bool numbered() const;
  void add_deps(bool numbered);
  void match_collectives();
  void pair_transfers();
  void check_graph();
  models::OpGraph finish(bool numbered);
  void throw_if_problems() const {
    if (!problems_.empty()) throw InputError(problems_);
  }

 private:
  // Point-to-point: (src, dst, tag) -> sends / recvs in issue order.
  using P2pKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
  using NodeRef = std::pair<int, std::size_t>;  // (rank, node)

  models::Op node_op(int r, std::size_t i);
  void add_collective_node(int r, std::size_t i, models::Op& op);
  void add_p2p_node(int r, std::size_t i, models::Op& op);
  // Whether attribute `attr` of `node` is there; reports it missing.
  bool need(const RankTrace& rank, const Node& node, const std::optional<std::int64_t>& v, const char* attr);
  // Whether `v`, when given, is a rank of the files given; reports it otherwise.
  bool in_ranks(const RankTrace& rank, const Node& node, const std::optional<std::int64_t>& v, const char* attr);
  void add_rank_deps(int r, bool numbered);
  void match_group(const std::string& pg);
  bool match_members(const std::string& pg, std::size_t k, const std::vector<int>& members, int most_rank,
                     std::int64_t index);
  void apply_exported_attributes(const std::string& pg, std::size_t k, const std::vector<int>& members,
                                 int most_rank, bool complete, models::CollectiveCall& call);
  void pair_key(const P2pKey& key);
  void problem(const std::string& file, const std::string& pointer, std::string message) {
    problems_.push_back(Diagnostic{file, pointer, std::move(message)});
  }
  const Node& node_at(int r, std::size_t i) const { return ranks_[static_cast<std::size_t>(r)].nodes[i]; }
  const std::string& file_of(int r) const { return ranks_[static_cast<std::size_t>(r)].file; }

  const std::vector<RankTrace>& ranks_;
  models::OpGraph g_;
  std::vector<Diagnostic> problems_;
  std::vector<std::vector<std::uint32_t>> op_of_;  // [rank][node] -> op
  std::vector<NodeRef> node_of_op_;                // op -> (rank, node)
  // Process groups in order of first appearance: per rank, its collectives.
  std::vector<std::string> groups_;
  std::map<std::string, std::vector<std::vector<std::size_t>>> group_nodes_;
  std::map<P2pKey, std::pair<std::vector<NodeRef>, std::vector<NodeRef>>> p2p_;
  std::vector<P2pKey> p2p_order_;
};

void ChakraGraph::add_ops() {
  op_of_.resize(ranks_.size());
  for (int r = 0; r < g_.num_ranks; ++r) {
    const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
    op_of_[static_cast<std::size_t>(r)].assign(rank.nodes.size(), 0);
    for (std::size_t i : rank.order) {
      op_of_[static_cast<std::size_t>(r)][i] = g_.add(node_op(r, i));
      node_of_op_.emplace_back(r, i);
    }
  }
}

bool ChakraGraph::need(const RankTrace& rank, const Node& node, const std::optional<std::int64_t>& v,
                       const char* attr) {
  if (!v) problem(rank.file, node.pointer, fmt::format("{} needs attribute '{}'", kNodeTypes[node.type], attr));
  return v.has_value();
}

bool ChakraGraph::in_ranks(const RankTrace& rank, const Node& node, const std::optional<std::int64_t>& v,
                           const char* attr) {
  if (v && *v >= g_.num_ranks) {
    problem(rank.file, node.pointer, fmt::format("{} {} is not a rank ({} rank files)", attr, *v, g_.num_ranks));
    return false;
  }
  return true;
}

// The op of node i of rank r: its kind, stream and category by node type.
models::Op ChakraGraph::node_op(int r, std::size_t i) {
  const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
  const Node& node = rank.nodes[i];
  models::Op op;
  op.rank = r;
  op.name = node.name;
  switch (node.type) {
    case kComp:
      op.kind = models::OpKind::kCompute;
      op.stream = g_.stream(node.is_cpu_op ? "host" : "compute");
      op.category = "compute";
      op.duration = sim::Duration::us(node.duration_us);
      break;
    case kMemLoad:
    case kMemStore:
      if (node.z_kind == "host_copy") {  // zionsim's DMA copy (chakra_export.h)
        op.kind = models::OpKind::kHostCopy;
        op.stream = g_.stream("memory");
        op.category = "memory";
        op.bytes = sim::Bytes(node.tensor_size.value_or(0));
        op.to_device = node.z_to_device.value_or(node.type == kMemLoad);
        if (!node.tensor_size) problem(rank.file, node.pointer, "a zionsim host copy needs attribute 'tensor_size'");
        break;
      }
      [[fallthrough]];
    case kMetadata:
      op.kind = models::OpKind::kDelay;
      op.stream = g_.stream(node.type == kMetadata ? "host" : "memory");
      op.category = node.type == kMetadata ? "host" : "memory";
      op.duration = node.type == kMetadata && node.z_kind != "delay" ? sim::Duration::zero()
                                                                     : sim::Duration::us(node.duration_us);
      break;
    case kColl:
      add_collective_node(r, i, op);
      break;
    case kSend:
    case kRecv:
      add_p2p_node(r, i, op);
      break;
    default:
      break;  // unsupported types were reported while reading
  }
  // zionsim's own attributes, where its exporter wrote them.
  if (node.z_stream) op.stream = g_.stream(*node.z_stream);
  if (node.z_category) op.category = *node.z_category;
  if (node.z_duration_ps && (op.kind == models::OpKind::kCompute || op.kind == models::OpKind::kDelay)) {
    op.duration = sim::Duration::ps(*node.z_duration_ps);
  }
  return op;
}

// A COMM_COLL_NODE: checked, and listed among its process group's
// collectives on this rank.
void ChakraGraph::add_collective_node(int r, std::size_t i, models::Op& op) {
  const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
  const Node& node = rank.nodes[i];
  op.kind = models::OpKind::kCollective;
  op.stream = g_.stream("comm");
  const bool ok = need(rank, node, node.comm_type, "comm_type") & need(rank, node, node.comm_size, "comm_size");
  if (ok && (*node.comm_type >= static_cast<std::int64_t>(kCommTypes.size()) ||
             kCollectiveKinds[static_cast<std::size_t>(*node.comm_type)].empty())) {
    const bool known = *node.comm_type < static_cast<std::int64_t>(kCommTypes.size());
    problem(rank.file, node.pointer,
            fmt::format(
                "comm_type {}{} is not supported; supported: 0 (ALL_REDUCE), 1 (REDUCE), "
                "2 (ALL_GATHER), 5 (BROADCAST), 6 (ALL_TO_ALL), 7 (REDUCE_SCATTER), "
                "8 (REDUCE_SCATTER_BLOCK), 9 (BARRIER)",
                *node.comm_type,
                known ? fmt::format(" ({})", kCommTypes[static_cast<std::size_t>(*node.comm_type)]) : std::string()));
  } else if (ok) {
    op.category = kCollectiveKinds[static_cast<std::size_t>(*node.comm_type)];
    auto& per_rank = group_nodes_[node.pg_name];
    if (per_rank.empty()) {
      per_rank.resize(ranks_.size());
      groups_.push_back(node.pg_name);
    }
    per_rank[static_cast<std::size_t>(r)].push_back(i);
  }
}

// A COMM_SEND_NODE or COMM_RECV_NODE: checked, and listed under its
// (src, dst, tag).
void ChakraGraph::add_p2p_node(int r, std::size_t i, models::Op& op) {
  const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
  const Node& node = rank.nodes[i];
  const bool send = node.type == kSend;
  op.kind = send ? models::OpKind::kSend : models::OpKind::kRecv;
  op.stream = g_.stream(send ? "send" : "recv");
  op.category = "p2p";
  // The peer is required; this rank's own side may be left out.
  const std::optional<std::int64_t>& peer = send ? node.comm_dst : node.comm_src;
  const std::optional<std::int64_t>& self = send ? node.comm_src : node.comm_dst;
  bool ok = need(rank, node, peer, send ? "comm_dst" : "comm_src") &
            in_ranks(rank, node, peer, send ? "comm_dst" : "comm_src");
  if (send) ok = need(rank, node, node.comm_size, "comm_size") & ok;
  if (self && *self != r) {
    problem(rank.file, node.pointer,
            fmt::format("{} {} is not this file's rank {}", send ? "comm_src" : "comm_dst", *self, r));
    ok = false;
  }
  if (ok) {
    const P2pKey key{send ? r : *peer, send ? *peer : r, node.comm_tag.value_or(0)};
    auto [it, added] = p2p_.try_emplace(key);
    if (added) p2p_order_.push_back(key);
    (send ? it->second.first : it->second.second).emplace_back(r, i);
  }
}

bool ChakraGraph::numbered() const {
  bool numbered = !g_.ops.empty();
  for (const RankTrace& rank : ranks_) {
    for (const Node& node : rank.nodes) numbered &= node.z_op.has_value();
  }
  return numbered;
}

void ChakraGraph::add_deps(bool numbered) {
  for (int r = 0; r < g_.num_ranks; ++r) add_rank_deps(r, numbered);
}

// Rank r's data and control dependencies (names of nodes of its file).
void ChakraGraph::add_rank_deps(int r, bool numbered) {
  const RankTrace& rank = ranks_[static_cast<std::size_t>(r)];
  const std::vector<std::uint32_t>& op_of = op_of_[static_cast<std::size_t>(r)];
  std::map<std::int64_t, std::size_t> by_id;
  for (std::size_t i = 0; i < rank.nodes.size(); ++i) by_id.emplace(rank.nodes[i].id, i);
  std::map<int, std::uint32_t> last_on_stream;
  std::vector<std::int64_t> stream_previous(rank.nodes.size(), -1);
  for (std::size_t i : rank.order) {
    const std::uint32_t op = op_of[i];
    const auto [it, added] = last_on_stream.try_emplace(g_.ops[op].stream, op);
    if (!added) {
      stream_previous[i] = it->second;
      it->second = op;
    }
  }
  for (std::size_t i = 0; i < rank.nodes.size(); ++i) {
    models::Op& op = g_.ops[op_of[i]];
    for (const Dep& d : rank.nodes[i].deps) {
      const std::uint32_t target = op_of[by_id.at(d.id)];
      if (numbered && d.ctrl && static_cast<std::int64_t>(target) == stream_previous[i]) continue;
      op.deps.push_back(target);
    }
  }
}

// Collectives: the k-th of a group on every member.
void ChakraGraph::match_collectives() {
  for (const std::string& pg : groups_) match_group(pg);
}

// One process group's collectives. Its members are the ranks that issue
// any (every rank for the default group); the rank that issues the most is
// the reference the others are held to.
void ChakraGraph::match_group(const std::string& pg) {
  const auto& per_rank = group_nodes_[pg];
  std::vector<int> members;
  std::size_t most = 0;
  int most_rank = 0;
  for (int r = 0; r < g_.num_ranks; ++r) {
    const std::size_t count = per_rank[static_cast<std::size_t>(r)].size();
    if (pg.empty() || count > 0) members.push_back(r);
    if (count > most) {
      most = count;
      most_rank = r;
    }
  }
  for (std::size_t k = 0; k < most; ++k) {
    const Node& first = node_at(most_rank, per_rank[static_cast<std::size_t>(most_rank)][k]);
    // Only comm_types with a kind get here (checked where the nodes were read).
    const auto kind =
        models::collectives::parse_collective_kind(kCollectiveKinds[static_cast<std::size_t>(*first.comm_type)]);
    ZX_CHECK(kind.has_value(), "a supported comm_type without a collective kind");
    models::CollectiveCall call{.kind = *kind, .ranks = members, .bytes_per_rank = sim::Bytes(*first.comm_size)};
    const std::int64_t index = static_cast<std::int64_t>(g_.collectives.size());
    const bool complete = match_members(pg, k, members, most_rank, index);
    apply_exported_attributes(pg, k, members, most_rank, complete, call);
    if (complete) g_.collectives.push_back(std::move(call));
  }
}

// The k-th collective of group `pg` on each member: present, of the
// reference's comm_type and comm_size; each one present becomes an op of
// collective `index`. False when a member has none.
bool ChakraGraph::match_members(const std::string& pg, std::size_t k, const std::vector<int>& members,
                                int most_rank, std::int64_t index) {
  const auto& per_rank = group_nodes_[pg];
  const Node& first = node_at(most_rank, per_rank[static_cast<std::size_t>(most_rank)][k]);
  bool complete = true;
  for (int r : members) {
    const auto& list = per_rank[static_cast<std::size_t>(r)];
    if (k >= list.size()) {
      problem(file_of(most_rank), first.pointer,
              fmt::format("collective {} of {} ({}) has no counterpart on rank {}, which "
                          "issues {} collectives "
                          "in that group ({})",
                          k, group_label(pg), kCommTypes[static_cast<std::size_t>(*first.comm_type)], r,
                          list.size(), file_of(r)));
      complete = false;
      continue;
    }
    const Node& node = node_at(r, list[k]);
    if (*node.comm_type != *first.comm_type) {
      problem(file_of(r), node.pointer,
              fmt::format("collective {} of {}: comm_type {} here, but {} on rank {} ({}: {})", k, group_label(pg),
                          kCommTypes[static_cast<std::size_t>(*node.comm_type)],
                          kCommTypes[static_cast<std::size_t>(*first.comm_type)], most_rank, file_of(most_rank),
                          first.pointer));
    } else if (*node.comm_size != *first.comm_size) {
      problem(file_of(r), node.pointer,
              fmt::format("collective {} of {} ({}): comm_size {} here, but {} on rank {} ({}: {})", k,
                          group_label(pg), kCommTypes[static_cast<std::size_t>(*node.comm_type)], *node.comm_size,
                          *first.comm_size, most_rank, file_of(most_rank), first.pointer));
    }
    g_.ops[op_of_[static_cast<std::size_t>(r)][list[k]]].collective = index;
  }
  return complete;
}

// zionsim's own attributes (chakra_export.h), read from the reference's
// node: the group's order, the element type, the algorithm, the root, the
// all-to-all-v rows (those from every member's node).
void ChakraGraph::apply_exported_attributes(const std::string& pg, std::size_t k, const std::vector<int>& members,
                                            int most_rank, bool complete, models::CollectiveCall& call) {
  const auto& per_rank = group_nodes_[pg];
  const Node& first = node_at(most_rank, per_rank[static_cast<std::size_t>(most_rank)][k]);
  if (complete && first.z_group_ranks) {
    std::vector<int> order(first.z_group_ranks->begin(), first.z_group_ranks->end());
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != members) {
      problem(file_of(most_rank), first.pointer,
              fmt::format("zionsim_group_ranks [{}] are not the ranks that issue {} ([{}])", fmt::join(order, ", "),
                          group_label(pg), fmt::join(members, ", ")));
    } else {
      call.ranks = order;
    }
  }
  if (first.z_dtype) {
    if (const auto dtype = models::collectives::parse_data_type(*first.z_dtype)) {
      call.dtype = *dtype;
    } else {
      problem(file_of(most_rank), first.pointer,
              fmt::format("zionsim_dtype '{}' is not an element type; valid: bf16, fp16, fp32, fp8", *first.z_dtype));
    }
  }
  if (first.z_algorithm) call.algorithm = *first.z_algorithm;
  if (first.z_root) {
    if (*first.z_root >= static_cast<std::int64_t>(call.ranks.size())) {
      problem(file_of(most_rank), first.pointer,
              fmt::format("zionsim_root {} is not a member of {} ({} ranks)", *first.z_root, group_label(pg),
                          call.ranks.size()));
    } else {
      call.root = static_cast<int>(*first.z_root);
    }
  }
  if (complete && first.z_all_to_all_v_row) {
    for (int r : call.ranks) {
      const Node& node = node_at(r, per_rank[static_cast<std::size_t>(r)][k]);
      if (!node.z_all_to_all_v_row || node.z_all_to_all_v_row->size() != call.ranks.size()) {
        problem(file_of(r), node.pointer,
                fmt::format("collective {} of {}: expected zionsim_all_to_all_v_row of {} entries, as on rank {}", k,
                            group_label(pg), call.ranks.size(), most_rank));
        continue;
      }
      call.all_to_all_v_bytes.push_back(*node.z_all_to_all_v_row);
    }
  }
}

// Transfers: sends and receives of one (src, dst, tag) paired in order.
void ChakraGraph::pair_transfers() {
  for (const P2pKey& key : p2p_order_) pair_key(key);
}

void ChakraGraph::pair_key(const P2pKey& key) {
  const auto& [sends, recvs] = p2p_.at(key);
  const auto& [src, dst, tag] = key;
  for (std::size_t k = 0; k < std::max(sends.size(), recvs.size()); ++k) {
    if (k >= recvs.size()) {
      const auto [r, i] = sends[k];
      problem(file_of(r), node_at(r, i).pointer,
              fmt::format("send to rank {} (tag {}) has no matching receive: rank {} posts {} "
                          "receives from rank "
                          "{} with that tag ({})",
                          dst, tag, dst, recvs.size(), src, file_of(static_cast<int>(dst))));
      continue;
    }
    if (k >= sends.size()) {
      const auto [r, i] = recvs[k];
      problem(file_of(r), node_at(r, i).pointer,
              fmt::format("receive from rank {} (tag {}) has no matching send: rank {} posts {} "
                          "sends to rank "
                          "{} with that tag ({})",
                          src, tag, src, sends.size(), dst, file_of(static_cast<int>(src))));
      continue;
    }
    const Node& send = node_at(sends[k].first, sends[k].second);
    const Node& recv = node_at(recvs[k].first, recvs[k].second);
    if (recv.comm_size && *recv.comm_size != *send.comm_size) {
      problem(file_of(recvs[k].first), recv.pointer,
              fmt::format("receive of comm_size {} from rank {} (tag {}), but the matching send ({}: {}) has "
                          "comm_size {}",
                          *recv.comm_size, src, tag, file_of(sends[k].first), send.pointer, *send.comm_size));
    }
    const std::int64_t index = static_cast<std::int64_t>(g_.transfers.size());
    g_.transfers.push_back(
        {.src = static_cast<int>(src), .dst = static_cast<int>(dst), .size = sim::Bytes(*send.comm_size)});
    g_.ops[op_of_[static_cast<std::size_t>(sends[k].first)][sends[k].second]].transfer = index;
    g_.ops[op_of_[static_cast<std::size_t>(recvs[k].first)][recvs[k].second]].transfer = index;
  }
}

// What is left: a cycle across ranks (through collectives and transfers).
void ChakraGraph::check_graph() {
  for (const models::OpGraphProblem& p : models::validate(g_)) {
    if (p.op >= 0) {
      const auto [r, i] = node_of_op_[static_cast<std::size_t>(p.op)];
      problem(file_of(r), node_at(r, i).pointer, p.message);
    } else {
      problem(file_of(0), "", p.message);
    }
  }
}

// A trace zionsim exported numbers its ops and collectives (zionsim_op,
// zionsim_collective) and tags each transfer with its index: restore that
// numbering, so that the graph is the one exported, op for op. Its
// durations are measured unless every file says otherwise.
models::OpGraph ChakraGraph::finish(bool numbered) {
  if (numbered) renumber(g_, ranks_, op_of_);
  if (std::all_of(ranks_.begin(), ranks_.end(), [](const RankTrace& r) { return r.measured.has_value(); })) {
    g_.compute_durations_measured =
        std::all_of(ranks_.begin(), ranks_.end(), [](const RankTrace& r) { return *r.measured; });
  }
  return std::move(g_);
}

}  // namespace

models::OpGraph import_chakra(const std::vector<std::string>& rank_files) {
  if (rank_files.empty()) throw InputError(Diagnostic{"<chakra>", "", "no rank files given"});
  std::vector<Diagnostic> problems;
  std::vector<RankTrace> ranks;
  for (const std::string& file : rank_files) ranks.push_back(read_rank(file, problems));
  if (!problems.empty()) throw InputError(problems);

  ChakraGraph graph(ranks);
  graph.add_ops();
  graph.throw_if_problems();
  const bool numbered = graph.numbered();
  graph.add_deps(numbered);
  graph.match_collectives();
  graph.pair_transfers();
  graph.throw_if_problems();
  graph.check_graph();
  graph.throw_if_problems();
  return graph.finish(numbered);
}

bool looks_like_chakra(const std::string& path) {
  try {
    const std::string bytes = read_input_file(path);
    if (!is_json_text(bytes)) {
      // A protobuf stream: Chakra's if its first message decodes as the
      // GlobalMetadata or a node of a known type.
      const chakra_et::DecodeResult d = chakra_et::decode(bytes);
      if (d.error && d.error->message == 0) return false;
      return d.file.metadata.has_value() ||
             (!d.file.nodes.empty() && d.file.nodes[0].type > 0 &&
              d.file.nodes[0].type < static_cast<std::int64_t>(kNodeTypes.size()));
    }
    if (!json::json_depth_ok(bytes)) return false;
    std::istringstream in(bytes);
    nlohmann::json first;
    in >> first;
    if (first.is_array() && !first.empty()) first = first[0];
    if (!first.is_object() || first.contains("schema_version")) return false;
    if (first.contains("version") && first["version"].is_string()) return true;  // GlobalMetadata
    if (first.contains("type") && first["type"].is_string()) {
      return std::find(kNodeTypes.begin(), kNodeTypes.end(), first["type"].get<std::string>()) !=
             kNodeTypes.end();
    }
    return false;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace zx::workloads
