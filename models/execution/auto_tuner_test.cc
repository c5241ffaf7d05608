// Tests of the `auto` tuner's race on trials whose times are known: the
// fastest wins, a tie goes to the candidate listed first, a trial finishing
// exactly at the best time is timed, slower ones stop there (slower_than),
// refusals keep their reasons, exhaustive times every candidate, a call is
// raced once, and a call no candidate runs is an input error naming each
// reason.

#include "models/execution/auto_tuner.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "base/error.h"

namespace zx::models {
namespace {

using collectives::CollectiveKind;
using collectives::CollectiveRequest;

CollectiveRequest request(std::int64_t bytes = 1024) {
  CollectiveRequest r;
  r.kind = CollectiveKind::kAllReduce;
  r.ranks = {0, 1};
  r.bytes_per_rank = sim::Bytes(bytes);
  return r;
}

// Trials that finish after a set time; a name with no time refuses the call.
struct FakeTrials {
  std::map<std::string, sim::Duration> times;
  std::vector<std::string> started;

  AutoTuner::StartTrial start() {
    return [this](sim::Simulator& s, const std::string& name, std::function<void()> finished) {
      started.push_back(name);
      const auto it = times.find(name);
      if (it == times.end()) throw InputError(Diagnostic{"collective", "", name + " cannot run it"});
      s.schedule_after(it->second, [done = std::move(finished)] { done(); });
      return std::shared_ptr<void>();
    };
  }
};

const AutoChoice::Candidate& candidate(const AutoChoice& c, const std::string& name) {
  for (const AutoChoice::Candidate& k : c.candidates) {
    if (k.algorithm == name) return k;
  }
  throw std::logic_error("no candidate " + name);
}

const auto kAll = [](const std::string&) { return true; };

TEST(AutoTunerTest, FastestWinsTiesGoFirstSlowerStopAtTheBest) {
  FakeTrials fake;
  fake.times = {{"slow", sim::Duration::us(5)}, {"fast", sim::Duration::us(3)}, {"also", sim::Duration::us(3)},
                {"glacial", sim::Duration::ms(100)}};
  AutoTuner tuner;
  const std::string& chosen =
      tuner.choose(request(), {"slow", "fast", "also", "glacial", "broken"}, true, false, kAll, fake.start());
  EXPECT_EQ(chosen, "fast");
  ASSERT_EQ(tuner.choices().size(), 1u);
  const AutoChoice& c = tuner.choices().front();
  EXPECT_EQ(c.chosen, "fast");
  EXPECT_EQ(c.ranks, 2);
  EXPECT_EQ(c.bytes_per_rank.count(), 1024);
  EXPECT_EQ(candidate(c, "fast").time, sim::Duration::us(3));
  EXPECT_EQ(candidate(c, "also").time, sim::Duration::us(3));  // finished at the best time: timed
  for (const char* loser : {"slow", "glacial"}) {
    EXPECT_FALSE(candidate(c, loser).time.has_value()) << loser;
    EXPECT_EQ(candidate(c, loser).slower_than, sim::Duration::us(3)) << loser;
  }
  EXPECT_EQ(candidate(c, "broken").refused, "broken cannot run it");
  // The same call again: the choice kept, no trial run.
  fake.started.clear();
  EXPECT_EQ(tuner.choose(request(), {"slow", "fast"}, true, false, kAll, fake.start()), "fast");
  EXPECT_TRUE(fake.started.empty());
  // Another call is raced anew.
  EXPECT_EQ(tuner.choose(request(2048), {"slow", "also"}, true, false, kAll, fake.start()), "also");
  EXPECT_EQ(tuner.choices().size(), 2u);
}

TEST(AutoTunerTest, ExhaustiveTimesEveryCandidate) {
  FakeTrials fake;
  fake.times = {{"slow", sim::Duration::us(5)}, {"fast", sim::Duration::us(3)}};
  AutoTuner tuner;
  EXPECT_EQ(tuner.choose(request(), {"slow", "fast"}, true, true, kAll, fake.start()), "fast");
  const AutoChoice& c = tuner.choices().front();
  EXPECT_EQ(candidate(c, "slow").time, sim::Duration::us(5));
  EXPECT_FALSE(candidate(c, "slow").slower_than.has_value());
}

TEST(AutoTunerTest, UnsupportedCandidatesAreRefusedOnlyWhenListed) {
  FakeTrials fake;
  fake.times = {{"ring", sim::Duration::us(4)}, {"direct", sim::Duration::us(1)}};
  const auto no_direct = [](const std::string& name) { return name != "direct"; };
  AutoTuner listed;
  EXPECT_EQ(listed.choose(request(), {"direct", "ring"}, true, false, no_direct, fake.start()), "ring");
  EXPECT_EQ(candidate(listed.choices().front(), "direct").refused, "does not run all_reduce");
  AutoTuner defaults;
  EXPECT_EQ(defaults.choose(request(), {"direct", "ring"}, false, false, no_direct, fake.start()), "ring");
  EXPECT_EQ(defaults.choices().front().candidates.size(), 1u);
}

TEST(AutoTunerTest, NoCandidateIsAnInputErrorWithEachReason) {
  FakeTrials fake;
  AutoTuner tuner;
  try {
    tuner.choose(request(), {"a", "b"}, true, false, kAll, fake.start());
    FAIL() << "expected an input error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().front().message,
              "auto: no candidate runs this all_reduce of 2 ranks (a: a cannot run it; b: b cannot run it)");
  }
  EXPECT_TRUE(tuner.choices().empty());
}

TEST(AutoTunerTest, ChoiceLogKeepsCallsInFirstComeOrder) {
  ChoiceLog log;
  CollectiveRequest a = request(1), b = request(2);
  b.all_to_all_v_bytes = {};
  EXPECT_NE(call_key(a), call_key(b));
  AutoChoice first = unchosen(a);
  first.chosen = "ring";
  log.add(call_key(a), first);
  log.add(call_key(b), unchosen(b));
  ASSERT_NE(log.find(call_key(a)), nullptr);
  EXPECT_EQ(log.find(call_key(a))->chosen, "ring");
  EXPECT_EQ(log.find(call_key(request(3))), nullptr);
  EXPECT_EQ(log.choices().size(), 2u);
  // An all-to-all-v's size is the most any rank sends.
  CollectiveRequest v;
  v.kind = CollectiveKind::kAllToAll;
  v.ranks = {0, 1};
  v.all_to_all_v_bytes = {{0, 10}, {30, 5}};
  EXPECT_EQ(unchosen(v).bytes_per_rank.count(), 35);
}

}  // namespace
}  // namespace zx::models
