// Printing and parsing byte quantities.
#include "headroom/units.h"

#include <cmath>
#include <fmt/format.h>

#include "headroom/error.h"

namespace headroom {

std::string gib2(int64_t bytes) { return fmt::format("{:.2f}", to_gib(bytes)); }

std::string human_bytes(int64_t bytes) {
  const uint64_t a = bytes < 0 ? 0 - static_cast<uint64_t>(bytes) : static_cast<uint64_t>(bytes);  // INT64_MIN too
  if (a >= static_cast<uint64_t>(GiB)) return fmt::format("{:.2f} GiB", to_gib(bytes));
  if (a >= static_cast<uint64_t>(MiB)) return fmt::format("{:.2f} MiB", to_mib(bytes));
  if (a >= static_cast<uint64_t>(KiB)) return fmt::format("{:.2f} KiB", static_cast<double>(bytes) / KiB);
  return fmt::format("{} B", bytes);
}

int64_t parse_bytes(std::string_view text, std::string_view source, std::string_view field) {
  std::string s(text);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) fail_input(source, field, "expected a size like 94.97GiB or 102641958912, got '" + s + "'");
  double v = 0;
  try {
    v = std::stod(s.substr(0, i));
  } catch (...) {
    fail_input(source, field, "not a number: '" + s + "'");
  }
  std::string unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 1;
  if (unit.empty() || unit == "b") mult = 1;
  else if (unit == "kib" || unit == "k") mult = KiB;
  else if (unit == "mib" || unit == "m") mult = MiB;
  else if (unit == "gib" || unit == "g") mult = GiB;
  else if (unit == "tib" || unit == "t") mult = static_cast<double>(GiB) * 1024;
  else if (unit == "kb") mult = 1e3;
  else if (unit == "mb") mult = 1e6;
  else if (unit == "gb") mult = 1e9;
  else if (unit == "tb") mult = 1e12;
  else fail_input(source, field, "unknown unit '" + unit + "' (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  double bytes = v * mult;
  if (!std::isfinite(bytes) || bytes <= 0 || bytes > 1e15)
    fail_input(source, field, "size out of range: '" + s + "'");
  return static_cast<int64_t>(std::llround(bytes));
}

}  // namespace headroom
