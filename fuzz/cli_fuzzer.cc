// File: fuzz/cli_fuzzer.cc
//
// libFuzzer target: run_cli on an argument vector. The input is split on
// '\0' and '\n' into arguments; args[0] is the command (as in
// tools/cli_test.cc). Only cheap inputs are run: at most 200 bytes, no
// argument that is a number above 64, node counts (the value of --nodes) of
// at most 4, and `whatif` only with --nodes given (its default sweep, 1 to
// 16 nodes of model A, is the main job: seconds of work by design, over
// libFuzzer's 10 s timeout under the sanitizers), with at most two --vary
// combinations, and a sharding search only with --search-budget at most 8. So a fuzzer cannot ask
// for a 10^9-GPU cluster, or for the main job, and call the slowness a hang. run_cli reports bad input
// itself (status 2); an InputError escaping it is tolerated here like in the
// other targets, anything else is a finding.
//
// Some commands write files named by their options: run the fuzzer in a
// scratch directory (scripts/fuzz.sh does).

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "tools/cli.h"

namespace {

// True if `arg` contains a number (digits, optionally with a fraction or
// exponent) whose value exceeds `limit`.
bool has_large_number(const std::string& arg, double limit = 64.0) {
  for (std::size_t i = 0; i < arg.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(arg[i]))) continue;
    const char* begin = arg.c_str() + i;
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (!(value <= limit)) return true;  // also NaN / inf
    std::size_t advanced = static_cast<std::size_t>(end - begin);
    i += advanced == 0 ? 0 : advanced - 1;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 200) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::string current;
  for (const char c : text) {
    if (c == '\0' || c == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty() || args.empty()) args.push_back(current);
  bool nodes_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool is_nodes = arg.rfind("--nodes", 0) == 0;
    if (is_nodes) {
      nodes_given = true;
      if (has_large_number(arg, 4.0)) return 0;
      if (i + 1 < args.size() && has_large_number(args[i + 1], 4.0)) return 0;
    }
  }
  if (!args.empty() && args[0] == "whatif" && !nodes_given) return 0;
  // whatif --vary multiplies the work by its combinations: at most two.
  std::size_t combinations = 1;
  bool in_vary = false;
  for (const std::string& arg : args) {
    std::string_view value;
    if (arg.rfind("--vary=", 0) == 0) {
      value = std::string_view(arg).substr(7);
      in_vary = true;
    } else if (arg == "--vary") {
      in_vary = true;
      continue;
    } else if (arg.rfind("-", 0) == 0) {
      in_vary = false;
      continue;
    } else if (in_vary) {
      value = arg;
    } else {
      continue;
    }
    combinations *= 1 + static_cast<std::size_t>(std::count(value.begin(), value.end(), ','));
    if (combinations > 2) return 0;
  }
  // A sharding search (plan --search, whatif --sharding search) simulates
  // up to --search-budget iterations (default 200): only with a budget of at
  // most 8.
  bool searches = false;
  bool small_budget = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--search-budget", 0) == 0) {
      const std::string value = arg.size() > 16 ? arg.substr(16) : (i + 1 < args.size() ? args[i + 1] : "");
      small_budget = !value.empty() && !has_large_number(value, 8.0);
    } else if (arg.find("search") != std::string::npos) {
      searches = true;
    }
  }
  if (searches && !small_budget) return 0;
  for (const std::string& arg : args) {
    if (has_large_number(arg)) return 0;
    // Numbers written in words or hex the filter cannot judge.
    if (arg.find("0x") != std::string::npos || arg.find("0X") != std::string::npos) return 0;
    if (arg.find("inf") != std::string::npos || arg.find("INF") != std::string::npos) return 0;
  }
  std::ostringstream out;
  std::ostringstream err;
  try {
    (void)zx::tools::run_cli(args, out, err);
  } catch (const zx::InputError&) {
  }
  return 0;
}
