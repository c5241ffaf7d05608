// zionsim: the command-line program. Everything happens in run_cli().

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const int status = zx::tools::run_cli(args, std::cout, std::cerr);
  // Output that could not be written (a full disk, `> /dev/full`, a closed
  // pipe) is a failed run, not a quiet success: the result is lost.
  std::cout.flush();
  if (!std::cout) {
    // The failed write() left its reason in errno (the stream does not keep
    // it); only a write's reasons are named, not a stale errno of another call.
    const int error = errno == ENOSPC || errno == EPIPE || errno == EIO || errno == EFBIG || errno == EBADF ? errno : 0;
    std::cerr << "zionsim: error: writing the standard output failed"
              << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
    return status != zx::tools::kExitOk ? status : zx::tools::kExitInternalError;
  }
  return status;
}
