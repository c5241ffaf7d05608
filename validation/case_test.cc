#include "validation/case.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "base/error.h"

namespace zx::validation {
namespace {

constexpr const char* kGood = R"({
  "schema_version": 1,
  "id": "nccl-tests/example",
  "family": "nccl-tests",
  "title": "an example",
  "measured": {"quantity": "busbw_gbyte_per_s", "value": 200.0},
  "source": {"url": "https://example.org/x", "quote": "200 GB/s"},
  "system": "8 x A100", "software": "NCCL 2.18",
  "scenario": {"command": "collective", "arguments": ["--nodes", "1", "--op", "all_reduce"]},
  "simulated": {"pointer": "/results/0/busbw_gbyte_per_s"},
  "pinned_error": {"value": -0.05, "band": 0.01}
})";

// The problems of `text` as "pointer: message" lines.
std::string problems(const std::string& text) {
  try {
    parse_case(text, "c.json");
  } catch (const InputError& e) {
    std::string out;
    for (const Diagnostic& d : e.diagnostics()) {
      EXPECT_EQ(d.source, "c.json");
      out += d.location + ": " + d.message + "\n";
    }
    return out;
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(CaseTest, ReadsEveryField) {
  const Case c = parse_case(kGood, "c.json");
  EXPECT_EQ(c.id, "nccl-tests/example");
  EXPECT_EQ(c.family, "nccl-tests");
  EXPECT_EQ(c.quantity, "busbw_gbyte_per_s");
  EXPECT_EQ(c.measured, 200.0);
  EXPECT_EQ(c.kind, "measurement");
  EXPECT_EQ(c.source.url, "https://example.org/x");
  EXPECT_EQ(c.command, "collective");
  EXPECT_EQ(c.arguments, (std::vector<std::string>{"--nodes", "1", "--op", "all_reduce"}));
  ASSERT_TRUE(c.pinned.has_value());
  EXPECT_EQ(c.pinned->value, -0.05);
  EXPECT_EQ(unit_of(c.quantity), "GB/s");
}

TEST(CaseTest, EveryProblemAtItsPointer) {
  EXPECT_EQ(problems(replace(kGood, R"("value": 200.0)", R"("value": 0)")),
            "/measured/value: expected a value above 0, got 0\n");
  EXPECT_NE(problems(replace(kGood, "busbw_gbyte_per_s\", \"value", "bandwidth\", \"value")).find("/measured/quantity"),
            std::string::npos);
  // The pointer must name the measured quantity: no comparing time with bandwidth.
  EXPECT_EQ(problems(replace(kGood, "/results/0/busbw_gbyte_per_s", "/results/0/time_us")),
            "/simulated/pointer: expected a pointer to the measured quantity 'busbw_gbyte_per_s', got "
            "'/results/0/time_us'\n");
  EXPECT_EQ(problems(replace(kGood, "\"--nodes\", \"1\"", "\"--timeline\", \"t.json\"")),
            "/scenario/arguments/0: '--timeline' is not allowed in a scenario: validate asks for JSON itself, and a "
            "case writes no file and loads no code\n");
  EXPECT_NE(problems(replace(kGood, "\"--nodes\", \"1\"", "\"--format=csv\", \"1\"")).find("/scenario/arguments/0"),
            std::string::npos);
  EXPECT_NE(problems(replace(kGood, "\"--nodes\", \"1\"", "\"--plugin\", \"x.so\"")).find("'--plugin'"),
            std::string::npos);
  EXPECT_NE(problems(replace(kGood, "\"command\": \"collective\"", "\"command\": \"calibrate\"")).find("/scenario/command"),
            std::string::npos);
  EXPECT_EQ(problems(replace(kGood, "https://example.org/x", "example.org")),
            "/source/url: expected an https:// address, got 'example.org'\n");
  EXPECT_EQ(problems(replace(kGood, "\"band\": 0.01", "\"band\": 0")), "/pinned_error/band: expected a band above 0, got 0\n");
  EXPECT_NE(problems(replace(kGood, "\"id\": \"nccl-tests/example\"", "\"id\": \"a b\"")).find("/id: expected 1 to 200"),
            std::string::npos);
  EXPECT_NE(problems(replace(kGood, "\"title\"", "\"titel\"")).find("unknown key 'titel'"), std::string::npos);
  EXPECT_NE(problems(replace(kGood, "\"schema_version\": 1", "\"schema_version\": 2")).find("/schema_version"),
            std::string::npos);
  // Two problems in one file: both reported.
  const std::string two = problems(replace(replace(kGood, R"("value": 200.0)", R"("value": -1)"), "https://", "ftp://"));
  EXPECT_NE(two.find("/measured/value"), std::string::npos) << two;
  EXPECT_NE(two.find("/source/url"), std::string::npos) << two;
}

TEST(CaseTest, ErrorAndPin) {
  EXPECT_DOUBLE_EQ(relative_error(110, 100), 0.1);
  EXPECT_DOUBLE_EQ(relative_error(50, 100), -0.5);
  const PinnedError pin{.value = -0.05, .band = 0.01};
  EXPECT_TRUE(within_pin(-0.05, pin));
  EXPECT_TRUE(within_pin(-0.0401, pin));
  EXPECT_FALSE(within_pin(-0.0399, pin));
  EXPECT_FALSE(within_pin(-0.0601, pin));
}

TEST(CaseTest, SummaryPerFamilyWithModelsApart) {
  Case a{.id = "a", .family = "f"};
  Case b{.id = "b", .family = "f"};
  Case c{.id = "c", .family = "g"};
  Case m{.id = "m", .family = "f", .kind = "model"};
  const std::vector<FamilySummary> s =
      summarize({{&a, 0, 0.10}, {&b, 0, -0.30}, {&c, 0, 0.02}, {&m, 0, 0.9}});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].family, "f");
  EXPECT_EQ(s[0].cases, 2);
  EXPECT_DOUBLE_EQ(s[0].mean_abs_error, 0.20);
  EXPECT_DOUBLE_EQ(s[0].worst_error, -0.30);
  EXPECT_EQ(s[0].worst_case, "b");
  EXPECT_EQ(s[1].family, "g");
  EXPECT_EQ(s[2].family, "f (model)");
  EXPECT_EQ(s[2].worst_case, "m");
}

// The suite itself: every case parses, ids are unique, every case cites a
// source it can be checked against and is pinned (--check needs a pin).
TEST(CaseTest, BuiltinSuite) {
  const std::vector<Case> cases = builtin_cases();
  ASSERT_GE(cases.size(), 10u);
  std::set<std::string> ids;
  std::set<std::string> families;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.id);
    EXPECT_TRUE(ids.insert(c.id).second);
    families.insert(c.family);
    EXPECT_FALSE(c.source.url.empty());
    EXPECT_FALSE(c.source.quote.empty());
    EXPECT_FALSE(c.system.empty());
    EXPECT_FALSE(c.software.empty());
    EXPECT_TRUE(c.pinned.has_value());
    EXPECT_EQ(c.id.substr(0, c.family.size() + 1), c.family + "/");
  }
  EXPECT_TRUE(families.count("nccl-tests"));
  EXPECT_TRUE(families.count("mlperf-training"));
}

}  // namespace
}  // namespace zx::validation
