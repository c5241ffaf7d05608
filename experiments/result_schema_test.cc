// The writers of a result schema against small golden strings: the table
// (plain and grouped), CSV quoting, JSON escaping and absent cells, and the
// checks on a row's width and cell types.

#include "experiments/result_schema.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "base/check.h"

namespace zx::experiments {
namespace {

std::string table(const Schema& s, const std::vector<Row>& rows, const TableStyle& style = {}) {
  std::ostringstream out;
  write_table(out, s, rows, style);
  return out.str();
}

std::string csv(const Schema& s, const std::vector<Row>& rows) {
  std::ostringstream out;
  write_csv(out, s, rows);
  return out.str();
}

// Columns fit their headers, units and cells; text left-aligned when asked,
// numbers at the table's decimals (not the CSV's); a column outside the
// table is left out.
TEST(ResultSchemaTest, PlainTable) {
  const Schema s{{{.name = "name", .align = Align::kLeft},
                  {.name = "size_bytes", .header = "size", .unit = "B", .format = Format::kInteger},
                  {.name = "hidden", .format = Format::kInteger, .outputs = kCsv},
                  {.name = "time_us", .header = "time", .unit = "us", .format = Format::kFixed, .decimals = 3,
                   .table_decimals = 1}}};
  const std::vector<Row> rows = {{std::string("ring"), std::int64_t{1024}, std::int64_t{7}, 33.021},
                                 {std::string("hierarchical"), std::int64_t{8}, std::int64_t{7}, 5.26}};
  EXPECT_EQ(table(s, rows),
            "name         size time\n"
            "              (B) (us)\n"
            "ring         1024 33.0\n"
            "hierarchical    8  5.3\n");
  // Without units, no second header line; fixed widths let a long cell
  // overflow its line alone, as fmt's "{:>3}" would.
  const Schema narrow{{{.name = "n", .format = Format::kInteger, .width = 3}}};
  EXPECT_EQ(table(narrow, {{std::int64_t{12345}}, {std::int64_t{1}}}, {.fit = false}), "  n\n12345\n  1\n");
}

// Rows side by side: each group's first column widens to a longer label,
// labels centered, grouped headers with their units on the second line.
TEST(ResultSchemaTest, GroupedTable) {
  const Schema s{{{.name = "size_bytes", .header = "size", .unit = "B", .format = Format::kInteger, .width = 6},
                  {.name = "algorithm", .outputs = kCsv | kJson},
                  {.name = "time_us", .header = "time", .unit = "us", .format = Format::kFixed, .decimals = 2,
                   .width = 8},
                  {.name = "busbw", .format = Format::kFixed, .decimals = 1, .width = 5}}};
  const std::vector<Row> rows = {{std::int64_t{8}, std::string("ring"), 1.5, 0.26},
                                 {std::int64_t{8}, std::string("x"), 2.0, 0.5},
                                 {std::int64_t{1024}, std::string("ring"), 10.126, 3.0},
                                 {std::int64_t{1024}, std::string("x"), 20.0, 1.7}};
  std::ostringstream out;
  write_table(out, s, rows, {.columns = {"time_us", "busbw"}, .labels = {"ring", "a-longer-label-here"}},
              {.header_prefix = "# ", .row_prefix = "  ", .fit = false});
  EXPECT_EQ(out.str(),
            "#   size |      ring      | a-longer-label-here\n"
            "#    (B) | time(us) busbw |      time(us) busbw\n"
            "       8 |     1.50   0.3 |          2.00   0.5\n"
            "    1024 |    10.13   3.0 |         20.00   1.7\n");
  // Rows that do not make whole lines are a bug.
  std::vector<Row> odd = rows;
  odd.pop_back();
  EXPECT_THROW(write_table(out, s, odd, {.columns = {"time_us"}, .labels = {"a", "b"}}), InvariantError);
}

// The table's decorations: bars before groups of columns, a percent and a
// suffix in the table alone (the CSV and JSON keep the numbers), a mark
// for an absent cell, and a row whose line ends with its reason in place of
// the columns it has no values for (the others take no place for it).
TEST(ResultSchemaTest, TableDecorationsAndTheRestOfALine) {
  const Schema s{{{.name = "knob", .format = Format::kQuotedText, .width = 4},
                  {.name = "nodes", .format = Format::kInteger, .width = 5, .table_before = "| "},
                  {.name = "fits", .format = Format::kJson, .outputs = kCsv | kJson},
                  {.name = "reason", .table_before = "  does not fit: ", .table_rest = true, .outputs = kTable | kJson,
                   .absent = Absent::kOmitted},
                  {.name = "scaling", .format = Format::kPercent, .decimals = 4, .table_decimals = 0, .width = 7,
                   .absent = Absent::kOmitted},
                  {.name = "speedup", .format = Format::kFixed, .decimals = 4, .table_decimals = 3, .width = 8,
                   .table_suffix = "x", .table_absent = "-", .absent = Absent::kOmitted},
                  {.name = "bottleneck", .table_before = "| ", .absent = Absent::kOmitted}}};
  const std::vector<Row> rows = {
      {std::string("100"), std::int64_t{1}, nlohmann::ordered_json(true), {}, 1.0, 1.0, std::string("compute")},
      {std::string("100"), std::int64_t{8}, nlohmann::ordered_json(false), std::string("too big"), {}, {}, {}},
      {std::string("400"), std::int64_t{16}, nlohmann::ordered_json(true), {}, 0.7785, {}, std::string("")}};
  EXPECT_EQ(table(s, rows, {.fit = false}),
            "knob | nodes scaling  speedup | bottleneck\n"
            " 100 |     1    100%   1.000x | compute\n"
            " 100 |     8   does not fit: too big\n"
            " 400 |    16     78%        - | \n");
  EXPECT_EQ(csv(s, rows),
            "knob,nodes,fits,scaling,speedup,bottleneck\n"
            "\"100\",1,true,1.0000,1.0000,compute\n"
            "\"100\",8,false,,,\n"
            "\"400\",16,true,0.7785,,\n");
  EXPECT_EQ(json_rows(s, rows).dump(),
            R"([{"knob":"100","nodes":1,"fits":true,"scaling":1.0,"speedup":1.0,"bottleneck":"compute"},)"
            R"({"knob":"100","nodes":8,"fits":false,"reason":"too big"},)"
            R"({"knob":"400","nodes":16,"fits":true,"scaling":0.7785,"bottleneck":""}])");
  // Fitted widths count the suffix and the mark; a grouped table has no
  // rest of a line.
  const Schema fitted{
      {{.name = "s", .format = Format::kFixed, .decimals = 1, .table_suffix = "x", .table_absent = "n/a"}}};
  EXPECT_EQ(table(fitted, {{12.34}, {Cell{}}}), "    s\n12.3x\n  n/a\n");
  std::ostringstream out;
  EXPECT_THROW(write_table(out, s, rows, {.columns = {"scaling"}, .labels = {"a"}}), InvariantError);
}

// RFC 4180: a field with a comma, quote or line break in quotes, quotes
// doubled; quoted text always in quotes; numbers at the CSV's decimals; an
// absent cell empty.
TEST(ResultSchemaTest, CsvQuoting) {
  const Schema s{{{.name = "nic-gbit", .format = Format::kQuotedText},
                  {.name = "name"},
                  {.name = "n", .format = Format::kInteger},
                  {.name = "x", .format = Format::kFixed, .decimals = 3, .table_decimals = 1},
                  {.name = "chosen"},
                  {.name = "table_only", .outputs = kTable}}};
  const std::vector<Row> rows = {
      {std::string("400"), std::string("a,b"), std::int64_t{1}, 0.5, std::string("ring/LL"), std::string("t")},
      {std::string("say \"hi\""), std::string("plain"), std::int64_t{-2}, 1.23456, {}, std::string("t")},
      {std::string(""), std::string("two\nlines"), std::int64_t{0}, 0.0, std::string("q\""), std::string("t")}};
  EXPECT_EQ(csv(s, rows),
            "nic-gbit,name,n,x,chosen\n"
            "\"400\",\"a,b\",1,0.500,ring/LL\n"
            "\"say \"\"hi\"\"\",plain,-2,1.235,\n"
            "\"\",\"two\nlines\",0,0.000,\"q\"\"\"\n");
  EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(csv_quoted("x"), "\"x\"");
}

// Reals in their shortest form that reads back the same, in the table and
// the CSV; JSON's number is the same double.
TEST(ResultSchemaTest, Reals) {
  const Schema s{{{.name = "x", .format = Format::kReal, .width = 8}}};
  const std::vector<Row> rows = {{230.0}, {0.1}, {-0.2432877088739413}, {2.5e6}, {1e20}, {Cell{}}};
  EXPECT_EQ(csv(s, rows), "x\n230\n0.1\n-0.2432877088739413\n2500000\n1e+20\n\n");
  EXPECT_EQ(table(s, rows, {.fit = false}),
            "       x\n     230\n     0.1\n-0.2432877088739413\n 2500000\n   1e+20\n        \n");
  EXPECT_EQ(json_rows(s, rows).dump(),
            R"([{"x":230.0},{"x":0.1},{"x":-0.2432877088739413},{"x":2500000.0},{"x":1e+20},{"x":null}])");
}

// A note follows a row's other cells (the separator and its text) where
// the row has one, with no header and nothing where it has none; not in
// the other outputs, nor in a grouped table.
TEST(ResultSchemaTest, TableNotes) {
  const Schema s{{{.name = "note", .outputs = kTable, .note = true},
                  {.name = "name", .width = 6, .align = Align::kLeft},
                  {.name = "n", .format = Format::kInteger, .width = 3}}};
  const std::vector<Row> rows = {{std::string("(a model's)"), std::string("a"), std::int64_t{1}},
                                 {Cell{}, std::string("b"), std::int64_t{22}}};
  EXPECT_EQ(table(s, rows, {.separator = "  ", .fit = false}),
            "name      n\n"
            "a         1  (a model's)\n"
            "b        22\n");
  EXPECT_EQ(csv(s, rows), "name,n\na,1\nb,22\n");
  EXPECT_EQ(json_rows(s, rows).dump(), R"([{"name":"a","n":1},{"name":"b","n":22}])");
  std::ostringstream out;
  EXPECT_THROW(write_table(out, s, rows, TableGroups{.columns = {"n"}, .labels = {"x"}}), InvariantError);
}

// JSON: strings escaped, numbers as they are, nested values nested; an
// absent cell is null or left out as its column says; a column outside
// JSON is left out.
TEST(ResultSchemaTest, JsonEscapingAndAbsentCells) {
  const Schema s{{{.name = "variant", .format = Format::kJson},
                  {.name = "name"},
                  {.name = "type", .outputs = kTable | kCsv},
                  {.name = "n", .format = Format::kInteger},
                  {.name = "x", .format = Format::kFixed, .decimals = 1},
                  {.name = "chosen", .absent = Absent::kOmitted},
                  {.name = "note"},
                  {.name = "candidates", .format = Format::kJson, .absent = Absent::kOmitted}}};
  const std::vector<Row> rows = {
      {nlohmann::ordered_json{{"nodes", 2}, {"gpu", "h100"}}, std::string("quote \" back \\ nl \n tab \t ctl \x01"),
       std::string("fp32"), std::int64_t{3}, 0.1, std::string("ring"), {}, nlohmann::ordered_json::array({1, 2})},
      {{}, std::string("b"), std::string("fp32"), std::int64_t{4}, 2.5, {}, {}, {}}};
  EXPECT_EQ(json_rows(s, rows).dump(),
            R"([{"variant":{"nodes":2,"gpu":"h100"},"name":"quote \" back \\ nl \n tab \t ctl \u0001","n":3,)"
            R"("x":0.1,"chosen":"ring","note":null,"candidates":[1,2]},)"
            R"({"variant":null,"name":"b","n":4,"x":2.5,"note":null}])");
  EXPECT_EQ(json_rows(s, {}).dump(), "[]");
}

// One row at a time, for writers that stream: the CSV's lines are
// write_csv's, and a row's JSON text at a depth is what dump(1) writes for
// json_rows' object there (nested values, escapes, reals, absent cells).
TEST(ResultSchemaTest, RowsOneAtATime) {
  const Schema s{{{.name = "id", .format = Format::kInteger},
                  {.name = "name"},
                  {.name = "x", .format = Format::kReal},
                  {.name = "y", .format = Format::kFixed, .decimals = 2},
                  {.name = "table_only", .outputs = kTable},
                  {.name = "route", .format = Format::kJson, .outputs = kJson},
                  {.name = "chosen", .absent = Absent::kOmitted},
                  {.name = "note"}}};
  // Every kind of JSON value, nested.
  nlohmann::ordered_json nested = nlohmann::ordered_json::array({1, -2, 2.5, 1e21, "s\"\u00e9", true, nullptr});
  nested.push_back(nlohmann::ordered_json{{"k", {3, 4}}, {"e", nlohmann::ordered_json::object()}});
  nested.push_back(nlohmann::ordered_json::array());
  nested.push_back(std::uint64_t{18446744073709551615u});
  const std::vector<Row> rows = {
      {std::int64_t{7}, std::string("a,\"b\"\n\t\x01"), 0.1, 2.0, std::string("t"), nested, std::string("ring"),
       Cell{}},
      {std::int64_t{-1}, std::string(""), 1e300, 0.125, Cell{}, nlohmann::ordered_json::array(), Cell{},
       std::string("n")},
      {Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, nlohmann::ordered_json::object(), Cell{}, Cell{}}};
  fmt::memory_buffer lines;
  fmt::format_to(fmt::appender(lines), "{}\n", csv_header(s));
  for (const Row& row : rows) {
    append_csv_line(lines, s, row);
    lines.push_back('\n');
  }
  EXPECT_EQ(fmt::to_string(lines), csv(s, rows));
  EXPECT_EQ(csv_header(s), "id,name,x,y,chosen,note");

  nlohmann::ordered_json document = {{"before", 1}, {"rows", json_rows(s, rows)}, {"after", "z"}};
  fmt::memory_buffer streamed;
  fmt::format_to(fmt::appender(streamed), "{{\n \"before\": 1,\n \"rows\": [");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    fmt::format_to(fmt::appender(streamed), "{}", i == 0 ? "\n  " : ",\n  ");
    append_json_row(streamed, s, rows[i], 2);
  }
  fmt::format_to(fmt::appender(streamed), "\n ],\n \"after\": \"z\"\n}}");
  EXPECT_EQ(fmt::to_string(streamed), document.dump(1));
  // At the top, and with every column left out.
  const auto row_text = [](const Schema& schema, const Row& row, int depth) {
    fmt::memory_buffer out;
    append_json_row(out, schema, row, depth);
    return fmt::to_string(out);
  };
  EXPECT_EQ(row_text(s, rows[0], 0), json_rows(s, {rows[0]})[0].dump(1));
  const Schema omitted{{{.name = "a", .absent = Absent::kOmitted}}};
  EXPECT_EQ(row_text(omitted, {Cell{}}, 2), "{}");
  fmt::memory_buffer unused;
  EXPECT_THROW(append_csv_line(unused, s, {Cell{}}), InvariantError);
  EXPECT_THROW(append_json_row(unused, s, {Cell{}}, 0), InvariantError);
}

// A row of the wrong width, or a cell of another type than its column's,
// is a bug: every writer refuses it.
TEST(ResultSchemaTest, RowOfTheWrongWidthOrType) {
  const Schema s{{{.name = "a", .format = Format::kInteger}, {.name = "b"}, {.name = "c", .format = Format::kFixed}}};
  const std::vector<Row> short_row = {{std::int64_t{1}, std::string("x")}};
  std::ostringstream out;
  EXPECT_THROW(write_csv(out, s, short_row), InvariantError);
  EXPECT_THROW(write_table(out, s, short_row), InvariantError);
  EXPECT_THROW(json_rows(s, short_row), InvariantError);
  try {
    check_row(s, short_row.front());
    ADD_FAILURE() << "no error";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("a row of 2 cells for a schema of 3 columns"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_row(s, {std::string("1"), std::string("x"), 1.0}), InvariantError);
  EXPECT_NO_THROW(check_row(s, {{}, {}, {}}));
  EXPECT_EQ(s.index("c"), 2u);
  EXPECT_THROW((void)s.index("d"), InvariantError);
}

}  // namespace
}  // namespace zx::experiments
