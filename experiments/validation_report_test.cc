// Tests of `zionsim validate`'s report on cases simulated by a stand-in
// function: which cases a run takes (built-in, files, --case by id or
// family) and its errors (ids given twice, an unknown name with the
// closest); each outcome's error, in the cases' order; the table, CSV and
// JSON of two cases (pinned and a model's unpinned figure) to the byte;
// and the lines --check writes. The command's text against real scenarios
// is tests/validation_test's and tests/cli_end_to_end_test.sh's.

#include "experiments/validation_report.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "experiments/interrupt.h"
#include "experiments/result_schema.h"
#include "validation/case.h"

namespace zx::experiments {
namespace {

std::string case_text(const std::string& id, const std::string& family) {
  return R"({"schema_version": 1, "id": ")" + id + R"(", "family": ")" + family + R"(",
  "title": "an example",
  "measured": {"quantity": "busbw_gbyte_per_s", "value": 200.0},
  "source": {"url": "https://example.org/x", "quote": "200 GB/s"},
  "system": "8 x A100", "software": "NCCL 2.18",
  "scenario": {"command": "collective", "arguments": ["--nodes", "1", "--op", "all_reduce"]},
  "simulated": {"pointer": "/results/0/busbw_gbyte_per_s"},
  "pinned_error": {"value": -0.05, "band": 0.01}})";
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The problems of `f` as "source|pointer|message" lines.
template <typename F>
std::string problems(F f) {
  try {
    f();
  } catch (const InputError& e) {
    std::string out;
    for (const Diagnostic& d : e.diagnostics()) out += d.source + "|" + d.location + "|" + d.message + "\n";
    return out;
  }
  return "";
}

std::vector<std::string> ids(const std::vector<validation::Case>& cases) {
  std::vector<std::string> out;
  for (const validation::Case& c : cases) out.push_back(c.id);
  return out;
}

TEST(ValidationReportTest, ChoosesCasesByIdOrFamily) {
  const std::vector<validation::Case> all = load_validation_cases({}, {});
  EXPECT_EQ(ids(all), ids(validation::builtin_cases()));
  ASSERT_GE(all.size(), 3u);
  // A family brings every case of it, in the suite's order; an id named
  // again (or inside a family already named) is not taken twice.
  const std::string family = all.front().family;
  std::vector<std::string> of_family;
  for (const validation::Case& c : all) {
    if (c.family == family) of_family.push_back(c.id);
  }
  const std::string other = all.back().id;
  std::vector<std::string> expected = {other};
  for (const std::string& id : of_family) {
    if (id != other) expected.push_back(id);
  }
  EXPECT_EQ(ids(load_validation_cases({}, {other, family, other, of_family.front()})), expected);
}

TEST(ValidationReportTest, CaseFilesAndTheirErrors) {
  const std::string a = write_file("a.json", case_text("x/one", "fam-a"));
  const std::string b = write_file("b.json", case_text("x/two", "fam-b"));
  const std::string again = write_file("again.json", case_text("x/one", "fam-c"));
  EXPECT_EQ(ids(load_validation_cases({a, b}, {})), (std::vector<std::string>{"x/one", "x/two"}));
  EXPECT_EQ(ids(load_validation_cases({a, b}, {"fam-b"})), (std::vector<std::string>{"x/two"}));
  EXPECT_EQ(problems([&] { load_validation_cases({a, b, again}, {}); }),
            again + "|/id|id 'x/one' is also the id of " + a + "\n");
  EXPECT_EQ(problems([&] { load_validation_cases({a, b}, {"fam-x"}); }),
            "--case||no case or family 'fam-x' (did you mean 'fam-a'?); zionsim validate --format csv lists "
            "them\n");
  EXPECT_EQ(problems([&] { load_validation_cases({a, b}, {"zzzzzzzzzzzzzzzz"}); }),
            "--case||no case or family 'zzzzzzzzzzzzzzzz'; zionsim validate --format csv lists them\n");
}

TEST(ValidationReportTest, OutcomesInTheCasesOrder) {
  std::vector<validation::Case> cases(40);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i].id = "c" + std::to_string(i);
    cases[i].measured = static_cast<double>(i + 1);
  }
  std::atomic<int> calls = 0;
  const std::vector<validation::Outcome> outcomes = run_validation(
      cases,
      [&](const validation::Case& c) {
        ++calls;
        return c.measured * 1.25;
      },
      4);
  EXPECT_EQ(calls, 40);
  ASSERT_EQ(outcomes.size(), 40u);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(outcomes[i].validation_case, &cases[i]);
    EXPECT_EQ(outcomes[i].simulated, cases[i].measured * 1.25);
    EXPECT_DOUBLE_EQ(outcomes[i].error, 0.25);
  }
  // A simulation that fails fails the run, with its error.
  EXPECT_EQ(problems([&] {
              run_validation(cases, [](const validation::Case& c) -> double {
                throw InputError(Diagnostic{c.id, "/scenario/arguments", "refused"});
              }, 1);
            }),
            "c0|/scenario/arguments|refused\n");
}

// Two cases: a pinned measurement outside its band, and a model's figure
// without a pin, of another family, its id longer than "case".
struct TwoCases {
  std::vector<validation::Case> cases;
  std::vector<validation::Outcome> outcomes;

  TwoCases() : cases(2) {
    validation::Case& a = cases[0];
    a.file = "a.json";
    a.id = "nccl/a";
    a.family = "nccl-tests";
    a.title = "A";
    a.quantity = "busbw_gbyte_per_s";
    a.measured = 200;
    a.source.url = "https://example.org/a,b";
    a.source.repository = "o/r";
    a.command = "collective";
    a.arguments = {"--nodes", "1"};
    a.pinned = validation::PinnedError{.value = -0.05, .band = 0.01};
    validation::Case& b = cases[1];
    b.file = "b.json";
    b.id = "mlperf/long-identifier";
    b.family = "mlperf";
    b.title = "B";
    b.quantity = "samples_per_s";
    b.kind = "model";
    b.measured = 2.5e6;
    b.source.url = "https://example.org/b";
    b.command = "whatif";
    outcomes = {{&cases[0], 180, validation::relative_error(180, 200)},
                {&cases[1], 3e6, validation::relative_error(3e6, 2.5e6)}};
  }
};

TEST(ValidationReportTest, Table) {
  const TwoCases t;
  std::ostringstream out;
  write_validation_table(out, t.outcomes, validation::summarize(t.outcomes), /*check=*/false);
  EXPECT_EQ(out.str(),
            "zionsim validate: 2 cases, error = (simulated - measured) / measured\n\n"
            "case                        measured     simulated  unit         error\n"
            "nccl/a                        200.00        180.00  GB/s        -10.0%\n"
            "mlperf/long-identifier       2.5e+06         3e+06  samples/s   +20.0%  (measured: a model's figure)\n"
            "\n"
            "family                        cases  mean |error|  worst\n"
            "nccl-tests                        1         10.0%  -10.0% (nccl/a)\n"
            "mlperf (model)                    1         20.0%  +20.0% (mlperf/long-identifier)\n"
            "\nsources and what each error is explained by: docs/validation.md\n");
  std::ostringstream checked;
  write_validation_table(checked, {t.outcomes[1]}, validation::summarize({t.outcomes[1]}), /*check=*/true);
  EXPECT_NE(checked.str().find("zionsim validate: 1 case, error"), std::string::npos);
  EXPECT_NE(checked.str().find("  unit         error  pin\n"), std::string::npos);
  EXPECT_NE(checked.str().find("  +20.0%  unpinned  (measured: a model's figure)\n"), std::string::npos);
}

TEST(ValidationReportTest, CsvAndJson) {
  const TwoCases t;
  std::ostringstream csv;
  write_validation_csv(csv, t.outcomes);
  EXPECT_EQ(csv.str(),
            "id,family,kind,quantity,measured,simulated,error,pinned_error,band,source\n"
            "nccl/a,nccl-tests,measurement,busbw_gbyte_per_s,200,180,-0.1,-0.05,0.01,\"https://example.org/a,b\"\n"
            "mlperf/long-identifier,mlperf,model,samples_per_s,2500000,3000000,0.2,,,"
            "https://example.org/b\n");

  const nlohmann::ordered_json j = validation_report_json(t.outcomes, validation::summarize(t.outcomes));
  EXPECT_EQ(j.at("schema_version"), 1);
  ASSERT_EQ(j.at("cases").size(), 2u);
  const nlohmann::ordered_json& a = j.at("cases")[0];
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "family", "title", "kind", "quantity", "unit", "measured",
                                            "simulated", "error", "pinned_error", "within_pin", "source", "command",
                                            "file"}));
  EXPECT_EQ(a.at("unit"), "GB/s");
  EXPECT_EQ(a.at("measured"), 200.0);
  EXPECT_EQ(a.at("error"), -0.1);
  EXPECT_EQ(a.at("pinned_error").dump(), R"({"value":-0.05,"band":0.01})");
  EXPECT_EQ(a.at("within_pin"), false);
  EXPECT_EQ(a.at("source").dump(),
            R"({"url":"https://example.org/a,b","repository":"o/r","path":"","commit":"","reference":""})");
  EXPECT_EQ(a.at("command").dump(), R"(["zionsim","collective","--nodes","1"])");
  EXPECT_EQ(a.at("file"), "a.json");
  // Without a pin, neither the pin nor whether the error is within it.
  const nlohmann::ordered_json& b = j.at("cases")[1];
  EXPECT_FALSE(b.contains("pinned_error"));
  EXPECT_FALSE(b.contains("within_pin"));
  EXPECT_EQ(b.at("kind"), "model");
  EXPECT_EQ(j.at("families").dump(),
            R"([{"family":"nccl-tests","cases":1,"mean_abs_error":0.1,"worst_error":-0.1,"worst_case":"nccl/a"},)"
            R"js({"family":"mlperf (model)","cases":1,"mean_abs_error":0.2,"worst_error":0.2,)js"
            R"("worst_case":"mlperf/long-identifier"}])");
}

TEST(ValidationReportTest, CheckNamesEveryCaseThatFails) {
  TwoCases t;
  std::ostringstream err;
  EXPECT_EQ(check_validation_pins(err, t.outcomes), 2);
  EXPECT_EQ(err.str(),
            "zionsim validate: case 'nccl/a' moved: error -10.0% is outside its pin -5.0% +/- 1.0 points (a.json); "
            "if the change is meant, move the pin and say why in docs/validation.md\n"
            "zionsim validate: case 'mlperf/long-identifier' has no pinned_error (--check needs one)\n");
  EXPECT_EQ(pin_status(t.cases[0], t.outcomes[0].error), "moved");
  EXPECT_EQ(pin_status(t.cases[1], t.outcomes[1].error), "unpinned");
  t.cases[0].pinned->value = -0.1;
  std::ostringstream none;
  EXPECT_EQ(check_validation_pins(none, {t.outcomes[0]}), 0);
  EXPECT_EQ(none.str(), "");
  EXPECT_EQ(pin_status(t.cases[0], t.outcomes[0].error), "ok");
}

}  // namespace
}  // namespace zx::experiments
