// Tests of a what-if sweep's variants: --vary's combinations in order,
// --scenario's variants with --vary's inside each, --sensitivity alone, and
// the exact errors of what cannot be combined.

#include "experiments/whatif_variants.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace zx::experiments {
namespace {

WhatIfOptions base() {
  WhatIfOptions o;
  o.model = "dlrm-a-small";
  o.nodes = {1, 2};
  return o;
}

std::string error_of(const WhatIfVariantRequest& r, const WhatIfOptions& o = base()) {
  try {
    (void)whatif_variants(o, r);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<std::string> labels(const std::vector<WhatIfVariant>& variants) {
  std::vector<std::string> out;
  for (const WhatIfVariant& v : variants) out.push_back(v.label());
  return out;
}

TEST(WhatIfVariantsTest, NothingAskedIsTheBaseAlone) {
  const std::vector<WhatIfVariant> v = whatif_variants(base(), {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_TRUE(v.front().settings.empty());
  EXPECT_EQ(v.front().options.model, "dlrm-a-small");
}

TEST(WhatIfVariantsTest, VaryGivesEveryCombinationInOrder) {
  const std::vector<WhatIfVariant> v =
      whatif_variants(base(), {.vary = {"nic-gbit=100,400", "fidelity=flow,analytical"}});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].settings, (Settings{{"nic-gbit", "100"}, {"fidelity", "flow"}}));
  EXPECT_EQ(v[1].settings, (Settings{{"nic-gbit", "100"}, {"fidelity", "analytical"}}));
  EXPECT_EQ(v[3].settings, (Settings{{"nic-gbit", "400"}, {"fidelity", "analytical"}}));
  EXPECT_EQ(v[1].options.fidelity, "analytical");
}

TEST(WhatIfVariantsTest, ScenariosComeFirstWithVaryInsideEach) {
  const std::vector<WhatIfVariant> v = whatif_variants(
      base(), {.vary = {"fidelity=flow,analytical"}, .scenarios = {"nic-gbit=100", "nic-gbit=400"}});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].settings, (Settings{{"nic-gbit", "100"}, {"fidelity", "flow"}}));
  EXPECT_EQ(v[2].settings, (Settings{{"nic-gbit", "400"}, {"fidelity", "flow"}}));
}

TEST(WhatIfVariantsTest, ConflictsGiveExactErrors) {
  EXPECT_EQ(error_of({.vary = {"nic-gbit=100"}, .sensitivity = 2}),
            "--sensitivity: varies one resource at a time itself; not with --vary");
  EXPECT_EQ(error_of({.sensitivity = 2, .one_iteration_flag = "--timeline"}),
            "--timeline: writes one iteration; it cannot be combined with --sensitivity");
  EXPECT_EQ(error_of({.vary = {"nic-gbit=100,400"}, .one_iteration_flag = "--emit-trace"}),
            "--emit-trace: writes one iteration; it cannot be combined with --vary (run that variant alone)");
  EXPECT_EQ(error_of({.vary = {"nic-gbit=100"}, .scenarios = {"nic-gbit=400"}}),
            "--scenario: nic-gbit=400: 'nic-gbit' is swept by --vary too; give it in one of them");
  EXPECT_EQ(error_of({.scenarios = {"nic-gbit=100", "fidelity=flow"}}),
            "--scenario: fidelity=flow: expected the knobs of the first scenario, nic-gbit, in that order (they "
            "are the outputs' columns); got fidelity");
  EXPECT_EQ(error_of({.scenarios = {"nic-gbit=100", "nic-gbit=100"}}), "--scenario: nic-gbit=100: given twice");
  // kMaxWhatIfPoints bounds variants x sizes.
  WhatIfOptions many = base();
  many.nodes = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  std::string values;
  for (int g = 1; g <= 100; ++g) values += (g > 1 ? "," : "") + std::to_string(g * 10);
  EXPECT_EQ(error_of({.vary = {"nic-gbit=" + values}}, many),
            "--vary: 100 variants x 11 sizes = 1100 points; at most 1000 per run");
}

TEST(WhatIfVariantsTest, SensitivityImprovesOneResourceAtATime) {
  const std::vector<WhatIfVariant> v = whatif_variants(base(), {.sensitivity = 2});
  ASSERT_GE(v.size(), 5u);
  EXPECT_EQ(v.front().settings.front().first, "sensitivity");
  EXPECT_EQ(labels(v).size(), v.size());
}

}  // namespace
}  // namespace zx::experiments
