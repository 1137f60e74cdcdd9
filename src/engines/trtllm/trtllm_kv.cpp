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

int64_t sizing_bytes_per_token(const ModelConfig& c, const Settings& s, int pp_rank, int64_t exact) {
  if (c.family != "nemotron_nas" || c.mla) return exact;
  // Nemotron-NAS: NemotronNASModel sets config.num_key_value_heads to a per-layer list (0 for no-op
  // blocks); get_cache_size_per_token (_torch/pyexecutor/resource_manager.py KVCacheManager, _util.py)
  // takes its mean, head_dim * mean // tp_size (a float floor), times len(pp_layers(num_hidden_layers))
  // x kv_factor 2 x element bytes. max_tokens = budget / this; the pool then holds each real layer's
  // own heads (bytes_per_token), so the pool is a little larger than the budget.
  auto [first, last] = pp_layers(static_cast<int>(c.num_layers), s.pp, pp_rank);
  const int tp = s.attention_dp ? 1 : std::max(1, s.tp);
  double sum = 0;
  for (const auto& li : c.layers)
    if (li.attn == AttnKind::Full) sum += static_cast<double>(li.kv_heads > 0 ? li.kv_heads : c.num_kv_heads);
  const double mean = c.layers.empty() ? 0.0 : sum / static_cast<double>(c.layers.size());
  const int64_t hd = c.head_dim > 0 ? c.head_dim : c.hidden_size / std::max<int64_t>(1, c.num_attention_heads);
  const double per_layer = std::floor(static_cast<double>(hd) * mean / tp);
  const double b = per_layer * static_cast<double>(std::max(1, last - first)) * 2.0 * s.kv_elem_bytes;
  return std::max<int64_t>(1, static_cast<int64_t>(b));
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
  // KvCacheCreator.configure_kv_cache_capacity sets kv_cache_config.max_tokens =
  // tokens_for_budget(kv_max) (whole tokens, rounded down); the KVCacheManager then takes
  // blocks_in_primary_pool = math.ceil(max_tokens / tokens_per_block) after the all-reduce MIN
  // over ranks (tensorrt_llm/_torch/pyexecutor/resource_manager.py calculate_max_num_blocks,
  // NVIDIA/TensorRT-LLM 2025 and 2026 copies alike; the C++ manager rounds up too). So the
  // last block is partly paid for by the 10% slack. Real log (1.1.0rc3, gpt-oss-120b, DGX
  // Spark): "Both free_gpu_memory_fraction and max_tokens are set (to 0.8999999761581421 and
  // 86711 ...)" then "Allocated 5.95 GiB for max tokens in paged KV cache (86720)": 86,711
  // tokens -> ceil(86,711 / 32) = 2,710 blocks = 86,720 tokens (a floor would give 86,688).
  int64_t tokens = budget / bpt;
  return (tokens + tpb - 1) / tpb;
}

int64_t estimation_tokens(const Settings& s, int64_t free_now, int64_t bpt) {
  // KvCacheCreator._get_token_num_for_estimation (_util.py): the dummy context requests of the
  // profiling run (min(max_num_tokens, max_seq_len - 1) tokens each, together max_num_tokens)
  // each take ceil((len + 1) / tokens_per_block) blocks (one generated token).
  int64_t tpb = std::max<int64_t>(1, s.tokens_per_block);
  int64_t per = std::max<int64_t>(1, std::min(s.max_num_tokens, std::max<int64_t>(1, s.max_seq_len - 1)));
  int64_t blocks = 0;
  for (int64_t left = s.max_num_tokens; left > 0; left -= per) blocks += (std::min(per, left) + 1 + tpb - 1) / tpb;
  if (s.attention_dp && s.tp > 1) blocks = (blocks + s.tp - 1) / s.tp;  // ADP: each rank holds its share
  if (s.era.estimation_floor) {
    // 2026 source (NVIDIA/TensorRT-LLM _util.py _get_token_num_for_estimation, @0004396 and later
    // copies): at least one max_seq_len sequence plus the CUDA-graph warm-up batch
    // (ceil((max_seq_len + 1) / tpb) + min(max_batch_size, max CUDA-graph batch) - 1, the graph
    // batch 0 when graphs are off), and at least max_batch_size blocks. GUESS: that these terms
    // arrive with 1.3 - the 1.1.0rc3 log above and the 1.2.0rc2 log of tests/data/extra xtrt-011
    // allocated only the dummy request's 257 blocks (8,224 tokens; max_seq_len 131,072 and 9,193).
    // (Some 2025 copies also count one more generated token per request with the overlap
    // scheduler; with the default 8,192-token requests and 32-token blocks it changes nothing.)
    int64_t graph_bs = s.cuda_graphs ? std::min(s.max_batch_size, s.cuda_graph_max_batch_size) : 0;
    blocks = std::max(blocks, (s.max_seq_len + 1 + tpb - 1) / tpb + graph_bs - 1);
    blocks = std::max(blocks, s.max_batch_size);
  }
  int64_t tokens = blocks * tpb * std::max<int64_t>(1, s.max_beam_width);
  // ... capped by fraction x free memory now (rounded down to whole blocks) and the user's max_tokens.
  if (bpt > 0 && free_now > 0) {
    int64_t in_mem = static_cast<int64_t>(s.fraction * static_cast<double>(free_now)) / bpt / tpb * tpb;
    tokens = std::min(tokens, in_mem);
  }
  if (s.max_tokens) tokens = std::min(tokens, *s.max_tokens);
  return std::max<int64_t>(0, tokens);
}

std::vector<int64_t> cuda_graph_batch_sizes(const Settings& s) {
  std::vector<int64_t> out;
  if (!s.cuda_graphs || s.backend != "pytorch") return out;
  // tensorrt_llm/llmapi/llm_args.py CudaGraphConfig._generate_cuda_graph_batch_sizes (the copy
  // research §7.1 cites): padding -> [1, 2, 4] + multiples of 8 to 128; no padding (the default)
  // -> 1..31, 32, 64, 128; both add 2^8 .. 2^(ceil(log2 max) - 1), keep those <= max and append
  // max when it is missing. (Older copies use floor(log2 max); 2026 padding adds steps of 64
  // past 128: neither matters at the default max 128.)
  const int64_t mx = s.cuda_graph_max_batch_size > 0 ? s.cuda_graph_max_batch_size : 128;
  std::vector<int64_t> v;
  if (s.cuda_graph_padding) {
    v = {1, 2, 4};
    for (int64_t i = 1; i <= 16; ++i) v.push_back(i * 8);
  } else {
    for (int64_t i = 1; i < 32; ++i) v.push_back(i);
    v.insert(v.end(), {32, 64, 128});
  }
  int64_t p2 = 256;
  while (p2 < mx && p2 * 2 <= (int64_t{1} << 40)) {  // 2^i for 8 <= i < ceil(log2 mx)
    v.push_back(p2);
    p2 *= 2;
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::vector<int64_t> kept;
  for (int64_t b : v)
    if (b <= mx) kept.push_back(b);
  if (kept.empty() || kept.back() != mx) kept.push_back(mx);
  // PyTorchModelEngine captures only the sizes the executor's max_batch_size can reach (the
  // 1.1.0rc3 log: 19 padded sizes configured, "Creating CUDA graph instances for 11 batch sizes"
  // at max_batch_size 64).
  for (int64_t b : kept)
    if (b <= s.max_batch_size) out.push_back(b);
  return out;
}

}  // namespace headroom::trtllm
