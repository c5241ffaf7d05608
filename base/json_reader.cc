#include "base/json_reader.h"

#include <unordered_set>

#include "base/input_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace zx::json {

// --- Diagnostics --------------------------------------------------------------

void Diagnostics::error(std::string pointer, std::string message) {
  list_.push_back({source_, std::move(pointer), std::move(message)});
}

void Diagnostics::throw_if_errors() const {
  if (!list_.empty()) throw InputError(list_);
}

// --- helpers ------------------------------------------------------------------

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string describe(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return value.dump();
    case nlohmann::json::value_t::string: {
      std::string s = value.dump();
      if (s.size() > 60) s = s.substr(0, 57) + "...";
      return "the string " + s;
    }
    case nlohmann::json::value_t::array:
      return fmt::format("an array of {} element{}", value.size(), value.size() == 1 ? "" : "s");
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  return "an unsupported value";
}

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions
// and transpositions of neighbours ("rign" -> "ring") each cost 1.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the table (the transposition looks two back): memory in
  // the shorter word's length, whatever the longer one's.
  const std::size_t n = a.size();
  const std::size_t m = b.size();
  std::vector<std::size_t> two_back(m + 1), previous(m + 1), current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], two_back[j - 2] + 1);
      }
    }
    std::swap(two_back, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::string format_range(const IntRange& r) {
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  if (r.min == kMin && r.max == kMax) return "an integer";
  if (r.max == kMax) return fmt::format("an integer >= {}", r.min);
  if (r.min == kMin) return fmt::format("an integer <= {}", r.max);
  return fmt::format("an integer in [{}, {}]", r.min, r.max);
}

std::string format_range(const NumberRange& r) {
  const bool lo = std::isfinite(r.min);
  const bool hi = std::isfinite(r.max);
  if (!lo && !hi) return "a number";
  if (lo && hi) {
    return fmt::format("a number in {}{}, {}{}", r.exclusive ? "(" : "[", r.min, r.max,
                       r.exclusive ? ")" : "]");
  }
  if (lo) return fmt::format("a number {} {}", r.exclusive ? ">" : ">=", r.min);
  return fmt::format("a number {} {}", r.exclusive ? "<" : "<=", r.max);
}

bool in_range(double v, const NumberRange& r) {
  return r.exclusive ? (v > r.min && v < r.max) : (v >= r.min && v <= r.max);
}

// Reads an integer from a JSON value, accepting floats with no fraction
// (1e3) but not 2.5 or strings.
std::optional<std::int64_t> as_integer(const nlohmann::json& v) {
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() &&
        v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return v.get<std::int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.0e15) {
      return static_cast<std::int64_t>(d);
    }
  }
  return std::nullopt;
}

bool check_int(const nlohmann::json& v, const IntRange& range, std::int64_t& out,
               std::string& problem) {
  const std::optional<std::int64_t> i = as_integer(v);
  if (!i || *i < range.min || *i > range.max) {
    problem = fmt::format("expected {}, got {}", format_range(range), describe(v));
    return false;
  }
  out = *i;
  return true;
}

bool check_number(const nlohmann::json& v, const NumberRange& range, double& out,
                  std::string& problem) {
  if (!v.is_number() || !in_range(v.get<double>(), range)) {
    problem = fmt::format("expected {}, got {}", format_range(range), describe(v));
    return false;
  }
  out = v.get<double>();
  return true;
}

}  // namespace

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  // A unit suffix left out ("start" for "start_ns") is a likely slip too:
  // one candidate that extends the word is the answer.
  if (word.size() >= 3) {
    std::optional<std::string> extension;
    int extensions = 0;
    for (const std::string& c : candidates) {
      if (c.size() > word.size() && c.starts_with(word)) {
        extension = c;
        ++extensions;
      }
    }
    if (extensions == 1) return extension;
  }
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    // The distance is at least the difference in length, and a suggestion
    // needs it under half the longer word: a candidate that cannot pass
    // costs no table (a 10 MB word against short names costs nothing).
    const std::size_t gap = word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (gap * 2 >= std::max(word.size(), c.size())) continue;
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  // A likely typo: a few edits, and fewer than half the word.
  if (best && best_distance <= std::max<std::size_t>(2, word.size() / 3) &&
      best_distance * 2 < std::max(word.size(), best->size())) {
    return best;
  }
  return std::nullopt;
}

// --- ObjectReader -------------------------------------------------------------

ObjectReader::ObjectReader(const nlohmann::json& value, std::string pointer,
                           Diagnostics& diagnostics)
    : value_(value), pointer_(std::move(pointer)), diagnostics_(&diagnostics),
      valid_(value.is_object()) {
  if (!valid_) {
    diagnostics_->error(pointer_, fmt::format("expected an object, got {}", describe(value)));
  }
}

std::string ObjectReader::child_pointer(std::string_view key) const {
  return pointer_ + "/" + escape_pointer_token(key);
}

bool ObjectReader::has(std::string_view key) const {
  return valid_ && value_.find(key) != value_.end();
}

const nlohmann::json* ObjectReader::find(std::string_view key) {
  known_.emplace_back(key);
  if (!valid_) return nullptr;
  const auto it = value_.find(key);
  return it == value_.end() ? nullptr : &*it;
}

void ObjectReader::allow(std::string_view key) { known_.emplace_back(key); }

void ObjectReader::error(std::string_view key, std::string message) {
  diagnostics_->error(key.empty() ? pointer_ : child_pointer(key), std::move(message));
}

bool ObjectReader::require(std::string_view key) {
  known_.emplace_back(key);
  if (!valid_) return false;
  if (has(key)) return true;
  diagnostics_->error(pointer_, fmt::format("missing required key '{}'", key));
  return false;
}

bool ObjectReader::read_int(std::string_view key, std::int64_t& out, IntRange range) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return false;
  std::string problem;
  if (!check_int(*v, range, out, problem)) {
    error(key, problem);
    return false;
  }
  return true;
}

bool ObjectReader::read_int(std::string_view key, int& out, IntRange range) {
  std::int64_t wide = out;
  if (!read_int(key, wide, range)) return false;
  if (wide < std::numeric_limits<int>::min() || wide > std::numeric_limits<int>::max()) {
    error(key, fmt::format("expected {}, got {}",
                           format_range(IntRange{std::numeric_limits<int>::min(),
                                                 std::numeric_limits<int>::max()}),
                           wide));
    return false;
  }
  out = static_cast<int>(wide);
  return true;
}

bool ObjectReader::read_number(std::string_view key, double& out, NumberRange range) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return false;
  std::string problem;
  if (!check_number(*v, range, out, problem)) {
    error(key, problem);
    return false;
  }
  return true;
}

bool ObjectReader::read_bool(std::string_view key, bool& out) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return false;
  if (!v->is_boolean()) {
    error(key, fmt::format("expected true or false, got {}", describe(*v)));
    return false;
  }
  out = v->get<bool>();
  return true;
}

bool ObjectReader::read_string(std::string_view key, std::string& out) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return false;
  if (!v->is_string()) {
    error(key, fmt::format("expected a string, got {}", describe(*v)));
    return false;
  }
  out = v->get<std::string>();
  return true;
}

bool ObjectReader::read_enum(std::string_view key, std::string& out,
                             const std::vector<std::string>& allowed) {
  std::string value;
  if (!read_string(key, value)) return false;
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    std::vector<std::string> sorted = allowed;
    std::sort(sorted.begin(), sorted.end());
    std::string message = fmt::format("unknown value '{}'", value);
    if (auto guess = closest_match(value, sorted)) message += fmt::format(" (did you mean '{}'?)", *guess);
    message += fmt::format("; valid: {}", fmt::join(sorted, ", "));
    error(key, message);
    return false;
  }
  out = value;
  return true;
}

std::optional<ObjectReader> ObjectReader::object(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  ObjectReader child(*v, child_pointer(key), *diagnostics_);
  if (!child.valid()) return std::nullopt;
  return child;
}

std::optional<ArrayReader> ObjectReader::array(std::string_view key) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return std::nullopt;
  ArrayReader child(*v, child_pointer(key), *diagnostics_);
  if (!child.valid()) return std::nullopt;
  return child;
}

void ObjectReader::finish() {
  if (!valid_) return;
  std::vector<std::string> known;  // sorted, built only when a key is unknown
  for (const auto& [key, unused] : value_.items()) {
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    if (known.empty()) {
      known.assign(known_.begin(), known_.end());
      std::sort(known.begin(), known.end());
      known.erase(std::unique(known.begin(), known.end()), known.end());
    }
    std::string message = fmt::format("unknown key '{}'", key);
    if (auto guess = closest_match(key, known)) {
      message += fmt::format(" (did you mean '{}'?)", *guess);
    } else if (!known.empty()) {
      message += fmt::format("; valid: {}", fmt::join(known, ", "));
    }
    diagnostics_->error(pointer_, message);
  }
}

// --- ArrayReader --------------------------------------------------------------

ArrayReader::ArrayReader(const nlohmann::json& value, std::string pointer, Diagnostics& diagnostics)
    : value_(value), pointer_(std::move(pointer)), diagnostics_(&diagnostics),
      valid_(value.is_array()) {
  if (!valid_) {
    diagnostics_->error(pointer_, fmt::format("expected an array, got {}", describe(value)));
  }
}

std::size_t ArrayReader::size() const { return valid_ ? value_.size() : 0; }

std::string ArrayReader::element_pointer(std::size_t index) const {
  return fmt::format("{}/{}", pointer_, index);
}

void ArrayReader::error(std::size_t index, std::string message) {
  diagnostics_->error(element_pointer(index), std::move(message));
}

ObjectReader ArrayReader::object(std::size_t index) {
  return ObjectReader(value_.at(index), element_pointer(index), *diagnostics_);
}

bool ArrayReader::read_int(std::size_t index, std::int64_t& out, IntRange range) {
  std::string problem;
  if (!check_int(value_.at(index), range, out, problem)) {
    diagnostics_->error(element_pointer(index), problem);
    return false;
  }
  return true;
}

bool ArrayReader::read_number(std::size_t index, double& out, NumberRange range) {
  std::string problem;
  if (!check_number(value_.at(index), range, out, problem)) {
    diagnostics_->error(element_pointer(index), problem);
    return false;
  }
  return true;
}

bool ArrayReader::read_string(std::size_t index, std::string& out) {
  const nlohmann::json& v = value_.at(index);
  if (!v.is_string()) {
    diagnostics_->error(element_pointer(index),
                        fmt::format("expected a string, got {}", describe(v)));
    return false;
  }
  out = v.get<std::string>();
  return true;
}

// --- Document -----------------------------------------------------------------

Document::Document(std::unique_ptr<nlohmann::json> value, std::string source)
    : value_(std::move(value)), diagnostics_(std::move(source)) {}

std::int64_t max_input_bytes() { return zx::max_input_bytes(); }

void check_input_size(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return;
  const std::int64_t limit = max_input_bytes();
  if (static_cast<std::uintmax_t>(limit) < size) {
    throw InputError(Diagnostic{path, "",
                                fmt::format("the file is {} bytes, more than the limit of {} bytes (parsing takes about "
                                            "11 times the file in memory); set ZIONSIM_MAX_INPUT_BYTES to raise it",
                                            size, limit)});
  }
}

int max_json_depth() {
  constexpr int kDefault = 512;
  constexpr int kMost = 20000;
  const char* text = std::getenv("ZIONSIM_MAX_JSON_DEPTH");
  if (text == nullptr || *text == '\0') return kDefault;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > kMost) {
    throw InputError(Diagnostic{"ZIONSIM_MAX_JSON_DEPTH", "",
                                fmt::format("expected a nesting depth in [1, {}], got '{}'", kMost, text)});
  }
  return static_cast<int>(value);
}

namespace {

// The offset where `text` first nests deeper than `limit`, or npos.
std::size_t too_deep_at(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

void check_json_depth(std::string_view text, const std::string& source) {
  const int limit = max_json_depth();
  const std::size_t at = too_deep_at(text, limit);
  if (at == std::string_view::npos) return;
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw InputError(Diagnostic{source, "",
                              fmt::format("line {}, column {}: arrays and objects nested more than {} deep; set "
                                          "ZIONSIM_MAX_JSON_DEPTH to raise the limit",
                                          line, column, limit)});
}

bool json_depth_ok(std::string_view text) { return too_deep_at(text, max_json_depth()) == std::string_view::npos; }

Document Document::load_file(const std::string& path) {
  // Bounded, regular files only, gzip inflated (base/input_file.h).
  return parse(read_input_file(path), path);
}

namespace {

// Finds keys given twice in one object while nlohmann parses (its parser
// keeps the last silently): the parser callback sees every key, and a stack
// of the containers being parsed gives each key's JSON pointer.
class DuplicateKeys {
 public:
  bool on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start: frames_.push_back(Frame{.array = false}); break;
      case E::array_start: frames_.push_back(Frame{.array = true}); break;
      case E::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        const bool seen = f.keys.size() < 16 ? std::find(f.keys.begin(), f.keys.end(), f.key) != f.keys.end()
                                             : f.many.count(f.key) > 0;
        if (seen) {
          duplicates_.push_back(pointer());
        } else if (f.keys.size() < 16) {
          f.keys.push_back(f.key);
          if (f.keys.size() == 16) f.many.insert(f.keys.begin(), f.keys.end());
        } else {
          f.many.insert(f.key);
        }
        break;
      }
      case E::object_end:
      case E::array_end:
        frames_.pop_back();
        next_element();
        break;
      case E::value: next_element(); break;
    }
    return true;
  }
  const std::vector<std::string>& duplicates() const { return duplicates_; }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // arrays: the element being parsed
    std::string key;        // objects: the key being parsed
    std::vector<std::string> keys;
    std::unordered_set<std::string> many;  // all keys, once there are 16
  };
  void next_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string pointer() const {
    std::string out;
    for (const Frame& f : frames_) out += "/" + (f.array ? std::to_string(f.index) : escape_pointer_token(f.key));
    return out;
  }
  std::vector<Frame> frames_;
  std::vector<std::string> duplicates_;
};

}  // namespace

Document Document::parse(std::string_view text, std::string source) {
  check_json_depth(text, source);
  try {
    DuplicateKeys duplicates;
    auto value = std::make_unique<nlohmann::json>(nlohmann::json::parse(
        text, [&duplicates](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          return duplicates.on_event(event, parsed);
        }));
    if (!duplicates.duplicates().empty()) {
      std::vector<Diagnostic> list;
      for (const std::string& pointer : duplicates.duplicates()) {
        list.push_back(Diagnostic{source, pointer, "the key is given twice in its object (JSON would keep the last value "
                                                   "silently); give it once"});
      }
      throw InputError(std::move(list));
    }
    return Document(std::move(value), std::move(source));
  } catch (const nlohmann::json::parse_error& e) {
    // Report the line and column of the byte where parsing failed.
    std::size_t line = 1;
    std::size_t column = 1;
    const std::size_t stop = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (std::size_t i = 0; i < stop; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    const auto colon = what.find(": ", what.find("parse error"));
    const std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw InputError(Diagnostic{source, fmt::format("line {}, column {}", line, column),
                                fmt::format("invalid JSON: {}", detail)});
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e400): nlohmann reports it without a
    // position. Infinity and NaN have no JSON spelling, so this is the only
    // way a non-finite number could enter.
    std::string what = e.what();
    const auto bracket = what.find("] ");
    throw InputError(Diagnostic{source, "", fmt::format("invalid JSON: {}",
                                                         bracket == std::string::npos ? what : what.substr(bracket + 2))});
  }
}

void Document::check_schema_version(ObjectReader& root, const std::vector<int>& supported) {
  if (!root.valid() || !root.require("schema_version")) return;
  int version = 0;
  if (!root.read_int("schema_version", version)) return;
  if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
    root.error("schema_version", fmt::format("unsupported schema_version {}; supported: {}",
                                             version, fmt::join(supported, ", ")));
  }
}

void apply_assignment(nlohmann::json& doc, const std::string& assignment, std::string_view option,
                      std::string_view described_as) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(Diagnostic{std::string(option), "", fmt::format("expected KEY=VALUE, got '{}'", assignment)});
  }
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  check_json_depth(text, fmt::format("{} {}", option, assignment.substr(0, eq)));
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = text;
  nlohmann::json* node = &doc;
  const std::string where = fmt::format("{} {}", option, assignment);
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) throw InputError(Diagnostic{where, "", "empty key in the path"});
    if (!node->is_object()) {
      throw InputError(Diagnostic{where, "", fmt::format("'{}' is not an object in {}", path.substr(0, start - 1),
                                                         described_as)});
    }
    if (dot == std::string::npos) {
      (*node)[key] = value;
      return;
    }
    node = &(*node)[key];
    if (node->is_null()) *node = nlohmann::json::object();
    start = dot + 1;
  }
}

}  // namespace zx::json
