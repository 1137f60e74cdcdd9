// vLLM rules changed after replaying real startup logs from outside the corpus
// (tests/data/extra/vllm.jsonl): where V0 0.6.5+ charges the CUDA context, which sampler the
// profile run uses from 0.16, the batch defaults on a DGX Spark (NVML has no memory figure), and
// the wider non-torch range on unified-memory devices. Each expectation quotes the log it comes from.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "engines/vllm/vllm_rules.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
bool log_contains(const Forecast& f, const std::string& part) {
  return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}
bool notes_contain(const Forecast& f, const std::string& part) {
  return std::any_of(f.notes.begin(), f.notes.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}
double pct_err(int64_t predicted, int64_t logged) { return 100.0 * std::abs(static_cast<double>(predicted - logged)) / static_cast<double>(logged); }
}  // namespace

TEST(VllmExtraCalibration, V0From065KeepsTheCudaContextOutOfTheBudget) {
  // xvllm-016 (public-code 69421856836, vLLM 0.6.6.post1, Colab T4 14.56 GiB, Qwen2.5-0.5B fp16):
  // "model weights take 0.93GiB; non_torch_memory takes 0.11GiB; PyTorch activation peak memory
  // takes 1.44GiB; the rest of the memory reserved for KV Cache is 10.63GiB." and
  // "# GPU blocks: 58059" = 928,944 tokens. PR #10511 (0.6.5) profiles inside memory_profiling
  // whose baseline already holds the context, so only the growth (0.15 GiB estimated) is charged.
  std::vector<std::string> argv = {"--engine", "vllm@0.6.6.post1", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu-memory", "14.56GiB",
                                   "--dtype", "float16"};
  Forecast f = run(argv);
  EXPECT_TRUE(log_contains(f, "non_torch_memory takes 0.15GiB")) << "the context is not charged";
  EXPECT_LT(pct_err(f.kv_tokens, 928944), 0.5);  // 926,464 forecast
  // 0.6.4 (before PR #10511) still charges every non-torch byte in use, context included:
  // "non_torch_memory=0.35GiB" on an RTX 3090 (vllm-021); here 0.45 context + 0.15 growth.
  argv[1] = "vllm@0.6.4";
  Forecast g = run(argv);
  EXPECT_TRUE(log_contains(g, "non_torch_memory=0.60GiB"));
  EXPECT_LT(g.kv_tokens, f.kv_tokens);
}

TEST(VllmExtraCalibration, V0Before065PrintsItsOneLineResultsAndCpuBlocks) {
  // Corpus vllm-021 (vllm#10517, Llama-3.1-8B, RTX 3090 23.58 GiB, --max-model-len 29000): "Memory
  // profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB
  // memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB
  // gpu_memory_utilization=0.90", "# GPU blocks: 1478, # CPU blocks: 2048" and the refusal at 23,648
  // tokens. CPU blocks = 4 GiB swap // (16 tokens x 32 layers x 8 heads x 128 x 2 x 2 B = 2 MiB) = 2048.
  std::vector<std::string> argv = {"--engine", "vllm@0.6.4", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx-3090",
                                   "--gpu-memory", "23.58GiB", "--gpu-memory-utilization", "0.9", "--max-model-len", "29000"};
  Forecast f = run(argv);
  EXPECT_EQ(f.verdict, Verdict::Refused);
  EXPECT_LT(pct_err(f.kv_tokens, 23648), 1.0);  // 23,488 forecast (-0.7%)
  EXPECT_TRUE(log_contains(f, "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage="));
  EXPECT_TRUE(log_contains(f, "gpu_memory_utilization=0.90"));
  EXPECT_TRUE(log_contains(f, "# CPU blocks: 2048"));
  argv.insert(argv.end(), {"--swap-space", "1"});
  EXPECT_TRUE(log_contains(run(argv), "# CPU blocks: 512"));
  // CacheConfig.swap_space: float, ge=0; a PiB per GPU is no host's memory.
  EXPECT_NE(input_error({"--engine", "vllm@0.6.4", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--swap-space", "-1"})
                .find("Input should be greater than or equal to 0"),
            std::string::npos);
  EXPECT_NE(input_error({"--engine", "vllm@0.6.4", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--swap-space", "1e300"}).find("Too large swap space"),
            std::string::npos);
}

TEST(VllmExtraCalibration, ProfileRunSamplerIsTritonFrom016) {
  // xvllm-010 (public-code 57978845466, vLLM 0.19.1, A100-SXM4-40GB, Qwen3-8B, defaults):
  // "Available KV cache memory: 19.36 GiB", "GPU KV cache size: 140,960 tokens". 35.45 requested
  // - 15.27 weights - 19.36 = 0.82 GiB for peak + non-torch: below the 1.38 GiB of the PyTorch
  // sort over 256 x 151,936 logits, so the dummy sampler ran the 14 B/logit path (PR #33538).
  std::vector<std::string> argv = {"--engine", "vllm@0.19.1", "--model", "Qwen/Qwen3-8B", "--gpu", "a100-40gb"};
  Forecast f = run(argv);
  EXPECT_LT(pct_err(f.kv_tokens, 140960), 1.5);  // 142,144 forecast
  EXPECT_TRUE(notes_contain(f, "Triton/FlashInfer top-k/top-p 14 B/logit"));
  argv[1] = "vllm@0.15.1";  // before the cut: the sort path, ~0.87 GiB less KV
  Forecast g = run(argv);
  EXPECT_TRUE(notes_contain(g, "PyTorch sort path 38 B/logit"));
  EXPECT_LT(g.kv_tokens, f.kv_tokens);
}

TEST(VllmExtraCalibration, DgxSparkTakesTheSmallBatchDefaults) {
  // xvllm-018 (public-code 55144767765, vLLM 0.13.0 NVIDIA 26.01 container on a DGX Spark):
  // "Chunked prefill is enabled with max_num_batched_tokens=2048." although torch reports 121.69
  // GiB: get_batch_defaults reads the total through NVML, which has no memory figure on the GB10,
  // and its except branch takes 0 GiB -> 2048 tokens / 256 sequences.
  std::vector<std::string> spark = {"--engine", "vllm@0.13.0", "--model", "Qwen/Qwen3-30B-A3B-FP8", "--gpu", "dgx-spark",
                                    "--max-model-len", "32768", "--gpu-memory-utilization", "0.3", "--kv-cache-dtype", "fp8"};
  Forecast f = run(spark);
  ASSERT_NE(f.setting("--max-num-batched-tokens"), nullptr);
  EXPECT_EQ(*f.setting("--max-num-batched-tokens"), "2048");
  EXPECT_EQ(*f.setting("--max-num-seqs"), "256");
  // A discrete GPU of the same size (NVML answers) keeps the >= 70 GiB defaults.
  std::vector<std::string> custom = {"--engine", "vllm@0.13.0", "--model", "Qwen/Qwen3-30B-A3B-FP8", "--gpu-memory", "121.69GiB",
                                     "--max-model-len", "32768"};
  Forecast g = run(custom);
  EXPECT_EQ(*g.setting("--max-num-batched-tokens"), "8192");
  EXPECT_EQ(*g.setting("--max-num-seqs"), "1024");
}

TEST(VllmExtraCalibration, UnifiedMemoryWidensTheNonTorchRange) {
  // vLLM's MemorySnapshot takes psutil's available memory as free on SM 8.7 / 11.0 / 12.1 (Orin,
  // Thor, Spark); xvllm-018 left 3.43 GiB for peak + non-torch where the profile run explains
  // ~1.4. The host growth is an ESTIMATE from the four DGX Spark logs (1.85 .. 8.55 GiB over
  // xvllm-018, -020, -021, -041): the central gains 1.9 GiB (what each of them shows at least), the
  // unfavourable end 8.6 GiB, the favourable end stays the discrete figure.
  EXPECT_TRUE(unified_memory_device(121));
  EXPECT_TRUE(unified_memory_device(87));
  EXPECT_FALSE(unified_memory_device(120));  // RTX 5090 / RTX PRO 6000: discrete memory
  vllm::Estimate nt;
  nt.central = 150 * MiB;
  nt.low = 15 * MiB;
  nt.high = 375 * MiB;
  vllm::Estimate u = vllm::uma_non_torch(nt);
  EXPECT_EQ(u.central, nt.central + static_cast<int64_t>(1.9 * GiB));
  EXPECT_EQ(u.low, nt.low);
  EXPECT_EQ(u.high, nt.high + static_cast<int64_t>(8.6 * GiB));
}

TEST(VllmExtraCalibration, ColdTorchCompileCacheHoldsAboutAGibMoreOnModelRunnerV2) {
  // Same-host pairs, vLLM 0.27.1 on an RTX 4090 (23.52 GiB), `vllm serve`, Model Runner V2
  // (tests/data/extra xvllm-111 / -112): Qwen3-8B at --max-model-len 8192, the first start
  // compiling ("torch.compile took 38.96 s") logs 35,792 tokens and 1.18 GiB peak activation, the
  // restart loading the AOT artifact 43,040 and 0.19 GiB. The plan is the restart's unless told.
  std::vector<std::string> argv = {"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--gpu-memory", "23.52GiB",
                                   "--max-model-len", "8192"};
  const Forecast warm = run(argv);
  EXPECT_LT(pct_err(warm.kv_tokens, 43040), 3.0);  // 41,888 (-2.7%)
  EXPECT_TRUE(notes_contain(warm, "--compile-cache cold plans it"));
  auto cold_args = argv;
  cold_args.insert(cold_args.end(), {"--compile-cache", "cold"});
  const Forecast cold = run(cold_args);
  EXPECT_LT(pct_err(cold.kv_tokens, 35792), 3.5);  // 34,608 (-3.3%)
  // +1.0 GiB at the profile peak = 7,280 tokens of 144 KiB, in whole 16-token blocks.
  EXPECT_NEAR(static_cast<double>(warm.kv_tokens - cold.kv_tokens), 1073741824.0 / 147456, 16);
  // vLLM's own switch for "always compile" gives the same; --enforce-eager compiles nothing.
  auto env_args = argv;
  env_args.insert(env_args.end(), {"--env", "VLLM_DISABLE_COMPILE_CACHE=1"});
  EXPECT_EQ(run(env_args).kv_tokens, cold.kv_tokens);
  auto eager = cold_args;
  eager.insert(eager.end(), {"--enforce-eager"});
  auto eager_warm = argv;
  eager_warm.insert(eager_warm.end(), {"--enforce-eager"});
  EXPECT_EQ(run(eager).kv_tokens, run(eager_warm).kv_tokens);
  // The V1 runner (0.24.0, dense before V2) was fitted on first starts: no term, the option noted.
  const Forecast v1 = run({"--engine", "vllm@0.24.0", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-5090", "--max-model-len", "32768",
                           "--gpu-memory-utilization", "0.92", "--compile-cache", "cold"});
  const Forecast v1w = run({"--engine", "vllm@0.24.0", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-5090", "--max-model-len", "32768",
                            "--gpu-memory-utilization", "0.92", "--compile-cache", "warm"});
  EXPECT_EQ(v1.kv_tokens, v1w.kv_tokens);
  EXPECT_LT(pct_err(v1.kv_tokens, 89040), 0.1);  // xvllm-012 first boot (89,024; its warm reboot 95,936)
  EXPECT_TRUE(notes_contain(v1w, "0.95 GiB more KV"));
  EXPECT_NE(input_error({"--engine", "vllm", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--compile-cache", "hot"}).find("not one of cold, warm"),
            std::string::npos);
}
