// Per-family tensor layouts: every weight tensor each architecture's checkpoint holds, with the
// checkpoint's names and shapes. Shapes follow the transformers modeling_<family>.py module
// definitions (nn.Linear(in, out) stores weight [out, in]) and, where noted, the engine loaders.
#include <fmt/format.h>

#include "headroom/error.h"
#include "model/inventory_builder.h"
#include "model/model_internal.h"

namespace headroom::model_detail {
namespace {

using R = TensorRole;

std::string L(const ModelConfig& c, int i) { return fmt::format("{}layers.{}.", c.text_prefix, i); }

// GQA attention (Llama/Qwen/Mistral/Gemma/gpt-oss/MiniMax/GLM-4.5): q/k/v/o projections,
// optional biases, optional per-head or full-width q/k norms.
void gqa_attention(InventoryBuilder& b, const std::string& p, int i, int64_t heads, int64_t kv, int64_t hd, bool gated_q = false) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  bool qkv_bias = c.attention_bias;
  bool o_bias = c.attention_bias && ((c.family == "llama" || c.family == "nemotron_nas") && c.architecture != "Qwen2ForCausalLM" && c.architecture != "Qwen3ForCausalLM" &&
                                     c.architecture != "Qwen3VLForConditionalGeneration" &&
                                     c.architecture != "Qwen2_5_VLForConditionalGeneration");  // Qwen2: o_proj without bias
  if (c.family == "gpt_oss") o_bias = true;
  if (c.family == "phi3") {
    b.linear(p + "self_attn.qkv_proj", (heads + 2 * kv) * hd, H, R::AttnQ, i, -1, qkv_bias);
  } else {
    b.linear(p + "self_attn.q_proj", heads * hd * (gated_q ? 2 : 1), H, R::AttnQ, i, -1, qkv_bias);
    b.linear(p + "self_attn.k_proj", kv * hd, H, R::AttnKV, i, -1, qkv_bias);
    b.linear(p + "self_attn.v_proj", kv * hd, H, R::AttnKV, i, -1, qkv_bias);
  }
  b.linear(p + "self_attn.o_proj", H, heads * hd, R::AttnO, i, -1, o_bias);
  if (c.qk_norm) {
    b.norm(p + "self_attn.q_norm", c.partial_qk_norm ? heads * hd : hd, i);
    b.norm(p + "self_attn.k_norm", c.partial_qk_norm ? kv * hd : hd, i);
  }
  if (c.family == "gpt_oss") b.plain(p + "self_attn.sinks", {heads}, R::AttnO, i);
}

// Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2, GLM-5): modeling_deepseek_v3.py.
void mla_attention(InventoryBuilder& b, const std::string& p, int i) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, qk = c.qk_nope_head_dim + c.qk_rope_head_dim;
  if (c.q_lora_rank > 0) {
    b.linear(p + "self_attn.q_a_proj", c.q_lora_rank, H, R::AttnLowRank, i);
    b.norm(p + "self_attn.q_a_layernorm", c.q_lora_rank, i);
    b.linear(p + "self_attn.q_b_proj", nh * qk, c.q_lora_rank, R::AttnQ, i);
  } else {
    b.linear(p + "self_attn.q_proj", nh * qk, H, R::AttnQ, i);
  }
  b.linear(p + "self_attn.kv_a_proj_with_mqa", c.kv_lora_rank + c.qk_rope_head_dim, H, R::AttnLowRank, i);
  b.norm(p + "self_attn.kv_a_layernorm", c.kv_lora_rank, i);
  b.linear(p + "self_attn.kv_b_proj", nh * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank, R::AttnQ, i);
  b.linear(p + "self_attn.o_proj", H, nh * c.v_head_dim, R::AttnO, i);
}

// DSA indexer (DeepSeek-V3.2 inference/model.py Indexer; GLM-5 same names): wq_b, wk, k_norm
// (LayerNorm: weight + bias), weights_proj (kept in BF16 by both checkpoints).
void dsa_indexer(InventoryBuilder& b, const std::string& p, int i) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  b.linear(p + "self_attn.indexer.wq_b", c.index_n_heads * c.index_head_dim, c.q_lora_rank > 0 ? c.q_lora_rank : H, R::Indexer, i);
  b.linear(p + "self_attn.indexer.wk", c.index_head_dim, H, R::Indexer, i);
  b.plain(p + "self_attn.indexer.k_norm.weight", {c.index_head_dim}, R::Indexer, i);
  b.plain(p + "self_attn.indexer.k_norm.bias", {c.index_head_dim}, R::Indexer, i);
  b.linear(p + "self_attn.indexer.weights_proj", c.index_n_heads, H, R::Indexer, i, -1, false, /*never_quantized=*/true);
}

void gated_mlp(InventoryBuilder& b, const std::string& m, int64_t inter, int i, R col = R::MlpColumn, R row = R::MlpRow, int e = -1) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  b.linear(m + "gate_proj", inter, H, col, i, e, c.mlp_bias);
  b.linear(m + "up_proj", inter, H, col, i, e, c.mlp_bias);
  b.linear(m + "down_proj", H, inter, row, i, e, c.mlp_bias);
}

// Routed experts stored one module per expert (DeepSeek/Qwen-MoE/GLM naming).
void per_expert_mlps(InventoryBuilder& b, const std::string& m, int i) {
  const auto& c = b.config();
  for (int e = 0; e < c.num_experts; ++e)
    gated_mlp(b, fmt::format("{}experts.{}.", m, e), c.moe_intermediate_size, i, R::ExpertColumn, R::ExpertRow, e);
}

// Experts fused into 3-D tensors (Llama-4, Qwen3-VL-MoE): gate_up_proj [E, H, 2I], down_proj [E, I, H].
void fused_experts(InventoryBuilder& b, const std::string& m, int i) {
  const auto& c = b.config();
  const int64_t E = c.num_experts, H = c.hidden_size, I = c.moe_intermediate_size;
  b.plain(m + "experts.gate_up_proj", {E, H, 2 * I}, R::ExpertColumn, i);
  b.plain(m + "experts.down_proj", {E, I, H}, R::ExpertRow, i);
}

// DeepSeek-style MoE block: router (+ e_score_correction_bias, F32), routed experts, shared experts.
void deepseek_moe(InventoryBuilder& b, const std::string& p, int i) {
  const auto& c = b.config();
  b.plain(p + "mlp.gate.weight", {c.num_experts, c.hidden_size}, R::Router, i);
  b.plain_dtype(p + "mlp.gate.e_score_correction_bias", {c.num_experts}, DType::F32, R::Router, i);
  per_expert_mlps(b, p + "mlp.", i);
  if (c.num_shared_experts > 0) gated_mlp(b, p + "mlp.shared_experts.", c.shared_expert_intermediate_size, i);
}

void deepseek_layer(InventoryBuilder& b, int i, bool moe, bool indexer) {
  const auto& c = b.config();
  const std::string p = L(c, i);
  b.norm(p + "input_layernorm", c.hidden_size, i);
  b.norm(p + "post_attention_layernorm", c.hidden_size, i);
  if (c.mla) mla_attention(b, p, i);
  else gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
  if (indexer) dsa_indexer(b, p, i);
  if (moe) deepseek_moe(b, p, i);
  else gated_mlp(b, p + "mlp.", c.intermediate_size, i);
}

// Next-n (MTP) layer of DeepSeek-V3 / GLM: a full decoder layer plus eh_proj, enorm, hnorm,
// shared_head.norm; DeepSeek-V3/V3.2 and Kimi also store embed_tokens and shared_head.head copies
// (DeepSeek-V3 card: 671B main + 14B MTP), GLM-4.5/GLM-5 do not (GLM-5 MTP layer = 791 tensors,
// festr2/GLM-5-NVFP4-MTP card).
void deepseek_mtp(InventoryBuilder& b, int i) {
  const auto& c = b.config();
  const std::string p = L(c, i);
  bool indexer = c.has_indexer();
  if (indexer && !c.layers.empty()) indexer = c.layers.back().indexer || c.layers.front().indexer;
  deepseek_layer(b, i, c.num_experts > 0, indexer);
  b.linear(p + "eh_proj", c.hidden_size, 2 * c.hidden_size, R::Mtp, i, -1, false, /*never_quantized=*/c.quant.raw_method == "fp8");
  b.norm(p + "enorm", c.hidden_size, i);
  b.norm(p + "hnorm", c.hidden_size, i);
  b.norm(p + "shared_head.norm", c.hidden_size, i);
  if (c.model_type != "glm_moe_dsa" && c.family != "glm4_moe") {
    b.plain(p + "embed_tokens.weight", {c.vocab_size, c.hidden_size}, R::Mtp, i);
    b.plain(p + "shared_head.head.weight", {c.vocab_size, c.hidden_size}, R::Mtp, i);
  }
}

void deepseek_family(InventoryBuilder& b) {
  const auto& c = b.config();
  for (int i = 0; i < c.num_layers; ++i) deepseek_layer(b, i, c.layers[i].moe, c.layers[i].indexer);
  for (int k = 0; k < c.num_nextn_predict_layers; ++k) deepseek_mtp(b, static_cast<int>(c.num_layers) + k);
}

void glm4_moe_family(InventoryBuilder& b) { deepseek_family(b); }

// DeepSeek-V4 (DeepseekV4ForCausalLM). Modules and shapes from vLLM model_executor/models/deepseek_v4.py
// (DeepseekV4Attention, DeepseekV4DecoderLayer, DeepseekV4MoE, DeepseekV4Model), layers/deepseek_v4_attention.py
// (DeepseekV4Indexer), layers/deepseek_compressor.py (DeepseekCompressor) and models/deepseek_v4_mtp.py;
// checkpoint names are the reference names vLLM's WeightsMapper translates from (layers.{i}.attn.wq_a,
// .ffn.experts.{e}.w1, ".scale" for block scales, mtp.{k}.).
//  - FP8 block linears: weight F8_E4M3 [out, in] + scale [ceil(out/128), ceil(in/128)]; the scale is
//    E8M0 (1 byte) in FP4-expert checkpoints and F32 in FP8-expert ones (DeepseekV4FP8Config.is_scale_e8m0).
//  - FP4 experts (expert_dtype "fp4", Mxfp4MoEMethod): packed weight [out, in/2] (2 values per byte) +
//    E8M0 scale [out, in/32].
//  - Compressor wkv/wgate and indexer weights_proj are built with quant_config=None: BF16.
//  - Guesses (said in Model notes): router gate weight stored in the model dtype, hash table tid2eid
//    as I32 (vLLM allocates int32 without MegaMoE), MTP layer sharing embed/head with the main model
//    (no copies stored), indexer k_norm (built by vLLM, not read by its forward) absent.
void v4_fp8_linear(InventoryBuilder& b, const std::string& m, int64_t out, int64_t in, R role, int i, int e = -1) {
  const auto& c = b.config();
  if (c.quant.method == QuantMethod::None) {
    b.plain(m + ".weight", {out, in}, role, i, e);
    return;
  }
  auto cdiv = [](int64_t a, int64_t d) { return (a + d - 1) / d; };
  const int64_t bn = c.quant.block_n > 0 ? c.quant.block_n : 128, bk = c.quant.block_k > 0 ? c.quant.block_k : 128;
  b.raw(m + ".weight", {out, in}, DType::F8_E4M3, role, i, e, out * in);
  b.raw(m + ".scale", {cdiv(out, bn), cdiv(in, bk)}, c.expert_fp4 ? DType::F8_E8M0 : DType::F32, role, i, e, 0);
}

void v4_expert(InventoryBuilder& b, const std::string& m, int64_t out, int64_t in, R role, int i, int e) {
  const auto& c = b.config();
  if (!c.expert_fp4) {
    v4_fp8_linear(b, m, out, in, role, i, e);
    return;
  }
  b.raw(m + ".weight", {out, in / 2}, DType::I8, role, i, e, out * in);
  b.raw(m + ".scale", {out, (in + 31) / 32}, DType::F8_E8M0, role, i, e, 0);
}

void v4_compressor(InventoryBuilder& b, const std::string& m, int64_t ratio, int64_t hd, R role, int i) {
  const auto& c = b.config();
  const int64_t coff = ratio == 4 ? 2 : 1;  // CSA overlaps two windows
  b.plain_dtype(m + "ape", {ratio, coff * hd}, DType::F32, role, i);
  b.plain(m + "wkv.weight", {coff * hd, c.hidden_size}, role, i);
  b.plain(m + "wgate.weight", {coff * hd, c.hidden_size}, role, i);
  b.plain(m + "norm.weight", {hd}, role, i);
}

void v4_hc(InventoryBuilder& b, const std::string& p, const char* what, int64_t rows, int64_t scales, int i) {
  const auto& c = b.config();
  b.plain_dtype(fmt::format("{}hc_{}_fn", p, what), {rows, c.hc_mult * c.hidden_size}, DType::F32, R::Other, i);
  b.plain_dtype(fmt::format("{}hc_{}_base", p, what), {rows}, DType::F32, R::Other, i);
  b.plain_dtype(fmt::format("{}hc_{}_scale", p, what), {scales}, DType::F32, R::Other, i);
}

void v4_block(InventoryBuilder& b, const std::string& p, int i, int ratio, bool hash) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim, I = c.moe_intermediate_size;
  const std::string a = p + "attn.";
  b.norm(p + "attn_norm", H, i);
  b.norm(p + "ffn_norm", H, i);
  const int64_t mix = (2 + c.hc_mult) * c.hc_mult;
  v4_hc(b, p, "attn", mix, 3, i);
  v4_hc(b, p, "ffn", mix, 3, i);
  // Attention: wq_a / wkv replicated (fused_wqa_wkv, disable_tp), wq_b and wo_a column, wo_b row parallel.
  v4_fp8_linear(b, a + "wq_a", c.q_lora_rank, H, R::AttnLowRank, i);
  v4_fp8_linear(b, a + "wkv", hd, H, R::AttnLowRank, i);
  b.norm(a + "q_norm", c.q_lora_rank, i);
  b.norm(a + "kv_norm", hd, i);
  v4_fp8_linear(b, a + "wq_b", nh * hd, c.q_lora_rank, R::AttnQ, i);
  v4_fp8_linear(b, a + "wo_a", c.o_groups * c.o_lora_rank, nh * hd / c.o_groups, R::AttnO, i);
  v4_fp8_linear(b, a + "wo_b", H, c.o_groups * c.o_lora_rank, R::AttnO, i);
  b.plain_dtype(a + "attn_sink", {nh}, DType::F32, R::AttnQ, i);
  if (ratio > 1) v4_compressor(b, a + "compressor.", ratio, hd, R::AttnLowRank, i);
  if (ratio == 4) {
    const std::string x = a + "indexer.";
    v4_fp8_linear(b, x + "wq_b", c.index_n_heads * c.index_head_dim, c.q_lora_rank, R::Indexer, i);
    b.plain(x + "weights_proj.weight", {c.index_n_heads, H}, R::Indexer, i);
    v4_compressor(b, x + "compressor.", ratio, c.index_head_dim, R::Indexer, i);
  }
  // MoE: router (hash layers route by a token -> experts table instead of a score bias).
  const std::string f = p + "ffn.";
  b.plain(f + "gate.weight", {c.num_experts, H}, R::Router, i);
  if (hash) b.plain_dtype(f + "gate.tid2eid", {c.vocab_size, c.experts_per_token}, DType::I32, R::Router, i);
  else b.plain_dtype(f + "gate.bias", {c.num_experts}, DType::F32, R::Router, i);
  for (int e = 0; e < c.num_experts; ++e) {
    const std::string m = fmt::format("{}experts.{}.", f, e);
    v4_expert(b, m + "w1", I, H, R::ExpertColumn, i, e);
    v4_expert(b, m + "w3", I, H, R::ExpertColumn, i, e);
    v4_expert(b, m + "w2", H, I, R::ExpertRow, i, e);
  }
  if (c.num_shared_experts > 0) {
    const int64_t S = c.shared_expert_intermediate_size;
    v4_fp8_linear(b, f + "shared_experts.w1", S, H, R::MlpColumn, i);
    v4_fp8_linear(b, f + "shared_experts.w3", S, H, R::MlpColumn, i);
    v4_fp8_linear(b, f + "shared_experts.w2", H, S, R::MlpRow, i);
  }
}

void deepseek_v4_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  if (c.quant.method != QuantMethod::None && c.quant.method != QuantMethod::Fp8Block)
    fail_input(c.source, "quantization_config", fmt::format("DeepSeek-V4 with {} linears is not modelled (FP8 block or none)",
                                                            quant_method_name(c.quant.method)));
  for (int i = 0; i < c.num_layers; ++i)
    v4_block(b, fmt::format("layers.{}.", i), i, c.layers[i].compress_ratio, i < c.num_hash_layers);
  v4_hc(b, "", "head", c.hc_mult, 1, -1);
  // MTP layers (deepseek_v4_mtp.py): enorm/hnorm, e_proj/h_proj (FP8, replicated), a decoder block with
  // compress ratio 1 (no compressor/indexer), shared_head.norm, its own hc_head.
  for (int k = 0; k < c.num_nextn_predict_layers; ++k) {
    const int i = static_cast<int>(c.num_layers) + k;
    const std::string p = fmt::format("mtp.{}.", k);
    v4_block(b, p, i, 0, false);
    b.norm(p + "enorm", H, i);
    b.norm(p + "hnorm", H, i);
    v4_fp8_linear(b, p + "e_proj", H, H, R::Mtp, i);
    v4_fp8_linear(b, p + "h_proj", H, H, R::Mtp, i);
    b.norm(p + "norm", H, i);
    v4_hc(b, p, "head", c.hc_mult, 1, i);
  }
}

// Llama / Mistral / Qwen2 / Qwen3 / OLMo / Phi-3 / Gemma-2/3 dense decoder layers.
void dense_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    if (c.architecture == "Olmo2ForCausalLM") {
      b.norm(p + "post_attention_layernorm", H, i);
      b.norm(p + "post_feedforward_layernorm", H, i);
    } else if (c.architecture != "OlmoForCausalLM") {  // OLMo-1 LayerNorms have no weights
      b.norm(p + "input_layernorm", H, i);
      b.norm(p + "post_attention_layernorm", H, i);
      if (c.family == "gemma2" || c.family == "gemma3") {
        b.norm(p + "pre_feedforward_layernorm", H, i);
        b.norm(p + "post_feedforward_layernorm", H, i);
      }
    }
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
    if (c.family == "phi3") {
      b.linear(p + "mlp.gate_up_proj", 2 * c.intermediate_size, H, R::MlpColumn, i);
      b.linear(p + "mlp.down_proj", H, c.intermediate_size, R::MlpRow, i);
    } else {
      gated_mlp(b, p + "mlp.", c.intermediate_size, i);
    }
  }
}

// Nemotron-NAS (DeciLM; vLLM model_executor/models/nemotron_nas.py DeciLMDecoderLayer, TensorRT-LLM
// _torch/models/modeling_nemotron_nas.py NemotronNASDecoderLayer): per layer, input_layernorm + q/k/v/o
// (the layer's own KV heads) when attention is real, input_layernorm + self_attn.linear_attn [H, H] when
// replaced by a linear, nothing for no_op; post_attention_layernorm + gate/up/down of the layer's
// ffn_mult width, or + mlp.linear_mlp [H, H], or nothing for a no_op FFN.
void nemotron_nas_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    const LayerInfo& li = c.layers[i];
    if (li.attn == AttnKind::Full) {
      b.norm(p + "input_layernorm", H, i);
      gqa_attention(b, p, i, c.num_attention_heads, li.kv_heads > 0 ? li.kv_heads : c.num_kv_heads, c.head_dim);
    } else if (li.attn_linear) {
      b.norm(p + "input_layernorm", H, i);
      b.linear(p + "self_attn.linear_attn", H, H, R::AttnQ, i);
    }
    if (li.has_mlp) {
      b.norm(p + "post_attention_layernorm", H, i);
      gated_mlp(b, p + "mlp.", li.ffn_intermediate > 0 ? li.ffn_intermediate : c.intermediate_size, i);
    } else if (li.ffn_linear) {
      b.norm(p + "post_attention_layernorm", H, i);
      b.linear(p + "mlp.linear_mlp", H, H, R::MlpColumn, i);
    }
  }
}

// Mixtral and MiniMax-M2: block_sparse_moe.gate + experts.{e}.w1/w3 (gate/up) and w2 (down).
void mixtral_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, I = c.moe_intermediate_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    b.norm(p + "input_layernorm", H, i);
    b.norm(p + "post_attention_layernorm", H, i);
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
    b.linear(p + "block_sparse_moe.gate", c.num_experts, H, R::Router, i, -1, false, true);
    if (c.family == "minimax_m2")  // use_routing_bias (modeling_minimax_m2.py)
      b.plain_dtype(p + "block_sparse_moe.e_score_correction_bias", {c.num_experts}, DType::F32, R::Router, i);
    for (int e = 0; e < c.num_experts; ++e) {
      const std::string m = fmt::format("{}block_sparse_moe.experts.{}.", p, e);
      b.linear(m + "w1", I, H, R::ExpertColumn, i, e);
      b.linear(m + "w3", I, H, R::ExpertColumn, i, e);
      b.linear(m + "w2", H, I, R::ExpertRow, i, e);
    }
  }
}

// Qwen2-MoE / Qwen3-MoE / Qwen3-VL-MoE.
void qwen_moe_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  // Qwen3-VL-MoE BF16 checkpoints fuse the experts into 3-D tensors; a quantized checkpoint's experts are
  // quantized like any other linear unless listed as ignored (vLLM qwen3_vl_moe.py load_weights accepts both
  // layouts, and FusedMoE takes the checkpoint's quant method, e.g. Fp8MoEMethod for Qwen's -FP8 releases).
  bool fused = c.architecture == "Qwen3VLMoeForConditionalGeneration" && c.quant.method == QuantMethod::None;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    b.norm(p + "input_layernorm", H, i);
    b.norm(p + "post_attention_layernorm", H, i);
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
    if (!c.layers[i].moe) {
      gated_mlp(b, p + "mlp.", c.intermediate_size, i);
      continue;
    }
    b.linear(p + "mlp.gate", c.num_experts, H, R::Router, i, -1, false, true);
    if (fused) fused_experts(b, p + "mlp.", i);
    else per_expert_mlps(b, p + "mlp.", i);
    if (c.shared_expert_intermediate_size > 0) {
      gated_mlp(b, p + "mlp.shared_expert.", c.shared_expert_intermediate_size, i);
      b.linear(p + "mlp.shared_expert_gate", 1, H, R::Router, i, -1, false, true);
    }
  }
}

// Qwen3-Next / Qwen3.5: Gated DeltaNet layers (linear_attn) and gated full attention (q_proj
// doubled for the output gate), MoE with a gated shared expert. Names: modeling_qwen3_next.py
// (in_proj_qkvz / in_proj_ba) and modeling_qwen3_5.py (in_proj_qkv / in_proj_z / in_proj_b / in_proj_a).
void qwen3_next_layer(InventoryBuilder& b, const std::string& p, int i, bool linear, bool moe) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  b.norm(p + "input_layernorm", H, i);
  b.norm(p + "post_attention_layernorm", H, i);
  if (linear) {
    const int64_t nk = c.linear_num_key_heads, nv = c.linear_num_value_heads, dk = c.linear_key_head_dim, dv = c.linear_value_head_dim;
    const int64_t key_dim = nk * dk, value_dim = nv * dv, conv_dim = 2 * key_dim + value_dim;
    const std::string a = p + "linear_attn.";
    bool q35 = c.architecture.rfind("Qwen3_5", 0) == 0;
    if (q35) {
      b.linear(a + "in_proj_qkv", conv_dim, H, R::LinearAttn, i);
      b.linear(a + "in_proj_z", value_dim, H, R::LinearAttn, i);
      b.linear(a + "in_proj_b", nv, H, R::LinearAttn, i, -1, false, true);
      b.linear(a + "in_proj_a", nv, H, R::LinearAttn, i, -1, false, true);
    } else {
      b.linear(a + "in_proj_qkvz", 2 * key_dim + 2 * value_dim, H, R::LinearAttn, i);
      b.linear(a + "in_proj_ba", 2 * nv, H, R::LinearAttn, i, -1, false, true);
    }
    b.plain(a + "conv1d.weight", {conv_dim, 1, c.linear_conv_kernel_dim}, R::LinearAttn, i);
    b.plain(a + "dt_bias", {nv}, R::LinearAttn, i);
    b.plain(a + "A_log", {nv}, R::LinearAttn, i);
    b.plain(a + "norm.weight", {dv}, R::LinearAttn, i);
    b.linear(a + "out_proj", H, value_dim, R::LinearAttn, i);
  } else {
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim, /*gated_q=*/true);
  }
  if (moe) {
    b.linear(p + "mlp.gate", c.num_experts, H, R::Router, i, -1, false, true);
    per_expert_mlps(b, p + "mlp.", i);
    if (c.shared_expert_intermediate_size > 0) {
      gated_mlp(b, p + "mlp.shared_expert.", c.shared_expert_intermediate_size, i);
      b.linear(p + "mlp.shared_expert_gate", 1, H, R::Router, i, -1, false, true);
    }
  } else {
    gated_mlp(b, p + "mlp.", c.intermediate_size, i);
  }
}

void qwen3_next_family(InventoryBuilder& b) {
  const auto& c = b.config();
  for (int i = 0; i < c.num_layers; ++i)
    qwen3_next_layer(b, L(c, i), i, c.layers[i].attn == AttnKind::Linear, c.layers[i].moe);
  // MTP module (mtp_num_hidden_layers): mtp.fc [H, 2H], two pre-fc norms, full-attention layers, final norm.
  if (c.num_nextn_predict_layers > 0) {
    const int base = static_cast<int>(c.num_layers);
    const int64_t H = c.hidden_size;
    b.linear("mtp.fc", H, 2 * H, R::Mtp, base, -1, false, true);
    b.plain("mtp.pre_fc_norm_embedding.weight", {H}, R::Mtp, base);
    b.plain("mtp.pre_fc_norm_hidden.weight", {H}, R::Mtp, base);
    b.plain("mtp.norm.weight", {H}, R::Mtp, base);
    for (int k = 0; k < c.num_nextn_predict_layers; ++k)
      qwen3_next_layer(b, fmt::format("mtp.layers.{}.", k), base + k, false, c.num_experts > 0);
  }
}

// gpt-oss: attention with sinks and biases; MoE with a biased router and MXFP4 experts
// (gate_up_proj_blocks [E, 2I, H/32, 16] U8 + _scales [E, 2I, H/32] U8 + _bias [E, 2I];
// down_proj likewise), as in the openai/gpt-oss checkpoints (transformers integrations/mxfp4.py).
void gpt_oss_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, I = c.moe_intermediate_size, E = c.num_experts;
  bool mx = c.quant.method == QuantMethod::Mxfp4;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    b.norm(p + "input_layernorm", H, i);
    b.norm(p + "post_attention_layernorm", H, i);
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
    b.plain(p + "mlp.router.weight", {E, H}, R::Router, i);
    b.plain(p + "mlp.router.bias", {E}, R::Router, i);
    const std::string m = p + "mlp.experts.";
    if (mx) {
      // Parameters: 2 FP4 values per byte of *_blocks.
      auto blocks = [&](const std::string& n, int64_t rows, int64_t in, R role) {
        b.raw(n + "_blocks", {E, rows, in / 32, 16}, DType::U8, role, i, -1, E * rows * in);
        b.raw(n + "_scales", {E, rows, in / 32}, DType::U8, role, i, -1, 0);
      };
      blocks(m + "gate_up_proj", 2 * I, H, R::ExpertColumn);
      blocks(m + "down_proj", H, I, R::ExpertRow);
    } else {
      b.plain(m + "gate_up_proj", {E, H, 2 * I}, R::ExpertColumn, i);
      b.plain(m + "down_proj", {E, I, H}, R::ExpertRow, i);
    }
    b.plain(m + "gate_up_proj_bias", {E, 2 * I}, R::ExpertColumn, i);
    b.plain(m + "down_proj_bias", {E, H}, R::ExpertRow, i);
  }
}

// Llama-4: feed_forward.{router, experts (fused), shared_expert} on MoE layers, dense
// feed_forward.{gate,up,down}_proj (intermediate_size_mlp) otherwise (modeling_llama4.py).
void llama4_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    b.norm(p + "input_layernorm", H, i);
    b.norm(p + "post_attention_layernorm", H, i);
    gqa_attention(b, p, i, c.num_attention_heads, c.num_kv_heads, c.head_dim);
    if (c.layers[i].moe) {
      b.linear(p + "feed_forward.router", c.num_experts, H, R::Router, i, -1, false, true);
      fused_experts(b, p + "feed_forward.", i);
      gated_mlp(b, p + "feed_forward.shared_expert.", c.moe_intermediate_size, i);
    } else {
      gated_mlp(b, p + "feed_forward.", c.intermediate_size, i);
    }
  }
}

// Nemotron-H (modeling_nemotron_h.py): backbone.layers.{i}.norm + mixer, mixer = Mamba-2,
// attention, MLP (up/down, relu2) or MoE (gate + bias, experts up/down, shared expert).
void nemotron_h_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = fmt::format("backbone.layers.{}.", i);
    const auto& li = c.layers[i];
    b.norm(p + "norm", H, i);
    const std::string m = p + "mixer.";
    if (li.attn == AttnKind::Linear) {
      const int64_t di = c.mamba_d_inner, gs = c.mamba_n_groups * c.mamba_state_size, nh = c.mamba_num_heads;
      const int64_t conv_dim = di + 2 * gs;
      b.linear(m + "in_proj", 2 * di + 2 * gs + nh, H, R::LinearAttn, i);
      b.plain(m + "conv1d.weight", {conv_dim, 1, c.mamba_conv_kernel}, R::LinearAttn, i);
      b.plain(m + "conv1d.bias", {conv_dim}, R::LinearAttn, i);
      b.plain(m + "dt_bias", {nh}, R::LinearAttn, i);
      b.plain(m + "A_log", {nh}, R::LinearAttn, i);
      b.plain(m + "D", {nh}, R::LinearAttn, i);
      b.plain(m + "norm.weight", {di}, R::LinearAttn, i);
      b.linear(m + "out_proj", H, di, R::LinearAttn, i);
    } else if (li.attn == AttnKind::Full) {
      b.linear(m + "q_proj", c.num_attention_heads * c.head_dim, H, R::AttnQ, i);
      b.linear(m + "k_proj", c.num_kv_heads * c.head_dim, H, R::AttnKV, i);
      b.linear(m + "v_proj", c.num_kv_heads * c.head_dim, H, R::AttnKV, i);
      b.linear(m + "o_proj", H, c.num_attention_heads * c.head_dim, R::AttnO, i);
    } else if (li.moe) {
      b.plain(m + "gate.weight", {c.num_experts, H}, R::Router, i);
      b.plain_dtype(m + "gate.e_score_correction_bias", {c.num_experts}, DType::F32, R::Router, i);
      const int64_t xin = c.moe_latent_size > 0 ? c.moe_latent_size : H;
      for (int e = 0; e < c.num_experts; ++e) {
        const std::string x = fmt::format("{}experts.{}.", m, e);
        b.linear(x + "up_proj", c.moe_intermediate_size, xin, R::ExpertColumn, i, e);
        b.linear(x + "down_proj", xin, c.moe_intermediate_size, R::ExpertRow, i, e);
      }
      if (c.moe_latent_size > 0) {  // LatentMoE: experts run in a latent space (modeling_nemotron_h.py LatentMoE)
        b.linear(m + "fc1_latent_proj", c.moe_latent_size, H, R::MlpColumn, i);
        b.linear(m + "fc2_latent_proj", H, c.moe_latent_size, R::MlpRow, i);
      }
      if (c.shared_expert_intermediate_size > 0) {
        b.linear(m + "shared_experts.up_proj", c.shared_expert_intermediate_size, H, R::MlpColumn, i);
        b.linear(m + "shared_experts.down_proj", H, c.shared_expert_intermediate_size, R::MlpRow, i);
      }
    } else {
      b.linear(m + "up_proj", c.intermediate_size, H, R::MlpColumn, i);
      b.linear(m + "down_proj", H, c.intermediate_size, R::MlpRow, i);
    }
  }
}

// Qwen3-VL / Qwen3.5 vision tower (modeling_qwen3_vl.py Qwen3VLVisionModel), kept unquantized.
void qwen3_vl_vision(InventoryBuilder& b) {
  const auto& v = b.config().vision;
  const std::string p = "model.visual.";
  const int64_t h = v.hidden, in = v.intermediate, m = h * v.spatial_merge_size * v.spatial_merge_size, o = v.out_hidden;
  b.plain(p + "patch_embed.proj.weight", {h, v.in_channels, v.temporal_patch_size, v.patch_size, v.patch_size}, R::Vision, -1);
  b.plain(p + "patch_embed.proj.bias", {h}, R::Vision, -1);
  if (v.num_position_embeddings > 0) b.plain(p + "pos_embed.weight", {v.num_position_embeddings, h}, R::Vision, -1);
  for (int k = 0; k < v.layers; ++k) {
    const std::string q = fmt::format("{}blocks.{}.", p, k);
    for (const char* n : {"norm1", "norm2"}) {
      b.plain(q + n + ".weight", {h}, R::Vision, -1);
      b.plain(q + n + ".bias", {h}, R::Vision, -1);
    }
    auto lin = [&](const std::string& n, int64_t out, int64_t inn) {
      b.plain(n + ".weight", {out, inn}, R::Vision, -1);
      b.plain(n + ".bias", {out}, R::Vision, -1);
    };
    lin(q + "attn.qkv", 3 * h, h);
    lin(q + "attn.proj", h, h);
    lin(q + "mlp.linear_fc1", in, h);
    lin(q + "mlp.linear_fc2", h, in);
  }
  auto merger = [&](const std::string& q, int64_t norm_dim) {
    b.plain(q + "norm.weight", {norm_dim}, R::Vision, -1);
    b.plain(q + "norm.bias", {norm_dim}, R::Vision, -1);
    b.plain(q + "linear_fc1.weight", {m, m}, R::Vision, -1);
    b.plain(q + "linear_fc1.bias", {m}, R::Vision, -1);
    b.plain(q + "linear_fc2.weight", {o, m}, R::Vision, -1);
    b.plain(q + "linear_fc2.bias", {o}, R::Vision, -1);
  };
  merger(p + "merger.", h);
  for (int k = 0; k < v.deepstack_mergers; ++k) merger(fmt::format("{}deepstack_merger_list.{}.", p, k), m);
}

// Gemma-4 (transformers models/gemma4/modeling_gemma4.py checkpoint names; vLLM
// model_executor/models/gemma4.py load_weights): per layer q/k/v/o (full-attention layers with
// attention_k_eq_v store no v_proj) with that layer's head_dim and KV heads, q_norm/k_norm [head_dim]
// (v_norm has no weight), gated MLP, four RMSNorms and layer_scalar [1]; with enable_moe_block a
// router (proj [E, H], scale [H], per_expert_scale [E]), experts fused as experts.gate_up_proj
// [E, 2I, H] / experts.down_proj [E, H, I] (unquantized) or one module per expert
// (experts.{e}.gate_proj/up_proj/down_proj) when quantized, and three more RMSNorms.
void gemma4_family(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    const auto& li = c.layers[i];
    const int64_t hd = li.head_dim > 0 ? li.head_dim : c.head_dim;
    const int64_t kv = li.kv_heads > 0 ? li.kv_heads : c.num_kv_heads;
    const bool k_eq_v = c.attention_k_eq_v && li.attn == AttnKind::Full;
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"})
      b.norm(p + n, H, i);
    b.plain(p + "layer_scalar", {1}, R::Norm, i);
    b.linear(p + "self_attn.q_proj", c.num_attention_heads * hd, H, R::AttnQ, i, -1, c.attention_bias);
    b.linear(p + "self_attn.k_proj", kv * hd, H, R::AttnKV, i, -1, c.attention_bias);
    if (!k_eq_v) b.linear(p + "self_attn.v_proj", kv * hd, H, R::AttnKV, i, -1, c.attention_bias);
    b.linear(p + "self_attn.o_proj", H, c.num_attention_heads * hd, R::AttnO, i, -1, c.attention_bias);
    b.norm(p + "self_attn.q_norm", hd, i);
    b.norm(p + "self_attn.k_norm", hd, i);
    gated_mlp(b, p + "mlp.", c.intermediate_size, i);
    if (!li.moe) continue;
    const int64_t E = c.num_experts, I = c.moe_intermediate_size;
    b.linear(p + "router.proj", E, H, R::Router, i, -1, false, /*never_quantized=*/true);
    b.plain(p + "router.scale", {H}, R::Router, i);
    b.plain(p + "router.per_expert_scale", {E}, R::Router, i);
    for (const char* n : {"post_feedforward_layernorm_1", "post_feedforward_layernorm_2", "pre_feedforward_layernorm_2"}) b.norm(p + n, H, i);
    if (quant_for_module(c.quant, p + "experts.0.gate_proj") == QuantMethod::None) {
      b.plain(p + "experts.gate_up_proj", {E, 2 * I, H}, R::ExpertColumn, i);
      b.plain(p + "experts.down_proj", {E, H, I}, R::ExpertRow, i);
    } else {
      for (int e = 0; e < E; ++e) gated_mlp(b, fmt::format("{}experts.{}.", p, e), I, i, R::ExpertColumn, R::ExpertRow, e);
    }
  }
}

// MiMo-V2-Flash (vLLM model_executor/models/mimo_v2_flash.py load_weights names): q/k proj with
// head_dim, v proj with v_head_dim, o_proj from heads x v_head_dim, the layer's KV heads (sliding
// layers: swa_num_key_value_heads), attention_sink_bias [heads] on sliding layers
// (add_swa_attention_sink_bias), MoE gate + e_score_correction_bias (vLLM allocates both in
// moe_router_dtype, float32 by default; the checkpoint's dtype for them is a guess: F32) and one module per
// expert, or a dense MLP where moe_layer_freq is 0. MTP weights ("mtp" names) are skipped by vLLM's
// loader and are not listed (the config has no count for them).
void mimo_v2_family(InventoryBuilder& b, bool sink_bias) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, nh = c.num_attention_heads, hd = c.head_dim, vd = c.v_head_dim;
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = L(c, i);
    const auto& li = c.layers[i];
    const int64_t kv = li.kv_heads > 0 ? li.kv_heads : c.num_kv_heads;
    b.norm(p + "input_layernorm", H, i);
    b.norm(p + "post_attention_layernorm", H, i);
    b.linear(p + "self_attn.q_proj", nh * hd, H, R::AttnQ, i, -1, c.attention_bias);
    b.linear(p + "self_attn.k_proj", kv * hd, H, R::AttnKV, i, -1, c.attention_bias);
    b.linear(p + "self_attn.v_proj", kv * vd, H, R::AttnKV, i, -1, c.attention_bias);
    b.linear(p + "self_attn.o_proj", H, nh * vd, R::AttnO, i);
    if (sink_bias && li.attn == AttnKind::Sliding) b.plain(p + "self_attn.attention_sink_bias", {nh}, R::AttnO, i);
    if (li.moe) {
      b.plain_dtype(p + "mlp.gate.weight", {c.num_experts, H}, DType::F32, R::Router, i);
      b.plain_dtype(p + "mlp.gate.e_score_correction_bias", {c.num_experts}, DType::F32, R::Router, i);
      per_expert_mlps(b, p + "mlp.", i);
    } else {
      gated_mlp(b, p + "mlp.", c.intermediate_size, i);
    }
  }
}

// Qwen2.5-VL vision tower (see parse_qwen2_5_vl_vision in vision.cpp), kept unquantized. The
// Qwen/Qwen2.5-VL-* checkpoints name it visual.* at the root, next to model.layers.* and lm_head
// (the module tree of transformers' Qwen2_5_VLForConditionalGeneration as those files were saved).
void qwen2_5_vl_vision(InventoryBuilder& b) {
  const auto& v = b.config().vision;
  const std::string p = "visual.";
  const int64_t h = v.hidden, in = v.intermediate, m = h * v.spatial_merge_size * v.spatial_merge_size, o = v.out_hidden;
  b.plain(p + "patch_embed.proj.weight", {h, v.in_channels, v.temporal_patch_size, v.patch_size, v.patch_size}, R::Vision, -1);
  auto lin = [&](const std::string& n, int64_t out, int64_t inn) {
    b.plain(n + ".weight", {out, inn}, R::Vision, -1);
    b.plain(n + ".bias", {out}, R::Vision, -1);
  };
  for (int k = 0; k < v.layers; ++k) {
    const std::string q = fmt::format("{}blocks.{}.", p, k);
    b.plain(q + "norm1.weight", {h}, R::Vision, -1);
    b.plain(q + "norm2.weight", {h}, R::Vision, -1);
    lin(q + "attn.qkv", 3 * h, h);
    lin(q + "attn.proj", h, h);
    lin(q + "mlp.gate_proj", in, h);
    lin(q + "mlp.up_proj", in, h);
    lin(q + "mlp.down_proj", h, in);
  }
  b.plain(p + "merger.ln_q.weight", {h}, R::Vision, -1);
  lin(p + "merger.mlp.0", m, m);
  lin(p + "merger.mlp.2", o, m);
}

// Gemma-4 vision tower + embed_vision projector (see parse_gemma4_vision in vision.cpp), unquantized
// (the NVFP4 checkpoints exclude model.vision_tower* and model.embed_vision*).
void gemma4_vision(InventoryBuilder& b) {
  const auto& v = b.config().vision;
  const std::string p = "model.vision_tower.";
  const int64_t h = v.hidden, hd = v.head_dim;
  b.plain(p + "patch_embedder.input_proj.weight", {h, 3 * v.patch_size * v.patch_size}, R::Vision, -1);
  b.plain(p + "patch_embedder.position_embedding_table", {2, v.num_position_embeddings, h}, R::Vision, -1);
  for (int k = 0; k < v.layers; ++k) {
    const std::string q = fmt::format("{}encoder.layers.{}.", p, k);
    b.plain(q + "self_attn.q_proj.linear.weight", {v.heads * hd, h}, R::Vision, -1);
    b.plain(q + "self_attn.k_proj.linear.weight", {v.kv_heads * hd, h}, R::Vision, -1);
    b.plain(q + "self_attn.v_proj.linear.weight", {v.kv_heads * hd, h}, R::Vision, -1);
    b.plain(q + "self_attn.o_proj.linear.weight", {h, v.heads * hd}, R::Vision, -1);
    b.plain(q + "self_attn.q_norm.weight", {hd}, R::Vision, -1);
    b.plain(q + "self_attn.k_norm.weight", {hd}, R::Vision, -1);
    b.plain(q + "mlp.gate_proj.linear.weight", {v.intermediate, h}, R::Vision, -1);
    b.plain(q + "mlp.up_proj.linear.weight", {v.intermediate, h}, R::Vision, -1);
    b.plain(q + "mlp.down_proj.linear.weight", {h, v.intermediate}, R::Vision, -1);
    for (const char* n : {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"})
      b.plain(q + n + ".weight", {h}, R::Vision, -1);
  }
  if (v.standardize) {
    b.plain(p + "std_bias", {h}, R::Vision, -1);
    b.plain(p + "std_scale", {h}, R::Vision, -1);
  }
  b.plain("model.embed_vision.embedding_projection.weight", {v.out_hidden, h}, R::Vision, -1);
}

// Gemma-3 SigLIP vision tower + multi-modal projector (see parse_gemma3_vision in vision.cpp), unquantized;
// names as transformers >= 4.52 saves Gemma3ForConditionalGeneration (model.vision_tower.vision_model.*).
void gemma3_vision(InventoryBuilder& b) {
  const auto& v = b.config().vision;
  const std::string p = "model.vision_tower.vision_model.";
  const int64_t h = v.hidden, i = v.intermediate;
  auto lin = [&](const std::string& n, int64_t out, int64_t in) {
    b.plain(n + ".weight", {out, in}, R::Vision, -1);
    b.plain(n + ".bias", {out}, R::Vision, -1);
  };
  auto ln = [&](const std::string& n) {
    b.plain(n + ".weight", {h}, R::Vision, -1);
    b.plain(n + ".bias", {h}, R::Vision, -1);
  };
  b.plain(p + "embeddings.patch_embedding.weight", {h, v.in_channels, v.patch_size, v.patch_size}, R::Vision, -1);
  b.plain(p + "embeddings.patch_embedding.bias", {h}, R::Vision, -1);
  b.plain(p + "embeddings.position_embedding.weight", {v.num_position_embeddings, h}, R::Vision, -1);
  for (int k = 0; k < v.layers; ++k) {
    const std::string q = fmt::format("{}encoder.layers.{}.", p, k);
    for (const char* n : {"q_proj", "k_proj", "v_proj", "out_proj"}) lin(q + "self_attn." + n, h, h);
    lin(q + "mlp.fc1", i, h);
    lin(q + "mlp.fc2", h, i);
    ln(q + "layer_norm1");
    ln(q + "layer_norm2");
  }
  ln(p + "post_layernorm");
  b.plain("model.multi_modal_projector.mm_input_projection_weight", {h, v.out_hidden}, R::Vision, -1);
  b.plain("model.multi_modal_projector.mm_soft_emb_norm.weight", {h}, R::Vision, -1);
}

// Mistral-3 pixtral tower + multi-modal projector (see parse_pixtral_vision in vision.cpp), unquantized;
// names as the transformers 4.50 Mistral-Small-3.1 checkpoint holds them.
void pixtral_vision(InventoryBuilder& b) {
  const auto& v = b.config().vision;
  const int64_t h = v.hidden, i = v.intermediate, a = v.heads * v.head_dim, t = v.out_hidden, m = v.spatial_merge_size;
  b.plain("vision_tower.patch_conv.weight", {h, v.in_channels, v.patch_size, v.patch_size}, R::Vision, -1);
  b.plain("vision_tower.ln_pre.weight", {h}, R::Vision, -1);
  for (int k = 0; k < v.layers; ++k) {
    const std::string q = fmt::format("vision_tower.transformer.layers.{}.", k);
    b.plain(q + "attention_norm.weight", {h}, R::Vision, -1);
    b.plain(q + "ffn_norm.weight", {h}, R::Vision, -1);
    b.plain(q + "attention.q_proj.weight", {a, h}, R::Vision, -1);
    b.plain(q + "attention.k_proj.weight", {a, h}, R::Vision, -1);
    b.plain(q + "attention.v_proj.weight", {a, h}, R::Vision, -1);
    b.plain(q + "attention.o_proj.weight", {h, a}, R::Vision, -1);
    b.plain(q + "feed_forward.gate_proj.weight", {i, h}, R::Vision, -1);
    b.plain(q + "feed_forward.up_proj.weight", {i, h}, R::Vision, -1);
    b.plain(q + "feed_forward.down_proj.weight", {h, i}, R::Vision, -1);
  }
  const std::string p = "multi_modal_projector.";
  b.plain(p + "norm.weight", {h}, R::Vision, -1);
  b.plain(p + "patch_merger.merging_layer.weight", {h, h * m * m}, R::Vision, -1);
  b.plain(p + "linear_1.weight", {t, h * v.feature_layers}, R::Vision, -1);
  b.plain(p + "linear_2.weight", {t, t}, R::Vision, -1);
  if (v.projector_bias) {
    b.plain(p + "linear_1.bias", {t}, R::Vision, -1);
    b.plain(p + "linear_2.bias", {t}, R::Vision, -1);
  }
}

}  // namespace

void add_family_tensors(InventoryBuilder& b) {
  const auto& c = b.config();
  const int64_t H = c.hidden_size, V = c.vocab_size;
  // Embedding, final norm, lm_head (embeddings/lm_head are never quantized by these formats).
  if (c.family == "nemotron_h") {
    b.plain("backbone.embeddings.weight", {V, H}, R::Embedding, -1);
  } else if (c.family == "deepseek_v4") {
    b.plain("embed.weight", {V, H}, R::Embedding, -1);
  } else {
    b.plain(c.text_prefix + "embed_tokens.weight", {V, H}, R::Embedding, -1);
  }
  const std::string& f = c.family;
  if (f == "deepseek") deepseek_family(b);
  else if (f == "glm4_moe") glm4_moe_family(b);
  else if (f == "llama" || f == "phi3" || f == "gemma2" || f == "gemma3") dense_family(b);
  else if (f == "mixtral" || f == "minimax_m2") mixtral_family(b);
  else if (f == "qwen_moe") qwen_moe_family(b);
  else if (f == "qwen3_next") qwen3_next_family(b);
  else if (f == "gpt_oss") gpt_oss_family(b);
  else if (f == "llama4") llama4_family(b);
  else if (f == "nemotron_h") nemotron_h_family(b);
  else if (f == "gemma4") gemma4_family(b);
  else if (f == "mimo_v2") mimo_v2_family(b, c.mimo_swa_sink_bias);
  else if (f == "deepseek_v4") deepseek_v4_family(b);
  else if (f == "nemotron_nas") nemotron_nas_family(b);
  else fail_input(c.source, "architectures", "no tensor layout for family " + f);
  if (c.family == "nemotron_h") b.plain("backbone.norm_f.weight", {H}, R::Norm, -1);
  else if (c.architecture != "OlmoForCausalLM") b.plain(c.text_prefix + "norm.weight", {H}, R::Norm, -1);
  if (!c.tie_word_embeddings) b.plain(c.lm_head_name + ".weight", {V, H}, R::LmHead, -1);
  if (c.vision.kind == "qwen3_vl") qwen3_vl_vision(b);
  if (c.vision.kind == "gemma4") gemma4_vision(b);
  if (c.vision.kind == "qwen2_5_vl") qwen2_5_vl_vision(b);
  if (c.vision.kind == "gemma3_siglip") gemma3_vision(b);
  if (c.vision.kind == "pixtral") pixtral_vision(b);
}

}  // namespace headroom::model_detail
