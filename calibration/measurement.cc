// File: calibration/measurement.cc
//
// JSON-lines reader for kernels_ref measurements; see measurement.h and
// docs/calibration.md. Each line is parsed and validated on its own through
// base/json_reader.h with source "file:line", so every diagnostic names the
// line; problems of all lines are collected before one InputError is thrown.

#include "calibration/measurement.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"

namespace zx::calibration {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Required parameters of each kernel: integers (positive) and labels (one of
// a set). Other parameters are kept but not required (origin, zipf_alpha, ...).
struct KernelSpec {
  const char* kernel;
  std::vector<const char*> integers;
  std::vector<std::pair<const char*, std::vector<std::string>>> labels;
};

const std::vector<std::string> kGemmTypes = {"bf16", "fp16", "fp32", "tf32"};
const std::vector<std::string> kStorageTypes = {"bf16", "fp16", "fp32"};

const std::vector<KernelSpec>& specs() {
  static const std::vector<KernelSpec> kSpecs = {
      {"gemm", {"m", "n", "k", "batch"}, {{"dtype", kGemmTypes}}},
      {"dot_interaction", {"batch", "features", "dim"}, {{"dtype", kGemmTypes}}},
      {"tbe_forward",
       {"tables", "rows", "dim", "pooling", "batch", "index_bytes"},
       {{"weight_dtype", kStorageTypes},
        {"output_dtype", kStorageTypes},
        {"distribution", {"uniform", "zipf"}}}},
      {"tbe_backward_adagrad",
       {"tables", "rows", "dim", "pooling", "batch", "index_bytes"},
       {{"weight_dtype", kStorageTypes},
        {"output_dtype", kStorageTypes},
        {"distribution", {"uniform", "zipf"}}}},
      {"copy", {"size_bytes"}, {{"direction", {"d2d", "d2h", "h2d"}}}},
      {"launch", {"kernels"}, {}},
      {"convert", {"elements"}, {{"from", kStorageTypes}, {"to", kStorageTypes}}},
      {"reduce_add", {"elements"}, {{"dtype", kStorageTypes}}},
      {"adagrad_step", {"params"}, {{"optimizer", {"adagrad"}}}},
      {"a2a_pack", {"tables", "batch", "dim", "ranks", "elements"}, {{"dtype", kStorageTypes}}},
      {"a2a_unpack", {"tables", "batch", "dim", "ranks", "elements"}, {{"dtype", kStorageTypes}}},
  };
  return kSpecs;
}

// Marks every key of `value` known: records carry extra fields for people
// (formulas, achieved rates, clocks) that calibration does not read.
void allow_all(json::ObjectReader& reader, const nlohmann::json& value) {
  if (!value.is_object()) return;
  for (const auto& item : value.items()) reader.allow(item.key());
}

void read_provenance(json::ObjectReader& root, const nlohmann::json& value,
                     const std::string& source, MeasurementSet& set) {
  Provenance p;
  p.source = source;
  root.require("gpu");
  root.read_string("gpu", p.gpu);
  root.read_int("sm_count", p.sm_count, json::IntRange{1, 4096});
  root.read_string("driver_version", p.driver_version);
  root.read_string("cuda_runtime_version", p.cuda_runtime_version);
  root.read_string("git_commit", p.git_commit);
  root.read_string("date", p.date);
  allow_all(root, value);
  set.provenances.push_back(std::move(p));
}

void read_check(json::ObjectReader& root, const nlohmann::json& value, const std::string& source,
                MeasurementSet& set) {
  root.require("kernel");
  root.require("passed");
  bool passed = false;
  MeasurementSet::FailedCheck check{"", source, {}, {}};
  root.read_string("kernel", check.kernel);
  // "scope": the measurement parameters the check stands for, each a
  // number or a string; without it, the check stands for the whole kernel.
  if (value.contains("scope")) {
    if (auto scope = root.object("scope")) {
      for (const auto& item : value.at("scope").items()) {
        if (item.value().is_number()) {
          check.numbers[item.key()] = item.value().get<double>();
        } else if (item.value().is_string()) {
          check.labels[item.key()] = item.value().get<std::string>();
        } else {
          scope->error(item.key(), fmt::format("expected a number or a string, got {}", json::describe(item.value())));
        }
        scope->allow(item.key());
      }
      scope->finish();
    }
  }
  if (root.read_bool("passed", passed)) {
    ++(passed ? set.checks_passed : set.checks_failed);
    if (!passed) set.failed_checks.push_back(std::move(check));
  }
  allow_all(root, value);
}

// A kernel that failed its check against the CPU reference computes
// something else: its times say nothing of the kernel the cost model prices.
// (kernels_ref never times what a failed check covers; a file that does is
// refused.)
void refuse_failed_kernels(const MeasurementSet& set, std::vector<Diagnostic>& errors) {
  for (const MeasurementSet::FailedCheck& check : set.failed_checks) {
    std::size_t count = 0;
    std::string first;
    for (const Measurement& m : set.measurements) {
      if (!check.covers(m)) continue;
      if (count++ == 0) first = m.source;
    }
    if (count == 0) continue;
    errors.push_back({check.source, "",
                      fmt::format("kernel '{}'{} failed its check against the CPU reference, yet {} measurement(s) "
                                  "of it follow (first at {}); a wrong kernel's times cannot be fitted: fix it and "
                                  "rerun kernels_ref, or leave its measurements out",
                                  check.kernel, check.scope_text(), count, first)});
  }
}

}  // namespace

bool MeasurementSet::FailedCheck::covers(const Measurement& m) const {
  if (m.kernel != kernel) return false;
  for (const auto& [key, v] : numbers) {
    const auto it = m.numbers.find(key);
    if (it == m.numbers.end() || it->second != v) return false;
  }
  for (const auto& [key, v] : labels) {
    const auto it = m.labels.find(key);
    if (it == m.labels.end() || it->second != v) return false;
  }
  return true;
}

std::string MeasurementSet::FailedCheck::scope_text() const {
  std::vector<std::string> parts;
  for (const auto& [key, v] : labels) parts.push_back(fmt::format("{} {}", key, v));
  for (const auto& [key, v] : numbers) parts.push_back(fmt::format("{} {}", key, v));
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", "));
}

namespace {

void read_measurement(json::ObjectReader& root, const nlohmann::json& value,
                      const std::string& source, MeasurementSet& set) {
  Measurement m;
  m.source = source;
  std::vector<std::string> names = kernel_names();
  root.require("kernel");
  root.require("params");
  root.require("time_ns");
  if (!root.read_enum("kernel", m.kernel, names)) {
    allow_all(root, value);
    return;
  }
  const json::NumberRange positive{0.0, kInfinity, /*exclusive=*/true};
  const json::NumberRange non_negative{0.0, kInfinity};
  if (auto t = root.object("time_ns")) {
    t->require("median");
    const bool median = t->read_number("median", m.median_ns, positive);
    if (t->read_number("p10", m.p10_ns, positive) && median && m.p10_ns > m.median_ns) {
      t->error("p10", fmt::format("expected p10 <= median ({}), got {}", m.median_ns, m.p10_ns));
    }
    if (t->read_number("p90", m.p90_ns, positive) && median && m.p90_ns < m.median_ns) {
      t->error("p90", fmt::format("expected p90 >= median ({}), got {}", m.median_ns, m.p90_ns));
    }
    t->allow("min");
    t->allow("max");
    t->finish();
  }
  root.read_number("bytes", m.bytes, non_negative);
  root.read_number("flops", m.flops, non_negative);
  const KernelSpec& spec = *std::find_if(specs().begin(), specs().end(),
                                         [&](const KernelSpec& s) { return m.kernel == s.kernel; });
  if (auto params = root.object("params")) {
    for (const char* key : spec.integers) {
      params->require(key);
      std::int64_t v = 0;
      if (params->read_int(key, v, json::IntRange{1})) {
        m.numbers[key] = static_cast<double>(v);
      }
    }
    for (const auto& [key, allowed] : spec.labels) {
      params->require(key);
      std::string v;
      if (params->read_enum(key, v, allowed)) m.labels[key] = v;
    }
    // Optional extras: numbers and strings are kept, anything else is an error.
    const nlohmann::json& raw_params = value.at("params");
    for (const auto& item : raw_params.items()) {
      if (m.numbers.count(item.key()) || m.labels.count(item.key())) continue;
      if (item.value().is_number()) {
        m.numbers[item.key()] = item.value().get<double>();
      } else if (item.value().is_string()) {
        m.labels[item.key()] = item.value().get<std::string>();
      } else if (std::find_if(spec.integers.begin(), spec.integers.end(), [&](const char* k) {
                   return item.key() == k;
                 }) == spec.integers.end()) {
        params->error(item.key(), fmt::format("expected a number or a string, got {}",
                                              json::describe(item.value())));
      }
      params->allow(item.key());
    }
    params->finish();
  }
  for (const char* key : {"warmup", "repetitions", "bytes_formula", "flops_formula", "achieved"}) {
    root.allow(key);
  }
  root.finish();
  set.measurements.push_back(std::move(m));
}

// Parses one line into `set`, appending its problems to `errors`.
void parse_line(std::string_view line, const std::string& source, MeasurementSet& set,
                std::vector<Diagnostic>& errors) {
  try {
    json::Document doc = json::Document::parse(line, source);
    json::ObjectReader root = doc.root();
    std::string record;
    root.require("record");
    if (root.valid() && root.read_enum("record", record, {"check", "measurement", "provenance"})) {
      if (record == "provenance") {
        read_provenance(root, doc.value(), source, set);
      } else if (record == "check") {
        read_check(root, doc.value(), source, set);
      } else {
        read_measurement(root, doc.value(), source, set);
      }
    }
    const auto& list = doc.diagnostics().list();
    errors.insert(errors.end(), list.begin(), list.end());
  } catch (const InputError& e) {
    // Syntax errors: the parser says "line 1, column N" of the one-line text.
    for (Diagnostic d : e.diagnostics()) {
      if (d.location.rfind("line 1, ", 0) == 0) d.location = d.location.substr(8);
      d.source = source;
      errors.push_back(std::move(d));
    }
  }
}

}  // namespace

std::string Measurement::key() const {
  std::string text = kernel;
  for (const auto& [k, v] : labels) text += fmt::format(" {}={}", k, v);
  for (const auto& [k, v] : numbers) text += fmt::format(" {}={}", k, v);
  return text;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const KernelSpec& s : specs()) names.emplace_back(s.kernel);
  std::sort(names.begin(), names.end());
  return names;
}

MeasurementSet parse_measurements(std::string_view text, const std::string& source) {
  MeasurementSet set;
  set.files.push_back(source);
  std::vector<Diagnostic> errors;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank lines
    parse_line(line, fmt::format("{}:{}", source, line_number), set, errors);
  }
  if (errors.empty() && set.provenances.empty()) {
    errors.push_back({source, "",
                      "expected a {\"record\": \"provenance\"} line (the GPU, driver and "
                      "commit of the run), found none"});
  }
  if (errors.empty() && set.measurements.empty()) {
    errors.push_back(
        {source, "", "expected at least one {\"record\": \"measurement\"} line, found none"});
  }
  if (errors.empty()) refuse_failed_kernels(set, errors);
  if (!errors.empty()) throw InputError(std::move(errors));
  return set;
}

MeasurementSet read_measurements(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::vector<Diagnostic> errors;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".jsonl") {
          found.push_back(entry.path().string());
        }
      }
      std::sort(found.begin(), found.end());
      if (found.empty())
        errors.push_back(
            {path, "", "expected *.jsonl measurement files in this directory, found none"});
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  if (paths.empty())
    errors.push_back({"--measurements", "", "expected at least one file or directory"});
  MeasurementSet all;
  for (const std::string& file : files) {
    std::string text;
    try {
      text = read_input_file(file);  // bounded, regular files only, gzip inflated
    } catch (const InputError& e) {
      errors.insert(errors.end(), e.diagnostics().begin(), e.diagnostics().end());
      continue;
    }
    try {
      MeasurementSet one = parse_measurements(text, file);
      all.files.push_back(file);
      all.provenances.insert(all.provenances.end(), one.provenances.begin(), one.provenances.end());
      all.measurements.insert(all.measurements.end(),
                              std::make_move_iterator(one.measurements.begin()),
                              std::make_move_iterator(one.measurements.end()));
      all.checks_passed += one.checks_passed;
      all.checks_failed += one.checks_failed;
      all.failed_checks.insert(all.failed_checks.end(), one.failed_checks.begin(), one.failed_checks.end());
    } catch (const InputError& e) {
      errors.insert(errors.end(), e.diagnostics().begin(), e.diagnostics().end());
    }
  }
  // A check in one file, its measurements in another.
  if (errors.empty()) refuse_failed_kernels(all, errors);
  if (!errors.empty()) throw InputError(std::move(errors));
  return all;
}

}  // namespace zx::calibration
