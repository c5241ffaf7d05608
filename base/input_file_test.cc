#include "base/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"

namespace zx {
namespace {

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return (std::filesystem::path(dir != nullptr ? dir : "/tmp") / name).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string error_of(const std::string& path) {
  try {
    (void)read_input_file(path);
  } catch (const InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "no error";
}

TEST(InputFileTest, ReadsPlainAndGzipAlike) {
  const std::string text = "{\"a\": [1, 2, 3]}\n";
  write(temp_path("plain.json"), text);
  write(temp_path("packed.json.gz"), gzip(text));
  EXPECT_EQ(read_input_file(temp_path("plain.json")), text);
  EXPECT_TRUE(is_gzip(gzip(text)));
  EXPECT_FALSE(is_gzip(text));
  EXPECT_EQ(read_input_file(temp_path("packed.json.gz")), text);
  // Concatenated members are one stream (gzip(1): "multiple compressed files").
  write(temp_path("two.gz"), gzip("abc") + gzip("def"));
  EXPECT_EQ(read_input_file(temp_path("two.gz")), "abcdef");
}

TEST(InputFileTest, RefusesWhatIsNotARegularFile) {
  EXPECT_EQ(error_of(temp_path("missing.json")),
            temp_path("missing.json") + ": cannot open the file for reading: No such file or directory");
  std::filesystem::create_directories(temp_path("a_dir"));
  EXPECT_EQ(error_of(temp_path("a_dir")), temp_path("a_dir") + ": is a directory, expected a file");
  // A FIFO without a writer: refused at once, not waited on.
  const std::string fifo = temp_path("fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo).find("is not a regular file"), std::string::npos);
  // A device that never ends.
  EXPECT_NE(error_of("/dev/zero").find("is not a regular file"), std::string::npos);
}

TEST(InputFileTest, TheLimitHoldsForReadAndInflatedBytes) {
  write(temp_path("big.txt"), std::string(5000, 'x'));
  write(temp_path("bomb.gz"), gzip(std::string(100000, '\0')));  // about 130 bytes
  setenv("ZIONSIM_MAX_INPUT_BYTES", "4096", 1);
  EXPECT_NE(error_of(temp_path("big.txt")).find("more than the limit of 4096 bytes"), std::string::npos);
  const std::string bomb = error_of(temp_path("bomb.gz"));
  EXPECT_NE(bomb.find("gzip-compressed, but it inflates to more than the limit of 4096 bytes"), std::string::npos)
      << bomb;
  setenv("ZIONSIM_MAX_INPUT_BYTES", "12", 1);
  EXPECT_EQ(max_input_bytes(), 12);
  setenv("ZIONSIM_MAX_INPUT_BYTES", "twelve", 1);
  EXPECT_THROW((void)max_input_bytes(), InputError);
  unsetenv("ZIONSIM_MAX_INPUT_BYTES");
}

TEST(InputFileTest, CorruptAndTruncatedGzipAreErrors) {
  const std::string packed = gzip(std::string(10000, 'y') + "tail");
  write(temp_path("cut.gz"), packed.substr(0, packed.size() / 2));
  EXPECT_NE(error_of(temp_path("cut.gz")).find("gzip-compressed, but the gzip stream is truncated"), std::string::npos)
      << error_of(temp_path("cut.gz"));
  std::string bad = packed;
  bad[12] = static_cast<char>(bad[12] ^ 0x55);
  bad[13] = static_cast<char>(bad[13] ^ 0x55);
  write(temp_path("bad.gz"), bad);
  EXPECT_NE(error_of(temp_path("bad.gz")).find("gzip-compressed, but the gzip stream is corrupt"), std::string::npos)
      << error_of(temp_path("bad.gz"));
  write(temp_path("trailing.gz"), packed + "garbage!");
  EXPECT_NE(error_of(temp_path("trailing.gz")).find("gzip-compressed, but"), std::string::npos);
}

}  // namespace
}  // namespace zx
