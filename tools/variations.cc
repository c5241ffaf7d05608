#include "tools/variations.h"

#include <fmt/format.h>

#include "base/error.h"
#include "models/collectives/plan.h"

namespace zx::tools {

std::shared_ptr<KnobFlags> add_knob_flags(CLI::App& cmd, experiments::Sweeper sweeper, experiments::FlagGroup group) {
  auto flags = std::make_shared<KnobFlags>();
  for (const experiments::Knob& knob : experiments::knobs()) {
    if (!knob.declares_flag || !knob.for_sweeper(sweeper) || knob.group != group) continue;
    const std::string flag(knob.flag);
    flags->declared.emplace_back(knob.key);
    CLI::Option* option = nullptr;
    if (!knob.switch_value.empty()) {
      option = cmd.add_flag(flag)->description(std::string(knob.help));
    } else {
      // Its values and its default (the Scenario's), as CLI11 shows a checked option's.
      const std::string shown = knob.get != nullptr ? knob.get(experiments::Scenario{}) : std::string();
      option = cmd.add_option(flag, flags->values[std::string(knob.key)], std::string(knob.help))
                   ->option_text(fmt::format("{{{}}}{}", knob.values, shown.empty() ? "" : "=" + shown));
    }
    if (const experiments::Knob* other = knob.excludes.empty() ? nullptr : experiments::find_knob(knob.excludes)) {
      if (CLI::Option* o = cmd.get_option_no_throw(std::string(other->flag)); o != nullptr) option->excludes(o);
    }
  }
  return flags;
}

void collect_knob_flags(const CLI::App& cmd, KnobFlags& flags) {
  flags.given.clear();
  for (const std::string& key : flags.declared) {
    const experiments::Knob* knob = experiments::find_knob(key);
    if (cmd.count(std::string(knob->flag)) == 0) continue;
    flags.given.emplace_back(key, knob->switch_value.empty() ? flags.values.at(key) : std::string(knob->switch_value));
  }
}

void apply_knob_flags(const KnobFlags& flags, experiments::Scenario& s) {
  for (const auto& [key, value] : flags.given) {
    const experiments::Knob* knob = experiments::find_knob(key);
    const std::string flag(knob->flag);
    try {
      // The shorthands are --set keys; the same key set twice is a conflict.
      if (const std::optional<std::string> set = experiments::cluster_override(key, value)) {
        const std::string set_key = set->substr(0, set->find('='));
        for (const std::string& other : s.cluster.overrides) {
          if (other.substr(0, other.find('=')) == set_key) {
            throw InputError(Diagnostic{flag, "", fmt::format("sets '{}', as '--set {}' does; give it once", set_key, other)});
          }
        }
      }
      knob->apply(s, key, value);
    } catch (const InputError& e) {
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      for (Diagnostic& d : diagnostics) {
        if (d.source == "--vary") d = Diagnostic{flag, "", d.message};
      }
      throw InputError(std::move(diagnostics));
    }
  }
}

std::set<std::string> knob_flags_given(const CLI::App& cmd, experiments::Sweeper sweeper) {
  std::set<std::string> out;
  for (const experiments::Knob& knob : experiments::knobs()) {
    const std::string flag(knob.flag);
    if (knob.for_sweeper(sweeper) && !flag.empty() && cmd.get_option_no_throw(flag) != nullptr && cmd.count(flag) > 0) {
      out.insert(flag);
    }
  }
  return out;
}

std::set<std::string> algorithm_kinds_named(const std::vector<std::string>& algo_flags) {
  std::set<std::string> out;
  for (const std::string& a : algo_flags) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos) continue;
    const auto kind = models::collectives::parse_collective_kind(a.substr(0, eq));
    out.insert(kind ? std::string(models::collectives::to_string(*kind)) : a.substr(0, eq));
  }
  return out;
}

void add_placement_flags(CLI::App& cmd, PlacementFlags& flags) {
  cmd.add_option("--results", flags.results,
                 "Keep each point in DIR as it finishes and reuse the points kept there: a rerun simulates only "
                 "what is missing, so a stopped sweep resumes (docs/sweeps.md)")
      ->option_text("DIR");
  cmd.add_option("--shard", flags.shard,
                 "Simulate only share K (from 0) of N of the sweep's points and write them as a shard file for "
                 "'zionsim merge' (default inside a Slurm job array: the array task's share; 'off': the whole "
                 "sweep, there too; docs/sweeps.md)")
      ->option_text("K/N");
}

}  // namespace zx::tools
