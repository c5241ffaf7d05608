#include "experiments/result_schema.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/check.h"
#include "base/text_out.h"

namespace zx::experiments {
namespace {

const std::string& header_of(const Column& c) { return c.header.empty() ? c.name : c.header; }

std::string unit_label(const Column& c) { return c.unit.empty() ? std::string() : "(" + c.unit + ")"; }

// A grouped column's header: its title and unit on one line ("time(us)").
std::string grouped_header(const Column& c) { return header_of(c) + unit_label(c); }

std::string pad(const std::string& text, std::size_t width, Align align) {
  return align == Align::kRight ? fmt::format("{:>{}}", text, width) : fmt::format("{:<{}}", text, width);
}

// The index a cell of `format` holds in Cell.
std::size_t cell_index(Format format) {
  switch (format) {
    case Format::kInteger: return 1;
    case Format::kFixed:
    case Format::kPercent:
    case Format::kReal: return 2;
    case Format::kText:
    case Format::kQuotedText: return 3;
    case Format::kJson: return 4;
  }
  ZX_UNREACHABLE("a format of no cell type");
}

// The columns in `output`; for the table, its notes apart (`notes`).
std::vector<std::size_t> columns_in(const Schema& schema, Output output, std::vector<std::size_t>* notes = nullptr) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const Column& column = schema.columns[c];
    if ((column.outputs & output) == 0) continue;
    if (output == kTable && column.note) {
      ZX_CHECK(notes != nullptr, fmt::format("column '{}': a note in a grouped table", column.name));
      notes->push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Appends an integer's digits (fmt::format_int: the digits of "{}", with
// no format string to parse, for the writers of a million rows).
template <typename Integer>
void append_integer(fmt::memory_buffer& out, Integer value) {
  const fmt::format_int digits(value);
  out.append(digits.data(), digits.data() + digits.size());
}

std::string csv_text(const Column& column, const Cell& cell);

// Appends a CSV field of a cell (csv_text's; an integer's digits without a
// string in between).
void append_csv_field(fmt::memory_buffer& out, const Column& column, const Cell& cell) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) {
    append_integer(out, *i);
    return;
  }
  const std::string field = csv_text(column, cell);
  out.append(field.data(), field.data() + field.size());
}

void indent(fmt::memory_buffer& out, int depth) {
  static constexpr std::string_view kSpaces = "                                ";
  for (auto left = static_cast<std::size_t>(depth); left > 0;) {
    const std::size_t n = std::min(left, kSpaces.size());
    out.append(kSpaces.substr(0, n));
    left -= n;
  }
}

// Appends a JSON key: as it is in quotes when nothing in it is escaped (a
// column's name), else as append_json_string writes it.
void append_json_key(fmt::memory_buffer& out, std::string_view key) {
  const bool plain = std::all_of(key.begin(), key.end(), [](char c) {
    return c >= 0x20 && c != '"' && c != '\\' && static_cast<unsigned char>(c) < 0x80;
  });
  if (!plain) {
    append_json_string(out, key);
    return;
  }
  out.push_back('"');
  out.append(key);
  out.push_back('"');
}

// Appends `value` as nlohmann's dump(1) writes it `depth` levels deep
// (base/text_out.h writes its strings as dump() does).
void append_json_value(fmt::memory_buffer& out, const nlohmann::ordered_json& value, int depth) {
  if (value.is_array() && !value.empty()) {
    out.append(std::string_view("[\n"));
    for (std::size_t i = 0; i < value.size(); ++i) {
      indent(out, depth + 1);
      append_json_value(out, value[i], depth + 1);
      out.append(std::string_view(i + 1 < value.size() ? ",\n" : "\n"));
    }
    indent(out, depth);
    out.push_back(']');
  } else if (value.is_object() && !value.empty()) {
    out.append(std::string_view("{\n"));
    std::size_t left = value.size();
    for (const auto& [key, member] : value.items()) {
      indent(out, depth + 1);
      append_json_string(out, key);
      out.append(std::string_view(": "));
      append_json_value(out, member, depth + 1);
      out.append(std::string_view(--left > 0 ? ",\n" : "\n"));
    }
    indent(out, depth);
    out.push_back('}');
  } else if (value.is_number_unsigned()) {
    append_integer(out, value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    append_integer(out, value.get<std::int64_t>());
  } else if (value.is_string()) {
    append_json_string(out, value.get_ref<const std::string&>());
  } else {
    const std::string text = value.dump();  // null, a boolean, a real, an empty array or object
    out.append(text.data(), text.data() + text.size());
  }
}

// Column c's width over `rows` (every `step`-th from `first`), and `title`.
std::size_t width_of(const Schema& schema, std::size_t c, const std::vector<Row>& rows, std::size_t first,
                     std::size_t step, const std::vector<std::string>& titles, const TableStyle& style) {
  const Column& column = schema.columns[c];
  std::size_t width = static_cast<std::size_t>(std::max(column.width, 0));
  if (!style.fit) return width;
  for (const std::string& t : titles) width = std::max(width, t.size());
  for (std::size_t i = first; i < rows.size(); i += step) {
    width = std::max(width, table_text(column, rows[i][c]).size());
  }
  return width;
}

// The cells `columns` of `row` at `widths`, joined by the style's separator;
// a present cell of a table_rest column ends the line.
std::string join_cells(const Schema& schema, const std::vector<std::size_t>& columns,
                       const std::vector<std::size_t>& widths, const Row& row, const std::string& separator) {
  std::string line;
  bool first = true;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const Column& column = schema.columns[columns[k]];
    const Cell& cell = row[columns[k]];
    if (column.table_rest && cell.index() == 0) continue;
    line += (first ? "" : separator) + column.table_before;
    first = false;
    if (column.table_rest) return line + table_text(column, cell);
    line += pad(table_text(column, cell), widths[k], column.align);
  }
  return line;
}

// The titles (header, unit or both, as `title` gives) of `columns`, aligned;
// table_rest columns have none.
template <typename Title>
std::string join_titles(const Schema& schema, const std::vector<std::size_t>& columns,
                        const std::vector<std::size_t>& widths, const std::string& separator, Title title) {
  std::string line;
  bool first = true;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const Column& column = schema.columns[columns[k]];
    if (column.table_rest) continue;
    line += (first ? "" : separator) + column.table_before + pad(title(column), widths[k], column.align);
    first = false;
  }
  return line;
}

// A present cell's text: a number (`places` decimals for a double), text as
// it is, JSON as it dumps.
std::string value_text(const Cell& cell, int places) {
  if (const auto* i = std::get_if<std::int64_t>(&cell)) return fmt::format("{}", *i);
  if (const auto* x = std::get_if<double>(&cell)) return fmt::format("{:.{}f}", *x, places);
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (const auto* j = std::get_if<nlohmann::ordered_json>(&cell)) return j->dump();
  return "";
}

// A CSV field of a cell: empty when absent; a double at the column's
// decimals, or in shortest form (kReal); text quoted as the format says.
std::string csv_text(const Column& column, const Cell& cell) {
  if (const auto* x = std::get_if<double>(&cell)) {
    return column.format == Format::kReal ? fmt::format("{}", *x) : value_text(cell, column.decimals);
  }
  if (cell.index() == 0) return "";
  return column.format == Format::kQuotedText ? csv_quoted(value_text(cell, 0)) : csv_field(value_text(cell, 0));
}

void check_rows(const Schema& schema, const std::vector<Row>& rows) {
  for (const Row& row : rows) check_row(schema, row);
}

}  // namespace

std::size_t Schema::index(std::string_view name) const {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].name == name) return c;
  }
  ZX_CHECK(false, fmt::format("no column '{}' in the schema", name));
  return 0;
}

void check_row(const Schema& schema, const Row& row) {
  ZX_CHECK(row.size() == schema.columns.size(),
           fmt::format("a row of {} cells for a schema of {} columns", row.size(), schema.columns.size()));
  for (std::size_t c = 0; c < row.size(); ++c) {
    const Column& column = schema.columns[c];
    ZX_CHECK(row[c].index() == 0 || row[c].index() == cell_index(column.format),
             fmt::format("the cell of column '{}' is not of its format's type", column.name));
  }
}

std::string csv_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_field(const std::string& text) {
  return text.find_first_of(",\"\r\n") == std::string::npos ? text : csv_quoted(text);
}

std::string table_text(const Column& column, const Cell& cell) {
  if (cell.index() == 0) return column.table_absent;
  const int places = column.table_decimals >= 0 ? column.table_decimals : column.decimals;
  if (column.format == Format::kPercent) {
    return fmt::format("{:.{}f}%", 100 * std::get<double>(cell), places) + column.table_suffix;
  }
  if (column.format == Format::kReal) return fmt::format("{}", std::get<double>(cell)) + column.table_suffix;
  return value_text(cell, places) + column.table_suffix;
}

void write_table(std::ostream& out, const Schema& schema, const std::vector<Row>& rows, const TableStyle& style) {
  check_rows(schema, rows);
  std::vector<std::size_t> notes;
  const std::vector<std::size_t> columns = columns_in(schema, kTable, &notes);
  std::vector<std::size_t> widths;
  bool units = false;
  for (std::size_t c : columns) {
    const Column& column = schema.columns[c];
    widths.push_back(width_of(schema, c, rows, 0, 1, {header_of(column), unit_label(column)}, style));
    units = units || !column.unit.empty();
  }
  out << style.header_prefix << join_titles(schema, columns, widths, style.separator, header_of) << '\n';
  if (units) out << style.header_prefix << join_titles(schema, columns, widths, style.separator, unit_label) << '\n';
  for (const Row& row : rows) {
    out << style.row_prefix << join_cells(schema, columns, widths, row, style.separator);
    for (std::size_t c : notes) {
      if (row[c].index() != 0) out << style.separator << table_text(schema.columns[c], row[c]);
    }
    out << '\n';
  }
}

void write_table(std::ostream& out, const Schema& schema, const std::vector<Row>& rows, const TableGroups& groups,
                 const TableStyle& style) {
  check_rows(schema, rows);
  const std::size_t n = groups.labels.size();
  ZX_CHECK(n > 0 && rows.size() % n == 0,
           fmt::format("{} rows do not make whole lines of {} groups", rows.size(), n));
  std::vector<std::size_t> keys;
  for (std::size_t c : columns_in(schema, kTable)) {
    ZX_CHECK(!schema.columns[c].table_rest, "a grouped table has no column for the rest of a line");
    const std::string& name = schema.columns[c].name;
    if (std::find(groups.columns.begin(), groups.columns.end(), name) == groups.columns.end()) keys.push_back(c);
  }
  std::vector<std::size_t> grouped;
  for (const std::string& name : groups.columns) grouped.push_back(schema.index(name));
  ZX_CHECK(!grouped.empty(), "a grouped table groups at least one column");

  std::vector<std::size_t> key_widths;
  for (std::size_t c : keys) {
    const Column& column = schema.columns[c];
    key_widths.push_back(width_of(schema, c, rows, 0, n, {header_of(column), unit_label(column)}, style));
  }
  // Each group's widths: its columns', the first widened to a longer label.
  std::vector<std::vector<std::size_t>> widths(n);
  std::vector<std::size_t> group_width(n);
  for (std::size_t g = 0; g < n; ++g) {
    for (std::size_t c : grouped) {
      widths[g].push_back(width_of(schema, c, rows, g, n, {grouped_header(schema.columns[c])}, style));
      group_width[g] += widths[g].back() + (widths[g].size() > 1 ? style.separator.size() : 0);
    }
    if (groups.labels[g].size() > group_width[g]) {
      widths[g].front() += groups.labels[g].size() - group_width[g];
      group_width[g] = groups.labels[g].size();
    }
  }

  out << style.header_prefix << join_titles(schema, keys, key_widths, style.separator, header_of);
  for (std::size_t g = 0; g < n; ++g) {
    out << groups.separator << fmt::format("{:^{}}", groups.labels[g], group_width[g]);
  }
  out << '\n' << style.header_prefix << join_titles(schema, keys, key_widths, style.separator, unit_label);
  for (std::size_t g = 0; g < n; ++g) {
    out << groups.separator << join_titles(schema, grouped, widths[g], style.separator, grouped_header);
  }
  out << '\n';
  for (std::size_t i = 0; i < rows.size(); i += n) {
    out << style.row_prefix << join_cells(schema, keys, key_widths, rows[i], style.separator);
    for (std::size_t g = 0; g < n; ++g) {
      out << groups.separator << join_cells(schema, grouped, widths[g], rows[i + g], style.separator);
    }
    out << '\n';
  }
}

void write_csv(std::ostream& out, const Schema& schema, const std::vector<Row>& rows) {
  check_rows(schema, rows);
  out << csv_header(schema) << '\n';
  fmt::memory_buffer line;
  for (const Row& row : rows) {
    line.clear();
    append_csv_line(line, schema, row);
    line.push_back('\n');
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
  }
}

std::string csv_header(const Schema& schema) {
  std::string line;
  for (std::size_t c : columns_in(schema, kCsv)) line += (line.empty() ? "" : ",") + csv_field(schema.columns[c].name);
  return line;
}

void append_csv_line(fmt::memory_buffer& out, const Schema& schema, const Row& row) {
  check_row(schema, row);
  bool first = true;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    if ((schema.columns[c].outputs & kCsv) == 0) continue;
    if (!first) out.push_back(',');
    first = false;
    append_csv_field(out, schema.columns[c], row[c]);
  }
}

nlohmann::ordered_json json_rows(const Schema& schema, const std::vector<Row>& rows) {
  check_rows(schema, rows);
  const std::vector<std::size_t> columns = columns_in(schema, kJson);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& row : rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c : columns) {
      const Column& column = schema.columns[c];
      const Cell& cell = row[c];
      if (cell.index() == 0) {
        if (column.absent == Absent::kNull) object[column.name] = nullptr;
        continue;
      }
      std::visit(
          [&](const auto& value) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(value)>, std::monostate>) object[column.name] = value;
          },
          cell);
    }
    out.push_back(std::move(object));
  }
  return out;
}

void append_json_row(fmt::memory_buffer& out, const Schema& schema, const Row& row, int depth) {
  check_row(schema, row);
  bool empty = true;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    const Column& column = schema.columns[c];
    const Cell& cell = row[c];
    if ((column.outputs & kJson) == 0 || (cell.index() == 0 && column.absent == Absent::kOmitted)) continue;
    out.append(std::string_view(empty ? "{\n" : ",\n"));
    empty = false;
    indent(out, depth + 1);
    append_json_key(out, column.name);
    out.append(std::string_view(": "));
    if (const auto* i = std::get_if<std::int64_t>(&cell)) {
      append_integer(out, *i);
    } else if (const auto* x = std::get_if<double>(&cell)) {
      const std::string text = nlohmann::ordered_json(*x).dump();
      out.append(text.data(), text.data() + text.size());
    } else if (const auto* s = std::get_if<std::string>(&cell)) {
      append_json_string(out, *s);
    } else if (const auto* j = std::get_if<nlohmann::ordered_json>(&cell)) {
      append_json_value(out, *j, depth + 1);
    } else {
      out.append(std::string_view("null"));
    }
  }
  if (empty) {
    out.append(std::string_view("{}"));
    return;
  }
  out.push_back('\n');
  indent(out, depth);
  out.push_back('}');
}

}  // namespace zx::experiments
