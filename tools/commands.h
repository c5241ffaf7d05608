// File: tools/commands.h
//
// The subcommands of zionsim. Each add_*_command registers a CLI11 subcommand
// with its options and, when the subcommand is chosen, stores the action that
// runs it in the context. Every later capability adds one function here and
// one call in cli.cc; nothing else in the CLI changes.

#ifndef ZIONSIM_TOOLS_COMMANDS_H_
#define ZIONSIM_TOOLS_COMMANDS_H_

#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/interrupt.h"
#include "experiments/memory_estimate.h"
#include "experiments/output_file.h"
#include "experiments/parallel.h"
#include "experiments/plan_search.h"
#include "experiments/sweep_cache.h"
#include "experiments/sweep_shards.h"
#include "experiments/trace_run.h"
#include "experiments/whatif.h"
#include "experiments/whatif_codec.h"
#include "tools/variations.h"

namespace CLI {
class App;
}

namespace zx::tools {

// The commands call the experiment layer (experiments/) by these names.
using experiments::apply_whatif_variation;
using experiments::available_memory_bytes;
using experiments::check_interrupt;
using experiments::clear_interrupt;
using experiments::command_without_shard;
using experiments::CriticalPathOp;
using experiments::decode_auto_choices;
using experiments::decode_candidates;
using experiments::decode_real;
using experiments::effective_degradations;
using experiments::encode_auto_choices;
using experiments::encode_candidates;
using experiments::encode_real;
using experiments::estimated_simulation_bytes;
using experiments::expand_whatif_variations;
using experiments::gib_text;
using experiments::interrupt_requested;
using experiments::Interrupted;
using experiments::iteration_options;
using experiments::LinkLoad;
using experiments::MergedShards;
using experiments::parallel_for;
using experiments::parallel_map;
using experiments::parse_dense_optimizer;
using experiments::parse_whatif_variation;
using experiments::PlacedSweep;
using experiments::plan_whatif_size;
using experiments::PlannedSize;
using experiments::point_shaping_words;
using experiments::PointCache;
using experiments::RankTimes;
using experiments::read_shards;
using experiments::request_interrupt;
using experiments::run_trace;
using experiments::run_whatif;
using experiments::run_whatif_placed;
using experiments::run_whatif_variants;
using experiments::search_sharding;
using experiments::SearchMove;
using experiments::SearchOptions;
using experiments::SearchResult;
using experiments::sensitivity_variants;
using experiments::set_progress_sink;
using experiments::shard_document;
using experiments::SweepPlacement;
using experiments::task_outcome_to_json;
using experiments::TraceRunDetail;
using experiments::TraceRunHooks;
using experiments::TraceRunReport;
using experiments::TraceRunRequest;
using experiments::TraceRunSummary;
using experiments::TraceRunVariant;
using experiments::WhatIfOptions;
using experiments::WhatIfPoint;
using experiments::WhatIfVariant;
using experiments::WhatIfVariation;
using experiments::write_progress;
using experiments::kTimelineRanks;

using experiments::close_output_file;
using experiments::finish_output_file;
using experiments::open_output_file;
using experiments::OutputFile;

struct CommandContext {
  /// Set by the chosen subcommand's parse callback; returns the exit status.
  std::function<int(std::ostream&)>* action;
  /// The command line as given (the words after "zionsim"): what a shard
  /// file records.
  std::vector<std::string> args;
  /// Set by `zionsim merge`: the sweep's points, read back from its shards.
  const SweepPlacement* merged = nullptr;
};

/// `zionsim sweep SPEC.json`: a what-if sweep written as a file.
void add_sweep_command(CLI::App& app, CommandContext& context);

/// `zionsim merge`: joins the shard files of a sweep into what one process
/// prints (experiments/sweep_shards.h).
void add_merge_command(CLI::App& app, CommandContext& context);

/// `zionsim version`: the version and build.
void add_version_command(CLI::App& app, CommandContext& context, std::string version_line);

/// `zionsim validate`: the validation suite against published measurements
/// (validation/case.h, docs/validation.md).
void add_validate_command(CLI::App& app, CommandContext& context);

/// `zionsim list [what]`: the registries (clusters, collective algorithms,
/// models), sorted, with one-line descriptions.
void add_list_command(CLI::App& app, CommandContext& context);

/// `zionsim topology`: build a cluster and print it (summary, json, dot).
void add_topology_command(CLI::App& app, CommandContext& context);

/// `zionsim flows`: point-to-point flows on the network model.
void add_flows_command(CLI::App& app, CommandContext& context);

/// `zionsim whatif`: DLRM training over cluster sizes (the main job).
void add_whatif_command(CLI::App& app, CommandContext& context);

/// `zionsim plan`: the embedding sharding plan of one size.
void add_plan_command(CLI::App& app, CommandContext& context);

/// `zionsim collective`: the nccl-tests table for simulated collectives.
void add_collective_command(CLI::App& app, CommandContext& context);

/// `zionsim run`: simulate a trace.
void add_run_command(CLI::App& app, CommandContext& context);

/// `zionsim calibrate`: fit a GPU profile to measurements.
void add_calibrate_command(CLI::App& app, CommandContext& context);

/// `zionsim calibrate-network`: the network model against nccl-tests runs;
/// fits link parameters and writes a cluster file.
void add_calibrate_network_command(CLI::App& app, CommandContext& context);

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_COMMANDS_H_
