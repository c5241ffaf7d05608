// `zionsim sweep SPEC.json [FLAG...]`: a what-if sweep written down as a
// file (experiments/sweep_spec.h reads it), run as the whatif command it
// spells, with any flag given after the file added (--results, --shard,
// --format, --threads, ...); docs/sweeps.md.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "experiments/sweep_spec.h"
#include "tools/cli.h"
#include "tools/commands.h"

namespace zx::tools {
namespace {

// The long flags of `zionsim whatif`, and which of them take no value.
experiments::WhatIfFlagNames whatif_flags() {
  CLI::App app;
  std::function<int(std::ostream&)> action;
  CommandContext context{&action, {}, nullptr};
  add_whatif_command(app, context);
  experiments::WhatIfFlagNames out;
  for (const CLI::Option* option : app.get_subcommand("whatif")->get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (name == "help") continue;
      out.names.push_back(name);
      if (option->get_expected_min() == 0) out.no_value.push_back(name);
    }
  }
  return out;
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run a what-if sweep written as a file (its whatif flags and the knobs to vary); flags after the file are "
      "added: --results, --shard, --format, --threads (docs/sweeps.md)");
  auto spec = std::make_shared<std::string>();
  cmd->add_option("spec", *spec, "The sweep file")->required()->option_text("SPEC.json");
  cmd->allow_extras();
  cmd->parse_complete_callback([cmd, spec, action = context.action, merged = context.merged] {
    const std::vector<std::string> extras = cmd->remaining();
    *action = [spec, extras, merged](std::ostream& out) {
      std::vector<std::string> words = experiments::read_sweep_spec(*spec, whatif_flags());
      words.insert(words.end(), extras.begin(), extras.end());
      run_nested_cli(words, out, merged, fmt::format(" (in the sweep {})", *spec));
      return kExitOk;
    };
  });
}

}  // namespace zx::tools
