// File: experiments/sweep_spec.cc

#include "experiments/sweep_spec.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/json_reader.h"

namespace zx::experiments {
namespace {

// A scalar value as a word on the command line.
std::string word_of(const nlohmann::ordered_json& v, const std::string& path, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) {
    const double x = v.get<double>();
    // 400.0 -> "400", as --vary writes whole numbers; others as nlohmann's
    // shortest form.
    // (The range first: a double out of long long's range has no cast.)
    if (std::abs(x) < 1e15 && x == static_cast<double>(static_cast<long long>(x))) {
      return std::to_string(static_cast<long long>(x));
    }
    return v.dump();
  }
  throw InputError(Diagnostic{path, where, fmt::format("expected a string or a number, got {}", v.dump())});
}

}  // namespace

std::vector<std::string> sweep_whatif_words(const nlohmann::ordered_json& root, const std::string& path,
                                            const WhatIfFlagNames& flags) {
  const auto has = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<std::string> words = {"whatif"};
  if (!root.is_object()) throw InputError(Diagnostic{path, "", "expected an object with \"flags\" and \"vary\""});
  for (const auto& [key, value] : root.items()) {
    if (key != "schema_version" && key != "command" && key != "flags" && key != "vary" && key != "scenarios") {
      throw InputError(
          Diagnostic{path, "/" + key, "unknown key; a sweep has schema_version, command, flags, vary, scenarios"});
    }
  }
  if (!root.contains("schema_version") || root["schema_version"] != 1) {
    throw InputError(Diagnostic{path, "/schema_version",
                                fmt::format("expected 1, got {}", root.contains("schema_version")
                                                                       ? root["schema_version"].dump()
                                                                       : std::string("nothing"))});
  }
  if (!root.contains("command") || root["command"] != "whatif") {
    throw InputError(Diagnostic{path, "/command", "expected \"whatif\" (the command a sweep file runs)"});
  }
  if (root.contains("flags")) {
    const nlohmann::ordered_json& given = root["flags"];
    if (!given.is_object()) throw InputError(Diagnostic{path, "/flags", "expected an object of whatif flags"});
    for (const auto& [key, value] : given.items()) {
      const std::string where = "/flags/" + key;
      if (key == "vary") throw InputError(Diagnostic{path, where, "give the knobs to vary under /vary"});
      if (key == "shard") {
        throw InputError(Diagnostic{path, where, "a share is chosen when the sweep runs: zionsim sweep FILE --shard K/N"});
      }
      if (!has(flags.names, key)) {
        std::string message = "not a flag of zionsim whatif";
        if (const auto guess = json::closest_match(key, flags.names)) message += fmt::format(" (did you mean '{}'?)", *guess);
        throw InputError(Diagnostic{path, where, message});
      }
      const std::string flag = "--" + key;
      if (has(flags.no_value, key)) {
        if (!value.is_boolean()) throw InputError(Diagnostic{path, where, fmt::format("expected true or false, got {}", value.dump())});
        if (value.get<bool>()) words.push_back(flag);
      } else if (value.is_array()) {
        if (value.empty()) throw InputError(Diagnostic{path, where, "expected at least one value"});
        std::vector<std::string> values;
        for (std::size_t i = 0; i < value.size(); ++i) values.push_back(word_of(value[i], path, fmt::format("{}/{}", where, i)));
        if (key == "nodes") {
          words.insert(words.end(), {flag, fmt::format("{}", fmt::join(values, ","))});
        } else {
          for (const std::string& v : values) words.insert(words.end(), {flag, v});
        }
      } else {
        words.insert(words.end(), {flag, word_of(value, path, where)});
      }
    }
  }
  if (root.contains("vary")) {
    const nlohmann::ordered_json& vary = root["vary"];
    if (!vary.is_object()) throw InputError(Diagnostic{path, "/vary", "expected an object: {\"KNOB\": [V1, V2, ...]}"});
    for (const auto& [key, value] : vary.items()) {
      const std::string where = "/vary/" + key;
      if (!value.is_array() || value.empty()) {
        throw InputError(Diagnostic{path, where, fmt::format("expected a list of values, got {}", value.dump())});
      }
      std::vector<std::string> values;
      for (std::size_t i = 0; i < value.size(); ++i) {
        values.push_back(word_of(value[i], path, fmt::format("{}/{}", where, i)));
        if (values.back().find(',') != std::string::npos) {
          throw InputError(Diagnostic{path, fmt::format("{}/{}", where, i), "a value to vary holds no comma"});
        }
      }
      words.insert(words.end(), {"--vary", fmt::format("{}={}", key, fmt::join(values, ","))});
    }
  }
  if (root.contains("scenarios")) {
    const nlohmann::ordered_json& list = root["scenarios"];
    if (!list.is_array() || list.empty()) {
      throw InputError(Diagnostic{path, "/scenarios", "expected a list of scenarios: [{\"KNOB\": V, ...}, ...]"});
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string where = fmt::format("/scenarios/{}", i);
      if (!list[i].is_object() || list[i].empty()) {
        throw InputError(Diagnostic{path, where, fmt::format("expected {{\"KNOB\": V, ...}}, got {}", list[i].dump())});
      }
      std::vector<std::string> pairs;
      for (const auto& [key, value] : list[i].items()) {
        const std::string word = word_of(value, path, where + "/" + key);
        if (word.find_first_of(" \t\n") != std::string::npos || word.empty()) {
          throw InputError(Diagnostic{path, where + "/" + key, "a scenario's value holds no space and is not empty"});
        }
        pairs.push_back(key + "=" + word);
      }
      words.insert(words.end(), {"--scenario", fmt::format("{}", fmt::join(pairs, " "))});
    }
  }
  return words;
}

std::vector<std::string> read_sweep_spec(const std::string& path, const WhatIfFlagNames& flags) {
  json::Document::load_file(path);
  return sweep_whatif_words(nlohmann::ordered_json::parse(read_input_file(path)), path, flags);
}

}  // namespace zx::experiments
