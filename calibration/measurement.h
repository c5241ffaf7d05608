// File: calibration/measurement.h
//
// Reading kernels_ref measurement files: JSON lines, one record per line
// (docs/calibration.md). Three record kinds: "provenance" (the GPU, driver,
// CUDA, commit and date of a run), "check" (a kernel compared with its CPU
// reference) and "measurement" (a kernel, its parameters, the median and
// p10/p90 of its time, the bytes and FLOPs it did by a stated formula).
//
// Validated like every input: every problem of a file is collected and
// thrown as one zx::InputError whose diagnostics name "file:line" and the
// JSON pointer, what was expected and what was found:
//
//   h200.jsonl:12: /time_ns/median: expected a number > 0, got -3
//   h200.jsonl:14: /kernel: unknown kernel 'gem' (did you mean 'gemm'?)

#ifndef ZIONSIM_CALIBRATION_MEASUREMENT_H_
#define ZIONSIM_CALIBRATION_MEASUREMENT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace zx::calibration {

/// Where and on what a file's measurements were taken.
struct Provenance {
  std::string source;  ///< "file:line" of the record
  std::string gpu;
  int sm_count = 0;
  std::string driver_version;
  std::string cuda_runtime_version;
  std::string git_commit;
  std::string date;
};

struct Measurement {
  std::string source;                         ///< "file:line"
  std::string kernel;                         ///< "gemm", "tbe_forward", ... (kernel_names())
  std::map<std::string, double> numbers;      ///< numeric parameters
  std::map<std::string, std::string> labels;  ///< string parameters (dtype, ...)
  double median_ns = 0;
  double p10_ns = 0;
  double p90_ns = 0;
  double bytes = 0;
  double flops = 0;

  /// A parameter the reader has checked is present (throws std::out_of_range otherwise).
  double number(const std::string& key) const { return numbers.at(key); }
  const std::string& label(const std::string& key) const { return labels.at(key); }
  /// Kernel and parameters as one stable string: the sort key of the hold-out split.
  std::string key() const;
};

struct MeasurementSet {
  std::vector<std::string> files;
  std::vector<Provenance> provenances;
  std::vector<Measurement> measurements;
  int checks_passed = 0;
  int checks_failed = 0;
  /// A failed check: the kernel, and the measurements it condemns (all of
  /// the kernel's, or those whose parameters match every entry of its
  /// "scope": {"dtype": "bf16"} leaves the other dtypes' GEMMs standing).
  struct FailedCheck {
    std::string kernel;
    std::string source;                         ///< "file:line"
    std::map<std::string, double> numbers;      ///< scope entries that are numbers
    std::map<std::string, std::string> labels;  ///< scope entries that are strings
    /// Whether `m` is of this kernel and within the scope.
    bool covers(const Measurement& m) const;
    /// " (dtype bf16)" for a scoped check, "" for a whole kernel's.
    std::string scope_text() const;
  };
  std::vector<FailedCheck> failed_checks;
};

/// The kernels the reader knows, with their required parameters.
std::vector<std::string> kernel_names();

/// Parses one file's text; `source` names it in diagnostics.
MeasurementSet parse_measurements(std::string_view text, const std::string& source);

/// Reads files, and *.jsonl files in directories (sorted by name), into one
/// set. Throws zx::InputError with every problem found.
MeasurementSet read_measurements(const std::vector<std::string>& paths);

}  // namespace zx::calibration

#endif  // ZIONSIM_CALIBRATION_MEASUREMENT_H_
