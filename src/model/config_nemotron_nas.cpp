// Nemotron-NAS (DeciLMForCausalLM, model_type "nemotron-nas": Llama-3.3-Nemotron-Super-49B, -Ultra-253B,
// Llama-3.1-Nemotron-51B): reads the per-layer block_configs into LayerInfo. Each block has
//   attention {no_op, replace_with_linear, n_heads_in_group}  and  ffn {no_op, replace_with_linear, ffn_mult}.
// Rules mirrored (the three engines agree):
//  - vLLM model_executor/models/nemotron_nas.py DeciLMDecoderLayer, SGLang srt/models/nemotron_nas.py
//    DeciLMDecodeLayer, TensorRT-LLM _torch/models/modeling_nemotron_nas.py NemotronNASDecoderLayer:
//    a real attention block has num_attention_heads // n_heads_in_group KV heads; a no_op block has
//    no module (no input_layernorm either); the FFN width is
//    _ffn_mult_to_intermediate_size(ffn_mult, hidden) = int(2 * ffn_mult * hidden / 3) rounded up to a
//    multiple of 256 (_find_multiple); a no_op FFN has no module and no post_attention_layernorm.
//  - replace_with_linear (TensorRT-LLM LinearAttention / LinearMLP; transformers modeling_decilm.py):
//    one hidden x hidden linear (self_attn.linear_attn / mlp.linear_mlp) behind the block's norm.
//  - The model-wide KV-head count is the first real attention block's (vLLM config.py and SGLang
//    model_config.py get_total_num_kv_heads for "nemotron-nas"; "Couldn't determine number of kv
//    heads" when no block has attention).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "headroom/error.h"
#include "model/model_internal.h"

namespace headroom::model_detail {
namespace {

bool flag(const json& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return false;
  if (!it->is_boolean()) fail_input(where, key, fmt::format("must be true or false, got {}", it->dump().substr(0, 40)));
  return it->get<bool>();
}

}  // namespace

int64_t nas_ffn_mult_to_intermediate(double ffn_mult, int64_t hidden) {
  // Python: int(2 * ffn_mult * n_embd / 3) -- evaluated left to right in double, truncated.
  const double x = 2.0 * ffn_mult * static_cast<double>(hidden) / 3.0;
  const int64_t n = static_cast<int64_t>(x);
  return n % 256 == 0 ? n : n + 256 - n % 256;
}

void nemotron_nas_layers(ModelConfig& c, const json* blocks, const std::string& src) {
  if (!blocks || !blocks->is_array())
    fail_input(src, "block_configs", "missing (DeciLM / Nemotron-NAS lists one attention/ffn block per layer)");
  if (static_cast<int64_t>(blocks->size()) != c.num_layers)
    fail_input(src, "block_configs", fmt::format("has {} entries, num_hidden_layers is {}", blocks->size(), c.num_layers));
  int64_t first_kv = 0, max_inter = 0;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const json& b = (*blocks)[static_cast<size_t>(i)];
    const std::string where = fmt::format("{}: block_configs[{}]", src, i);
    if (!b.is_object()) fail_input(src, fmt::format("block_configs[{}]", i), "must be an object");
    auto a = b.find("attention");
    auto f = b.find("ffn");
    if (a == b.end() || !a->is_object()) fail_input(where, "attention", "missing or not an object");
    if (f == b.end() || !f->is_object()) fail_input(where, "ffn", "missing or not an object");
    LayerInfo& li = c.layers[static_cast<size_t>(i)];
    // Attention.
    if (flag(*a, "no_op", where + ".attention")) {
      li.attn = AttnKind::None;
    } else if (flag(*a, "replace_with_linear", where + ".attention")) {
      li.attn = AttnKind::None;
      li.attn_linear = true;
    } else {
      auto g = a->find("n_heads_in_group");
      if (g == a->end() || !g->is_number_integer() || g->get<int64_t>() < 1 || g->get<int64_t>() > c.num_attention_heads)
        fail_input(where + ".attention", "n_heads_in_group",
                   fmt::format("must be an integer in [1, {}] for a block with attention", c.num_attention_heads));
      const int64_t kv = c.num_attention_heads / g->get<int64_t>();
      li.attn = AttnKind::Full;
      li.kv_heads = kv;
      if (first_kv == 0) first_kv = kv;
    }
    // FFN.
    if (flag(*f, "no_op", where + ".ffn")) {
      li.has_mlp = false;
    } else if (flag(*f, "replace_with_linear", where + ".ffn")) {
      li.has_mlp = false;
      li.ffn_linear = true;
    } else {
      auto m = f->find("ffn_mult");
      int64_t inter = 0;
      if (m != f->end() && !m->is_null()) {
        if (!m->is_number() || !(m->get<double>() > 0) || m->get<double>() > 1000)
          fail_input(where + ".ffn", "ffn_mult", fmt::format("must be a number in (0, 1000], got {}", m->dump().substr(0, 40)));
        inter = nas_ffn_mult_to_intermediate(m->get<double>(), c.hidden_size);
      } else if (auto is = f->find("intermediate_size"); is != f->end() && is->is_number_integer() && is->get<int64_t>() > 0) {
        inter = is->get<int64_t>();  // vLLM nemotron_nas.py: block_config.ffn.intermediate_size when no ffn_mult
      } else {
        fail_input(where + ".ffn", "ffn_mult", "missing (and no intermediate_size)");
      }
      li.ffn_intermediate = inter;
      max_inter = std::max(max_inter, inter);
    }
  }
  if (first_kv == 0) fail_input(src, "block_configs", "RuntimeError: Couldn't determine number of kv heads (no block has attention)");
  c.num_kv_heads = first_kv;
  // Per-layer KV heads stay recorded only where they differ from the model-wide value (LayerInfo convention).
  for (auto& li : c.layers)
    if (li.kv_heads == c.num_kv_heads) li.kv_heads = 0;
  // The widest FFN stands for the model's intermediate size (activation estimates take the peak layer).
  if (c.intermediate_size == 0) c.intermediate_size = max_inter;
}

}  // namespace headroom::model_detail
