// RoPE facts of a config.json the engines' cos/sin tables depend on (engines/rope_tables.cpp sizes
// them): the rotary width of the attention layers and whether sliding-window layers build a second
// table. Mirrors how vLLM's get_rope (model_executor/layers/rotary_embedding/__init__.py) and SGLang's
// (srt/layers/rotary_embedding.py) are called by the model files:
//  - rotary_dim = int(head_size x partial_rotary_factor) (get_rope); the factor is read from
//    rope_parameters / rope_scaling (transformers 5, MiniMax-M2, Qwen3.5) or the top level (GLM-4.5,
//    Qwen3-Next, MiMo-V2); older configs write rotary_dim (MiniMax-Text) or rotary_pct (GPT-NeoX).
//  - MLA (DeepSeek, Kimi, GLM-5) and DeepSeek-V4 rotate qk_rope_head_dim only (deepseek_v2.py).
//  - Nemotron-H attention has no positional encoding (nemotron_h.py NemotronHAttention builds no rope).
//  - Gemma-4 (gemma4.py + rotary_embedding/gemma4_rope.py): rope_parameters per layer type; the
//    full-attention "proportional" RoPE builds its table as wide as the head (rotary_dim = head_size,
//    non-rotated pairs padded with cos 1 / sin 0), sliding layers a default table of head_dim.
//  - Gemma-3 (gemma3.py): sliding layers use rope_local_base_freq (Gemma3TextConfig default 10,000,
//    rope_theta default 1,000,000) with default scaling, a second get_rope key.
//  - MiMo-V2-Flash (mimo_v2_flash.py): sliding layers use swa_rope_theta.
//  - Multimodal RoPE (Qwen2-VL .. Qwen3.5): the rope dict carries mrope_section (get_rope then builds
//    MRotaryEmbedding).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "headroom/error.h"
#include "model/model_internal.h"

namespace headroom::model_detail {

namespace {
// partial_rotary_factor from a rope dict or the top level; nullopt when absent.
std::optional<double> partial_factor(const json* rope, const std::vector<const json*>& s, const std::string& tsrc) {
  if (rope && rope->is_object())
    if (auto it = rope->find("partial_rotary_factor"); it != rope->end() && it->is_number()) return it->get<double>();
  return get_double(s, "partial_rotary_factor", tsrc);
}

int64_t scaled(int64_t head_dim, double f, const std::string& tsrc) {
  if (!(f > 0 && f <= 1)) fail_input(tsrc, "partial_rotary_factor", fmt::format("{} is not in (0, 1]", f));
  return static_cast<int64_t>(static_cast<double>(head_dim) * f);
}
}  // namespace

void parse_rope(ModelConfig& c, const std::vector<const json*>& s, const std::string& tsrc) {
  c.rotary_dim = 0;
  c.rope_local_rotary_dim = 0;
  c.rope_mrope = false;
  if (c.family == "nemotron_h") return;
  if (c.mla || c.family == "deepseek_v4") {
    c.rotary_dim = c.qk_rope_head_dim;
    return;
  }
  const json* rope = find_key(s, "rope_parameters");
  if (!rope) rope = find_key(s, "rope_scaling");
  if (c.family == "gemma4" && rope && rope->is_object() && rope->contains("full_attention")) {
    int64_t global_hd = c.head_dim;
    for (const auto& li : c.layers)
      if (li.attn == AttnKind::Full && li.head_dim > 0) global_hd = li.head_dim;
    const json& full = (*rope)["full_attention"];
    std::string type;
    if (full.is_object())
      if (auto it = full.find("rope_type"); it != full.end() && it->is_string()) type = it->get<std::string>();
    c.rotary_dim = type == "proportional" ? global_hd : scaled(global_hd, partial_factor(&full, {}, tsrc).value_or(1.0), tsrc);
    if (auto it = rope->find("sliding_attention"); it != rope->end() && it->is_object())
      c.rope_local_rotary_dim = scaled(c.head_dim, partial_factor(&*it, {}, tsrc).value_or(1.0), tsrc);
    return;
  }
  // The Qwen-VL model files always run multimodal RoPE (their released configs carry mrope_section;
  // trimmed copies may not).
  c.rope_mrope = (rope && rope->is_object() && rope->contains("mrope_section")) ||
                 c.architecture == "Qwen2VLForConditionalGeneration" || c.architecture == "Qwen2_5_VLForConditionalGeneration" ||
                 c.architecture == "Qwen3VLForConditionalGeneration" || c.architecture == "Qwen3VLMoeForConditionalGeneration";
  if (auto f = partial_factor(rope, s, tsrc)) c.rotary_dim = scaled(c.head_dim, *f, tsrc);
  else if (auto rd = get_int(s, "rotary_dim", tsrc, 1, int64_t{1} << 20)) c.rotary_dim = std::min(*rd, c.head_dim);
  else if (auto pct = get_double(s, "rotary_pct", tsrc)) c.rotary_dim = scaled(c.head_dim, *pct, tsrc);
  else c.rotary_dim = c.head_dim;
  if (c.family == "gemma3") {
    const double local = get_double(s, "rope_local_base_freq", tsrc).value_or(10'000.0);
    const double global = get_double(s, "rope_theta", tsrc).value_or(1'000'000.0);
    const bool scaled_global = !c.rope_scaling_type.empty() && c.rope_scaling_type != "default";
    if (local != global || scaled_global) c.rope_local_rotary_dim = c.head_dim;
  } else if (c.family == "mimo_v2") {
    auto swa = get_double(s, "swa_rope_theta", tsrc);
    auto full = get_double(s, "rope_theta", tsrc);
    if (swa && (!full || *swa != *full)) c.rope_local_rotary_dim = c.rotary_dim;
  }
}

}  // namespace headroom::model_detail
