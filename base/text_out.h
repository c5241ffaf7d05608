// File: base/text_out.h
//
// Buffered text output for the writers of large files (flows, timelines,
// traces, plans): records are formatted straight into one buffer of bounded
// size, which goes to the stream whenever it holds kFlushBytes, so a writer
// needs no memory that grows with its output and makes no allocation per
// record. JSON strings are written exactly as nlohmann's dump() writes them,
// so a writer that streams what used to be one nlohmann document keeps its
// bytes.
//
//   TextOut out(stream);
//   out.print(R"({{"name": {}, "ts": {}}})", JsonString{name}, Micros{ps});
//
// Errors of the stream (a full disk) are the stream's: callers check it
// after flush(), as for any ostream.

#ifndef ZIONSIM_BASE_TEXT_OUT_H_
#define ZIONSIM_BASE_TEXT_OUT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace zx {

/// A string written as a JSON string literal (quotes and escapes as
/// nlohmann::json::dump() writes them: \" \\ \b \f \n \r \t, other control
/// characters as \u00xx, UTF-8 as is). Invalid UTF-8 throws
/// nlohmann::json::type_error, as dump() does.
struct JsonString {
  std::string_view text;
};

/// Picoseconds written as microseconds with six decimals, exactly
/// (-1500000 ps is "-1.500000"): the trace event format's unit.
struct Micros {
  std::int64_t ps;
};

/// Appends `text` to `out` as a JSON string literal (see JsonString).
void append_json_string(fmt::memory_buffer& out, std::string_view text);

/// `text` as a JSON string literal (see JsonString).
std::string json_quoted(std::string_view text);

class TextOut {
 public:
  /// Bytes held before they go to the stream.
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 18;

  explicit TextOut(std::ostream& out);
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;
  /// Flushes what is left.
  ~TextOut();

  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(fmt::appender(buffer_), format, std::forward<Args>(args)...);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void put(std::string_view text) {
    buffer_.append(text.data(), text.data() + text.size());
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void put(char c) {
    buffer_.push_back(c);
    if (buffer_.size() >= kFlushBytes) flush();
  }
  void json_string(std::string_view text);

  /// Writes the buffer to the stream.
  void flush();
  /// Most bytes the buffer held at once: kFlushBytes plus the largest record.
  std::size_t peak_buffered() const { return peak_; }
  /// Bytes written so far (flushed or not).
  std::uint64_t bytes_written() const { return flushed_ + buffer_.size(); }

 private:
  std::ostream& out_;
  fmt::memory_buffer buffer_;
  std::size_t peak_ = 0;
  std::uint64_t flushed_ = 0;
};

}  // namespace zx

template <>
struct fmt::formatter<zx::JsonString> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const zx::JsonString& s, Context& ctx) const {
    fmt::memory_buffer text;
    zx::append_json_string(text, s.text);
    return std::copy(text.begin(), text.end(), ctx.out());
  }
};

template <>
struct fmt::formatter<zx::Micros> {
  constexpr auto parse(format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const zx::Micros& m, Context& ctx) const {
    // The magnitude as unsigned: -INT64_MIN does not overflow.
    const std::uint64_t a = m.ps < 0 ? 0 - static_cast<std::uint64_t>(m.ps) : static_cast<std::uint64_t>(m.ps);
    return fmt::format_to(ctx.out(), "{}{}.{:06}", m.ps < 0 ? "-" : "", a / 1'000'000, a % 1'000'000);
  }
};

#endif  // ZIONSIM_BASE_TEXT_OUT_H_
