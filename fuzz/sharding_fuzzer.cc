// File: fuzz/sharding_fuzzer.cc
//
// libFuzzer target: parse_sharding_file on arbitrary text, against the zoo
// model "dlrm-a-small" on 16 GPUs in servers of 8, then plan_sharding with
// what it read (pinned ranks, nodes, column shards and memory). A plan that
// fits must keep every GPU within its HBM budget and, written back as a file
// (sharding_file_text), read back to the same placements.
// zx::InputError is the parser's documented answer to bad input; anything
// else escaping, a crash, a sanitizer report or a hang is a finding.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"
#include "models/compute/device_profile.h"
#include "models/dlrm/model.h"
#include "models/dlrm/sharding.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const zx::models::DlrmModel model = zx::models::load_model("dlrm-a-small");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const zx::models::DeviceProfile device = zx::models::builtin_device_profile("a100-40gb");
  try {
    const zx::models::ShardingOptions options = zx::models::parse_sharding_file(text, "fuzz.json", model, 16, 8);
    const zx::models::ShardingPlan plan = zx::models::plan_sharding(model, 16, 8, device, options);
    if (!plan.fits) return 0;
    for (const zx::models::GpuLoad& g : plan.gpus) {
      if (g.hbm_bytes > plan.hbm_budget_bytes) __builtin_trap();
    }
    const zx::models::ShardingPlan again = zx::models::plan_sharding(
        model, 16, 8, device,
        zx::models::parse_sharding_file(zx::models::sharding_file_text(plan, 8, "fuzz"), "again.json", model, 16, 8));
    if (!again.fits || again.tables.size() != plan.tables.size()) __builtin_trap();
    for (std::size_t t = 0; t < plan.tables.size(); ++t) {
      const auto& a = plan.tables[t];
      const auto& b = again.tables[t];
      if (a.kind != b.kind || a.host_memory != b.host_memory || a.shards.size() != b.shards.size()) __builtin_trap();
      for (std::size_t k = 0; k < a.shards.size(); ++k) {
        if (a.shards[k].rank != b.shards[k].rank || a.shards[k].rows != b.shards[k].rows) __builtin_trap();
      }
    }
  } catch (const zx::InputError&) {
  }
  return 0;
}
