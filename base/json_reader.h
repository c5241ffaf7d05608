// File: base/json_reader.h
//
// Reading validated JSON input files: configs, cluster files, model files,
// profiles. The reader turns a parsed document into typed fields at the
// boundary and collects every problem instead of stopping at the first:
//
//   zx::json::Document doc = zx::json::Document::load_file(path);
//   zx::json::ObjectReader root = doc.root();
//   root.read_int("nodes", spec.nodes, {.min = 1, .max = 65536});
//   root.read_number("latency_ns", latency_ns, {.min = 0});
//   root.finish();          // unknown keys are errors, with a suggestion
//   doc.throw_if_errors();  // one zx::InputError listing every problem
//
// Each problem names the file, the JSON pointer of the value, what was
// expected and what was found:
//
//   cluster.json: /fabric/spines: expected an integer in [1, 4096], got 0
//   cluster.json: /fabric: unknown key 'oversubscripton' (did you mean 'oversubscription'?)
//
// A field that is absent keeps the value it had (its default, or a preset's
// value being overridden); require() makes a key mandatory. Keys are matched
// exactly; a key that is read is "known", every other key is an error at
// finish(). This header includes nlohmann/json: include it from *_config.cc
// files and tools, not from widely used headers.

#ifndef ZIONSIM_BASE_JSON_READER_H_
#define ZIONSIM_BASE_JSON_READER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace zx::json {

/// The problems found in one input, in the order they were found.
class Diagnostics {
 public:
  explicit Diagnostics(std::string source) : source_(std::move(source)) {}

  void error(std::string pointer, std::string message);
  bool has_errors() const { return !list_.empty(); }
  const std::vector<Diagnostic>& list() const { return list_; }
  const std::string& source() const { return source_; }
  /// Throws one InputError with every problem, if there is any.
  void throw_if_errors() const;

 private:
  std::string source_;
  std::vector<Diagnostic> list_;
};

struct IntRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

struct NumberRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  /// When true the bounds themselves are excluded: (min, max).
  bool exclusive = false;
};

class ArrayReader;

/// Reads the keys of one JSON object, remembering which were read.
class ObjectReader {
 public:
  /// `value` must outlive the reader. If it is not an object, that is
  /// reported once and every read is a no-op.
  ObjectReader(const nlohmann::json& value, std::string pointer, Diagnostics& diagnostics);

  bool valid() const { return valid_; }
  const std::string& pointer() const { return pointer_; }
  bool has(std::string_view key) const;

  /// Reports a missing key; returns whether it is present.
  bool require(std::string_view key);

  /// Each read_* returns true if the key was present and valid (and then
  /// assigns `out`); false if absent (out untouched) or invalid (reported).
  bool read_int(std::string_view key, std::int64_t& out, IntRange range = {});
  bool read_int(std::string_view key, int& out, IntRange range = {});
  bool read_number(std::string_view key, double& out, NumberRange range = {});
  bool read_bool(std::string_view key, bool& out);
  bool read_string(std::string_view key, std::string& out);
  /// A string that must be one of `allowed` (error lists them, sorted).
  bool read_enum(std::string_view key, std::string& out, const std::vector<std::string>& allowed);

  /// A nested object; an invalid reader if absent or not an object.
  std::optional<ObjectReader> object(std::string_view key);
  std::optional<ArrayReader> array(std::string_view key);

  /// The raw value of `key` (marked known), or nullptr if absent: for values
  /// that may take several types. Report problems with error().
  const nlohmann::json* raw(std::string_view key) { return find(key); }

  /// Marks keys as known without reading them (e.g. read by another layer).
  void allow(std::string_view key);
  /// Reports every key that no read_*, object, array or allow touched, with
  /// the closest known key as a suggestion.
  void finish();

  /// Reports a problem at this object's `key` (or at the object if empty).
  void error(std::string_view key, std::string message);

 private:
  const nlohmann::json* find(std::string_view key);
  std::string child_pointer(std::string_view key) const;

  const nlohmann::json& value_;
  std::string pointer_;
  Diagnostics* diagnostics_;
  // Keys read so far, in call order (duplicates allowed). A flat vector, not
  // a set: a million-object trace must not build a tree per object, and
  // short keys fit the small-string buffer.
  std::vector<std::string> known_;
  bool valid_;
};

/// Reads the elements of one JSON array.
class ArrayReader {
 public:
  ArrayReader(const nlohmann::json& value, std::string pointer, Diagnostics& diagnostics);

  bool valid() const { return valid_; }
  std::size_t size() const;
  const std::string& pointer() const { return pointer_; }
  std::string element_pointer(std::size_t index) const;
  /// Element `index` as an object; reported if it is not one.
  ObjectReader object(std::size_t index);
  bool read_int(std::size_t index, std::int64_t& out, IntRange range = {});
  bool read_number(std::size_t index, double& out, NumberRange range = {});
  bool read_string(std::size_t index, std::string& out);
  /// Reports a problem at element `index`.
  void error(std::size_t index, std::string message);

 private:
  const nlohmann::json& value_;
  std::string pointer_;
  Diagnostics* diagnostics_;
  bool valid_;
};

/// The largest input file zionsim reads, in bytes: 1 GiB unless the
/// environment variable ZIONSIM_MAX_INPUT_BYTES says otherwise. A parsed JSON
/// document takes about 11 times its text in memory (a 94 MB trace peaks at
/// 1.0 GB), so a larger file would exhaust a 24 GiB machine.
std::int64_t max_input_bytes();

/// Throws an InputError naming `path`, the limit and how to raise it when
/// the file is larger than max_input_bytes(). Missing files pass (the
/// caller's open reports them).
void check_input_size(const std::string& path);

/// The deepest nesting of arrays and objects zionsim parses: 512 unless the
/// environment variable ZIONSIM_MAX_JSON_DEPTH says otherwise (at most
/// 20,000: walking a value recurses once per level, and a deeper document
/// would overflow the stack). zionsim's own formats nest fewer than 10 deep.
int max_json_depth();

/// Throws an InputError naming `source`, the line and column where `text`
/// first nests deeper than max_json_depth(), the limit and how to raise it.
/// Every JSON parse of zionsim's (files, --set values, --options) calls this
/// first, so that no document deep enough to overflow the stack is parsed.
/// Brackets inside strings do not count; the text need not be valid JSON.
void check_json_depth(std::string_view text, const std::string& source);

/// Whether `text` nests no deeper than max_json_depth() (for detectors and
/// lenient parses that answer "no" rather than throw).
bool json_depth_ok(std::string_view text);

/// A parsed input file and the problems found in it.
class Document {
 public:
  /// Reads and parses a file. Unreadable files and syntax errors throw an
  /// InputError naming the file (and line and column for syntax errors).
  static Document load_file(const std::string& path);
  /// Parses text that came from `source` (a file name, "<stdin>", ...).
  static Document parse(std::string_view text, std::string source);

  const nlohmann::json& value() const { return *value_; }
  ObjectReader root() { return ObjectReader(*value_, "", diagnostics_); }
  Diagnostics& diagnostics() { return diagnostics_; }
  void throw_if_errors() const { diagnostics_.throw_if_errors(); }

  /// Checks /schema_version: required, an integer, one of `supported`.
  void check_schema_version(ObjectReader& root, const std::vector<int>& supported);

 private:
  Document(std::unique_ptr<nlohmann::json> value, std::string source);
  std::unique_ptr<nlohmann::json> value_;
  Diagnostics diagnostics_;
};

/// "an integer", "a string", ... for "expected X, got Y" messages; values are
/// shown for scalars ("got -3", "got \"abc\"") and by type otherwise.
std::string describe(const nlohmann::json& value);

/// The closest of `candidates` to `word` by edit distance, if close enough
/// to be a likely typo.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// Escapes a key for use in a JSON pointer (RFC 6901: ~ -> ~0, / -> ~1).
std::string escape_pointer_token(std::string_view key);

/// Applies a command-line assignment "a.b.c=VALUE" (--set) to `doc`: the
/// value is JSON when it parses as JSON (2, true, "x", {...}), else a plain
/// string; missing objects on the path are created. `described_as` names the
/// document in errors ("the cluster description"). Throws zx::InputError
/// naming `option` for a malformed assignment or a path through a non-object.
void apply_assignment(nlohmann::json& doc, const std::string& assignment, std::string_view option,
                      std::string_view described_as);

}  // namespace zx::json

#endif  // ZIONSIM_BASE_JSON_READER_H_
