// File: base/input_file.cc

#include "base/input_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <limits>

#include "base/error.h"

namespace zx {

std::int64_t max_input_bytes() {
  constexpr std::int64_t kDefault = std::int64_t{1} << 30;
  const char* text = std::getenv("ZIONSIM_MAX_INPUT_BYTES");
  if (text == nullptr || *text == '\0') return kDefault;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || value <= 0) {
    throw InputError(Diagnostic{"ZIONSIM_MAX_INPUT_BYTES", "",
                                fmt::format("expected a positive number of bytes, got '{}'", text)});
  }
  return value;
}

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    throw InputError(Diagnostic{path, "", fmt::format("cannot open the file for reading: {}",
                                                      ec && ec != std::errc::no_such_file_or_directory
                                                          ? ec.message()
                                                          : std::strerror(ENOENT))});
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(Diagnostic{path, "", "is a directory, expected a file"});
  }
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(Diagnostic{path, "", "is not a regular file (a device, a FIFO or a socket), expected a file"});
  }
  const auto limit = static_cast<std::uint64_t>(max_input_bytes());
  if (const auto size = std::filesystem::file_size(path, ec); !ec && size > limit) {
    throw InputError(Diagnostic{path, "",
                                fmt::format("the file is {} bytes, more than the limit of {} bytes (parsing takes about "
                                            "11 times the file in memory); set ZIONSIM_MAX_INPUT_BYTES to raise it",
                                            size, limit)});
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(Diagnostic{path, "", fmt::format("cannot open the file for reading: {}", std::strerror(errno))});
  }
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > limit) {
      throw InputError(Diagnostic{
          path, "", fmt::format("more than the limit of {} bytes; set ZIONSIM_MAX_INPUT_BYTES to raise it", limit)});
    }
  }
  if (in.bad()) throw InputError(Diagnostic{path, "", "error while reading the file"});
  if (!is_gzip(bytes)) return bytes;
  std::string error;
  std::optional<std::string> inflated = gunzip(bytes, limit, error);
  if (!inflated) throw InputError(Diagnostic{path, "", fmt::format("gzip-compressed, but {}", error)});
  return std::move(*inflated);
}

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<std::uint8_t>(bytes[0]) == 0x1f && static_cast<std::uint8_t>(bytes[1]) == 0x8b;
}

std::optional<std::string> gunzip(std::string_view bytes, std::uint64_t limit, std::string& error) {
  z_stream z{};
  // 16 + MAX_WBITS: gzip framing only (zlib.h, inflateInit2).
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    error = "cannot start zlib";
    return std::nullopt;
  }
  std::string out;
  char buffer[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(bytes.size(), std::numeric_limits<uInt>::max()));
  std::size_t fed = z.avail_in;
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(buffer, sizeof buffer - z.avail_out);
    if (out.size() > limit) {
      inflateEnd(&z);
      error = fmt::format("it inflates to more than the limit of {} bytes; set ZIONSIM_MAX_INPUT_BYTES to raise it", limit);
      return std::nullopt;
    }
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (concatenated .gz files are one file).
      if (z.avail_in == 0 && fed == bytes.size()) break;
      if (inflateReset(&z) != Z_OK) break;
    }
    if (z.avail_in == 0 && fed < bytes.size()) {
      const std::size_t more = std::min<std::size_t>(bytes.size() - fed, std::numeric_limits<uInt>::max());
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + fed));
      z.avail_in = static_cast<uInt>(more);
      fed += more;
    } else if (z.avail_in == 0 && rc != Z_STREAM_END && z.avail_out != 0) {
      rc = Z_BUF_ERROR;  // input used up mid-stream
      break;
    }
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    error = rc == Z_BUF_ERROR ? "the gzip stream is truncated" : fmt::format("the gzip stream is corrupt ({})", z.msg != nullptr ? z.msg : "zlib error");
    return std::nullopt;
  }
  return out;
}

std::string gzip(std::string_view bytes) {
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out;
  char buffer[1 << 16];
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  int rc = Z_OK;
  do {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = deflate(&z, Z_FINISH);
    out.append(buffer, sizeof buffer - z.avail_out);
  } while (rc == Z_OK);
  deflateEnd(&z);
  return out;
}

}  // namespace zx
