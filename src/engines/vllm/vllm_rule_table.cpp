// vLLM's memory rules, one row each, in release order (research/vllm-trtllm-llamacpp-memory.md
// §1.2, §2, §11.1; the corpus case ids name the logs that place a cut where no PR does).
#include "engines/vllm/vllm_rule_table.h"

namespace headroom::vllm {

namespace {
constexpr RulePoint R(int v) { return {v, 0}; }
constexpr RulePoint kOpen{};

// Indexed by Rule: keep the order of the enum.
constexpr EngineRule kRules[] = {
    {"vllm.v1_engine", R(800), kOpen, "V1 engine by default: profiling in gpu_worker.py, \"GPU KV cache size\" lines", "vLLM 0.8.0 release notes"},
    {"vllm.v0_context_in_baseline", R(605), R(800),
     "V0 profiles against a baseline taken after the CUDA context: the context (and other processes) outside the budget",
     "PR #10511 (memory_profiling), first in 0.6.5"},
    {"vllm.per_instance_budget", R(901), kOpen,
     "KV = T x u - this instance's non-KV memory; other processes no longer charged, startup refusal when free < T x u",
     "PR #19312, first in 0.9.1"},
    {"vllm.kv_cache_memory_bytes", R(1002), kOpen, "--kv-cache-memory-bytes sets the KV memory directly", "PR #21489 (its suggestion line in 0.10.2 logs, vllm-048)"},
    {"vllm.graph_outputs_per_size", R(800), R(1001),
     "V1 piecewise graphs keep every captured size's outputs: graph memory grows with hidden_size x sizes",
     "INFERRED from three 0.9.2 logs; the flat cost holds from 0.10.1.1 (vllm-055)"},
    {"vllm.full_and_piecewise", R(1100), kOpen, "cudagraph_mode FULL_AND_PIECEWISE by default: full decode graphs besides the piecewise ones",
     "PR #25444, first in 0.11.0"},
    {"vllm.nccl_before_snapshot", R(1100), kOpen, "NCCL initialised before the init snapshot: its buffers outside the budget, seen by the startup check",
     "PR #25359, first in 0.11.0"},
    {"vllm.suggestion_gib", R(1100), kOpen, "the too-small-KV suggestion prints GiB figures", "INFERRED from 0.10.2 (vllm-048) and 2026 logs (vllm-071)"},
    {"vllm.format_gib", R(1200), kOpen, "GiB printed by format_gib (2 decimals, no trailing zeros)", "gpu_model_runner / kv_cache_utils, 0.12"},
    {"vllm.graph_estimate_logged", R(1700), kOpen, "profile_cudagraph_memory() runs and logs its estimate (opt-in)", "PR #30515, first in 0.17"},
    {"vllm.graph_estimate_applied", R(2100), kOpen, "the CUDA-graph estimate is subtracted from the KV budget by default", "PR #38284, first in 0.21"},
    {"vllm.ceil_request", R(2100), kOpen, "requested memory = ceil(T x u) (request_memory())", "0.21 gpu_worker.py"},
    {"vllm.tokens_from_concurrency", R(2100), kOpen, "GPU KV cache size = int(concurrency x max_model_len)", "INFERRED bracket 0.17 .. 0.21"},
    {"vllm.override_sets_memory", R(2100), kOpen, "--num-gpu-blocks-override sets the KV memory before the checks", "PR #41069, first in 0.21"},
    {"vllm.utilization_092", R(2100), kOpen, "--gpu-memory-utilization defaults to 0.92 (was 0.9)", "PR #38284, 0.21"},
    {"vllm.models_typo", kOpen, R(2000), "the too-small-KV error says \"models's max seq len\"", "0.11-era logs (vllm-005); 0.20.0 says \"model's\" (vllm-057)"},
    {"vllm.swa_in_flight", R(2600), kOpen, "sliding-window groups hold max_in_flight_tokens beyond the window", "PR #47728, first in 0.26.0 (vllm#49878)"},
    {"vllm.total_consumed", R(2601), kOpen, "total_consumed (mem_get_info) accounting and its suggestion line", "INFERRED from 0.26.1rc0 (vllm-080) and 0.27.1 (vllm-053)"},
    {"vllm.combined_kv_line", R(2900), kOpen, "one \"GPU KV cache size ..., Maximum concurrency ...\" line", "0.29 logs"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

bool has(Rule r, int v) { return rule_in_force(kRules[static_cast<size_t>(r)], RuleVersion{v, 0, false}); }

}  // namespace headroom::vllm
