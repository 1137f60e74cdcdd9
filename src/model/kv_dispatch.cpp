// kv_per_token(): KV-cache bytes per token per rank as the chosen engine computes them
// (SGLang: engines/sglang kv cell size; vLLM: engines/vllm page size per layer).
#include "headroom/error.h"
#include "headroom/kv.h"

namespace headroom {

KvPerToken kv_per_token(const ModelConfig& c, EngineKind engine, const Parallel& par, std::string_view kv_dtype, int sm, int pp_rank) {
  switch (engine) {
    case EngineKind::SGLang: return sglang_kv_per_token(c, par, kv_dtype, sm, pp_rank);
    case EngineKind::VLLM: return vllm_kv_per_token(c, par, kv_dtype, sm, pp_rank);
    case EngineKind::TRTLLM: fail_input("--engine", "trtllm", "KV bytes per token are modelled for sglang and vllm only");
    case EngineKind::LlamaCpp: fail_input("--engine", "llamacpp", "KV bytes per token are modelled for sglang and vllm only");
  }
  fail_input("--engine", "", "unknown engine");
}

}  // namespace headroom
