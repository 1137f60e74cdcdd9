// Vision tower facts from vision_config. The Qwen3-VL / Qwen3.5 tower (transformers
// models/qwen3_vl/modeling_qwen3_vl.py: Qwen3VLVisionModel) and the Qwen2.5-VL tower
// (models/qwen2_5_vl/modeling_qwen2_5_vl.py: Qwen2_5_VisionTransformerPretrainedModel; vLLM
// model_executor/models/qwen2_5_vl.py Qwen2_5_VisionTransformer) are modelled tensor by tensor;
// the Gemma-3 SigLIP and Mistral-3 pixtral towers likewise; other towers are recorded as present, their parameters unknown (the inventory says so).
#include <fmt/format.h>

#include "headroom/error.h"
#include "model/model_internal.h"

namespace headroom::model_detail {

namespace {

// A vision_config integer the tower layout cannot do without: one error line when absent.
int64_t required_int(const std::vector<const json*>& s, std::string_view k, std::string_view source, int64_t lo, int64_t hi) {
  auto x = get_int(s, k, source, lo, hi);
  if (!x) fail_input(source, k, "missing");
  return *x;
}

// Gemma-4 vision tower (transformers models/gemma4/modeling_gemma4.py: Gemma4VisionModel =
// Gemma4VisionPatchEmbedder (input_proj [H, 3 p^2], position_embedding_table [2, P, H]) + encoder layers
// (q/k/v/o Gemma4ClippableLinear without bias, q_norm/k_norm [head_dim], four RMSNorms [H], gated MLP)
// + std_bias/std_scale buffers when standardize) and the embed_vision projector
// (Gemma4MultimodalEmbedder.embedding_projection [text H, H]; its norm has no weight).
VisionTower parse_gemma4_vision(const std::vector<const json*>& s, int64_t text_hidden, std::string_view source) {
  VisionTower v;
  v.present = true;
  auto req = [&](std::string_view k, int64_t lo, int64_t hi) { return required_int(s, k, source, lo, hi); };
  v.kind = "gemma4";
  v.layers = req("num_hidden_layers", 1, 10'000);
  v.hidden = req("hidden_size", 1, 1'000'000);
  v.intermediate = req("intermediate_size", 1, 10'000'000);
  v.heads = req("num_attention_heads", 1, 100'000);
  v.kv_heads = get_int(s, "num_key_value_heads", source, 1, 100'000).value_or(v.heads);
  v.head_dim = get_int(s, "head_dim", source, 1, 1'000'000).value_or(v.hidden / v.heads);
  v.patch_size = req("patch_size", 1, 1024);
  v.num_position_embeddings = req("position_embedding_size", 1, 100'000'000);
  v.standardize = get_bool(s, "standardize", source).value_or(false);
  v.out_hidden = text_hidden;
  const int64_t h = v.hidden, i = v.intermediate, hd = v.head_dim;
  int64_t p = h * 3 * v.patch_size * v.patch_size + 2 * v.num_position_embeddings * h;  // patch embedder
  p += v.layers * (h * v.heads * hd * 2 + h * v.kv_heads * hd * 2 + 2 * hd + 3 * h * i + 4 * h);
  if (v.standardize) p += 2 * h;
  p += text_hidden * h;  // embed_vision.embedding_projection
  v.params = p;
  return v;
}

// Gemma-3 vision tower: a SigLIP encoder without its pooling head (vision_use_head false) and the
// Gemma3MultiModalProjector (transformers models/gemma3/modeling_gemma3.py; vLLM model_executor/models/
// gemma3_mm.py uses SiglipVisionModel + Gemma3MultiModalProjector). Tensors (models/siglip/modeling_siglip.py):
//   embeddings.patch_embedding      Conv2d(num_channels, hidden, patch, stride patch) + bias
//   embeddings.position_embedding   Embedding((image_size / patch_size)^2, hidden)
//   encoder.layers.N                layer_norm1/2 LayerNorm [hidden] (weight + bias); q/k/v/out_proj
//                                   Linear(hidden, hidden) + bias; mlp.fc1 Linear(hidden, intermediate) + bias,
//                                   mlp.fc2 Linear(intermediate, hidden) + bias
//   post_layernorm                  LayerNorm [hidden] (weight + bias)
//   multi_modal_projector           mm_input_projection_weight [hidden, text hidden], mm_soft_emb_norm [hidden]
// Missing keys take SiglipVisionConfig's defaults (configuration_siglip.py: hidden_size 768, intermediate_size
// 3072, num_hidden_layers 12, num_attention_heads 12, num_channels 3, image_size 224, patch_size 16).
VisionTower parse_gemma3_vision(const std::vector<const json*>& s, int64_t text_hidden, std::string_view source) {
  VisionTower v;
  v.present = true;
  v.kind = "gemma3_siglip";
  v.layers = get_int(s, "num_hidden_layers", source, 1, 10'000).value_or(12);
  v.hidden = get_int(s, "hidden_size", source, 1, 1'000'000).value_or(768);
  v.intermediate = get_int(s, "intermediate_size", source, 1, 10'000'000).value_or(3072);
  v.heads = get_int(s, "num_attention_heads", source, 1, 100'000).value_or(12);
  v.in_channels = get_int(s, "num_channels", source, 1, 64).value_or(3);
  v.patch_size = get_int(s, "patch_size", source, 1, 1024).value_or(16);
  const int64_t image = get_int(s, "image_size", source, 1, 100'000).value_or(224);
  if (image % v.patch_size != 0)
    fail_input(source, "image_size", fmt::format("{} is not a multiple of patch_size {}", image, v.patch_size));
  v.num_position_embeddings = (image / v.patch_size) * (image / v.patch_size);
  if (get_bool(s, "vision_use_head", source).value_or(true))
    fail_input(source, "vision_use_head", "true (a SigLIP pooling head) is not modelled; Gemma-3 checkpoints set it false");
  v.out_hidden = text_hidden;
  const int64_t h = v.hidden, i = v.intermediate;
  int64_t p = h * v.in_channels * v.patch_size * v.patch_size + h;  // patch_embedding conv2d + bias
  p += v.num_position_embeddings * h;                               // position_embedding
  p += v.layers * (4 * (h * h + h) + (i * h + i) + (h * i + h) + 4 * h);  // q/k/v/out, fc1, fc2, two LayerNorms
  p += 2 * h;                                                       // post_layernorm
  p += h * text_hidden + h;                                         // projector weight + soft-embedding norm
  v.params = p;
  return v;
}

// Mistral-3 (Mistral-Small-3.1) pixtral tower + Mistral3MultiModalProjector (transformers models/pixtral/
// modeling_pixtral.py PixtralVisionModel, models/mistral3/modeling_mistral3.py; vLLM model_executor/models/
// mistral3.py, pixtral.py PixtralHFVisionModel). No bias anywhere in the tower:
//   patch_conv                    Conv2d(num_channels, hidden, patch, stride patch), bias=False
//   ln_pre                        RMSNorm [hidden]; no position embedding (2-D rotary)
//   transformer.layers.N          attention_norm, ffn_norm RMSNorm [hidden]; attention q/k/v/o_proj
//                                 Linear(hidden, heads x head_dim); feed_forward gate/up/down (gated MLP)
//   multi_modal_projector         norm RMSNorm [hidden]; patch_merger.merging_layer Linear(hidden x merge^2,
//                                 hidden), no bias; linear_1 Linear(hidden x feature layers, text hidden) and
//                                 linear_2 Linear(text hidden, text hidden), bias = multimodal_projector_bias
// spatial_merge_size, multimodal_projector_bias and vision_feature_layer sit at the config's root
// (Mistral3Config defaults 2, true, -1: one feature layer unless a list names several).
VisionTower parse_pixtral_vision(const std::vector<const json*>& s, const json* root, int64_t text_hidden, std::string_view source) {
  VisionTower v;
  v.present = true;
  auto req = [&](std::string_view k, int64_t lo, int64_t hi) { return required_int(s, k, source, lo, hi); };
  v.kind = "pixtral";
  v.layers = req("num_hidden_layers", 1, 10'000);
  v.hidden = req("hidden_size", 1, 1'000'000);
  v.intermediate = req("intermediate_size", 1, 10'000'000);
  v.heads = req("num_attention_heads", 1, 100'000);
  v.head_dim = get_int(s, "head_dim", source, 1, 1'000'000).value_or(v.hidden / v.heads);
  v.in_channels = get_int(s, "num_channels", source, 1, 64).value_or(3);
  v.patch_size = req("patch_size", 1, 1024);
  v.out_hidden = text_hidden;
  std::vector<const json*> r{root};
  v.spatial_merge_size = root ? get_int(r, "spatial_merge_size", source, 1, 64).value_or(2) : 2;
  v.projector_bias = root ? get_bool(r, "multimodal_projector_bias", source).value_or(true) : true;
  v.feature_layers = 1;
  if (root)
    if (auto it = root->find("vision_feature_layer"); it != root->end() && it->is_array()) {
      if (it->empty()) fail_input(source, "vision_feature_layer", "an empty list");
      v.feature_layers = static_cast<int64_t>(it->size());
    }
  const int64_t h = v.hidden, i = v.intermediate, a = v.heads * v.head_dim, m = v.spatial_merge_size, t = text_hidden;
  const int64_t b = v.projector_bias ? 1 : 0;
  int64_t p = h * v.in_channels * v.patch_size * v.patch_size + h;  // patch_conv (no bias) + ln_pre
  p += v.layers * (2 * h + 4 * h * a + 3 * h * i);                  // two RMSNorms, q/k/v/o, gate/up/down
  p += h + h * m * m * h;                                           // projector norm, patch merger
  p += (h * v.feature_layers * t + b * t) + (t * t + b * t);        // linear_1, linear_2
  v.params = p;
  return v;
}

// Qwen2.5-VL vision tower (transformers modeling_qwen2_5_vl.py; vLLM qwen2_5_vl.py):
//   patch_embed.proj      Conv3d(in_channels, hidden, kernel (temporal_patch, patch, patch)), bias=False
//   blocks.N.norm1/norm2  RMSNorm [hidden] (weight only)
//   blocks.N.attn.qkv     Linear(hidden, 3 hidden) + bias;  attn.proj Linear(hidden, hidden) + bias
//   blocks.N.mlp          gated SwiGLU gate_proj/up_proj Linear(hidden, intermediate) + bias,
//                         down_proj Linear(intermediate, hidden) + bias
//   merger.ln_q           RMSNorm [hidden];  merger.mlp.0 Linear(m, m) + bias, mlp.2 Linear(m, out_hidden) + bias,
//                         m = hidden x spatial_merge_size^2
// No learned position embedding (2-D rotary); window attention (window_size, fullatt_block_indexes)
// changes no weight. The original configs spell the channels in_chans (newer saves add in_channels).
VisionTower parse_qwen2_5_vl_vision(const std::vector<const json*>& s, int64_t text_hidden, std::string_view source) {
  VisionTower v;
  v.present = true;
  auto req = [&](std::string_view k, int64_t lo, int64_t hi) { return required_int(s, k, source, lo, hi); };
  v.kind = "qwen2_5_vl";
  v.layers = req("depth", 1, 10'000);
  v.hidden = req("hidden_size", 1, 1'000'000);
  v.intermediate = req("intermediate_size", 1, 10'000'000);
  v.heads = req("num_heads", 1, 100'000);
  if (v.hidden % v.heads != 0)
    fail_input(source, "num_heads", fmt::format("{} does not divide hidden_size {}", v.heads, v.hidden));
  v.head_dim = v.hidden / v.heads;
  v.in_channels = get_int(s, "in_channels", source, 1, 64).value_or(get_int(s, "in_chans", source, 1, 64).value_or(3));
  v.patch_size = get_int(s, "patch_size", source, 1, 1024).value_or(14);            // Qwen2_5_VLVisionConfig defaults
  v.temporal_patch_size = get_int(s, "temporal_patch_size", source, 1, 64).value_or(2);
  v.spatial_merge_size = get_int(s, "spatial_merge_size", source, 1, 64).value_or(2);
  v.out_hidden = get_int(s, "out_hidden_size", source, 1, 1'000'000).value_or(text_hidden);
  const int64_t h = v.hidden, i = v.intermediate, m = h * v.spatial_merge_size * v.spatial_merge_size, o = v.out_hidden;
  int64_t p = h * v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size;  // patch_embed conv3d, no bias
  p += v.layers * (2 * h + (3 * h * h + 3 * h) + (h * h + h) + 2 * (i * h + i) + (h * i + h));  // norms, qkv, proj, gate/up, down
  p += h + (m * m + m) + (o * m + o);                                                       // merger ln_q, mlp.0, mlp.2
  v.params = p;
  return v;
}
}  // namespace

static VisionTower parse_tower(const json* vc, std::string_view arch, int64_t text_hidden, std::string_view source, const json* root) {
  VisionTower v;
  if (!vc) return v;
  if (!vc->is_object()) fail_input(source, "vision_config", "must be an object");
  v.present = true;
  bool qwen = arch == "Qwen3VLForConditionalGeneration" || arch == "Qwen3VLMoeForConditionalGeneration" ||
              arch == "Qwen3_5ForConditionalGeneration" || arch == "Qwen3_5MoeForConditionalGeneration";
  std::vector<const json*> s{vc};
  if (arch == "Gemma4ForConditionalGeneration") return parse_gemma4_vision(s, text_hidden, source);
  if (arch == "Qwen2_5_VLForConditionalGeneration") return parse_qwen2_5_vl_vision(s, text_hidden, source);
  if (arch == "Gemma3ForConditionalGeneration") return parse_gemma3_vision(s, text_hidden, source);
  if (arch == "Mistral3ForConditionalGeneration") return parse_pixtral_vision(s, root, text_hidden, source);
  if (!qwen) {
    // Towers not modelled tensor by tensor: only the depth and width SGLang's VLM memory adjustment
    // reads (server_args.py adjust_mem_fraction_for_vlm: num_hidden_layers, hidden_size; Kimi-K2.5's
    // MoonViT spells them vt_num_hidden_layers / vt_hidden_size, and its real log's fraction shows
    // SGLang saw 27 x 1152). Unset stays 0: the engine model applies SGLang's defaults.
    for (const char* k : {"num_hidden_layers", "vt_num_hidden_layers"})
      if (auto x = get_int(s, k, source, 1, 10'000)) {
        v.layers = *x;
        break;
      }
    for (const char* k : {"hidden_size", "vt_hidden_size"})
      if (auto x = get_int(s, k, source, 1, 1'000'000)) {
        v.hidden = *x;
        break;
      }
    return v;
  }
  auto req = [&](std::string_view k, int64_t lo, int64_t hi) { return required_int(s, k, source, lo, hi); };
  v.kind = "qwen3_vl";
  v.layers = req("depth", 1, 10'000);
  v.hidden = req("hidden_size", 1, 1'000'000);
  v.intermediate = req("intermediate_size", 1, 10'000'000);
  v.in_channels = get_int(s, "in_channels", source, 1, 64).value_or(3);
  v.patch_size = req("patch_size", 1, 1024);
  v.temporal_patch_size = get_int(s, "temporal_patch_size", source, 1, 64).value_or(2);
  v.spatial_merge_size = get_int(s, "spatial_merge_size", source, 1, 64).value_or(2);
  v.out_hidden = get_int(s, "out_hidden_size", source, 1, 1'000'000).value_or(text_hidden);
  v.num_position_embeddings = get_int(s, "num_position_embeddings", source, 0, 100'000'000).value_or(0);
  if (const json* d = find_key(s, "deepstack_visual_indexes")) {
    if (!d->is_array()) fail_input(source, "deepstack_visual_indexes", "must be a list");
    v.deepstack_mergers = static_cast<int64_t>(d->size());
  }
  // Parameter count (same arithmetic as the tensors the inventory lists):
  const int64_t h = v.hidden, i = v.intermediate, m = h * v.spatial_merge_size * v.spatial_merge_size, o = v.out_hidden;
  int64_t p = h * v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size + h;  // patch_embed conv3d + bias
  p += v.num_position_embeddings * h;                                                      // pos_embed
  p += v.layers * (4 * h + (3 * h * h + 3 * h) + (h * h + h) + (i * h + i) + (h * i + h));   // norms, qkv, proj, fc1, fc2
  p += 2 * h + (m * m + m) + (o * m + o);                                                  // merger (norm on h)
  p += v.deepstack_mergers * (2 * m + (m * m + m) + (o * m + o));                          // deepstack mergers (norm on m)
  v.params = p;
  return v;
}

VisionTower parse_vision(const json* vc, std::string_view arch, int64_t text_hidden, std::string_view source, const json* root) {
  VisionTower v = parse_tower(vc, arch, text_hidden, source, root);
  if (v.present)
    for (const char* k : {"num_hidden_layers", "vt_num_hidden_layers"})
      if (auto x = get_int({vc}, k, source, 1, 10'000)) {
        v.config_num_hidden_layers = *x;
        break;
      }
  return v;
}

}  // namespace headroom::model_detail
