// File: workloads/chakra_et.cc
//
// The protobuf wire format as protobuf's encoding guide describes it
// (protobuf.dev/programming-guides/encoding): a field is a varint key
// (field number << 3 | wire type) and a value; wire type 0 is a varint
// (at most 10 bytes), 1 eight little-endian bytes, 2 a varint length and
// that many bytes, 5 four little-endian bytes; sint32/sint64 are zigzag
// coded; a negative int32 is sign-extended to ten bytes.

#include "workloads/chakra_et.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

namespace zx::workloads::chakra_et {
namespace {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kStartGroup = 3, kEndGroup = 4, kFixed32 = 5 };

struct Failure {
  std::uint64_t offset;
  std::string what;
};

// A cursor over one message's bytes; `base` is the message's offset in the
// stream, for errors.
class Cursor {
 public:
  Cursor(std::string_view bytes, std::uint64_t base) : bytes_(bytes), base_(base) {}
  bool done() const { return pos_ >= bytes_.size(); }
  std::uint64_t offset() const { return base_ + pos_; }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int i = 0; i < 10; ++i) {
      if (pos_ >= bytes_.size()) fail("the message ends inside a varint");
      const auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
      if (i == 9 && b > 1) fail("a varint longer than 64 bits");
      value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) return value;
    }
    fail("a varint longer than 10 bytes");
  }
  std::uint64_t fixed(int width) {
    if (bytes_.size() - pos_ < static_cast<std::size_t>(width)) {
      fail(fmt::format("the message ends inside a {}-byte fixed field", width));
    }
    std::uint64_t value = 0;
    for (int i = 0; i < width; ++i) value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(width);
    return value;
  }
  // A length-delimited value: the length, checked against what is left.
  std::string_view delimited(std::uint64_t* start = nullptr) {
    const std::uint64_t length = varint();
    if (length > bytes_.size() - pos_) {
      fail(fmt::format("a length of {} bytes, but only {} are left in the message", length, bytes_.size() - pos_));
    }
    if (start != nullptr) *start = offset();
    const std::string_view out = bytes_.substr(pos_, static_cast<std::size_t>(length));
    pos_ += static_cast<std::size_t>(length);
    return out;
  }
  void skip(std::uint32_t wire) {
    switch (wire) {
      case kVarint: (void)varint(); return;
      case kFixed64: (void)fixed(8); return;
      case kLength: (void)delimited(); return;
      case kFixed32: (void)fixed(4); return;
      default: fail(fmt::format("wire type {} (groups are not used by Chakra's schema)", wire));
    }
  }
  // Reads a key; false at the end of the message.
  bool key(std::uint32_t& field, std::uint32_t& wire) {
    if (done()) return false;
    key_offset_ = offset();
    const std::uint64_t k = varint();
    field = static_cast<std::uint32_t>(k >> 3);
    wire = static_cast<std::uint32_t>(k & 7);
    if (k >> 3 == 0 || k >> 3 > 536870911) fail(fmt::format("field number {} is not valid", k >> 3));
    if (wire == kStartGroup || wire == kEndGroup || wire > kFixed32) {
      fail(fmt::format("field {} has wire type {}, which protobuf 3 does not write", field, wire));
    }
    return true;
  }
  std::uint64_t key_offset() const { return key_offset_; }
  [[noreturn]] void fail(std::string what) const { throw Failure{offset(), std::move(what)}; }

 private:
  std::string_view bytes_;
  std::uint64_t base_;
  std::size_t pos_ = 0;
  std::uint64_t key_offset_ = 0;
};

void expect_wire(const Cursor& c, const char* message, const char* field_name, std::uint32_t wire,
                 std::uint32_t expected) {
  if (wire != expected) {
    throw Failure{c.key_offset(), fmt::format("{}.{} has wire type {}, expected {}", message, field_name, wire, expected)};
  }
}

std::string utf8_string(std::string_view s) { return std::string(s); }

// repeated uint64, packed (wire type 2) or one value per key (wire type 0).
void read_ids(Cursor& c, std::uint32_t wire, const char* name, std::vector<std::uint64_t>& out) {
  if (wire == kVarint) {
    out.push_back(c.varint());
    return;
  }
  expect_wire(c, "Node", name, wire, kLength);
  std::uint64_t start = 0;
  const std::string_view packed = c.delimited(&start);
  Cursor inner(packed, start);
  while (!inner.done()) out.push_back(inner.varint());
}

std::int64_t zigzag(std::uint64_t v) { return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1); }

Attribute read_attribute(std::string_view bytes, std::uint64_t base) {
  Cursor c(bytes, base);
  Attribute a;
  std::uint32_t field = 0;
  std::uint32_t wire = 0;
  while (c.key(field, wire)) {
    const auto set_integer = [&](std::int64_t v) {
      a = Attribute{std::move(a.name), static_cast<int>(field), v, false, {}, {}, {}};
    };
    switch (field) {
      case 1: expect_wire(c, "AttributeProto", "name", wire, kLength); a.name = utf8_string(c.delimited()); break;
      case 2: expect_wire(c, "AttributeProto", "doc_string", wire, kLength); (void)c.delimited(); break;
      case 3:  // double_val
        expect_wire(c, "AttributeProto", "double_val", wire, kFixed64);
        {
          const std::uint64_t bits = c.fixed(8);
          double d = 0;
          std::memcpy(&d, &bits, sizeof d);
          a = Attribute{std::move(a.name), 3, {}, false, {}, {}, d};
        }
        break;
      case 5:  // float_val
        expect_wire(c, "AttributeProto", "float_val", wire, kFixed32);
        {
          const auto bits = static_cast<std::uint32_t>(c.fixed(4));
          float f = 0;
          std::memcpy(&f, &bits, sizeof f);
          a = Attribute{std::move(a.name), 5, {}, false, {}, {}, static_cast<double>(f)};
        }
        break;
      case 7:  // int32_val: sign-extended varint
      case 9:  // int64_val
        expect_wire(c, "AttributeProto", field == 7 ? "int32_val" : "int64_val", wire, kVarint);
        {
          const std::uint64_t v = c.varint();
          set_integer(field == 7 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(v)) : static_cast<std::int64_t>(v));
        }
        break;
      case 11:  // uint32_val
        expect_wire(c, "AttributeProto", "uint32_val", wire, kVarint);
        set_integer(static_cast<std::uint32_t>(c.varint()));
        break;
      case 13:  // uint64_val
      case 21:  // fixed64_val
        {
          if (field == 13) {
            expect_wire(c, "AttributeProto", "uint64_val", wire, kVarint);
          } else {
            expect_wire(c, "AttributeProto", "fixed64_val", wire, kFixed64);
          }
          const std::uint64_t v = field == 13 ? c.varint() : c.fixed(8);
          set_integer(static_cast<std::int64_t>(v & 0x7fffffffffffffffULL));
          a.integer_too_large = v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        }
        break;
      case 15:  // sint32_val
      case 17:  // sint64_val
        expect_wire(c, "AttributeProto", field == 15 ? "sint32_val" : "sint64_val", wire, kVarint);
        {
          const std::uint64_t v = c.varint();
          set_integer(field == 15 ? static_cast<std::int64_t>(zigzag(static_cast<std::uint32_t>(v))) : zigzag(v));
        }
        break;
      case 19:  // fixed32_val
        expect_wire(c, "AttributeProto", "fixed32_val", wire, kFixed32);
        set_integer(static_cast<std::int64_t>(c.fixed(4)));
        break;
      case 23:  // sfixed32_val
        expect_wire(c, "AttributeProto", "sfixed32_val", wire, kFixed32);
        set_integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(c.fixed(4))));
        break;
      case 25:  // sfixed64_val
        expect_wire(c, "AttributeProto", "sfixed64_val", wire, kFixed64);
        set_integer(static_cast<std::int64_t>(c.fixed(8)));
        break;
      case 27:  // bool_val
        expect_wire(c, "AttributeProto", "bool_val", wire, kVarint);
        {
          const bool b = c.varint() != 0;
          a = Attribute{std::move(a.name), 27, {}, false, b, {}, {}};
        }
        break;
      case 29:  // string_val
        expect_wire(c, "AttributeProto", "string_val", wire, kLength);
        {
          std::string s = utf8_string(c.delimited());
          a = Attribute{std::move(a.name), 29, {}, false, {}, std::move(s), {}};
        }
        break;
      case 8:   // int32_list
      case 10:  // int64_list
      case 12:  // uint32_list
      case 14:  // uint64_list
      case 18: {  // sint64_list
        expect_wire(c, "AttributeProto", "an integer list", wire, kLength);
        std::uint64_t start = 0;
        const std::string_view body = c.delimited(&start);
        Attribute list{.name = std::move(a.name), .value_field = static_cast<int>(field)};
        Cursor inner(body, start);
        std::uint32_t f2 = 0;
        std::uint32_t w2 = 0;
        while (inner.key(f2, w2)) {
          if (f2 != 1) {
            inner.skip(w2);
            continue;
          }
          const auto add = [&](std::uint64_t v) {
            std::int64_t x = static_cast<std::int64_t>(v);
            if (field == 8) x = static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
            if (field == 12) x = static_cast<std::uint32_t>(v);
            if (field == 18) x = zigzag(v);
            if (field == 14 && v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
              list.integer_too_large = true;
              x = std::numeric_limits<std::int64_t>::max();
            }
            list.integers.push_back(x);
          };
          if (w2 == kVarint) {
            add(inner.varint());
          } else {
            expect_wire(inner, "an integer list", "values", w2, kLength);
            std::uint64_t s2 = 0;
            const std::string_view packed = inner.delimited(&s2);
            Cursor values(packed, s2);
            while (!values.done()) add(values.varint());
          }
        }
        a = std::move(list);
        break;
      }
      default:
        if (field >= 4 && field <= 32 && (field % 2 == 0 || field == 31)) {
          // The list members (and bytes_val): length-delimited, not used.
          expect_wire(c, "AttributeProto", "a list or bytes value", wire, kLength);
          (void)c.delimited();
          a = Attribute{std::move(a.name), static_cast<int>(field), {}, false, {}, {}, {}};
        } else {
          c.skip(wire);  // a field newer than this schema
        }
    }
  }
  return a;
}

Node read_node(std::string_view bytes, std::uint64_t base) {
  Cursor c(bytes, base);
  Node n;
  std::uint32_t field = 0;
  std::uint32_t wire = 0;
  while (c.key(field, wire)) {
    switch (field) {
      case 1: expect_wire(c, "Node", "id", wire, kVarint); n.id = c.varint(); break;
      case 2: expect_wire(c, "Node", "name", wire, kLength); n.name = utf8_string(c.delimited()); break;
      case 3:
        expect_wire(c, "Node", "type", wire, kVarint);
        n.type = static_cast<std::int32_t>(static_cast<std::uint32_t>(c.varint()));
        break;
      case 4: read_ids(c, wire, "ctrl_deps", n.ctrl_deps); break;
      case 5: read_ids(c, wire, "data_deps", n.data_deps); break;
      case 6: expect_wire(c, "Node", "start_time_micros", wire, kVarint); n.start_time_micros = c.varint(); break;
      case 7: expect_wire(c, "Node", "duration_micros", wire, kVarint); n.duration_micros = c.varint(); break;
      case 8:
      case 9: expect_wire(c, "Node", field == 8 ? "inputs" : "outputs", wire, kLength); (void)c.delimited(); break;
      case 10: {
        expect_wire(c, "Node", "attr", wire, kLength);
        std::uint64_t start = 0;
        const std::string_view a = c.delimited(&start);
        n.attr.push_back(read_attribute(a, start));
        break;
      }
      default: c.skip(wire);
    }
  }
  return n;
}

GlobalMetadata read_metadata(std::string_view bytes, std::uint64_t base) {
  Cursor c(bytes, base);
  GlobalMetadata m;
  std::uint32_t field = 0;
  std::uint32_t wire = 0;
  while (c.key(field, wire)) {
    if (field == 1) {
      expect_wire(c, "GlobalMetadata", "version", wire, kLength);
      m.version = utf8_string(c.delimited());
    } else if (field == 2) {
      expect_wire(c, "GlobalMetadata", "attr", wire, kLength);
      std::uint64_t start = 0;
      const std::string_view a = c.delimited(&start);
      m.attr.push_back(read_attribute(a, start));
    } else {
      c.skip(wire);
    }
  }
  return m;
}

// Whether message 0 is a GlobalMetadata: only fields 1 (a string) and 2.
bool is_metadata(std::string_view bytes) {
  try {
    Cursor c(bytes, 0);
    std::uint32_t field = 0;
    std::uint32_t wire = 0;
    while (c.key(field, wire)) {
      if (field > 2 || wire != kLength) return false;
      c.skip(wire);
    }
    return true;
  } catch (const Failure&) {
    return false;
  }
}

// Writing.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_key(std::string& out, std::uint32_t field, std::uint32_t wire) { put_varint(out, (std::uint64_t{field} << 3) | wire); }
void put_bytes(std::string& out, std::uint32_t field, std::string_view s) {
  put_key(out, field, kLength);
  put_varint(out, s.size());
  out.append(s);
}
void put_uint(std::string& out, std::uint32_t field, std::uint64_t v) {
  if (v == 0) return;
  put_key(out, field, kVarint);
  put_varint(out, v);
}
// Scratch strings reused from record to record: a file of a million nodes
// makes no allocation per node once they have grown.
struct Scratch {
  std::string attribute;
  std::string values;
  std::string list;
  std::string packed;
};
void put_attribute(std::string& out, std::uint32_t field, const Attribute& a, Scratch& scratch) {
  std::string& body = scratch.attribute;
  body.clear();
  if (!a.name.empty()) put_bytes(body, 1, a.name);
  if (a.integer) {
    put_key(body, 9, kVarint);
    put_varint(body, static_cast<std::uint64_t>(*a.integer));
  } else if (a.boolean) {
    put_key(body, 27, kVarint);
    put_varint(body, *a.boolean ? 1 : 0);
  } else if (a.text) {
    put_bytes(body, 29, *a.text);
  } else if (!a.integers.empty()) {
    scratch.values.clear();
    for (std::int64_t v : a.integers) put_varint(scratch.values, static_cast<std::uint64_t>(v));
    scratch.list.clear();
    put_bytes(scratch.list, 1, scratch.values);
    put_bytes(body, 10, scratch.list);
  } else if (a.real) {
    put_key(body, 3, kFixed64);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &*a.real, sizeof bits);
    for (int i = 0; i < 8; ++i) body.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  put_bytes(out, field, body);
}
void put_ids(std::string& out, std::uint32_t field, const std::vector<std::uint64_t>& ids, Scratch& scratch) {
  if (ids.empty()) return;
  scratch.packed.clear();
  for (std::uint64_t id : ids) put_varint(scratch.packed, id);
  put_bytes(out, field, scratch.packed);
}
void put_message(std::string& out, const std::string& message) {
  put_varint(out, message.size());
  out.append(message);
}

}  // namespace

DecodeResult decode(std::string_view stream) {
  DecodeResult result;
  Cursor outer(stream, 0);
  std::int64_t index = 0;
  try {
    while (!outer.done()) {
      const std::uint64_t at = outer.offset();
      // The size is a varint32 (protoio.cc: CodedOutputStream::WriteVarint32).
      const std::uint64_t size = outer.varint();
      if (size > std::numeric_limits<std::uint32_t>::max()) {
        throw Failure{at, fmt::format("a message size of {} bytes, beyond the varint32 Chakra writes", size)};
      }
      const std::uint64_t left = stream.size() - (outer.offset());
      if (size > left) {
        throw Failure{at, fmt::format("a message of {} bytes, but only {} bytes are left in the file (truncated?)", size, left)};
      }
      const std::uint64_t start = outer.offset();
      const std::string_view body = stream.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(size));
      result.file.offsets.push_back(at);
      if (index == 0 && is_metadata(body)) {
        result.file.metadata = read_metadata(body, start);
      } else {
        result.file.nodes.push_back(read_node(body, start));
      }
      // Advance: re-seat the outer cursor past the body.
      outer = Cursor(stream.substr(static_cast<std::size_t>(start + size)), start + size);
      ++index;
    }
  } catch (const Failure& f) {
    result.error = DecodeError{index, f.offset, f.what};
  }
  return result;
}

std::string encode(const File& file) {
  std::string out;
  Scratch scratch;
  // Chakra's readers take the first message for the GlobalMetadata: without
  // one, an empty one goes first (a node there could read as metadata).
  std::string m;
  if (file.metadata) {
    if (!file.metadata->version.empty()) put_bytes(m, 1, file.metadata->version);
    for (const Attribute& a : file.metadata->attr) put_attribute(m, 2, a, scratch);
  }
  put_message(out, m);
  for (const Node& n : file.nodes) {
    m.clear();
    put_uint(m, 1, n.id);
    if (!n.name.empty()) put_bytes(m, 2, n.name);
    put_uint(m, 3, static_cast<std::uint64_t>(n.type));
    put_ids(m, 4, n.ctrl_deps, scratch);
    put_ids(m, 5, n.data_deps, scratch);
    put_uint(m, 6, n.start_time_micros);
    put_uint(m, 7, n.duration_micros);
    for (const Attribute& a : n.attr) put_attribute(m, 10, a, scratch);
    put_message(out, m);
  }
  return out;
}

}  // namespace zx::workloads::chakra_et
