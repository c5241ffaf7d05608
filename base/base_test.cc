// Tests of the shared check and error types.

#include <gtest/gtest.h>

#include <string>

#include "base/check.h"
#include "base/error.h"

namespace zx {
namespace {

// A failing check throws InvariantError whose message names the condition,
// the file and the caller's message; a passing check does not evaluate it.
TEST(CheckTest, FailingCheckThrowsWithConditionAndMessage) {
  int evaluated = 0;
  auto message = [&] {
    ++evaluated;
    return std::string("the message");
  };
  EXPECT_NO_THROW(ZX_CHECK(1 + 1 == 2, message()));
  EXPECT_EQ(evaluated, 0);
  try {
    ZX_CHECK(1 + 1 == 3, message());
    FAIL() << "ZX_CHECK did not throw";
  } catch (const InvariantError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1 + 1 == 3"), std::string::npos) << what;
    EXPECT_NE(what.find("the message"), std::string::npos) << what;
    EXPECT_NE(what.find("base_test.cc"), std::string::npos) << what;
  }
  EXPECT_EQ(evaluated, 1);
}

TEST(CheckTest, UnreachableThrows) {
  EXPECT_THROW(ZX_UNREACHABLE("no such kind"), InvariantError);
}

// A diagnostic prints as "source: location: message", leaving out empty parts;
// an InputError's what() has one line per diagnostic, in the order given.
TEST(InputErrorTest, FormatsEveryDiagnostic) {
  InputError error({{"cluster.json", "/gpus_per_node", "expected an integer in [1, 16], got 0"},
                    {"cluster.json", "", "missing key 'schema_version'"},
                    {"", "", "no input"}});
  EXPECT_EQ(error.diagnostics().size(), 3u);
  EXPECT_EQ(std::string(error.what()),
            "cluster.json: /gpus_per_node: expected an integer in [1, 16], got 0\n"
            "cluster.json: missing key 'schema_version'\n"
            "no input");
}

}  // namespace
}  // namespace zx
