// derive_gguf(): the tensor table a GGUF of a Hugging Face model would have after llama.cpp's
// converter (convert_hf_to_gguf.py: 1-D tensors, routers and conv1d kept F32; routed experts
// merged into one ffn_*_exps tensor per layer) and llama-quantize (quant_rules.cpp).
#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "headroom/llamacpp_quant.h"

namespace headroom::llamacpp {

namespace {
using C = TensorCategory;
using R = TensorRole;

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// The FFN projection a checkpoint name holds: "gate", "up", "down" or "gate_up" (fused).
std::string_view ffn_kind(const std::string& n) {
  if (has(n, "gate_up")) return "gate_up";
  if (has(n, "gate_proj") || has(n, ".w1")) return "gate";
  if (has(n, "up_proj") || has(n, ".w3")) return "up";
  return "down";
}
C ffn_category(std::string_view kind) {
  return kind == "down" ? C::FfnDown : kind == "up" ? C::FfnUp : C::FfnGate;
}

// GGUF name and category of an attention / linear-attention / other 2-D weight.
std::pair<std::string, C> attn_name(const TensorInfo& t) {
  const std::string& n = t.name;
  if (has(n, "qkv_proj") || has(n, "in_proj_qkv")) return {"attn_qkv", C::AttnQkv};
  if (has(n, "kv_b_proj")) return {"attn_kv_b", C::AttnKvB};
  if (has(n, "q_proj") && t.role == R::AttnQ) return {"attn_q", C::AttnQ};
  if (has(n, "k_proj") && t.role == R::AttnKV) return {"attn_k", C::AttnK};
  if (has(n, "v_proj") && t.role == R::AttnKV) return {"attn_v", C::AttnV};
  if (t.role == R::AttnO) return {"attn_output", C::AttnOutput};
  // q_a / kv_a / q_b, linear-attention gates and output, indexers: the mix's default type.
  std::string tail = n.substr(n.rfind('.', n.size() - 8) + 1);
  return {"other." + tail, C::Other};
}

struct Key {
  int layer;
  std::string name;
  bool operator<(const Key& o) const { return layer != o.layer ? layer < o.layer : name < o.name; }
};
}  // namespace

DerivedGguf derive_gguf(const Model& m, const QuantName& q) {
  DerivedGguf out;
  std::map<Key, QuantTensor> merged;  // experts of one layer and kind become one tensor
  bool skipped_mtp = false, skipped_vision = false;
  for (const auto& t : m.tensors) {
    if (t.role == R::Mtp || (t.layer >= m.config.num_layers)) { skipped_mtp = true; continue; }
    if (t.role == R::Vision) { skipped_vision = true; continue; }
    if (t.params == 0 || t.shape.empty()) continue;  // scales and zeros of a quantized checkpoint
    QuantTensor g;
    g.layer = t.role == R::Embedding || t.role == R::LmHead ? -1 : t.layer;
    g.elements = t.params;
    const bool vec = t.shape.size() == 1;
    g.ne0 = vec ? t.params : t.shape.size() == 3 ? t.shape[1] : t.params / std::max<int64_t>(1, t.shape[0]);
    std::string base;
    if (t.role == R::Embedding) { base = "token_embd"; g.cat = C::TokenEmbd; }
    else if (t.role == R::LmHead) { base = "output"; g.cat = C::Output; }
    else if (vec || t.role == R::Norm) { base = "vec." + t.name; g.quantizable = false; }
    else if (t.role == R::Router || has(t.name, "conv1d")) { base = "ffn_gate_inp." + t.name; g.quantizable = false; }
    else if (t.role == R::ExpertColumn || t.role == R::ExpertRow) {
      const std::string_view kind = ffn_kind(t.name);
      base = fmt::format("ffn_{}_exps", kind);
      g.cat = ffn_category(kind);
      g.expert = true;
    } else if (t.role == R::MlpColumn || t.role == R::MlpRow) {
      const std::string_view kind = ffn_kind(t.name);
      base = fmt::format("ffn_{}{}", kind, has(t.name, "shared") ? "_shexp" : "");
      g.cat = ffn_category(kind);
    } else {
      auto [n, c] = attn_name(t);
      base = n;
      g.cat = c;
    }
    if (!g.quantizable) g.type = gguf::GgmlType::F32;
    auto add = [&](const std::string& b, C cat, int64_t elements) {
      QuantTensor x = g;
      x.name = x.layer >= 0 ? fmt::format("blk.{}.{}", x.layer, b) : b;
      x.cat = cat;
      x.elements = elements;
      auto [it, fresh] = merged.try_emplace(Key{x.layer, x.name}, x);
      if (!fresh) it->second.elements += x.elements;
    };
    // A fused gate_up projection: llama.cpp's converter writes gate and up apart.
    if (base.find("gate_up") != std::string::npos) {
      const std::string tail = base.substr(base.find("gate_up") + 7);
      add("ffn_gate" + tail, C::FfnGate, g.elements / 2);
      add("ffn_up" + tail, C::FfnUp, g.elements / 2);
    } else {
      add(base, g.cat, g.elements);
    }
  }
  for (auto& [k, v] : merged) out.tensors.push_back(std::move(v));
  out.tied_output = std::none_of(out.tensors.begin(), out.tensors.end(), [](const QuantTensor& t) { return t.cat == C::Output; });

  const ModelConfig& c = m.config;
  QuantModelFacts facts;
  facts.n_layer = static_cast<int>(c.num_layers);
  facts.n_expert = static_cast<int>(c.num_experts);
  facts.n_gqa = c.num_kv_heads > 0 ? c.num_attention_heads / c.num_kv_heads : 1;
  // llama-model.cpp load_hparams: an 80-layer llama or qwen2 is LLM_TYPE_70B (its attn_v gets Q5_K).
  facts.is_70b = c.num_layers == 80 && (c.model_type == "llama" || c.model_type == "qwen2");
  assign_quant_types(out.tensors, q, facts);

  out.notes.push_back(fmt::format("weights: a {} GGUF derived from {}'s config and llama.cpp's quantization rules "
                                  "(llama-quant.cpp), not read from a real file; --model FILE.gguf gives the exact table",
                                  q.name, c.hf_id.empty() ? std::string("the model") : c.hf_id));
  if (!q.stand_in.empty())
    out.notes.push_back(fmt::format("{} is a hand-chosen per-tensor mix (Unsloth Dynamic): approximated by llama-quantize's {}",
                                    q.name, q.stand_in));
  if (skipped_mtp) out.notes.push_back("MTP / next-token-prediction layers left out: llama.cpp does not load them");
  if (skipped_vision) out.notes.push_back("vision tower left out: llama.cpp loads it from the --mmproj file (not modelled)");
  return out;
}

}  // namespace headroom::llamacpp
