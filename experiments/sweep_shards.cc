#include "experiments/sweep_shards.h"

#include <cstdint>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/json_reader.h"

namespace zx::experiments {

std::vector<std::string> command_without_shard(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--shard") {
      ++i;  // and its value
      continue;
    }
    if (args[i].starts_with("--shard=")) continue;
    out.push_back(args[i]);
  }
  return out;
}

std::string sweep_id(const std::vector<std::string>& command) {
  // The words, each followed by a zero byte.
  std::uint64_t h = fnv1a_64("");
  for (const std::string& word : command) h = fnv1a_64(std::string_view(word.c_str(), word.size() + 1), h);
  return fmt::format("{:016x}", h);
}

nlohmann::ordered_json shard_document(const std::vector<std::string>& command, std::size_t tasks,
                                      experiments::Shard shard,
                                      std::vector<std::pair<std::size_t, nlohmann::ordered_json>> outcomes) {
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  for (auto& [task, outcome] : outcomes) results.push_back({{"task", task}, {"outcome", std::move(outcome)}});
  return nlohmann::ordered_json{{"zionsim_shard", kShardFormatVersion},
                                {"command", command},
                                {"sweep", sweep_id(command)},
                                {"tasks", tasks},
                                {"shard", {{"index", shard.index}, {"count", shard.count}}},
                                {"results", std::move(results)}};
}

namespace {

struct ShardFile {
  std::string path;
  std::vector<std::string> command;
  std::size_t tasks = 0;
  experiments::Shard shard;
  std::vector<std::pair<std::size_t, nlohmann::json>> results;
};

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& message) {
  throw InputError(Diagnostic{path, where, message});
}

std::uint64_t whole(const nlohmann::json& v, const std::string& path, const std::string& where, std::uint64_t max) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max) {
    fail(path, where, fmt::format("expected a whole number from 0 to {}, got {}", max, v.dump()));
  }
  return v.get<std::uint64_t>();
}

const nlohmann::json& member(const nlohmann::json& object, const char* key, const std::string& path,
                             const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) fail(path, where + "/" + key, "missing");
  return *it;
}

ShardFile read_one(const std::string& path) {
  const json::Document doc = json::Document::load_file(path);
  const nlohmann::json& root = doc.value();
  ShardFile f;
  f.path = path;
  if (!root.is_object() || !root.contains("zionsim_shard")) {
    fail(path, "", "expected a shard file of 'zionsim whatif|collective|run ... --shard K/N' (an object with "
               "\"zionsim_shard\")");
  }
  if (root["zionsim_shard"] != kShardFormatVersion) {
    fail(path, "/zionsim_shard",
         fmt::format("expected {} (this zionsim's shard format), got {}", kShardFormatVersion,
                     root["zionsim_shard"].dump()));
  }
  const nlohmann::json& command = member(root, "command", path, "");
  if (!command.is_array() || command.empty()) fail(path, "/command", "expected the command's words, an array");
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (!command[i].is_string()) fail(path, fmt::format("/command/{}", i), "expected a string");
    f.command.push_back(command[i].get<std::string>());
  }
  if (f.command.front() != "whatif" && f.command.front() != "collective" && f.command.front() != "run") {
    fail(path, "/command/0",
         fmt::format("expected whatif, collective or run (the commands that write shards), got '{}'",
                     f.command.front()));
  }
  const nlohmann::json& sweep = member(root, "sweep", path, "");
  if (sweep != sweep_id(f.command)) {
    fail(path, "/sweep",
         fmt::format("expected {}, the identity of its command, got {}: the file was changed", sweep_id(f.command),
                     sweep.dump()));
  }
  f.tasks = whole(member(root, "tasks", path, ""), path, "/tasks", 1u << 30);
  const nlohmann::json& shard = member(root, "shard", path, "");
  if (!shard.is_object()) fail(path, "/shard", "expected {\"index\": K, \"count\": N}");
  f.shard.count = static_cast<int>(whole(member(shard, "count", path, "/shard"), path, "/shard/count",
                                         experiments::kMaxShards));
  if (f.shard.count < 1) fail(path, "/shard/count", "expected at least 1");
  f.shard.index = static_cast<int>(whole(member(shard, "index", path, "/shard"), path, "/shard/index",
                                         static_cast<std::uint64_t>(f.shard.count - 1)));
  const nlohmann::json& results = member(root, "results", path, "");
  if (!results.is_array()) fail(path, "/results", "expected an array");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = fmt::format("/results/{}", i);
    if (!results[i].is_object()) fail(path, where, "expected {\"task\": T, \"outcome\": ...}");
    if (f.tasks == 0) fail(path, where, "a result in a sweep of no tasks");
    const std::uint64_t task = whole(member(results[i], "task", path, where), path, where + "/task", f.tasks - 1);
    f.results.emplace_back(static_cast<std::size_t>(task), member(results[i], "outcome", path, where));
  }
  return f;
}

}  // namespace

MergedShards read_shards(const std::vector<std::string>& paths) {
  if (paths.empty()) throw InputError(Diagnostic{"merge", "", "expected the shard files to merge"});
  std::vector<ShardFile> files;
  for (const std::string& path : paths) files.push_back(read_one(path));
  const ShardFile& first = files.front();
  MergedShards out;
  out.command = first.command;
  out.tasks = first.tasks;
  out.source = fmt::format("the shard{} {}", paths.size() == 1 ? "" : "s", fmt::join(paths, ", "));
  std::map<int, std::string> share_file;
  std::map<std::size_t, std::string> task_file;
  for (const ShardFile& f : files) {
    if (f.command != first.command) {
      fail(f.path, "/command",
           fmt::format("a shard of another sweep than {}'s: '{}' against '{}'", first.path, fmt::join(f.command, " "),
                       fmt::join(first.command, " ")));
    }
    if (f.shard.count != first.shard.count || f.tasks != first.tasks) {
      fail(f.path, "/shard/count",
           fmt::format("{} shares of {} tasks, where {} has {} of {}", f.shard.count, f.tasks, first.path,
                       first.shard.count, first.tasks));
    }
    if (const auto [it, added] = share_file.emplace(f.shard.index, f.path); !added) {
      fail(f.path, "/shard/index",
           fmt::format("shard {} of {} given twice: {} and {}", f.shard.index, f.shard.count, it->second, f.path));
    }
    for (const auto& [task, outcome] : f.results) {
      if (const auto [it, added] = task_file.emplace(task, f.path); !added) {
        fail(f.path, "/results", fmt::format("task {} is in {} too", task, it->second));
      }
      out.outcomes.emplace(task, outcome);
    }
  }
  std::vector<int> missing;
  for (int k = 0; k < first.shard.count; ++k) {
    if (!share_file.contains(k)) missing.push_back(k);
  }
  if (!missing.empty()) {
    std::vector<int> shown(missing.begin(), missing.begin() + std::min<std::size_t>(missing.size(), 20));
    throw InputError(Diagnostic{
        "merge", "",
        fmt::format("shard{} {}{} of {} missing (given: {}); merge needs every shard of the sweep",
                    missing.size() == 1 ? "" : "s", fmt::join(shown, ", "),
                    missing.size() > shown.size() ? fmt::format(" and {} more", missing.size() - shown.size()) : "",
                    first.shard.count, fmt::join(paths, ", "))});
  }
  for (std::size_t t = 0; t < out.tasks; ++t) {
    if (!out.outcomes.contains(t)) {
      throw InputError(Diagnostic{"merge", "",
                                  fmt::format("task {} of {} is in none of {}: a shard file was cut or edited", t,
                                              out.tasks, fmt::join(paths, ", "))});
    }
  }
  return out;
}

}  // namespace zx::experiments
