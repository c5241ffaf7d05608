#include "experiments/sweep_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"
#include "experiments/sweep_shards.h"
#include "experiments/whatif_codec.h"

namespace zx::experiments {
namespace {

constexpr int kPointFileVersion = 1;

// Flags that choose which points exist or where output goes, with how many
// values they take (-1: every following word that is not a flag, as CLI11's
// take_all does for --vary).
const std::map<std::string, int>& sweep_flags() {
  static const std::map<std::string, int> flags = {
      {"--nodes", 1},   {"--vary", -1},      {"--scenario", 1},      {"--sensitivity", 1}, {"--threads", 1},
      {"--format", 1},  {"--plot", 1},       {"--shard", 1},       {"--results", 1},
      {"--timeline", 1}, {"--emit-trace", 1}, {"--emit-scenarios", 1}, {"--skip-memory-check", 0},
      {"--json", 1},
  };
  return flags;
}

std::string hex(std::uint64_t h) { return fmt::format("{:016x}", h); }

std::string file_hash(const std::string& path) { return hex(fnv1a_64(read_input_file(path))); }

// The file a word names, if it names one: the word, or what follows '=' in
// KEY=VALUE.
void add_named_file(const std::string& word, std::map<std::string, std::string>& files) {
  for (const std::string& candidate : {word, word.find('=') == std::string::npos ? std::string() : word.substr(word.find('=') + 1)}) {
    if (candidate.empty() || files.contains(candidate)) continue;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) files.emplace(candidate, file_hash(candidate));
  }
}

}  // namespace

InputError with_remedy(const InputError& e) {
  std::vector<Diagnostic> diagnostics = e.diagnostics();
  for (Diagnostic& d : diagnostics) d.message += "; delete it to simulate that point again";
  return InputError(std::move(diagnostics));
}

bool chooses_points_or_outputs(const std::string& flag) { return sweep_flags().contains(flag); }

std::vector<std::string> point_shaping_words(const std::vector<std::string>& args) {
  return point_shaping_words(args, sweep_flags());
}

std::vector<std::string> point_shaping_words(const std::vector<std::string>& args,
                                             const std::map<std::string, int>& choosing) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    const std::string name = word.substr(0, word.find('='));
    const auto it = choosing.find(name);
    if (it == choosing.end()) {
      out.push_back(word);
      continue;
    }
    if (word.find('=') != std::string::npos) continue;  // --flag=value
    if (it->second == 1) {
      ++i;
    } else if (it->second < 0) {
      while (i + 1 < args.size() && !args[i + 1].starts_with("--")) ++i;
    }
  }
  return out;
}

ResultCache::ResultCache(std::string option, std::string dir, std::vector<std::string> words)
    : option_(std::move(option)), dir_(std::move(dir)), words_(std::move(words)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (!std::filesystem::is_directory(dir_)) {
    throw InputError(Diagnostic{option_, "",
                                fmt::format("'{}' is not a directory and cannot be made one{}", dir_,
                                            ec ? ": " + ec.message() : std::string())});
  }
  binary_ = file_hash("/proc/self/exe");
}

nlohmann::ordered_json ResultCache::identity(const nlohmann::ordered_json& task,
                                             const std::vector<std::string>& names) const {
  std::map<std::string, std::string> files;
  for (const std::string& word : words_) add_named_file(word, files);
  for (const std::string& name : names) add_named_file(name, files);
  nlohmann::ordered_json named = nlohmann::ordered_json::object();
  for (const auto& [path, hash] : files) named[path] = hash;
  nlohmann::ordered_json id{{"command", words_}};
  for (const auto& [key, value] : task.items()) id[key] = value;
  id["files"] = std::move(named);
  id["zionsim_binary"] = binary_;
  return id;
}

std::string ResultCache::file_of(const nlohmann::ordered_json& id) const {
  return (std::filesystem::path(dir_) / (hex(fnv1a_64(id.dump())) + ".json")).string();
}

std::optional<KeptOutcome> ResultCache::load(const nlohmann::ordered_json& task,
                                             const std::vector<std::string>& names) const {
  const nlohmann::ordered_json id = identity(task, names);
  const std::string file = file_of(id);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  try {
    const json::Document doc = json::Document::load_file(file);
    const nlohmann::json& root = doc.value();
    if (!root.is_object() || !root.contains("zionsim_point") || root["zionsim_point"] != kPointFileVersion ||
        !root.contains("identity") || !root.contains("outcome")) {
      throw InputError(Diagnostic{file, "", fmt::format("expected a point kept by {} (\"zionsim_point\": {}, "
                                                        "\"identity\", \"outcome\")",
                                                        option_, kPointFileVersion)});
    }
    if (root["identity"] != nlohmann::json::parse(id.dump())) return std::nullopt;  // another point, same hash
    return KeptOutcome{root["outcome"], file};
  } catch (const InputError& e) {
    throw with_remedy(e);
  }
}

void ResultCache::store(const nlohmann::ordered_json& task, const std::vector<std::string>& names,
                        const nlohmann::ordered_json& outcome) const {
  const nlohmann::ordered_json id = identity(task, names);
  const std::filesystem::path file = file_of(id);
  // A name of this process and thread: points finish on several threads.
  const std::filesystem::path temp =
      file.string() + fmt::format(".{}.{}.tmp", ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const nlohmann::ordered_json doc{{"zionsim_point", kPointFileVersion}, {"identity", id}, {"outcome", outcome}};
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << doc.dump() << '\n';
    out.close();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(temp, ec);
      throw InputError(Diagnostic{option_, "", fmt::format("cannot write {}", temp.string())});
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, file, ec);
  if (ec) {
    std::filesystem::remove(temp, ec);
    throw InputError(Diagnostic{option_, "", fmt::format("cannot put {} in place: {}", file.string(), ec.message())});
  }
}

namespace {

// A whatif point's task: its settings and size; the files its values name.
nlohmann::ordered_json point_task(const Settings& settings, int nodes) {
  nlohmann::ordered_json set = nlohmann::ordered_json::array();
  for (const auto& [key, value] : settings) set.push_back({key, value});
  return nlohmann::ordered_json{{"settings", std::move(set)}, {"nodes", nodes}};
}

std::vector<std::string> setting_values(const Settings& settings) {
  std::vector<std::string> out;
  for (const auto& [key, value] : settings) out.push_back(value);
  return out;
}

}  // namespace

std::optional<WhatIfPoint> PointCache::load(const Settings& settings, int nodes) const {
  const std::optional<KeptOutcome> kept = cache_.load(point_task(settings, nodes), setting_values(settings));
  if (!kept) return std::nullopt;
  try {
    return point_or_rethrow(kept->outcome, kept->file, "/outcome");
  } catch (const InputError& e) {
    throw with_remedy(e);
  }
}

void PointCache::store(const Settings& settings, int nodes, const WhatIfPoint& point) const {
  cache_.store(point_task(settings, nodes), setting_values(settings), task_outcome_to_json(&point, nullptr));
}

}  // namespace zx::experiments
