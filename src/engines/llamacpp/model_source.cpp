// The two sources of a LlamaModel: a Hugging Face model + --quant (tensor table derived by
// quant_derive.cpp, KV widths from config.json) and a real GGUF file (its header's tensors and
// metadata). The plan reads only the LlamaModel.
#include <atomic>
#include <fmt/format.h>
#include <regex>

#include "headroom/gguf_model.h"
#include "headroom/llamacpp_plan.h"
#include "engines/llamacpp/llamacpp_rule_table.h"

namespace headroom::llamacpp {

namespace {
// Per-sequence state of one recurrent layer (llama_memory_recurrent: r = conv state, s = SSM
// state, F32), from hparams n_embd_r() / n_embd_s() (llama-hparams.cpp).
int64_t recurrent_layer_bytes(const ModelConfig& c) {
  if (c.linear_num_value_heads > 0) {  // gated delta net (Qwen3-Next / Qwen3.5)
    const int64_t key_dim = c.linear_num_key_heads * c.linear_key_head_dim;
    const int64_t value_dim = c.linear_num_value_heads * c.linear_value_head_dim;
    const int64_t r = (c.linear_conv_kernel_dim - 1) * (2 * key_dim + value_dim);
    const int64_t s = c.linear_key_head_dim * c.linear_value_head_dim * c.linear_num_value_heads;
    return (r + s) * 4;
  }
  if (c.mamba_d_inner > 0) {  // mamba2
    const int64_t r = (c.mamba_conv_kernel - 1) * (c.mamba_d_inner + 2 * c.mamba_n_groups * c.mamba_state_size);
    return (r + c.mamba_state_size * c.mamba_d_inner) * 4;
  }
  return 0;
}

KvModel kv_from_config(const ModelConfig& c, int64_t& recurrent_bytes, std::optional<std::string>& declined) {
  KvModel m;
  m.n_ctx_train = c.max_position_embeddings;
  m.n_swa = c.sliding_window > 0 ? c.sliding_window : c.attention_chunk_size;
  const int64_t per_recurrent = recurrent_layer_bytes(c);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const LayerInfo& l = c.layers.at(static_cast<size_t>(i));
    if (l.attn == AttnKind::Linear || l.attn == AttnKind::None) {
      m.layers.push_back(KvLayer{0, 0, false});
      if (l.attn == AttnKind::Linear) {
        if (per_recurrent == 0) declined = "recurrent layers whose state size is not modelled for this architecture";
        recurrent_bytes += per_recurrent;
      }
      continue;
    }
    if (c.mla) {  // the latent, one "head" per layer (kv_model_for_build sets the era's widths)
      m.layers.push_back(KvLayer{c.kv_lora_rank + c.qk_rope_head_dim, 0, false});
      continue;
    }
    const int64_t kv = l.kv_heads > 0 ? l.kv_heads : c.num_kv_heads;
    const int64_t hd = l.head_dim > 0 ? l.head_dim : c.head_dim;
    const int64_t vd = l.head_dim > 0 ? l.head_dim : (c.v_head_dim > 0 && !c.mla ? c.v_head_dim : hd);
    m.layers.push_back(KvLayer{kv * hd, kv * vd, l.attn == AttnKind::Sliding || l.attn == AttnKind::Chunked});
  }
  return m;
}

uint64_t next_serial() {
  static std::atomic<uint64_t> n{0};
  return ++n;
}

TensorCategory gguf_category(const std::string& n) {
  // llama-quant.cpp tensor_get_category, on the GGUF names.
  if (n == "output.weight") return TensorCategory::Output;
  if (n == "token_embd.weight" || n == "per_layer_token_embd.weight") return TensorCategory::TokenEmbd;
  if (n.find("attn_v.weight") != std::string::npos) return TensorCategory::AttnV;
  if (n.find("attn_k.weight") != std::string::npos) return TensorCategory::AttnK;
  if (n.find("attn_q.weight") != std::string::npos) return TensorCategory::AttnQ;
  if (n.find("ffn_down") != std::string::npos) return TensorCategory::FfnDown;
  return TensorCategory::Other;
}
}  // namespace

LlamaModel llama_model_from_hf(const Model& model, const QuantName& q) {
  const ModelConfig& c = model.config;
  LlamaModel m;
  m.serial = next_serial();
  m.name = c.hf_id.empty() ? c.source : c.hf_id;
  DerivedGguf g = derive_gguf(model, q);
  m.tensors = std::move(g.tensors);
  m.tied_output = g.tied_output;
  m.notes = std::move(g.notes);
  m.kv = kv_from_config(c, m.recurrent_state_bytes_per_seq, m.kv_declined);
  if (c.mla) {
    m.mla = LlamaModel::Mla{c.kv_lora_rank + c.qk_rope_head_dim, c.kv_lora_rank, c.num_attention_heads * (c.qk_nope_head_dim + c.qk_rope_head_dim),
                            c.num_attention_heads * c.v_head_dim, c.has_indexer() ? c.index_head_dim : 0, {}};
    for (const auto& l : c.layers) m.mla->indexer_layers.push_back(c.has_indexer() && l.indexer ? 1 : 0);
  }
  m.n_layer = static_cast<int>(c.num_layers);
  m.n_dense_lead = c.is_moe() ? static_cast<int>(c.first_k_dense) : 0;
  m.n_embd = c.hidden_size;
  m.n_head = c.num_attention_heads;
  m.head_dim = c.head_dim;
  m.n_vocab = c.vocab_size;
  m.n_ff = c.is_moe() ? c.experts_per_token * c.moe_intermediate_size + c.num_shared_experts * c.shared_expert_intermediate_size
                      : c.intermediate_size;
  return m;
}

KvModel kv_model_for_build(const LlamaModel& m, int build) {
  if (!m.mla) return m.kv;
  // deepseek2 in llama.cpp: before MLA support (~b5090) K and V per head; then the latent K and V
  // (GUESS for b5090-b7999); 2026 builds keep only the latent K ("V (f16): 0.00 MiB").
  KvModel k = m.kv;
  for (auto& l : k.layers) {
    if (l.k_gqa == 0) continue;
    if (has(Rule::MlaLatentKOnly, build)) l = KvLayer{m.mla->latent_k, 0, false};
    else if (has(Rule::MlaLatentKv, build)) l = KvLayer{m.mla->latent_k, m.mla->latent_v, false};
    else l = KvLayer{m.mla->full_k, m.mla->full_v, false};
  }
  return k;
}

LlamaModel llama_model_from_gguf(const std::string& path) { return llama_model_from_gguf_files(gguf::read_model_files(path), path); }

LlamaModel llama_model_from_gguf_files(const gguf::ModelFiles& files, const std::string& path) {
  const gguf::ModelSummary s = gguf::summarize(files);
  LlamaModel m;
  m.serial = next_serial();
  m.name = s.name.empty() ? path : s.name;
  static const std::regex blk(R"(^blk\.(\d+)\.)");
  for (const auto& part : files.parts)
    for (const auto& t : part.tensors) {
      QuantTensor q;
      q.name = t.name;
      std::smatch mm;
      if (std::regex_search(t.name, mm, blk)) q.layer = std::stoi(mm[1].str());
      q.cat = gguf_category(t.name);
      q.ne0 = t.dims.empty() ? 0 : t.dims.front();
      q.elements = t.elements;
      q.expert = t.name.find("_exps") != std::string::npos;
      q.type = t.type;
      q.bytes = t.bytes;
      m.tensors.push_back(std::move(q));
    }
  m.tied_output = std::none_of(m.tensors.begin(), m.tensors.end(), [](const QuantTensor& t) { return t.cat == TensorCategory::Output; });
  std::string why;
  if (auto kv = kv_model_from_gguf(s, &why)) m.kv = *kv;
  else m.kv_declined = why;
  m.n_layer = static_cast<int>(s.block_count);
  m.n_embd = s.embedding_length;
  m.n_head = s.head_count;
  m.head_dim = s.key_length;
  m.n_vocab = s.vocab_size;
  m.n_ff = s.expert_count > 0 ? s.expert_used_count * s.feed_forward_length : s.feed_forward_length;
  m.notes.push_back(fmt::format("weights: the tensors of {} as its GGUF header lists them", path));
  m.notes.insert(m.notes.end(), s.notes.begin(), s.notes.end());
  return m;
}

}  // namespace headroom::llamacpp
