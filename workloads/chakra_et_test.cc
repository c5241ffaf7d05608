#include "workloads/chakra_et.h"

#include <gtest/gtest.h>

#include <string>

namespace zx::workloads::chakra_et {
namespace {

// Hand-made wire bytes, so that the decoder is checked against the encoding
// rules and not only against its own encoder.
std::string varint(std::uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string key(int field, int wire) { return varint((static_cast<std::uint64_t>(field) << 3) | wire); }
std::string bytes_field(int field, const std::string& s) { return key(field, 2) + varint(s.size()) + s; }
std::string message(const std::string& body) { return varint(body.size()) + body; }
std::string le(std::uint64_t v, int width) {
  std::string out;
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

TEST(ChakraEtTest, RoundTripsMetadataNodesAndAttributes) {
  File f;
  f.metadata = GlobalMetadata{"0.0.4", {}};
  Node n;
  n.id = 7;
  n.name = "all_reduce";
  n.type = 7;
  n.data_deps = {1, 300, 1ULL << 40};
  n.ctrl_deps = {2};
  n.duration_micros = 12;
  Attribute size{.name = "comm_size"};
  size.integer = 1 << 20;
  Attribute cpu{.name = "is_cpu_op"};
  cpu.boolean = false;
  Attribute pg{.name = "pg_name"};
  pg.text = "dp";
  n.attr = {size, cpu, pg};
  f.nodes = {n, Node{.id = 0, .name = "first", .type = 4}};
  const DecodeResult d = decode(encode(f));
  ASSERT_FALSE(d.error) << d.error->what;
  ASSERT_TRUE(d.file.metadata);
  EXPECT_EQ(d.file.metadata->version, "0.0.4");
  ASSERT_EQ(d.file.nodes.size(), 2u);
  const Node& r = d.file.nodes[0];
  EXPECT_EQ(r.id, 7u);
  EXPECT_EQ(r.name, "all_reduce");
  EXPECT_EQ(r.type, 7);
  EXPECT_EQ(r.data_deps, (std::vector<std::uint64_t>{1, 300, 1ULL << 40}));
  EXPECT_EQ(r.ctrl_deps, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(r.duration_micros, 12u);
  ASSERT_EQ(r.attr.size(), 3u);
  EXPECT_EQ(r.attr[0].integer, 1 << 20);
  EXPECT_EQ(r.attr[1].boolean, false);
  EXPECT_EQ(r.attr[2].text, "dp");
  EXPECT_EQ(d.file.nodes[1].id, 0u);  // zero left out on the wire, 0 when read
  EXPECT_EQ(d.file.offsets.size(), 3u);
  EXPECT_EQ(d.file.offsets[0], 0u);
}

TEST(ChakraEtTest, EveryIntegerMemberOfTheOneofReadsAsAnInteger) {
  const auto attr_value = [](const std::string& value_bytes) {
    const std::string a = bytes_field(1, "comm_size") + value_bytes;
    const std::string node = key(1, 0) + varint(1) + key(3, 0) + varint(7) + bytes_field(10, a);
    const DecodeResult d = decode(message(bytes_field(1, "v")) + message(node));
    EXPECT_FALSE(d.error) << d.error->what;
    return d.file.nodes.at(0).attr.at(0);
  };
  EXPECT_EQ(attr_value(key(7, 0) + varint(0xFFFFFFFFFFFFFFFFULL)).integer, -1);  // int32 -1: ten bytes
  EXPECT_EQ(attr_value(key(9, 0) + varint(123456789012ULL)).integer, 123456789012LL);
  EXPECT_EQ(attr_value(key(11, 0) + varint(4000000000ULL)).integer, 4000000000LL);
  EXPECT_EQ(attr_value(key(13, 0) + varint(99)).integer, 99);
  EXPECT_EQ(attr_value(key(15, 0) + varint(3)).integer, -2);  // zigzag
  EXPECT_EQ(attr_value(key(17, 0) + varint(8)).integer, 4);
  EXPECT_EQ(attr_value(key(19, 5) + le(70000, 4)).integer, 70000);
  EXPECT_EQ(attr_value(key(21, 1) + le(1ULL << 40, 8)).integer, 1LL << 40);
  EXPECT_EQ(attr_value(key(23, 5) + le(0xFFFFFFFE, 4)).integer, -2);
  EXPECT_EQ(attr_value(key(25, 1) + le(5, 8)).integer, 5);
  const Attribute huge = attr_value(key(13, 0) + varint(1ULL << 63));
  EXPECT_TRUE(huge.integer_too_large);
  // The last member set wins, as in protobuf.
  const Attribute last = attr_value(key(9, 0) + varint(5) + bytes_field(29, "x"));
  EXPECT_FALSE(last.integer);
  EXPECT_EQ(last.text, "x");
  EXPECT_EQ(last.value_field, 29);
  // A list member that is not read is recognised and skipped.
  const Attribute bools = attr_value(bytes_field(28, bytes_field(1, varint(1) + varint(0))));
  EXPECT_EQ(bools.value_field, 28);
  EXPECT_FALSE(bools.integer);
  // Integer lists, packed and not.
  const Attribute packed = attr_value(bytes_field(10, bytes_field(1, varint(5) + varint(1ULL << 40))));
  EXPECT_EQ(packed.integers, (std::vector<std::int64_t>{5, 1LL << 40}));
  const Attribute loose = attr_value(bytes_field(18, key(1, 0) + varint(3) + key(1, 0) + varint(4)));
  EXPECT_EQ(loose.integers, (std::vector<std::int64_t>{-2, 2}));
}

TEST(ChakraEtTest, UnpackedIdsUnknownFieldsAndAnyFieldOrder) {
  // type before id, deps one per key, an unknown field 15 of each wire type,
  // and no metadata: message 0 is a node (it has field 3).
  const std::string node = key(3, 0) + varint(4) + key(5, 0) + varint(9) + key(5, 0) + varint(10) +
                           key(15, 0) + varint(1) + key(15, 1) + le(0, 8) + key(15, 5) + le(0, 4) +
                           bytes_field(15, "zz") + key(1, 0) + varint(3);
  const DecodeResult d = decode(message(node));
  ASSERT_FALSE(d.error) << d.error->what;
  EXPECT_FALSE(d.file.metadata);
  ASSERT_EQ(d.file.nodes.size(), 1u);
  EXPECT_EQ(d.file.nodes[0].id, 3u);
  EXPECT_EQ(d.file.nodes[0].type, 4);
  EXPECT_EQ(d.file.nodes[0].data_deps, (std::vector<std::uint64_t>{9, 10}));
}

TEST(ChakraEtTest, MalformedStreamsNameTheMessageAndTheByte) {
  const std::string meta = message(bytes_field(1, "0.0.4"));
  const auto error_of = [](const std::string& stream) {
    const DecodeResult d = decode(stream);
    EXPECT_TRUE(d.error);
    return d.error ? *d.error : DecodeError{};
  };
  // A size beyond the end of the file.
  DecodeError e = error_of(meta + varint(100) + "abc");
  EXPECT_EQ(e.message, 1);
  EXPECT_EQ(e.offset, meta.size());
  EXPECT_NE(e.what.find("a message of 100 bytes, but only 3 bytes are left"), std::string::npos) << e.what;
  // A field's length beyond its message.
  e = error_of(meta + message(key(2, 2) + varint(50) + "x"));
  EXPECT_NE(e.what.find("a length of 50 bytes, but only 1 are left"), std::string::npos) << e.what;
  // A varint cut by the end of its message.
  e = error_of(meta + message(key(1, 0) + "\x80"));
  EXPECT_NE(e.what.find("ends inside a varint"), std::string::npos) << e.what;
  // An eleven-byte varint.
  e = error_of(meta + message(key(1, 0) + std::string(10, '\xff') + "\x01"));
  EXPECT_NE(e.what.find("varint"), std::string::npos) << e.what;
  // A known field with the wrong wire type.
  e = error_of(meta + message(key(1, 2) + varint(1) + "x"));
  EXPECT_EQ(e.what, "Node.id has wire type 2, expected 0");
  // Groups.
  e = error_of(meta + message(key(3, 0) + varint(4) + key(12, 3)));
  EXPECT_NE(e.what.find("wire type 3"), std::string::npos) << e.what;
  // Field number 0.
  e = error_of(meta + message(key(0, 0) + varint(1)));
  EXPECT_NE(e.what.find("field number 0 is not valid"), std::string::npos) << e.what;
  // A truncated attribute inside a node.
  e = error_of(meta + message(key(3, 0) + varint(4) + bytes_field(10, key(9, 0))));
  EXPECT_EQ(e.message, 1);
  EXPECT_NE(e.what.find("ends inside a varint"), std::string::npos) << e.what;
}

// Found by the fuzz target: a file without metadata whose first node has
// only a name would read back as a GlobalMetadata; the encoder writes an
// empty GlobalMetadata first instead.
TEST(ChakraEtTest, EncodingWithoutMetadataKeepsEveryNode) {
  File f;
  f.nodes = {Node{.name = "only_a_name"}, Node{.id = 1, .type = 4}};
  const DecodeResult d = decode(encode(f));
  ASSERT_FALSE(d.error);
  EXPECT_TRUE(d.file.metadata);
  ASSERT_EQ(d.file.nodes.size(), 2u);
  EXPECT_EQ(d.file.nodes[0].name, "only_a_name");
}

TEST(ChakraEtTest, AnEmptyStreamHasNoNodes) {
  const DecodeResult d = decode("");
  EXPECT_FALSE(d.error);
  EXPECT_TRUE(d.file.nodes.empty());
}

}  // namespace
}  // namespace zx::workloads::chakra_et
