// File: models/collectives/plugins/plugin_loader.cc
//
// dlopen/dlsym loading of collective plug-ins (see plugin_loader.h).
// RTLD_NOW so that a plug-in with unresolved symbols fails here, with
// dlerror()'s message, instead of at its first call mid-simulation;
// RTLD_LOCAL so that one plug-in's symbols never satisfy another's.

#include "models/collectives/plugins/plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "models/collectives/plugins/plugin_api.h"
#include "models/collectives/testing/plan_checker.h"

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

// The most memory the full check of one plug-in plan may take (the replay's
// sets, plan_checker.h); a larger plan gets the linear checks alone.
constexpr std::size_t kMaxReplayBytes = std::size_t{64} << 20;

// FNV-1a over the integers that determine a plan: the request and the view.
class Signature {
 public:
  void add(std::int64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash_ = (hash_ ^ static_cast<std::uint64_t>((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
    }
  }
  std::uint64_t value() const { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

std::uint64_t signature(const CollectiveRequest& request, const TopologyView& view) {
  Signature s;
  s.add(static_cast<std::int64_t>(request.kind));
  s.add(static_cast<std::int64_t>(request.dtype));
  s.add(request.root);
  s.add(request.bytes_per_rank.count());
  s.add(static_cast<std::int64_t>(request.ranks.size()));
  for (int r : request.ranks) s.add(r);
  for (const auto& row : request.all_to_all_v_bytes) {
    s.add(static_cast<std::int64_t>(row.size()));
    for (std::int64_t b : row) s.add(b);
  }
  for (int i = 0; i < view.size(); ++i) {
    s.add(view.member(i).server);
    s.add(view.member(i).local_index);
  }
  return s.value();
}

// A plug-in's algorithm behind the checks a schedule file gets
// (testing/plan_checker.h): a plan that waits on a later step, names a rank
// outside the group, moves bytes its chunks do not hold or ends with the
// wrong data is an input error naming the plug-in, never a crash, a hang or
// a silently wrong time. Every plan gets the linear checks; the replay runs
// once per distinct request and view, when it fits kMaxReplayBytes. An
// exception out of the plug-in becomes an input error naming it too.
class CheckedPluginAlgorithm final : public CollectiveAlgorithm {
 public:
  CheckedPluginAlgorithm(std::unique_ptr<CollectiveAlgorithm> inner, std::string name,
                         std::string plugin)
      : inner_(std::move(inner)), name_(std::move(name)), plugin_(std::move(plugin)) {}

  std::string_view name() const override { return name_; }
  bool supports(CollectiveKind kind) const override { return inner_->supports(kind); }

  CollectivePlan lower(const CollectiveRequest& request,
                       const TopologyView& topology) const override {
    const std::string what =
        fmt::format("collective algorithm '{}' of plug-in {} ({} of {} bytes per rank on {} ranks)",
                    name_, plugin_, to_string(request.kind), request.bytes_per_rank.count(),
                    request.ranks.size());
    CollectivePlan plan;
    try {
      plan = inner_->lower(request, topology);
    } catch (const std::exception& e) {
      // Copy the message now: the exception object's code lives in the plug-in.
      fail(fmt::format("{} failed: {}", what, e.what()));
    } catch (...) {
      fail(fmt::format("{} failed with an exception that is not a std::exception", what));
    }
    const std::uint64_t key = signature(request, topology);
    bool replay = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      replay = !replayed_.contains(key);
    }
    const testing::PlanReport report =
        testing::check_plan(plan, request, replay ? kMaxReplayBytes : 0);
    if (!report.ok()) {
      fail(fmt::format("{} returned a wrong plan:\n  {}", what, fmt::join(report.errors, "\n  ")));
    }
    if (report.replayed) {
      const std::lock_guard<std::mutex> lock(mutex_);
      replayed_.insert(key);
    }
    return plan;
  }

 private:
  std::unique_ptr<CollectiveAlgorithm> inner_;
  std::string name_;
  std::string plugin_;
  mutable std::mutex mutex_;
  mutable std::set<std::uint64_t> replayed_;  // signatures of requests whose plan was replayed
};

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
    if (staged.role(name) != AlgorithmRole::kPlan) {
      fail(fmt::format("plug-in {} registers collective algorithm '{}' as a cost model or tuner; plug-ins "
                       "register algorithms that lower calls to plans",
                       path, name));
    }
    if (registry.contains(name)) {
      fail(fmt::format(
          "plug-in {} registers collective algorithm '{}', which is already registered (by "
          "zionsim or an earlier plug-in)",
          path, name));
    }
  }
  const std::string file_name = std::filesystem::path(path).filename().string();
  staged.wrap_factories([&file_name](const std::string& name, CollectiveRegistry::Factory inner) {
    return CollectiveRegistry::Factory(
        [name, file_name, inner = std::move(inner)](json::ObjectReader& options)
            -> std::unique_ptr<CollectiveAlgorithm> {
          return std::make_unique<CheckedPluginAlgorithm>(inner(options), name, file_name);
        });
  });
  registry.merge(std::move(staged), fmt::format(" [plug-in {}]", file_name));
  library.release();
  return names;
}

}  // namespace zx::models::collectives
