// vLLM version string -> the era of its memory rules (research/vllm-trtllm-llamacpp-memory.md
// §1.2, §2, §11.1). Boundaries are the PRs that changed the rules, mapped to releases.
#include <fmt/format.h>

#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "headroom/engine_version.h"

namespace headroom::vllm {

namespace {

// Release dates (yyyymmdd) used to read "unknown@DATE" / "main@DATE" builds: the newest
// release on or before the date. 2025 dates are GitHub release dates; from 0.14 on they are
// INFERRED brackets from dated logs (0.21.0 logged 2026-05-28, 0.29.1rc1 2026-09, the v0.31.0
// image logged 10-06, xvllm-001).
struct Release { int ymd; int version; };
constexpr Release kReleases[] = {
    {20241118, 604}, {20241202, 605}, {20250115, 607}, {20250127, 700}, {20250220, 703},
    {20250318, 800}, {20250428, 805}, {20250515, 900}, {20250610, 901}, {20250708, 902},
    {20250724, 1000}, {20250818, 1001}, {20250913, 1002}, {20251002, 1100}, {20251118, 1101},
    {20251203, 1200}, {20251219, 1300}, {20260120, 1400}, {20260205, 1500}, {20260220, 1600},
    {20260305, 1700}, {20260320, 1800}, {20260405, 1900}, {20260420, 2000}, {20260505, 2100},
    {20260525, 2200}, {20260610, 2300}, {20260625, 2400}, {20260710, 2500}, {20260725, 2600},
    {20260810, 2700}, {20260825, 2800}, {20260910, 2900}, {20261001, 2901}, {20261006, 3100},
};

int version_for_date(int ymd) {
  int v = kReleases[0].version;
  for (const auto& r : kReleases)
    if (r.ymd <= ymd) v = r.version;
  return v;
}

Era make(int v, std::string reason) {
  Era e;
  e.version = v;
  e.reason = std::move(reason);
  // Every flag is a row of vllm_rule_table.cpp (the PR or the logs that place each cut).
  e.v0 = !has(Rule::V1Engine, v);
  e.v0_context_in_baseline = has(Rule::V0ContextInBaseline, v);
  e.whole_gpu = !has(Rule::PerInstanceBudget, v);
  e.kv_memory_flag = has(Rule::KvCacheMemoryBytes, v);
  e.full_and_piecewise = has(Rule::FullAndPiecewise, v);
  e.graph_outputs_per_size = has(Rule::GraphOutputsPerSize, v);
  e.nccl_before_snapshot = has(Rule::NcclBeforeSnapshot, v);
  e.format_gib = has(Rule::FormatGib, v);
  e.graph_estimate_logged = has(Rule::GraphEstimateLogged, v);
  e.graph_estimate_applied = has(Rule::GraphEstimateApplied, v);
  e.ceil_request = has(Rule::CeilRequest, v);
  e.tokens_from_concurrency = has(Rule::TokensFromConcurrency, v);
  e.total_consumed = has(Rule::TotalConsumed, v);
  e.suggestion_gib = has(Rule::SuggestionGib, v);
  e.override_sets_memory = has(Rule::OverrideSetsMemory, v);
  e.combined_kv_line = has(Rule::CombinedKvLine, v);
  e.swa_in_flight = has(Rule::SwaInFlight, v);
  e.models_typo = has(Rule::ModelsTypo, v);
  e.default_utilization = has(Rule::Utilization092, v) ? 0.92 : 0.9;
  int maj = v / 10000, min = (v / 100) % 100, pat = v % 100;
  std::string rules = e.v0 ? "V0 engine, whole-GPU profile"
                      : e.whole_gpu ? "V1 engine, whole-GPU peak (before PR #19312)"
                      : e.total_consumed ? "V1 engine, total_consumed accounting, CUDA-graph estimate applied"
                      : e.graph_estimate_applied ? "V1 engine, per-instance budget, CUDA-graph estimate applied"
                      : "V1 engine, per-instance budget (PR #19312)";
  e.label = fmt::format("vLLM {}.{}.{} rules ({})", maj, min, pat, rules);
  return e;
}

}  // namespace

Era era_for_version(const std::string& version) {
  const EngineVersion v = parse_engine_version(EngineKind::VLLM, version);
  switch (v.form) {
    case EngineVersion::Form::Dated:
      return make(version_for_date(v.date), v.why + ": newest release by then (release dates partly INFERRED)");
    case EngineVersion::Form::Release:
      if (v.release > kNewestVersion)  // an unknown release: say so, and plan it by the newest rules
        return make(kNewestVersion, fmt::format("version {} is newer than the releases headroom knows (0.6 .. 0.31.0): planned by 0.31.0's "
                                                "rules", version));
      return make(v.release, fmt::format("version {}", version));
    default: return make(kNewestVersion, v.why);
  }
}

}  // namespace headroom::vllm
