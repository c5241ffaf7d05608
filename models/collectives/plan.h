// File: models/collectives/plan.h
//
// The vocabulary of collective communication: what is asked for
// (CollectiveRequest) and how it is carried out (CollectivePlan), a DAG of
// point-to-point transfers that one executor runs on any network model
// (STYLE.md 10.5). Collective algorithms are pure functions from a request to
// a plan; they never touch the simulator.
//
// The plan is a DAG of steps.
//
//   * A Step starts when every step in `after` has finished (indices of
//     earlier steps only, so the vector order is a topological order).
//   * It then starts all its transfers at once, as concurrent flows.
//   * When all of them are delivered it charges its `local_work`: each listed
//     rank reduces `reduce_bytes` (time = bytes / reduction bandwidth, charged
//     by the executor), and then the step is done.
//
// A ring all-reduce with C chunks on K channels is K * C independent chains of
// 2(n-1) steps each (one step per ring hop, all n ranks sending at once),
// chained also across chunks of one channel so a channel works its chunks in
// order like NCCL's pipeline. Trees give one step per (chunk, node), so a node
// forwards as soon as its own children are done. Steps need not form a chain.
//
// Semantic content, for checking. The logical data of the collective is cut
// into `chunks`. Each Chunk says which rank holds it at the start (`origin`;
// nullopt: every rank holds its own contribution to be reduced) and which
// rank must hold it at the end (`destination`; nullopt: every rank). Every
// transfer names the chunks it carries (ranges of chunk indices) and whether
// the receiver copies them (overwrites its value) or reduces them into its
// own value. Its `size` is the sum of those chunks' sizes. The symbolic
// checker in testing/plan_checker.h replays a plan on sets of contributions
// and proves that each destination ends with exactly the right value.
//
//   kind            origin      destination   logical buffer (S = bytes_per_rank)
//   all-reduce      every rank  every rank    the S-byte buffer
//   reduce          every rank  root          the S-byte buffer
//   reduce-scatter  every rank  block owner   the S-byte input, n blocks (block_sizes)
//   all-gather      block owner every rank    the S-byte output, n blocks (block_sizes)
//   broadcast       root        every rank    the S-byte buffer
//   all-to-all      source      destination   n x n pair blocks (pair_sizes)
//
// Ranks in a plan are group indices (0..n-1, positions in request.ranks), not
// global GPU ranks; the executor maps them through request.ranks.
//
// Sources: NCCL (ring and double binary tree, chunked pipelines, channels);
// R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of collective
// communication operations in MPICH", IJHPCA 19(1), 2005 (ring, recursive
// halving/doubling, pairwise exchange); the plan-as-data idea from Chakra /
// ASTRA-sim custom collectives.

#ifndef ZIONSIM_MODELS_COLLECTIVES_PLAN_H_
#define ZIONSIM_MODELS_COLLECTIVES_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "models/collectives/kinds.h"
#include "sim/units.h"

namespace zx::models::collectives {

/// One collective call on a group of GPUs.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  /// Global GPU ranks of the group, in group order; plans index this vector.
  std::vector<int> ranks;
  /// The per-rank buffer as nccl-tests counts it. all-reduce, broadcast,
  /// reduce: the buffer; reduce-scatter: the full input of each rank;
  /// all-gather: the full output of each rank; all-to-all: the total each
  /// rank sends (to all ranks, itself included).
  sim::Bytes bytes_per_rank;
  /// Optional all-to-all-v: an n x n matrix of bytes [src][dst]. When set,
  /// bytes_per_rank is ignored for all-to-all.
  std::vector<std::vector<std::int64_t>> all_to_all_v_bytes;
  DataType dtype = DataType::kFp32;
  /// The root of broadcast and reduce, as a group index.
  int root = 0;
};

/// Throws zx::InputError unless the request is well formed: a non-empty
/// group of distinct non-negative ranks, bytes_per_rank >= 0, the root a
/// group index, an all-to-all-v matrix n x n of non-negative entries and
/// only for all-to-all.
void validate(const CollectiveRequest& request);

/// Splits `total` into `parts` pieces on element boundaries, as evenly as
/// possible (the first pieces one element larger); a trailing partial element
/// goes to the last piece. parts >= 1.
std::vector<sim::Bytes> split_bytes(sim::Bytes total, int parts, int element_bytes);

/// Reduce-scatter / all-gather: the bytes of each rank's block of the
/// logical buffer (split_bytes(bytes_per_rank, n, element size)).
std::vector<sim::Bytes> block_sizes(const CollectiveRequest& request);

/// All-to-all: bytes from src to dst: the v-matrix entry, or else
/// split_bytes(bytes_per_rank, n, element size)[dst].
sim::Bytes pair_size(const CollectiveRequest& request, int src, int dst);

/// Indices [begin, end) of the plan's chunks.
struct ChunkRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  friend bool operator==(const ChunkRange&, const ChunkRange&) = default;
};

/// What the receiver does with the chunks that arrive.
enum class TransferOp {
  kCopy,    ///< overwrite its value of the chunk
  kReduce,  ///< reduce into its value of the chunk (and charge local work)
};
std::string_view to_string(TransferOp op);  ///< "copy", "reduce"

/// A transfer's endpoint that is not a group member: the NVLink switch of
/// the group's NVLink domain, reducing in the network (NVLink SHARP). A
/// transfer to it with op kReduce adds the sender's value of the chunks into
/// the switch's (multimem reduce: no GPU does the work); one from it copies
/// the switch's value to the receiver (a multicast is one such transfer per
/// receiver). The switch starts with no value of any chunk. Only plans for
/// a group inside one NVLink domain whose switch reduces may use it
/// (TopologyView::switch_reduces); the executor sends these transfers to
/// and from the domain's switch node.
inline constexpr int kNvlinkSwitch = -1;

/// One point-to-point transfer: `size` bytes from group index src to dst
/// (either may be kNvlinkSwitch, not both).
struct Transfer {
  int src = 0;
  int dst = 0;
  sim::Bytes size;
  TransferOp op = TransferOp::kCopy;
  /// The chunks carried; their sizes add up to `size`.
  std::vector<ChunkRange> chunks;
  /// A group member the bytes pass through on their way, without it
  /// holding them: NCCL's PXN (NVIDIA/nccl, src/graph/search.cc,
  /// ncclTopoGetNetDev, since 2.12), where a send to a GPU of another
  /// server first crosses NVLink to the sender's server-mate on the
  /// receiver's rail, whose NIC then carries it. The executor routes the
  /// flow src -> relay -> dst as one flow over both paths (the proxy
  /// pipelines the two hops). A member of src's server other than src and
  /// dst; never the NVLink switch. Nothing changes for the plan's
  /// semantics: the relay's values are untouched.
  std::optional<int> relay;
};

/// Reduction work of one rank after a step's transfers arrive.
struct LocalWork {
  int rank = 0;
  sim::Bytes reduce_bytes;
};

/// Transfers that proceed concurrently once every step in `after` finished;
/// then `local_work` is charged and the step is done.
struct Step {
  std::vector<Transfer> transfers;
  std::vector<std::uint32_t> after;   ///< indices of earlier steps
  std::vector<LocalWork> local_work;  ///< sorted by rank, one entry per rank
  /// The step's transfers are the issue_slot-th operations their sender
  /// posts, counting from 0 (0 also where a plan does not say): the
  /// executor starts them no sooner than issue_slot x the communication
  /// library's issue gap (communication.peer_gap_ns) after the plan's
  /// first steps started, as a proxy thread posts one operation after
  /// another.
  std::uint32_t issue_slot = 0;
};

/// One piece of the logical data (see the table at the top of this file).
struct Chunk {
  sim::Bytes size;
  std::optional<int> origin;       ///< nullopt: every rank contributes
  std::optional<int> destination;  ///< nullopt: every rank must end with it
};

/// The most steps that come directly after one step of a generated plan.
inline constexpr std::size_t kMaxGeneratedDependents = 16;

/// The steps of a plan too large to hold, made one at a time when asked:
/// a ring all-reduce of 4,096 GPUs is 33.5 M steps of one transfer each,
/// 12.6 GiB held, where the rule that makes step s is a few integers per
/// GPU. Step s is exactly the step a held plan would have at index s (the
/// same transfers in the same order, `after` list, local work and issue
/// slot), so the executor runs a generated plan to the same bits as the
/// held one, keeping only counters per step. Generated steps never use the
/// NVLink switch (kNvlinkSwitch). Implementations are immutable after
/// construction and may be shared between copies of a plan.
class StepGenerator {
 public:
  virtual ~StepGenerator() = default;
  virtual std::uint32_t step_count() const = 0;
  /// Step s into `out`, which is overwritten (its vectors' capacity is
  /// reused: generating a step allocates nothing once warm).
  virtual void step(std::uint32_t s, Step& out) const = 0;
  /// step(s).after.size(), without making the step.
  virtual std::uint32_t after_count(std::uint32_t s) const = 0;
  /// The steps whose `after` lists s, ascending, into `out`; returns how
  /// many (at most kMaxGeneratedDependents).
  virtual std::size_t dependents(std::uint32_t s,
                                 std::span<std::uint32_t, kMaxGeneratedDependents> out) const = 0;
  /// The steps that come after none, ascending.
  virtual std::vector<std::uint32_t> roots() const = 0;
  /// Whether some step moves or reduces at least one byte.
  virtual bool moves_bytes() const = 0;

  /// Step s without its transfers (its after list, local work and issue
  /// slot) into `out`, whose transfers are left empty. By default made
  /// whole and the transfers dropped.
  virtual void step_header(std::uint32_t s, Step& out) const;
  /// Calls visit(x) for each of step s's transfers in order, each made in
  /// turn and not kept, so that a step of millions of transfers (a direct
  /// all-to-all's one step on thousands of GPUs) is never held whole. The
  /// reference is valid during the call. By default the step is made whole.
  virtual void for_each_transfer(std::uint32_t s, const std::function<void(const Transfer&)>& visit) const;
  /// The plan's chunks, for a plan that does not hold them (CollectivePlan::
  /// chunks empty where the generator makes them: an all-to-all's n x n);
  /// by default none (the plan holds them).
  virtual std::vector<Chunk> make_chunks() const { return {}; }
};

/// The lowered form of one collective call: a DAG of steps, held in
/// `steps` or, for a generated plan, made by `generator` (and `steps` is
/// empty). A generated plan holds its `chunks` or leaves them to
/// StepGenerator::make_chunks (then `chunks` is empty).
struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group_size = 0;
  std::vector<Chunk> chunks;
  std::vector<Step> steps;
  std::shared_ptr<const StepGenerator> generator;
};

/// How many steps the plan has, held or generated.
std::uint64_t step_count(const CollectivePlan& plan);

/// The plan with every step and chunk held: a generated plan's steps (and
/// chunks, where its generator makes them) made and kept, for checking and
/// printing plans small enough to hold; a held plan unchanged.
CollectivePlan materialize(CollectivePlan plan);

/// Sum of all transfer sizes (a generated plan's steps are made one at a
/// time, not kept).
sim::Bytes total_bytes(const CollectivePlan& plan);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_PLAN_H_
