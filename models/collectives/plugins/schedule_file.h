// File: models/collectives/plugins/schedule_file.h
//
// Declarative collective schedules: a JSON file that spells out, step by
// step, which rank sends which chunks to which rank, and which steps wait for
// which (format: docs/collective_schedules.md). It is the third way to add
// an algorithm, after C++ (registry.h) and shared-library plug-ins
// (plugin_api.h), and needs no compiler at all: `zionsim ... --schedule
// my.schedule.json` registers the schedule under its name.
//
// A schedule is written for one collective kind and one group size, in group
// indices (0..n-1), with logical chunks that carry relative integer weights.
// Lowering scales the weights to the request: each chunk gets its weight's
// share, on element boundaries, of the part of the data it belongs to (the
// whole buffer for all-reduce, broadcast and reduce; its rank's block for
// reduce-scatter and all-gather; its (origin, destination) block for
// all-to-all), so one file serves every message size and data type.
//
// Before a schedule is registered it is checked twice: the reader reports
// every structural problem at its JSON pointer (unknown keys, a dangling
// `after`, a chunk out of range, ...), and then the plan checker
// (testing/plan_checker.h) replays the lowered schedule on a sample request
// and refuses it unless every rank ends with exactly the data the collective
// defines, naming the rank and chunk that come out wrong.

#ifndef ZIONSIM_MODELS_COLLECTIVES_PLUGINS_SCHEDULE_FILE_H_
#define ZIONSIM_MODELS_COLLECTIVES_PLUGINS_SCHEDULE_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collectives/collective_algorithm.h"
#include "models/collectives/plan.h"
#include "models/collectives/registry.h"

namespace zx::models::collectives {

/// The schema version this zionsim reads.
inline constexpr int kScheduleSchemaVersion = 1;

/// One logical chunk: its relative share of its part, and where it starts and
/// ends as plan.h's table defines for the kind.
struct ScheduleChunk {
  std::int64_t weight = 1;
  std::optional<int> origin;
  std::optional<int> destination;
};

struct ScheduleTransfer {
  int src = 0;
  int dst = 0;
  TransferOp op = TransferOp::kCopy;
  std::vector<ChunkRange> chunks;
};

struct ScheduleStep {
  std::vector<std::uint32_t> after;  ///< earlier steps
  std::vector<ScheduleTransfer> transfers;
};

/// A parsed schedule file.
struct Schedule {
  std::string source;  ///< the file it came from, for messages
  std::string name;    ///< registry name
  std::string description;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group_size = 0;
  int root = 0;  ///< broadcast and reduce: the rank the chunks start or end at
  std::vector<ScheduleChunk> chunks;
  std::vector<ScheduleStep> steps;
};

/// Parses a schedule from `text` that came from `source`, with every
/// structural problem reported as "<source>: <JSON pointer>: <message>" in
/// one zx::InputError. Does not run the plan checker (see validate_schedule).
Schedule parse_schedule(std::string_view text, std::string source);
/// Reads and parses a schedule file.
Schedule load_schedule_file(const std::string& path);

/// Lowers the schedule for one sample request in which every chunk is at
/// least one byte, and proves the plan with the plan checker. Throws
/// zx::InputError with one line per problem, e.g.
///   a.json: schedule 'x' (all_reduce on 4 ranks) fails its check: rank 3 ends with chunk 0 =
///   {3}, expected {0,1,2,3}
/// (the sets are the ranks whose contributions the value holds). Problems the
/// checker places at a step carry the step's JSON pointer.
void validate_schedule(const Schedule& schedule);

/// The request validate_schedule() checks with: group 0..n-1, fp8, the root
/// of the schedule, and a size that gives every chunk at least one byte.
CollectiveRequest sample_request(const Schedule& schedule);

/// A CollectiveAlgorithm that replays a schedule, scaled to the request.
class ScheduleAlgorithm : public CollectiveAlgorithm {
 public:
  explicit ScheduleAlgorithm(std::shared_ptr<const Schedule> schedule);
  std::string_view name() const override { return schedule_->name; }
  bool supports(CollectiveKind kind) const override { return kind == schedule_->kind; }
  /// Throws zx::InputError if the group size, or the root of broadcast and
  /// reduce, differs from the schedule's.
  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override;

 private:
  std::shared_ptr<const Schedule> schedule_;
};

/// Loads, parses and validates the schedule file at `path` and adds it to
/// `registry` under its name (description followed by " [schedule <file
/// name>]"); it takes no options. Returns the name. Throws zx::InputError for
/// a bad file, a schedule that fails its check, or a name already taken.
std::string register_schedule_file(const std::string& path, CollectiveRegistry& registry);

}  // namespace zx::models::collectives

#endif  // ZIONSIM_MODELS_COLLECTIVES_PLUGINS_SCHEDULE_FILE_H_
