// File: models/dlrm/model.h
//
// A DLRM as the simulator sees it: embedding tables (grouped by shape),
// a bottom MLP over the dense features, a feature interaction, and a top
// MLP. Loaded from model files (JSON, schema_version 1; the zoo under
// models/zoo/ ships the paper's models A, I and F as MAD-Max describes them,
// and MLCommons' DLRM-DCNv2), validated like every input. Counting helpers
// give parameters, bytes and forward FLOPs per sample, so tests can check a
// model against its published totals.

#ifndef ZIONSIM_MODELS_DLRM_MODEL_H_
#define ZIONSIM_MODELS_DLRM_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/compute/device_profile.h"

namespace zx::models {

/// `count` identical tables.
struct TableGroup {
  std::string name;
  std::int64_t count = 1;
  std::int64_t rows = 0;
  std::int64_t dim = 0;
  double pooling = 1;  ///< average lookups per sample (multi-hot size)
  /// When known: the group's lookups are Zipf(alpha) over its rows, which
  /// sets a host-memory table's cache hit rate (models/dlrm/cache_model.h).
  std::optional<double> zipf_alpha;
};

/// Fully connected layers: input features, then each layer's output width.
struct Mlp {
  std::int64_t input = 0;
  std::vector<std::int64_t> widths;
  std::int64_t output() const { return widths.empty() ? input : widths.back(); }
};

enum class InteractionKind {
  kDot,   ///< DLRM pairwise dot products of the bottom output and every pooled embedding
  kDcn,   ///< DCN-v2 low-rank cross layers over the concatenation
  kNone,  ///< MAD-Max's accounting: not modelled; the top MLP declares its input
};

struct Interaction {
  InteractionKind kind = InteractionKind::kDot;
  std::int64_t cross_layers = 0;  ///< DCN only
  std::int64_t rank = 0;          ///< DCN only: low-rank projection size
};

struct DlrmModel {
  std::string name;
  std::string description;
  std::int64_t dense_features = 0;
  DataType embedding_type = DataType::kFp16;
  DataType dense_type = DataType::kFp32;
  std::vector<TableGroup> tables;
  Mlp bottom_mlp;
  Interaction interaction;
  Mlp top_mlp;

  std::int64_t num_tables() const;
  /// Embedding rows x dim over all tables.
  std::int64_t embedding_parameters() const;
  /// MLP and interaction weights and biases.
  std::int64_t dense_parameters() const;
  std::int64_t parameters() const { return embedding_parameters() + dense_parameters(); }
  /// Embedding bytes in embedding_type (no optimizer state).
  double embedding_bytes() const;
  /// Features entering the interaction: the bottom MLP output and one
  /// pooled vector per table.
  std::int64_t interaction_features() const;
  /// Width of the interaction's output (the top MLP's input).
  std::int64_t interaction_output() const;
  /// Forward FLOPs per sample: MLPs and interaction (2 per multiply-add).
  double forward_flops_per_sample() const;
  /// Pooled lookups per sample over all tables.
  double lookups_per_sample() const;
};

/// Zoo names with one-line descriptions, sorted.
std::vector<std::pair<std::string, std::string>> model_zoo_descriptions();

/// A zoo model by name, or a model file by path (anything with '/' or
/// ending in .json). Throws zx::InputError.
DlrmModel load_model(const std::string& name_or_path);

/// Parses model-file text from `source`. Throws zx::InputError with every
/// problem at its JSON pointer.
DlrmModel parse_model(std::string_view text, const std::string& source);

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_DLRM_MODEL_H_
