// Helpers shared by the engine plan tests: plan a command line, look for predicted log lines, and
// catch the one-line InputError a bad command line gives.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/error.h"

namespace headroom::test {

inline Forecast run(std::vector<std::string> argv) { return plan(parse_deployment(Args::parse(argv))); }

inline bool has_line(const Forecast& f, const std::string& line) { return std::find(f.log.begin(), f.log.end(), line) != f.log.end(); }

inline bool has_prefix(const Forecast& f, const std::string& prefix) {
  return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
}

// The InputError's text, or "" when the command line plans.
inline std::string input_error(std::vector<std::string> argv) {
  try {
    run(std::move(argv));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace headroom::test
