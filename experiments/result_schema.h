// File: experiments/result_schema.h
//
// One schema per report: its columns (name, table header, unit, format),
// from which the three outputs of a command are written, so that a command
// lists its columns once:
//
//   Schema s{{{.name = "size_bytes", .header = "size", .unit = "B", .format = Format::kInteger, .width = 12},
//             {.name = "time_us", .header = "time", .unit = "us", .format = Format::kFixed, .decimals = 3}}};
//   std::vector<Row> rows = {{std::int64_t{1024}, 33.02}};
//   write_table(out, s, rows);   // aligned columns
//   write_csv(out, s, rows);     // RFC 4180
//   json_rows(s, rows).dump(1);  // an array of objects
//
// A column may be left out of some outputs (`outputs`): the CSV spells out
// what the table puts in a group's label, JSON nests what the CSV flattens.
// The table may draw a bar before a column (`table_before`), write a unit
// after each value (`table_suffix`), a mark for a missing one
// (`table_absent`), and end a row's line with one column's text in place of
// the rest (`table_rest`: a row with no values for them says why):
//
//   {.name = "reason", .format = Format::kText, .table_before = "  does not fit: ", .table_rest = true}
//
// Cells are typed; a row of the wrong width or a cell of the wrong type is
// a bug (zx::InvariantError), not bad input.

#ifndef ZIONSIM_EXPERIMENTS_RESULT_SCHEMA_H_
#define ZIONSIM_EXPERIMENTS_RESULT_SCHEMA_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zx::experiments {

/// How a column's cells are written.
enum class Format {
  kInteger,     ///< std::int64_t: "1024"
  kFixed,       ///< double, `decimals` places ("33.020"); JSON: the number itself
  kPercent,     ///< double, a fraction: the table's percent ("78%"), else as kFixed
  kReal,        ///< double, the shortest text that reads back the same ("230", "0.0183"); JSON: the number
  kText,        ///< std::string; CSV quotes it only when it must (csv_field)
  kQuotedText,  ///< std::string; CSV always quotes it (csv_quoted): a knob's value
  kJson,        ///< nlohmann::ordered_json: nested in JSON, its dump() elsewhere
};

/// The outputs a column appears in (a mask).
enum Output : unsigned { kTable = 1, kCsv = 2, kJson = 4, kAllOutputs = 7 };

enum class Align { kRight, kLeft };

/// What a missing value (an absent cell) becomes in JSON. In the table and
/// the CSV it is an empty field.
enum class Absent { kNull, kOmitted };

struct Column {
  std::string name;    ///< CSV header and JSON key
  std::string header;  ///< the table's title; empty: `name`
  /// The table's unit: on the line under the headers, in parentheses ("(B)"),
  /// or after a grouped column's header ("time(us)"). Empty: none.
  std::string unit;
  Format format = Format::kText;
  int decimals = 0;         ///< kFixed, kPercent: places in the CSV (and the table)
  int table_decimals = -1;  ///< kFixed, kPercent: places in the table; -1: `decimals`
  int width = 0;            ///< the table's least width (as fmt's "{:>12}")
  Align align = Align::kRight;
  /// The table's text before the column's header and each of its cells,
  /// after the separator: "| " draws a bar between groups of columns.
  std::string table_before;
  /// The table's text after each value ("x": a speed-up), in its width.
  std::string table_suffix;
  /// The table's text of an absent cell ("-"); empty: nothing.
  std::string table_absent;
  /// The table's rest of a line: where a row's cell is present, the line ends
  /// with it (after `table_before`, unpadded) in place of the table's columns
  /// after it; where absent, the column takes no place. It has no header.
  /// Not in grouped tables.
  bool table_rest = false;
  unsigned outputs = kAllOutputs;
  Absent absent = Absent::kNull;
  /// The table: a note after the row's other cells (the separator and its
  /// text), with no header; a row without one (an absent cell) ends at the
  /// cell before. Plain tables only.
  bool note = false;
};

struct Schema {
  std::vector<Column> columns;
  /// The index of the column `name`; zx::InvariantError if none has it.
  std::size_t index(std::string_view name) const;
};

/// A value, of the type the column's format takes, or std::monostate for
/// none.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, nlohmann::ordered_json>;

/// A row: a cell per column of the schema, in its order.
using Row = std::vector<Cell>;

/// Throws zx::InvariantError unless `row` has a cell per column, each of
/// its column's type or absent.
void check_row(const Schema& schema, const Row& row);

/// A CSV field in quotes, quotes inside doubled (RFC 4180).
std::string csv_quoted(const std::string& text);

/// A CSV field as RFC 4180 wants it: as it is, or quoted (csv_quoted) when
/// it holds a comma, a quote or a line break (names from users' files).
std::string csv_field(const std::string& text);

/// The table's text of a cell (no padding).
std::string table_text(const Column& column, const Cell& cell);

/// How the table is laid out. Headers and units are aligned as their column.
struct TableStyle {
  std::string header_prefix;  ///< before each header line ("# ": a comment)
  std::string row_prefix;     ///< before each row
  std::string separator = " ";
  /// Widen a column to its header, unit and cells; false: `width` only, a
  /// longer text overflowing its line as fmt's "{:>12}" does.
  bool fit = true;
};

/// A table that puts rows side by side: each run of labels.size() rows is
/// one line, with the columns not in `columns` (the keys) from the run's
/// first row, then, for each label, `columns` of the run's row under it.
/// The labels head the first header line (centered over their group, the
/// group's first column widened to fit a longer label); the grouped
/// columns' headers (and units) head the second.
struct TableGroups {
  std::vector<std::string> columns;  ///< the grouped columns' names
  std::vector<std::string> labels;
  std::string separator = " | ";
};

/// The table columns of `schema` (Output::kTable): a header line, a line of
/// units if any column has one, and a line per row (its notes last).
void write_table(std::ostream& out, const Schema& schema, const std::vector<Row>& rows,
                 const TableStyle& style = {});

/// As write_table, the rows side by side under `groups`' labels (always
/// with the second header line). rows.size() must be a multiple of the
/// labels'.
void write_table(std::ostream& out, const Schema& schema, const std::vector<Row>& rows,
                 const TableGroups& groups, const TableStyle& style = {});

/// The CSV columns: a header line of their names, a line per row.
void write_csv(std::ostream& out, const Schema& schema, const std::vector<Row>& rows);

/// The JSON columns: an object per row, keys in the schema's order.
nlohmann::ordered_json json_rows(const Schema& schema, const std::vector<Row>& rows);

// For writers that stream their rows as they come (zionsim flows: a
// million flows, through base/text_out.h, in memory that does not grow
// with the output): one row at a time, appended to a buffer the writer
// reuses, in the bytes of the writers above.

/// The CSV's header line, without the line break.
std::string csv_header(const Schema& schema);

/// Appends one row's CSV line, without the line break.
void append_csv_line(fmt::memory_buffer& out, const Schema& schema, const Row& row);

/// Appends one row's object of json_rows as nlohmann's dump(1) writes it
/// `depth` levels deep in a document (an array's element at depth 2 of the
/// top object: its keys indented by three spaces, its closing brace by
/// two), without the indentation of its first line.
void append_json_row(fmt::memory_buffer& out, const Schema& schema, const Row& row, int depth);

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_RESULT_SCHEMA_H_
