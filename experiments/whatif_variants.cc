// File: experiments/whatif_variants.cc
//
// A what-if sweep's variants from --vary, --scenario and --sensitivity (see
// whatif_variants.h).

#include "experiments/whatif_variants.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"

namespace zx::experiments {
namespace {

// An error about a knob that --scenario gave, said of --scenario.
InputError as_scenario_error(const InputError& e) {
  std::vector<Diagnostic> diagnostics = e.diagnostics();
  for (Diagnostic& d : diagnostics) {
    if (d.source == "--vary") d.source = "--scenario";
    for (std::size_t at = d.message.find("--vary"); at != std::string::npos; at = d.message.find("--vary", at)) {
      d.message.replace(at, 6, "--scenario");
    }
  }
  return InputError(std::move(diagnostics));
}

// --scenario 'KEY=VALUE KEY=VALUE ...': one variant each, every one setting
// the same knobs in the same order (the columns of the outputs), none of
// them a knob --vary sweeps too, no scenario twice.
std::vector<Settings> parse_scenarios(const std::vector<std::string>& texts,
                                      const std::vector<WhatIfVariation>& variations) {
  std::vector<Settings> out;
  for (const std::string& text : texts) {
    Settings scenario;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == word.size()) {
        throw InputError(Diagnostic{"--scenario", text, fmt::format("expected KEY=VALUE words, got '{}'", word)});
      }
      const std::string key = word.substr(0, eq);
      for (const auto& [k, v] : scenario) {
        if (k == key) throw InputError(Diagnostic{"--scenario", text, fmt::format("'{}' is given twice", key)});
      }
      for (const WhatIfVariation& v : variations) {
        if (v.key == key) {
          throw InputError(Diagnostic{"--scenario", text, fmt::format("'{}' is swept by --vary too; give it in one of them", key)});
        }
      }
      // The knob and its value, checked as --vary checks them.
      try {
        parse_whatif_variation(word);
      } catch (const InputError& e) {
        throw as_scenario_error(e);
      }
      scenario.emplace_back(key, word.substr(eq + 1));
    }
    if (scenario.empty()) throw InputError(Diagnostic{"--scenario", text, "expected KEY=VALUE words"});
    if (!out.empty()) {
      std::vector<std::string> want, got;
      for (const auto& [k, v] : out.front()) want.push_back(k);
      for (const auto& [k, v] : scenario) got.push_back(k);
      if (want != got) {
        throw InputError(Diagnostic{"--scenario", text,
                                    fmt::format("expected the knobs of the first scenario, {}, in that order (they "
                                                "are the outputs' columns); got {}",
                                                fmt::join(want, " "), fmt::join(got, " "))});
      }
    }
    if (std::find(out.begin(), out.end(), scenario) != out.end()) {
      throw InputError(Diagnostic{"--scenario", text, "given twice"});
    }
    out.push_back(std::move(scenario));
  }
  return out;
}

}  // namespace

std::vector<WhatIfVariant> whatif_variants(const WhatIfOptions& o, const WhatIfVariantRequest& r) {
  if (r.sensitivity > 0) {
    if (!r.vary.empty() || !r.scenarios.empty()) {
      throw InputError(Diagnostic{"--sensitivity", "",
                                  fmt::format("varies one resource at a time itself; not with {}",
                                              r.vary.empty() ? "--scenario" : "--vary")});
    }
    if (!r.one_iteration_flag.empty()) {
      throw InputError(Diagnostic{r.one_iteration_flag, "",
                                  "writes one iteration; it cannot be combined with --sensitivity"});
    }
    return sensitivity_variants(o, r.sensitivity);
  }
  std::vector<WhatIfVariation> variations;
  for (const std::string& text : r.vary) variations.push_back(parse_whatif_variation(text));
  const std::vector<Settings> scenarios = parse_scenarios(r.scenarios, variations);
  // The scenarios' knobs are checked against the other flags as --vary's
  // are, with every value a scenario gives them.
  std::vector<WhatIfVariation> checked = variations;
  for (std::size_t k = 0; !scenarios.empty() && k < scenarios.front().size(); ++k) {
    WhatIfVariation v{scenarios.front()[k].first, {}};
    for (const Settings& scenario : scenarios) v.values.push_back(scenario[k].second);
    checked.push_back(std::move(v));
  }
  const GivenFlags& given = r.given;
  // --vary's own first, then the scenarios' (said of --scenario).
  check_knob_conflicts(variations, given);
  try {
    check_knob_conflicts(checked, given);
  } catch (const InputError& e) {
    throw as_scenario_error(e);
  }
  if (!checked.empty() && !r.one_iteration_flag.empty()) {
    throw InputError(Diagnostic{r.one_iteration_flag, "",
                                fmt::format("writes one iteration; it cannot be combined with {} (run that variant "
                                            "alone)", variations.empty() ? "--scenario" : "--vary")});
  }
  std::vector<WhatIfVariant> variants;
  if (scenarios.empty()) {
    variants = expand_whatif_variations(o, variations);
  } else {
    // Each scenario, then --vary's combinations inside it.
    for (const Settings& scenario : scenarios) {
      WhatIfOptions base = o;
      try {
        for (const auto& [key, value] : scenario) apply_whatif_variation(base, key, value);
      } catch (const InputError& e) {
        throw as_scenario_error(e);
      }
      for (WhatIfVariant& v : expand_whatif_variations(base, variations)) {
        v.settings.insert(v.settings.begin(), scenario.begin(), scenario.end());
        variants.push_back(std::move(v));
      }
    }
  }
  const std::size_t points = variants.size() * o.nodes.size();
  if (points > kMaxWhatIfPoints) {
    throw InputError(Diagnostic{"--vary", "", fmt::format("{} variants x {} sizes = {} points; at most {} per run",
                                                          variants.size(), o.nodes.size(), points, kMaxWhatIfPoints)});
  }
  return variants;
}

}  // namespace zx::experiments
