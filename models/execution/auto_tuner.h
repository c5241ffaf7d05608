// File: models/execution/auto_tuner.h
//
// The `auto` algorithm's choice, apart from the backend that runs it: for one
// distinct collective call, every candidate algorithm is simulated alone on
// an idle copy of the network (a trial), and the fastest wins. The backend
// hands the tuner a way to start a trial (a fresh simulator with the call
// started on it); the tuner races the trials and keeps, per distinct call,
// what it chose and why (AutoChoice). NCCL's cost-model picks are kept in
// the same form (ChoiceLog), so reports print both alike.
//
// The race. Every live trial is advanced to the same horizon, which doubles
// (from 1 us) until one of them has finished; the earliest finish is then
// the best time, and a trial not finished by it has lost (a trial finishing
// exactly then still runs to it, for the tie rule). So no trial runs much
// past twice the winner's time. With AutoOptions::exhaustive every trial
// runs to its end instead, one at a time. Fastest wins; a tie goes to the
// candidate listed first. A candidate whose trial raises an input error is
// refused with its message; when none can run the call, that is an input
// error listing each one's reason.

#ifndef ZIONSIM_MODELS_EXECUTION_AUTO_TUNER_H_
#define ZIONSIM_MODELS_EXECUTION_AUTO_TUNER_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/collectives/plan.h"
#include "sim/simulator.h"

namespace zx::models {

/// What "auto" chose for one distinct call, and why.
struct AutoChoice {
  collectives::CollectiveKind kind = collectives::CollectiveKind::kAllReduce;
  int ranks = 0;
  sim::Bytes bytes_per_rank;  ///< for an all-to-all-v, the most any rank sends
  collectives::DataType dtype = collectives::DataType::kFp32;
  std::string chosen;
  struct Candidate {
    std::string algorithm;
    /// Its time alone on the idle network; nullopt when it cannot run the
    /// call (`refused` says why) or its trial was stopped (`slower_than`).
    std::optional<sim::Duration> time;
    std::string refused;
    /// Set when its trial was stopped there, not finished: the best time
    /// so far, which it had not finished by (so it could not be chosen).
    std::optional<sim::Duration> slower_than;
  };
  std::vector<Candidate> candidates;  ///< in candidate order
};

/// A call's identity: everything a plan depends on (kind, bytes, type,
/// root, ranks, the all-to-all-v matrix).
std::string call_key(const collectives::CollectiveRequest& request);

/// A choice for the call before anything is chosen: its kind, ranks, size
/// (for an all-to-all-v the most any rank sends) and type.
AutoChoice unchosen(const collectives::CollectiveRequest& request);

/// Choices, one per distinct call, in the order the calls first came.
class ChoiceLog {
 public:
  /// The choice made for `key` before, or nullptr.
  const AutoChoice* find(const std::string& key) const;
  /// Keeps a new choice for `key` (one not yet kept) and returns it.
  const AutoChoice& add(std::string key, AutoChoice choice);
  const std::vector<AutoChoice>& choices() const { return choices_; }

 private:
  std::vector<AutoChoice> choices_;
  std::map<std::string, std::size_t> index_;
};

class AutoTuner {
 public:
  /// Starts `algorithm` on the call in `sim` (a fresh simulator), calling
  /// `finished` when it ends; returns what must stay alive while the trial
  /// runs (its network and backend). Throws zx::InputError when the
  /// algorithm cannot run the call.
  using StartTrial = std::function<std::shared_ptr<void>(sim::Simulator& sim, const std::string& algorithm,
                                                         std::function<void()> finished)>;

  /// The algorithm for `request`: the choice made for it before, else a new
  /// one among `candidates` raced as the header says (`listed`: whether the
  /// user named them; then a candidate that does not `supports` the kind is
  /// listed as refused instead of being left out). Throws zx::InputError
  /// when no candidate can run the call.
  const std::string& choose(const collectives::CollectiveRequest& request, const std::vector<std::string>& candidates,
                            bool listed, bool exhaustive,
                            const std::function<bool(const std::string&)>& supports, const StartTrial& start);

  const std::vector<AutoChoice>& choices() const { return log_.choices(); }

 private:
  ChoiceLog log_;
};

}  // namespace zx::models

#endif  // ZIONSIM_MODELS_EXECUTION_AUTO_TUNER_H_
