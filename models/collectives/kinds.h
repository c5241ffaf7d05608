// File: models/collectives/kinds.h
//
// The kinds of collective and the element types of their buffers, with
// their names as files and flags spell them. Apart from plan.h so that the
// op graph (models/execution/op_graph.h) can type its collective calls
// without seeing plans.

#ifndef ZIONSIM_MODELS_COLLECTIVES_KINDS_H_
#define ZIONSIM_MODELS_COLLECTIVES_KINDS_H_

#include <optional>
#include <string_view>
#include <vector>

namespace zx::models::collectives {

enum class CollectiveKind {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kBroadcast,
  kReduce
};

/// "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "reduce".
std::string_view to_string(CollectiveKind kind);
/// Inverse of to_string; also accepts '-' for '_' ("all-reduce"). nullopt if unknown.
std::optional<CollectiveKind> parse_collective_kind(std::string_view name);
/// Every kind, in declaration order.
const std::vector<CollectiveKind>& all_collective_kinds();
/// Whether the receiver of this collective reduces (all-reduce, reduce-scatter, reduce).
bool is_reduction(CollectiveKind kind);

/// Element types: they fix the element size that buffers are split on.
enum class DataType { kFp32, kFp16, kBf16, kFp8 };

std::string_view to_string(DataType type);  ///< "fp32", "fp16", "bf16", "fp8"
std::optional<DataType> parse_data_type(std::string_view name);
int size_bytes(DataType type);  ///< 4, 2, 2, 1

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_KINDS_H_
