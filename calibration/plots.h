// File: calibration/plots.h
//
// Predicted-versus-measured plots of a calibration, one per kernel family,
// for gnuplot: the points as a whitespace-separated data file (measured ns,
// predicted ns, 0 for a fit point or 1 for a held-out point, the point's
// key) and a script that draws them on log-log axes with the line
// predicted = measured and a +/-10% band, fit and held-out points in two
// styles, as SVG. The text of both is a pure function of the family's
// report, so it is deterministic; write_calibration (calibrate.h) writes the
// files and runs gnuplot when it is on PATH.

#ifndef ZIONSIM_CALIBRATION_PLOTS_H_
#define ZIONSIM_CALIBRATION_PLOTS_H_

#include <string>

#include "calibration/calibrate.h"

namespace zx::calibration {

/// A file-name stem for a family: "gemm bf16" -> "gemm_bf16",
/// "adagrad_step (validation)" -> "adagrad_step_validation": letters,
/// digits, '-' and '_' kept, each run of anything else one '_' (none at the
/// ends).
std::string plot_stem(const std::string& family);

/// The data file: a comment header, then one line per point (fit points
/// first, then held-out), keys with whitespace replaced by '_'.
std::string plot_data(const FamilyReport& family);

/// The gnuplot script reading `data_file` and writing `svg_file` (both
/// relative to the directory gnuplot runs in).
std::string gnuplot_script(const FamilyReport& family, const std::string& data_file, const std::string& svg_file);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_PLOTS_H_
