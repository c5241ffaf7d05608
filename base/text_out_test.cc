// File: base/text_out_test.cc

#include "base/text_out.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace zx {
namespace {

// Every ASCII character, alone and in a string, is quoted as nlohmann does.
TEST(TextOutTest, JsonStringsAreNlohmannsForEveryAsciiCharacter) {
  std::string all;
  for (int c = 0; c < 128; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(json_quoted(one), nlohmann::json(one).dump()) << "character " << c;
    all += one;
  }
  EXPECT_EQ(json_quoted(all), nlohmann::json(all).dump());
  EXPECT_EQ(json_quoted(""), "\"\"");
  EXPECT_EQ(json_quoted("a\"b\\c\n\x01"), R"("a\"b\\c\n\u0001")");
}

TEST(TextOutTest, Utf8AsNlohmannWritesItAndBadUtf8Throws) {
  const std::string utf8 = "GPU \xc3\xa9\xe2\x86\x92\xf0\x9f\x9a\x80 \"x\"";
  EXPECT_EQ(json_quoted(utf8), nlohmann::json(utf8).dump());
  EXPECT_THROW((void)json_quoted("bad \xc3"), nlohmann::json::type_error);
  EXPECT_THROW((void)json_quoted("\xff"), nlohmann::json::type_error);
}

TEST(TextOutTest, MicrosAreExact) {
  EXPECT_EQ(fmt::format("{}", Micros{0}), "0.000000");
  EXPECT_EQ(fmt::format("{}", Micros{1}), "0.000001");
  EXPECT_EQ(fmt::format("{}", Micros{1'500'000}), "1.500000");
  EXPECT_EQ(fmt::format("{}", Micros{-1'500'001}), "-1.500001");
  EXPECT_EQ(fmt::format("{}", Micros{std::numeric_limits<std::int64_t>::min()}), "-9223372036854.775808");
  EXPECT_EQ(fmt::format("{}", Micros{std::numeric_limits<std::int64_t>::max()}), "9223372036854.775807");
}

// The stream gets every byte in order; the buffer never holds much more
// than kFlushBytes, however much is written.
TEST(TextOutTest, BufferIsBoundedAndBytesArriveInOrder) {
  std::ostringstream stream;
  std::string expected;
  {
    TextOut out(stream);
    for (int i = 0; i < 200'000; ++i) {
      out.print("{{\"id\": {}, \"name\": {}}},\n", i, JsonString{"flow\t" + std::to_string(i)});
      expected += fmt::format("{{\"id\": {}, \"name\": \"flow\\t{}\"}},\n", i, i);
      if (i % 1000 == 0) out.put('\n'), expected += '\n';
    }
    out.put(std::string_view("end"));
    expected += "end";
    EXPECT_EQ(out.bytes_written(), expected.size());
    EXPECT_GT(expected.size(), 8 * TextOut::kFlushBytes);
    EXPECT_LE(out.peak_buffered(), TextOut::kFlushBytes + 64);
  }
  EXPECT_EQ(stream.str(), expected);
}

}  // namespace
}  // namespace zx
