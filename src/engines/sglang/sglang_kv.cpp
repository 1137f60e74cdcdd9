// SGLang's KV cell size per token per rank (research/sglang-memory.md §2.4-2.5), mirroring
// model_runner_kv_cache_mixin.py (v0.5) / pool_configurator.py (2026) and memory_pool.py:
//   MHA/GQA: max(1, kv_heads // attn_tp) * (head_dim + v_head_dim) * L * e
//   MLA:     (kv_lora_rank + qk_rope_head_dim) * L * e           (latent not split by TP)
//   DSA:     main_dim * L * e + (index_head_dim + index_head_dim/128*4) * L_indexer
//            main_dim = 656 for fp8_e4m3 (512 FP8 NoPE + 16 B scales + 128 B BF16 RoPE), else 576*2 B
//   FP4:     (cell // 2) + scales (n * hd * L * 2 * e) // 16
#include <algorithm>
#include <cmath>

#include "engines/sglang/sglang_rules.h"
#include "headroom/error.h"
#include "headroom/kv.h"
#include "headroom/layout.h"

namespace headroom {

namespace sglang {
// DeepSeek-V4 (DSV4PoolConfigurator in model_executor/pool_configurator.py @003fca80, defaults of
// environ.py: SGLANG_DSV4_COMPRESS_STATE_DTYPE float32, SGLANG_OPT_USE_ONLINE_COMPRESS off, HiSparse off;
// ring sizes from mem_cache/deepseek_v4_memory_pool.py get_compress_state_ring_size: c4 8 (16 with
// speculative decoding), c128 128 (256)). Layer counts run over the config's compress_ratios list as
// written (SGLang's num_layers_total = len(compress_ratios), which includes the MTP layer's 0 entry).
//   kv = qk_nope + 2*qk_rope + 8 (FP8 NoPE, BF16 RoPE, scales), idx = index_head_dim + index_head_dim/128*4
//   bytes_per_full_token = r*kv*L + kv*L_c4/4 + kv*L_c128/128 + idx*L_c4/4
//                          + r*(ring_c4/window)*(2*2*(nope+rope)*4 + 2*2*index_head_dim*4)*L_c4
//   x (L+1)/L with speculative decoding (one draft layer).
double dsv4_bytes_per_full_token(const ModelConfig& c, double swa_ratio, bool speculative, bool legacy_pool, bool wide_rings) {
  const double kv = static_cast<double>(c.qk_nope_head_dim + 2 * c.qk_rope_head_dim + 8);
  const double idx = static_cast<double>(c.index_head_dim + c.index_head_dim / 128 * 4);
  const double L = static_cast<double>(c.compress_ratios.size());
  double c4 = 0, c128 = 0;
  for (int r : c.compress_ratios) {
    c4 += r == 4;
    c128 += r == 128;
  }
  const double state = 2.0 * 2.0 * static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim) * 4.0;
  const double idx_state = 2.0 * 2.0 * static_cast<double>(c.index_head_dim) * 4.0;
  const double ring_c4 = speculative ? 16.0 : 8.0;
  const double window = static_cast<double>(c.sliding_window > 0 ? c.sliding_window : 128);
  // The c4 state ring doubles with a draft; the first ROCm image's legacy pools doubled it always.
  const double r4 = (legacy_pool && wide_rings) ? 16.0 : ring_c4;
  double b = swa_ratio * kv * L + kv * c4 / 4.0 + kv * c128 / 128.0 + idx * c4 / 4.0 + swa_ratio * (r4 / window) * (state + idx_state) * c4;
  if (legacy_pool) {
    // Builds before the request-scoped c128 state (see legacy_dsv4_pool): both compress-state pools
    // hang off the SWA pages, c4_state = swa // window x ring_c4 and c128_state = swa // window x
    // ring_c128 rows (2 x 2 x (nope+rope) x 4 B and 2 x (nope+rope) x 4 B each), the rings 8 / 128
    // (16 / 256 with a draft). Real logs:
    //  - DeepSeek-V4-Flash-Base, 8 x H20, main@2026-05-15 (xsgl-029): "bytes_per_full_token=15955.85"
    //    at 0.1 = 7,763.85 + 0.1 x (128/128) x 4,096 x 20;
    //  - DeepSeek-V4-Pro on MI355X, 0.5.13 (xsgl-036/037): c4_state = swa // 128 x 8, c128_state = swa;
    //  - the early ROCm image (DeepSeek-V4-Flash-FP8 on MI300X, 0.5.11.dev20260512, xsgl-027) used the
    //    wide rings without a draft: "bytes_per_full_token=176983.05" at 0.8 = 20,556.8 + 3,066 +
    //    91.25 + 693 + 21,504 + 131,072 here, "c4_state_pool_size=52928 c128_state_pool_size=846848"
    //    = 3,308 SWA pages x 16 / x 256 (wide_rings).
    const double state128 = 2.0 * static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim) * 4.0;
    const double r128 = (speculative || wide_rings) ? 256.0 : 128.0;
    b += swa_ratio * (r128 / window) * state128 * c128;
  }
  if (speculative && L > 0) b *= (L + 1.0) / L;
  return b;
}

// Fixed c128 compress state: req_slots x ring_c128 x 2*(nope+rope)*4 B x L_c128, req_slots =
// (--max-running-requests // dp, else 2048) + 1 (_estimate_hisparse_req_slots, no disaggregation).
int64_t dsv4_c128_state_fixed_bytes(const ModelConfig& c, bool speculative, int64_t max_running_requests, int dp) {
  int64_t c128 = 0;
  for (int r : c.compress_ratios) c128 += r == 128;
  if (c128 == 0) return 0;
  const int64_t reqs = max_running_requests > 0 ? std::max<int64_t>(1, max_running_requests / std::max(1, dp)) : 2048;
  const int64_t ring = speculative ? 256 : 128;
  const int64_t state = 2 * (c.qk_nope_head_dim + c.qk_rope_head_dim) * 4;
  return (reqs + 1) * ring * state * c128;
}
}  // namespace sglang

namespace {
int64_t kv_elem_bytes(const std::string& dt) {
  if (dt == "fp8_e4m3" || dt == "fp8_e5m2" || dt == "fp4_e2m1") return 1;
  return 2;
}
}  // namespace

KvPerToken sglang_kv_per_token(const ModelConfig& c, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank, int ssm_bytes) {
  KvPerToken k;
  k.kv_dtype = sglang::resolve_kv_dtype(c, std::string(kv_dtype), sm);
  if (c.family == "deepseek_v4") {
    // DeepSeek-V4: one latent head per layer, replicated on every rank (not split by TP); the
    // per-token figure is bytes_per_full_token at SGLang's DSV4 default --swa-full-tokens-ratio 0.1
    // (the plan recomputes it with the ratio in force and subtracts the fixed c128 state first).
    // The pools keep their own layout (FP8 NoPE + BF16 RoPE) whatever --kv-cache-dtype says.
    k.full_bytes = static_cast<int64_t>(std::llround(sglang::dsv4_bytes_per_full_token(c, 0.1, false, false, false)));
    auto [first, last] = pp_layer_range(static_cast<int>(c.num_layers), par.pp, pp_rank, EngineKind::SGLang);
    k.full_layers = last - first;
    return k;
  }
  const bool fp4 = k.kv_dtype == "fp4_e2m1";
  const bool fp8 = k.kv_dtype == "fp8_e4m3" || k.kv_dtype == "fp8_e5m2";
  const int64_t e = kv_elem_bytes(k.kv_dtype);
  auto [first, last] = pp_layer_range(static_cast<int>(c.num_layers), par.pp, pp_rank, EngineKind::SGLang);
  int64_t full = 0, swa = 0, linear = 0, indexer = 0;
  for (int i = first; i < last && i < static_cast<int>(c.layers.size()); ++i) {
    const LayerInfo& l = c.layers[static_cast<size_t>(i)];
    if (l.attn == AttnKind::Full) ++full;
    else if (l.attn == AttnKind::Sliding || l.attn == AttnKind::Chunked) ++swa;
    else if (l.attn == AttnKind::Linear) ++linear;
    if (l.indexer) ++indexer;
  }
  k.full_layers = full;
  k.swa_layers = swa;
  k.linear_layers = linear;
  if (c.mla) {
    const int64_t latent = c.kv_lora_rank + c.qk_rope_head_dim;
    const int64_t L = full + swa;
    if (c.has_indexer()) {
      int64_t main_dim = fp8 ? c.kv_lora_rank + c.kv_lora_rank / 128 * 4 + c.qk_rope_head_dim * 2 : latent * 2;
      k.full_bytes = main_dim * L + (c.index_head_dim + c.index_head_dim / 128 * 4) * indexer;
    } else if (fp4) {
      k.full_bytes = (latent * L * e) / 2 + (latent / 16) * L * e;
    } else {
      k.full_bytes = latent * L * e;
    }
    k.full_layers = L;
    k.swa_layers = 0;
    return k;
  }
  // Full layers take the model's KV heads / head_dim, SWA layers swa_num_key_value_heads /
  // swa_head_dim (model_runner_kv_cache_mixin.get_cell_size_per_token, is_hybrid_swa); the model
  // reader records a layer's own values where they differ (Gemma-4 global, MiMo-V2 sliding).
  const int attn_tp = std::max(1, par.attn_tp());
  auto cell = [&](const LayerInfo* l) {
    const int64_t n = std::max<int64_t>(1, (l && l->kv_heads > 0 ? l->kv_heads : c.num_kv_heads) / attn_tp);
    const int64_t hd = l && l->head_dim > 0 ? l->head_dim : c.head_dim;
    const int64_t vhd = l && l->head_dim > 0 ? l->head_dim : (c.v_head_dim > 0 ? c.v_head_dim : c.head_dim);
    if (fp4) return (n * (hd + vhd) * e) / 2 + (n * hd * 2 * e) / 16;
    return n * (hd + vhd) * e;
  };
  if (c.family == "nemotron_nas") {
    // Nemotron-NAS (DeciLMForCausalLM, srt/models/nemotron_nas.py): DeciModel has no start_layer /
    // end_layer, so the MHA pool holds num_hidden_layers buffers -- no_op-attention layers included --
    // each with ModelConfig.get_num_kv_heads(attn_tp) heads, the first attention block's count
    // (configs/model_config.py get_total_num_kv_heads "nemotron-nas" branch, PR #9067).
    k.full_layers = last - first;
    k.swa_layers = k.linear_layers = 0;
    k.full_bytes = cell(nullptr) * k.full_layers;
    return k;
  }
  k.full_bytes = 0;
  k.swa_bytes = 0;
  for (int i = first; i < last && i < static_cast<int>(c.layers.size()); ++i) {
    const LayerInfo& l = c.layers[static_cast<size_t>(i)];
    if (l.attn == AttnKind::Full) k.full_bytes += cell(&l);
    else if (l.attn == AttnKind::Sliding || l.attn == AttnKind::Chunked) k.swa_bytes += cell(&l);
  }
  if (linear > 0) {
    // Gated DeltaNet (Qwen3-Next/3.5) per request per layer: conv state (conv_dim/tp x
    // (kernel-1)) in the model dtype + SSM state (v_heads/tp x k_dim x v_dim) in mamba_ssm_dtype
    // (server_args --mamba-ssm-dtype, default float32; bfloat16 halves it); Mamba2 (Nemotron-H)
    // analogous. (mamba state pool)
    const int64_t tp = std::max(1, par.tp);
    int64_t conv = 0, ssm = 0;
    if (c.linear_num_value_heads > 0) {
      int64_t key_dim = c.linear_num_key_heads * c.linear_key_head_dim;
      int64_t value_dim = c.linear_num_value_heads * c.linear_value_head_dim;
      conv = (2 * key_dim + value_dim) / tp * std::max<int64_t>(0, c.linear_conv_kernel_dim - 1) * 2;
      ssm = c.linear_num_value_heads / tp * c.linear_key_head_dim * c.linear_value_head_dim * ssm_bytes;
    } else if (c.mamba_num_heads > 0) {
      int64_t d_inner = c.mamba_d_inner > 0 ? c.mamba_d_inner : c.mamba_num_heads * c.mamba_head_dim;
      int64_t conv_dim = d_inner + 2 * c.mamba_n_groups * c.mamba_state_size;
      conv = conv_dim / tp * std::max<int64_t>(0, c.mamba_conv_kernel - 1) * 2;
      ssm = c.mamba_num_heads / tp * c.mamba_head_dim * c.mamba_state_size * ssm_bytes;
    }
    k.state_bytes_per_request = (conv + ssm) * linear;
  }
  return k;
}

}  // namespace headroom
