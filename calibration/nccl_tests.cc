#include "calibration/nccl_tests.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"

namespace zx::calibration {
namespace {

// nccl-tests program names (without "_perf") -> zionsim's collective kinds.
constexpr std::pair<std::string_view, std::string_view> kPrograms[] = {
    {"all_reduce", "all_reduce"},         {"all_gather", "all_gather"}, {"reduce_scatter", "reduce_scatter"},
    {"alltoall", "all_to_all"},           {"all_to_all", "all_to_all"}, {"broadcast", "broadcast"},
    {"reduce", "reduce"},
};

std::vector<std::string_view> tokens_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string supported_names() {
  return "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf";
}

constexpr std::string_view kRowShape =
    "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";

}  // namespace

std::optional<std::string> nccl_tests_collective(std::string_view name) {
  if (name.ends_with("_perf")) name.remove_suffix(5);
  for (const auto& [program, kind] : kPrograms) {
    if (name == program) return std::string(kind);
  }
  return std::nullopt;
}

NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& source,
                              std::optional<std::string> collective) {
  NcclTestsRun run;
  run.source = source;
  std::vector<Diagnostic> errors;
  const auto error = [&](int line, std::string message) {
    errors.push_back(Diagnostic{source, fmt::format("line {}", line), std::move(message)});
  };
  std::optional<std::string> named;  // from the "Collective test starting" line
  int named_line = 0;
  std::vector<int> ranks_seen;
  int line_number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::vector<std::string_view> t = tokens_of(line);
    if (t.empty()) continue;
    if (t[0].starts_with('#')) {
      // "# Collective test starting: all_reduce_perf"
      if (t.size() >= 5 && t[1] == "Collective" && t[2] == "test" && t[3] == "starting:") {
        const std::optional<std::string> kind = nccl_tests_collective(t[4]);
        if (!kind) {
          error(line_number, fmt::format("collective test '{}' is not supported (supported: {})", t[4],
                                         supported_names()));
        } else {
          named = kind;
          named_line = line_number;
        }
        continue;
      }
      // "#  Rank  0 Group  0 Pid  1946 on host device  0 [0x07] NVIDIA A100-SXM4-40GB", or
      // before nccl-tests 2.10 "#   Rank  0 Pid  1946 on host device  0 [0x07] Tesla V100".
      const bool grouped = t.size() >= 9 && t[1] == "Rank" && t[3] == "Group" && t[5] == "Pid" && t[7] == "on";
      const bool ungrouped = t.size() >= 7 && t[1] == "Rank" && t[3] == "Pid" && t[5] == "on";
      if (grouped || ungrouped) {
        const std::size_t host_at = grouped ? 8 : 6;
        const std::optional<std::int64_t> rank = to_int(t[2]);
        if (!rank || *rank < 0 || *rank > (1 << 24)) {
          error(line_number, fmt::format("expected a rank number after 'Rank', found '{}'", t[2]));
          continue;
        }
        const std::string host(t[host_at]);
        auto h = std::find(run.hosts.begin(), run.hosts.end(), host);
        if (h == run.hosts.end()) h = run.hosts.insert(run.hosts.end(), host);
        const auto r = static_cast<std::size_t>(*rank);
        if (run.rank_host.size() <= r) run.rank_host.resize(r + 1, -1);
        if (run.rank_host[r] >= 0) {  // threads of one process print their ranks once each
          error(line_number, fmt::format("rank {} is listed twice", r));
          continue;
        }
        run.rank_host[r] = static_cast<int>(h - run.hosts.begin());
        ranks_seen.push_back(static_cast<int>(r));
        if (*rank == 0 && t.size() >= host_at + 5 && t[host_at + 1] == "device") {
          std::string gpu;
          for (std::size_t k = host_at + 4; k < t.size(); ++k) gpu += (gpu.empty() ? "" : " ") + std::string(t[k]);
          run.gpu = gpu;
        }
      }
      continue;
    }
    // A row starts with its size; other lines are logging from MPI or NCCL.
    // A signed number is a row too (a negative size is an error there, not
    // a line skipped).
    const bool signed_number =
        t[0].size() > 1 && (t[0][0] == '-' || t[0][0] == '+') && all_digits(t[0].substr(1));
    if (!all_digits(t[0]) && !signed_number) continue;
    if (t.size() != 13) {
      error(line_number, fmt::format("expected a result row of 13 fields ({}), found {} fields", kRowShape,
                                     t.size()));
      continue;
    }
    NcclTestsRow row;
    row.line = line_number;
    const auto int_field = [&](std::size_t i, const char* name, std::int64_t& out) {
      const std::optional<std::int64_t> v = to_int(t[i]);
      if (!v || *v < 0) {
        error(line_number, fmt::format("{}: expected a non-negative integer, found '{}'", name, t[i]));
        return false;
      }
      out = *v;
      return true;
    };
    const auto number_field = [&](std::size_t i, const char* name, double& out, bool positive) {
      const std::optional<double> v = to_double(t[i]);
      if (!v || *v < 0 || (positive && *v == 0)) {
        error(line_number, fmt::format("{}: expected a {} number, found '{}'", name,
                                       positive ? "positive" : "non-negative", t[i]));
        return false;
      }
      out = *v;
      return true;
    };
    bool ok = int_field(0, "size", row.size_bytes);
    ok &= int_field(1, "count", row.count);
    row.type = std::string(t[2]);
    ok &= number_field(5, "time (us)", row.time_us, true);
    ok &= number_field(6, "algbw (GB/s)", row.algbw_gbyte_per_s, false);
    ok &= number_field(7, "busbw (GB/s)", row.busbw_gbyte_per_s, false);
    ok &= number_field(9, "in-place time (us)", row.in_place_time_us, true);
    for (const std::size_t i : {std::size_t{8}, std::size_t{12}}) {
      if (t[i] != "N/A" && t[i] != "0") {
        error(line_number, fmt::format("#wrong: the test found '{}' wrong elements; a failed run is no measurement",
                                       t[i]));
        ok = false;
      }
    }
    if (ok && row.size_bytes > (std::int64_t{1} << 50)) {
      error(line_number, fmt::format("size: expected at most 2^50 bytes, found {}", row.size_bytes));
      ok = false;
    }
    if (ok) run.rows.push_back(std::move(row));
  }
  if (collective) {
    const std::optional<std::string> kind = nccl_tests_collective(*collective);
    if (!kind) {
      errors.push_back(Diagnostic{"--op", "", fmt::format("'{}' is not a collective nccl-tests measures (supported: {})",
                                                         *collective, supported_names())});
    } else if (named && *named != *kind) {
      error(named_line, fmt::format("the file measured {}, but --op says {}", *named, *kind));
    } else {
      named = kind;
    }
  }
  if (!named && errors.empty()) {
    errors.push_back(Diagnostic{source, "",
                                "the file does not say which collective it measured (no '# Collective test "
                                "starting:' line, printed by nccl-tests 2.17 and later): give --op"});
  }
  if (run.rows.empty() && errors.empty()) {
    errors.push_back(Diagnostic{source, "", fmt::format("no result rows ({})", kRowShape)});
  }
  for (std::size_t r = 0; r < run.rank_host.size() && errors.empty(); ++r) {
    if (run.rank_host[r] < 0) {
      errors.push_back(Diagnostic{source, "", fmt::format("the rank lines skip rank {} (of {})", r, run.rank_host.size())});
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  run.collective = *named;
  run.ranks = static_cast<int>(ranks_seen.size());
  return run;
}

NcclTestsRun load_nccl_tests(const std::string& path, std::optional<std::string> collective) {
  // Bounded, regular files only, gzip inflated (base/input_file.h).
  return parse_nccl_tests(read_input_file(path), path, std::move(collective));
}

}  // namespace zx::calibration
