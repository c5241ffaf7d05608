#include "experiments/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "base/error.h"
#include "experiments/interrupt.h"

namespace zx::experiments {

OutputFile::OutputFile(OutputFile&& other) noexcept
    : std::ofstream(std::move(other)),
      temp_path_(std::exchange(other.temp_path_, {})),
      target_(std::exchange(other.target_, {})) {}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
  discard();
  std::ofstream::operator=(std::move(other));
  temp_path_ = std::exchange(other.temp_path_, {});
  target_ = std::exchange(other.target_, {});
  return *this;
}

namespace {

// The outputs being written, by the absolute path they will take: their
// temporary files (removed by remove_pending_output_files) and the option
// that named each (two options naming one file are refused up front).
struct PendingOutputs {
  std::mutex mutex;
  std::map<std::string, std::pair<std::string, std::string>> by_target;  // target -> (option, temp path)
};
PendingOutputs& pending_outputs() {
  static PendingOutputs* const outputs = new PendingOutputs();  // outlives static destruction
  return *outputs;
}

std::string absolute_target(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? path : p.string();
}

void forget_output(const std::string& target) {
  if (target.empty()) return;
  PendingOutputs& p = pending_outputs();
  const std::lock_guard lock(p.mutex);
  p.by_target.erase(target);
}

}  // namespace

void remove_pending_output_files() {
  PendingOutputs& p = pending_outputs();
  const std::lock_guard lock(p.mutex);
  for (const auto& [target, entry] : p.by_target) {
    if (!entry.second.empty()) ::unlink(entry.second.c_str());
  }
  p.by_target.clear();
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() {
  forget_output(std::exchange(target_, {}));
  if (temp_path_.empty()) return;
  close();
  std::error_code ec;
  std::filesystem::remove(temp_path_, ec);
  temp_path_.clear();
}

OutputFile open_output_file(const std::string& option, const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) {
    throw InputError(Diagnostic{path, "", fmt::format("{}: cannot open the file for writing: it is a directory", option)});
  }
  const bool in_place = std::filesystem::exists(status) && !std::filesystem::is_regular_file(status);
  OutputFile file;
  const std::string written = in_place ? path : fmt::format("{}.zionsim-{}.tmp", path, ::getpid());
  if (!in_place) {
    // Claimed before it is opened: a second output to the same file (two
    // options naming it, or one under two spellings) would lose the first.
    const std::string target = absolute_target(path);
    PendingOutputs& p = pending_outputs();
    const std::lock_guard lock(p.mutex);
    const auto [it, added] = p.by_target.try_emplace(target, option, written);
    if (!added) {
      throw InputError(Diagnostic{
          path, "", fmt::format("{}: the same file as {}: give each output a file of its own", option, it->second.first)});
    }
    file.target_ = target;
  }
  errno = 0;
  file.open(written, std::ios::binary | std::ios::trunc);
  if (!file) {
    const std::string why = errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
    throw InputError(Diagnostic{path, "", fmt::format("{}: cannot open the file for writing{}", option, why)});
  }
  if (!in_place) file.temp_path_ = written;
  return file;
}

void finish_output_file(const std::string& option, const std::string& path, OutputFile& file) {
  file.flush();
  file.close();
  if (!file) {
    file.discard();
    throw InputError(Diagnostic{path, "", fmt::format("{}: writing the file failed", option)});
  }
}

void close_output_file(const std::string& option, const std::string& path, OutputFile& file) {
  if (file.is_open()) finish_output_file(option, path, file);
  if (file.temp_path_.empty()) return;
  // A run asked to stop (experiments/interrupt.h) puts no output in place, also
  // one whose simulation ended before it looked.
  if (interrupt_requested()) {
    file.discard();
    throw Interrupted();
  }
  std::error_code ec;
  std::filesystem::rename(file.temp_path_, path, ec);
  if (ec) {
    file.discard();
    throw InputError(Diagnostic{path, "", fmt::format("{}: cannot put the file in place: {}", option, ec.message())});
  }
  file.temp_path_.clear();
  forget_output(std::exchange(file.target_, {}));
}

}  // namespace zx::experiments
