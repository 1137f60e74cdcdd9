// TensorRT-LLM's memory rules, one row each (trtllm_settings.cpp era_for_version has the
// derivations; research/vllm-trtllm-llamacpp-memory.md §7).
#include "engines/trtllm/trtllm_rule_table.h"

namespace headroom::trtllm {

namespace {
constexpr RulePoint R(int v) { return {v, 0}; }
constexpr RulePoint kOpen{};

// Indexed by Rule: keep the order of the enum.
constexpr EngineRule kRules[] = {
    {"trtllm.lazy_context", kOpen, R(900), "TensorRT engines size the KV pool before the execution context takes memory",
     "GUESS: 0.8.0 log \"IExecutionContext creation: ... GPU +0\"; 0.9 the first release after"},
    {"trtllm.tokens_per_block_64", R(1000), R(1900), "tokens_per_block defaults to 64 (was 128)", "plugin.py PluginConfig, 0.10 (discussion #1599)"},
    {"trtllm.tokens_per_block_32", R(1900), kOpen, "tokens_per_block defaults to 32", "llmapi/llm_args.py KvCacheConfig, 0.19 (ai-dynamo PR #642)"},
    {"trtllm.pytorch_default", R(10000), kOpen, "trtllm-serve runs the PyTorch backend by default: KV from the profiled peak",
     "1.0 release"},
    {"trtllm.log_2026", R(10200), kOpen, "the peak-memory line says \"kv size per token is ...\"", "1.2 logs"},
    {"trtllm.estimation_floor", R(10300), kOpen, "the estimation run's KV holds at least one max_seq_len sequence and max_batch_size blocks",
     "GUESS: absent in 1.2.0rc2, present by 1.3.0rc0 (_util.py _get_token_num_for_estimation)"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

bool has(Rule r, int v) { return rule_in_force(kRules[static_cast<size_t>(r)], RuleVersion{v, 0, false}); }

}  // namespace headroom::trtllm
