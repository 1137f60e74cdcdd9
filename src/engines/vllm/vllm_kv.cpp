// vLLM's KV cache arithmetic: page size per layer (vllm/v1/kv_cache_interface.py), grouping
// of hybrid models and blocks -> tokens -> concurrency (vllm/v1/core/kv_cache_utils.py),
// the capacity check's estimated maximum model length, and kv.h's vllm_kv_per_token.
// Checked against vllm-project/vllm@bbf906a8 (2025) and the 2026 kv_cache_planning helpers.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <numeric>

#include "engines/vllm/vllm_kv.h"
#include "engines/vllm/vllm_kv_dsv4_legacy.h"
#include "engines/vllm/vllm_rule_table.h"
#include "engines/vllm/vllm_rules.h"
#include "engines/vllm/vllm_settings.h"
#include "headroom/error.h"
#include "headroom/kv.h"

namespace headroom::vllm {

namespace {
int64_t cdiv(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

const char* kCacheDtypes = "auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla, nvfp4, fp8_per_token_head, int8_per_token_head";
}  // namespace

KvDtype resolve_kv_dtype(const Era& era, const std::string& flag, DType model_dtype, const Quantization& q, bool mla) {
  KvDtype k;
  std::string f = flag.empty() ? "auto" : flag;
  auto model = [&] {
    k.name = model_dtype == DType::F16 ? "float16" : model_dtype == DType::F32 ? "float32" : "bfloat16";
    k.elem_bytes = model_dtype == DType::F32 ? 4 : 2;
  };
  if (f == "auto") {
    model();
    // A ModelOpt checkpoint with an FP8 KV scheme: fp8 cache at auto (docs/engines/vllm.md vllm.modelopt_kv_fp8_auto).
    if (has(Rule::ModeloptKvFp8Auto, era.version) && q.kv_cache_quant_hf_loaders() == "FP8") {
      k.name = "fp8_e4m3";
      k.elem_bytes = 1;
    }
    return k;
  }
  if (f == "bfloat16" || f == "float16" || f == "half") {
    k.name = f == "half" ? "float16" : f;
    k.elem_bytes = 2;
    return k;
  }
  if (f == "fp8" || f == "fp8_e4m3" || f == "fp8_e5m2" || f == "fp8_inc") {
    k.name = f;
    k.elem_bytes = 1;
    return k;
  }
  if (f == "fp8_ds_mla" && has(Rule::KvDtypeFp8DsMla, era.version)) {
    if (!mla) fail_input("vllm", "--kv-cache-dtype", "fp8_ds_mla is only supported for MLA models (DeepSeek-V3.2 sparse MLA)");
    k.name = f;
    k.elem_bytes = 1;
    k.ds_mla = true;
    return k;
  }
  if (f == "nvfp4" && has(Rule::KvDtypeNvfp4, era.version)) {
    k.name = f;
    k.elem_bytes = 0.5;
    k.nvfp4 = true;
    return k;
  }
  if ((f == "fp8_per_token_head" || f == "int8_per_token_head") && has(Rule::KvDtypePerTokenHead, era.version)) {
    k.name = f;
    k.elem_bytes = 1;
    k.per_token_head_scales = true;
    return k;
  }
  // argparse choices error (vllm/engine/arg_utils.py: --kv-cache-dtype choices=CacheDType).
  fail_input("vllm", "--kv-cache-dtype", fmt::format("argument --kv-cache-dtype: invalid choice: '{}' (choose from {})", f, kCacheDtypes));
}

std::pair<int, int> pp_indices(int num_layers, int pp, int pp_rank) {
  // vllm/distributed/utils.py get_pp_indices: layers per stage n // pp; the remainder goes one
  // layer each to stages pp-2, pp-3, ... (the last stage also computes logits).
  std::vector<int> parts(pp, num_layers / pp);
  int rem = num_layers % pp;
  for (int i = 0; i < rem; ++i) parts[(pp - 2 - i + pp * 4) % pp] += 1;
  int start = 0;
  for (int i = 0; i < pp_rank; ++i) start += parts[i];
  return {start, start + parts[pp_rank]};
}

namespace {
// DeepSeek-V4 (vllm/models/deepseek_v4: deepseek_v4_attention.py, deepseek_compressor.py,
// backends/mla/sparse_swa.py; checked against the 2026 sources of vLLM 0.24..0.29; v0.22's
// pages agree: vllm#44376's capacity check, tests/vllm_dsv4_legacy_test.cpp). Per layer i
// with compress_ratios[i] = r, in the order the layers register their caches:
//   swa_cache               SlidingWindowMLASpec block 64, window sliding_window (every layer)
//   self_attn (r > 1)       MLAAttentionSpec block = --block-size, compress_ratio r
//   compressor.state_cache  SlidingWindowMLASpec fp32 [2*coff*head_dim], block 4 (r=4) / 8 (r=128),
//                           window coff*r (coff = 2 for r = 4, else 1)
//   indexer.k_cache (r=4)   MLAAttentionSpec uint8 [index_head_dim + index_head_dim/128*4], ratio 4
//   indexer.compressor.state_cache (r=4)  fp32 [2*2*index_head_dim], block 4, window 8
// Latent caches in fp8_ds_mla store nope + 2*rope + nope/64 + 1 bytes per stored token (584 for
// head_dim 512, rope 64); every page is padded up to 576 B (FlashMLA alignment). Nothing is split
// by TP (one latent head). The MTP layer (speculative decoding) adds its own caches with the
// config's next compress_ratios entry.
std::vector<LayerSpec> dsv4_specs(const ModelConfig& c, const Parallel& par, const KvDtype& kv, int pp_rank, int64_t extra_layers) {
  // DeepseekV4MLAAttention: assert kv_cache_dtype.startswith("fp8") (then fp8 -> fp8_ds_mla).
  // Reported against --model (the model/dtype pair, as vLLM's model init asserts) so that
  // compare lists vLLM beside the engines that do start at their defaults.
  if (kv.name.rfind("fp8", 0) != 0)
    fail_input("vllm", "--model",
               fmt::format("DeepSeek-V4 needs an fp8 KV cache on vLLM (AssertionError: DeepseekV4 only supports fp8 kv-cache format for now, got {}); "
                           "pass --kv-cache-dtype fp8",
                           kv.name == "bfloat16" || kv.name == "float16" || kv.name == "float32" ? "auto" : kv.name));
  const int64_t hd = c.head_dim > 0 ? c.head_dim : 512;
  const int64_t rope = c.qk_rope_head_dim > 0 ? c.qk_rope_head_dim : 64;
  const int64_t latent = (hd - rope) + 2 * rope + (hd - rope) / 64 + 1;  // 584 B for 512/64
  const int64_t ihd = c.index_head_dim > 0 ? c.index_head_dim : 128;
  const int64_t window = c.sliding_window > 0 ? c.sliding_window : 128;
  auto ratio = [&](int64_t i) -> int64_t {
    if (i < static_cast<int64_t>(c.layers.size()) && i < c.num_layers) return c.layers[i].compress_ratio;
    return i < static_cast<int64_t>(c.compress_ratios.size()) ? c.compress_ratios[i] : 0;
  };
  auto spec = [](SpecKind k, int64_t bpt, int64_t compress, int64_t own_block, int64_t win) {
    LayerSpec s;
    s.kind = k;
    s.dsv4 = true;
    s.bytes_per_token = bpt;
    s.compress = compress;
    s.own_block = own_block;
    s.window = win;
    s.align = 576;
    return s;
  };
  std::vector<LayerSpec> out;
  auto add_layer = [&](int64_t r) {
    out.push_back(spec(SpecKind::Sliding, latent, 1, 64, window));
    if (r <= 1) return;
    int64_t coff = r == 4 ? 2 : 1;
    out.push_back(spec(SpecKind::Mla, latent, r, 0, 0));
    out.push_back(spec(SpecKind::Sliding, 2 * coff * hd * 4, 1, r == 4 ? 4 : 8, coff * r));
    if (r == 4) {
      out.push_back(spec(SpecKind::Mla, ihd + ihd / 128 * 4, 4, 0, 0));
      out.push_back(spec(SpecKind::Sliding, 2 * 2 * ihd * 4, 1, 4, 8));
    }
  };
  auto [first, last] = pp_indices(static_cast<int>(c.num_layers), std::max(1, par.pp), pp_rank);
  for (int i = first; i < last; ++i) add_layer(ratio(i));
  if (pp_rank == std::max(1, par.pp) - 1)
    for (int64_t j = 0; j < extra_layers; ++j) add_layer(ratio(c.num_layers + j));
  return out;
}
}  // namespace

std::vector<LayerSpec> layer_specs(const ModelConfig& c, const Parallel& par, const KvDtype& kv, int pp_rank,
                                   int64_t extra_full_layers, const MambaCache& mamba) {
  if (c.family == "deepseek_v4" || c.model_type == "deepseek_v4") return dsv4_specs(c, par, kv, pp_rank, extra_full_layers);

  int tp = std::max(1, par.tp);
  int n = static_cast<int>(c.num_layers);
  auto [first, last] = pp_indices(n, std::max(1, par.pp), pp_rank);
  int64_t heads = c.num_attention_heads > 0 ? c.num_attention_heads : 1;
  int64_t default_d = c.head_dim > 0 ? c.head_dim : (c.hidden_size > 0 ? c.hidden_size / heads : 0);
  auto attn_bpt = [&](int64_t kv_heads_total, int64_t dk, int64_t dv) -> int64_t {
    // ModelConfig.get_num_kv_heads: max(1, total // tp) (replicated when fewer heads than ranks).
    int64_t h = std::max<int64_t>(1, kv_heads_total / tp);
    if (kv.nvfp4) return h * ((dk / 2 + dk / 16) + (dv / 2 + dv / 16));  // fp4 data + fp8 scale per 16
    int64_t b = static_cast<int64_t>(std::llround(static_cast<double>(h * (dk + dv)) * kv.elem_bytes));
    if (kv.per_token_head_scales) b += 2 * h * 4;  // fp32 scale per token per head for K and V
    return b;
  };
  std::vector<LayerSpec> out;
  auto full_spec = [&](const LayerInfo* li) {
    LayerSpec s;
    if (c.mla) {
      // MLAAttentionSpec: one latent "head" (kv_lora_rank + qk_rope_head_dim), no factor 2,
      // not split by TP; fp8_ds_mla: 656 B per token (512 fp8 + 4 fp32 scales + 64 bf16 rope).
      s.kind = SpecKind::Mla;
      s.bytes_per_token = kv.ds_mla ? 656
                                    : static_cast<int64_t>(std::llround(static_cast<double>(c.kv_lora_rank + c.qk_rope_head_dim) * kv.elem_bytes));
    } else {
      int64_t h = li && li->kv_heads > 0 ? li->kv_heads : (c.num_kv_heads > 0 ? c.num_kv_heads : heads);
      int64_t dk = li && li->head_dim > 0 ? li->head_dim : default_d;
      int64_t dv = c.v_head_dim > 0 && !(li && li->head_dim > 0) ? c.v_head_dim : dk;
      s.kind = SpecKind::Full;
      s.bytes_per_token = attn_bpt(h, dk, dv);
      // Gemma-4 (model_executor/models/gemma4.py Gemma4Attention, kv_cache_page_size_padded): with a
      // per-token-head dtype a 512-wide global head stores 2 x 512 + 8 = 1032 B per token, padded to
      // 1040 = 2 x 520 (the 256-wide sliding head's 2 x 256 + 8) so the pages divide evenly.
      if (c.family == "gemma4" && kv.per_token_head_scales && dk == 512 && dv == 512)
        s.bytes_per_token = std::max<int64_t>(1, h / tp) * 1040;
    }
    return s;
  };
  for (int i = first; i < last; ++i) {
    const LayerInfo* li = i < static_cast<int>(c.layers.size()) ? &c.layers[i] : nullptr;
    AttnKind k = li ? li->attn : AttnKind::Full;
    LayerSpec s;
    switch (k) {
      case AttnKind::None: continue;
      case AttnKind::Full: s = full_spec(li); break;
      case AttnKind::Sliding:
      case AttnKind::Chunked: {
        s = full_spec(li);
        s.kind = k == AttnKind::Sliding ? SpecKind::Sliding : SpecKind::Chunked;
        s.window = k == AttnKind::Sliding ? c.sliding_window : c.attention_chunk_size;
        if (s.window <= 0) s.kind = SpecKind::Full;
        break;
      }
      case AttnKind::Linear: {
        // MambaSpec: conv state + recurrent state per request (model_executor/layers/mamba/
        // mamba_utils.py MambaStateShapeCalculator). Conv state in the model dtype; the SSM
        // state in mamba_ssm_dtype when the config names one, else the model dtype.
        s.kind = SpecKind::Mamba;
        s.mamba_mode = mamba.mode;
        s.spec_blocks = mamba.spec_tokens;
        s.mamba_chunk = mamba.mode != MambaCache::All ? 0 : mamba.block_tokens > 0 ? mamba.block_tokens : c.mamba_chunk_size;
        // --mamba-cache-dtype sets both unless the SSM one is named: vllm/config/cache.py ("if
        // 'auto', the data type for the ssm state will be determined by mamba_cache_dtype"), the
        // model's own mamba_ssm_dtype applied to an "auto" --mamba-ssm-cache-dtype
        // (model_executor/models/config.py), mamba_utils.py MambaStateDtypeCalculator.
        const int64_t model_b = c.dtype == DType::F32 ? 4 : 2;
        int64_t conv_b = mamba.conv_bytes > 0 ? mamba.conv_bytes : model_b;
        int64_t ssm_b = mamba.ssm_bytes > 0 ? mamba.ssm_bytes : c.mamba_ssm_dtype_given ? dtype_size(c.mamba_ssm_dtype) : conv_b;
        if (c.linear_num_value_heads > 0) {
          // Gated DeltaNet (Qwen3-Next / Qwen3.5): conv over q, k, v channels; state Hv x Dk x Dv.
          // gated_delta_net_state_shape: the conv state keeps kernel - 1 + num_spec columns, so
          // speculative tokens widen it (vllm-087: MTP 2 takes Qwen3.5-4B from block 528 to 544).
          int64_t conv_dim = 2 * c.linear_num_key_heads * c.linear_key_head_dim + c.linear_num_value_heads * c.linear_value_head_dim;
          int64_t kern = c.linear_conv_kernel_dim > 0 ? c.linear_conv_kernel_dim : 4;
          s.mamba_bytes = (kern - 1 + mamba.spec_tokens) * (conv_dim / tp) * conv_b +
                          (c.linear_num_value_heads / tp) * c.linear_key_head_dim * c.linear_value_head_dim * ssm_b;
        } else {
          // Mamba2 (Nemotron-H, Granite-4): conv over d_inner + 2 * groups * state; state heads x head_dim x state.
          int64_t conv_dim = c.mamba_d_inner + 2 * c.mamba_n_groups * c.mamba_state_size;
          int64_t kern = c.mamba_conv_kernel > 0 ? c.mamba_conv_kernel : 4;
          s.mamba_bytes = (kern - 1) * (conv_dim / tp) * conv_b +
                          (c.mamba_num_heads / tp) * c.mamba_head_dim * c.mamba_state_size * ssm_b;
        }
        break;
      }
    }
    out.push_back(s);
    // DSA sparse attention (DeepSeek-V3.2, GLM-5): a layer with its own indexer also caches the
    // indexer keys, DeepseekV32IndexerCache's MLAAttentionSpec of uint8 [index_head_dim +
    // index_head_dim / 128 x 4] (FP8 keys + fp32 scales per 128). GLM-5.x layers whose
    // indexer_types entry is "shared" reuse an earlier layer's indexer and cache nothing.
    if (li && li->indexer && c.index_head_dim > 0 && c.mla) {
      LayerSpec ix;
      ix.kind = SpecKind::Mla;
      ix.bytes_per_token = c.index_head_dim + c.index_head_dim / 128 * 4;
      out.push_back(ix);
    }
  }
  // Draft / MTP layers (speculative decoding) get full-attention KV on the last stage.
  if (pp_rank == std::max(1, par.pp) - 1)
    for (int64_t i = 0; i < extra_full_layers; ++i) out.push_back(full_spec(nullptr));
  return out;
}

namespace {
// max_memory_usage_bytes of one layer of a group at max_model_len L. `in_flight` is the tokens
// scheduled but not yet settled that a sliding / chunked-local request keeps beyond its window:
// max_num_batched_tokens before 0.26; VllmConfig.max_in_flight_tokens = max_concurrent_batches x
// max_num_batched_tokens from 0.26 (kv_cache_interface.py SlidingWindowSpec /
// ChunkedLocalAttentionSpec.max_admission_blocks_per_request, PR #47728).
int64_t group_max_memory(const KvLayout::Group& g, int64_t page, int64_t L, int64_t in_flight, int64_t cp = 1) {
  switch (g.kind) {
    case SpecKind::Full:
    case SpecKind::Mla: return cdiv(cdiv(L, std::max<int64_t>(1, cp)), g.block_size) * page;
    case SpecKind::Sliding: return (cdiv(std::min(g.window - 1 + in_flight, L), g.block_size) + 1) * page;
    case SpecKind::Chunked: return cdiv(std::min(g.window + in_flight, L), g.block_size) * page;
    case SpecKind::Mamba:
      // MambaSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py): "all" one state per
      // block of the context, "align" two states, "none" one, each + num_speculative_blocks.
      if (g.mamba_mode == MambaCache::All) return (cdiv(L, g.block_size) + g.spec_blocks) * page;
      return ((g.mamba_mode == MambaCache::Align ? 2 : 1) + g.spec_blocks) * page;
  }
  return 0;
}
}  // namespace

namespace {
int64_t round_up(int64_t a, int64_t m) { return m <= 0 ? a : cdiv(a, m) * m; }

// _approximate_gcd: the d in [lower_bound, max(values)] with the least total upward padding
// sum((d - x % d) % d); ties prefer the larger d.
int64_t approximate_gcd(const std::vector<int64_t>& values, int64_t lower_bound) {
  int64_t max_v = *std::max_element(values.begin(), values.end());
  int64_t best_d = std::max<int64_t>(1, lower_bound), best_pad = -1;
  if (best_d > max_v) return best_d;
  for (int64_t d = best_d; d <= max_v; ++d) {
    int64_t pad = 0;
    for (int64_t x : values) pad += (d - x % d) % d;
    if (best_pad < 0 || pad < best_pad || (pad == best_pad && d > best_d)) {
      best_pad = pad;
      best_d = d;
    }
  }
  return best_d;
}

// DeepSeek-V4 grouping and packed layout (vllm/v1/core/kv_cache_utils.py, 2026):
// group_and_unify_kv_cache_specs puts every MLAAttentionSpec (compressed latent + indexer keys)
// in one UniformTypeKVCacheSpecs and the SlidingWindowMLASpec layers in one per (block_size,
// sliding_window); _get_kv_cache_groups_uniform_groups pads each sliding page up to the
// smallest MLA page >= it, rounds the "layer tuple" counts (most common page-size count per
// group) to one num_layer_tuples = _approximate_gcd(counts, lower_bound=the MLA group's) and
// splits each sliding group into cdiv(n, num_layer_tuples) groups (tuples i::n_groups);
// _get_kv_cache_config_packed then lays one block out as every page-size bucket side by side:
// bytes per block = sum over page sizes ps of ps x (the most layers of size ps in one group).
// With pipeline parallelism vLLM groups the whole model's layers and projects the groups on each
// stage (_project_kv_cache_groups_to_worker); here each stage's layers are grouped on their own
// (a GUESS for pp > 1: the bucket counts can differ from the projected ones).
KvLayout dsv4_layout(const std::vector<LayerSpec>& specs, int64_t block_size, bool block_size_given, const Era& era) {
  // The packed per-block layout came with "contiguous per-block KV allocations" (#44577, 0.24.0
  // release notes); V4 arrived in 0.20.0 (#40860). 0.20-0.23 grouped the layers the same way and
  // sized the pool's block otherwise: vllm_kv_dsv4_legacy.cpp, applied at the end.
  KvLayout l;
  if (!block_size_given) {
    // DeepseekSparseSWABackend.get_preferred_block_size -> 256 when --block-size is not given.
    block_size = 256;
    l.notes.push_back("Setting kv cache block size to 256 for DEEPSEEK_SPARSE_SWA backend.");
  }
  l.block_size = block_size;
  l.uniform = false;
  l.hybrid = true;
  l.packed = true;
  l.tensors = 1;
  auto page_of = [&](const LayerSpec& s) {
    int64_t blk = s.own_block > 0 ? s.own_block : block_size;
    if (s.compress > 1 && blk % s.compress != 0)
      fail_input("vllm", "--block-size", fmt::format("Block size {} must be divisible by compress ratio {}.", blk, s.compress));
    return round_up(blk / std::max<int64_t>(1, s.compress) * s.bytes_per_token, s.align);
  };
  // MLA group and sliding buckets keyed by (block, window), first-seen order.
  std::map<int64_t, int64_t> mla_counts;  // page -> layers
  struct Swa { int64_t block, window; std::vector<int64_t> pages; };
  std::vector<Swa> swa;
  for (const auto& s : specs) {
    int64_t p = page_of(s);
    if (s.kind == SpecKind::Mla) {
      mla_counts[p]++;
      continue;
    }
    auto it = std::find_if(swa.begin(), swa.end(), [&](const Swa& w) { return w.block == s.own_block && w.window == s.window; });
    if (it == swa.end()) {
      swa.push_back({s.own_block, s.window, {}});
      it = swa.end() - 1;
    }
    it->pages.push_back(p);
  }
  if (mla_counts.empty()) fail_input("vllm", "kv cache", "AssertionError: DeepSeek-V4 stage without a compressed MLA layer (assert len(mla_specs) > 0)");
  auto most_common = [](const std::map<int64_t, int64_t>& m) {
    int64_t best = 0;
    for (const auto& [p, n] : m) best = std::max(best, n);
    return best;
  };
  int64_t mla_sum = 0, max_mla_page = 0;
  for (const auto& [p, n] : mla_counts) {
    mla_sum += p * n;
    l.v4_tuple_bytes += p;
    max_mla_page = std::max(max_mla_page, p);
  }
  std::vector<int64_t> tuples{most_common(mla_counts)};
  std::vector<std::map<int64_t, int64_t>> swa_counts;  // candidate page -> layers
  for (const auto& w : swa) {
    std::map<int64_t, int64_t> raw;
    for (int64_t p : w.pages) raw[p]++;
    tuples.push_back(most_common(raw));
    std::map<int64_t, int64_t> cand;
    for (const auto& [p, n] : raw) {
      if (p > max_mla_page) fail_input("vllm", "kv cache", "AssertionError: a sliding-window page is larger than every MLA page (assert max(sm_page_sizes) <= max(all_page_sizes))");
      int64_t c = 0;
      for (const auto& [mp, mn] : mla_counts)
        if (mp >= p) {
          c = mp;
          break;
        }
      cand[c] += n;
    }
    int64_t n0 = cand.begin()->second;
    for (const auto& [p, n] : cand)
      if (n != n0) fail_input("vllm", "kv cache", "AssertionError: sliding-window layers per page size differ (assert len(set(len(layers) ...)) == 1)");
    swa_counts.push_back(cand);
  }
  int64_t nt = approximate_gcd(tuples, tuples[0]);
  l.v4.push_back({true, block_size, 0, mla_sum, 0, tuples[0]});
  for (const auto& [p, n] : mla_counts) l.v4[0].layers += n;
  std::map<int64_t, int64_t> bucket;  // page -> most layers of that page in one group
  for (const auto& [p, n] : mla_counts) bucket[p] = std::max(bucket[p], n);
  for (size_t k = 0; k < swa.size(); ++k) {
    const auto& cand = swa_counts[k];
    int64_t n = cand.begin()->second;
    int64_t ng = cdiv(n, nt);
    for (int64_t i = 0; i < ng; ++i) {
      int64_t cnt = (n - i + ng - 1) / ng;  // len(range(i, n, ng))
      KvLayout::V4Group g{false, swa[k].block, swa[k].window, 0, 0, cnt};
      for (const auto& [p, m] : cand) {
        g.page_sum += p * cnt;
        g.layers += cnt;
        bucket[p] = std::max(bucket[p], cnt);
      }
      l.v4.push_back(g);
    }
  }
  int64_t per_block = 0;
  for (const auto& [p, n] : bucket) per_block += p * n;
  l.page_bytes = per_block;
  l.num_groups = static_cast<int64_t>(l.v4.size());
  for (const auto& g : l.v4)
    l.groups.push_back({g.full ? SpecKind::Mla : SpecKind::Sliding, g.block, g.window, g.layers, g.layers});
  return has(Rule::Dsv4Packed, era.version) ? l : dsv4_legacy_layout(std::move(l), era);
}

// UniformTypeKVCacheSpecs.max_memory_usage_pages of one V4 group at max_model_len L.
int64_t v4_pages(const KvLayout::V4Group& g, int64_t L, int64_t mnbt) {
  if (g.full) return cdiv(L, g.block);  // FullAttentionSpec: cdiv(max_model_len, block_size)
  return cdiv(std::min(g.window - 1 + mnbt, L), g.block) + 1;  // SlidingWindowSpec
}
}  // namespace

KvLayout kv_layout(const std::vector<LayerSpec>& specs, int64_t block_size, bool block_size_given, const Era& era) {
  KvLayout l;
  if (std::any_of(specs.begin(), specs.end(), [](const LayerSpec& s) { return s.dsv4; })) return dsv4_layout(specs, block_size, block_size_given, era);
  l.block_size = block_size;
  // max_concurrent_batches with vLLM's defaults (async scheduling on, one pipeline stage); the
  // deployment's own value comes from in_flight_batches() (kv_sizing, plan).
  l.in_flight_batches = era.swa_in_flight ? 2 : 1;
  // The one-request check over the padded groups (2026) or the layer specs (2025): vllm.needed_counts_padding.
  l.needed_counts_padding = has(Rule::NeededCountsPadding, era.version);
  if (specs.empty()) {
    l.attention_free = true;
    l.tensors = 0;
    return l;
  }
  // Bucket by spec (kind + sizes); keep first-seen order.
  std::vector<std::pair<LayerSpec, int64_t>> buckets;
  for (const auto& s : specs) {
    auto it = std::find_if(buckets.begin(), buckets.end(), [&](const auto& b) { return b.first == s; });
    if (it == buckets.end()) buckets.push_back({s, 1});
    else it->second++;
  }
  bool has_mamba = std::any_of(specs.begin(), specs.end(), [](const LayerSpec& s) { return s.kind == SpecKind::Mamba; });
  int64_t attn_bpt = 0;
  int64_t mamba_page = 0, mamba_chunk = 0;
  for (const auto& [s, n] : buckets) {
    if (s.kind == SpecKind::Mamba) mamba_page = std::max(mamba_page, s.mamba_bytes), mamba_chunk = std::max(mamba_chunk, s.mamba_chunk);
    else attn_bpt = std::max(attn_bpt, s.bytes_per_token);
  }
  if (has_mamba && attn_bpt > 0) {
    // model_executor/models/config.py HybridAttentionMambaModelConfig: raise the attention
    // block size so one attention page >= the mamba page (kernel alignment 16), then pad the
    // mamba page to exactly attn_block * attn_bytes_per_token.
    // Alignment 16 (a given --block-size from PR #37467: vllm.hybrid_align_block_size); mode "all": lcm(chunk, alignment).
    int64_t align = has(Rule::HybridAlignBlockSize, era.version) && block_size_given ? std::max<int64_t>(16, block_size) : 16;
    int64_t need = align * cdiv(mamba_page, align * attn_bpt);
    bool all_mode = std::any_of(specs.begin(), specs.end(), [](const LayerSpec& s) { return s.kind == SpecKind::Mamba && s.mamba_mode == MambaCache::All; });
    if (all_mode && mamba_chunk > 0) {
      int64_t chunk = std::lcm(mamba_chunk, align);
      need = chunk * cdiv(cdiv(mamba_page, attn_bpt), chunk);
    }
    if (!block_size_given || block_size < need) {
      if (need != block_size)
        l.notes.push_back(fmt::format("Setting attention block size to {} tokens to ensure that attention page size is >= mamba page size.", need));
      l.block_size = need;
    }
    int64_t attn_page = l.block_size * attn_bpt;
    if (attn_page != mamba_page && mamba_page > 0)
      l.notes.push_back(fmt::format("Padding mamba page size by {:.2f}% to ensure that mamba page size and attention page size are exactly equal.",
                                    100.0 * static_cast<double>(attn_page - mamba_page) / static_cast<double>(mamba_page)));
  }
  // MLA layers of different sizes (the latent and the DSA indexer keys): UniformTypeKVCacheSpecs
  // (kv_cache_utils.py, 0.11+): one group, every layer its own page at the common block size, and
  // num_blocks = available // the sum of the pages -- kept here as one "tensor" whose page is that
  // sum. Real log: GLM-5.2-NVFP4 TP4 on GB200, 0.26.0 (xvllm-067): 50.62 GiB // (78 x 576 + 21 x
  // 132 B) per token = 1,139,456 tokens, as logged.
  if (buckets.size() > 1 && std::all_of(buckets.begin(), buckets.end(), [](const auto& b) { return b.first.kind == SpecKind::Mla; })) {
    int64_t sum = 0;
    std::vector<std::string> parts;
    for (const auto& [s, n] : buckets) {
      sum += l.block_size * s.bytes_per_token * n;
      parts.push_back(fmt::format("{} x {} B", n, s.bytes_per_token));
    }
    l.composition = fmt::format("per token {} in one UniformTypeKVCacheSpecs group", fmt::join(parts, " + "));
    l.uniform = true;
    l.page_bytes = sum;
    l.tensors = 1;
    l.num_groups = 1;
    l.groups.push_back({SpecKind::Mla, l.block_size, 0, 1, 1});
    return l;
  }
  // Per-bucket page sizes at the (possibly raised) block size.
  std::vector<int64_t> page(buckets.size()), blk(buckets.size(), l.block_size);
  for (size_t i = 0; i < buckets.size(); ++i)
    page[i] = buckets[i].first.kind == SpecKind::Mamba ? 0 : l.block_size * buckets[i].first.bytes_per_token;
  int64_t max_page = *std::max_element(page.begin(), page.end());
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].first.kind == SpecKind::Mamba) { page[i] = max_page; continue; }
    if (page[i] < max_page) {
      // unify_kv_cache_spec_page_size: the smaller layers' block size times max/page.
      if (max_page % page[i] != 0)
        fail_input("vllm", "kv cache", "NotImplementedError: The page size of the layer is not divisible by the maximum page size. Cannot unify by adjusting block_size.");
      blk[i] = l.block_size * (max_page / page[i]);
      page[i] = max_page;
    }
  }
  l.page_bytes = max_page;
  if (buckets.size() == 1) {
    const auto& [s, n] = buckets[0];
    l.uniform = true;
    l.tensors = n;
    l.num_groups = 1;
    l.groups.push_back({s.kind, blk[0], s.window, n, n, s.mamba_mode, s.spec_blocks});
    return l;
  }
  // All of one kind with different sizes: UniformTypeKVCacheSpecs (one group, one tensor per
  // layer; num_blocks = avail // sum(page)). Approximated with the layers padded to the
  // largest page, which equals it when the pages agree (INFERRED for older builds).
  bool same_kind = std::all_of(buckets.begin(), buckets.end(), [&](const auto& b) { return b.first.kind == buckets[0].first.kind; });
  l.hybrid = !same_kind;
  int64_t min_count = INT64_MAX, max_count = 0;
  for (const auto& [s, n] : buckets) {
    min_count = std::min(min_count, n);
    max_count = std::max(max_count, n);
  }
  if (same_kind) {
    l.uniform = false;
    l.tensors = static_cast<int64_t>(specs.size());
    l.num_groups = 1;
    l.groups.push_back({buckets[0].first.kind, *std::min_element(blk.begin(), blk.end()), buckets[0].first.window, l.tensors, l.tensors});
    return l;
  }
  // Hybrid: _get_kv_cache_groups_uniform_page_size, group_size = min layer count per type (vllm.hybrid_group_size_max).
  int64_t group_size = min_count;
  if (has(Rule::HybridGroupSizeMax, era.version) && static_cast<double>(max_count) < 1.5 * static_cast<double>(min_count)) group_size = max_count;
  l.uniform = false;
  l.tensors = group_size;
  int64_t groups = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    int64_t n = buckets[i].second;
    int64_t g = cdiv(n, group_size);
    l.padding_layers += g * group_size - n;
    for (int64_t j = 0; j < g; ++j)
      l.groups.push_back({buckets[i].first.kind, blk[i], buckets[i].first.window, group_size, std::min(group_size, n - j * group_size),
                          buckets[i].first.mamba_mode, buckets[i].first.spec_blocks});
    groups += g;
  }
  l.num_groups = groups;
  return l;
}

int64_t num_blocks(const KvLayout& l, int64_t avail_bytes) {
  if (l.attention_free) return 1;
  if (avail_bytes <= 0 || l.page_bytes <= 0 || l.tensors <= 0) return 0;
  return (avail_bytes / l.page_bytes) / l.tensors;
}

int64_t needed_bytes(const KvLayout& l, int64_t L, int64_t mnbt) {
  // Sum over layers of max_memory_usage_bytes; groups are padded to group_size layers (2026
  // _check_enough_kv_cache_memory counts the padding; 2025 summed real layers only).
  if (l.packed) {
    // _max_memory_usage_bytes_from_groups, all groups UniformTypeKVCacheSpecs (DeepSeek-V4):
    // sum over groups of num_layer_tuples x pages x layer_tuple_bytes, num_layer_tuples the
    // largest group's tuple count, layer_tuple_bytes the sum of the MLA group's page sizes.
    int64_t tuples = 0;
    for (const auto& g : l.v4) tuples = std::max(tuples, g.tuples);
    int64_t total = 0;
    for (const auto& g : l.v4) total += tuples * v4_pages(g, L, mnbt) * l.v4_tuple_bytes;
    return total;
  }
  int64_t total = 0;
  for (const auto& g : l.groups)
    total += (l.needed_counts_padding ? g.layers : g.real_layers) * group_max_memory(g, l.page_bytes, L, l.in_flight_batches * mnbt, l.cp);
  return total;
}

int64_t estimate_max_model_len(const KvLayout& l, int64_t avail, int64_t L, int64_t mnbt) {
  int64_t lo = 1, hi = L, best = 0;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (needed_bytes(l, mid, mnbt) <= avail) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best;
}

double max_concurrency(const KvLayout& l, int64_t blocks, int64_t L, int64_t mnbt) {
  if (l.groups.empty() || l.page_bytes <= 0) return 0;
  if (l.packed) {
    // get_max_concurrency_for_kv_cache_config over UniformTypeKVCacheSpecs groups: per request
    // sum_g pages_g x page_sum_g (times the layers per group, which cancels), in blocks of the
    // first (MLA) group's page sum -- not the packed block the pool is counted in.
    int64_t per_req = 0;
    for (const auto& g : l.v4) per_req += v4_pages(g, L, mnbt) * g.page_sum;
    int64_t bpr = cdiv(per_req, l.v4[0].page_sum);
    return bpr > 0 ? static_cast<double>(blocks) / static_cast<double>(bpr) : 0.0;
  }
  // get_max_concurrency_for_kv_cache_config: per-request bytes over all groups (each group's
  // spec, times the layers per group), in blocks of page * layers-per-group.
  int64_t n_lpg = l.tensors;
  const int64_t in_flight = l.in_flight_batches * mnbt;
  int64_t per_req = 0;
  for (const auto& g : l.groups) per_req += n_lpg * group_max_memory(g, l.page_bytes, L, in_flight, l.cp);
  if (l.uniform) per_req = n_lpg * group_max_memory(l.groups[0], l.page_bytes, L, in_flight, l.cp);
  int64_t blocks_per_req = cdiv(per_req, l.page_bytes * n_lpg);
  if (blocks_per_req <= 0) return 0;
  return static_cast<double>(blocks) / static_cast<double>(blocks_per_req);
}

int64_t kv_tokens(const Era& era, const KvLayout& l, int64_t blocks, int64_t L, int64_t mnbt) {
  if (l.groups.empty()) return 0;
  if (era.tokens_from_concurrency)
    return static_cast<int64_t>(max_concurrency(l, blocks, L, mnbt) * static_cast<double>(L));
  // 2025: num_blocks // len(kv_cache_groups) * min_block_size.
  int64_t min_b = INT64_MAX;
  for (const auto& g : l.groups)
    if (g.kind != SpecKind::Mamba) min_b = std::min(min_b, g.block_size);
  if (min_b == INT64_MAX) min_b = l.block_size;
  return blocks / l.num_groups * min_b * l.cp;
}

int64_t draft_model_kv_layers(const ModelConfig& target, const ModelConfig& draft, const Parallel& par, const KvDtype& kv,
                              std::string& why) {
  // vllm/v1/spec_decode/draft_model.py: the drafter is built in the same vllm_config, so its
  // Attention layers register KV cache specs beside the target's; layers with the same spec share
  // the target's full-attention group (one page per token per layer). Real log: Qwen3-8B-FP8 with a
  // Qwen3-0.6B draft model on an L4, 0.29.0: 6.12 GiB = 25,072 tokens = 256 KiB per token = 36 + 28
  // layers x 4 KiB (tests/data/extra/vllm.jsonl xvllm-063).
  Parallel one_stage = par;
  one_stage.pp = 1;
  const std::vector<LayerSpec> t = layer_specs(target, one_stage, kv, 0, 0, MambaCache{});
  const std::vector<LayerSpec> dr = layer_specs(draft, one_stage, kv, 0, 0, MambaCache{});
  const auto full = std::find_if(t.begin(), t.end(), [](const LayerSpec& s) { return s.kind == SpecKind::Full; });
  if (full == t.end() || dr.empty()) {
    why = "the target has no full-attention layer to share a page with";
    return 0;
  }
  for (const LayerSpec& s : dr)
    if (s.kind != SpecKind::Full || s.bytes_per_token != full->bytes_per_token) {
      why = fmt::format("its layers' KV page ({} B per token) differs from the target's ({} B)", s.bytes_per_token, full->bytes_per_token);
      return 0;
    }
  return static_cast<int64_t>(dr.size());
}

int64_t draft_kv_layers(const ModelConfig& c, const std::string& spec_method) {
  // MTP drafters (deepseek_mtp / qwen3_next_mtp / "mtp") register their attention layers in the
  // same vllm_config, so the KV cache config gets num_nextn_predict_layers more full-attention
  // layers (at least one); other drafters (EAGLE, draft models, DFlash) are not modelled here.
  bool mtp = spec_method == "mtp" || spec_method == "deepseek_mtp" || spec_method == "qwen3_next_mtp";
  return mtp ? std::max<int64_t>(1, c.num_nextn_predict_layers) : 0;
}

MambaCache mamba_cache_for(const Deployment& d, const Settings& s) {
  MambaCache m;
  const ModelConfig& c = d.model->config;
  bool has_mamba = std::any_of(c.layers.begin(), c.layers.end(), [](const LayerInfo& l) { return l.attn == AttnKind::Linear; });
  if (!has_mamba) return m;
  // MambaSpec.num_speculative_blocks = speculative_config.num_speculative_tokens (any method).
  if (!s.spec_method.empty()) m.spec_tokens = s.num_speculative_tokens;
  m.block_tokens = s.mamba_block_size;
  // CacheConfig.mamba_cache_dtype / mamba_ssm_cache_dtype: MambaDType = Literal["auto",
  // "float32", "float16", "bfloat16"] (vllm/config/cache.py; older builds offered fewer).
  for (const char* flag : {"--mamba-cache-dtype", "--mamba-ssm-cache-dtype"}) {
    const std::string* v = d.flag(flag);
    if (!v || *v == "auto") continue;
    const int b = *v == "float32" ? 4 : (*v == "float16" || *v == "bfloat16") ? 2 : 0;
    if (b == 0) fail_input("vllm serve", flag, fmt::format("argument {}: invalid choice: '{}' (choose from auto, float32, float16, bfloat16)", flag, *v));
    (std::string_view(flag) == "--mamba-cache-dtype" ? m.conv_bytes : m.ssm_bytes) = b;
  }
  auto on = [&](const char* flag) {
    const std::string* v = d.flag(flag);
    return v && *v != "false" && *v != "False" && *v != "0";
  };
  if (const std::string* v = d.flag("--mamba-cache-mode")) {
    if (*v == "none") m.mode = MambaCache::None;
    else if (*v == "align") m.mode = MambaCache::Align;
    else if (*v == "all") m.mode = MambaCache::All;
    else fail_input("vllm serve", "--mamba-cache-mode", fmt::format("argument --mamba-cache-mode: invalid choice: '{}' (choose from none, all, align)", *v));
    return m;
  }
  // Prefix caching for hybrid models: opt-in until PR #50991 (vllm.hybrid_prefix_caching_default).
  bool prefix = has(Rule::HybridPrefixCachingDefault, s.era.version) ? !on("--no-enable-prefix-caching") : on("--enable-prefix-caching") && !on("--no-enable-prefix-caching");
  if (!prefix) return m;
  // Before the flip: "all" for SupportsMambaPrefixCaching (Mamba2), "align" for GDN and speculation (PR #40454).
  bool gdn = c.linear_num_value_heads > 0;
  m.mode = has(Rule::HybridPrefixCachingDefault, s.era.version) || gdn || m.spec_tokens > 0 ? MambaCache::Align : MambaCache::All;
  return m;
}

int64_t in_flight_batches(const Deployment& d, const Settings& s) {
  if (!s.era.swa_in_flight) return 1;
  // vllm/config/vllm.py check_and_set_default_async_scheduling (0.26+): async scheduling is on
  // unless switched off, or left unset with a speculative method outside EAGLE / MTP / ngram_gpu /
  // DSpark (draft_model, ngram, suffix, medusa turn it off); passed explicitly with one of those,
  // vLLM refuses to start. Pooling runners (off by default) are not planned here.
  auto on = [&](const char* flag) {
    const std::string* v = d.flag(flag);
    return v && *v != "false" && *v != "False" && *v != "0";
  };
  const std::string& m = s.spec_method;
  const bool m_ok = m.empty() || m == "eagle" || m == "eagle3" || m == "ngram_gpu" || m == "dspark" ||
                    (m.size() >= 3 && m.compare(m.size() - 3, 3, "mtp") == 0);
  bool async = m_ok;
  if (on("--no-async-scheduling")) async = false;
  else if (on("--async-scheduling")) {
    if (!m_ok)
      fail_input("vllm serve", "--async-scheduling",
                 "Currently, async scheduling is only supported with EAGLE/MTP/Draft Model/NGram GPU/DSpark kind of speculative decoding");
    async = true;
  }
  // VllmConfig.max_concurrent_batches: PP needs pp batches; async scheduling two on one stage
  // (the V1 model runner keeps pp with PP; the opt-in V2 runner's pp + 1 is not modelled).
  const int64_t pp = std::max(1, d.par.pp);
  return async && pp <= 1 ? 2 : pp;
}

KvLayout stage_kv_layout(const Deployment& d, const Settings& s, int pp_rank) {
  ModelConfig c = d.model->config;
  if (s.disable_sliding_window)  // ModelConfig sets hf_text_config.sliding_window = None
    for (auto& li : c.layers)
      if (li.attn == AttnKind::Sliding) li.attn = AttnKind::Full;
  KvLayout l = kv_layout(layer_specs(c, d.par, s.kv, pp_rank, draft_kv_layers(c, s.spec_method) + s.draft_layers, mamba_cache_for(d, s)), s.block_size,
                         s.block_size_given, s.era);
  if (!l.packed) l.in_flight_batches = in_flight_batches(d, s);  // 0.26+ sliding admission
  if (!l.packed) l.cp = s.dcp;
  return l;
}

KvSizing kv_sizing(const Deployment& d) {
  Settings s = resolve_settings(d);
  KvSizing k;
  k.era = s.era;
  k.max_model_len = s.max_model_len;
  k.max_model_len_auto = s.max_model_len_auto;
  k.max_num_batched_tokens = s.max_num_batched_tokens;
  k.num_gpu_blocks_override = s.num_gpu_blocks_override;
  const int pp = std::max(1, d.par.pp);
  for (int p = 0; p < pp; ++p) k.stages.push_back(stage_kv_layout(d, s, p));
  const MambaCache mc = mamba_cache_for(d, s);  // for the summary
  const KvLayout& l = k.stages.front();
  k.summary = l.attention_free ? std::string("attention-free")
                               : fmt::format("{} KV, block {}, page {} B, {} tensor(s), {} group(s){}", s.kv.name, l.block_size, commas(l.page_bytes),
                                             l.tensors, l.num_groups, l.packed ? " (packed)" : l.hybrid ? " (hybrid)" : "");
  if (!l.composition.empty()) k.summary += " (" + l.composition + ")";
  if (l.in_flight_batches > 1 && std::any_of(l.groups.begin(), l.groups.end(), [](const KvLayout::Group& g) {
        return g.kind == SpecKind::Sliding || g.kind == SpecKind::Chunked;
      }))
    k.summary += fmt::format(", window + {} x max_num_batched_tokens in flight", l.in_flight_batches);
  if (std::any_of(l.groups.begin(), l.groups.end(), [](const KvLayout::Group& g) { return g.kind == SpecKind::Mamba; }))
    k.summary += fmt::format(", mamba cache {}{}", mc.mode == MambaCache::All ? "all" : mc.mode == MambaCache::Align ? "align" : "none",
                             mc.spec_tokens > 0 ? fmt::format(" + {} spec blocks", mc.spec_tokens) : "");
  return k;
}

int64_t kv_tokens_for_memory(const KvSizing& k, int64_t avail) {
  // vllm/v1/core/kv_cache_utils.py get_kv_cache_configs: every worker's num_blocks from its own
  // available memory (get_num_blocks: avail // page_size // num_layers_per_group), the min over
  // workers kept; the tokens are logged from that config (_report_kv_cache_config).
  int64_t L = k.max_model_len;
  if (k.max_model_len_auto)
    for (const auto& l : k.stages) L = std::min(L, estimate_max_model_len(l, avail, k.max_model_len, k.max_num_batched_tokens));
  int64_t blocks = INT64_MAX;
  for (const auto& l : k.stages) blocks = std::min(blocks, num_blocks(l, avail));
  if (blocks == INT64_MAX || L <= 0) return 0;
  return kv_tokens(k.era, k.stages.front(), blocks, L, k.max_num_batched_tokens);
}

}  // namespace headroom::vllm

namespace headroom {

KvPerToken vllm_kv_per_token(const ModelConfig& c, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank) {
  vllm::Era era = vllm::era_for_version("");
  // DeepSeek-V4 runs only an fp8 cache (vLLM asserts otherwise): the per-token view shows it.
  bool v4 = c.family == "deepseek_v4" || c.model_type == "deepseek_v4";
  vllm::KvDtype kv = vllm::resolve_kv_dtype(era, v4 && (kv_dtype.empty() || kv_dtype == "auto") ? std::string("fp8") : std::string(kv_dtype),
                                            c.dtype, c.quant, c.mla);
  KvPerToken out;
  out.kv_dtype = v4 ? "fp8_ds_mla" : kv.name;
  for (const auto& s : vllm::layer_specs(c, par, kv, pp_rank)) {
    if (s.dsv4) {
      // Raw layout per token (before vLLM's grouping and 576 B page padding): compressed latent
      // and indexer keys per compressed token, the sliding caches per token of their window;
      // compressor states (a ring of 4 / 8 slots per request) counted per request.
      if (s.kind == vllm::SpecKind::Mla) {
        out.full_bytes += s.bytes_per_token / std::max<int64_t>(1, s.compress);
        out.full_layers++;
      } else if (s.own_block == 64) {
        out.swa_bytes += s.bytes_per_token;
        out.swa_layers++;
      } else {
        out.state_bytes_per_request += s.bytes_per_token * s.window;
      }
      continue;
    }
    switch (s.kind) {
      case vllm::SpecKind::Full:
      case vllm::SpecKind::Mla: out.full_bytes += s.bytes_per_token; out.full_layers++; break;
      case vllm::SpecKind::Sliding:
      case vllm::SpecKind::Chunked: out.swa_bytes += s.bytes_per_token; out.swa_layers++; break;
      case vllm::SpecKind::Mamba: out.state_bytes_per_request += s.mamba_bytes; out.linear_layers++; break;
    }
  }
  return out;
}

}  // namespace headroom
