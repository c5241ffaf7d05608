// File: models/collectives/nvls.cc
//
// NVLink SHARP lowering (see nvls.h). Slice k of the buffer is cut into n
// blocks, block b owned by group member b. Per slice, up to four steps:
//   reduce up     every member sends the whole slice to the switch (reduce)
//   reduce down   the switch copies block b to member b
//   gather up     member b copies its block to the switch
//   gather down   the switch copies every other block to each member
// Each phase of slice k waits for the same phase of slice k-1 and for the
// previous phase of its own slice.

#include "models/collectives/nvls.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "base/json_reader.h"
#include "models/collectives/internal/plan_builder.h"

namespace zx::models::collectives {

using internal::PlanBuilder;

NvlsOptions parse_nvls_options(json::ObjectReader& options) {
  NvlsOptions out;
  const bool chunks = options.read_int("chunks", out.chunks, {.min = 1, .max = 64});
  if (options.read_int("chunk_bytes", out.chunk_bytes, {.min = 1, .max = std::int64_t{1} << 40}) && chunks) {
    options.error("chunk_bytes", "give chunks or chunk_bytes, not both");
  }
  return out;
}

int nvls_slices(const NvlsOptions& options, std::int64_t bytes) {
  constexpr std::int64_t kMostSlices = 64;
  if (options.chunks > 0) return options.chunks;
  const std::int64_t size = options.chunk_bytes > 0 ? options.chunk_bytes : kNvlsDefaultChunkBytes;
  return static_cast<int>(std::clamp<std::int64_t>((bytes + size - 1) / size, 1, kMostSlices));
}

bool NvlsAlgorithm::supports(CollectiveKind kind) const {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kAllGather;
}

CollectivePlan NvlsAlgorithm::lower(const CollectiveRequest& request, const TopologyView& topology) const {
  check_lowerable(*this, request, topology);
  const int n = static_cast<int>(request.ranks.size());
  if (!topology.switch_reduces()) {
    internal::throw_cannot_lower(
        name(), "needs an NVLink switch that reduces in the network (NVLink SHARP: NVSwitch 3 and later, H100, B200, "
                "GB200; cluster key nvlink.sharp_efficiency); this cluster's does not");
  }
  if (topology.members_by_server().size() > 1) {
    internal::throw_cannot_lower(
        name(), fmt::format("needs the group inside one NVLink domain; it spans {} servers (NVLS across servers, "
                            "NCCL's NVLS_TREE, is not modelled)",
                            topology.members_by_server().size()));
  }
  const int elem = size_bytes(request.dtype);
  const int slices = nvls_slices(options_, request.bytes_per_rank.count());
  PlanBuilder plan(request.kind, n);

  // chunk[k][b]: slice k of member b's block.
  std::vector<std::vector<std::uint32_t>> chunk(static_cast<std::size_t>(slices),
                                                std::vector<std::uint32_t>(static_cast<std::size_t>(n)));
  if (request.kind == CollectiveKind::kAllReduce) {
    const auto slice_sizes = split_bytes(request.bytes_per_rank, slices, elem);
    for (int k = 0; k < slices; ++k) {
      const auto sizes = split_bytes(slice_sizes[static_cast<std::size_t>(k)], n, elem);
      for (int b = 0; b < n; ++b) chunk[k][b] = plan.add_chunk(sizes[static_cast<std::size_t>(b)], {}, {});
    }
  } else {
    const bool gather = request.kind == CollectiveKind::kAllGather;
    const auto blocks = block_sizes(request);
    for (int b = 0; b < n; ++b) {
      const auto sizes = split_bytes(blocks[static_cast<std::size_t>(b)], slices, elem);
      for (int k = 0; k < slices; ++k) {
        chunk[k][b] = plan.add_chunk(sizes[static_cast<std::size_t>(k)], gather ? std::optional<int>(b) : std::nullopt,
                                     gather ? std::nullopt : std::optional<int>(b));
      }
    }
  }
  if (n == 1) return std::move(plan).finish();  // one member holds the result already

  const bool reduce = request.kind != CollectiveKind::kAllGather;
  const bool gather = request.kind != CollectiveKind::kReduceScatter;
  const int phases = (reduce ? 2 : 0) + (gather ? 2 : 0);
  // step_of[k][p]: slice k's phase p.
  std::vector<std::vector<std::uint32_t>> step_of(static_cast<std::size_t>(slices));
  for (int k = 0; k < slices; ++k) {
    for (int p = 0; p < phases; ++p) {
      std::vector<std::uint32_t> after;
      if (p > 0) after.push_back(step_of[k][static_cast<std::size_t>(p - 1)]);
      if (k > 0) after.push_back(step_of[k - 1][static_cast<std::size_t>(p)]);
      step_of[k].push_back(plan.add_step(std::move(after)));
    }
    const auto slice_range = [&](int k) {
      std::vector<std::uint32_t> all(chunk[k].begin(), chunk[k].end());
      return internal::to_ranges(std::move(all));
    };
    int p = 0;
    if (reduce) {
      const std::uint32_t up = step_of[k][static_cast<std::size_t>(p++)];
      const std::uint32_t down = step_of[k][static_cast<std::size_t>(p++)];
      for (int m = 0; m < n; ++m) plan.add_transfer(up, m, kNvlinkSwitch, TransferOp::kReduce, slice_range(k));
      for (int b = 0; b < n; ++b) plan.add_transfer(down, kNvlinkSwitch, b, TransferOp::kCopy, chunk[k][b]);
    }
    if (gather) {
      const std::uint32_t up = step_of[k][static_cast<std::size_t>(p++)];
      const std::uint32_t down = step_of[k][static_cast<std::size_t>(p++)];
      for (int b = 0; b < n; ++b) plan.add_transfer(up, b, kNvlinkSwitch, TransferOp::kCopy, chunk[k][b]);
      for (int m = 0; m < n; ++m) {
        std::vector<std::uint32_t> others;
        for (int b = 0; b < n; ++b) {
          if (b != m) others.push_back(chunk[k][b]);
        }
        plan.add_transfer(down, kNvlinkSwitch, m, TransferOp::kCopy, internal::to_ranges(std::move(others)));
      }
    }
  }
  return std::move(plan).finish();
}

}  // namespace zx::models::collectives
