// A model as headroom sees it: the normalized architecture facts read from a Hugging Face
// config.json (+ quantization config), and the tensor inventory of its checkpoint.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "headroom/dtype.h"

namespace headroom {

enum class QuantMethod { None, Fp8PerTensor, Fp8Block, Nvfp4, Mxfp4, Awq, Gptq, Other,
                         Fp8PerChannel,  // compressed-tensors / modelopt FP8 with one F32 scale per output row
                         CtInt4 };       // compressed-tensors pack-quantized int4 (Kimi-K2.5): I32 packed + BF16 group scales
std::string_view quant_method_name(QuantMethod m);

struct Quantization {
  QuantMethod method = QuantMethod::None;
  std::string raw_method;              // as written: "fp8", "modelopt", "mxfp4", "awq", ...
  int bits = 16;                       // weight bits of quantized linears
  int group_size = 0;                  // NVFP4 16, MXFP4 32, AWQ/GPTQ 128
  int block_n = 0, block_k = 0;        // FP8 block scales (128 x 128)
  bool desc_act = false;               // GPTQ act-order (adds g_idx)
  std::vector<std::string> exclude;    // module patterns left unquantized (fnmatch style)
  std::string kv_cache_quant;          // "FP8" when the checkpoint asks for an FP8 KV cache
  // When config.json has a quantization_config as well as an hf_quant_config.json, the KV-cache
  // quantization config.json states ("" = none): vLLM and SGLang read config.json first
  // (model_loader/weight_utils.py get_quant_config), TensorRT-LLM reads hf_quant_config.json first.
  std::optional<std::string> kv_cache_quant_config_json;
  // The KV-cache quantization vLLM and SGLang see.
  const std::string& kv_cache_quant_hf_loaders() const { return kv_cache_quant_config_json ? *kv_cache_quant_config_json : kv_cache_quant; }
  std::string source;                  // "config.json:quantization_config" | "hf_quant_config.json"
  // ModelOpt MIXED_PRECISION: exact module name -> method (modules not listed stay unquantized).
  std::vector<std::pair<std::string, QuantMethod>> per_module;
  bool awq_zero_point = true;          // AWQ / compressed-tensors asymmetric: stores zeros
};

// Storage of the Linear module `module` (checkpoint name without ".weight"): per_module lookup
// for mixed precision, else the method unless an exclude pattern matches the module or a parent.
QuantMethod quant_for_module(const Quantization& q, std::string_view module);
// fnmatch-style match ('*', '?', '[...]') used for exclude lists.
bool glob_match(std::string_view pattern, std::string_view text);

enum class AttnKind : uint8_t { Full, Sliding, Chunked, Linear, None };

struct LayerInfo {
  AttnKind attn = AttnKind::Full;
  bool moe = false;
  bool indexer = false;  // DSA/NSA indexer keys cached for this layer
  bool has_mlp = true;   // false for Nemotron-H mamba/attention-only blocks
  int64_t kv_heads = 0;  // this layer's KV heads when it differs from the model's (Gemma-4 global layers); 0 = model value
  int64_t head_dim = 0;  // this layer's head_dim when it differs; 0 = model value
  int compress_ratio = 0;  // DeepSeek-V4 compress_ratios[i]: 0 = sliding window only, 4 = CSA (+ indexer), 128 = HCA
  // Nemotron-NAS (DeciLM block_configs[i]): this layer's gated-MLP width from ffn_mult (0 = the model's
  // intermediate_size), and blocks replaced by one hidden x hidden linear (attention or FFN).
  int64_t ffn_intermediate = 0;
  bool attn_linear = false;
  bool ffn_linear = false;
};

struct VisionTower {
  bool present = false;
  int64_t params = 0;    // parameter count of the vision tower + projector, from its config
  int64_t layers = 0, hidden = 0, intermediate = 0;
  // What vision_config.num_hidden_layers holds (vt_num_hidden_layers for MoonViT), 0 when the file has
  // no such key: the depth SGLang's VLM memory adjustment reads with getattr(..., 24). Qwen2.5-VL /
  // Qwen3-VL / Qwen3.5 towers spell their depth "depth" (transformers Qwen2_5_VLVisionConfig,
  // Qwen3VLVisionConfig), so SGLang counts them as 24 layers whatever `layers` says.
  int64_t config_num_hidden_layers = 0;
  // Added by the model reader: the Qwen3-VL / Qwen3.5 vision layout the inventory spells out.
  std::string kind;  // "qwen3_vl" / "qwen2_5_vl" / "gemma4" / "gemma3_siglip" / "pixtral" when modelled tensor by tensor; empty when only present
  int64_t in_channels = 3, patch_size = 0, temporal_patch_size = 0, spatial_merge_size = 0;
  int64_t out_hidden = 0, num_position_embeddings = 0, deepstack_mergers = 0;
  // Gemma-4 vision tower ("gemma4"): attention heads and head_dim, standardize buffers; "qwen2_5_vl": num_heads.
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  bool standardize = false;
  // "pixtral" (Mistral-3): projector linear biases (multimodal_projector_bias) and the number of
  // vision feature layers linear_1 concatenates (vision_feature_layer: an int = 1, a list = its length).
  bool projector_bias = false;
  int64_t feature_layers = 1;
};

struct ModelConfig {
  std::string hf_id;          // when known
  std::string architecture;   // architectures[0], e.g. "GlmMoeDsaForCausalLM"
  std::string model_type;
  DType dtype = DType::BF16;  // torch_dtype / dtype of unquantized weights

  int64_t hidden_size = 0, num_layers = 0, vocab_size = 0, max_position_embeddings = 0;
  int64_t num_attention_heads = 0, num_kv_heads = 0, head_dim = 0, v_head_dim = 0;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // qkv bias
  bool qk_norm = false;
  int64_t intermediate_size = 0;  // dense MLP

  // Mixture of experts
  int64_t num_experts = 0, experts_per_token = 0, moe_intermediate_size = 0;
  int64_t num_shared_experts = 0, shared_expert_intermediate_size = 0;
  int64_t first_k_dense = 0, moe_layer_freq = 1;

  // Multi-head latent attention (DeepSeek, Kimi, GLM-5)
  bool mla = false;
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0;

  // DSA / NSA sparse-attention indexer (DeepSeek-V3.2, GLM-5)
  int64_t index_n_heads = 0, index_head_dim = 0, index_topk = 0;

  // Windowed attention
  int64_t sliding_window = 0;       // tokens; 0 = none
  int64_t attention_chunk_size = 0; // Llama-4 chunked local attention

  // Linear attention / Mamba state (per request, per linear layer)
  int64_t linear_num_key_heads = 0, linear_num_value_heads = 0;
  int64_t linear_key_head_dim = 0, linear_value_head_dim = 0, linear_conv_kernel_dim = 0;
  int64_t mamba_num_heads = 0, mamba_head_dim = 0, mamba_state_size = 0, mamba_n_groups = 0;
  int64_t mamba_conv_kernel = 0, mamba_d_inner = 0;

  int64_t num_nextn_predict_layers = 0;  // MTP layers stored in the checkpoint

  // rope_scaling / rope_parameters as written (type, factor, original_max_position_embeddings);
  // the engines derive their context limit from them (vLLM _get_and_verify_max_len).
  std::string rope_scaling_type;  // "" when the config has none; "type" or "rope_type"
  double rope_scaling_factor = 0;  // 0 = not given
  int64_t rope_original_max_position_embeddings = 0;
  // Width of the RoPE cos/sin table the attention layers build at init (engines/rope_tables.cpp):
  // head_dim x partial_rotary_factor (rotary_dim / rotary_pct where the config says so); 0 = no RoPE.
  // rope_local_rotary_dim > 0: sliding-window layers build a second, default-type table (Gemma-3
  // rope_local_base_freq, Gemma-4 sliding_attention rope_parameters).
  int64_t rotary_dim = 0;
  int64_t rope_local_rotary_dim = 0;
  bool rope_mrope = false;  // multimodal RoPE (rope_scaling / rope_parameters carries mrope_section)

  // Gemma-4: full-attention layers store k_proj only and reuse K as V (attention_k_eq_v); their
  // head_dim / KV heads are in layers[i].head_dim / kv_heads (global_head_dim, num_global_key_value_heads).
  bool attention_k_eq_v = false;
  bool mimo_swa_sink_bias = false;  // MiMo-V2-Flash add_swa_attention_sink_bias: per-head sink on sliding layers

  // DeepSeek-V4 (family "deepseek_v4"): grouped low-rank output projection, hyper-connections,
  // hash-routed first layers, experts stored as MXFP4 when expert_dtype is "fp4".
  int64_t o_lora_rank = 0, o_groups = 0, hc_mult = 0, num_hash_layers = 0;
  bool expert_fp4 = false;
  std::vector<int> compress_ratios;  // the config's list as written (it may carry the MTP layer's entry)

  std::vector<LayerInfo> layers;  // num_layers entries
  Quantization quant;
  VisionTower vision;
  std::string source;  // file the config came from

  // Added by the model reader (naming and details the inventory needs).
  std::string family;               // "llama", "qwen_moe", "deepseek", "glm4_moe", "gpt_oss", "llama4", "gemma2", ...
  std::string text_prefix = "model.";  // checkpoint prefix of the decoder: "model.", "model.language_model.", ...
  std::string lm_head_name = "lm_head";
  bool mlp_bias = false;
  bool partial_qk_norm = false;     // OLMo-2 / MiniMax: q_norm/k_norm over all heads (not per head)
  int64_t mamba_chunk_size = 0;
  int64_t moe_latent_size = 0;      // Nemotron-3 LatentMoE: experts take a latent input of this size
  DType mamba_ssm_dtype = DType::F32;  // dtype of the SSM/recurrent state (config "mamba_ssm_dtype"/"mamba_ssm_cache_dtype")
  bool mamba_ssm_dtype_given = false;

  int64_t count_layers(AttnKind k) const;
  bool is_moe() const { return num_experts > 0; }
  bool has_indexer() const { return index_topk > 0 && index_head_dim > 0; }
  bool has_linear_attention() const { return count_layers(AttnKind::Linear) > 0; }
};

enum class TensorRole : uint8_t {
  Embedding, LmHead, Norm,
  AttnQ, AttnKV, AttnO, AttnLowRank,  // AttnLowRank: MLA q_a / kv_a (not split by TP in SGLang/vLLM)
  Indexer, LinearAttn,
  MlpColumn, MlpRow,                  // dense or shared-expert gate/up (column) and down (row)
  ExpertColumn, ExpertRow, Router,
  Mtp, Vision, Other
};

// The component a tensor role counts under in reports: "attention", "experts", "mlp", ...
std::string_view tensor_role_component(TensorRole r);

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::BF16;
  int64_t bytes = 0;
  TensorRole role = TensorRole::Other;
  int layer = -1;    // decoder layer index; >= num_layers for MTP layers; -1 outside layers
  int expert = -1;   // routed expert index, or -1
  int64_t params = 0;  // logical parameters this tensor stores (packed FP4 counts 2 per byte; scales count 0)
};

struct Model {
  ModelConfig config;
  std::vector<TensorInfo> tensors;
  bool from_safetensors = false;       // inventory read from safetensors headers
  std::vector<std::string> notes;      // disagreements between derived and real inventory, guesses
  // Set when the id asked for is not in the catalog and another entry stood in for it (a mirror
  // under another name, an official -FP8 sibling derived from its base, a dated re-release):
  // says which, and how sure that is. Empty for catalog ids, folders and config files.
  std::string resolved_note;
  // Set when an engine option rewrote config.json keys before the build (ConfigOverride).
  std::string override_note;
  int64_t params_total = 0;            // main model, without MTP layers
  int64_t params_mtp = 0;
  int64_t params_active = 0;           // per token (main model)
  int64_t checkpoint_bytes = 0;        // all tensors as stored (incl. MTP when present)
  int64_t checkpoint_bytes_mtp = 0;    // part of checkpoint_bytes in MTP layers
  int64_t params_embedding = 0;        // input embedding + lm_head (main model); published "active" counts often exclude them
};

// Keys an engine option writes over config.json before the model is built: vLLM's
// --hf-overrides and SGLang's --json-model-override-args. With into_sub_configs a nested
// sub-config (text_config, vision_config, ...) is updated key by key; any other value is replaced.
struct ConfigOverride {
  std::string json_text;     // a JSON object
  std::string option;        // the option it came from, for errors and notes
  bool into_sub_configs = false;
};

// Reads a model from: a catalog id ("nvidia/GLM-5-NVFP4", case-insensitive), a local folder
// holding config.json (+ hf_quant_config.json, *.safetensors, model.safetensors.index.json),
// or a config.json path, with `override` written over its config.json when given. Throws
// InputError naming the file, field and problem.
std::shared_ptr<const Model> load_model(std::string_view spec, const ConfigOverride* override = nullptr);

// Parses the normalized config from config.json text (+ optional hf_quant_config.json text).
ModelConfig parse_model_config(std::string_view config_json, std::string_view source,
                               std::string_view hf_quant_config_json = {});

// Catalog ids (data/models/<org>/<name>/config.json), sorted.
std::vector<std::string> model_catalog_ids();

}  // namespace headroom
