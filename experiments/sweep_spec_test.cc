// Tests of a sweep file read as the whatif command line it stands for: the
// words of flags (values, lists, flags without a value, the sizes), knobs
// to vary and scenarios, in the file's order; whole reals written whole;
// and each problem at its JSON pointer with its message. The command that
// runs the words is tests/cli_end_to_end_test.sh's and tools/cli_test's.

#include "experiments/sweep_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zx::experiments {
namespace {

using Words = std::vector<std::string>;

// A few of whatif's flags.
const WhatIfFlagNames kFlags{.names = {"model", "nodes", "set", "unfused", "threads", "format", "cluster", "shard"},
                             .no_value = {"unfused"}};

Words words_of(const std::string& text) {
  return sweep_whatif_words(nlohmann::ordered_json::parse(text), "s.json", kFlags);
}

// The problem of `text` as "source|pointer|message".
std::string problem(const std::string& text) {
  try {
    words_of(text);
  } catch (const InputError& e) {
    std::string out;
    for (const Diagnostic& d : e.diagnostics()) out += d.source + "|" + d.location + "|" + d.message;
    return out;
  }
  return "";
}

TEST(SweepSpecTest, WordsOfFlagsKnobsAndScenarios) {
  EXPECT_EQ(words_of(R"({"schema_version": 1, "command": "whatif",
      "flags": {"model": "dlrm-a", "nodes": [8, 16, 32], "set": ["nic.latency_ns=700", "x=1"], "unfused": true,
                "threads": 2},
      "vary": {"nic-gbit": [200, 400.0], "oversubscription": [1, 2.5]},
      "scenarios": [{"gpu": "a100-40gb"}, {"gpu": "h100-80gb", "nic-gbit": 800}]})"),
            (Words{"whatif", "--model", "dlrm-a", "--nodes", "8,16,32", "--set", "nic.latency_ns=700", "--set", "x=1",
                   "--unfused", "--threads", "2", "--vary", "nic-gbit=200,400", "--vary", "oversubscription=1,2.5",
                   "--scenario", "gpu=a100-40gb", "--scenario", "gpu=h100-80gb nic-gbit=800"}));
  // false leaves a flag without a value out; nothing to vary is a single run.
  EXPECT_EQ(words_of(R"({"schema_version": 1, "command": "whatif", "flags": {"unfused": false, "nodes": [1]}})"),
            (Words{"whatif", "--nodes", "1"}));
  EXPECT_EQ(words_of(R"({"schema_version": 1, "command": "whatif"})"), (Words{"whatif"}));
  // The knobs in the file's order, not sorted.
  EXPECT_EQ(words_of(R"({"schema_version": 1, "command": "whatif", "vary": {"z": [1], "a": ["x"]}})"),
            (Words{"whatif", "--vary", "z=1", "--vary", "a=x"}));
}

TEST(SweepSpecTest, ProblemsAtTheirPointers) {
  const std::string head = R"({"schema_version": 1, "command": "whatif", )";
  EXPECT_EQ(problem("[1]"), "s.json||expected an object with \"flags\" and \"vary\"");
  EXPECT_EQ(problem(head + R"("flag": {}})"),
            "s.json|/flag|unknown key; a sweep has schema_version, command, flags, vary, scenarios");
  EXPECT_EQ(problem(R"({"command": "whatif"})"), "s.json|/schema_version|expected 1, got nothing");
  EXPECT_EQ(problem(R"({"schema_version": 2, "command": "whatif"})"), "s.json|/schema_version|expected 1, got 2");
  EXPECT_EQ(problem(R"({"schema_version": 1, "command": "run"})"),
            "s.json|/command|expected \"whatif\" (the command a sweep file runs)");
  EXPECT_EQ(problem(head + R"("flags": [1]})"), "s.json|/flags|expected an object of whatif flags");
  EXPECT_EQ(problem(head + R"("flags": {"modle": "dlrm-a"}})"),
            "s.json|/flags/modle|not a flag of zionsim whatif (did you mean 'model'?)");
  EXPECT_EQ(problem(head + R"("flags": {"vary": ["a=1"]}})"), "s.json|/flags/vary|give the knobs to vary under /vary");
  EXPECT_EQ(problem(head + R"("flags": {"shard": "1/2"}})"),
            "s.json|/flags/shard|a share is chosen when the sweep runs: zionsim sweep FILE --shard K/N");
  EXPECT_EQ(problem(head + R"("flags": {"unfused": "yes"}})"),
            "s.json|/flags/unfused|expected true or false, got \"yes\"");
  EXPECT_EQ(problem(head + R"("flags": {"set": []}})"), "s.json|/flags/set|expected at least one value");
  EXPECT_EQ(problem(head + R"("flags": {"nodes": [1, true]}})"),
            "s.json|/flags/nodes/1|expected a string or a number, got true");
  EXPECT_EQ(problem(head + R"("flags": {"model": {"a": 1}}})"),
            "s.json|/flags/model|expected a string or a number, got {\"a\":1}");
  EXPECT_EQ(problem(head + R"("vary": [1]})"), "s.json|/vary|expected an object: {\"KNOB\": [V1, V2, ...]}");
  EXPECT_EQ(problem(head + R"("vary": {"nic-gbit": 200}})"),
            "s.json|/vary/nic-gbit|expected a list of values, got 200");
  EXPECT_EQ(problem(head + R"("vary": {"nic-gbit": []}})"), "s.json|/vary/nic-gbit|expected a list of values, got []");
  EXPECT_EQ(problem(head + R"("vary": {"gpu": ["a", "b,c"]}})"), "s.json|/vary/gpu/1|a value to vary holds no comma");
  EXPECT_EQ(problem(head + R"("scenarios": {}})"),
            "s.json|/scenarios|expected a list of scenarios: [{\"KNOB\": V, ...}, ...]");
  EXPECT_EQ(problem(head + R"("scenarios": [{"gpu": "x"}, {}]})"),
            "s.json|/scenarios/1|expected {\"KNOB\": V, ...}, got {}");
  EXPECT_EQ(problem(head + R"("scenarios": [{"gpu": "a b"}]})"),
            "s.json|/scenarios/0/gpu|a scenario's value holds no space and is not empty");
  EXPECT_EQ(problem(head + R"("scenarios": [{"gpu": ""}]})"),
            "s.json|/scenarios/0/gpu|a scenario's value holds no space and is not empty");
}

TEST(SweepSpecTest, ReadsAFileCheckedAsEveryInputFile) {
  const std::string path = ::testing::TempDir() + "/sweep_spec_test.json";
  std::ofstream(path)
      << R"({"schema_version": 1, "command": "whatif", "flags": {"nodes": [2]}, "vary": {"b": [1], "a": [2]}})";
  EXPECT_EQ(read_sweep_spec(path, kFlags), (Words{"whatif", "--nodes", "2", "--vary", "b=1", "--vary", "a=2"}));
  // A key given twice is refused (nlohmann alone would keep the last).
  std::ofstream(path) << R"({"schema_version": 1, "command": "whatif", "command": "whatif"})";
  EXPECT_THROW(read_sweep_spec(path, kFlags), InputError);
  EXPECT_THROW(read_sweep_spec(::testing::TempDir() + "/no_such_sweep.json", kFlags), InputError);
}

}  // namespace
}  // namespace zx::experiments
