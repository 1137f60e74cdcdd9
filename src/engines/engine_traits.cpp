// The engines' rows of include/headroom/engine_traits.h, spelled as each engine spells them
// (SGLang server_args.py, vLLM EngineArgs, trtllm-serve's click options, llama.cpp common/arg.cpp).
#include "headroom/engine_traits.h"

#include <cctype>
#include <string>

#include "headroom/engine.h"
#include "headroom/llamacpp_plan.h"

namespace headroom {

namespace {
constexpr std::string_view kNoAliases[] = {""};
constexpr std::string_view kTrtAliases[] = {"tensorrt-llm", "trt-llm"};
constexpr std::string_view kLlamaAliases[] = {"llama.cpp", "llama-server"};

const EngineTraits kEngines[] = {
    {EngineKind::SGLang, "sglang", std::span(kNoAliases, 0), "SGLang", "python -m sglang.launch_server --model-path MODEL", "--tp-size",
     "--context-length", "--mem-fraction-static", 0.01, 0.99, "0.5.4, or main@2025-10-16", &sglang_flags},
    {EngineKind::VLLM, "vllm", std::span(kNoAliases, 0), "vLLM", "vllm serve MODEL", "--tensor-parallel-size", "--max-model-len",
     "--gpu-memory-utilization", 0.01, 1.0, "0.10.2, 0.21.0, or main@2025-10-16", &vllm_flags},
    {EngineKind::TRTLLM, "trtllm", kTrtAliases, "TensorRT-LLM", "trtllm-serve MODEL", "--tp_size", "--max_seq_len",
     "--kv_cache_free_gpu_memory_fraction", 0.01, 0.99, "1.0.0, 1.2.0rc2, 0.21.0", &trtllm_flags},
    {EngineKind::LlamaCpp, "llamacpp", kLlamaAliases, "llama.cpp", "llama-server -m MODEL.gguf", "", "--ctx-size", "", 0, 0, "b8157",
     &llamacpp::llamacpp_flags},
};

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::span<const EngineTraits> engine_traits() { return kEngines; }

const EngineTraits& traits(EngineKind kind) {
  for (const auto& t : kEngines)
    if (t.kind == kind) return t;
  return kEngines[0];
}

const EngineTraits* traits_by_name(std::string_view name) {
  const std::string n = lowercase(name);
  for (const auto& t : kEngines) {
    if (n == t.name) return &t;
    for (auto a : t.aliases)
      if (n == a) return &t;
  }
  return nullptr;
}

}  // namespace headroom
