// TensorRT-LLM terms fitted in the third pass on TensorRT-LLM's own log lines: a TensorRT
// engine's execution context, runtime buffers and decoder ("[MemUsageChange] Allocated ..."),
// the weights of an FP8-built engine of a 16-bit checkpoint (--quantization FP8), the DGX Spark's
// unified memory, and which side of torch the estimation run's KV pool is printed on. Each test
// names the log its figures come from (tests/data/extra/trtllm.jsonl holds the lines verbatim).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engines/trtllm/trtllm_estimates.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
const double G = static_cast<double>(GiB);
const double MiBd = 1024.0 * 1024.0;
ModelConfig llama2_7b_like() {  // the two fields the engine terms read (Llama-2-7B: hidden 4096, vocab 32000)
  ModelConfig c;
  c.hidden_size = 4096;
  c.vocab_size = 32000;
  return c;
}
// "... total: 79.10 GiB, available: 70.48 GiB" -> 70.48
double available_in(const Forecast& f) {
  const std::string key = "available: ";
  for (const auto& l : f.log)
    if (l.rfind("[TensorRT-LLM][INFO] Memory usage when calculating max tokens in paged kv cache", 0) == 0)
      return std::stod(l.substr(l.find(key) + key.size()));
  return -1;
}
const Stage* stage_of(const Forecast& f, const std::string& name) {
  for (const auto& s : f.ranks.front().stages)
    if (headroom::name(s.id) == name) return &s;
  return nullptr;
}
}  // namespace

TEST(TrtllmEngineTerms, ExecutionContextCoversTheLoggedAllocations) {
  // "[MemUsageChange] Allocated 928.77 MiB for execution context memory." (Llama-2-7B FP8 engine,
  // max_num_tokens 8192, trtllm-bench README, xtrt-018) and 1134.01 MiB (docs memory.md, xtrt-013,
  // the 8192 default): 32 x 4096 x 8192 B = 1024 MiB, range 870 .. 1229 MiB holds both.
  Estimate e = trtllm::trt_execution_context(llama2_7b_like(), 8192);
  EXPECT_EQ(e.central, 32LL * 4096 * 8192);
  EXPECT_LE(static_cast<double>(e.low), 928.77 * MiBd);
  EXPECT_GE(static_cast<double>(e.high), 1134.01 * MiBd);
  // tensorrtllm_backend#576: 480.04 MiB at max_num_tokens 4096 (Llama-3-8B, hidden 4096).
  Estimate half = trtllm::trt_execution_context(llama2_7b_like(), 4096);
  EXPECT_LE(static_cast<double>(half.low), 480.04 * MiBd);
  EXPECT_GE(static_cast<double>(half.high), 480.04 * MiBd);
}

TEST(TrtllmEngineTerms, RuntimeBuffersAndDecoderScaleWithBatchAndVocab) {
  // 0.19 (xtrt-003, TensorRT-LLM#4275): 20 B x 128,256 x 2048 = 4.89 GiB, the ~4.97 GiB the log
  // leaves after the FP8 engine, its context and the CUDA context.
  ModelConfig l3 = llama2_7b_like();
  l3.vocab_size = 128256;
  Estimate later = trtllm::trt_runtime_buffers(l3, 2048);
  EXPECT_EQ(later.central, 20LL * 128256 * 2048);
  // tensorrtllm_backend#576 (0.13.0.dev): "Allocated 3.44 MB ... runtime buffers." + "15.05 MB ...
  // decoder." at max_batch_size 8: inside the range.
  Estimate small = trtllm::trt_runtime_buffers(l3, 8);
  EXPECT_LE(static_cast<double>(small.low), (3.44 + 15.05) * MiBd);
  EXPECT_GE(static_cast<double>(small.high), (3.44 + 15.05) * MiBd);
  // xtrt-018 (0.12.0.dev): "Allocated 1.14 GB ... runtime buffers." + "4.35 GB ... decoder." at
  // max_batch_size 4096, vocab 32000: 5.49 GiB, the range's unfavourable end (5.62 GiB).
  Estimate old = trtllm::trt_runtime_buffers(llama2_7b_like(), 4096);
  EXPECT_LT(static_cast<double>(old.central) / G, 2.5);
  EXPECT_GE(static_cast<double>(old.high) / G, 1.14 + 4.35);
}

TEST(TrtllmEngineTerms, Fp8EngineOfTheBf16Checkpoint) {
  // docs memory.md (xtrt-013): "Loaded engine size: 6695 MiB" for Llama-2-7B with FP8 linears.
  // --quantization FP8 on the BF16 catalog checkpoint: 6.48e9 B of FP8 linears + 0.52e9 B of
  // embedding / lm_head / norms = 6,681 MiB (-0.2%); the BF16 checkpoint is 12.55 GiB.
  Forecast f = run({"--engine", "trtllm@0.12.0", "--model", "meta-llama/Llama-2-7b-hf", "--gpu", "h100", "--gpu-memory", "79.1GiB", "--backend",
                    "tensorrt", "--quantization", "FP8", "--kv_cache_dtype", "fp8"});
  const Stage* w = stage_of(f, "weights");
  ASSERT_NE(w, nullptr);
  EXPECT_NEAR(static_cast<double>(w->items.front().bytes) / MiBd, 6695.0, 0.01 * 6695.0);
  // The C++ runtime's free memory before the pool: logged 70.48 GiB (engine, context, 43.29 MB +
  // 180.30 MB of buffers at the doc's unstated max_batch_size); planned at the default 2048.
  EXPECT_NEAR(available_in(f), 70.48, 0.04 * 70.48);
  // The same engine without the flag plans the checkpoint's 16-bit weights: 6 GiB less free.
  Forecast bf16 = run({"--engine", "trtllm@0.12.0", "--model", "meta-llama/Llama-2-7b-hf", "--gpu", "h100", "--gpu-memory", "79.1GiB", "--backend",
                       "tensorrt", "--kv_cache_dtype", "fp8"});
  EXPECT_LT(available_in(bf16), available_in(f) - 5.5);
}

TEST(TrtllmEngineTerms, QuantizationFlagIsForEnginesOf16BitCheckpoints) {
  // The PyTorch backend reads the checkpoint's quantization; trtllm-serve has no such flag.
  EXPECT_NE(input_error({"--engine", "trtllm@1.2.1", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--quantization", "FP8"}).find("--backend tensorrt"),
            std::string::npos);
  // NVFP4 engines are not modelled (the message lists what is).
  EXPECT_NE(input_error({"--engine", "trtllm@0.19.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--backend", "tensorrt", "--quantization", "NVFP4"})
                .find("not modelled by headroom (FP8, FP8_PER_CHANNEL_PER_TOKEN, W8A16,"),
            std::string::npos);
  // An FP8 checkpoint is what its engine holds already.
  EXPECT_NE(input_error({"--engine", "trtllm@0.19.0", "--model", "Qwen/Qwen3-32B-FP8", "--gpu", "h100", "--backend", "tensorrt", "--quantization", "FP8"})
                .find("16-bit checkpoint"),
            std::string::npos);
  EXPECT_EQ(input_error({"--engine", "trtllm@0.19.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--backend", "tensorrt", "--quantization", "fp8"}), "");
}

TEST(TrtllmEngineTerms, IntegerEnginesOf16BitCheckpoints) {
  auto weights_mib = [](const Forecast& f) {
    const Stage* w = stage_of(f, "weights");
    return w ? static_cast<double>(w->items.front().bytes) / MiBd : 0.0;
  };
  // xtrt-024 (tensorrtllm_backend#577, 0.13): Meta-Llama-3-8B-Instruct, quantize.py --qformat
  // int4_awq --awq_block_size 128 --tp_size 2: "TensorRT-managed allocation ... GPU 2723 (MiB)" per
  // rank. Linears 6.98e9 / 2 x (0.5 + 2/128) B + embedding and lm_head (16-bit, split over the
  // two ranks) = 2,714 MiB (-0.3%). Its 17,210 primary blocks of 64 are 1,101,440 tokens.
  Forecast awq = run({"--engine", "trtllm@0.13.0", "--model", "meta-llama/Meta-Llama-3-8B-Instruct", "--gpu", "h100", "--gpu-memory", "79.14GiB",
                      "--tp", "2", "--backend", "tensorrt", "--quantization", "W4A16_AWQ", "--max_batch_size", "8", "--max_num_tokens", "4096",
                      "--max_seq_len", "8000", "--tokens_per_block", "64"});
  EXPECT_NEAR(weights_mib(awq), 2723.0, 0.01 * 2723.0);
  EXPECT_NEAR(static_cast<double>(awq.kv_tokens), 1101440.0, 0.01 * 1101440.0);
  // xtrt-023 (TensorRT-LLM#1400, 0.8): Llama-2-7B SmoothQuant engine, "GPU 6683 (MiB)": INT8
  // linears, 1 B each = 6,677 MiB (-0.1%); 132,608 tokens in the pool.
  Forecast sq = run({"--engine", "trtllm@0.8.0", "--model", "meta-llama/Llama-2-7b-hf", "--gpu", "a100-80gb", "--backend", "tensorrt",
                     "--quantization", "W8A8_SQ_PER_TENSOR_PLUGIN", "--max_batch_size", "1", "--max_num_tokens", "4096", "--max_seq_len", "5120",
                     "--max_beam_width", "5"});
  EXPECT_NEAR(weights_mib(sq), 6683.0, 0.01 * 6683.0);
  EXPECT_NEAR(static_cast<double>(sq.kv_tokens), 132608.0, 0.01 * 132608.0);
  // xtrt-025 (a blog, 1.0.0rc4): QwQ-32B --use_weight_only --weight_only_precision int4 on an A100
  // 40GB: "total: 39.49 GiB, available: 20.44 GiB". W4A16 linears 0.5 B + 16-bit embedding and
  // lm_head = 17.43 GiB; the 16-bit checkpoint (61 GiB) would not load.
  Forecast w4 = run({"--engine", "trtllm@1.0.0rc4", "--model", "Qwen/QwQ-32B", "--gpu", "a100-40gb", "--gpu-memory", "39.49GiB", "--backend", "tensorrt",
                     "--quantization", "W4A16", "--max_batch_size", "1", "--max_seq_len", "8192", "--max_num_tokens", "4096"});
  ASSERT_EQ(w4.verdict, Verdict::Fits);
  EXPECT_NEAR(available_in(w4), 20.44, 0.03 * 20.44);
}

TEST(TrtllmEngineTerms, Llama31Fp8EngineOnRtx5090) {
  // xtrt-003 (TensorRT-LLM#4275, 0.19.0, ModelOpt FP8 engine of Llama-3.1-8B-Instruct, RTX 5090):
  // "total: 31.84 GiB, available: 17.83 GiB", "... (263008)". Planned: 8.46 GiB of FP8 engine.
  Forecast f = run({"--engine", "trtllm@0.19.0", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-5090", "--gpu-memory", "31.84GiB",
                    "--backend", "tensorrt", "--quantization", "FP8", "--kv_cache_dtype", "fp8", "--max_batch_size", "2048", "--max_num_tokens", "1024",
                    "--max_seq_len", "2048"});
  ASSERT_EQ(f.verdict, Verdict::Fits);
  EXPECT_NEAR(available_in(f), 17.83, 0.03 * 17.83);  // the 20 B decoder figure comes from this log: in-sample
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 263008.0, 0.03 * 263008.0);
}

TEST(TrtllmEngineTerms, DgxSparkKvRangeReachesTheLoggedPool) {
  // xtrt-002 (DGX Spark, gpt-oss-120b, 1.1.0rc3): 49.78 GiB of the unified memory was in use
  // outside torch after loading, and "Estimated max memory in KV cache : 5.95 GiB". The central
  // cannot see the host; the pool's unfavourable end must reach below the logged 5.95 GiB.
  Forecast f = run({"--engine", "trtllm@1.1.0rc3", "--model", "openai/gpt-oss-120b", "--gpu", "dgx-spark", "--gpu-memory", "119.7GiB",
                    "--max_batch_size", "64", "--cuda_graph_enable_padding", "true"});
  const Stage* kv = stage_of(f, "kv_pool");
  ASSERT_NE(kv, nullptr);
  const Item& pool = kv->items.front();
  EXPECT_LT(static_cast<double>(std::min(pool.low, pool.high)) / G, 5.95);
  EXPECT_GT(static_cast<double>(pool.bytes) / G, 40.0);  // a discrete GPU's pool: the central
  // The same GPU size on a discrete card keeps the narrow range.
  Forecast discrete = run({"--engine", "trtllm@1.1.0rc3", "--model", "openai/gpt-oss-120b", "--gpu", "h200", "--gpu-memory", "119.7GiB",
                           "--max_batch_size", "64", "--cuda_graph_enable_padding", "true"});
  const Item& dpool = stage_of(discrete, "kv_pool")->items.front();
  EXPECT_GT(static_cast<double>(std::min(dpool.low, dpool.high)) / G, 40.0);
}

TEST(TrtllmEngineTerms, EstimationPoolIsPrintedOutsideTorch) {
  // xtrt-002's 1.1.0rc3 lines: "Memory dynamically allocated during inference (inside torch) in
  // memory usage profiling: 0.85 GiB" with a 0.56 GiB temporary pool ("tmp kv_mem 0.56 GiB"): the
  // pool is the C++ manager's, outside torch; the torch peak above the weights is activations only.
  Forecast f = run({"--engine", "trtllm@1.1.0rc3", "--model", "openai/gpt-oss-120b", "--gpu", "h200", "--gpu-memory", "119.7GiB", "--max_batch_size",
                    "64", "--cuda_graph_enable_padding", "true"});
  const std::string key = "Memory dynamically allocated during inference (inside torch) in memory usage profiling: ";
  double act = -1;
  for (const auto& l : f.log)
    if (l.rfind(key, 0) == 0) act = std::stod(l.substr(key.size()));
  EXPECT_NEAR(act, 0.85, 0.1);
}
