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
    {"llamacpp.outputs_per_sequence", B(2450), kOpen, "the output (logits) buffer holds one row per sequence (before: one per batch token)",
     "PR #6122 (only the outputs' logits)"},
    {"llamacpp.mla_latent_kv", B(5090), kOpen, "MLA models (deepseek2) cache the latent K and V per layer (before: every head's K and V)",
     "MLA support in llama.cpp (~b5090; the K-and-V form until b7999 a GUESS)"},
    {"llamacpp.swa_ubatch_size", B(6000), kOpen, "the sliding-window cache is n_swa x sequences + n_ubatch cells (before: + n_batch)",
     "docs/llamacpp-kv.md (a b6182 log: 640 = 128 + 512 cells; boundary INFERRED)"},
    {"llamacpp.kv_pad256_streams", B(7000), kOpen, "n_ctx padded to 256, one KV stream per sequence unless unified; llama-server 4 unified slots by default",
     "PR #17046 (Nov 2025; boundary INFERRED)"},
    {"llamacpp.mla_latent_k_only", B(8000), kOpen, "MLA caches the latent K only (V 0 MiB) and the DSA indexer keys", "2026 logs (\"V (f16): 0.00 MiB\")"},
    {"llamacpp.flash_attn_auto", B(6250), kOpen, "-fa on|off|auto, auto by default", "common/arg.cpp, logs of b6250+"},
    {"llamacpp.all_layers_offloaded", B(6800), kOpen, "-ngl defaults to every layer (n_gpu_layers = -1)", "llama_model_default_params, logs of b6800+"},
    {"llamacpp.fit_on", B(6895), kOpen, "--fit on by default: llama_params_fit lowers the context, then experts or layers, to keep 1 GiB free",
     "llama_params_fit_impl lines in b6895+ logs (fit-params README)"},
    {"llamacpp.cpu_moe_fused_gate_up", B(8290), kOpen,
     "--cpu-moe / --n-cpu-moe also keep fused ffn_gate_up_exps tensors on the host (before: only up, gate and down; a GGUF "
     "converted with --fuse_gate_up_exps kept two thirds of its experts on the GPU)",
     "PR #20416 (LLM_FFN_EXPS_REGEX gains gate_up; merged 2026-03-11, fixes issue #20431 on b8284; build INFERRED)"},
    {"llamacpp.fit_context_interpolated", B(7490), kOpen,
     "--fit picks the context by interpolating the projected use between --fit-ctx and the model's context, rounded down to 256, "
     "and goes on to the layers on several GPUs (before: the deficit over the KV bytes per token, and done when that was enough)",
     "PR #18372 (llama-fit-params: fix Gemma 3 calculation; merged 2025-12-25; build INFERRED)"},
    {"llamacpp.fit_keeps_explicit_ctx0", B(7810), kOpen, "--fit leaves an explicit -c 0 (the model's full context) alone",
     "PR #19070 (llama-fit-params: keep explicit --ctx-size 0; merged 2026-01-24; build INFERRED)"},
    {"llamacpp.fit_n_streams", B(10545), kOpen,
     "--fit with the context unset and a KV cache not unified (-np N, -no-kvu) gives every slot the model's context (n_ctx = "
     "n_ctx_train x slots) before it shrinks it (before: n_ctx_train shared by the slots)",
     "PR #27496 (fit: also take into account n_streams; merged 2026-08-21; b10545 was released that day, b10507 on 2026-08-20 "
     "(winget-pkgs release PRs); build INFERRED)"},
    {"llamacpp.fit_counts_draft", B(9270), kOpen,
     "--fit keeps room for the draft model (-md): its weights, context and compute buffer per device join the target there, "
     "measured at the target's unfitted context (the model's whole context when -c is unset; llama.cpp#25408) (before: fit "
     "ignored the draft)",
     "PR #23485 (server: add margin for draft model for fit; merged 2026-05-21; build INFERRED from b8763 on 2026-04-12 and "
     "b9893 on 2026-07-07)"},
    {"llamacpp.fit_counts_mmproj", B(8690), kOpen,
     "--fit keeps room on the first GPU for the multimodal projector (--mmproj): its weights and compute buffer join the target "
     "(before: fit ignored it and the projector could fail to load, llama.cpp#19980)",
     "PR #21489 (mtmd: fit_params now take into account mmproj; merged 2026-04-05; build INFERRED from b8763 on 2026-04-12)"},
    {"llamacpp.metal_mtl_names", B(7780), kOpen,
     "Metal devices are MTL0, MTL1, ... (buffers MTL0, MTL0_Mapped) (before: one device named Metal, buffers Metal, Metal_Mapped)",
     "PR #18919 (metal: support virtual devices, 2026-01-18: GGML_METAL_NAME \"MTL\"); build INFERRED from b7810 ~2026-01-24; "
     "an LM Studio 2025-08 log prints Metal_Mapped, a b10950 log MTL0"},
};
static_assert(std::size(kRules) == static_cast<size_t>(Rule::Count), "one row per Rule, in the enum's order");
}  // namespace

std::span<const EngineRule> rule_table() { return kRules; }

bool has(Rule r, int build) { return rule_in_force(kRules[static_cast<size_t>(r)], RuleVersion{build, 0, build == 0}); }

}  // namespace headroom::llamacpp
