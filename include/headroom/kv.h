// KV-cache bytes per token per rank, computed the way each engine computes them (SGLang's
// cell size, vLLM's page size per layer), plus per-request state of linear-attention layers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "headroom/model.h"
#include "headroom/parallel.h"

namespace headroom {

struct KvPerToken {
  int64_t full_bytes = 0;    // per token per rank: full-attention (+ MLA, + DSA indexer) layers
  int64_t swa_bytes = 0;     // per token per rank: sliding-window / chunked layers (pool bounded by window)
  int64_t state_bytes_per_request = 0;  // linear attention / Mamba conv + SSM state, per request per rank
  int64_t full_layers = 0, swa_layers = 0, linear_layers = 0;  // on this rank
  std::string kv_dtype;      // resolved engine spelling, e.g. "bfloat16", "fp8_e4m3"
  int64_t total() const { return full_bytes + swa_bytes; }
};

// kv_dtype: the engine's --kv-cache-dtype value ("auto", "fp8_e4m3", "fp8", "bf16", ...).
// sm: compute capability x10 of the GPU (defaults depend on it), 0 when unknown.
// pp_rank selects the layers of that pipeline stage.
// ssm_bytes: the Mamba / Gated-DeltaNet SSM state's element size (--mamba-ssm-dtype: float32 4, bfloat16 2).
KvPerToken sglang_kv_per_token(const ModelConfig& c, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank = 0, int ssm_bytes = 4);
KvPerToken vllm_kv_per_token(const ModelConfig& c, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank = 0);
KvPerToken kv_per_token(const ModelConfig& c, EngineKind engine, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank = 0);

}  // namespace headroom
