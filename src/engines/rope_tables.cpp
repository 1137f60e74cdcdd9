// RoPE cos/sin tables per rank, as vLLM and SGLang build them at model init.
//  - vLLM (model_executor/layers/rotary_embedding/base.py RotaryEmbedding.__init__): cos_sin_cache
//    [rows, rotary_dim] registered as a non-persistent buffer, cast to the model dtype (use_flashinfer
//    is hard-wired False there). get_rope (rotary_embedding/__init__.py) caches instances in
//    _ROPE_DICT by (head_size, rotary_dim, max_position, is_neox, rope_parameters, dtype): layers with
//    the same RoPE share one table per process (= per rank).
//  - SGLang (srt/layers/rotary_embedding.py RotaryEmbedding.__init__): the same table, kept FP32 on
//    CUDA ("cache needs to be in FP32 for numerical stability"; other backends cast it to the model
//    dtype unless SGLANG_ROPE_CACHE_FP32, sglang PR #29729). get_rope caches in _ROPE_DICT as well.
//    GUESS: ROCm is not told apart here (its table is half as large; tens of MiB).
//  - Rows by rope type (max_position = config max_position_embeddings, which the model files pass):
//    default / mrope / llama3 / proportional (llama3_rope.py, mrope.py, gemma4_rope.py): max_position;
//    linear / dynamic (linear_scaling_rope.py, dynamic_ntk_scaling_rope.py): max_position x factor;
//    yarn / deepseek_yarn (yarn_scaling_rope.py, deepseek_scaling_rope.py): original_max_position x
//    factor (ceil); longrope (phi3_long_rope_scaled_rope.py): original + max_position (short and long
//    caches concatenated). Other types: max_position (GUESS). vLLM's multimodal RoPE (mrope.py):
//    4 x those rows (since Qwen2.5-VL support; earlier builds' 1x is not told apart).
//  - Width: rotary_dim (ModelConfig, config_rope.cpp); the sliding-window layers' second table
//    (Gemma-3 / Gemma-4 / MiMo-V2) is a default-type table of rope_local_rotary_dim. Gemma-4's
//    head-wide "proportional" table is vLLM's gemma4_rope.py; SGLang is taken to match (GUESS).
//  - Llama-4's global layers are NoPE (llama4.py: no rotary_emb when nope); linear-attention and
//    Mamba layers build none.
#include "engines/rope_tables.h"

#include <cmath>
#include <fmt/format.h>

#include "headroom/units.h"

namespace headroom {

namespace {
int64_t rows_for(const ModelConfig& c, EngineKind engine) {
  // vLLM's MRotaryEmbedding (rotary_embedding/mrope.py) enlarges its position count 4x for video
  // timestamps (cache_max_position_num = max_position_embeddings * 4), YaRN then scales that;
  // SGLang's MRotaryEmbedding keeps max_position_embeddings.
  const int64_t mult = c.rope_mrope && engine == EngineKind::VLLM ? 4 : 1;
  const int64_t maxpos = c.max_position_embeddings * mult;
  const double f = c.rope_scaling_factor > 0 ? c.rope_scaling_factor : 1.0;
  const int64_t orig = c.rope_original_max_position_embeddings * mult;
  const std::string& t = c.rope_scaling_type;
  if (t == "linear" || t == "dynamic") return static_cast<int64_t>(std::ceil(static_cast<double>(maxpos) * f));
  if (t == "yarn" || t == "deepseek_yarn" || t == "deepseek_llama_scaling")
    return static_cast<int64_t>(std::ceil(static_cast<double>(orig > 0 ? orig : maxpos) * f));
  if ((t == "longrope" || t == "su") && orig > 0) return orig + maxpos;
  return maxpos;
}
}  // namespace

RopeTableBytes rope_table_bytes(const ModelConfig& c, EngineKind engine, int first, int last) {
  RopeTableBytes r;
  if (engine != EngineKind::VLLM && engine != EngineKind::SGLang) return r;
  if (c.rotary_dim <= 0 || c.max_position_embeddings <= 0) return r;
  // DeepSeek-V4: SGLang's tables are sglang_dsv4_weights.cpp term 3; vLLM's deepseek_v4 attention
  // builds its own (not modelled here).
  if (c.family == "deepseek_v4") return r;
  bool main_table = false, local_table = false;
  for (int i = first; i < last && i < static_cast<int>(c.layers.size()); ++i) {
    const AttnKind k = c.layers[static_cast<size_t>(i)].attn;
    if (k == AttnKind::Linear || k == AttnKind::None) continue;
    if (c.family == "llama4" && k == AttnKind::Full) continue;  // NoPE global layers
    if (k == AttnKind::Sliding && c.rope_local_rotary_dim > 0) local_table = true;
    else main_table = true;
  }
  const int64_t elem = engine == EngineKind::SGLang ? 4 : 2;
  const char* src = engine == EngineKind::SGLang ? "sglang rotary_embedding.py, FP32 on CUDA" : "vLLM rotary_embedding/base.py, model dtype";
  std::string parts;
  if (main_table) {
    const int64_t rows = rows_for(c, engine);
    r.bytes += rows * c.rotary_dim * elem;
    parts = fmt::format("{} x {}", rows, c.rotary_dim);
  }
  if (local_table) {
    r.bytes += c.max_position_embeddings * c.rope_local_rotary_dim * elem;
    parts += fmt::format("{}{} x {} (sliding layers)", parts.empty() ? "" : " + ", c.max_position_embeddings, c.rope_local_rotary_dim);
  }
  if (r.bytes > 0) r.what = fmt::format("RoPE cos_sin_cache {} x {} B = {} ({})", parts, elem, human_bytes(r.bytes), src);
  return r;
}

}  // namespace headroom
