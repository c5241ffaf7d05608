// File: models/collectives/testing/plan_checker.h
//
// A symbolic checker for collective plans (STYLE.md 10.12). It proves,
// without simulating time, that a plan does what its collective defines.
// Every algorithm's tests use it, and so does zionsim at run time: a user's
// schedule file (plugins/schedule_file.h) is checked with it before it may
// run, which is why this is a normal library despite living in testing/.
// The checks:
//
//   1. Structure: steps follow only earlier steps; transfers join distinct
//      group members; chunk ranges are in bounds; each transfer's size is the
//      sum of its chunks; each step's local work is exactly the bytes its
//      reducing transfers deliver to each rank.
//   2. The chunk table encodes the request: every chunk has the origin and
//      destination pattern of the kind (plan.h), and chunk sizes add up to
//      the buffer, to each rank's block, or to each all-to-all pair.
//   3. Replay: every (rank, chunk) holds a set of contributing ranks. At the
//      start a rank holds its own contribution to every chunk without an
//      origin, and the origin holds the chunks it originates. Steps run in
//      dependency order; a transfer sends the sender's set (which must be
//      non-empty); a copy replaces the receiver's set, a reduction adds to it
//      and fails if any contribution would be counted twice. Unordered steps
//      that touch the same (rank, chunk) where one of them writes are a race
//      (the result would depend on timing), as is one step that both reads
//      and writes a (rank, chunk).
//   4. The end: every destination of every non-empty chunk holds exactly
//      the expected set: all ranks for reduced chunks, {origin} otherwise.
//
// The NVLink switch (kNvlinkSwitch, plan.h) is one more holder in the
// replay, starting with nothing: transfers to it reduce or copy into its
// sets as into a rank's (its reductions are no rank's local work), and
// transfers from it are copies. It sends and receives no rank's bytes.
//
// The report also counts bytes sent and received per rank, steps, transfers,
// and the critical path (the longest chain of dependent steps).

#ifndef ZIONSIM_MODELS_COLLECTIVES_TESTING_PLAN_CHECKER_H_
#define ZIONSIM_MODELS_COLLECTIVES_TESTING_PLAN_CHECKER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "models/collectives/plan.h"

namespace zx::models::collectives::testing {

struct PlanReport {
  /// Every problem found (at most the first 20), empty when the plan is right.
  std::vector<std::string> errors;
  bool ok() const { return errors.empty(); }
  /// "ok", or the errors one per line: for test failure messages.
  std::string summary() const;

  std::vector<sim::Bytes> bytes_sent;      ///< per group index
  std::vector<sim::Bytes> bytes_received;  ///< per group index
  sim::Bytes total_bytes;
  sim::Bytes total_reduce_bytes;  ///< sum of all local work
  std::size_t num_steps = 0;
  std::size_t num_transfers = 0;
  /// Steps on the longest dependency chain (0 for an empty plan).
  std::size_t critical_path_steps = 0;
  /// Whether check 3 and 4 (the replay) ran: false when checks 1-2 failed
  /// or the replay would need more memory than allowed.
  bool replayed = false;
};

/// Every check. The replay keeps a set of ranks per (rank, chunk) and a set
/// of steps per step: replay_bytes() of memory.
PlanReport check_plan(const CollectivePlan& plan, const CollectiveRequest& request);

/// As check_plan, but the replay runs only when replay_bytes() is at most
/// `max_replay_bytes`; otherwise checks 1 and 2 alone (linear in the plan's
/// size), and the report says replayed = false.
PlanReport check_plan(const CollectivePlan& plan, const CollectiveRequest& request,
                      std::size_t max_replay_bytes);

/// The memory the replay of `plan` needs, bytes.
std::size_t replay_bytes(const CollectivePlan& plan);

}  // namespace zx::models::collectives::testing

#endif  // ZIONSIM_MODELS_COLLECTIVES_TESTING_PLAN_CHECKER_H_
