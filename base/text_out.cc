// File: base/text_out.cc

#include "base/text_out.h"

#include <ostream>

#include <nlohmann/json.hpp>

namespace zx {

void append_json_string(fmt::memory_buffer& out, std::string_view text) {
  constexpr std::string_view kHex = "0123456789abcdef";
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Beyond ASCII, nlohmann checks the UTF-8 (and throws on a bad
      // sequence); rare enough to hand the whole string over.
      const std::string dumped = nlohmann::json(std::string(text)).dump();
      out.append(dumped.data(), dumped.data() + dumped.size());
      return;
    }
  }
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"': out.append(std::string_view("\\\"")); break;
      case '\\': out.append(std::string_view("\\\\")); break;
      case '\b': out.append(std::string_view("\\b")); break;
      case '\f': out.append(std::string_view("\\f")); break;
      case '\n': out.append(std::string_view("\\n")); break;
      case '\r': out.append(std::string_view("\\r")); break;
      case '\t': out.append(std::string_view("\\t")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          const auto u = static_cast<unsigned char>(c);
          const char escaped[] = {'\\', 'u', '0', '0', kHex[u >> 4], kHex[u & 15]};
          out.append(escaped, escaped + sizeof escaped);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string json_quoted(std::string_view text) {
  fmt::memory_buffer out;
  append_json_string(out, text);
  return fmt::to_string(out);
}

TextOut::TextOut(std::ostream& out) : out_(out) {}

TextOut::~TextOut() { flush(); }

void TextOut::json_string(std::string_view text) {
  append_json_string(buffer_, text);
  if (buffer_.size() >= kFlushBytes) flush();
}

void TextOut::flush() {
  peak_ = std::max(peak_, buffer_.size());
  if (buffer_.size() == 0) return;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  flushed_ += buffer_.size();
  buffer_.clear();
}

}  // namespace zx
