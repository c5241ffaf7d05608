// File: calibration/calibrate.h
//
// The calibration pipeline: kernels_ref measurements in, a DeviceProfile
// (models/compute/device_profile.h, schema_version 1, with provenance) and a
// Markdown report out. Each kernel family is reduced to a weighted linear
// least-squares fit of the cost model's own formula (cost_models.h):
//
//   launch      t = c + n x kernel_launch                     (n empty kernels)
//   copy        t = latency + size / bandwidth                (per direction;
//                                                              h2d -> host_to_device)
//   streaming   t = c + bytes / (hbm x hbm_efficiency)        (convert + reduce_add)
//   embedding   t = c + backward x embedding_backward_overhead_ns
//                     + accesses x embedding_row_access_ns
//                     + gathered / (hbm x embedding_hbm_efficiency)
//                     + streamed / (hbm x hbm_efficiency)     (TBE fwd + bwd, uniform;
//                                                              accesses: 1 per forward
//                                                              lookup, 2 per backward)
//               a negative per-access time, or one row size (accesses and
//               bytes not told apart), fits the bytes alone with the base
//               profile's per-access time, saying so; forward or backward
//               runs alone keep the base's backward overhead.
//   gemm        t = 2mnk / (peak x compute_efficiency x Q(m, n) x k / (k + k_half) x u)
//               u = 1 for shapes whose m, n and k are multiples of 16 bytes,
//               else gemm_unaligned_efficiency. Fitted per dtype: on the
//               aligned points Q / e = 1/ce + (k_half/ce) (1/k), e the
//               measured efficiency; then on the unaligned points
//               t = (1/u) x (the aligned model's time), through the origin.
//               Q's output tile: the base profile's, unless a square tile
//               of side 64/128/256 fits the aligned points with under 0.8 of
//               its rms relative residual. The profile takes
//               options.gemm_dtype's.
//
// Validation families use the fitted parameters and are never fitted:
// adagrad_step and a2a_pack/unpack (streaming), dot_interaction (GEMM
// roofline). Hold-out: each fitted family's points are sorted by
// Measurement::key() (kernel and parameters, so the split does not depend
// on file order) and every `holdout_every`-th (the 5th, 10th, ...) is held
// out of the fit and predicted; the report gives the mean absolute
// percentage error and the worst point per family.
//
// A fit that has too few points, fewer than two distinct x, or gives a
// parameter outside its meaning (an efficiency above 1, a negative k_half)
// throws zx::InputError naming the family: no parameter is made up. With
// `partial`, a profile parameter whose family cannot be fitted (a run cut
// short, a kernel that failed its check and was not timed) keeps the base
// profile's value instead, and the report, the profile's provenance
// ("kept") and FamilyReport::kept say which and why.

#ifndef ZIONSIM_CALIBRATION_CALIBRATE_H_
#define ZIONSIM_CALIBRATION_CALIBRATE_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/measurement.h"
#include "models/compute/device_profile.h"

namespace zx::calibration {

struct CalibrationOptions {
  /// Built-in profile giving what is not measured: peaks, HBM bandwidth and
  /// capacity, GEMM tiles.
  std::string base_profile = "h200";
  /// Name of the written profile; empty: "<base_profile>-calibrated".
  std::string profile_name;
  /// The GEMM dtype whose compute_efficiency and k_half go into the profile
  /// (the profile has one; DLRM MLPs run in bf16). Every dtype is reported.
  std::string gemm_dtype = "bf16";
  /// Every n-th point of each fitted family (sorted by key) is held out; 0: none.
  int holdout_every = 5;
  /// Fewest points a fit accepts.
  std::size_t min_points = 3;
  /// GEMMs faster than this are launch-dominated and left out of the fit.
  double gemm_min_time_ns = 20e3;
  /// Fit embeddings on Zipf-distributed indices too (they hit in L2, which
  /// the cost model does not describe); default: uniform only.
  bool fit_zipf = false;
  /// Date recorded in the provenance; empty: the measurement runs' dates.
  std::string date;
  /// Keep the base profile's value of a parameter whose family cannot be
  /// fitted, saying so, rather than refuse the whole calibration.
  bool partial = false;
};

/// One predicted point.
struct PointPrediction {
  std::string source;  ///< file:line
  std::string key;     ///< Measurement::key()
  double measured_ns = 0;
  double predicted_ns = 0;
  double relative_error() const { return (predicted_ns - measured_ns) / measured_ns; }
};

/// One family's fit (or validation) and its errors.
struct FamilyReport {
  std::string family;       ///< "gemm bf16", "embedding", "copy h2d", ...
  bool validation = false;  ///< predicted with other families' parameters, not fitted
  std::string parameters;   ///< "compute_efficiency = 0.712, gemm_k_half = 84.1"
  std::string refused;      ///< why a fit was not made; empty when fitted
  /// With `partial`, a profile parameter's family that could not be fitted:
  /// the base profile's values it keeps ("embedding_hbm_efficiency = 0.6500").
  std::string kept;
  std::size_t fit_points = 0;
  std::size_t excluded_points = 0;  ///< left out by a stated rule (GEMM time floor, Zipf)
  /// On the fit points, in measured time: R^2 and relative residuals.
  double r_squared = 0;
  double rms_relative_residual = 0;
  double max_relative_residual = 0;
  /// Predictions of the fit points (empty for a validation family).
  std::vector<PointPrediction> fitted;
  /// On the held-out points (all points for a validation family).
  std::vector<PointPrediction> held_out;
  double holdout_mape = 0;   ///< fraction: 0.05 is 5%
  double holdout_worst = 0;  ///< largest |relative error|
};

/// One dtype's GEMM fit.
struct GemmFit {
  double compute_efficiency = 0;
  double k_half = 0;
  /// Fitted on the unaligned points (models::gemm_aligned_bytes, models/compute/kernel_shapes.h);
  /// the base profile's value when unaligned_fitted is false.
  double unaligned_efficiency = 1;
  bool unaligned_fitted = false;
  /// The output tile of the wave quantisation: the base profile's, or the
  /// candidate that fits the aligned points clearly better; tile_rms is its
  /// rms relative residual there.
  int tile_m = 0;
  int tile_n = 0;
  double tile_rms = 0;
  std::size_t aligned_points = 0;    ///< fit points of compute_efficiency, k_half
  std::size_t unaligned_points = 0;  ///< fit points of unaligned_efficiency
};

struct CalibrationResult {
  models::DeviceProfile profile;  ///< as parse_device_profile reads profile_json back
  std::string profile_json;       ///< schema_version 1, with "provenance"
  std::string report_markdown;
  std::vector<FamilyReport> families;
  std::size_t measurements = 0;
  /// The fitted GEMM parameters of every GEMM dtype that could be fitted.
  std::map<std::string, GemmFit> gemm_by_dtype;
  /// Implied embedding_hbm_efficiency per (kernel, weight dtype, D, L): the
  /// bandwidth "as a function of D, L and dtype" the report tabulates.
  std::map<std::string, double> embedding_efficiency_by_shape;

  /// The family named `name`, or nullptr.
  const FamilyReport* family(std::string_view name) const;
};

/// Calibrates from measurements already read.
CalibrationResult calibrate(const MeasurementSet& measurements, const CalibrationOptions& options);

/// Reads `measurement_paths` (files, or directories of *.jsonl) and calibrates.
/// Throws zx::InputError for bad files and refused fits.
CalibrationResult calibrate(const std::vector<std::string>& measurement_paths,
                            const CalibrationOptions& options);

/// What write_calibration does about plots (calibration/plots.h).
enum class PlotMode {
  kNone,     ///< no plot files
  kScripts,  ///< data and gnuplot scripts only
  kDraw,     ///< also run gnuplot when it is on PATH (else as kScripts, and the report says so)
};

/// Writes the profile and, when report_path is not empty, the report; with
/// plots, a directory "<report without .md>_plots/" beside the report holds
/// per family its points (.dat), a gnuplot script (.gp) and, drawn, an SVG
/// that the report's "Plots" section shows. Throws zx::InputError if a file
/// cannot be written.
void write_calibration(const CalibrationResult& result, const std::string& profile_path,
                       const std::string& report_path, PlotMode plots = PlotMode::kDraw);

/// The report's text for a report at `report_path`, with its "Plots"
/// section; writes the plot directory beside it as write_calibration does.
/// For a caller that writes the report itself (the CLI: to a temporary file
/// put in place once complete).
std::string report_with_plots(const CalibrationResult& result, const std::string& report_path,
                              PlotMode plots = PlotMode::kDraw);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_CALIBRATE_H_
