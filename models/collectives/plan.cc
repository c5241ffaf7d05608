// File: models/collectives/plan.cc
//
// Request validation and the canonical ways a buffer is split into blocks
// (see plan.h).

#include "models/collectives/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>

#include "base/check.h"
#include "base/error.h"

namespace zx::models::collectives {
std::string_view to_string(TransferOp op) { return op == TransferOp::kCopy ? "copy" : "reduce"; }

void validate(const CollectiveRequest& request) {
  std::vector<Diagnostic> problems;
  auto error = [&](std::string location, std::string message) {
    problems.push_back({.source = "collective request",
                        .location = std::move(location),
                        .message = std::move(message)});
  };
  const int n = static_cast<int>(request.ranks.size());
  if (n == 0) error("ranks", "expected a non-empty group");
  std::set<int> seen;
  for (int i = 0; i < n; ++i) {
    const int r = request.ranks[static_cast<std::size_t>(i)];
    if (r < 0) error(fmt::format("ranks/{}", i), fmt::format("expected a rank >= 0, got {}", r));
    if (!seen.insert(r).second) {
      error(fmt::format("ranks/{}", i), fmt::format("rank {} appears twice in the group", r));
    }
  }
  if (request.bytes_per_rank < sim::Bytes(0)) {
    error("bytes_per_rank",
          fmt::format("expected bytes >= 0, got {}", request.bytes_per_rank.count()));
  }
  if ((request.kind == CollectiveKind::kBroadcast || request.kind == CollectiveKind::kReduce) &&
      (request.root < 0 || request.root >= n)) {
    error("root", fmt::format("expected a group index in [0, {}], got {}", n - 1, request.root));
  }
  const auto& m = request.all_to_all_v_bytes;
  if (!m.empty()) {
    if (request.kind != CollectiveKind::kAllToAll) {
      error("all_to_all_v_bytes",
            fmt::format("only all_to_all takes a matrix, not {}", to_string(request.kind)));
    } else if (static_cast<int>(m.size()) != n) {
      error("all_to_all_v_bytes",
            fmt::format("expected {} rows (one per rank), got {}", n, m.size()));
    } else {
      for (int s = 0; s < n; ++s) {
        const auto& row = m[static_cast<std::size_t>(s)];
        if (static_cast<int>(row.size()) != n) {
          error(fmt::format("all_to_all_v_bytes/{}", s),
                fmt::format("expected {} entries, got {}", n, row.size()));
          continue;
        }
        for (int d = 0; d < n; ++d) {
          if (row[static_cast<std::size_t>(d)] < 0) {
            error(fmt::format("all_to_all_v_bytes/{}/{}", s, d),
                  fmt::format("expected bytes >= 0, got {}", row[static_cast<std::size_t>(d)]));
          }
        }
      }
    }
  }
  if (!problems.empty()) throw InputError(std::move(problems));
}

std::vector<sim::Bytes> split_bytes(sim::Bytes total, int parts, int element_bytes) {
  ZX_CHECK(parts >= 1, "split_bytes needs at least one part");
  ZX_CHECK(element_bytes >= 1, "split_bytes needs a positive element size");
  ZX_CHECK(total >= sim::Bytes(0), "split_bytes of a negative size");
  const std::int64_t elements = total.count() / element_bytes;
  const std::int64_t tail = total.count() % element_bytes;
  const std::int64_t base = elements / parts;
  const std::int64_t extra = elements % parts;
  std::vector<sim::Bytes> out;
  out.reserve(static_cast<std::size_t>(parts));
  for (int i = 0; i < parts; ++i) {
    out.push_back(sim::Bytes((base + (i < extra ? 1 : 0)) * element_bytes));
  }
  out.back() += sim::Bytes(tail);
  return out;
}

std::vector<sim::Bytes> block_sizes(const CollectiveRequest& request) {
  return split_bytes(request.bytes_per_rank, static_cast<int>(request.ranks.size()),
                     size_bytes(request.dtype));
}

sim::Bytes pair_size(const CollectiveRequest& request, int src, int dst) {
  if (!request.all_to_all_v_bytes.empty()) {
    return sim::Bytes(
        request.all_to_all_v_bytes[static_cast<std::size_t>(src)][static_cast<std::size_t>(dst)]);
  }
  // split_bytes' piece `dst` alone: a whole split per pair made an
  // all-to-all's lowering and checking n^3.
  const int n = static_cast<int>(request.ranks.size());
  const int element = size_bytes(request.dtype);
  const std::int64_t elements = request.bytes_per_rank.count() / element;
  const std::int64_t piece = (elements / n + (dst < elements % n ? 1 : 0)) * element;
  return sim::Bytes(piece + (dst == n - 1 ? request.bytes_per_rank.count() % element : 0));
}

std::uint64_t step_count(const CollectivePlan& plan) {
  return plan.generator ? plan.generator->step_count() : plan.steps.size();
}

void StepGenerator::step_header(std::uint32_t s, Step& out) const {
  step(s, out);
  out.transfers.clear();
}

void StepGenerator::for_each_transfer(std::uint32_t s, const std::function<void(const Transfer&)>& visit) const {
  Step whole;
  step(s, whole);
  for (const Transfer& x : whole.transfers) visit(x);
}

CollectivePlan materialize(CollectivePlan plan) {
  if (!plan.generator) return plan;
  if (plan.chunks.empty()) plan.chunks = plan.generator->make_chunks();
  const std::uint32_t count = plan.generator->step_count();
  plan.steps.resize(count);
  for (std::uint32_t s = 0; s < count; ++s) {
    Step& step = plan.steps[s];
    plan.generator->step(s, step);
    for (const Transfer& t : step.transfers) {
      ZX_CHECK(t.src != kNvlinkSwitch && t.dst != kNvlinkSwitch, "a generated step uses the NVLink switch");
    }
  }
  plan.generator.reset();
  return plan;
}

sim::Bytes total_bytes(const CollectivePlan& plan) {
  sim::Bytes total;
  const auto add = [&](const Step& step) {
    for (const Transfer& t : step.transfers) total += t.size;
  };
  if (plan.generator) {
    for (std::uint32_t s = 0; s < plan.generator->step_count(); ++s) {
      plan.generator->for_each_transfer(s, [&](const Transfer& t) { total += t.size; });
    }
    return total;
  }
  for (const Step& step : plan.steps) add(step);
  return total;
}

}  // namespace zx::models::collectives
