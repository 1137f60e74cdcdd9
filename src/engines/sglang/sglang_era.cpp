// SGLang version string -> era of memory rules (research/sglang-memory.md §3.1 history).
#include <fmt/format.h>

#include "engines/sglang/sglang_rule_table.h"
#include "engines/sglang/sglang_rules.h"
#include "headroom/engine_version.h"

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
  const EngineVersion v = parse_engine_version(EngineKind::SGLang, version);
  if (v.form == EngineVersion::Form::Dated) {
    Era e = era_of(RuleVersion{0, v.date, false});
    return {e, label(e), v.why, 0, v.date};
  }
  if (v.form == EngineVersion::Form::Release) {
    Era e = era_of(RuleVersion{v.release, 0, false});
    constexpr int kNewestSglang = 519;  // 0.5.19, the newest release in a log read (extra xsgl-015)
    if (v.release > kNewestSglang)
      return {e, label(e), fmt::format("version {} is newer than the releases headroom knows (0.3 .. 0.5.19): planned by the newest "
                                       "rules", version), v.release, 0};
    return {e, label(e), fmt::format("version {} (release-to-era mapping INFERRED from release dates)", version), v.release, 0};
  }
  return {era_of(RuleVersion{0, 0, true}), label(Era::Y2026), v.why};
}

bool legacy_piecewise_graph(const EraInfo& era) { return has(Rule::LegacyPiecewiseGraph, rule_version(era)); }
bool legacy_dsv4_pool(const EraInfo& era) { return has(Rule::LegacyDsv4Pool, rule_version(era)); }
bool early_rocm_dsv4_rings(const EraInfo& era) { return has(Rule::EarlyRocmDsv4Rings, rule_version(era)); }

}  // namespace headroom::sglang
