// RoPE cos/sin tables vLLM and SGLang build on the GPU at model init: buffers, not checkpoint
// tensors, but inside the weight memory both engines log ("Model loading took", "Load weight end").
#pragma once
#include <cstdint>
#include <string>

#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom {

struct RopeTableBytes {
  int64_t bytes = 0;
  std::string what;  // e.g. "RoPE cos_sin_cache 131,072 x 128 x 2 B (base.py)"
};

// Tables one rank of pipeline stage [first, last) holds: one per distinct get_rope key among the
// stage's attention layers, replicated on every TP rank. Zero for TensorRT-LLM, for models without
// RoPE and for DeepSeek-V4 (SGLang's are counted by sglang_dsv4_weights.cpp; vLLM's not modelled).
RopeTableBytes rope_table_bytes(const ModelConfig& c, EngineKind engine, int first, int last);

}  // namespace headroom
