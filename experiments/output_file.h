// File: experiments/output_file.h
//
// The files a run writes, put in place only once complete, so that a run
// that fails or is stopped loses no earlier result and leaves no half-written
// file.

#ifndef ZIONSIM_EXPERIMENTS_OUTPUT_FILE_H_
#define ZIONSIM_EXPERIMENTS_OUTPUT_FILE_H_

#include <fstream>
#include <string>

namespace zx::experiments {

/// An output file that appears only once complete: written to a temporary
/// file beside `path` and renamed over it by close_output_file. A command
/// that fails (bad input found late, a size that does not fit) leaves any
/// existing file at `path` as it was; the destructor removes the temporary
/// file. A path that exists and is not a regular file (/dev/stdout, a pipe)
/// is written directly.
class OutputFile : public std::ofstream {
 public:
  OutputFile() = default;
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&& other) noexcept;
  ~OutputFile() override;

 private:
  friend OutputFile open_output_file(const std::string& option, const std::string& path);
  friend void close_output_file(const std::string& option, const std::string& path, OutputFile& file);
  friend void finish_output_file(const std::string& option, const std::string& path, OutputFile& file);
  void discard();
  std::string temp_path_;  // empty: written in place, or nothing to rename
  std::string target_;     // the absolute path claimed until renamed or discarded
};

/// Opens `path` (the value of `option`) for writing, or throws
/// zx::InputError naming the option, the file and why, also when another
/// output of the run (not yet closed) goes to the same file. Commands open their
/// output files before they simulate, so that a path that cannot be written
/// costs no simulation and loses no result.
OutputFile open_output_file(const std::string& option, const std::string& path);

/// Flushes and closes a file from open_output_file and puts it at its path;
/// throws zx::InputError when anything written to it failed (a full disk)
/// or it cannot be renamed into place.
void close_output_file(const std::string& option, const std::string& path, OutputFile& file);

/// The first half of close_output_file: flushes and closes the file (its
/// descriptor is freed) and throws as it does when writing failed, but
/// leaves it at its temporary path until close_output_file puts it in place.
/// For outputs of many files (a Chakra trace per rank) that appear together
/// and would otherwise hold a descriptor each.
void finish_output_file(const std::string& option, const std::string& path, OutputFile& file);

/// Removes the temporary files of the outputs now being written (each
/// output goes to a temporary file until it is complete; see
/// open_output_file). For a program about to end
/// without unwinding (a second Ctrl-C, SIGTERM past its grace time); safe
/// to call from any thread, not from a signal handler.
void remove_pending_output_files();

}  // namespace zx::experiments

#endif  // ZIONSIM_EXPERIMENTS_OUTPUT_FILE_H_
