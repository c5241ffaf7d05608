// Tests of the JSON input reader: typed reads with ranges, absent keys keep
// defaults, unknown keys are errors with a suggestion, every problem of a
// file is reported at once with its JSON pointer, syntax errors give a line.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "base/json_reader.h"

namespace zx::json {
namespace {

std::vector<std::string> messages(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const Diagnostic& x : d.list()) out.push_back(x.to_string());
  return out;
}

TEST(JsonReaderTest, ReadsTypedFieldsAndKeepsDefaultsForAbsentKeys) {
  Document doc = Document::parse(
      R"({"nodes": 16, "ratio": 2.5, "rail": true, "name": "zx", "big": 1e3})", "c.json");
  ObjectReader root = doc.root();
  int nodes = 1;
  double ratio = 1.0;
  bool rail = false;
  std::string name;
  std::int64_t big = 0;
  int absent = 42;
  EXPECT_TRUE(root.read_int("nodes", nodes, {.min = 1, .max = 64}));
  EXPECT_TRUE(root.read_number("ratio", ratio, {.min = 1.0}));
  EXPECT_TRUE(root.read_bool("rail", rail));
  EXPECT_TRUE(root.read_string("name", name));
  EXPECT_TRUE(root.read_int("big", big));  // 1e3 is a whole number
  EXPECT_FALSE(root.read_int("absent", absent));
  root.finish();
  EXPECT_FALSE(doc.diagnostics().has_errors()) << testing::PrintToString(messages(doc.diagnostics()));
  EXPECT_EQ(nodes, 16);
  EXPECT_EQ(ratio, 2.5);
  EXPECT_TRUE(rail);
  EXPECT_EQ(name, "zx");
  EXPECT_EQ(big, 1000);
  EXPECT_EQ(absent, 42);
  EXPECT_NO_THROW(doc.throw_if_errors());
}

// Every problem in the file is reported, each with the file, the pointer,
// what was expected and what was found; values that fail keep their defaults.
TEST(JsonReaderTest, ReportsEveryProblemWithPointer) {
  Document doc = Document::parse(R"({
    "schema_version": 7,
    "nodes": 0,
    "ratio": "fast",
    "fabric": {"oversubscripton": 2, "spines": 2.5, "kind": "clos3"},
    "list": [1, "two", 3],
    "rail": 1
  })",
                                 "cluster.json");
  ObjectReader root = doc.root();
  doc.check_schema_version(root, {1});
  int nodes = 1;
  double ratio = 1.0;
  bool rail = false;
  root.read_int("nodes", nodes, {.min = 1, .max = 4096});
  root.read_number("ratio", ratio, {.min = 0.0, .exclusive = true});
  root.read_bool("rail", rail);
  if (auto fabric = root.object("fabric")) {
    double oversubscription = 1.0;
    int spines = 1;
    std::string kind;
    fabric->read_number("oversubscription", oversubscription, {.min = 1.0});
    fabric->read_int("spines", spines, {.min = 1});
    fabric->read_enum("kind", kind, {"clos2", "rail"});
    fabric->finish();
  }
  if (auto list = root.array("list")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::int64_t v = 0;
      list->read_int(i, v);
    }
  }
  root.finish();
  EXPECT_EQ(nodes, 1);
  EXPECT_EQ(messages(doc.diagnostics()),
            (std::vector<std::string>{
                "cluster.json: /schema_version: unsupported schema_version 7; supported: 1",
                "cluster.json: /nodes: expected an integer in [1, 4096], got 0",
                "cluster.json: /ratio: expected a number > 0, got the string \"fast\"",
                "cluster.json: /rail: expected true or false, got 1",
                "cluster.json: /fabric/spines: expected an integer >= 1, got 2.5",
                "cluster.json: /fabric/kind: unknown value 'clos3' (did you mean 'clos2'?); "
                "valid: clos2, rail",
                "cluster.json: /fabric: unknown key 'oversubscripton' (did you mean "
                "'oversubscription'?)",
                "cluster.json: /list/1: expected an integer, got the string \"two\"",
            }));
  try {
    doc.throw_if_errors();
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics().size(), 8u);
  }
}

TEST(JsonReaderTest, MissingRequiredKeysAndWrongShapes) {
  Document doc = Document::parse(R"({"fabric": [1, 2], "nodes": {"a": 1}})", "x.json");
  ObjectReader root = doc.root();
  doc.check_schema_version(root, {1});
  EXPECT_FALSE(root.object("fabric").has_value());
  int nodes = 3;
  root.read_int("nodes", nodes);
  root.finish();
  EXPECT_EQ(messages(doc.diagnostics()),
            (std::vector<std::string>{
                "x.json: missing required key 'schema_version'",
                "x.json: /fabric: expected an object, got an array of 2 elements",
                "x.json: /nodes: expected an integer, got an object",
            }));
  Document not_object = Document::parse("[1]", "y.json");
  ObjectReader r = not_object.root();
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(messages(not_object.diagnostics()),
            (std::vector<std::string>{"y.json: expected an object, got an array of 1 element"}));
}

// A key nothing resembles is listed with the valid keys instead.
TEST(JsonReaderTest, UnknownKeyWithoutCloseMatchListsValidKeys) {
  Document doc = Document::parse(R"({"nodes": 2, "zzzzzzzz": 1})", "c.json");
  ObjectReader root = doc.root();
  int nodes = 0;
  root.read_int("nodes", nodes);
  root.allow("preset");
  root.finish();
  EXPECT_EQ(messages(doc.diagnostics()),
            (std::vector<std::string>{"c.json: unknown key 'zzzzzzzz'; valid: nodes, preset"}));
}

TEST(JsonReaderTest, SyntaxErrorsNameLineAndColumn) {
  try {
    Document::parse("{\n  \"nodes\": 4,\n  \"x\": ]\n}", "bad.json");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].source, "bad.json");
    EXPECT_EQ(e.diagnostics()[0].location, "line 3, column 8");
    EXPECT_NE(e.diagnostics()[0].message.find("invalid JSON"), std::string::npos);
  }
  EXPECT_THROW(Document::parse("", "empty.json"), InputError);
  EXPECT_THROW(Document::parse("{\"a\": 1} trailing", "t.json"), InputError);
}

TEST(JsonReaderTest, LoadFileReportsUnreadableFiles) {
  try {
    Document::load_file("no/such/file.json");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].to_string(), "no/such/file.json: cannot open the file for reading: No such file or directory");
  }
  const std::string path = testing::TempDir() + "/ok.json";
  {
    std::ofstream(path) << R"({"schema_version": 1})";
  }
  Document doc = Document::load_file(path);
  ObjectReader root = doc.root();
  doc.check_schema_version(root, {1, 2});
  root.finish();
  EXPECT_FALSE(doc.diagnostics().has_errors());
  std::remove(path.c_str());
}

// Files over ZIONSIM_MAX_INPUT_BYTES are refused before they are read, with
// the size, the limit and how to raise it; numbers beyond double's range are
// errors that name the file.
TEST(JsonReaderTest, RefusesFilesOverTheInputLimit) {
  const std::string path = testing::TempDir() + "/big.json";
  {
    std::ofstream(path) << R"({"schema_version": 1, "padding": "012345678"})";  // 45 bytes
  }
  ::setenv("ZIONSIM_MAX_INPUT_BYTES", "44", 1);
  try {
    Document::load_file(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].to_string(),
              path + ": the file is 45 bytes, more than the limit of 44 bytes (parsing takes about 11 times the file "
                     "in memory); set ZIONSIM_MAX_INPUT_BYTES to raise it");
  }
  ::setenv("ZIONSIM_MAX_INPUT_BYTES", "45", 1);
  EXPECT_NO_THROW(Document::load_file(path));
  ::setenv("ZIONSIM_MAX_INPUT_BYTES", "lots", 1);
  EXPECT_THROW(Document::load_file(path), InputError);
  ::unsetenv("ZIONSIM_MAX_INPUT_BYTES");
  EXPECT_EQ(max_input_bytes(), std::int64_t{1} << 30);
  std::remove(path.c_str());

  try {
    Document::parse(R"({"x": 1e400})", "huge.json");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].to_string(), "huge.json: invalid JSON: number overflow parsing '1e400'");
  }
}

TEST(JsonReaderTest, PointerTokensAreEscaped) {
  EXPECT_EQ(escape_pointer_token("a/b~c"), "a~1b~0c");
  Document doc = Document::parse(R"({"a/b": "x"})", "p.json");
  ObjectReader root = doc.root();
  int v = 0;
  root.read_int("a/b", v);
  EXPECT_EQ(messages(doc.diagnostics()),
            (std::vector<std::string>{"p.json: /a~1b: expected an integer, got the string \"x\""}));
}

TEST(ClosestMatchTest, SuggestsOnlyLikelyTypos) {
  EXPECT_EQ(closest_match("bandwith_gbyte_per_s", {"bandwidth_gbyte_per_s", "latency_ns"}),
            "bandwidth_gbyte_per_s");
  EXPECT_EQ(closest_match("rign", {"ring", "tree", "direct"}), "ring");
  EXPECT_EQ(closest_match("xyz", {"ring", "tree"}), std::nullopt);
  EXPECT_EQ(closest_match("a", {}), std::nullopt);
  // A left-out unit suffix: the one key that extends the word.
  EXPECT_EQ(closest_match("start", {"start_ns", "size_bytes"}), "start_ns");
  EXPECT_EQ(closest_match("a100", {"a100-40gb", "a100-80gb"}), std::nullopt);
}

}  // namespace
}  // namespace zx::json

namespace zx::json {
namespace {

TEST(JsonDepthTest, DeepNestingIsRefusedBeforeParsingWithItsPlace) {
  const std::string ok = std::string(512, '[') + std::string(512, ']');
  EXPECT_NO_THROW(check_json_depth(ok, "ok.json"));
  const std::string deep = "{\"a\":\n  " + std::string(600, '[') + std::string(600, ']') + "}";
  try {
    check_json_depth(deep, "deep.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diagnostics()[0].to_string(),
              "deep.json: line 2, column 514: arrays and objects nested more than 512 deep; set "
              "ZIONSIM_MAX_JSON_DEPTH to raise the limit");
  }
  // Brackets inside strings, escaped quotes included, do not nest.
  const std::string in_strings = "[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]";
  EXPECT_TRUE(json_depth_ok(in_strings));
  EXPECT_NO_THROW((void)Document::parse(in_strings, "strings.json"));
  // Every document is checked: Document::parse refuses the deep one.
  EXPECT_THROW((void)Document::parse(deep, "deep.json"), InputError);
  setenv("ZIONSIM_MAX_JSON_DEPTH", "1000", 1);
  EXPECT_TRUE(json_depth_ok(deep));
  setenv("ZIONSIM_MAX_JSON_DEPTH", "30000", 1);
  EXPECT_THROW((void)max_json_depth(), InputError);  // beyond what the stack holds
  unsetenv("ZIONSIM_MAX_JSON_DEPTH");
  EXPECT_EQ(max_json_depth(), 512);
}

}  // namespace
}  // namespace zx::json

namespace zx::json {
namespace {

TEST(JsonDuplicateKeysTest, AKeyGivenTwiceIsAnErrorAtItsPointer) {
  const std::string text = R"({"a": 1, "b": [{"x": 1}, {"x": 2, "y": 3, "x": 4}], "c/d": {"k": 1, "k": 2}})";
  try {
    (void)Document::parse(text, "dup.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].to_string(),
              "dup.json: /b/1/x: the key is given twice in its object (JSON would keep the last value silently); "
              "give it once");
    EXPECT_EQ(e.diagnostics()[1].location, "/c~1d/k");
  }
  // The same key in different objects, and many keys in one, are fine.
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += fmt::format("{}\"k{}\": {{\"k{}\": 1}}", i ? ", " : "", i, i);
  EXPECT_NO_THROW((void)Document::parse(many + "}", "many.json"));
  EXPECT_THROW((void)Document::parse(many + ", \"k57\": 2}", "many.json"), InputError);
}

// Class 4 of hostile inputs: what an error costs and says is bounded by
// the program, not by the input.
TEST(JsonReaderTest, SuggestionsForHugeWordsCostNothing) {
  const std::string huge(10'000'000, 'z');
  EXPECT_EQ(closest_match(huge, {"zionex", "zion", "hgx"}), std::nullopt);
  EXPECT_EQ(closest_match("rign", {"ring", "tree"}), "ring");  // transpositions still count 1
  EXPECT_EQ(closest_match("zionx", {"hgx", "zion", "zionex"}), "zion");
}

TEST(JsonReaderTest, InputErrorsAreBounded) {
  std::vector<Diagnostic> many;
  for (int i = 0; i < 150; ++i) many.push_back(Diagnostic{"f.json", "/ops/" + std::to_string(i), "bad"});
  const InputError e(many);
  ASSERT_EQ(e.diagnostics().size(), 101u);
  EXPECT_EQ(e.diagnostics()[99].location, "/ops/99");
  EXPECT_EQ(e.diagnostics()[100].to_string(), "f.json: and 50 more problems (the first 100 are shown)");
  const InputError one(Diagnostic{"f.json", "/preset", "unknown value '" + std::string(5000, 'z') + "'"});
  const std::string& m = one.diagnostics()[0].message;
  EXPECT_LE(m.size(), 1000u);
  EXPECT_NE(m.find("[... 4216 characters left out ...]"), std::string::npos) << m;
  EXPECT_EQ(m.substr(0, 15), "unknown value '");
  EXPECT_EQ(m.back(), '\'');
  // A short one is untouched.
  EXPECT_EQ(InputError(Diagnostic{"f", "/a", "expected 1, got 2"}).diagnostics()[0].message, "expected 1, got 2");
}

}  // namespace
}  // namespace zx::json
