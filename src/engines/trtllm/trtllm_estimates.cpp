// TensorRT-engine (C++ runtime) terms fitted on TensorRT-LLM's own logs, the weights of an
// FP8-built engine, and the PyTorch executor's overhead beyond vLLM's terms. See trtllm_estimates.h.
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

vllm::Estimate pytorch_executor_overhead() {
  // KvCacheCreator.configure_kv_cache_capacity (tensorrt_llm/_torch/pyexecutor/_util.py, 2025 and
  // 2026 copies) sizes the pool from peak = torch "allocated_bytes.all.peak" over the dummy
  // requests + (device used - torch allocated after empty_cache()): everything the estimation
  // executor holds by then counts - the model, the sampler, the attention workspace, the autotuner's
  // and the CUDA graphs' leftovers, the C++ runtime's buffers, the kernel modules TensorRT-LLM's
  // libraries and the autotuned tactics loaded, and caching-allocator segments empty_cache() cannot
  // return. The terms this plan shares with vLLM's model (CUDA context, profile-run activations and
  // non-torch growth, CUDA graphs) leave, on one GPU (peak the log implies - the plan's terms):
  //   0.79 GiB  Qwen3-0.6B, H100, 1.2.1, LLM-API defaults: "Allocated 68.69 GiB for max tokens in
  //             paged KV cache (643136)" -> (79.19 - peak) x 0.9 = 68.69 GiB (tests/data/extra
  //             xtrt-001; the plan gave 649,792 tokens: 6,656 x 114,688 B / 0.9 = 0.79 GiB short)
  //   0.49 GiB  SmolLM2-135M-Instruct, RTX 4070 SUPER (11.70 GiB), 1.2.1, max_seq_len 2049: "Estimated
  //             max memory in KV cache : 9.06 GiB" (422,048 tokens) -> peak 1.63 GiB with 0.25 GiB of
  //             weights; the same 10.07..10.08 GiB free x 0.25 is the 2.52 GiB of its fraction-0.25
  //             run (xtrt-008/009, replayed from the model's config in tests/trtllm_overhead_test.cpp,
  //             the checkpoint not being in the catalog: 442,752 tokens, 20,704 x 23,040 B / 0.9 over)
  //   1.34 GiB  Qwen2.5-VL-7B-Instruct, L20, 0.21.0rc1, fraction 0.6, no CUDA graphs, 1,700 dummy
  //             tokens: "... (301472)" (xtrt-007: 316,512 planned, 15,040 x 57,344 B / 0.6 over; a
  //             vision-language model - its encoder may add to it)
  // ESTIMATE, n = 3: 0.64 GiB (the two text models' mean), 0.45 .. 1.35 GiB. GUESS: that it is one
  // per-rank constant - the two text logs differ by 0.30 GiB on different GPUs, models and
  // max_seq_len, and multi-GPU logs with the profiling lines were not found; the 8 x B300 Kimi-K2.5
  // log (xtrt-010, 1.3.0rc7) implies ~9.5 GiB more than the plan's other terms there (8.9 GiB with
  // this one), not fitted (n = 1, and the log prints no profiling lines to split it).
  const double gib = static_cast<double>(int64_t{1} << 30);
  return range(0.64 * gib, 0.45 / 0.64, 1.35 / 0.64,
               "TensorRT-LLM PyTorch executor overhead beyond vLLM's terms (sampler, runtime buffers, kernel modules, allocator "
               "leftovers): 0.64 GiB per rank (ESTIMATE from 3 single-GPU TensorRT-LLM logs, 0.49..1.34 GiB; one constant is a GUESS)");
}

}  // namespace headroom::trtllm
