// TensorRT-LLM KV arithmetic: bytes per token (tensorrt_llm/_torch/pyexecutor/resource_manager.py
// KVCacheManager.get_cache_size_per_token; C++ calculateCacheSizePerToken), the budget of
// KvCacheCreator (tensorrt_llm/_torch/pyexecutor/_util.py, NVIDIA/TensorRT-LLM@0004396) and
// blocks of tokens_per_block (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp).
#include <algorithm>
#include <cmath>

#include "engines/trtllm/trtllm_rules.h"

namespace headroom::trtllm {

std::pair<int, int> pp_layers(int num_layers, int pp, int pp_rank) {
  // tensorrt_llm/mapping.py pp_layers: torch.tensor_split-like even split, the first
  // (num_layers % pp) stages get one extra layer.
  int base = num_layers / pp, rem = num_layers % pp;
  int start = pp_rank * base + std::min(pp_rank, rem);
  return {start, start + base + (pp_rank < rem ? 1 : 0)};
}

int64_t bytes_per_token(const ModelConfig& c, const Settings& s, int pp_rank) {
  auto [first, last] = pp_layers(static_cast<int>(c.num_layers), s.pp, pp_rank);
  int tp = s.attention_dp ? 1 : s.tp;  // attention DP: every rank holds all KV heads of its requests
  int64_t heads = c.num_attention_heads > 0 ? c.num_attention_heads : 1;
  int64_t d = c.head_dim > 0 ? c.head_dim : (c.hidden_size > 0 ? c.hidden_size / heads : 0);
  double total = 0;
  for (int i = first; i < last; ++i) {
    const LayerInfo* li = i < static_cast<int>(c.layers.size()) ? &c.layers[i] : nullptr;
    if (li && (li->attn == AttnKind::Linear || li->attn == AttnKind::None)) continue;
    if (c.mla) {
      total += static_cast<double>(c.kv_lora_rank + c.qk_rope_head_dim) * s.kv_elem_bytes;  // kv_factor 1
      continue;
    }
    int64_t h = li && li->kv_heads > 0 ? li->kv_heads : (c.num_kv_heads > 0 ? c.num_kv_heads : heads);
    int64_t hd = li && li->head_dim > 0 ? li->head_dim : d;
    int64_t per_rank = std::max<int64_t>(1, h / tp);
    total += 2.0 * static_cast<double>(per_rank * hd) * s.kv_elem_bytes;
  }
  return static_cast<int64_t>(std::llround(total));
}

int64_t kv_budget(int64_t total, int64_t peak, double fraction, std::optional<int64_t> max_tokens, int64_t bpt,
                  int64_t max_gpu_total_bytes) {
  // kv_max = (total - peak) * fraction; then min with max_tokens * bytes/token and
  // max_gpu_total_bytes ("max_tokens=%d is provided. It limits max memory to ...").
  double kv = static_cast<double>(total - peak) * fraction;
  int64_t out = static_cast<int64_t>(kv);
  if (max_tokens) out = std::min(out, *max_tokens * bpt);
  if (max_gpu_total_bytes > 0) out = std::min(out, max_gpu_total_bytes);
  return out;
}

int64_t blocks_for(int64_t budget, int64_t bpt, int64_t tpb) {
  if (budget <= 0 || bpt <= 0 || tpb <= 0) return 0;
  // max_tokens = budget / bytes_per_token; blocks = ceil(max_tokens / tokens_per_block) in the
  // C++ manager, after the Python side rounded max_tokens down to whole blocks.
  int64_t tokens = budget / bpt;
  return tokens / tpb;
}

}  // namespace headroom::trtllm
