// File: calibration/calibrate.cc
//
// The family fits, the hold-out split, the profile and the report; see
// calibrate.h for the models. The shape arithmetic it fits with (TBE byte
// counts, GEMM tile and wave quantisation, GEMM alignment) is the cost
// models' own, from models/compute/kernel_shapes.h. Deterministic: points
// are sorted by key before splitting and fitting, and the output does not
// depend on the order of files or lines.

#include "calibration/calibrate.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "calibration/linear_fit.h"
#include "calibration/plots.h"
#include "models/compute/kernel_shapes.h"

namespace zx::calibration {
namespace {

using models::DataType;
using models::DeviceProfile;

[[noreturn]] void refuse(const std::string& family, std::string message) {
  throw InputError(Diagnostic{"calibration", family, std::move(message)});
}

using Points = std::vector<const Measurement*>;
using Predictor = std::function<double(const Measurement&)>;

// Sorted by key, then by time for repeated keys (the same shape measured
// twice), so the split and the fit ignore the order of files and lines.
Points sorted(Points points) {
  std::sort(points.begin(), points.end(), [](const Measurement* a, const Measurement* b) {
    const std::string ka = a->key(), kb = b->key();
    if (ka != kb) return ka < kb;
    if (a->median_ns != b->median_ns) return a->median_ns < b->median_ns;
    return a->source < b->source;
  });
  return points;
}

struct Split {
  Points fit;
  Points held_out;
};

// Every n-th point (1-based: the n-th, 2n-th, ...) is held out.
Split split(const Points& points, int every) {
  Split s;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const bool held = every > 1 && (i + 1) % static_cast<std::size_t>(every) == 0;
    (held ? s.held_out : s.fit).push_back(points[i]);
  }
  return s;
}

// Fills the quality fields of `report` from predictions on fit and held-out points.
void evaluate(FamilyReport& report, const Points& fit, const Points& held_out,
              const Predictor& predict) {
  report.fit_points = fit.size();
  double mean = 0;
  for (const Measurement* m : fit) mean += m->median_ns;
  if (!fit.empty()) mean /= static_cast<double>(fit.size());
  double ss_res = 0, ss_tot = 0, sum_sq = 0;
  for (const Measurement* m : fit) {
    const double p = predict(*m);
    const double rel = (p - m->median_ns) / m->median_ns;
    ss_res += (p - m->median_ns) * (p - m->median_ns);
    ss_tot += (m->median_ns - mean) * (m->median_ns - mean);
    sum_sq += rel * rel;
    report.max_relative_residual = std::max(report.max_relative_residual, std::abs(rel));
    report.fitted.push_back(PointPrediction{m->source, m->key(), m->median_ns, p});
  }
  if (!fit.empty()) {
    report.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
    report.rms_relative_residual = std::sqrt(sum_sq / static_cast<double>(fit.size()));
  }
  double sum_abs = 0;
  for (const Measurement* m : held_out) {
    PointPrediction p{m->source, m->key(), m->median_ns, predict(*m)};
    sum_abs += std::abs(p.relative_error());
    report.holdout_worst = std::max(report.holdout_worst, std::abs(p.relative_error()));
    report.held_out.push_back(std::move(p));
  }
  if (!held_out.empty()) report.holdout_mape = sum_abs / static_cast<double>(held_out.size());
}

std::vector<double> column(const Points& points,
                           const std::function<double(const Measurement&)>& f) {
  std::vector<double> out;
  out.reserve(points.size());
  for (const Measurement* m : points) out.push_back(f(*m));
  return out;
}

// Bytes of a GEMM element in memory: tf32 is stored as fp32.
int gemm_element_bytes(const std::string& dtype) {
  return models::element_bytes(models::parse_data_type(dtype));
}

// The TBE kernel's traffic as the cost model counts it (and kernels_ref
// reports it): models::tbe_forward_traffic and tbe_backward_traffic of the
// measured shape.
models::EmbeddingTraffic tbe_traffic(const Measurement& m) {
  const models::EmbeddingShape shape{.batch = static_cast<std::int64_t>(m.number("batch")),
                                     .tables = static_cast<std::int64_t>(m.number("tables")),
                                     .pooling = m.number("pooling"),
                                     .dim = static_cast<std::int64_t>(m.number("dim")),
                                     .weight_type = models::parse_data_type(m.label("weight_dtype")),
                                     .output_type = models::parse_data_type(m.label("output_dtype")),
                                     .index_bytes = static_cast<int>(m.number("index_bytes"))};
  return m.kernel == "tbe_forward" ? models::tbe_forward_traffic(shape) : models::tbe_backward_traffic(shape);
}

Points select(const MeasurementSet& set, const std::function<bool(const Measurement&)>& keep) {
  Points out;
  for (const Measurement& m : set.measurements) {
    if (keep(m)) out.push_back(&m);
  }
  return sorted(std::move(out));
}

// Why `family` was not fitted, from the refusal: its message, after the
// part of the fit it names when that is not the family itself ("gemm fp32
// (aligned shapes): expected at least 3 points to fit, got 0").
std::string refusal_reason(const InputError& e, const std::string& family) {
  const Diagnostic& d = e.diagnostics().back();
  return d.location.empty() || d.location == family ? d.message : d.location + ": " + d.message;
}

// GEMM output tiles the fit tries (wave quantisation), square: cuBLAS's
// kernels use sides of 64 to 256 (CUTLASS's sm80 and sm90 tile shapes).
// Square only, because a non-square tile's orientation differs between the
// suite's column-major calls (m, n as cuBLAS takes them) and the cost
// model's row-major layers (PyTorch hands cuBLAS m = out, n = batch).
constexpr int kGemmTileCandidates[] = {64, 128, 256};
// A tile replaces the base profile's when its rms relative residual is
// under this share of the base tile's: noise alone does not switch it.
constexpr double kTileSwitchShare = 0.8;

std::string percent(double fraction) { return fmt::format("{:.2f}%", 100.0 * fraction); }

// State shared by the fits, in the order they run.
struct Fitter {
  const MeasurementSet& set;
  const CalibrationOptions& options;
  DeviceProfile profile;
  CalibrationResult result;
  double hbm_bytes_per_ns = 0;  // peak HBM, bytes per ns (= GB/s)
  double launch_ns = 0;
  double stream_intercept_ns = 0;
  double stream_bytes_per_ns = 0;
  int fitted_parameter_families = 0;  // families of profile parameters fitted, not kept

  void add(FamilyReport report) { result.families.push_back(std::move(report)); }

  // Runs the fit of a profile parameter's family. When it cannot be fitted:
  // with options.partial, `keep` sets the base profile's value in its place
  // and says what it kept; else the error stands, pointing at --partial.
  void required(const std::string& family, const std::function<void()>& fit,
                const std::function<std::string()>& keep) {
    const std::size_t before = result.families.size();
    try {
      fit();
      ++fitted_parameter_families;
    } catch (const InputError& e) {
      std::vector<Diagnostic> diagnostics = e.diagnostics();
      if (!options.partial) {
        diagnostics.back().message += fmt::format(
            "; with --partial, base profile '{}''s value is kept and the rest fitted", options.base_profile);
        throw InputError(std::move(diagnostics));
      }
      result.families.resize(before);
      FamilyReport r;
      r.family = family;
      r.refused = refusal_reason(e, family);
      r.kept = keep() + fmt::format(" (from '{}')", options.base_profile);
      add(std::move(r));
    }
  }

  void fit_launch() {
    const Points points = select(set, [](const Measurement& m) { return m.kernel == "launch"; });
    const Split s = split(points, options.holdout_every);
    const LinearFit f =
        fit_linear(column(s.fit, [](const Measurement& m) { return m.number("kernels"); }),
                   column(s.fit, [](const Measurement& m) { return m.median_ns; }), "launch",
                   options.min_points);
    if (!(f.slope > 0))
      refuse("launch", fmt::format("expected a positive time per launch, fitted {} ns", f.slope));
    launch_ns = f.slope;
    FamilyReport r;
    r.family = "launch";
    r.parameters = fmt::format("kernel_launch = {:.1f} ns per kernel (event overhead {:.1f} ns)",
                               f.slope, f.intercept);
    evaluate(r, s.fit, s.held_out,
             [f](const Measurement& m) { return f.predict(m.number("kernels")); });
    add(std::move(r));
  }

  // Returns GB/s; `required` copies refuse, others report.
  double fit_copy(const std::string& direction, bool required) {
    const std::string family = "copy " + direction;
    const Points points = select(set, [&](const Measurement& m) {
      return m.kernel == "copy" && m.label("direction") == direction;
    });
    FamilyReport r;
    r.family = family;
    try {
      const Split s = split(points, options.holdout_every);
      const LinearFit f =
          fit_linear(column(s.fit, [](const Measurement& m) { return m.number("size_bytes"); }),
                     column(s.fit, [](const Measurement& m) { return m.median_ns; }), family,
                     options.min_points);
      if (!(f.slope > 0))
        refuse(family, fmt::format("expected a positive time per byte, fitted {}", f.slope));
      r.parameters =
          fmt::format("bandwidth = {:.2f} GB/s, latency = {:.0f} ns", 1.0 / f.slope, f.intercept);
      evaluate(r, s.fit, s.held_out,
               [f](const Measurement& m) { return f.predict(m.number("size_bytes")); });
      add(std::move(r));
      return 1.0 / f.slope;
    } catch (const InputError& e) {
      if (required) throw;
      r.refused = refusal_reason(e, family);
      add(std::move(r));
      return 0;
    }
  }

  void fit_streaming() {
    const Points points = select(set, [](const Measurement& m) {
      return m.kernel == "convert" || m.kernel == "reduce_add";
    });
    const Split s = split(points, options.holdout_every);
    const LinearFit f = fit_linear(column(s.fit, [](const Measurement& m) { return m.bytes; }),
                                   column(s.fit, [](const Measurement& m) { return m.median_ns; }),
                                   "streaming (convert, reduce_add)", options.min_points);
    if (!(f.slope > 0))
      refuse("streaming", fmt::format("expected a positive time per byte, fitted {}", f.slope));
    stream_bytes_per_ns = 1.0 / f.slope;
    stream_intercept_ns = f.intercept;
    const double efficiency = stream_bytes_per_ns / hbm_bytes_per_ns;
    if (!(efficiency > 0 && efficiency <= 1)) {
      refuse("streaming",
             fmt::format("expected hbm_efficiency in (0, 1], fitted {:.3f} ({:.0f} GB/s of a "
                         "{:.0f} GB/s peak in profile '{}')",
                         efficiency, stream_bytes_per_ns, hbm_bytes_per_ns, options.base_profile));
    }
    profile.hbm_efficiency = efficiency;
    FamilyReport r;
    r.family = "streaming";
    r.parameters = fmt::format("hbm_efficiency = {:.4f} ({:.0f} GB/s), intercept {:.0f} ns",
                               efficiency, stream_bytes_per_ns, f.intercept);
    const Predictor predict = [f](const Measurement& m) { return f.predict(m.bytes); };
    evaluate(r, s.fit, s.held_out, predict);
    add(std::move(r));
    for (const char* kernel : {"adagrad_step", "a2a_pack", "a2a_unpack"}) {
      const Points v = select(set, [&](const Measurement& m) { return m.kernel == kernel; });
      if (v.empty()) continue;
      FamilyReport vr;
      vr.family = std::string(kernel) + " (validation)";
      vr.validation = true;
      vr.parameters = "streaming fit";
      evaluate(vr, {}, v, predict);
      add(std::move(vr));
    }
  }

  void fit_embedding() {
    std::size_t excluded = 0;
    const Points points = select(set, [&](const Measurement& m) {
      const bool tbe = m.kernel == "tbe_forward" || m.kernel == "tbe_backward_adagrad";
      if (tbe && m.label("distribution") != "uniform" && !options.fit_zipf) {
        ++excluded;
        return false;
      }
      return tbe;
    });
    const Split s = split(points, options.holdout_every);
    // y = t - streamed / streaming bandwidth
    //   = c + backward x backward_overhead + accesses x row_access_ns
    //       + gathered x (1 / gather bandwidth),
    // weighted by 1 / t so residuals are relative to the measured time;
    // `backward` is 1 for a backward point, 0 for a forward one.
    const auto streamed_ns = [this](const Measurement& m) {
      return tbe_traffic(m).streamed / stream_bytes_per_ns;
    };
    const auto is_backward = [](const Measurement& m) { return m.kernel == "tbe_backward_adagrad" ? 1.0 : 0.0; };
    const std::vector<double> y =
        column(s.fit, [&](const Measurement& m) { return m.median_ns - streamed_ns(m); });
    const std::vector<double> weights = column(s.fit, [](const Measurement& m) { return 1.0 / m.median_ns; });
    const std::vector<double> gathered =
        column(s.fit, [](const Measurement& m) { return tbe_traffic(m).gathered; });
    const std::vector<double> accesses =
        column(s.fit, [](const Measurement& m) { return tbe_traffic(m).accesses; });
    const std::vector<double> backward = column(s.fit, is_backward);
    // Both directions measured: each its own fixed time.
    const bool both = std::count(backward.begin(), backward.end(), 1.0) > 0 &&
                      std::count(backward.begin(), backward.end(), 0.0) > 0;
    double access_ns = profile.embedding_row_access_ns;
    // Fits with the per-access time free, or held at the base profile's.
    const auto solve = [&](bool fit_access) {
      std::vector<std::vector<double>> columns;
      if (both) columns.push_back(backward);
      if (fit_access) columns.push_back(accesses);
      columns.push_back(gathered);
      std::vector<double> rest = y;
      if (!fit_access) {
        for (std::size_t i = 0; i < rest.size(); ++i) rest[i] -= accesses[i] * access_ns;
      }
      return fit_multilinear_weighted(columns, rest, weights, "embedding", options.min_points);
    };
    MultiLinearFit f;
    std::string access_note;
    const auto kept = [&](const std::string& why) {
      access_note = fmt::format("row_access = {:.4f} ns kept from '{}': {}", access_ns,
                                options.base_profile, why);
      f = solve(false);
    };
    try {
      f = solve(true);
      const double fitted = f.coefficients[both ? 1 : 0];
      if (fitted >= 0) {
        access_ns = fitted;
        access_note = fmt::format("row_access = {:.4f} ns ({:.1f} G accesses/s)", access_ns,
                                  access_ns > 0 ? 1.0 / access_ns : 0.0);
      } else {
        kept(fmt::format("fitted {:.4f} ns < 0 (time per access)", fitted));
      }
    } catch (const InputError& e) {
      // One row size only: accesses and bytes are not told apart.
      kept(e.diagnostics().back().message);
    }
    const double intercept = f.intercept;
    const double backward_extra_ns = both ? f.coefficients.front() : 0.0;
    const double ns_per_byte = f.coefficients.back();
    if (!(ns_per_byte > 0))
      refuse("embedding",
             fmt::format("expected a positive time per gathered byte, fitted {}", ns_per_byte));
    const double efficiency = 1.0 / ns_per_byte / hbm_bytes_per_ns;
    if (!(efficiency <= 1)) {
      refuse("embedding",
             fmt::format("expected embedding_hbm_efficiency in (0, 1], fitted {:.3f}: the gathers "
                         "ran faster than peak HBM (rows cached in L2? use uniform indices and "
                         "tables larger than L2)",
                         efficiency));
    }
    std::string overhead_note;
    if (!both) {
      overhead_note = fmt::format("backward_overhead = {:.0f} ns kept from '{}': needs forward and backward runs",
                                  profile.embedding_backward_overhead_ns, options.base_profile);
    } else if (backward_extra_ns < 0) {
      profile.embedding_backward_overhead_ns = 0;
      overhead_note = fmt::format("backward_overhead = 0 ns (fitted {:.0f} ns < 0)", backward_extra_ns);
    } else {
      profile.embedding_backward_overhead_ns = backward_extra_ns;
      overhead_note = fmt::format("backward_overhead = {:.0f} ns", backward_extra_ns);
    }
    profile.embedding_hbm_efficiency = efficiency;
    profile.embedding_row_access_ns = access_ns;
    const auto gather_ns = [=](const Measurement& m) {
      const models::EmbeddingTraffic t = tbe_traffic(m);
      return intercept + (m.kernel == "tbe_backward_adagrad" ? backward_extra_ns : 0.0) +
             t.accesses * access_ns + t.gathered * ns_per_byte;
    };
    const Predictor predict = [gather_ns, streamed_ns](const Measurement& m) {
      return gather_ns(m) + streamed_ns(m);
    };
    FamilyReport r;
    r.family = "embedding";
    r.excluded_points = excluded;
    r.parameters = fmt::format(
        "embedding_hbm_efficiency = {:.4f} ({:.0f} GB/s gathered), {}, {}, intercept {:.0f} ns",
        efficiency, 1.0 / ns_per_byte, access_note, overhead_note, intercept);
    evaluate(r, s.fit, s.held_out, predict);
    add(std::move(r));
    // The effective gather bandwidth of each point, per-access cost
    // included: its time with the fitted intercept and streaming time taken
    // off, as a fraction of peak HBM.
    for (const Measurement* m : points) {
      const models::EmbeddingTraffic t = tbe_traffic(*m);
      const double fixed_ns = intercept + (m->kernel == "tbe_backward_adagrad" ? backward_extra_ns : 0.0);
      const double gather_ns = m->median_ns - fixed_ns - streamed_ns(*m);
      const std::string key = fmt::format("{} {} D={} L={}", m->kernel, m->label("weight_dtype"),
                                          m->number("dim"), m->number("pooling"));
      result.embedding_efficiency_by_shape[key] =
          gather_ns > 0 ? t.gathered / gather_ns / hbm_bytes_per_ns : 0;
    }
  }

  double quantisation(const Measurement& m, int tile_m, int tile_n) const {
    return models::gemm_quantisation(static_cast<std::int64_t>(m.number("m")),
                             static_cast<std::int64_t>(m.number("n")),
                             static_cast<std::int64_t>(m.number("batch")), profile.sm_count, tile_m,
                             tile_n);
  }

  bool aligned(const Measurement& m, const std::string& dtype) const {
    return models::gemm_aligned_bytes(static_cast<std::int64_t>(m.number("m")),
                        static_cast<std::int64_t>(m.number("n")),
                        static_cast<std::int64_t>(m.number("k")), gemm_element_bytes(dtype));
  }

  // compute_efficiency and k_half from the aligned points, then
  // unaligned_efficiency from the others against the aligned model.
  void fit_gemm(const std::string& dtype, bool required) {
    const std::string family = "gemm " + dtype;
    FamilyReport r;
    r.family = family;
    std::size_t excluded = 0;
    const Points points = select(set, [&](const Measurement& m) {
      if (m.kernel != "gemm" || m.label("dtype") != dtype) return false;
      if (m.median_ns < options.gemm_min_time_ns) {
        ++excluded;
        return false;
      }
      return true;
    });
    r.excluded_points = excluded;
    try {
      const double peak_per_ns = profile.peak_flops(models::parse_data_type(dtype)) * 1e-9;
      // The hold-out split is over all of the family's points; each part
      // is then divided by alignment.
      const Split s = split(points, options.holdout_every);
      Points fit_aligned, fit_unaligned;
      for (const Measurement* m : s.fit) (aligned(*m, dtype) ? fit_aligned : fit_unaligned).push_back(m);
      // Q / e = 1/ce + (k_half / ce) x (1/k), with e = flops / (t x peak);
      // its relative residuals are the times' (t is proportional to Q / e).
      const auto measured_efficiency = [&](const Measurement& m) {
        return m.flops / (m.median_ns * peak_per_ns);
      };
      // Fits under one output tile; throws as the fit and the checks do.
      const auto fit_tile = [&](int tile_m, int tile_n) {
        const LinearFit f = fit_linear(
            column(fit_aligned, [](const Measurement& m) { return 1.0 / m.number("k"); }),
            column(fit_aligned,
                   [&](const Measurement& m) { return quantisation(m, tile_m, tile_n) / measured_efficiency(m); }),
            family + " (aligned shapes)", options.min_points);
        if (!(f.intercept > 0))
          refuse(family,
                 fmt::format("expected a positive 1/compute_efficiency, fitted {}", f.intercept));
        GemmFit g;
        g.compute_efficiency = 1.0 / f.intercept;
        g.k_half = f.slope / f.intercept;
        g.tile_m = tile_m;
        g.tile_n = tile_n;
        g.tile_rms = f.rms_relative_residual;
        if (!(g.compute_efficiency <= 1)) {
          refuse(family,
                 fmt::format(
                     "expected compute_efficiency in (0, 1], fitted {:.3f} (is the base profile's "
                     "{} peak right for this GPU?)",
                     g.compute_efficiency, dtype));
        }
        if (!(g.k_half >= 0)) {
          refuse(family,
                 fmt::format("expected gemm_k_half >= 0, fitted {:.1f}: efficiency falls with K",
                             g.k_half));
        }
        return g;
      };
      // The base profile's tile, unless another candidate explains the
      // shapes' wave quantisation clearly better (its rms relative residual
      // under kTileSwitchShare of the base tile's): cuBLAS's kernels on
      // Hopper use larger tiles than on Ampere, and the tile sets which
      // shapes leave SMs idle.
      std::optional<GemmFit> base_fit;
      std::optional<InputError> base_error;
      try {
        base_fit = fit_tile(profile.gemm_tile_m, profile.gemm_tile_n);
      } catch (const InputError& e) {
        base_error = e;  // another tile may fit; if none does, this is the refusal
      }
      std::optional<GemmFit> best = base_fit;
      for (int side : kGemmTileCandidates) {
        if (side == profile.gemm_tile_m && side == profile.gemm_tile_n) continue;
        try {
          const GemmFit c = fit_tile(side, side);
          const bool clearly_better = !base_fit || c.tile_rms < kTileSwitchShare * base_fit->tile_rms;
          if (clearly_better && (!best || c.tile_rms < best->tile_rms)) best = c;
        } catch (const InputError&) {
          // A tile under which the fit means nothing is no candidate.
        }
      }
      if (!best) throw *base_error;
      GemmFit g = *best;
      g.aligned_points = fit_aligned.size();
      std::string tile_note;
      if (g.tile_m != profile.gemm_tile_m || g.tile_n != profile.gemm_tile_n) {
        tile_note = fmt::format(", tile {}x{} (rms {:.2f}%; the base's {}x{}: {})", g.tile_m, g.tile_n,
                                100 * g.tile_rms, profile.gemm_tile_m, profile.gemm_tile_n,
                                base_fit ? fmt::format("{:.2f}%", 100 * base_fit->tile_rms)
                                         : base_error->diagnostics().back().message);
      }
      const auto aligned_ns = [this, g, peak_per_ns](const Measurement& m) {
        const double k = m.number("k");
        return m.flops / (peak_per_ns * g.compute_efficiency * quantisation(m, g.tile_m, g.tile_n) * k /
                          (k + g.k_half));
      };
      // t = (1/u) x aligned_ns: a proportional fit, relative residuals.
      g.unaligned_efficiency = profile.gemm_unaligned_efficiency;
      g.unaligned_points = fit_unaligned.size();
      std::string unaligned_note;
      try {
        const LinearFit u = fit_proportional(column(fit_unaligned, aligned_ns),
                                             column(fit_unaligned, [](const Measurement& m) { return m.median_ns; }),
                                             family + " (unaligned shapes)", options.min_points);
        const double fitted = 1.0 / u.slope;
        if (fitted > 1) {
          unaligned_note = fmt::format(
              "; unaligned_efficiency = {:.4f} kept from '{}': fitted {:.4f} > 1 on {} points "
              "(unaligned shapes ran no slower than aligned ones)",
              g.unaligned_efficiency, options.base_profile, fitted, fit_unaligned.size());
        } else {
          g.unaligned_efficiency = fitted;
          g.unaligned_fitted = true;
          unaligned_note = fmt::format(", unaligned_efficiency = {:.4f} ({} points)", fitted,
                                       fit_unaligned.size());
        }
      } catch (const InputError& e) {
        unaligned_note = fmt::format("; unaligned_efficiency = {:.4f} kept from '{}': {}",
                                     g.unaligned_efficiency, options.base_profile,
                                     e.diagnostics().back().message);
      }
      result.gemm_by_dtype[dtype] = g;
      r.parameters = fmt::format("compute_efficiency = {:.4f}, gemm_k_half = {:.1f}{}{}",
                                 g.compute_efficiency, g.k_half, unaligned_note, tile_note);
      evaluate(r, s.fit, s.held_out, [this, g, aligned_ns, dtype](const Measurement& m) {
        return aligned_ns(m) / (aligned(m, dtype) ? 1.0 : g.unaligned_efficiency);
      });
      add(std::move(r));
    } catch (const InputError& e) {
      if (required) throw;
      r.refused = refusal_reason(e, family);
      add(std::move(r));
    } catch (const std::invalid_argument& e) {  // no peak for this dtype in the base profile
      if (required) refuse(family, e.what());
      r.refused = e.what();
      add(std::move(r));
    }
  }

  // The dot interaction as the cost model prices it: a batched GEMM's
  // roofline (compute with the fitted GEMM parameters, memory at the fitted
  // streaming bandwidth) plus one launch.
  void validate_interaction() {
    for (const auto& entry : result.gemm_by_dtype) {
      // Not a structured binding: clang 14 (the fuzz build) cannot capture
      // one in a lambda.
      const std::string& dtype = entry.first;
      const auto& params = entry.second;
      const Points v = select(set, [&](const Measurement& m) {
        return m.kernel == "dot_interaction" && m.label("dtype") == dtype;
      });
      if (v.empty()) continue;
      const double peak_per_ns = profile.peak_flops(models::parse_data_type(dtype)) * 1e-9;
      const GemmFit g = params;
      FamilyReport r;
      r.family = "dot_interaction " + dtype + " (validation)";
      r.validation = true;
      r.parameters = "gemm " + dtype + " and streaming fits";
      evaluate(r, {}, v, [&](const Measurement& m) {
        const auto f = static_cast<std::int64_t>(m.number("features"));
        const auto dim = static_cast<std::int64_t>(m.number("dim"));
        const double k = static_cast<double>(dim);
        const double q =
            models::gemm_quantisation(f, f, static_cast<std::int64_t>(m.number("batch")), profile.sm_count,
                              g.tile_m, g.tile_n);
        const double u =
            models::gemm_aligned_bytes(f, f, dim, gemm_element_bytes(dtype)) ? 1.0 : g.unaligned_efficiency;
        const double compute =
            m.flops / (peak_per_ns * g.compute_efficiency * q * k / (k + g.k_half) * u);
        return std::max(compute, m.bytes / stream_bytes_per_ns) + launch_ns;
      });
      add(std::move(r));
    }
  }
};

std::string join_unique(const std::vector<std::string>& values) {
  std::set<std::string> seen;
  std::string out;
  for (const std::string& v : values) {
    if (v.empty() || !seen.insert(v).second) continue;
    if (!out.empty()) out += ", ";
    out += v;
  }
  return out.empty() ? "unknown" : out;
}

std::string render_report(const CalibrationResult& r, const MeasurementSet& set,
                          const CalibrationOptions& o, const nlohmann::ordered_json& provenance) {
  std::ostringstream md;
  md << "# Calibration report: " << r.profile.name << "\n\n";
  md << "Generated by zionsim calibration (calibration/calibrate.h) from " << r.measurements
     << " measurements in " << set.files.size() << " file(s); " << set.checks_passed
     << " kernel checks against CPU references passed, " << set.checks_failed << " failed.\n\n";
  md << "## Provenance\n\n| | |\n|---|---|\n";
  for (const auto& [key, value] : provenance.items()) {
    if (value.is_object() || value.is_array()) continue;
    md << "| " << key << " | " << (value.is_string() ? value.get<std::string>() : value.dump())
       << " |\n";
  }
  // Each parameter beside the base profile's value: what calibration changed.
  const models::DeviceProfile base = models::builtin_device_profile(o.base_profile);
  md << fmt::format("\n## Fitted profile parameters\n\n| parameter | base ({}) | calibrated | ratio |\n|---|---|---|---|\n",
                    o.base_profile);
  const auto row = [&md](const std::string& name, double was, double now, int digits) {
    md << fmt::format("| {} | {:.{}f} | {:.{}f} | {} |\n", name, was, digits, now, digits,
                      was != 0 ? fmt::format("{:.3f}", now / was) : "-");
  };
  const auto ns = [](sim::Duration d) { return static_cast<double>(d.count_ps()) / 1e3; };
  const auto gbyte_per_s = [](sim::BytesPerSecond b) { return static_cast<double>(b.count()) / 1e9; };
  row(fmt::format("compute_efficiency ({})", o.gemm_dtype), base.compute_efficiency, r.profile.compute_efficiency, 4);
  row(fmt::format("gemm_k_half ({})", o.gemm_dtype), base.gemm_k_half, r.profile.gemm_k_half, 1);
  row(fmt::format("gemm_unaligned_efficiency ({})", o.gemm_dtype), base.gemm_unaligned_efficiency,
      r.profile.gemm_unaligned_efficiency, 4);
  row("hbm_efficiency", base.hbm_efficiency, r.profile.hbm_efficiency, 4);
  row("embedding_hbm_efficiency", base.embedding_hbm_efficiency, r.profile.embedding_hbm_efficiency, 4);
  row("embedding_row_access_ns", base.embedding_row_access_ns, r.profile.embedding_row_access_ns, 4);
  row("embedding_backward_overhead_ns", base.embedding_backward_overhead_ns,
      r.profile.embedding_backward_overhead_ns, 0);
  row("kernel_launch_ns", ns(base.kernel_launch), ns(r.profile.kernel_launch), 1);
  row("host_to_device_gbyte_per_s", gbyte_per_s(base.host_to_device_bandwidth),
      gbyte_per_s(r.profile.host_to_device_bandwidth), 2);
  row("sm_count (from the measurements' provenance)", base.sm_count, r.profile.sm_count, 0);
  md << fmt::format("| gemm tile ({}) | {}x{} | {}x{} | - |\n", o.gemm_dtype, base.gemm_tile_m, base.gemm_tile_n,
                    r.profile.gemm_tile_m, r.profile.gemm_tile_n);
  md << "\nNot measured (from base profile '" << o.base_profile
     << "'): peak FLOP/s per dtype, HBM bandwidth and capacity. The GEMM tile is the base's "
        "unless another explains the shapes clearly better (its rms residual under "
     << kTileSwitchShare << " of the base tile's).\n";
  for (const FamilyReport& f : r.families) {
    if (f.kept.empty()) continue;
    md << "\n**Not fitted, kept from the base profile (--partial):** " << f.family << ": " << f.kept
       << "; why: " << f.refused << "\n";
  }
  md << "\n## Fits and hold-out errors\n\n";
  md << "Hold-out rule: within each fitted family, points sorted by kernel and parameters; every "
     << o.holdout_every
     << "th point is held out of the fit and predicted. Validation families are "
        "never fitted: all their points are predicted from the other fits.\n\n";
  md << "| family | parameters | fit points | excluded | R^2 | rms rel. residual | max rel. "
        "residual | "
        "held out | hold-out MAPE | worst |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const FamilyReport& f : r.families) {
    if (!f.refused.empty()) {
      md << "| " << f.family << " | not fitted: " << f.refused
         << (f.kept.empty() ? "" : "; kept " + f.kept) << " | | | | | | | | |\n";
      continue;
    }
    md << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", f.family,
                      f.parameters, f.validation ? "-" : std::to_string(f.fit_points),
                      f.excluded_points, f.validation ? "-" : fmt::format("{:.4f}", f.r_squared),
                      f.validation ? "-" : percent(f.rms_relative_residual),
                      f.validation ? "-" : percent(f.max_relative_residual), f.held_out.size(),
                      f.held_out.empty() ? "-" : percent(f.holdout_mape),
                      f.held_out.empty() ? "-" : percent(f.holdout_worst));
  }
  if (!r.gemm_by_dtype.empty()) {
    md << "\n## GEMM efficiency by dtype\n\n"
          "Shapes whose m, n and k are all multiples of 16 bytes fit compute_efficiency and "
          "gemm_k_half; the others fit unaligned_efficiency, their rate relative to an aligned "
          "shape's.\n\n"
          "| dtype | compute_efficiency | gemm_k_half | tile | aligned points | unaligned_efficiency | "
          "unaligned points |\n|---|---|---|---|---|---|---|\n";
    for (const auto& [dtype, g] : r.gemm_by_dtype) {
      md << fmt::format("| {} | {:.4f} | {:.1f} | {}x{} | {} | {:.4f}{} | {} |\n", dtype, g.compute_efficiency,
                        g.k_half, g.tile_m, g.tile_n, g.aligned_points, g.unaligned_efficiency,
                        g.unaligned_fitted ? "" : " (base)", g.unaligned_points);
    }
  }
  if (!r.embedding_efficiency_by_shape.empty()) {
    md << "\n## Embedding gather efficiency by kernel, dtype, D and L\n\n"
          "Each point's gather time (measured time less its fitted fixed time and its streamed "
          "bytes at the "
          "fitted streaming bandwidth) as a fraction of peak HBM bandwidth: the effective gather "
          "efficiency, per-access cost included, which falls with the row size when "
          "embedding_row_access_ns > 0.\n\n"
          "| kernel, weights, D, L | implied efficiency |\n|---|---|\n";
    for (const auto& [key, e] : r.embedding_efficiency_by_shape)
      md << fmt::format("| {} | {:.3f} |\n", key, e);
  }
  md << "\n## Held-out points: predicted vs measured\n\n"
        "| family | point | measured ns | predicted ns | error |\n|---|---|---|---|---|\n";
  for (const FamilyReport& f : r.families) {
    for (const PointPrediction& p : f.held_out) {
      md << fmt::format("| {} | {} ({}) | {:.0f} | {:.0f} | {} |\n", f.family, p.key, p.source,
                        p.measured_ns, p.predicted_ns, percent(p.relative_error()));
    }
  }
  return md.str();
}

}  // namespace

const FamilyReport* CalibrationResult::family(std::string_view name) const {
  for (const FamilyReport& f : families) {
    if (f.family == name) return &f;
  }
  return nullptr;
}

namespace {

// The built-in profile the fit starts from; its error names --base, which
// takes a built-in only, not a file.
models::DeviceProfile base_profile_named(const std::string& name) {
  try {
    return models::builtin_device_profile(name);
  } catch (const InputError& e) {
    Diagnostic d = e.diagnostics().front();
    d.source = "--base";
    if (const auto at = d.message.find(", or the path of a .json profile"); at != std::string::npos) {
      d.message.erase(at);
    }
    throw InputError(std::move(d));
  }
}

// The measured GPU's SM count (it drives wave quantisation), if the
// measurements say; they must be of one GPU model.
std::optional<int> measured_sm_count(const MeasurementSet& set) {
  std::set<int> sm_counts;
  for (const Provenance& p : set.provenances) {
    if (p.sm_count > 0) sm_counts.insert(p.sm_count);
  }
  if (sm_counts.size() > 1) {
    throw InputError(
        Diagnostic{"calibration", "provenance",
                   fmt::format("expected measurements of one GPU model, found SM counts {}",
                               fmt::join(sm_counts, ", "))});
  }
  if (sm_counts.empty()) return std::nullopt;
  return *sm_counts.begin();
}

// Fits each profile parameter's family; with options.partial, one that
// cannot be fitted keeps the base profile's value. Returns the host-to-device
// bandwidth, GB/s.
double fit_families(Fitter& f, const models::DeviceProfile& base, const CalibrationOptions& options) {
  f.required("launch", [&] { f.fit_launch(); }, [&] {
    f.launch_ns = static_cast<double>(base.kernel_launch.count_ps()) / 1e3;
    return fmt::format("kernel_launch = {:.1f} ns", f.launch_ns);
  });
  double h2d = 0;
  f.required("copy h2d", [&] { h2d = f.fit_copy("h2d", /*required=*/true); }, [&] {
    h2d = static_cast<double>(base.host_to_device_bandwidth.count()) * 1e-9;
    return fmt::format("host_to_device = {:.2f} GB/s", h2d);
  });
  f.fit_copy("d2h", /*required=*/false);
  f.fit_copy("d2d", /*required=*/false);
  f.required("streaming", [&] { f.fit_streaming(); }, [&] {
    f.stream_bytes_per_ns = base.hbm_efficiency * f.hbm_bytes_per_ns;
    f.stream_intercept_ns = 0;
    return fmt::format("hbm_efficiency = {:.4f}", base.hbm_efficiency);
  });
  f.required("embedding", [&] { f.fit_embedding(); }, [&] {
    return fmt::format(
        "embedding_hbm_efficiency = {:.4f}, embedding_row_access_ns = {:.4f}, "
        "embedding_backward_overhead_ns = {:.0f}",
        base.embedding_hbm_efficiency, base.embedding_row_access_ns, base.embedding_backward_overhead_ns);
  });
  for (const std::string dtype : {"bf16", "fp16", "tf32", "fp32"}) {
    if (dtype != options.gemm_dtype) {
      f.fit_gemm(dtype, /*required=*/false);
      continue;
    }
    f.required("gemm " + dtype, [&] { f.fit_gemm(dtype, /*required=*/true); }, [&] {
      return fmt::format("compute_efficiency = {:.4f}, gemm_k_half = {:.1f}, unaligned_efficiency = {:.4f}",
                         base.compute_efficiency, base.gemm_k_half, base.gemm_unaligned_efficiency);
    });
  }
  f.validate_interaction();
  return h2d;
}

// The calibrated profile's provenance: where the measurements came from,
// the options (enough to redo the calibration: calibration/measured_run_test.cc
// does, for committed GPU runs), and each family's fit.
nlohmann::ordered_json provenance_json(const MeasurementSet& set, const CalibrationOptions& options,
                                       const CalibrationResult& result, int sm_count) {
  std::vector<std::string> gpus, drivers, cudas, commits, dates;
  for (const Provenance& p : set.provenances) {
    gpus.push_back(p.gpu);
    drivers.push_back(p.driver_version);
    cudas.push_back(p.cuda_runtime_version);
    commits.push_back(p.git_commit);
    dates.push_back(p.date);
  }
  nlohmann::ordered_json provenance;
  provenance["tool"] = "zionsim calibration";
  provenance["gpu"] = join_unique(gpus);
  provenance["sm_count"] = sm_count;
  provenance["driver_version"] = join_unique(drivers);
  provenance["cuda_runtime_version"] = join_unique(cudas);
  provenance["kernels_ref_commit"] = join_unique(commits);
  provenance["date"] = options.date.empty() ? join_unique(dates) : options.date;
  provenance["base_profile"] = options.base_profile;
  provenance["gemm_dtype"] = options.gemm_dtype;
  provenance["holdout"] = fmt::format(
      "every {}th point per family, sorted by kernel and parameters", options.holdout_every);
  provenance["holdout_every"] = options.holdout_every;
  provenance["partial"] = options.partial;
  provenance["measurements"] = set.measurements.size();
  provenance["checks_passed"] = set.checks_passed;
  provenance["checks_failed"] = set.checks_failed;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const std::string& file : set.files) files.push_back(file);
  provenance["files"] = files;
  nlohmann::ordered_json fits = nlohmann::ordered_json::object();
  nlohmann::ordered_json kept = nlohmann::ordered_json::object();
  for (const FamilyReport& r : result.families) {
    if (!r.kept.empty()) kept[r.family] = r.kept;
    if (!r.refused.empty()) {
      fits[r.family] = {{"refused", r.refused}};
      if (!r.kept.empty()) fits[r.family]["kept"] = r.kept;
      continue;
    }
    nlohmann::ordered_json fit;
    fit["parameters"] = r.parameters;
    if (!r.validation) {
      fit["fit_points"] = r.fit_points;
      fit["r_squared"] = r.r_squared;
    }
    fit["held_out_points"] = r.held_out.size();
    fit["holdout_mape"] = r.holdout_mape;
    fit["holdout_worst"] = r.holdout_worst;
    fits[r.family] = fit;
  }
  provenance["fits"] = fits;
  if (!kept.empty()) provenance["kept_from_base"] = kept;
  return provenance;
}

}  // namespace

CalibrationResult calibrate(const MeasurementSet& set, const CalibrationOptions& options) {
  if (options.holdout_every == 1 || options.holdout_every < 0) {
    throw InputError(Diagnostic{
        "calibration", "options",
        fmt::format("expected holdout_every 0 (none) or >= 2, got {}", options.holdout_every)});
  }
  const models::DeviceProfile base = base_profile_named(options.base_profile);
  Fitter f{set, options, base, {}};
  f.profile.name =
      options.profile_name.empty() ? options.base_profile + "-calibrated" : options.profile_name;
  if (const std::optional<int> sm = measured_sm_count(set)) f.profile.sm_count = *sm;
  f.hbm_bytes_per_ns = static_cast<double>(f.profile.hbm_bandwidth.count()) * 1e-9;
  f.result.measurements = set.measurements.size();
  const double h2d = fit_families(f, base, options);
  if (f.fitted_parameter_families == 0) {
    throw InputError(Diagnostic{"calibration", "",
                                fmt::format("none of the profile's parameters could be fitted from {} "
                                            "measurement(s): the profile would be '{}' unchanged",
                                            set.measurements.size(), options.base_profile)});
  }
  if (const auto it = f.result.gemm_by_dtype.find(options.gemm_dtype); it != f.result.gemm_by_dtype.end()) {
    f.profile.compute_efficiency = it->second.compute_efficiency;
    f.profile.gemm_k_half = it->second.k_half;
    f.profile.gemm_unaligned_efficiency = it->second.unaligned_efficiency;
    f.profile.gemm_tile_m = it->second.tile_m;
    f.profile.gemm_tile_n = it->second.tile_n;
  }
  f.profile.kernel_launch = sim::Duration::from_ns_ceil(f.launch_ns);
  f.profile.host_to_device_bandwidth = sim::BytesPerSecond::from_gbyte_per_s(h2d);
  std::vector<std::string> gpus, commits;
  for (const Provenance& p : set.provenances) {
    gpus.push_back(p.gpu);
    commits.push_back(p.git_commit);
  }
  f.profile.description = fmt::format(
      "{} as calibrated from {} kernels_ref measurements ({}, kernels_ref {})", join_unique(gpus),
      set.measurements.size(), options.base_profile, join_unique(commits));
  const nlohmann::ordered_json provenance = provenance_json(set, options, f.result, f.profile.sm_count);
  nlohmann::ordered_json profile_json =
      nlohmann::ordered_json::parse(models::device_profile_to_json(f.profile));
  profile_json["provenance"] = provenance;
  f.result.profile_json = profile_json.dump(2) + "\n";
  // What the simulator will read: the file as parsed, not the struct in hand.
  f.result.profile = models::parse_device_profile(f.result.profile_json, "<calibrated profile>");
  f.result.report_markdown = render_report(f.result, set, options, provenance);
  return std::move(f.result);
}

CalibrationResult calibrate(const std::vector<std::string>& measurement_paths,
                            const CalibrationOptions& options) {
  const MeasurementSet set = read_measurements(measurement_paths);
  return calibrate(set, options);
}

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.good()) throw InputError(Diagnostic{path, "", "cannot write the file"});
}

// Runs `gnuplot script` in `dir`, output discarded. False when gnuplot is not
// on PATH or fails.
bool run_gnuplot(const std::filesystem::path& dir, const std::string& script) {
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    char* const argv[] = {const_cast<char*>("gnuplot"), const_cast<char*>(script.c_str()), nullptr};
    ::execvp("gnuplot", argv);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Writes the plot files of every family with points into `dir` and returns
// the report's "Plots" section.
std::string write_plots(const CalibrationResult& result, const std::filesystem::path& dir,
                        const std::string& dir_in_report, bool draw) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(Diagnostic{dir.string(), "", "cannot create the plot directory: " + ec.message()});
  std::string md = "\n## Plots: predicted vs measured\n\n";
  bool any_drawn = false;
  bool any_missing = false;
  for (const FamilyReport& f : result.families) {
    if (f.fitted.empty() && f.held_out.empty()) continue;
    const std::string stem = plot_stem(f.family);
    write_file((dir / (stem + ".dat")).string(), plot_data(f));
    write_file((dir / (stem + ".gp")).string(), gnuplot_script(f, stem + ".dat", stem + ".svg"));
    const bool drawn = draw && run_gnuplot(dir, stem + ".gp") && std::filesystem::exists(dir / (stem + ".svg"));
    if (drawn) {
      md += fmt::format("### {}\n\n![{}]({}/{}.svg)\n\n", f.family, f.family, dir_in_report, stem);
      any_drawn = true;
    } else {
      md += fmt::format("- {}: `{}/{}.gp` (points in `{}.dat`)\n", f.family, dir_in_report, stem, stem);
      any_missing = true;
    }
  }
  if (any_missing && !any_drawn) {
    md += fmt::format("\n{}: run `gnuplot NAME.gp` in `{}` to draw them as SVG.\n",
                      draw ? "gnuplot was not found on PATH" : "Plots were not drawn", dir_in_report);
  }
  return md;
}

}  // namespace

void write_calibration(const CalibrationResult& result, const std::string& profile_path,
                       const std::string& report_path, PlotMode plots) {
  write_file(profile_path, result.profile_json);
  if (report_path.empty()) return;
  write_file(report_path, report_with_plots(result, report_path, plots));
}

std::string report_with_plots(const CalibrationResult& result, const std::string& report_path, PlotMode plots) {
  std::string report = result.report_markdown;
  if (plots != PlotMode::kNone) {
    const std::filesystem::path path(report_path);
    std::filesystem::path stem = path;
    if (stem.extension() == ".md") stem.replace_extension();
    const std::string dir_name = stem.filename().string() + "_plots";
    report += write_plots(result, path.parent_path() / dir_name, dir_name, plots == PlotMode::kDraw);
  }
  return report;
}

}  // namespace zx::calibration
