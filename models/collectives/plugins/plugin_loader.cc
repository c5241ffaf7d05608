// File: models/collectives/plugins/plugin_loader.cc
//
// dlopen/dlsym loading of collective plug-ins (see plugin_loader.h).
// RTLD_NOW so that a plug-in with unresolved symbols fails here, with
// dlerror()'s message, instead of at its first call mid-simulation;
// RTLD_LOCAL so that one plug-in's symbols never satisfy another's.

#include "models/collectives/plugins/plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <exception>
#include <filesystem>
#include <utility>

#include "base/error.h"
#include "models/collectives/plugins/plugin_api.h"

namespace zx::models::collectives {
namespace {

[[noreturn]] void fail(std::string message) {
  throw InputError(Diagnostic{.message = std::move(message)});
}

// Owns a dlopen handle until release(). Closing is only safe while nothing
// from the library is alive: the staging registry (whose factories live in
// the library) is declared after this guard, so it is destroyed first.
class LibraryHandle {
 public:
  explicit LibraryHandle(void* handle) : handle_(handle) {}
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;
  ~LibraryHandle() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  void* get() const { return handle_; }
  // The registry now holds the library's factories: never unload it.
  void release() { handle_ = nullptr; }

 private:
  void* handle_;
};

// dlsym, telling a missing symbol from one whose value is null.
void* find_symbol(void* handle, const char* name) {
  dlerror();  // clear any earlier error
  void* symbol = dlsym(handle, name);
  return dlerror() == nullptr ? symbol : nullptr;
}

}  // namespace

std::vector<std::string> load_collective_plugin(const std::string& path,
                                                CollectiveRegistry& registry) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(fmt::format("plug-in {}: no such file", path));
  // dlopen searches the library path for a name without '/'; the flag names a file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  LibraryHandle library(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (library.get() == nullptr) {
    const char* why = dlerror();
    fail(fmt::format("plug-in {} cannot be loaded: {}", path, why != nullptr ? why : "unknown"));
  }

  const auto version_fn = reinterpret_cast<PluginApiVersionFn>(
      find_symbol(library.get(), ZIONSIM_COLLECTIVE_PLUGIN_VERSION_SYMBOL));
  if (version_fn == nullptr) {
    fail(
        fmt::format("plug-in {} does not export {}(); is it a zionsim collective plug-in? (see "
                    "models/collectives/plugins/plugin_api.h)",
                    path, ZIONSIM_COLLECTIVE_PLUGIN_VERSION_SYMBOL));
  }
  const int version = version_fn();
  if (version != ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION) {
    fail(fmt::format(
        "plug-in {} was built for collective plug-in API version {}; this zionsim supports "
        "version {} (rebuild the plug-in against this zionsim's headers)",
        path, version, ZIONSIM_COLLECTIVE_PLUGIN_API_VERSION));
  }
  const auto register_fn = reinterpret_cast<PluginRegisterFn>(
      find_symbol(library.get(), ZIONSIM_COLLECTIVE_PLUGIN_REGISTER_SYMBOL));
  if (register_fn == nullptr) {
    fail(
        fmt::format("plug-in {} does not export {}() (see "
                    "models/collectives/plugins/plugin_api.h)",
                    path, ZIONSIM_COLLECTIVE_PLUGIN_REGISTER_SYMBOL));
  }

  CollectiveRegistry staged;
  try {
    register_fn(&staged);
  } catch (const std::exception& e) {
    // Copy the message now: the exception object's code lives in the plug-in.
    fail(fmt::format("plug-in {} failed while registering its collectives: {}", path, e.what()));
  } catch (...) {
    fail(fmt::format("plug-in {} failed while registering its collectives", path));
  }
  std::vector<std::string> names = staged.names();
  if (names.empty()) fail(fmt::format("plug-in {} registered no collective algorithms", path));
  for (const std::string& name : names) {
    if (registry.contains(name)) {
      fail(fmt::format(
          "plug-in {} registers collective algorithm '{}', which is already registered (by "
          "zionsim or an earlier plug-in)",
          path, name));
    }
  }
  registry.merge(std::move(staged),
                 fmt::format(" [plug-in {}]", std::filesystem::path(path).filename().string()));
  library.release();
  return names;
}

}  // namespace zx::models::collectives
