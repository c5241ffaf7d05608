// File: models/collectives/plugins/examples/faulty_plugin.cc
//
// A plug-in for the loader's tests whose all-reduce algorithms are wrong in
// each way a plug-in's plan can be: the loader's checks must turn every one
// into an input error naming the plug-in and the algorithm, never a crash,
// a hang or a silently wrong time.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "models/collectives/collective_algorithm.h"
#include "models/collectives/plan.h"
#include "models/collectives/plugins/plugin_api.h"

namespace {

namespace zc = zx::models::collectives;

enum class Fault { kThrows, kWaitsOnLaterStep, kRankOutOfRange, kShortTransfer, kNoReduction, kEmpty };

class FaultyAllReduce final : public zc::CollectiveAlgorithm {
 public:
  FaultyAllReduce(std::string_view name, Fault fault) : name_(name), fault_(fault) {}
  std::string_view name() const override { return name_; }
  bool supports(zc::CollectiveKind kind) const override {
    return kind == zc::CollectiveKind::kAllReduce;
  }
  zc::CollectivePlan lower(const zc::CollectiveRequest& request,
                           const zc::TopologyView& topology) const override {
    zc::check_lowerable(*this, request, topology);
    const int n = static_cast<int>(request.ranks.size());
    zc::CollectivePlan plan{.kind = request.kind, .group_size = n};
    if (fault_ == Fault::kThrows) throw std::runtime_error("the plug-in ran out of ideas");
    if (fault_ == Fault::kEmpty) return plan;
    plan.chunks.push_back(zc::Chunk{.size = request.bytes_per_rank});
    const zx::sim::Bytes size = fault_ == Fault::kShortTransfer ? zx::sim::Bytes(1) : request.bytes_per_rank;
    const int dst = fault_ == Fault::kRankOutOfRange ? n + 5 : 1;
    // Rank 0 sends its buffer to rank 1 (a copy: nobody reduces anything).
    zc::Step step;
    step.transfers.push_back(
        zc::Transfer{.src = 0, .dst = dst, .size = size, .op = zc::TransferOp::kCopy, .chunks = {{0, 1}}});
    if (fault_ == Fault::kWaitsOnLaterStep) step.after = {1};
    plan.steps.push_back(step);
    return plan;
  }

 private:
  std::string_view name_;
  Fault fault_;
};

}  // namespace

extern "C" int zionsim_collective_plugin_api_version(void) {
  return ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION;
}

extern "C" void zionsim_register_collectives(zc::CollectiveRegistry* registry) {
  const auto add = [registry](std::string_view name, Fault fault) {
    registry->add(std::string(name), "a wrong all-reduce, for the loader's tests",
                  [name, fault](zx::json::ObjectReader&) { return std::make_unique<FaultyAllReduce>(name, fault); });
  };
  add("throws", Fault::kThrows);
  add("waits_on_later_step", Fault::kWaitsOnLaterStep);
  add("rank_out_of_range", Fault::kRankOutOfRange);
  add("short_transfer", Fault::kShortTransfer);
  add("no_reduction", Fault::kNoReduction);
  add("empty", Fault::kEmpty);
}
