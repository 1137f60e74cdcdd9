// Per-rank weight layout under SGLang's and vLLM's sharding rules: which bytes of each tensor
// a (tp_rank, pp_rank) holds. Rules and the engine files they mirror:
//  - Column/row parallel linears split the output/input dim by TP (vllm/model_executor/layers/linear.py
//    ColumnParallelLinear/RowParallelLinear; sglang/srt/layers/linear.py): bytes / tp.
//  - QKVParallelLinear: when num_kv_heads < tp each rank holds one KV head (num_kv_head_replicas =
//    tp / num_kv_heads), else num_kv_heads / tp heads (same file, QKVParallelLinear.__init__).
//  - MLA q_a_proj / kv_a_proj_with_mqa are ReplicatedLinear (vllm/model_executor/models/deepseek_v2.py,
//    sglang/srt/models/deepseek_v2.py); q_b_proj / kv_b_proj column, o_proj row parallel.
//  - DSA indexer wq_b / wk / weights_proj are ReplicatedLinear in both engines' Indexer modules.
//  - Vocab-parallel embedding and lm_head: vocab padded to a multiple of 64 (DEFAULT_VOCAB_PADDING_SIZE,
//    pad_vocab_size in vocab_parallel_embedding.py of both engines), then split evenly over TP.
//    SGLang with --enable-dp-attention builds embed_tokens with enable_tp=False (replicated); SGLang's
//    Gemma-3 / Gemma-4 embed_tokens is a plain nn.Embedding (replicated at any TP).
//  - Experts: EP ranks own contiguous expert ranges, base = E / ep plus one for the first E % ep
//    ranks (vllm/model_executor/layers/fused_moe/layer.py determine_expert_map); inside each expert
//    the intermediate dim is split by moe_tp = tp / ep (sglang/srt/layers/moe/fused_moe_triton/layer.py).
//  - DP attention (SGLang): attention weights split by attn_tp = tp / dp.
//  - Norms, routers, biases of 1 element, per-tensor scales: replicated.
//  - Pipeline stages: get_pp_indices (vllm/distributed/utils.py; sglang/srt/distributed/utils.py
//    carries the same function): num_layers // pp per stage, the remainder added one each to the
//    stages before the last, counting backwards; embedding on the first stage, final norm and
//    lm_head on the last.
//  - RoPE cos/sin tables (buffers both engines build at init): engines/rope_tables.cpp.
#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "headroom/error.h"
#include "engines/rope_tables.h"
#include "headroom/layout.h"

namespace headroom {

std::string_view tensor_role_component(TensorRole r) {
  switch (r) {
    case TensorRole::Embedding: return "embedding";
    case TensorRole::LmHead: return "lm_head";
    case TensorRole::Norm: return "norms";
    case TensorRole::AttnQ:
    case TensorRole::AttnKV:
    case TensorRole::AttnO:
    case TensorRole::AttnLowRank: return "attention";
    case TensorRole::Indexer: return "indexer";
    case TensorRole::LinearAttn: return "linear_attention";
    case TensorRole::MlpColumn:
    case TensorRole::MlpRow: return "mlp";
    case TensorRole::ExpertColumn:
    case TensorRole::ExpertRow: return "experts";
    case TensorRole::Router: return "router";
    case TensorRole::Mtp: return "mtp";
    case TensorRole::Vision: return "vision";
    case TensorRole::Other: return "other";
  }
  return "other";
}
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t numel(const TensorInfo& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

// bytes / parts, rounded up to whole elements.
int64_t split(const TensorInfo& t, int64_t parts) {
  if (parts <= 1 || numel(t) <= 1) return t.bytes;
  int64_t el = std::max<int64_t>(1, t.bytes / std::max<int64_t>(1, numel(t)));
  return ceil_div(numel(t), parts) * el;
}

std::string_view component(const TensorInfo& t) { return tensor_role_component(t.role); }

struct Ctx {
  const ModelConfig& c;
  EngineKind engine;
  Parallel par;
  int tp_rank;
};

int64_t vocab_share(const Ctx& x, const TensorInfo& t, int parts) {
  if (t.shape.empty() || t.shape[0] <= 0) return t.bytes;
  int64_t rows = t.shape[0];
  int64_t row_bytes = t.bytes / rows;
  int64_t padded = ceil_div(rows, 64) * 64;
  return ceil_div(padded, parts) * row_bytes;
}

// Experts this rank owns under EP: [first, first + count).
std::pair<int64_t, int64_t> local_experts(const Ctx& x) {
  const int64_t E = x.c.num_experts;
  const int ep = std::max(1, x.par.ep);
  const int moe_tp = std::max(1, x.par.tp / ep);
  const int64_t ep_rank = ep > x.par.tp ? x.tp_rank : x.tp_rank / moe_tp;
  const int64_t base = E / ep, rem = E % ep;
  const int64_t count = base + (ep_rank < rem ? 1 : 0);
  const int64_t first = ep_rank * base + std::min<int64_t>(ep_rank, rem);
  return {first, count};
}

int64_t share(const Ctx& x, const TensorInfo& t) {
  const int tp = std::max(1, x.par.tp);
  const int attn_tp = std::max(1, x.engine == EngineKind::SGLang ? x.par.attn_tp() : x.par.tp);
  const int ep = std::max(1, x.par.ep);
  const int moe_tp = std::max(1, tp / ep);
  const bool vocab_like = t.role == TensorRole::Embedding || t.role == TensorRole::LmHead ||
                          (t.role == TensorRole::Mtp && (t.name.find("embed_tokens") != std::string::npos ||
                                                         t.name.find("shared_head.head") != std::string::npos));
  if (vocab_like) {
    // SGLang's Gemma-3 / Gemma-4 token embedding is a plain nn.Embedding (srt/models/gemma3_causal.py
    // Gemma3TextScaledWordEmbedding, reused as gemma4_causal.py Gemma4TextScaledWordEmbedding), not a
    // VocabParallelEmbedding: every TP rank holds all of it (and, tied, it is the lm_head too).
    const bool sglang_gemma_embed = x.engine == EngineKind::SGLang && (x.c.family == "gemma3" || x.c.family == "gemma4");
    bool replicated = x.engine == EngineKind::SGLang && (x.par.dp_attention || sglang_gemma_embed) &&
                      t.role != TensorRole::LmHead && t.name.find("embed_tokens") != std::string::npos;
    return vocab_share(x, t, replicated ? 1 : tp);
  }
  switch (t.role) {
    case TensorRole::Norm:
    case TensorRole::Router:
    case TensorRole::AttnLowRank:
    case TensorRole::Indexer:
    case TensorRole::Mtp:
    case TensorRole::Other: return t.bytes;
    case TensorRole::AttnQ:
    case TensorRole::AttnO: {
      if (t.name.find("qkv_proj") != std::string::npos && numel(t) > 1) {
        // Fused QKV (Phi-3): q part split, kv part follows the KV-head replication rule.
        const int64_t q = x.c.num_attention_heads, kv = x.c.num_kv_heads;
        const int64_t kv_local = kv >= attn_tp ? kv / attn_tp : 1;
        const double frac = (static_cast<double>(q) / attn_tp + 2.0 * kv_local) / static_cast<double>(q + 2 * kv);
        return static_cast<int64_t>(static_cast<double>(t.bytes) * frac + 0.5);
      }
      return split(t, attn_tp);
    }
    case TensorRole::AttnKV: {
      if (numel(t) <= 1) return t.bytes;
      int64_t kv = x.c.num_kv_heads;
      if (t.layer >= 0 && t.layer < static_cast<int>(x.c.layers.size()) && x.c.layers[t.layer].kv_heads > 0) kv = x.c.layers[t.layer].kv_heads;
      if (kv >= attn_tp) return split(t, attn_tp);
      return ceil_div(t.bytes, std::max<int64_t>(1, kv));  // one KV head per rank, replicated tp/kv times
    }
    case TensorRole::LinearAttn:
      if (t.name.find("linear_attn.norm.") != std::string::npos) return t.bytes;  // per-head-dim norm, replicated
      return split(t, tp);
    case TensorRole::MlpColumn:
    case TensorRole::MlpRow: return split(t, tp);
    case TensorRole::ExpertColumn:
    case TensorRole::ExpertRow: {
      auto [first, count] = local_experts(x);
      if (t.expert >= 0) {
        if (t.expert < first || t.expert >= first + count) return 0;
        return split(t, moe_tp);
      }
      // Experts fused into one tensor with the expert dimension first.
      if (!t.shape.empty() && t.shape[0] == x.c.num_experts && x.c.num_experts > 0) {
        int64_t per_expert = t.bytes / x.c.num_experts;
        TensorInfo local = t;
        local.shape[0] = count;
        local.bytes = per_expert * count;
        return split(local, moe_tp);
      }
      return split(t, tp);
    }
    case TensorRole::Vision:
      // vLLM's Gemma-4 vision tower is transformers' own module (AutoModel.from_config in
      // model_executor/models/gemma4_mm.py) whose nn.Linear layers recursive_replace_linear swaps for
      // ReplicatedLinear (transformers/utils.py replace_linear_class, default style "replicate"):
      // every TP rank holds all of it.
      if (x.engine == EngineKind::VLLM && x.c.vision.kind == "gemma4") return t.bytes;
      // Vision blocks' attention/MLP are column/row parallel (vLLM Qwen3_VisionBlock); the rest replicated.
      if ((t.name.find(".attn.") != std::string::npos || t.name.find(".mlp.") != std::string::npos) && t.shape.size() >= 2)
        return split(t, tp);
      return t.bytes;
    default: return t.bytes;
  }
}

}  // namespace

std::pair<int, int> pp_layer_range(int num_layers, int pp, int pp_rank, EngineKind engine) {
  if (pp < 1) fail_input("--pp", std::to_string(pp), "must be at least 1");
  if (pp > num_layers) fail_input("--pp", std::to_string(pp), fmt::format("exceeds the model's {} layers", num_layers));
  if (pp_rank < 0 || pp_rank >= pp) fail_input("--pp", std::to_string(pp_rank), "pipeline rank out of range");
  (void)engine;  // SGLang and vLLM share get_pp_indices
  std::vector<int> parts(static_cast<size_t>(pp), num_layers / pp);
  int rem = num_layers % pp;
  for (int i = 2; i < rem + 2; ++i) parts[static_cast<size_t>(pp - i)] += 1;
  int start = 0;
  for (int i = 0; i < pp_rank; ++i) start += parts[static_cast<size_t>(i)];
  return {start, start + parts[static_cast<size_t>(pp_rank)]};
}

std::vector<RankWeights> weights_per_rank(const Model& model, EngineKind engine, const Parallel& par) {
  const auto& c = model.config;
  if (par.tp < 1) fail_input("--tp", std::to_string(par.tp), "must be at least 1");
  if (par.ep < 1) fail_input("--ep", std::to_string(par.ep), "must be at least 1");
  if (par.dp < 1) fail_input("--dp", std::to_string(par.dp), "must be at least 1");
  if (par.tp > 4096 || par.pp > 4096 || par.ep > 65536) fail_input("--tp", std::to_string(par.tp), "parallel sizes above 4096 are not supported");
  if (engine == EngineKind::SGLang && par.ep > par.tp)
    fail_input("--ep", std::to_string(par.ep), fmt::format("SGLang's --ep-size must not exceed --tp ({})", par.tp));
  if (par.ep <= par.tp && par.tp % par.ep != 0)
    fail_input("--ep", std::to_string(par.ep), fmt::format("must divide --tp {}", par.tp));
  if (par.dp_attention && (par.dp < 1 || par.tp % par.dp != 0))
    fail_input("--dp", std::to_string(par.dp), fmt::format("must divide --tp {} with --enable-dp-attention", par.tp));
  if (c.num_experts > 0 && par.ep > c.num_experts)
    fail_input("--ep", std::to_string(par.ep), fmt::format("exceeds the model's {} experts", c.num_experts));
  const int L = static_cast<int>(c.num_layers);
  std::vector<RankWeights> out;
  for (int pr = 0; pr < par.pp; ++pr) {
    auto [first, last] = pp_layer_range(L, par.pp, pr, engine);
    const bool first_stage = pr == 0, last_stage = pr == par.pp - 1;
    for (int tr = 0; tr < par.tp; ++tr) {
      Ctx x{c, engine, par, tr};
      RankWeights rw;
      rw.rank = pr * par.tp + tr;
      rw.tp_rank = tr;
      rw.pp_rank = pr;
      std::map<std::string, int64_t> comp;
      bool has_lm_head = false;
      for (const auto& t : model.tensors) {
        bool mtp = t.layer >= L || t.role == TensorRole::Mtp;
        bool here;
        if (mtp) here = true;
        else if (t.layer >= 0) here = t.layer >= first && t.layer < last;
        else if (t.role == TensorRole::Embedding || t.role == TensorRole::Vision) here = first_stage;
        else if (t.role == TensorRole::LmHead) here = last_stage;
        else here = last_stage;  // final norm and anything else outside the layers
        if (!here) continue;
        int64_t b = share(x, t);
        // Gemma-4 attention_k_eq_v: the checkpoint has no v_proj on full-attention layers, but both
        // engines' QKVParallelLinear still allocates the V slot and loads k_proj into it (vLLM
        // model_executor/models/gemma4.py _weight_iterator duplicates k_proj as v_proj; SGLang
        // srt/models/gemma4_causal.py load_weights should_dup_k_to_v loads it into the "v" shard too).
        if ((engine == EngineKind::VLLM || engine == EngineKind::SGLang) && c.attention_k_eq_v && t.role == TensorRole::AttnKV && t.layer >= 0 &&
            t.layer < L && c.layers[t.layer].attn == AttnKind::Full && t.name.find("self_attn.k_proj") != std::string::npos)
          b *= 2;
        if (mtp) {
          rw.mtp_bytes += b;
          continue;
        }
        has_lm_head |= t.role == TensorRole::LmHead;
        rw.bytes += b;
        if (t.dtype == DType::F8_E4M3 || t.dtype == DType::F8_E5M2) rw.fp8_bytes += b;
        if (t.layer >= 0) rw.layer_bytes += b;
        comp[std::string(component(t))] += b;
      }
      // Tied embeddings with PP: the last stage builds its own lm_head and loads the embedding into it.
      if (c.tie_word_embeddings && par.pp > 1 && last_stage && !first_stage && !has_lm_head) {
        for (const auto& t : model.tensors)
          if (t.role == TensorRole::Embedding) {
            TensorInfo head = t;
            head.role = TensorRole::LmHead;
            int64_t b = share(x, head);
            rw.bytes += b;
            comp["lm_head"] += b;
          }
      }
      // RoPE cos/sin tables: buffers built at init, replicated on every TP rank of a stage whose
      // layers use RoPE (engines/rope_tables.cpp).
      if (const auto rope = rope_table_bytes(c, engine, first, last); rope.bytes > 0) {
        rw.bytes += rope.bytes;
        comp["rope_tables"] += rope.bytes;
      }
      for (auto& [k, v] : comp) rw.by_component.emplace_back(k, v);
      std::sort(rw.by_component.begin(), rw.by_component.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
      out.push_back(std::move(rw));
    }
  }
  return out;
}

}  // namespace headroom
