#include "models/dlrm/model.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "models/dlrm/zoo_data.h"

namespace zx::models {
namespace {

constexpr int kSchemaVersion = 1;
const std::vector<std::string> kDataTypes = {"bf16", "fp16", "fp32", "fp8"};

// Reads {"widths": [...]} or {"width": w, "layers": n}, plus "input" when
// `input_allowed`.
void read_mlp(json::ObjectReader& o, Mlp& mlp, bool input_allowed, bool input_required) {
  if (input_allowed) {
    if (input_required) o.require("input");
    o.read_int("input", mlp.input, json::IntRange{1, 1 << 24});
  }
  const bool listed = o.has("widths");
  const bool uniform = o.has("width") || o.has("layers");
  if (listed == uniform) {
    o.error("", listed ? "give either 'widths' or 'width' and 'layers', not both"
                       : "missing 'widths' (or 'width' and 'layers')");
  }
  if (listed) {
    if (auto widths = o.array("widths")) {
      if (widths->size() == 0) o.error("widths", "expected at least one layer");
      for (std::size_t i = 0; i < widths->size(); ++i) {
        std::int64_t w = 0;
        if (widths->read_int(i, w, json::IntRange{1, 1 << 24})) mlp.widths.push_back(w);
      }
    }
  } else if (uniform) {
    std::int64_t width = 0;
    std::int64_t layers = 0;
    o.require("width");
    o.require("layers");
    const bool ok = o.read_int("width", width, json::IntRange{1, 1 << 24}) &
                    o.read_int("layers", layers, json::IntRange{1, 1024});
    if (ok) mlp.widths.assign(static_cast<std::size_t>(layers), width);
  }
  o.allow("widths");
  o.allow("width");
  o.allow("layers");
  o.finish();
}

}  // namespace

std::int64_t DlrmModel::num_tables() const {
  std::int64_t n = 0;
  for (const TableGroup& t : tables) n += t.count;
  return n;
}

std::int64_t DlrmModel::embedding_parameters() const {
  std::int64_t n = 0;
  for (const TableGroup& t : tables) n += t.count * t.rows * t.dim;
  return n;
}

namespace {

std::int64_t mlp_parameters(const Mlp& mlp) {
  std::int64_t n = 0;
  std::int64_t in = mlp.input;
  for (std::int64_t w : mlp.widths) {
    n += in * w + w;
    in = w;
  }
  return n;
}

double mlp_flops(const Mlp& mlp) {
  double f = 0;
  double in = static_cast<double>(mlp.input);
  for (std::int64_t w : mlp.widths) {
    f += 2.0 * in * static_cast<double>(w);
    in = static_cast<double>(w);
  }
  return f;
}

}  // namespace

std::int64_t DlrmModel::dense_parameters() const {
  std::int64_t n = mlp_parameters(bottom_mlp) + mlp_parameters(top_mlp);
  if (interaction.kind == InteractionKind::kDcn) {
    const std::int64_t width = interaction_output();
    n += interaction.cross_layers * (2 * width * interaction.rank + width);
  }
  return n;
}

double DlrmModel::embedding_bytes() const {
  return static_cast<double>(embedding_parameters()) * element_bytes(embedding_type);
}

std::int64_t DlrmModel::interaction_features() const { return num_tables() + 1; }

std::int64_t DlrmModel::interaction_output() const {
  switch (interaction.kind) {
    case InteractionKind::kDot: {
      const std::int64_t f = interaction_features();
      return f * (f - 1) / 2 + bottom_mlp.output();
    }
    case InteractionKind::kDcn: {
      std::int64_t width = bottom_mlp.output();
      for (const TableGroup& t : tables) width += t.count * t.dim;
      return width;
    }
    case InteractionKind::kNone: return top_mlp.input;
  }
  return 0;
}

double DlrmModel::forward_flops_per_sample() const {
  double f = mlp_flops(bottom_mlp) + mlp_flops(top_mlp);
  if (interaction.kind == InteractionKind::kDot) {
    const double features = static_cast<double>(interaction_features());
    f += 2.0 * features * features * static_cast<double>(bottom_mlp.output());
  } else if (interaction.kind == InteractionKind::kDcn) {
    const double width = static_cast<double>(interaction_output());
    f += static_cast<double>(interaction.cross_layers) *
         (4.0 * width * static_cast<double>(interaction.rank) + 3.0 * width);
  }
  return f;
}

double DlrmModel::lookups_per_sample() const {
  double n = 0;
  for (const TableGroup& t : tables) n += static_cast<double>(t.count) * t.pooling;
  return n;
}

DlrmModel parse_model(std::string_view text, const std::string& source) {
  json::Document doc = json::Document::parse(text, source);
  json::ObjectReader root = doc.root();
  doc.check_schema_version(root, {kSchemaVersion});
  DlrmModel m;
  root.require("name");
  root.read_string("name", m.name);
  root.read_string("description", m.description);
  for (const char* key : {"sources", "assumptions"}) {
    if (auto list = root.array(key)) {
      for (std::size_t i = 0; i < list->size(); ++i) {
        std::string s;
        list->read_string(i, s);
      }
    }
  }
  root.require("dense_features");
  root.read_int("dense_features", m.dense_features, json::IntRange{1, 1 << 24});
  std::string type;
  if (root.read_enum("embedding_dtype", type, kDataTypes)) m.embedding_type = parse_data_type(type);
  if (root.read_enum("dense_dtype", type, kDataTypes)) m.dense_type = parse_data_type(type);

  root.require("tables");
  if (auto tables = root.array("tables")) {
    if (tables->size() == 0) root.error("tables", "expected at least one table");
    std::map<std::string, std::size_t> group_index;  // a group's name -> its index
    for (std::size_t i = 0; i < tables->size(); ++i) {
      json::ObjectReader t = tables->object(i);
      TableGroup g;
      g.name = fmt::format("table{}", i);
      if (t.read_string("name", g.name)) {
        // A sharding file names groups: two of one name would make its entry
        // apply to whichever came last.
        if (const auto [it, added] = group_index.emplace(g.name, i); !added) {
          t.error("name", fmt::format("'{}' is also the name of {}", g.name, tables->element_pointer(it->second)));
        }
      }
      t.read_int("count", g.count, json::IntRange{1, 1 << 24});
      t.require("rows");
      t.read_int("rows", g.rows, json::IntRange{1, std::int64_t{1} << 40});
      t.require("dim");
      t.read_int("dim", g.dim, json::IntRange{1, 65536});
      t.require("pooling");
      t.read_number("pooling", g.pooling, json::NumberRange{0.0, 1e6, /*exclusive=*/true});
      double alpha = 0;
      if (t.read_number("zipf_alpha", alpha, json::NumberRange{0.0, 10.0})) g.zipf_alpha = alpha;
      t.finish();
      m.tables.push_back(std::move(g));
    }
  }

  root.require("bottom_mlp");
  if (auto o = root.object("bottom_mlp")) read_mlp(*o, m.bottom_mlp, /*input_allowed=*/false, false);
  m.bottom_mlp.input = m.dense_features;

  root.require("interaction");
  if (auto o = root.object("interaction")) {
    std::string kind = "dot";
    o->require("kind");
    if (o->read_enum("kind", kind, {"dcn", "dot", "none"})) {
      m.interaction.kind = kind == "dot"   ? InteractionKind::kDot
                           : kind == "dcn" ? InteractionKind::kDcn
                                           : InteractionKind::kNone;
    }
    if (m.interaction.kind == InteractionKind::kDcn) {
      o->require("cross_layers");
      o->require("rank");
      o->read_int("cross_layers", m.interaction.cross_layers, json::IntRange{1, 64});
      o->read_int("rank", m.interaction.rank, json::IntRange{1, 1 << 20});
    }
    o->finish();
  }

  const bool none = m.interaction.kind == InteractionKind::kNone;
  root.require("top_mlp");
  if (auto o = root.object("top_mlp")) read_mlp(*o, m.top_mlp, /*input_allowed=*/none, none);
  root.finish();
  doc.throw_if_errors();

  // Cross-field rules.
  if (m.interaction.kind == InteractionKind::kDot) {
    for (std::size_t i = 0; i < m.tables.size(); ++i) {
      if (m.tables[i].dim != m.bottom_mlp.output()) {
        doc.diagnostics().error(fmt::format("/tables/{}/dim", i),
                                fmt::format("a dot interaction needs every table's dim to equal the "
                                            "bottom MLP output {}, got {}",
                                            m.bottom_mlp.output(), m.tables[i].dim));
      }
    }
  }
  doc.throw_if_errors();
  if (!none) m.top_mlp.input = m.interaction_output();
  return m;
}

std::vector<std::pair<std::string, std::string>> model_zoo_descriptions() {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < internal::kZooFileCount; ++i) {
    const internal::ZooFile& f = internal::kZooFiles[i];
    const DlrmModel m = parse_model(f.text, std::string("models/zoo/") + f.name + ".json");
    out.emplace_back(f.name, m.description);
  }
  std::sort(out.begin(), out.end());
  return out;
}

DlrmModel load_model(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (is_path) {
    json::Document doc = json::Document::load_file(name_or_path);
    return parse_model(doc.value().dump(), name_or_path);
  }
  std::vector<std::string> names;
  for (int i = 0; i < internal::kZooFileCount; ++i) {
    const internal::ZooFile& f = internal::kZooFiles[i];
    if (name_or_path == f.name) return parse_model(f.text, std::string("models/zoo/") + f.name + ".json");
    names.emplace_back(f.name);
  }
  std::sort(names.begin(), names.end());
  std::string message = fmt::format("unknown model '{}'", name_or_path);
  if (auto guess = json::closest_match(name_or_path, names)) message += fmt::format(" (did you mean '{}'?)", *guess);
  message += fmt::format("; valid: {}, or the path of a .json model file", fmt::join(names, ", "));
  throw InputError(Diagnostic{"--model", "", message});
}

}  // namespace zx::models
