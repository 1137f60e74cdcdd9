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
    // Cuts that were version comparisons in the engine model; docs/engines/trtllm.md has a section per id.
    {"trtllm.pages_per_sequence_line", R(2000), R(10000), "the PyTorch path logs \"Max KV cache pages per sequence: N [window size=W]\"",
     "TensorRT-LLM#6294 (0.20); none at info level in 1.1.0rc3: GUESS for 0.21 / 1.0, taken as 0.20 / 1.1"},
    {"trtllm.summary_max_batch_size", R(2000), kOpen, "py_executor_creator's summary line adds max_batch_size (four fields, was three)",
     "GUESS: three fields in a 2025-02-14 Dynamo README log, four in 1.1.0rc3; taken as arriving with 0.20"},
    {"trtllm.max_seq_len_clamp", R(10100), kOpen, "the PyTorch backend cuts a longer max_seq_len to the model's limit with a warning, not a refusal",
     "PyTorchModelEngine._init_max_seq_len, in main by 2025-08-29 (PR #7345 review): first release INFERRED 1.1"},
    {"trtllm.blocks_per_window_log", R(10100), kOpen, "the PyTorch path logs \"Adjusted window size ... in blocks_per_window\" when the window shrinks",
     "the real 1.1.0rc3 log (trtllm_kv.cpp); earlier releases INFERRED without it"},
    {"trtllm.blocks_per_sequence_line", R(10200), kOpen,
     "the C++ KV manager logs \"Max KV cache blocks per sequence: ... primary blocks=..., max sequence length=...\"",
     "kvCacheManager.cpp; 1.2.0rc2 and 1.3.0rc7 logs (xtrt-011, xtrt-010)"},
    {"trtllm.allow_long_max_seq_len", R(10300), kOpen, "TLLM_ALLOW_LONG_MAX_MODEL_LEN=1/true/yes/y keeps a max_seq_len above the model's limit",
     "PR #10600 (merged 2026-01-16), first release INFERRED 1.3"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

bool has(Rule r, int v) { return rule_in_force(kRules[static_cast<size_t>(r)], RuleVersion{v, 0, false}); }

}  // namespace headroom::trtllm
