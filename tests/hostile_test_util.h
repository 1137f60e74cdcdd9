// Helpers of the hostile-input tests (issue 31): the CLI in-process, temp files, elapsed time.
#pragma once
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "headroom/cli.h"

namespace headroom::test {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct CliRun {
  int rc;
  std::string out, err;
};

inline CliRun cli(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  int rc = run_cli(argv, out, err);
  return {rc, out.str(), err.str()};
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A file under the system temp folder, removed with the object.
struct TempFile {
  fs::path path;
  TempFile(const std::string& name, const std::string& text)
      : path(fs::temp_directory_path() / (std::to_string(::getpid()) + "-" + name)) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

inline long ms_since(Clock::time_point t0) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
}

}  // namespace headroom::test
