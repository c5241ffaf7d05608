// File: experiments/network_fit.h
//
// The network model against nccl-tests runs of a real cluster (`zionsim
// calibrate-network`; docs/network_calibration.md is the user's guide). Each
// result row is simulated (the same collective, size, ranks and element
// type, with the algorithm whatif would use); the link parameters the rows
// determine are fitted (efficiency and latency of the RoCE fabric for runs
// across servers, plus the share all-to-all traffic gets when other
// collectives were measured too; of NVLink for runs inside one) by
// calibration/black_box_fit.h's coordinate descent, and the rows are
// compared before and after.

#ifndef ZIONSIM_EXPERIMENTS_NETWORK_FIT_H_
#define ZIONSIM_EXPERIMENTS_NETWORK_FIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/black_box_fit.h"
#include "calibration/nccl_tests.h"
#include "topology/cluster_file.h"

namespace zx::experiments {

/// The rows a parameter is fitted to: NVLink's to the runs inside one
/// server, the fabric's to the runs across servers (with all-to-alls next
/// to other collectives, the links' to the others and the all-to-all share
/// to the all-to-alls).
enum class RowSet { kInside, kAcross, kAcrossOthers, kAcrossAllToAll };

/// "the runs inside one server", ...: how the error messages name a set.
std::string_view describe(RowSet rows);

/// One parameter of the cluster file that the fit may move: its key (the
/// fit parameter's name), range and scale, and its rows.
struct NetworkParameter {
  calibration::FitParameter fit;
  RowSet rows;
};

/// What a row set determines: bandwidth (an efficiency) and latency, of
/// NVLink (`nvlink`) and of the fabric (`nic`); across servers with
/// all-to-alls next to other collectives (`separate_all_to_all`), the
/// all-to-alls' own share of the bandwidth; with all-to-alls of two or
/// more group sizes (`peer_gap`), the gap between a rank's peers. In that
/// order.
std::vector<NetworkParameter> network_parameters(bool nvlink, bool nic, bool separate_all_to_all, bool peer_gap);

/// The value of a fitted parameter's key in a cluster spec.
double network_parameter_value(const topology::ClusterSpec& spec, const std::string& key);

/// What the command parses and checks of its own flags, asked for where the
/// fit has always made those checks (--algo once the cluster is loaded,
/// --options once the runs' algorithms are known), so that of two mistakes
/// in one command line the same one is reported. Each may be left empty.
struct NetworkFitHooks {
  /// The algorithms chosen for kinds (--algo: kind -> name), on top of
  /// models::default_collective_algorithms().
  std::function<std::map<std::string, std::string>()> algorithms;
  /// Checks the algorithms the runs use (one per run) against the sources
  /// and options given, and returns the algorithms' options (name -> JSON);
  /// empty: none.
  std::function<std::map<std::string, std::string>(const std::vector<std::string>& used)> algorithm_options;
  /// Called once every input is checked, before the first simulation (the
  /// command opens its output files: an unwritable path costs no fit).
  std::function<void()> before_simulating;
};

struct NetworkFitOptions {
  std::string fit = "auto";  ///< nic, nvlink, none; auto: each the runs allow
  std::string gpu;           ///< the GPU profile (load_cluster_and_gpu); empty: the cluster's
  int threads = 0;           ///< rows simulated in parallel; 0: one per core
  std::vector<std::string> plugins;    ///< collective plug-in libraries
  std::vector<std::string> schedules;  ///< collective schedule files
  /// Progress lines (round, parameter, evaluations) after the fit has run
  /// for 2 s; empty: none.
  std::function<void(const std::string&)> progress;
};

/// A fitted parameter: its value, the cluster's before, and whether it is
/// at the end of its range (the model cannot match the rows there).
struct FittedParameter {
  std::string key;
  double value = 0;
  double was = 0;
  bool at_bound = false;
};

/// One row of a run: measured, simulated before and after the fit.
struct NetworkFitRow {
  std::int64_t size_bytes = 0;
  double measured_us = 0;
  double before_us = 0;
  double after_us = 0;
  double error_percent = 0;  ///< of after against measured, signed
};

/// One run (file) with the algorithm that modelled it, the mean absolute
/// percentage errors before and after, and its worst row after.
struct NetworkFitRun {
  std::string source;
  std::string collective;
  std::string algorithm;
  std::size_t ranks = 0;
  double mape_before_percent = 0;
  double mape_after_percent = 0;
  double worst_after_percent = 0;
  std::int64_t worst_size_bytes = 0;
  std::vector<NetworkFitRow> rows;
};

struct NetworkFitReport {
  std::string cluster;  ///< the cluster's source ("preset zionex")
  int nodes = 0;
  int gpus_per_node = 0;
  std::string fit;  ///< what was fitted: nvlink, nic, "nvlink and nic" or none
  std::vector<FittedParameter> fitted;  ///< none: comparison only
  int evaluations = 0;                  ///< of the rows, by the descent
  std::vector<NetworkFitRun> runs;      ///< in the order given
  /// The cluster the rows were simulated on (its servers: the request's,
  /// else as many as the runs used hosts) with the fitted values set.
  topology::ClusterRequest fitted_request;
};

/// Simulates the rows of `runs` on the cluster of `request` and fits what
/// options.fit asks. Throws zx::InputError for runs the cluster cannot hold,
/// an algorithm a fit cannot move (NCCL's cost model), a --fit the runs
/// do not allow and too few distinct sizes for the parameters.
NetworkFitReport fit_network(const std::vector<calibration::NcclTestsRun>& runs,
                             const topology::ClusterRequest& request, const NetworkFitOptions& options,
                             const NetworkFitHooks& hooks = {});

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_NETWORK_FIT_H_
