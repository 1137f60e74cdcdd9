// DeepSeek-V4 weights per rank as SGLang loads them (sgl-project/sglang), beyond the checkpoint
// bytes the common layout counts. Each term names the SGLang file it mirrors:
//  1. wo_a in BF16: models/deepseek_v4.py MQALayer builds wo_a with quant_config=None and
//     params_dtype bfloat16 unless SGLANG_OPT_FP8_WO_A_GEMM, and load_weights runs
//     _dequant_fp8_wo_a ("Execute dequant fp8 wo_a"). The flag defaults on from PR #25181
//     (2026-05-14) but server_args turns it off below sm100; from PR #28983 (2026-06-29) Hopper may
//     opt in by setting it; ROCm gets an FP8 path with PR #37423 (2026-09-01).
//  2. FP4 routed experts through Marlin on Hopper (layers/quantization/fp8.py get_quant_method ->
//     mxfp4_marlin_moe.py Mxfp4MarlinMoEMethod): Fp8MoEMethod.create_fp8_moe_weight_ allocates the
//     expert scales [E, 2I, H/32] and [E, H, I/32] in float32 on CUDA; marlin_utils_fp4.py
//     prepare_moe_mxfp4_layer_for_marlin writes E8M0 copies to w13/w2_weight_scale and, in the builds
//     of sglang#29797 ("drop stale mxfp4 marlin scales after repack", 2026-07-01: TP16 'mem usage'
//     79.05 -> 67.57 GB), left the float32 *_scale_inv registered. The cleanup is in main by sglang#31898
//     (2026-07-21: "Preserve the existing lifecycle cleanup of loader-format MXFP4 scale parameters").
//     Window GUESS at its start: 2026-07-01 is the first dated evidence (the 2026-05-06 JIT port,
//     sglang#24490, replaced *_scale_inv in place); the 2026-07 deepseek-v4-hopper image has it.
//     Marlin is SM90's MoE runner for FP4 experts unless another is named (sglang#24816, 2026-05-09:
//     "Marlin remains the SM90 default"); SGLANG_DSV4_FP4_DEQUANT=1 instead casts the experts to FP8
//     e4m3 at load (fp8.py cast_e2m1fn_to_e4m3fn: 1 B per weight + a float32 scale per 128x128 block).
//  3. RoPE tables built on the GPU during model init: layers/deepseek_v4_rope.py
//     precompute_freqs_cis (@lru_cache(2): one complex64 [max_position_embeddings, rope/2] table per
//     (compress ratio 0 | compressed) key, shared by every layer, compressor and indexer) and
//     layers/rotary_embedding.py get_rope -> DeepseekScalingRotaryEmbedding (cached per base in
//     _ROPE_DICT; cos_sin_cache [original_max_position x factor, rope_dim] float32, kept FP32 on CUDA).
//     Ratio-0 layers use rope_theta, compressed layers compress_rope_theta.
//  4. DP attention: DeepseekV4Model builds VocabParallelEmbedding(enable_tp=not dp attention), a full
//     copy per rank; the layout's SGLang rule matches "embed_tokens" and V4's checkpoint spells it
//     "embed.weight".
//  5. MTP draft (models/deepseek_v4_nextn.py DeepseekV4ModelNextN): its decoder layer (compress ratio
//     0) carries terms 1-2, and it builds its own VocabParallelEmbedding and lm head, which the loader
//     skips ("shared_head.head" / "embed_tokens") and EAGLE later points at the target's; the draft's
//     'Load weight end' counts them (vocab-parallel shares). Real log, sglang-027 (InferenceX #2128):
//     the draft adds 3.07 GB.
#include "engines/sglang/sglang_dsv4.h"

#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

#include "headroom/units.h"

namespace headroom::sglang {

namespace {
constexpr int kWoAFp8Blackwell = 20260514;  // PR #25181: SGLANG_OPT_FP8_WO_A_GEMM default True
constexpr int kWoAFp8HopperOptIn = 20260629;  // PR #28983: sm90 may set it
constexpr int kWoAFp8Rocm = 20260901;         // PR #37423: ROCm FP8 wo_a path
constexpr int kMarlinLeakFirstSeen = 20260701;  // sglang#29797 (GUESS: start of the window)
constexpr int kMarlinLeakFixed = 20260721;      // sglang#31898 describes the cleanup as existing

bool after(int date, int boundary) { return date == 0 || date >= boundary; }

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The routed experts one rank holds: E experts of intermediate I (split over the MoE TP group,
// tp / ep) and hidden H.
struct ExpertShape {
  int64_t E, I, H;
};
ExpertShape expert_shape(const ModelConfig& c, const Parallel& par) {
  const int ep = std::max(1, par.ep), moe_tp = std::max(1, std::max(1, par.tp) / ep);
  return {c.num_experts / ep, c.moe_intermediate_size / moe_tp, c.hidden_size};
}
}  // namespace

int build_date(const std::string& v) {
  const auto at = v.rfind('@');
  if (at == std::string::npos) return 0;
  int y = 0, m = 0, d = 1;
  if (std::sscanf(v.c_str() + at + 1, "%4d-%2d-%2d", &y, &m, &d) < 2 || y < 2023 || m < 1 || m > 12) return 0;
  return y * 10000 + m * 100 + std::clamp(d, 1, 31);
}

Dsv4Weights dsv4_weight_rules(const ModelConfig& c, const Dsv4Inputs& in) {
  Dsv4Weights w;
  if (c.family != "deepseek_v4") return w;
  const bool blackwell = !in.amd && in.sm >= 100 && in.sm < 110;
  const bool hopper = !in.amd && in.sm == 90;
  // 1. wo_a: BF16 unless the FP8 grouped GEMM is on for this GPU and build.
  bool fp8_wo_a = false;
  if (blackwell) fp8_wo_a = in.env_fp8_wo_a_gemm.value_or(after(in.date, kWoAFp8Blackwell));
  else if (hopper) fp8_wo_a = in.env_fp8_wo_a_gemm.value_or(false) && after(in.date, kWoAFp8HopperOptIn);
  else if (in.amd) fp8_wo_a = in.env_fp8_wo_a_gemm.value_or(true) && after(in.date, kWoAFp8Rocm);
  w.wo_a_bf16 = c.quant.method == QuantMethod::Fp8Block && !fp8_wo_a;
  if (w.wo_a_bf16)
    w.notes.push_back("SGLang dequantizes DeepSeek-V4's wo_a to BF16 at load (deepseek_v4.py _dequant_fp8_wo_a; SGLANG_OPT_FP8_WO_A_GEMM off for this GPU/build)");
  // 2. FP4 routed experts: runner, dequant, Marlin's stale FP32 scales.
  const bool fp4 = c.expert_fp4 && in.env_fp4_experts.value_or(true);
  if (!fp4) return w;
  w.fp4_dequant = in.env_fp4_dequant.value_or(false);
  if (w.fp4_dequant) {
    w.moe_backend = "fp8 (SGLANG_DSV4_FP4_DEQUANT)";
    w.notes.push_back("SGLANG_DSV4_FP4_DEQUANT=1: SGLang casts the FP4 experts to FP8 e4m3 at load (fp8.py cast_e2m1fn_to_e4m3fn), twice their checkpoint size");
    return w;
  }
  const bool a2a = !in.moe_a2a_backend.empty() && in.moe_a2a_backend != "none";
  w.moe_backend = !in.moe_runner_backend.empty() && in.moe_runner_backend != "auto" ? in.moe_runner_backend
                  : hopper && !a2a                                                   ? "marlin"
                                                                                     : "auto";
  w.marlin_scale_leak = hopper && w.moe_backend == "marlin" && in.date != 0 && in.date >= kMarlinLeakFirstSeen &&
                        in.date < kMarlinLeakFixed;
  if (w.marlin_scale_leak)
    w.notes.push_back(
        "SGLang builds of July 2026 keep the FP4 experts' float32 loader scales after the Marlin repack (sglang#29797, fixed by 2026-07-21); "
        "window start GUESS (first dated evidence 2026-07-01)");
  return w;
}

Dsv4RankExtra dsv4_rank_extra(const ModelConfig& c, const Parallel& par, const Dsv4Weights& w, int first, int last,
                              bool first_stage) {
  Dsv4RankExtra x;
  if (c.family != "deepseek_v4") return x;
  const int64_t layers = std::max(0, last - first);
  const int tp = std::max(1, par.tp), attn_tp = std::max(1, par.attn_tp());
  auto add = [&](const std::string& what, int64_t main, int64_t draft) {
    x.main_bytes += main;
    x.draft_bytes += draft;
    if (main != 0) x.items.emplace_back(what, main);
  };
  // 1. wo_a [o_groups*o_lora_rank, heads*head_dim/o_groups], column-parallel over attention TP: BF16
  //    instead of the FP8 weight + block scale the layout counts.
  if (w.wo_a_bf16) {
    const int64_t out = c.o_groups * c.o_lora_rank, in = c.num_attention_heads * c.head_dim / c.o_groups;
    const int64_t bn = c.quant.block_n > 0 ? c.quant.block_n : 128, bk = c.quant.block_k > 0 ? c.quant.block_k : 128;
    const int64_t scale = cdiv(out, bn) * cdiv(in, bk) * (c.expert_fp4 ? 1 : 4);
    const int64_t per_layer = out / attn_tp * in * 2 - (out * in + scale) / attn_tp;
    add("wo_a in BF16 (dequantized at load)", layers * per_layer, per_layer);
  }
  // 2. FP4 experts: stale FP32 loader scales (Marlin window), or the FP8 cast.
  const auto [E, I, H] = expert_shape(c, par);
  if (w.marlin_scale_leak) {
    // Fp8MoEMethod's float32 scales [E, 2I, H/32] and [E, H, I/32].
    const int64_t per_layer = E * (2 * I * (H / 32) + H * (I / 32)) * 4;
    add("FP4 experts' float32 loader scales left after the Marlin repack", layers * per_layer, per_layer);
  }
  if (w.fp4_dequant) {
    const int64_t weights = E * 3 * I * H;                                        // logical weights per layer
    const int64_t fp8 = weights + E * (2 * cdiv(I, 128) * cdiv(H, 128) + cdiv(H, 128) * cdiv(I, 128)) * 4;
    const int64_t fp4 = weights / 2 + weights / 32;                              // packed e2m1 + E8M0 per 32
    add("FP4 experts cast to FP8 e4m3 (SGLANG_DSV4_FP4_DEQUANT)", layers * (fp8 - fp4), fp8 - fp4);
  }
  // 3. RoPE tables: one per key present on this rank (the draft's ratio-0 layer adds that key's if
  //    the main model's layers here have none).
  bool has0 = false, hasN = false;
  for (int i = first; i < last && i < static_cast<int>(c.compress_ratios.size()); ++i) (c.compress_ratios[i] == 0 ? has0 : hasN) = true;
  const int64_t freqs = c.max_position_embeddings * (c.qk_rope_head_dim / 2) * 8;
  const double factor = c.rope_scaling_factor > 0 ? c.rope_scaling_factor : 1.0;
  const int64_t rope_rows = c.rope_original_max_position_embeddings > 0
                                ? static_cast<int64_t>(static_cast<double>(c.rope_original_max_position_embeddings) * factor)
                                : c.max_position_embeddings;
  const int64_t cos_sin = rope_rows * c.qk_rope_head_dim * 4;
  const int keys = (has0 ? 1 : 0) + (hasN ? 1 : 0);
  add(fmt::format("RoPE tables built at init ({} x freqs_cis {} + cos_sin_cache {})", keys, human_bytes(freqs), human_bytes(cos_sin)),
      keys * (freqs + cos_sin), has0 ? 0 : freqs + cos_sin);
  // 4./5. Embedding: a full copy per rank under DP attention; the draft builds its own embedding
  //    and head (vocab-parallel shares, the embedding full under DP attention).
  const int64_t vpad = cdiv(c.vocab_size, 64) * 64, row = c.hidden_size * 2;
  const int64_t share = cdiv(vpad, tp) * row;
  if (first_stage && par.dp_attention)
    add("embedding replicated under DP attention (VocabParallelEmbedding enable_tp=False)", vpad * row - share, 0);
  if (c.num_nextn_predict_layers > 0) add("draft embedding + lm head", 0, (par.dp_attention ? vpad * row : share) + share);
  return x;
}

}  // namespace headroom::sglang
