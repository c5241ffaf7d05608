// File: fuzz/rank_files.cc

#include "fuzz/rank_files.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace zx::fuzz {
namespace {

// The scratch files of this process; the destructor of the function-local
// static removes them at exit.
struct ScratchFiles {
  std::vector<std::string> paths;
  ~ScratchFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

std::string scratch_path(const std::string& prefix, std::size_t index) {
  static ScratchFiles files;
  static const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string name =
      prefix + "." + std::to_string(::getpid()) + "." + std::to_string(index) + ".json";
  const std::string path = (dir / name).string();
  bool known = false;
  for (const std::string& p : files.paths) known = known || p == path;
  if (!known) files.paths.push_back(path);
  return path;
}

}  // namespace

std::vector<std::string> write_rank_files(const std::uint8_t* data, std::size_t size,
                                          const std::string& prefix) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> paths;
  std::size_t begin = 0;
  while (paths.size() < kMaxRanks) {
    std::size_t end = text.find('\0', begin);
    const bool last = end == std::string_view::npos || paths.size() + 1 == kMaxRanks;
    if (last) end = text.size();
    const std::string path = scratch_path(prefix, paths.size());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data() + begin, static_cast<std::streamsize>(end - begin));
    paths.push_back(path);
    if (last) break;
    begin = end + 1;
  }
  return paths;
}

}  // namespace zx::fuzz
