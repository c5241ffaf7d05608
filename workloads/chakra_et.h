// File: workloads/chakra_et.h
//
// Chakra execution traces in their native form, the protobuf `.et` file, read
// and written at the wire-format level (no generated code).
//
// The format (mlcommons/chakra at 21585d8f2d65603d791d2121e3d4632351120262):
// schema/protobuf/et_def.proto defines GlobalMetadata, Node, AttributeProto
// and IOInfo; src/third_party/utils/protoio.cc (ProtoOutputStream::write)
// and protolib.py (encodeMessage) write a file as a stream of messages, each
// preceded by its size as a varint32, the GlobalMetadata first and then one
// Node per message; a file whose first two bytes are 0x1f 0x8b is gzip
// (ProtoInputStream checks that magic number, as we do).
//
// Why a decoder of our own rather than libprotobuf with generated code: the
// messages are five small ones, the wire format is four encodings, and a
// hand decoder bounds every length against what is left of its buffer
// before it looks at it, which the fuzz target can check without a
// protobuf runtime in the sanitizer builds. The independent check is the
// other way round: the tests read files that Debian's python3-protobuf
// writes from a copy of et_def.proto (workloads/testdata/chakra/et/).
//
// Decoding follows protobuf's rules: fields in any order, the last value of
// a non-repeated field wins (also across a oneof's members), repeated
// scalars packed or not, unknown fields skipped by their wire type. Group
// wire types (3, 4) and a known field with the wrong wire type are errors.

#ifndef ZIONSIM_WORKLOADS_CHAKRA_ET_H_
#define ZIONSIM_WORKLOADS_CHAKRA_ET_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zx::workloads::chakra_et {

/// One AttributeProto, reduced to what a reader can use: an integer from any
/// of the ten integer members of the oneof, a bool, a string. Floating,
/// list and bytes members are recognised and kept only as `value_field`.
struct Attribute {
  std::string name;
  int value_field = 0;  ///< proto field number of the value set; 0: none
  /// The integer members (int32_val ... sfixed64_val), as a signed 64-bit
  /// value; a uint64/fixed64 above 2^63 - 1 sets `integer_too_large`.
  std::optional<std::int64_t> integer;
  bool integer_too_large = false;
  std::optional<bool> boolean;     ///< bool_val
  std::optional<std::string> text;  ///< string_val
  std::optional<double> real;       ///< double_val or float_val
  /// int64_list, int32_list, uint32_list, uint64_list, sint64_list (set
  /// with value_field; a uint64 above 2^63 - 1 sets integer_too_large).
  std::vector<std::int64_t> integers;
};

struct Node {
  std::uint64_t id = 0;
  std::string name;
  std::int64_t type = 0;  ///< the NodeType enum's number (an unknown one is kept)
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  std::vector<Attribute> attr;
};

struct GlobalMetadata {
  std::string version;
  std::vector<Attribute> attr;
};

/// A decoded file. `offsets[i]` is the byte offset (in the decompressed
/// stream) of message i: 0 is the metadata when `metadata` is set, else the
/// first node.
struct File {
  std::optional<GlobalMetadata> metadata;
  std::vector<Node> nodes;
  std::vector<std::uint64_t> offsets;
};

/// A problem in a stream: the message it is in (its index; -1 for the
/// stream itself), the byte offset where it was found, and what.
struct DecodeError {
  std::int64_t message = -1;
  std::uint64_t offset = 0;
  std::string what;
};

/// Decodes a stream of size-prefixed messages (already decompressed). The
/// first message is taken as the GlobalMetadata unless it has the shape of
/// a Node (a field other than version and attr, or field 1 as a varint).
/// Returns the file, or the first problem.
struct DecodeResult {
  File file;
  std::optional<DecodeError> error;
};
DecodeResult decode(std::string_view stream);

/// Encodes a file as Chakra's writers do (size-prefixed messages, the
/// GlobalMetadata first, an empty one when `metadata` is unset; packed
/// repeated ids, fields in number order, zero values left out); integers of
/// attributes are written as int64_val, reals as double_val, integer
/// lists as int64_list.
std::string encode(const File& file);

}  // namespace zx::workloads::chakra_et

#endif  // ZIONSIM_WORKLOADS_CHAKRA_ET_H_
