// vLLM's KV cache arithmetic: page size per layer (vllm/v1/kv_cache_interface.py), grouping
// of hybrid models and blocks -> tokens -> concurrency (vllm/v1/core/kv_cache_utils.py),
// the capacity check's estimated maximum model length, and kv.h's vllm_kv_per_token.
// Checked against vllm-project/vllm@bbf906a8 (2025) and the 2026 kv_cache_planning helpers.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "engines/vllm/vllm_rules.h"
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
    // ModelOpt checkpoints that quantize the KV cache (hf_quant_config kv_cache_quant_algo FP8):
    // vLLM loads the k/v scales and, since the 2025 quant-config plumbing, runs an fp8 cache
    // when the dtype is left at auto (INFERRED from logs; older builds kept the model dtype).
    if (era.version >= 1100 && q.kv_cache_quant == "FP8") {
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
  if (f == "fp8_ds_mla" && era.version >= 1100) {
    if (!mla) fail_input("vllm", "--kv-cache-dtype", "fp8_ds_mla is only supported for MLA models (DeepSeek-V3.2 sparse MLA)");
    k.name = f;
    k.elem_bytes = 1;
    k.ds_mla = true;
    return k;
  }
  if (f == "nvfp4" && era.version >= 2000) {
    k.name = f;
    k.elem_bytes = 0.5;
    k.nvfp4 = true;
    return k;
  }
  if ((f == "fp8_per_token_head" || f == "int8_per_token_head") && era.version >= 2400) {
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

std::vector<LayerSpec> layer_specs(const ModelConfig& c, const Parallel& par, const KvDtype& kv, int pp_rank,
                                   int64_t extra_full_layers) {
  // DeepSeek-V4 registers several compressed / sliding-window MLA spec groups (DeepseekV4SWACache,
  // compressor state caches, indexer caches with compress_ratio): not modelled here yet.
  if (c.family == "deepseek_v4")
    fail_input(c.hf_id.empty() ? c.source : c.hf_id, "architectures",
               "DeepSeek-V4 KV cache (compressed CSA/HCA + sliding-window groups) is not modelled for vLLM yet");

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
        int64_t conv_b = c.dtype == DType::F32 ? 4 : 2;
        int64_t ssm_b = c.mamba_ssm_dtype_given ? dtype_size(c.mamba_ssm_dtype) : conv_b;
        if (c.linear_num_value_heads > 0) {
          // Gated DeltaNet (Qwen3-Next / Qwen3.5): conv over q, k, v channels; state Hv x Dk x Dv.
          int64_t conv_dim = 2 * c.linear_num_key_heads * c.linear_key_head_dim + c.linear_num_value_heads * c.linear_value_head_dim;
          int64_t kern = c.linear_conv_kernel_dim > 0 ? c.linear_conv_kernel_dim : 4;
          s.mamba_bytes = (kern - 1) * (conv_dim / tp) * conv_b +
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
  }
  // Draft / MTP layers (speculative decoding) get full-attention KV on the last stage.
  if (pp_rank == std::max(1, par.pp) - 1)
    for (int64_t i = 0; i < extra_full_layers; ++i) out.push_back(full_spec(nullptr));
  return out;
}

namespace {
// max_memory_usage_bytes of one layer of a group at max_model_len L.
int64_t group_max_memory(const KvLayout::Group& g, int64_t page, int64_t L, int64_t mnbt) {
  switch (g.kind) {
    case SpecKind::Full:
    case SpecKind::Mla: return cdiv(L, g.block_size) * page;
    case SpecKind::Sliding: return (cdiv(std::min(g.window - 1 + mnbt, L), g.block_size) + 1) * page;
    case SpecKind::Chunked: return cdiv(std::min(g.window + mnbt, L), g.block_size) * page;
    case SpecKind::Mamba: return page;  // mamba_cache_mode "none": one state block per request
  }
  return 0;
}
}  // namespace

KvLayout kv_layout(const std::vector<LayerSpec>& specs, int64_t block_size, bool block_size_given, const Era& era) {
  KvLayout l;
  l.block_size = block_size;
  // 2025 (bbf906a8) check_enough_kv_cache_memory summed max_memory_usage_bytes over the layer
  // specs; the 2026 planner (_max_memory_usage_bytes_from_groups, "correctly accounts for
  // padding in hybrid models") sums over the padded groups. Boundary INFERRED: the 2026 code
  // (same bracket as the group_size rule below).
  l.needed_counts_padding = era.version >= 1400;
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
  int64_t mamba_page = 0;
  for (const auto& [s, n] : buckets) {
    if (s.kind == SpecKind::Mamba) mamba_page = std::max(mamba_page, s.mamba_bytes);
    else attn_bpt = std::max(attn_bpt, s.bytes_per_token);
  }
  if (has_mamba && attn_bpt > 0) {
    // model_executor/models/config.py HybridAttentionMambaModelConfig: raise the attention
    // block size so one attention page >= the mamba page (kernel alignment 16), then pad the
    // mamba page to exactly attn_block * attn_bytes_per_token.
    int64_t need = 16 * cdiv(mamba_page, 16 * attn_bpt);
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
    l.groups.push_back({s.kind, blk[0], s.window, n, n});
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
  // Hybrid: _get_kv_cache_groups_uniform_page_size. group_size = min layer count per type;
  // 2026 code uses the max count when max < 1.5 * min (less padding).
  int64_t group_size = min_count;
  if (era.version >= 1400 && static_cast<double>(max_count) < 1.5 * static_cast<double>(min_count)) group_size = max_count;
  l.uniform = false;
  l.tensors = group_size;
  int64_t groups = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    int64_t n = buckets[i].second;
    int64_t g = cdiv(n, group_size);
    l.padding_layers += g * group_size - n;
    for (int64_t j = 0; j < g; ++j)
      l.groups.push_back({buckets[i].first.kind, blk[i], buckets[i].first.window, group_size, std::min(group_size, n - j * group_size)});
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
  int64_t total = 0;
  for (const auto& g : l.groups)
    total += (l.needed_counts_padding ? g.layers : g.real_layers) * group_max_memory(g, l.page_bytes, L, mnbt);
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
  // get_max_concurrency_for_kv_cache_config: per-request bytes over all groups (each group's
  // spec, times the layers per group), in blocks of page * layers-per-group.
  int64_t n_lpg = l.tensors;
  int64_t per_req = 0;
  for (const auto& g : l.groups) per_req += n_lpg * group_max_memory(g, l.page_bytes, L, mnbt);
  if (l.uniform) per_req = n_lpg * group_max_memory(l.groups[0], l.page_bytes, L, mnbt);
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
  return blocks / l.num_groups * min_b;
}

}  // namespace headroom::vllm

namespace headroom {

KvPerToken vllm_kv_per_token(const ModelConfig& c, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank) {
  vllm::Era era = vllm::era_for_version("");
  vllm::KvDtype kv = vllm::resolve_kv_dtype(era, std::string(kv_dtype), c.dtype, c.quant, c.mla);
  KvPerToken out;
  out.kv_dtype = kv.name;
  for (const auto& s : vllm::layer_specs(c, par, kv, pp_rank)) {
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
