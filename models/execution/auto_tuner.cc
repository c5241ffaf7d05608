// File: models/execution/auto_tuner.cc
//
// The `auto` algorithm's race of trials (see auto_tuner.h).

#include "models/execution/auto_tuner.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "base/check.h"
#include "base/error.h"

namespace zx::models {

std::string call_key(const collectives::CollectiveRequest& request) {
  std::string key = fmt::format("{}|{}|{}|{}|", static_cast<int>(request.kind), request.bytes_per_rank.count(),
                                static_cast<int>(request.dtype), request.root);
  for (int r : request.ranks) key += fmt::format("{},", r);
  key += '|';
  for (const std::vector<std::int64_t>& row : request.all_to_all_v_bytes) {
    for (std::int64_t b : row) key += fmt::format("{},", b);
    key += ';';
  }
  return key;
}

AutoChoice unchosen(const collectives::CollectiveRequest& request) {
  AutoChoice choice;
  choice.kind = request.kind;
  choice.ranks = static_cast<int>(request.ranks.size());
  choice.bytes_per_rank = request.bytes_per_rank;
  if (!request.all_to_all_v_bytes.empty()) {
    std::int64_t most = 0;
    for (const std::vector<std::int64_t>& row : request.all_to_all_v_bytes) {
      std::int64_t sum = 0;
      for (std::int64_t b : row) sum += b;
      most = std::max(most, sum);
    }
    choice.bytes_per_rank = sim::Bytes(most);
  }
  choice.dtype = request.dtype;
  return choice;
}

const AutoChoice* ChoiceLog::find(const std::string& key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? nullptr : &choices_[it->second];
}

const AutoChoice& ChoiceLog::add(std::string key, AutoChoice choice) {
  ZX_CHECK(!index_.contains(key), "a call's choice is kept once");
  index_.emplace(std::move(key), choices_.size());
  choices_.push_back(std::move(choice));
  return choices_.back();
}

const std::string& AutoTuner::choose(const collectives::CollectiveRequest& request,
                                     const std::vector<std::string>& candidates, bool listed, bool exhaustive,
                                     const std::function<bool(const std::string&)>& supports,
                                     const StartTrial& start) {
  std::string key = call_key(request);
  if (const AutoChoice* known = log_.find(key)) return known->chosen;

  const std::string kind(collectives::to_string(request.kind));
  AutoChoice choice = unchosen(request);
  for (const std::string& name : candidates) {
    if (supports(name)) {
      choice.candidates.push_back({name, std::nullopt, "", std::nullopt});
    } else if (listed) {
      // Unlisted algorithms of other kinds are not candidates at all.
      choice.candidates.push_back({name, std::nullopt, fmt::format("does not run {}", kind), std::nullopt});
    }
  }
  struct Trial {
    std::size_t index;
    sim::Simulator sim;
    std::shared_ptr<void> keep;  // the trial's network and backend
    std::optional<sim::TimePoint> finished;
  };
  std::vector<std::unique_ptr<Trial>> trials;
  const auto refuse = [&](std::size_t i, const InputError& e) {
    choice.candidates[i].refused = e.diagnostics().empty() ? std::string(e.what()) : e.diagnostics().front().message;
  };
  // Runs trial t up to `until`; false when it threw an input error (then
  // the candidate is refused and the trial is of no further use).
  const auto advance = [&](Trial& t, sim::TimePoint until) {
    try {
      t.sim.run(until);
      ZX_CHECK(t.finished || !until.is_max(), "an auto trial run to its end finishes the call");
      return true;
    } catch (const InputError& e) {
      refuse(t.index, e);
      return false;
    }
  };
  for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
    if (!choice.candidates[i].refused.empty()) continue;
    auto t = std::make_unique<Trial>();
    t->index = i;
    try {
      Trial* raw = t.get();
      t->keep = start(t->sim, choice.candidates[i].algorithm, [raw] { raw->finished = raw->sim.now(); });
    } catch (const InputError& e) {
      refuse(i, e);
      continue;
    }
    if (exhaustive) {
      // Timed to its end now, and its simulation freed before the next
      // candidate's is built: one trial in memory at a time.
      if (advance(*t, sim::TimePoint::max())) choice.candidates[i].time = t->finished->since_start();
      continue;
    }
    trials.push_back(std::move(t));
  }
  const auto any_finished = [&] {
    return std::any_of(trials.begin(), trials.end(), [](const auto& t) { return t->finished.has_value(); });
  };
  for (sim::Duration horizon = sim::Duration::us(1); !trials.empty() && !any_finished();
       horizon = horizon < sim::Duration::infinite() / 4 ? horizon * 2 : sim::Duration::infinite()) {
    std::erase_if(trials, [&](const auto& t) { return !advance(*t, sim::TimePoint::zero() + horizon); });
    // Every live trial keeps events pending until it finishes.
    for (const auto& t : trials) ZX_CHECK(t->finished || t->sim.pending() > 0, "an auto trial finishes the call");
  }
  std::optional<sim::TimePoint> first;
  for (const auto& t : trials) {
    if (t->finished && (!first || *t->finished < *first)) first = t->finished;
  }
  for (const auto& t : trials) {
    AutoChoice::Candidate& c = choice.candidates[t->index];
    if (!t->finished && advance(*t, *first) && !t->finished) c.slower_than = first->since_start();
    if (t->finished) c.time = t->finished->since_start();
  }
  trials.clear();
  // Fastest wins; a tie goes to the one listed first.
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < choice.candidates.size(); ++i) {
    const AutoChoice::Candidate& c = choice.candidates[i];
    if (c.time && (!best || *c.time < *choice.candidates[*best].time)) best = i;
  }
  if (!best) {
    std::string reasons;
    for (const AutoChoice::Candidate& c : choice.candidates) {
      reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", c.algorithm, c.refused);
    }
    throw InputError(Diagnostic{
        "collective", "",
        fmt::format("auto: no candidate runs this {} of {} ranks{}{}", kind, choice.ranks,
                    reasons.empty() ? "" : " (", reasons.empty() ? "" : reasons + ")")});
  }
  choice.chosen = choice.candidates[*best].algorithm;
  return log_.add(std::move(key), std::move(choice)).chosen;
}

}  // namespace zx::models
