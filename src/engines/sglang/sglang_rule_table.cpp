// SGLang's memory rules, one row each: the release (a*10000 + b*100 + c) and the date on main of
// each change (research/sglang-memory.md §3.1; release-to-date mapping INFERRED from release dates).
#include "engines/sglang/sglang_rule_table.h"

namespace headroom::sglang {

namespace {
constexpr RulePoint kOpen{};

// Indexed by Rule: keep the order of the enum.
constexpr EngineRule kRules[] = {
    {"sglang.tp_default_fraction", kOpen, {407, 20250610}, "default --mem-fraction-static chosen by TP size", "server_args.py before PR #7054"},
    {"sglang.tiered_reserve", {407, 20250610}, {503, 20251001}, "default fraction from a reserve tiered by GPU memory", "PR #7054 (merged 2025-06-10)"},
    {"sglang.reserve_heuristic", {503, 20251001}, {509, 20260301}, "default fraction from the reserve heuristic (capture size, chunked prefill)",
     "PR #10975 (~2025-10; a 2025-10-16 log shows its capture list)"},
    {"sglang.memory_hook", {509, 20260301}, kOpen, "2026 sizing: arg_groups/memory_hook.py, pool_configurator.py (draft KV in the cell, mamba pools)",
     "INFERRED from 2026 logs"},
    {"sglang.legacy_piecewise_graph", kOpen, {517, 20260701}, "--disable-cuda-graph leaves the piecewise prefill graphs on", "INFERRED: 0.5.17 / 2026-07 logs"},
    {"sglang.legacy_dsv4_pool", kOpen, {515, 20260620}, "DeepSeek-V4 pools sized by swa_full_tokens_ratio, c128 state per token", "before PR #28612 (2026-06)"},
    {"sglang.early_rocm_dsv4_rings", kOpen, {513, 20260601}, "DeepSeek-V4 on ROCm: wider compress-state rings", "INFERRED: 0.5.13 / 2026-06 logs"},
    {"sglang.nemotron_nas", {501, 20250817}, kOpen, "DeciLMForCausalLM (Nemotron-NAS) is a supported architecture (srt/models/nemotron_nas.py)",
     "PR #9067, merged 2025-08-17; first release 0.5.1 INFERRED from the merge date"},
    {"sglang.nccl_in_captured_graphs", kOpen, {511, 20260501},
     "without custom all-reduce (more than two PCIe-only GPUs) the captured graphs hold NCCL's all-reduces: ~0.28 MiB per graph x layer",
     "vLLM's figure for the same NCCL path (xvllm-017/019/091/094/098) and xsgl-001 (2025-03, 0.35); the cut is vLLM's "
     "(none in its 2026-08 logs, placed after 0.19.0 ~2026-05), INFERRED for SGLang on the same torch / NCCL"},
    {"sglang.small_gpu_tier_raised", {520, 20260904}, kOpen,
     "20-35 GiB GPUs (A10, 4090, 5090): chunked prefill 2048 -> 4096, decode graphs up to 24 -> 48 (tp < 4) / 80 -> 160",
     "PR #37898 (described 2026-09-04, merged); v0.5.20 has it (PR #40346 measures its 48 cap on v0.5.20); a 2026-04-14 log "
     "(xsgl-013) captures [1 .. 24] and a 2026-06-14 one (xsgl-003) prints chunked_prefill_size=2048 on 24 GB cards"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

RuleVersion rule_version(const EraInfo& era) { return {era.release, era.build_date, era.release == 0 && era.build_date == 0}; }

bool has(Rule r, const RuleVersion& v) { return rule_in_force(kRules[static_cast<size_t>(r)], v); }

}  // namespace headroom::sglang
