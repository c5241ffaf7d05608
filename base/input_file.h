// File: base/input_file.h
//
// Reading an input file whole, safely: the one place where zionsim's readers
// (JSON documents, Chakra .et streams) get a file's bytes.
//
//   * Only regular files: a directory, a device (/dev/zero, /dev/urandom) or
//     a FIFO is refused before it is opened, so that nothing is read without
//     end and an open never waits for a writer.
//   * The size limit (json::max_input_bytes(), ZIONSIM_MAX_INPUT_BYTES) holds
//     for the bytes read, not only for what stat said.
//   * gzip is inflated transparently when the file starts with gzip's magic
//     number (0x1f 0x8b; RFC 1952), every member of it, and the limit holds
//     for the inflated bytes too (a small file that inflates without bound is
//     refused, not read to exhaustion).

#ifndef ZIONSIM_BASE_INPUT_FILE_H_
#define ZIONSIM_BASE_INPUT_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zx {

/// The largest input file zionsim reads, in bytes (read or inflated): 1 GiB
/// unless the environment variable ZIONSIM_MAX_INPUT_BYTES says otherwise.
/// Throws zx::InputError when that variable is not a positive integer.
std::int64_t max_input_bytes();

/// The bytes of `path`, inflated when gzip. Throws zx::InputError naming the
/// file: missing or unreadable (with the system's reason), not a regular
/// file, over the limit (read or inflated), corrupt or truncated gzip.
std::string read_input_file(const std::string& path);

/// True when `bytes` start with gzip's magic number.
bool is_gzip(std::string_view bytes);

/// Inflates a gzip stream (all its members). Returns nullopt and sets
/// `error` for a corrupt or truncated stream, or one that inflates to more
/// than `limit` bytes.
std::optional<std::string> gunzip(std::string_view bytes, std::uint64_t limit, std::string& error);

/// Deflates `bytes` into a one-member gzip stream.
std::string gzip(std::string_view bytes);

}  // namespace zx

#endif  // ZIONSIM_BASE_INPUT_FILE_H_
