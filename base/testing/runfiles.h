// File: base/testing/runfiles.h
//
// Test helpers for data files: the path of a `data` dependency inside the
// test's runfiles, and golden files that `ZX_UPDATE_GOLDENS=1 bazel run
// //pkg:test` rewrites in the source tree (BUILD_WORKSPACE_DIRECTORY).

#ifndef ZIONSIM_BASE_TESTING_RUNFILES_H_
#define ZIONSIM_BASE_TESTING_RUNFILES_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace zx::testing {

/// The runfiles path of `relative` (a path from the workspace root); the
/// relative path itself outside a test.
inline std::string runfile(const std::string& relative) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return relative;
  return std::string(srcdir) + "/" + workspace + "/" + relative;
}

/// The whole content of a file ("" if it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Writes `actual` over the golden file `relative` in the source tree when
/// ZX_UPDATE_GOLDENS=1 under `bazel run`; returns whether it did.
inline bool maybe_update_golden(const std::string& relative, const std::string& actual) {
  const char* update = std::getenv("ZX_UPDATE_GOLDENS");
  const char* workspace_dir = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (update == nullptr || std::string(update) != "1" || workspace_dir == nullptr) return false;
  std::ofstream(std::string(workspace_dir) + "/" + relative, std::ios::binary) << actual;
  return true;
}

}  // namespace zx::testing

#endif  // ZIONSIM_BASE_TESTING_RUNFILES_H_
