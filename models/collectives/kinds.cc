// File: models/collectives/kinds.cc
//
// Names of collective kinds and element types (see kinds.h).

#include "models/collectives/kinds.h"

#include <algorithm>
#include <string>

#include "base/check.h"

namespace zx::models::collectives {
namespace {

std::string normalized(std::string_view name) {
  std::string s(name);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

}  // namespace

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
  }
  ZX_UNREACHABLE("bad CollectiveKind");
}

const std::vector<CollectiveKind>& all_collective_kinds() {
  static const std::vector<CollectiveKind> kinds = {
      CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
      CollectiveKind::kAllToAll,  CollectiveKind::kBroadcast,     CollectiveKind::kReduce};
  return kinds;
}

std::optional<CollectiveKind> parse_collective_kind(std::string_view name) {
  const std::string n = normalized(name);
  for (CollectiveKind kind : all_collective_kinds()) {
    if (to_string(kind) == n) return kind;
  }
  return std::nullopt;
}

bool is_reduction(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kReduce;
}

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return "fp32";
    case DataType::kFp16:
      return "fp16";
    case DataType::kBf16:
      return "bf16";
    case DataType::kFp8:
      return "fp8";
  }
  ZX_UNREACHABLE("bad DataType");
}

std::optional<DataType> parse_data_type(std::string_view name) {
  for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16, DataType::kFp8}) {
    if (to_string(t) == name) return t;
  }
  return std::nullopt;
}

int size_bytes(DataType type) {
  switch (type) {
    case DataType::kFp32:
      return 4;
    case DataType::kFp16:
    case DataType::kBf16:
      return 2;
    case DataType::kFp8:
      return 1;
  }
  ZX_UNREACHABLE("bad DataType");
}

}  // namespace zx::models::collectives
