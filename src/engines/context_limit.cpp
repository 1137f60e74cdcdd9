// The longest context each engine accepts for a model without an override, derived as the
// engine derives it. tune and fit check a --target-context against it before searching, so a
// goal the engine would refuse is said once, with the engine's rule, instead of per candidate.
#include <cmath>
#include <fmt/format.h>

#include "engines/trtllm/trtllm_rules.h"
#include "engines/vllm/vllm_settings.h"
#include "headroom/engine.h"

namespace headroom {

int64_t sglang_derived_context_length(const ModelConfig& c) {
  // srt/configs/model_config.py get_context_length: the config's length key times
  // rope_scaling.factor, except when the rope block names original_max_position_embeddings
  // (the key already holds the extended length) or is llama3; 2048 when the config has no key.
  double rope_factor = 1.0;
  if (!c.rope_scaling_type.empty() && c.rope_original_max_position_embeddings == 0 && c.rope_scaling_type != "llama3" &&
      c.rope_scaling_factor > 0)
    rope_factor = c.rope_scaling_factor;
  return c.max_position_embeddings > 0 ? static_cast<int64_t>(rope_factor * static_cast<double>(c.max_position_embeddings)) : 2048;
}

int64_t trtllm_inferred_max_seq_len(const ModelConfig& c) {
  // PyTorch backend model_engine.py _infer_max_seq_len_from_config (TensorRT engines: trtllm-build's
  // deduced value, the same rule): max_position_embeddings (2048 without one) times the
  // rope_scaling factor unless the type is su / longrope / llama3 / yarn (those already describe
  // the long context), rounded up.
  int64_t inferred = c.max_position_embeddings > 0 ? c.max_position_embeddings : 2048;
  const std::string& t = c.rope_scaling_type;
  if (c.rope_scaling_factor > 0 && c.rope_scaling_factor != 1 && t != "su" && t != "longrope" && t != "llama3" && t != "yarn")
    inferred = static_cast<int64_t>(std::ceil(static_cast<double>(inferred) * c.rope_scaling_factor));
  return inferred;
}

std::optional<ContextLimit> context_limit(const Deployment& d) {
  if (!d.model) return std::nullopt;
  const ModelConfig& c = d.model->config;
  switch (d.engine) {
    case EngineKind::VLLM: {
      if (d.env_on("VLLM_ALLOW_LONG_MAX_MODEL_LEN")) return std::nullopt;
      const double derived = vllm::derived_max_model_len(c);
      if (derived < 1) return std::nullopt;
      return ContextLimit{static_cast<int64_t>(derived), "vLLM's derived max_model_len (config/model.py _get_and_verify_max_len)"};
    }
    case EngineKind::SGLang:
      if (d.env_on("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")) return std::nullopt;
      return ContextLimit{sglang_derived_context_length(c), "SGLang's derived context_length (configs/model_config.py get_context_length)"};
    case EngineKind::TRTLLM:
      // The length the PyTorch backend cuts a longer --max_seq_len to; a TensorRT engine (and
      // TLLM_ALLOW_LONG_MAX_MODEL_LEN from 1.3) keeps any length (trtllm_settings.cpp has the sources).
      if (auto cap = trtllm::resolve_settings(d).max_seq_len_cap)
        return ContextLimit{*cap, "TensorRT-LLM's inferred max_seq_len (_torch/pyexecutor/model_engine.py _infer_max_seq_len_from_config)"};
      return std::nullopt;
    case EngineKind::LlamaCpp:
      if (c.max_position_embeddings <= 0) return std::nullopt;
      return ContextLimit{c.max_position_embeddings, "max_position_embeddings"};
  }
  return std::nullopt;
}

}  // namespace headroom
