// TensorRT-engine (C++ runtime) terms fitted on TensorRT-LLM's own logs, and the weights of an
// FP8-built engine. See trtllm_estimates.h.
#include "engines/trtllm/trtllm_estimates.h"

#include <fmt/format.h>

#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom::trtllm {

using vllm::range;

vllm::Estimate trt_execution_context(const ModelConfig& c, int64_t max_num_tokens) {
  // TllmRuntime (cpp/tensorrt_llm/runtime/tllmRuntime.cpp) allocates getDeviceMemorySizeV2() of
  // the engine and logs "[MemUsageChange] Allocated %.2f MiB for execution context memory." The
  // size is TensorRT's plan for the engine's largest shapes; with remove_input_padding (the
  // default) the token dimension is the build's max_num_tokens. Logged, per max_num_tokens token:
  //   928.77 MiB / 8192  = 118,884 B = 29.0 x hidden  Llama-2-7B FP8 engine, TP1, 0.12.0.dev2024073000
  //                                                  (trtllm-bench README log, public-code 6161481015; tests/data/extra xtrt-018)
  //   480.04 MiB / 4096  = 122,890 B = 30.0 x hidden  Llama-3-8B int4-AWQ engine, TP2, 0.13.0.dev2024081300
  //                                                  (triton-inference-server/tensorrtllm_backend#576)
  //   1811942912 / 12288 = 147,456 B = 36.0 x hidden  Llama-3-8B BF16 engine, TP1, 0.8.0 build log "Total
  //                                                  Activation Memory" (public-code 69112122406; xtrt-015)
  // (and 1134.01 MiB for the FP8 Llama-2-7B engine of docs/source/reference/memory.md, max_num_tokens
  // not shown: 35.4 x hidden at the 8192 default). ESTIMATE, n = 3: 32 x hidden_size bytes per
  // token, 0.85 .. 1.2 of it. GUESS: the scaling with hidden_size -- all the logs are hidden 4096.
  const int64_t per_token = 32 * c.hidden_size;
  return range(per_token * max_num_tokens, 0.85, 1.2,
               fmt::format("TensorRT execution context: 32 x hidden_size B per max_num_tokens token ({} tokens; ESTIMATE from 3 TensorRT-LLM "
                           "logs, 29..36 x hidden; the hidden_size scaling is a GUESS)",
                           max_num_tokens));
}

vllm::Estimate trt_runtime_buffers(const ModelConfig& c, int64_t max_batch_size) {
  // TrtGptModelInflightBatching (cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp)
  // logs "[MemUsageChange] Allocated %s GPU memory for runtime buffers." (createBuffers) and
  // "... for decoder." (createDecoder); both hold per-sequence logits / sampling buffers of the
  // vocabulary's width for max_batch_size (x beam) sequences. Logged:
  //   3.44 MB + 15.05 MB, max_batch_size 8, vocab 128256, TP2, 0.13.0.dev (tensorrtllm_backend#576):      18 B per (sequence x vocab entry)
  //   ~4.97 GiB, max_batch_size 2048, vocab 128256, 0.19.0 (TensorRT-LLM#4275, xtrt-003: 31.84 - 17.83
  //   available - 8.46 FP8 weights - 0.13 context - ~0.45 CUDA context; the lines are not quoted): 20 B
  //   1.14 GB + 4.35 GB, max_batch_size 4096, vocab 32000, 0.12.0.dev (trtllm-bench README log, xtrt-018): 45 B
  // ESTIMATE, n = 3: 20 B (the two that agree), 0.85 .. 2.3 of it so that the 0.12 dev build's 45 B
  // is the unfavourable end.
  const int64_t vocab = c.vocab_size > 0 ? c.vocab_size : 32000;
  return range(20 * vocab * max_batch_size, 0.85, 2.3,
               fmt::format("runtime buffers + decoder: 20 B x vocab {} x max_batch_size {} (ESTIMATE from 3 TensorRT-LLM logs: 18, 20 and 45 B)", vocab,
                           max_batch_size));
}

int64_t fp8_engine_weights(const ModelConfig& c, const RankWeights& w) {
  if (c.quant.method != QuantMethod::None || dtype_size(c.dtype) != 2)
    fail_input("trtllm", "--quantization",
               fmt::format("FP8 engine weights are modelled from a 16-bit checkpoint; {} is already quantized ({}): give the checkpoint the "
                           "engine was built from",
                           c.hf_id.empty() ? std::string("the model") : c.hf_id, c.quant.raw_method.empty() ? std::string(dtype_name(c.dtype)) : c.quant.raw_method));
  // ModelOpt / TensorRT-LLM FP8 (QuantAlgo.FP8): the Linear layers of attention, MLP and experts
  // hold FP8 weights (1 B) and one float scale each; embedding, lm_head, norms and the MoE router
  // stay in the checkpoint dtype. Check: Llama-2-7B, 6.48e9 B of FP8 linears + 0.52e9 B of
  // embedding and lm_head = 7.00e9 B = 6,681 MiB against "Loaded engine size: 6695 MiB" in
  // docs/source/reference/memory.md (tests/data/extra xtrt-013).
  int64_t bytes = w.bytes;
  for (const auto& [component, b] : w.by_component)
    if (component == "attention" || component == "mlp" || component == "experts") bytes -= b / 2;
  return bytes;
}

}  // namespace headroom::trtllm
