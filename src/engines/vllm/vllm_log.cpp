// Number formats of vLLM's log lines: "%.2f" GiB (to ~0.11), format_gib (0.12+: round to
// two decimals, Python float repr, so 51.1 not 51.10) and f"{n:,}" token counts.
#include <cmath>
#include <fmt/format.h>

#include "engines/vllm/vllm_rules.h"
#include "headroom/units.h"

namespace headroom::vllm {

std::string gib_fmt(int64_t bytes) {
  // vllm/utils/mem_utils.py format_gib: round(b / GiB_bytes, 2), printed by Python's repr.
  double r = std::round(to_gib(bytes) * 100.0) / 100.0;
  std::string s = fmt::format("{:.2f}", r);
  if (s.size() > 3 && s.back() == '0') s.pop_back();  // 51.10 -> 51.1, 0.00 -> 0.0
  return s;
}

std::string gib(const Era& era, int64_t bytes) { return era.format_gib ? gib_fmt(bytes) : gib2(bytes); }

std::string commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return n < 0 ? "-" + out : out;
}

}  // namespace headroom::vllm
