// File: experiments/memory_estimate.h
//
// How much memory a what-if simulation will take, and how much the machine
// has, so that a size too large for it is refused with the numbers before it
// starts instead of being killed by the kernel (or failing with bad_alloc)
// minutes in.
//
// The estimate is empirical. A DLRM iteration's all-to-alls start a few flows
// per ordered pair of GPUs, and the network model keeps the flows in flight
// (FlowNetwork::recycle_flow_ids), so peak memory grows with the square of
// the GPUs: model A, `zionsim whatif --model dlrm-a --nodes N`, peaks at 314
// MiB on 512 GPUs, 1,208 MiB on 1,024, 4,510 MiB on 2,048 and 17.7 GiB on
// 4,096 (README, "How long a what-if takes"): 1,130 to 1,260 bytes per pair.
// `--fidelity analytical` takes about half (158 and 553 MiB at 512 and 1,024
// GPUs). `--fidelity linkshare` keeps no flows, and the direct all-to-all's
// plan is generated (models/collectives/plan.h, StepGenerator), so what grows
// with the pairs is the iteration's all-to-all-v byte matrices: 111 MiB at
// 1,024 GPUs, 312 at 2,048, 1,002 at 4,096 and 3,795 at 8,192 (1,024
// ZionEX nodes), about 60 bytes a pair.
//
// A run that writes a timeline or a trace (`--timeline`, `--emit-trace`)
// keeps every flow's record to the end, about 380 bytes a flow whatever the
// fidelity, and model A's iteration starts about 3.1 flows per pair of GPUs
// plus 2,140 per GPU (the pipelined all-reduce's slices): it peaks at 269
// MiB on 256 GPUs, 682 on 512 and 1,977 on 1,024 (`--fidelity analytical`
// 654 on 512), 1.6 to 3 times a run without.

#ifndef ZIONSIM_EXPERIMENTS_MEMORY_ESTIMATE_H_
#define ZIONSIM_EXPERIMENTS_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zx::experiments {

/// What a network fidelity keeps per pair of GPUs, for the estimate.
enum class NetworkMemory {
  kFlows,       ///< flow, coalesced: every flow in flight, its route and max-min state
  kAnalytical,  ///< analytical: the flows in flight, no max-min state (about half)
  /// linkshare: no flow at all (a step is a bundle of per-link parts, and
  /// the all-to-all's plan is generated, not held): what is left per pair
  /// is the iteration's all-to-all-v byte matrices, in the graph and in the
  /// collectives running.
  kLinkShare,
};

/// The NetworkMemory of a fidelity's name ("flow", "coalesced",
/// "analytical", "linkshare"; another name is taken for flow's).
NetworkMemory network_memory(std::string_view fidelity);

/// "about 1.3 KB per pair of GPUs for the all-to-alls' flows in flight", and
/// the like: what the estimate counts, for messages.
std::string per_pair_text(NetworkMemory memory);

/// Upper estimate of the peak memory, in bytes, of simulating one iteration
/// on `gpus` GPUs (see the header comment) at a fidelity that keeps
/// `memory`; `keep_flows`: every flow's record is kept to the end (a
/// timeline or a trace is written).
std::int64_t estimated_simulation_bytes(std::int64_t gpus, NetworkMemory memory, bool keep_flows = false);

/// Bytes as GiB for messages: "1.3 GiB", "81 GiB".
std::string gib_text(std::int64_t bytes);

/// `MemAvailable` of /proc/meminfo text, in bytes; nullopt when absent or
/// malformed.
std::optional<std::int64_t> parse_mem_available(std::string_view meminfo);

/// A cgroup v2 limit: `memory.max` less `memory.current`, in bytes; nullopt
/// for "max" (no limit) or malformed text.
std::optional<std::int64_t> parse_cgroup_headroom(std::string_view max, std::string_view current);

/// What this process may still allocate: the smaller of the kernel's
/// MemAvailable and the cgroup's headroom, whichever are known; nullopt when
/// neither is (then nothing is checked).
std::optional<std::int64_t> available_memory_bytes();

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_MEMORY_ESTIMATE_H_
