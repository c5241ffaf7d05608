// `zionsim merge SHARD...`: the shard files of one sweep (`zionsim whatif,
// collective or run ... --shard K/N`, one per share) joined into exactly what the sweep prints when
// one process runs it (wall times aside): the shards' command is run again
// with its points read back instead of simulated (experiments/sweep_shards.h,
// docs/sweeps.md).

#include <CLI/CLI.hpp>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "tools/cli.h"
#include "tools/commands.h"
#include "experiments/interrupt.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif.h"

namespace zx::tools {

void add_merge_command(CLI::App& app, CommandContext& context) {
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join the shard files of a sweep ('zionsim whatif|collective|run ... --shard K/N', one per share) into what "
      "one process prints: its table, CSV or JSON, and its --plot");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("shards", *files, "The shard files, every share once, in any order")
      ->required()
      ->option_text("SHARD...");
  cmd->parse_complete_callback([files, action = context.action] {
    *action = [files](std::ostream& out) {
      const MergedShards shards = read_shards(*files);
      SweepPlacement placement;
      placement.merged = &shards.outcomes;
      placement.merged_source = shards.source;
      run_nested_cli(shards.command, out, &placement, "");
      return kExitOk;
    };
  });
}

}  // namespace zx::tools
