// SGLang version string -> era of memory rules (research/sglang-memory.md §3.1 history).
#include <cstdio>
#include <fmt/format.h>

#include "engines/sglang/sglang_rule_table.h"
#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"

namespace headroom::sglang {

namespace {
std::string label(Era e) {
  switch (e) {
    case Era::V2024: return "SGLang 2024 - mid-2025 rules (TP-based default fraction)";
    case Era::Mid2025: return "SGLang mid-2025 rules (PR #7054 tiered reserve)";
    case Era::Late2025: return "SGLang late-2025 rules (PR #10975 reserve heuristic)";
    case Era::Y2026: return "SGLang 2026 rules (arg_groups/memory_hook.py, pool_configurator.py)";
  }
  return "";
}
// The era is the row of sglang_rule_table.cpp in force.
Era era_of(const RuleVersion& v) {
  if (has(Rule::MemoryHook, v)) return Era::Y2026;
  if (has(Rule::ReserveHeuristic, v)) return Era::Late2025;
  if (has(Rule::TieredReserve, v)) return Era::Mid2025;
  return Era::V2024;
}
}  // namespace

EraInfo era_for_version(const std::string& version) {
  if (version.empty() || version == "latest" || version == "main" || version == "newest")
    return {era_of(RuleVersion{0, 0, true}), label(Era::Y2026), "newest known rules (no version given)"};
  // "<anything>@YYYY-MM[-DD]": a build of main (or a fork) dated by its log.
  if (auto at = version.find('@'); at != std::string::npos) {
    int y = 0, m = 0, d = 1;
    std::string date = version.substr(at + 1);
    if (std::sscanf(date.c_str(), "%4d-%2d-%2d", &y, &m, &d) >= 1 && y >= 2023 && y <= 2100) {
      if (m == 0) m = 6;
      const int ymd = y * 10000 + m * 100 + d;
      Era e = era_of(RuleVersion{0, ymd, false});
      return {e, label(e), fmt::format("build dated {}", date), 0, ymd};
    }
    return era_for_version(version.substr(0, at));
  }
  int a = 0, b = 0, c = 0;
  if (std::sscanf(version.c_str(), "%d.%d.%d", &a, &b, &c) >= 2) {
    int v = a * 10000 + b * 100 + c;
    Era e = era_of(RuleVersion{v, 0, false});
    constexpr int kNewestSglang = 519;  // 0.5.19, the newest release in a log read (extra xsgl-015)
    if (v > kNewestSglang)
      return {e, label(e), fmt::format("version {} is newer than the releases headroom knows (0.3 .. 0.5.19): planned by the newest "
                                       "rules", version), v, 0};
    return {e, label(e), fmt::format("version {} (release-to-era mapping INFERRED from release dates)", version), v, 0};
  }
  fail_input("--engine", "sglang@" + version, "cannot read the version (use e.g. 0.5.4, or main@2025-10-16)");
}

bool legacy_piecewise_graph(const EraInfo& era) { return has(Rule::LegacyPiecewiseGraph, rule_version(era)); }
bool legacy_dsv4_pool(const EraInfo& era) { return has(Rule::LegacyDsv4Pool, rule_version(era)); }
bool early_rocm_dsv4_rings(const EraInfo& era) { return has(Rule::EarlyRocmDsv4Rings, rule_version(era)); }

}  // namespace headroom::sglang
