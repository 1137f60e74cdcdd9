// parse_model_config: normalizes a Hugging Face config.json (text_config nesting of VLMs,
// alternative key names of each family, per-layer attention/MoE/indexer pattern, quantization,
// vision tower) into ModelConfig. Key names and layer rules follow the transformers
// configuration_*.py / modeling_*.py of each family (cited where the rule is not obvious).
#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "headroom/error.h"
#include "headroom/model.h"
#include "model/model_internal.h"

namespace headroom {

int64_t ModelConfig::count_layers(AttnKind k) const {
  return std::count_if(layers.begin(), layers.end(), [k](const LayerInfo& l) { return l.attn == k; });
}

namespace model_detail {
namespace {

struct ArchRow {
  std::string_view arch;
  std::string_view family;
};
// Architectures the reader models (architectures[0] -> family). A new architecture that shares
// a family's tensor layout is a row here.
constexpr ArchRow kArchs[] = {
    {"LlamaForCausalLM", "llama"},          {"MistralForCausalLM", "llama"},
    {"Qwen2ForCausalLM", "llama"},          {"Qwen3ForCausalLM", "llama"},
    {"OlmoForCausalLM", "llama"},           {"Olmo2ForCausalLM", "llama"},
    {"Phi3ForCausalLM", "phi3"},            {"MixtralForCausalLM", "mixtral"},
    {"Qwen2MoeForCausalLM", "qwen_moe"},    {"Qwen3MoeForCausalLM", "qwen_moe"},
    {"Qwen3NextForCausalLM", "qwen3_next"}, {"Qwen3_5ForConditionalGeneration", "qwen3_next"},
    {"Qwen3_5MoeForConditionalGeneration", "qwen3_next"},
    {"Qwen3VLForConditionalGeneration", "llama"}, {"Qwen3VLMoeForConditionalGeneration", "qwen_moe"},
    {"Qwen2_5_VLForConditionalGeneration", "llama"},  // Qwen2 text model (qkv bias) + qwen2_5_vl tower
    {"DeepseekV2ForCausalLM", "deepseek"},  {"DeepseekV3ForCausalLM", "deepseek"},
    {"DeepseekV32ForCausalLM", "deepseek"}, {"KimiK25ForConditionalGeneration", "deepseek"},
    {"GlmMoeDsaForCausalLM", "deepseek"},   {"Glm4MoeForCausalLM", "glm4_moe"},
    {"GptOssForCausalLM", "gpt_oss"},       {"Llama4ForConditionalGeneration", "llama4"},
    {"Llama4ForCausalLM", "llama4"},        {"Gemma2ForCausalLM", "gemma2"},
    {"Gemma3ForCausalLM", "gemma3"},        {"Gemma3ForConditionalGeneration", "gemma3"},
    {"MiniMaxM2ForCausalLM", "minimax_m2"}, {"NemotronHForCausalLM", "nemotron_h"},
    {"Gemma4ForConditionalGeneration", "gemma4"}, {"Gemma4ForCausalLM", "gemma4"},
    {"MiMoV2FlashForCausalLM", "mimo_v2"},  {"DeepseekV4ForCausalLM", "deepseek_v4"},
    {"Mistral3ForConditionalGeneration", "llama"},  // Mistral text model + pixtral tower (vLLM mistral3.py)
    {"DeciLMForCausalLM", "nemotron_nas"},  // Nemotron-NAS: per-layer block_configs (config_nemotron_nas.cpp)
};

std::string supported_list() {
  std::string s;
  for (const auto& r : kArchs) s += (s.empty() ? "" : ", ") + std::string(r.arch);
  return s;
}

constexpr int64_t kMaxDim = 10'000'000;  // hidden/intermediate sizes above this are absurd
constexpr int64_t kMaxLayers = 10'000;
constexpr int64_t kMaxVocab = 100'000'000;
constexpr int64_t kMaxHeads = 100'000;

AttnKind attn_from_type(std::string_view t, std::string_view source, size_t i) {
  if (t == "full_attention" || t == "attention" || t == "global_attention" || t == "deepseek_sparse_attention") return AttnKind::Full;
  if (t == "sliding_attention" || t == "sliding_window_attention" || t == "local_attention") return AttnKind::Sliding;
  if (t == "chunked_attention") return AttnKind::Chunked;
  if (t == "linear_attention" || t == "mamba") return AttnKind::Linear;
  fail_input(source, fmt::format("layer_types[{}]", i), fmt::format("unknown layer type '{}'", t));
}

// Gemma-4 per-layer attention geometry, as vLLM's Gemma4DecoderLayer builds it (model_executor/models/
// gemma4.py): full_attention layers use global_head_dim; with attention_k_eq_v they store no v_proj (K
// is reused as V) and use num_global_key_value_heads KV heads, sliding layers use head_dim and
// num_key_value_heads. KV sharing (num_kv_shared_layers) and per-layer embeddings (hidden_size_per_layer_input,
// the E2B/E4B variants) change which layers own a KV cache and add tensors this reader does not model:
// refused rather than guessed.
void gemma4_layers(ModelConfig& c, const std::vector<const json*>& s, const std::string& tsrc) {
  if (!find_key(s, "layer_types")) fail_input(tsrc, "layer_types", "missing (Gemma-4 lists sliding/full attention per layer)");
  if (auto n = get_int(s, "num_kv_shared_layers", tsrc, 0, kMaxLayers); n && *n > 0)
    fail_input(tsrc, "num_kv_shared_layers", fmt::format("{}: Gemma-4 KV sharing across layers is not modelled (E2B/E4B variants)", *n));
  if (auto n = get_int(s, "hidden_size_per_layer_input", tsrc, 0, kMaxDim); n && *n > 0)
    fail_input(tsrc, "hidden_size_per_layer_input", fmt::format("{}: Gemma-4 per-layer embeddings are not modelled (E2B/E4B variants)", *n));
  const int64_t global_hd = get_int(s, "global_head_dim", tsrc, 1, kMaxDim).value_or(c.head_dim);
  c.attention_k_eq_v = get_bool(s, "attention_k_eq_v", tsrc).value_or(false);
  const int64_t global_kv = get_int(s, "num_global_key_value_heads", tsrc, 1, kMaxHeads).value_or(c.num_kv_heads);
  for (auto& li : c.layers) {
    if (li.attn != AttnKind::Full) continue;
    if (global_hd != c.head_dim) li.head_dim = global_hd;
    if (c.attention_k_eq_v && global_kv != c.num_kv_heads) li.kv_heads = global_kv;
  }
}

// MiMo-V2-Flash (vLLM model_executor/models/mimo_v2_flash.py MiMoV2FlashDecoderLayer):
// hybrid_layer_pattern[i] == 1 is a sliding-window layer (sliding_window_size) with
// swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim / swa_v_head_dim, otherwise a full
// layer with the model's heads, head_dim and v_head_dim. Only the KV-head count differs between the two
// in the catalog config; other per-layer differences have no field here and are refused.
void mimo_v2_layers(ModelConfig& c, const std::vector<const json*>& s, const std::string& tsrc) {
  const json* pat = find_key(s, "hybrid_layer_pattern");
  if (!pat || !pat->is_array() || static_cast<int64_t>(pat->size()) != c.num_layers)
    fail_input(tsrc, "hybrid_layer_pattern", fmt::format("must list one 0/1 entry per layer ({})", c.num_layers));
  auto same = [&](std::string_view k, int64_t model_value) {
    if (auto v = get_int(s, k, tsrc, 1, kMaxDim); v && *v != model_value)
      fail_input(tsrc, k, fmt::format("{} differs from the full-attention layers' {}: not modelled", *v, model_value));
  };
  same("swa_num_attention_heads", c.num_attention_heads);
  same("swa_head_dim", c.head_dim);
  same("swa_v_head_dim", c.v_head_dim);
  if (auto w = get_int(s, "sliding_window_size", tsrc, 1, int64_t{1} << 40)) c.sliding_window = *w;
  const int64_t swa_kv = get_int(s, "swa_num_key_value_heads", tsrc, 1, kMaxHeads).value_or(c.num_kv_heads);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    if (!(*pat)[i].is_number_integer()) fail_input(tsrc, "hybrid_layer_pattern", "must list integers");
    auto& li = c.layers[i];
    if ((*pat)[i].get<int64_t>() == 1) {
      li.attn = AttnKind::Sliding;
      if (swa_kv != c.num_kv_heads) li.kv_heads = swa_kv;
    } else {
      li.attn = AttnKind::Full;
    }
  }
}

}  // namespace
}  // namespace model_detail

ModelConfig parse_model_config(std::string_view config_json, std::string_view source, std::string_view hf_quant_config_json) {
  using namespace model_detail;
  std::string src(source);
  json root = parse_json(config_json, src);
  if (!root.is_object()) fail_input(src, "json", "config.json must be a JSON object");

  ModelConfig c;
  c.source = src;
  const json* text = nullptr;
  if (auto it = root.find("text_config"); it != root.end() && !it->is_null()) {
    if (!it->is_object()) fail_input(src, "text_config", "must be an object");
    text = &*it;
  }
  // text_config first (VLMs: Llama-4, Qwen3-VL, Qwen3.5, Gemma-3, Kimi-K2.5), then the root.
  std::vector<const json*> s{text, &root};
  std::string tsrc = text ? src + ": text_config" : src;

  // Architecture and family.
  const json* archs = find_key({&root}, "architectures");
  if (archs) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
      fail_input(src, "architectures", "must be a non-empty list of strings");
    c.architecture = (*archs)[0].get<std::string>();
  }
  c.model_type = get_string({&root}, "model_type", src).value_or("");
  if (c.architecture.empty()) fail_input(src, "architectures", "missing (cannot tell the model architecture)");
  for (const auto& r : kArchs)
    if (r.arch == c.architecture) c.family = std::string(r.family);
  if (c.family.empty())
    fail_input(src, "architectures", fmt::format("unknown or unsupported architecture '{}' (supported: {})", c.architecture, supported_list()));

  // Checkpoint naming of the decoder (module prefixes as the checkpoints name them).
  if (c.architecture == "Qwen3VLForConditionalGeneration" || c.architecture == "Qwen3VLMoeForConditionalGeneration" ||
      c.architecture == "Qwen3_5ForConditionalGeneration" || c.architecture == "Qwen3_5MoeForConditionalGeneration" ||
      c.architecture == "Gemma3ForConditionalGeneration" || c.architecture == "Gemma4ForConditionalGeneration") {
    c.text_prefix = "model.language_model.";
  } else if (c.family == "deepseek_v4") {
    // DeepSeek-V4 checkpoints keep the reference names (embed., layers., norm., head., mtp.): vLLM's
    // deepseek_v4.py WeightsMapper maps "layers." -> "model.layers.", "head.weight" -> "lm_head.weight".
    c.text_prefix = "";
    c.lm_head_name = "head";
  } else if (c.architecture == "Llama4ForConditionalGeneration" || c.architecture == "KimiK25ForConditionalGeneration" ||
             c.architecture == "Mistral3ForConditionalGeneration") {
    // Mistral-3 checkpoints saved by transformers 4.50 (Mistral-Small-3.1) name the decoder language_model.model.*.
    c.text_prefix = "language_model.model.";
    c.lm_head_name = "language_model.lm_head";
  }

  // Data type of unquantized weights.
  auto dt = get_string(s, "torch_dtype", src);
  if (!dt) dt = get_string(s, "dtype", src);
  if (dt) {
    auto d = parse_dtype(*dt);
    if (!d) fail_input(src, "torch_dtype", fmt::format("unknown dtype '{}'", *dt));
    c.dtype = *d;
  }

  // Core dimensions.
  auto req = [&](std::initializer_list<std::string_view> keys, int64_t min, int64_t max) -> int64_t {
    for (auto k : keys)
      if (auto v = get_int(s, k, tsrc, min, max)) return *v;
    fail_input(tsrc, *keys.begin(), "missing");
  };
  auto opt = [&](std::initializer_list<std::string_view> keys, int64_t min, int64_t max) -> std::optional<int64_t> {
    for (auto k : keys)
      if (auto v = get_int(s, k, tsrc, min, max)) return v;
    return std::nullopt;
  };
  // Gemma-3 configs name only what differs from transformers' Gemma3TextConfig defaults (google/gemma-3-12b-it's
  // text_config has no vocab_size or head_dim): configuration_gemma3.py Gemma3TextConfig.__init__ vocab_size=262_208,
  // hidden_size=2304, intermediate_size=9216, num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
  // head_dim=256, max_position_embeddings=131_072, sliding_window=4096 (sliding_window_pattern=6 below). vLLM and
  // SGLang read the config through transformers, so they see the same values.
  const bool gemma3_defaults = c.family == "gemma3";
  auto g3 = [&](std::initializer_list<std::string_view> keys, int64_t min, int64_t max, int64_t dflt) -> int64_t {
    if (!gemma3_defaults) return req(keys, min, max);
    for (auto k : keys)
      if (auto v = get_int(s, k, tsrc, min, max)) return *v;
    return dflt;
  };
  c.hidden_size = g3({"hidden_size", "n_embd", "d_model"}, 1, kMaxDim, 2304);
  if (auto n = opt({"num_hidden_layers", "n_layer", "num_layers"}, 1, kMaxLayers)) {
    c.num_layers = *n;
  } else if (gemma3_defaults) {
    c.num_layers = 26;
  } else if (const json* lbt = find_key(s, "layers_block_type"); lbt && lbt->is_array() && !lbt->empty() &&
                                                               static_cast<int64_t>(lbt->size()) <= kMaxLayers) {
    c.num_layers = static_cast<int64_t>(lbt->size());  // Nemotron-3 Ultra: num_hidden_layers null, one entry per layer
  } else {
    fail_input(tsrc, "num_hidden_layers", "missing");
  }
  c.vocab_size = g3({"vocab_size"}, 1, kMaxVocab, 262'208);
  c.max_position_embeddings =
      opt({"max_position_embeddings", "max_sequence_length", "seq_length"}, 1, int64_t{1} << 40).value_or(gemma3_defaults ? 131'072 : 0);
  // rope_scaling (transformers <= 4) or a flat rope_parameters (transformers 5); per-layer-type
  // rope_parameters (Gemma-4: {"full_attention": {...}, ...}) carry no type at the top and are skipped.
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const json* rs = find_key(s, key);
    if (!rs || !rs->is_object()) continue;
    std::string type;
    for (const char* tk : {"rope_type", "type"})
      if (auto it = rs->find(tk); it != rs->end() && it->is_string()) type = it->get<std::string>();
    if (type.empty()) continue;
    c.rope_scaling_type = type;
    if (auto it = rs->find("factor"); it != rs->end() && it->is_number()) {
      double f = it->get<double>();
      if (!(f > 0 && f <= 1e6)) fail_input(tsrc, std::string(key) + ".factor", fmt::format("{} is not in (0, 1e6]", f));
      c.rope_scaling_factor = f;
    }
    if (auto it = rs->find("original_max_position_embeddings"); it != rs->end() && it->is_number()) {
      double o = it->get<double>();  // some configs write it as a float (32768.0)
      if (!(o >= 1 && o <= static_cast<double>(int64_t{1} << 40)))
        fail_input(tsrc, std::string(key) + ".original_max_position_embeddings", fmt::format("{} is out of range", o));
      c.rope_original_max_position_embeddings = static_cast<int64_t>(o);
    }
    break;
  }
  c.num_attention_heads = g3({"num_attention_heads", "n_head"}, 1, kMaxHeads, 8);
  c.num_kv_heads = opt({"num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num"}, 1, kMaxHeads)
                       .value_or(gemma3_defaults ? 4 : c.num_attention_heads);
  if (get_bool(s, "multi_query", tsrc).value_or(false)) c.num_kv_heads = 1;
  c.head_dim = opt({"head_dim", "attention_head_dim"}, 1, kMaxDim).value_or(gemma3_defaults ? 256 : 0);
  if (c.head_dim == 0) {
    if (c.hidden_size % c.num_attention_heads != 0)
      fail_input(tsrc, "head_dim", fmt::format("missing and hidden_size {} is not divisible by num_attention_heads {}", c.hidden_size, c.num_attention_heads));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  c.v_head_dim = opt({"v_head_dim"}, 1, kMaxDim).value_or(c.head_dim);
  c.tie_word_embeddings = get_bool(s, "tie_word_embeddings", src).value_or(c.family == "gemma2" || c.family == "gemma3" || c.family == "gemma4");
  c.attention_bias = get_bool(s, "attention_bias", tsrc).value_or(c.architecture == "Qwen2ForCausalLM" || c.architecture == "Qwen2MoeForCausalLM" ||
                                                         c.architecture == "Qwen2_5_VLForConditionalGeneration");
  c.mlp_bias = get_bool(s, "mlp_bias", tsrc).value_or(false);
  c.intermediate_size = opt({"intermediate_size_mlp"}, 1, kMaxDim).value_or(0);  // Llama-4 dense layers
  if (c.intermediate_size == 0)
    c.intermediate_size = opt({"intermediate_size", "ffn_hidden_size", "n_inner"}, 1, kMaxDim).value_or(gemma3_defaults ? 9216 : 0);
  c.qk_norm = c.architecture == "Qwen3ForCausalLM" || c.architecture == "Qwen3MoeForCausalLM" ||
              c.architecture == "Qwen3VLForConditionalGeneration" || c.architecture == "Qwen3VLMoeForConditionalGeneration" ||
              c.family == "qwen3_next" || c.family == "gemma3" || c.family == "gemma4" || c.architecture == "Olmo2ForCausalLM" ||
              c.family == "minimax_m2" || get_bool(s, "use_qk_norm", tsrc).value_or(false);
  // OLMo-2 and MiniMax-M2 normalize q/k over all heads at once (q_norm weight [heads*head_dim]).
  c.partial_qk_norm = c.architecture == "Olmo2ForCausalLM" || c.family == "minimax_m2";
  if (c.family == "glm4_moe") c.qk_norm = get_bool(s, "use_qk_norm", tsrc).value_or(false);
  if (c.family == "llama4") c.qk_norm = false;  // Llama-4's qk norm has no weights (L2Norm)

  // Gemma-4 (vLLM model_executor/models/gemma4.py, transformers modeling_gemma4.py): the MoE block
  // exists only with enable_moe_block; configs of dense variants still carry num_experts keys.
  const bool gemma4_moe = c.family == "gemma4" && get_bool(s, "enable_moe_block", tsrc).value_or(false);
  // Mixture of experts.
  c.num_experts = opt({"n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts"}, 0, 1'000'000).value_or(0);
  c.experts_per_token = opt({"num_experts_per_tok", "experts_per_token", "top_k_experts", "moe_topk"}, 0, 1'000'000).value_or(0);
  c.moe_intermediate_size = opt({"moe_intermediate_size"}, 1, kMaxDim).value_or(0);
  if (c.num_experts > 0 && c.moe_intermediate_size == 0) {
    // Mixtral / gpt-oss / MiniMax / Llama-4 use intermediate_size for the experts.
    c.moe_intermediate_size = opt({"intermediate_size"}, 1, kMaxDim).value_or(0);
    if (c.moe_intermediate_size == 0) fail_input(tsrc, "moe_intermediate_size", "missing for a mixture-of-experts model");
  }
  if (c.num_experts > 0 && c.experts_per_token == 0) fail_input(tsrc, "num_experts_per_tok", "missing for a mixture-of-experts model");
  if (c.experts_per_token > c.num_experts) fail_input(tsrc, "num_experts_per_tok", fmt::format("{} exceeds the {} experts", c.experts_per_token, c.num_experts));
  if (c.family == "gemma4" && !gemma4_moe) c.num_experts = c.experts_per_token = c.moe_intermediate_size = 0;
  c.num_shared_experts = opt({"n_shared_experts", "num_shared_experts"}, 0, 1024).value_or(0);
  c.shared_expert_intermediate_size = opt({"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"}, 0, kMaxDim).value_or(0);
  if (c.shared_expert_intermediate_size > 0 && c.num_shared_experts == 0) c.num_shared_experts = 1;
  if (c.num_shared_experts > 0 && c.shared_expert_intermediate_size == 0)
    c.shared_expert_intermediate_size = c.num_shared_experts * c.moe_intermediate_size;  // DeepSeekMoE: n_shared x moe_inter
  if (c.family == "llama4" && c.num_experts > 0) {
    // Llama-4: one shared expert of the expert size (transformers Llama4TextMoe.shared_expert).
    c.num_shared_experts = 1;
    c.shared_expert_intermediate_size = c.moe_intermediate_size;
  }
  c.first_k_dense = opt({"first_k_dense_replace"}, 0, kMaxLayers).value_or(0);
  // MiMo-V2-Flash lists moe_layer_freq per layer (a 0/1 list, read with the layer pattern below).
  if (c.family != "mimo_v2") c.moe_layer_freq = opt({"moe_layer_freq"}, 1, kMaxLayers).value_or(1);

  // MLA.
  c.kv_lora_rank = opt({"kv_lora_rank"}, 1, kMaxDim).value_or(0);
  c.mla = c.kv_lora_rank > 0;
  if (c.mla) {
    c.q_lora_rank = opt({"q_lora_rank"}, 1, kMaxDim).value_or(0);  // 0/null: q_proj without low rank (DeepSeek-V2-Lite)
    c.qk_nope_head_dim = req({"qk_nope_head_dim"}, 1, kMaxDim);
    c.qk_rope_head_dim = req({"qk_rope_head_dim"}, 1, kMaxDim);
    c.v_head_dim = req({"v_head_dim"}, 1, kMaxDim);
    c.head_dim = c.qk_nope_head_dim + c.qk_rope_head_dim;
  }

  // DSA indexer.
  c.index_topk = opt({"index_topk"}, 1, int64_t{1} << 30).value_or(0);
  if (c.index_topk > 0) {
    c.index_n_heads = req({"index_n_heads"}, 1, kMaxHeads);
    c.index_head_dim = req({"index_head_dim"}, 1, kMaxDim);
  }

  // Windows.
  c.sliding_window = opt({"sliding_window", "sliding_window_size"}, 0, int64_t{1} << 40).value_or(gemma3_defaults ? 4096 : 0);
  c.attention_chunk_size = opt({"attention_chunk_size"}, 0, int64_t{1} << 40).value_or(0);

  // Linear attention (Qwen3-Next / Qwen3.5 Gated DeltaNet) and Mamba-2 (Nemotron-H).
  c.linear_num_key_heads = opt({"linear_num_key_heads"}, 1, kMaxHeads).value_or(0);
  c.linear_num_value_heads = opt({"linear_num_value_heads"}, 1, kMaxHeads).value_or(0);
  c.linear_key_head_dim = opt({"linear_key_head_dim"}, 1, kMaxDim).value_or(0);
  c.linear_value_head_dim = opt({"linear_value_head_dim"}, 1, kMaxDim).value_or(0);
  c.linear_conv_kernel_dim = opt({"linear_conv_kernel_dim"}, 1, 1024).value_or(0);
  if (c.family == "nemotron_h") {
    c.mamba_num_heads = req({"mamba_num_heads"}, 1, kMaxHeads);
    c.mamba_head_dim = req({"mamba_head_dim"}, 1, kMaxDim);
    c.mamba_state_size = req({"ssm_state_size", "state_size"}, 1, kMaxDim);
    c.mamba_n_groups = req({"n_groups"}, 1, kMaxHeads);
    c.mamba_conv_kernel = req({"conv_kernel"}, 1, 1024);
    c.mamba_d_inner = c.mamba_num_heads * c.mamba_head_dim;
    c.mamba_chunk_size = opt({"chunk_size"}, 1, kMaxDim).value_or(0);
    c.moe_latent_size = opt({"moe_latent_size"}, 1, kMaxDim).value_or(0);
  }
  for (const char* k : {"mamba_ssm_dtype", "mamba_ssm_cache_dtype"}) {
    if (auto v = get_string(s, k, tsrc)) {
      auto d = parse_dtype(*v);
      if (!d) fail_input(tsrc, k, fmt::format("unknown dtype '{}'", *v));
      c.mamba_ssm_dtype = *d;
      c.mamba_ssm_dtype_given = true;
    }
  }

  c.num_nextn_predict_layers = opt({"num_nextn_predict_layers", "mtp_num_hidden_layers"}, 0, 64).value_or(0);

  // DeepSeek-V4 (vLLM model_executor/models/deepseek_v4.py DeepseekV4Attention / DeepseekV4MoE): one
  // latent KV head of head_dim (nope = head_dim - qk_rope_head_dim), wo_a/wo_b grouped output LoRA,
  // hc_mult hyper-connection streams, compress_ratios per layer. expert_dtype absent means "fp4" in vLLM
  // (DeepseekV4FP8Config); the sgl-project *-FP8 re-quantized configs (model_type deepseek_ref) omit it
  // and store FP8 experts (SGLang runs them with SGLANG_DSV4_FP4_EXPERTS=0), so only model_type
  // deepseek_v4 takes vLLM's default.
  if (c.family == "deepseek_v4") {
    c.qk_rope_head_dim = req({"qk_rope_head_dim"}, 1, kMaxDim);
    if (c.qk_rope_head_dim >= c.head_dim) fail_input(tsrc, "qk_rope_head_dim", "must be below head_dim");
    c.qk_nope_head_dim = c.head_dim - c.qk_rope_head_dim;
    c.q_lora_rank = req({"q_lora_rank"}, 1, kMaxDim);
    c.o_lora_rank = req({"o_lora_rank"}, 1, kMaxDim);
    c.o_groups = req({"o_groups"}, 1, kMaxHeads);
    c.hc_mult = req({"hc_mult"}, 1, 64);
    c.num_hash_layers = opt({"num_hash_layers"}, 0, kMaxLayers).value_or(0);
    if (c.num_attention_heads % c.o_groups != 0)
      fail_input(tsrc, "o_groups", fmt::format("{} does not divide num_attention_heads {}", c.o_groups, c.num_attention_heads));
    if (c.num_kv_heads != 1) fail_input(tsrc, "num_key_value_heads", fmt::format("{}: DeepSeek-V4 has one latent KV head", c.num_kv_heads));
    if (c.num_experts == 0) fail_input(tsrc, "n_routed_experts", "missing (DeepSeek-V4 is a mixture of experts)");
    auto ed = get_string(s, "expert_dtype", tsrc);
    if (ed && *ed != "fp4" && *ed != "fp8") fail_input(tsrc, "expert_dtype", fmt::format("'{}' (vLLM accepts fp4 or fp8)", *ed));
    c.expert_fp4 = ed ? *ed == "fp4" : c.model_type == "deepseek_v4";
  }

  // Per-layer pattern.
  const int64_t L = c.num_layers;
  c.layers.assign(static_cast<size_t>(L), LayerInfo{});
  if (c.family == "nemotron_h") {
    // hybrid_override_pattern: M = Mamba-2, * = attention, - = MLP, E = MoE (transformers
    // configuration_nemotron_h.py); one character per layer.
    auto pat = get_string(s, "hybrid_override_pattern", tsrc);
    if (!pat) {
      // Newer configs: layers_block_type = ["mamba", "moe", "attention", "mlp", ...].
      const json* lbt = find_key(s, "layers_block_type");
      if (!lbt) fail_input(tsrc, "hybrid_override_pattern", "missing (and no layers_block_type)");
      std::string p;
      for (const auto& t : get_string_list(lbt, "layers_block_type", tsrc)) {
        if (t == "mamba") p += 'M';
        else if (t == "attention") p += '*';
        else if (t == "mlp") p += '-';
        else if (t == "moe") p += 'E';
        else fail_input(tsrc, "layers_block_type", fmt::format("unknown block type '{}'", t));
      }
      pat = p;
    }
    if (static_cast<int64_t>(pat->size()) != L)
      fail_input(tsrc, "hybrid_override_pattern", fmt::format("has {} characters, num_hidden_layers is {}", pat->size(), L));
    for (int64_t i = 0; i < L; ++i) {
      auto& li = c.layers[i];
      switch ((*pat)[i]) {
        case 'M': li.attn = AttnKind::Linear; li.has_mlp = false; break;
        case '*': li.attn = AttnKind::Full; li.has_mlp = false; break;
        case '-': li.attn = AttnKind::None; break;
        case 'E': li.attn = AttnKind::None; li.moe = true; break;
        default: fail_input(tsrc, "hybrid_override_pattern", fmt::format("unknown layer code '{}' at {}", (*pat)[i], i));
      }
      if (li.moe && c.num_experts == 0) fail_input(tsrc, "n_routed_experts", "missing for MoE ('E') layers");
    }
  } else if (const json* lt = find_key(s, "layer_types")) {
    auto types = get_string_list(lt, "layer_types", tsrc);
    if (static_cast<int64_t>(types.size()) != L)
      fail_input(tsrc, "layer_types", fmt::format("has {} entries, num_hidden_layers is {}", types.size(), L));
    for (int64_t i = 0; i < L; ++i) c.layers[i].attn = attn_from_type(types[i], tsrc, i);
  } else if (c.family == "qwen3_next") {
    // Qwen3-Next: layer i is full attention when (i + 1) % full_attention_interval == 0, else Gated DeltaNet.
    int64_t every = req({"full_attention_interval"}, 1, kMaxLayers);
    for (int64_t i = 0; i < L; ++i) c.layers[i].attn = (i + 1) % every == 0 ? AttnKind::Full : AttnKind::Linear;
  } else if (c.family == "gemma2") {
    // transformers modeling_gemma2.py: even layers use the sliding window.
    for (int64_t i = 0; i < L; ++i) c.layers[i].attn = i % 2 == 0 ? AttnKind::Sliding : AttnKind::Full;
  } else if (c.family == "gemma3") {
    // Gemma-3: sliding unless (i + 1) % sliding_window_pattern == 0 (default 6).
    int64_t pat = opt({"sliding_window_pattern"}, 1, kMaxLayers).value_or(6);
    for (int64_t i = 0; i < L; ++i) c.layers[i].attn = (i + 1) % pat == 0 ? AttnKind::Full : AttnKind::Sliding;
  } else if (c.family == "llama4" && c.attention_chunk_size > 0) {
    // Llama-4: no_rope_layers[i] == 0 marks a global (NoPE) layer; default every 4th layer
    // (transformers configuration_llama4.py no_rope_layer_interval = 4). RoPE layers use chunked attention.
    const json* nrl = find_key(s, "no_rope_layers");
    for (int64_t i = 0; i < L; ++i) {
      bool rope = (i + 1) % 4 != 0;
      if (nrl && nrl->is_array() && static_cast<int64_t>(nrl->size()) == L && (*nrl)[i].is_number_integer())
        rope = (*nrl)[i].get<int64_t>() != 0;
      c.layers[i].attn = rope ? AttnKind::Chunked : AttnKind::Full;
    }
  } else if (c.sliding_window > 0 && get_bool(s, "use_sliding_window", tsrc).value_or(true) &&
             (c.architecture == "MistralForCausalLM" || c.family == "mixtral" || c.family == "phi3")) {
    for (auto& li : c.layers) li.attn = AttnKind::Sliding;  // every layer windowed (Mistral-7B-v0.1 style)
  }
  if (c.family == "gemma4") gemma4_layers(c, s, tsrc);
  if (c.family == "nemotron_nas") nemotron_nas_layers(c, find_key(s, "block_configs"), tsrc);
  if (c.family == "deepseek_v4") {
    const json* cr = find_key(s, "compress_ratios");
    // The list may carry one more entry (the MTP layer's); vLLM reads compress_ratios[layer_id] for the
    // main layers and uses 1 for MTP layers.
    if (!cr || !cr->is_array() || static_cast<int64_t>(cr->size()) < L)
      fail_input(tsrc, "compress_ratios", fmt::format("must list one entry per layer ({})", L));
    for (int64_t i = 0; i < L; ++i) {
      if (!(*cr)[i].is_number_integer()) fail_input(tsrc, "compress_ratios", "must list integers");
      int64_t r = (*cr)[i].get<int64_t>();
      if (r != 0 && r != 1 && r != 4 && r != 128)
        fail_input(tsrc, fmt::format("compress_ratios[{}]", i), fmt::format("{}: vLLM and SGLang support 0/1, 4 and 128", r));
      c.layers[i].compress_ratio = r <= 1 ? 0 : static_cast<int>(r);
    }
    if (cr->size() > static_cast<size_t>(L) + 64) fail_input(tsrc, "compress_ratios", "has more entries than layers + MTP layers");
    for (const auto& e : *cr) {
      if (!e.is_number_integer()) fail_input(tsrc, "compress_ratios", "must list integers");
      int64_t r = e.get<int64_t>();
      if (r != 0 && r != 1 && r != 4 && r != 128) fail_input(tsrc, "compress_ratios", fmt::format("{}: vLLM and SGLang support 0/1, 4 and 128", r));
      c.compress_ratios.push_back(static_cast<int>(r));
    }
  }
  if (c.family == "mimo_v2") {
    mimo_v2_layers(c, s, tsrc);
    c.mimo_swa_sink_bias = get_bool(s, "add_swa_attention_sink_bias", tsrc).value_or(false);
  }
  if (c.count_layers(AttnKind::Sliding) == 0 && c.count_layers(AttnKind::Chunked) == 0) {
    // A window without windowed layers is irrelevant (Qwen2 sets sliding_window but use_sliding_window=false).
    if (c.family != "gemma2" && c.family != "gemma3" && c.family != "gemma4" && c.family != "mimo_v2" && c.family != "deepseek_v4")
      c.sliding_window = 0;
  } else if (c.count_layers(AttnKind::Sliding) > 0 && c.sliding_window == 0) {
    fail_input(tsrc, "sliding_window", "missing although some layers use sliding-window attention");
  }
  if (c.count_layers(AttnKind::Linear) > 0 && c.family == "qwen3_next" &&
      (c.linear_num_key_heads == 0 || c.linear_num_value_heads == 0 || c.linear_key_head_dim == 0 ||
       c.linear_value_head_dim == 0 || c.linear_conv_kernel_dim == 0))
    fail_input(tsrc, "linear_num_key_heads", "linear-attention layers need linear_num_key_heads/value_heads/key_head_dim/value_head_dim/conv_kernel_dim");

  // MoE layers.
  if (c.num_experts > 0 && c.family != "nemotron_h") {
    if (c.family == "mimo_v2") {
      // moe_layer_freq[i] != 0 marks a MoE layer (vLLM mimo_v2_flash.py is_moe_layer).
      const json* f = find_key(s, "moe_layer_freq");
      if (!f || !f->is_array() || static_cast<int64_t>(f->size()) != L)
        fail_input(tsrc, "moe_layer_freq", fmt::format("must list one 0/1 entry per layer ({})", L));
      for (int64_t i = 0; i < L; ++i) {
        if (!(*f)[i].is_number_integer()) fail_input(tsrc, "moe_layer_freq", "must list integers");
        c.layers[i].moe = (*f)[i].get<int64_t>() != 0;
      }
    } else if (const json* mlt = find_key(s, "mlp_layer_types")) {  // GLM-5.2: "dense" / "sparse"
      auto types = get_string_list(mlt, "mlp_layer_types", tsrc);
      if (static_cast<int64_t>(types.size()) != L)
        fail_input(tsrc, "mlp_layer_types", fmt::format("has {} entries, num_hidden_layers is {}", types.size(), L));
      for (int64_t i = 0; i < L; ++i) c.layers[i].moe = types[i] == "sparse";
    } else if (c.family == "deepseek" || c.family == "glm4_moe" || c.family == "deepseek_v4") {
      // DeepseekV3: MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
      for (int64_t i = 0; i < L; ++i) c.layers[i].moe = i >= c.first_k_dense && i % c.moe_layer_freq == 0;
    } else if (c.family == "qwen_moe" || c.family == "qwen3_next") {
      // Qwen MoE: MoE unless i in mlp_only_layers, and (i + 1) % decoder_sparse_step == 0.
      int64_t step = opt({"decoder_sparse_step"}, 1, kMaxLayers).value_or(1);
      std::vector<int64_t> only;
      if (const json* m = find_key(s, "mlp_only_layers")) {
        if (!m->is_array()) fail_input(tsrc, "mlp_only_layers", "must be a list of layer indices");
        for (const auto& e : *m) {
          if (!e.is_number_integer()) fail_input(tsrc, "mlp_only_layers", "must be a list of layer indices");
          only.push_back(e.get<int64_t>());
        }
      }
      for (int64_t i = 0; i < L; ++i)
        c.layers[i].moe = std::find(only.begin(), only.end(), i) == only.end() && (i + 1) % step == 0;
    } else if (c.family == "llama4") {
      // Llama-4: moe_layers = range(step - 1, L, step) (configuration_llama4.py).
      int64_t step = opt({"interleave_moe_layer_step"}, 1, kMaxLayers).value_or(1);
      for (int64_t i = 0; i < L; ++i) c.layers[i].moe = (i + 1) % step == 0;
    } else {
      for (auto& li : c.layers) li.moe = true;  // Mixtral, gpt-oss, MiniMax: every layer
    }
  }
  bool any_dense = std::any_of(c.layers.begin(), c.layers.end(), [](const LayerInfo& l) { return !l.moe && l.has_mlp; });
  if (any_dense && c.intermediate_size == 0) fail_input(tsrc, "intermediate_size", "missing");

  // Indexer layers: all, unless GLM-5.2 IndexShare lists indexer_types ("full" layers own an indexer cache).
  if (c.has_indexer()) {
    if (const json* it = find_key(s, "indexer_types")) {
      auto types = get_string_list(it, "indexer_types", tsrc);
      if (static_cast<int64_t>(types.size()) != L)
        fail_input(tsrc, "indexer_types", fmt::format("has {} entries, num_hidden_layers is {}", types.size(), L));
      for (int64_t i = 0; i < L; ++i) c.layers[i].indexer = types[i] == "full";
    } else if (c.family == "deepseek_v4") {
      // Only compress-ratio-4 (CSA) layers own an indexer (vLLM DeepseekV4Attention: "Only C4A uses sparse attention").
      for (auto& li : c.layers) li.indexer = li.compress_ratio == 4;
    } else {
      for (auto& li : c.layers) li.indexer = true;
    }
  }

  parse_rope(c, s, tsrc);

  // Quantization: config.json quantization_config (root or text_config) and/or hf_quant_config.json.
  const json* qc = find_key({&root, text}, "quantization_config");
  std::string hq_src = src;
  if (auto p = hq_src.rfind("config.json"); p != std::string::npos && p + 11 == hq_src.size()) hq_src = hq_src.substr(0, p) + "hf_quant_config.json";
  else hq_src = "hf_quant_config.json";
  c.quant = parse_quantization(qc, src, hf_quant_config_json, hq_src);

  // Vision tower.
  if (auto it = root.find("vision_config"); it != root.end() && !it->is_null())
    c.vision = parse_vision(&*it, c.architecture, c.hidden_size, src + ": vision_config", &root);

  return c;
}

}  // namespace headroom
