// llama.cpp's defaults by build, one row each (research/llamacpp-log-eras.md; common/arg.cpp).
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {

namespace {
constexpr RulePoint B(int build) { return {build, 0}; }
constexpr RulePoint kOpen{};

// Indexed by Rule: keep the order of the enum.
constexpr EngineRule kRules[] = {
    {"llamacpp.micro_batches", B(2450), kOpen, "-b 2048 / -ub 512 (before: n_batch = n_ubatch = 512): compute buffers sized by the micro-batch",
     "PR #6017 (micro-batches)"},
    {"llamacpp.flash_attn_auto", B(6250), kOpen, "-fa on|off|auto, auto by default", "common/arg.cpp, logs of b6250+"},
    {"llamacpp.all_layers_offloaded", B(6800), kOpen, "-ngl defaults to every layer (n_gpu_layers = -1)", "llama_model_default_params, logs of b6800+"},
    {"llamacpp.fit_on", B(6895), kOpen, "--fit on by default: llama_params_fit lowers the context, then experts or layers, to keep 1 GiB free",
     "llama_params_fit_impl lines in b6895+ logs (fit-params README)"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

bool has(Rule r, int build) { return rule_in_force(kRules[static_cast<size_t>(r)], RuleVersion{build, 0, build == 0}); }

}  // namespace headroom::llamacpp
