// TensorRT-engine (C++ runtime) terms fitted on TensorRT-LLM's own logs, the weights of an
// FP8-built engine, and the PyTorch executor's overhead beyond vLLM's terms. See trtllm_estimates.h.
#include "engines/trtllm/trtllm_estimates.h"

#include <fmt/format.h>

#include "engines/trtllm/trtllm_constants.h"
#include "headroom/error.h"
#include "headroom/units.h"

namespace headroom::trtllm {


Estimate trt_execution_context(const ModelConfig& c, int64_t max_num_tokens) {
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
  const EstimatedConstant& k = constant(Const::ExecContextPerToken);
  const int64_t per_token = static_cast<int64_t>(k.central) * c.hidden_size;
  return range_of(k, static_cast<double>(per_token * max_num_tokens),
               fmt::format("TensorRT execution context: 32 x hidden_size B per max_num_tokens token ({} tokens; ESTIMATE from 3 TensorRT-LLM "
                           "logs, 29..36 x hidden; the hidden_size scaling is a GUESS)",
                           max_num_tokens));
}

Estimate trt_runtime_buffers(const ModelConfig& c, int64_t max_batch_size) {
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
  const EstimatedConstant& k = constant(Const::RuntimeBuffers);
  return range_of(k, static_cast<double>(static_cast<int64_t>(k.central) * vocab * max_batch_size),
               fmt::format("runtime buffers + decoder: 20 B x vocab {} x max_batch_size {} (ESTIMATE from 3 TensorRT-LLM logs: 18, 20 and 45 B)", vocab,
                           max_batch_size));
}

namespace {
// Bytes per linear weight for each modelled QuantAlgo. Weights are packed (FP8 / INT8 1 B, INT4
// 0.5 B); per-output-channel scales (N of them per N x K matrix, < 0.1%) are not counted; the
// group-wise INT4 formats carry a 16-bit scale per 128 input rows (quantize.py --awq_block_size
// / convert_checkpoint.py --group_size, default 128: 2 / 128 B per weight) and GPTQ a 16-bit zero
// point beside it (WeightOnlyGroupwiseQuantLinear's weights_scaling_factor and zero).
// Checks (engine sizes as TensorRT-LLM logs them, against this rule on the catalog's 16-bit
// checkpoint, tests/trtllm_engine_terms_test.cpp):
//   FP8 Llama-2-7B 6,681 MiB vs "Loaded engine size: 6695 MiB" (docs memory.md, xtrt-013);
//   W8A8_SQ_PER_CHANNEL Llama-2-7B vs 6,683 MiB TensorRT-managed (TensorRT-LLM#1400, xtrt-023);
//   W4A16_AWQ Llama-3-8B TP2 vs 2,723 MiB per rank (tensorrtllm_backend#577, xtrt-024) and
//   Qwen2.5-7B vs the build log's 5,306 MB (a homelab blog, xtrt-026).
struct AlgoBytes {
  const char* algo;
  double bytes;
};
constexpr AlgoBytes kEngineQuant[] = {
    {"FP8", 1.0},
    {"FP8_PER_CHANNEL_PER_TOKEN", 1.0},
    {"W8A16", 1.0},
    {"W8A8_SQ_PER_CHANNEL", 1.0},
    {"W8A8_SQ_PER_TENSOR_PLUGIN", 1.0},
    {"W8A8_SQ_PER_CHANNEL_PER_TOKEN_PLUGIN", 1.0},
    {"W8A8_SQ_PER_CHANNEL_PER_TENSOR_PLUGIN", 1.0},
    {"W8A8_SQ_PER_TENSOR_PER_TOKEN_PLUGIN", 1.0},
    {"W8A16_GPTQ", 1.0 + 4.0 / 128},
    {"W4A16", 0.5},
    {"W4A16_AWQ", 0.5 + 2.0 / 128},
    {"W4A8_AWQ", 0.5 + 2.0 / 128},
    {"W4A16_GPTQ", 0.5 + 4.0 / 128},
};
}  // namespace

std::optional<EngineQuant> engine_quant(const std::string& algo_upper) {
  for (const auto& a : kEngineQuant)
    if (algo_upper == a.algo) return EngineQuant{a.algo, a.bytes};
  return std::nullopt;
}

std::string engine_quant_names() {
  std::string out;
  for (const auto& a : kEngineQuant) out += (out.empty() ? "" : ", ") + std::string(a.algo);
  return out;
}

int64_t engine_quant_weights(const ModelConfig& c, const RankWeights& w, const EngineQuant& q) {
  if (c.quant.method != QuantMethod::None || dtype_size(c.dtype) != 2)
    fail_input("trtllm", "--quantization",
               fmt::format("{} engine weights are modelled from a 16-bit checkpoint; {} is already quantized ({}): give the checkpoint the "
                           "engine was built from",
                           q.algo, c.hf_id.empty() ? std::string("the model") : c.hf_id,
                           c.quant.raw_method.empty() ? std::string(dtype_name(c.dtype)) : c.quant.raw_method));
  // ModelOpt / TensorRT-LLM quantize the Linear layers of attention, MLP and experts; embedding,
  // lm_head (excluded by quantize.py's defaults), norms and the MoE router stay 16-bit.
  double bytes = static_cast<double>(w.bytes);
  for (const auto& [component, b] : w.by_component)
    if (component == "attention" || component == "mlp" || component == "experts")
      bytes -= static_cast<double>(b) * (1.0 - q.bytes_per_weight / 2.0);
  return static_cast<int64_t>(bytes);
}

Estimate pytorch_executor_overhead() {
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
  const EstimatedConstant& k = constant(Const::PytorchExecutorOverhead);
  return range_of(k, k.central * gib,
               "TensorRT-LLM PyTorch executor overhead beyond vLLM's terms (sampler, runtime buffers, kernel modules, allocator "
               "leftovers): 0.64 GiB per rank (ESTIMATE from 3 single-GPU TensorRT-LLM logs, 0.49..1.34 GiB; one constant is a GUESS)");
}

}  // namespace headroom::trtllm
