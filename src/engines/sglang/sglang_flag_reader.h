// Reading SGLang's flags from a deployment as server_args.py parses them: a float or int in its
// range, or argparse's one-line error (exit 2). Shared by the plan's files.
#pragma once
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <optional>
#include <string>
#include <string_view>

#include "headroom/deployment.h"
#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"

namespace headroom::sglang {

inline constexpr const char* kSrc = "command line";

struct Flags {
  const Deployment& d;
  const std::string* get(std::string_view n) const { return d.flag(n); }
  bool on(std::string_view n) const { return flag_on(d, n); }
  std::optional<double> num(std::string_view n, double lo, double hi, bool lo_open = false) const {
    const std::string* v = get(n);
    if (!v) return std::nullopt;
    size_t pos = 0;
    double x = 0;
    try {
      x = std::stod(*v, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != v->size() || !std::isfinite(x))
      fail_input(kSrc, n, fmt::format("argument {}: invalid float value: '{}'", n, *v));
    if (x > hi || x < lo || (lo_open && x <= lo))
      fail_input(kSrc, n, fmt::format("argument {}: {} is out of range {}{}, {}]", n, *v, lo_open ? "(" : "[", lo, hi));
    return x;
  }
  std::optional<int64_t> integer(std::string_view n, int64_t lo, int64_t hi) const {
    const std::string* v = get(n);
    if (!v) return std::nullopt;
    size_t pos = 0;
    long long x = 0;
    try {
      x = std::stoll(*v, &pos);
    } catch (...) {
      pos = 0;
    }
    if (pos != v->size()) fail_input(kSrc, n, fmt::format("argument {}: invalid int value: '{}'", n, *v));
    if (x < lo || x > hi) fail_input(kSrc, n, fmt::format("argument {}: {} is out of range [{}, {}]", n, x, lo, hi));
    return x;
  }
};

}  // namespace headroom::sglang
