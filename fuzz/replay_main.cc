// File: fuzz/replay_main.cc
//
// A main() for the fuzz targets outside libFuzzer: feeds every regular file
// under each directory (or each file) named on the command line to
// LLVMFuzzerTestOneInput. A parser that throws anything but zx::InputError
// escapes the target and fails the run; so does a crash or sanitizer report.
// Missing directories are skipped (a target may have no regression inputs).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int replay_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  } catch (const std::exception& e) {
    std::cerr << "FAIL " << path.string() << ": escaped exception: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "FAIL " << path.string() << ": escaped non-std exception\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0;
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path root(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_regular_file(root, ec)) {
      failures += replay_file(root);
      ++replayed;
      continue;
    }
    if (!std::filesystem::is_directory(root, ec)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      failures += replay_file(file);
      ++replayed;
    }
  }
  std::cout << replayed - failures << " passed, " << failures << " failed\n";
  return failures == 0 ? 0 : 1;
}
