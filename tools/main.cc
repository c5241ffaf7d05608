// zionsim: the command-line program. Everything happens in run_cli().

#include <iostream>
#include <string>
#include <vector>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return zx::tools::run_cli(args, std::cout, std::cerr);
}
