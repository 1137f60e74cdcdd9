// The headroom command-line tool: hands argv to the library's run_cli().
#include <iostream>
#include <string>
#include <vector>

#include "headroom/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  int rc = headroom::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
