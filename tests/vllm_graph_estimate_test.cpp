// vLLM's CUDA-graph estimate (profile_cudagraph_memory, "Estimated CUDA graph memory: X GiB total",
// subtracted from the KV budget from 0.21) by model runner, and the Model Runner V2 dummy
// sampler, against real startup logs. vllm_estimates.cpp model_runner_v2 / cuda_graph_estimate /
// sampler_path hold the rules and their sources; every case quotes the log it replays.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "engines/vllm/vllm_rules.h"
#include "headroom/model.h"
#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
bool log_contains(const Forecast& f, const std::string& part) {
  return std::any_of(f.log.begin(), f.log.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}
// The first number after `head` in the first log line that contains it; -1 when none does.
double log_number(const Forecast& f, const std::string& head) {
  for (const auto& l : f.log) {
    size_t at = l.find(head);
    if (at == std::string::npos) continue;
    double v = -1;
    if (std::sscanf(l.c_str() + at + head.size(), "%lf", &v) == 1) return v;
  }
  return -1;
}
double pct_err(int64_t predicted, int64_t logged) { return 100.0 * std::abs(static_cast<double>(predicted - logged)) / static_cast<double>(logged); }
}  // namespace

TEST(VllmGraphEstimate, ModelRunnerV2Before028ReservesNothing) {
  // Corpus vllm-053 (vLLM 0.27.1, Qwen2.5-0.5B-Instruct, RTX 4090 under WSL2, 23.99 GiB, util 0.92,
  // max_num_batched_tokens 8192): "Available KV cache memory: 20.52 GiB", "GPU KV cache size:
  // 1,793,232 tokens", "Actual usage is 1.23 GiB for consumed memory (weights + non-torch), 0.31
  // GiB for peak activation". The log's model_runner.py lines are Model Runner V2, whose
  // profile_cudagraph_memory() returned 0 until 0.28 (vllm#49224): no "Estimated CUDA graph
  // memory" line, nothing reserved. Forecast: 22.07 requested - 0.93 weights - 0.385 consumed -
  // weights - 0.25 torch peak (the forward at 8192 tokens; the V2 sampler's 6 B/logit x 256 x
  // 151,936 = 0.22 GiB is below it) = 20.51 GiB.
  std::vector<std::string> argv = {"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--gpu", "rtx-4090", "--gpu-memory",
                                   "23.99GiB", "--gpu-memory-utilization", "0.92", "--max-num-batched-tokens", "8192", "--dtype", "bfloat16"};
  Forecast f = run(argv);
  EXPECT_FALSE(log_contains(f, "Estimated CUDA graph memory"));
  EXPECT_NEAR(log_number(f, "Available KV cache memory: "), 20.52, 0.05);
  EXPECT_LT(pct_err(f.kv_tokens, 1793232), 0.5);
  EXPECT_NEAR(log_number(f, "GiB for consumed memory (weights + non-torch), "), 0.31, 0.07);  // the peak activation figure
  // The same deployment on 0.24.0 (V1 runner, before V2 became the default): 86 graphs x 24 layers
  // x 0.19 MiB + 16 MiB = 408 MiB estimated and charged.
  argv[1] = "vllm@0.24.0";
  Forecast g = run(argv);
  EXPECT_NEAR(log_number(g, "Estimated CUDA graph memory: "), 0.40, 0.005);
  EXPECT_LT(g.kv_tokens, f.kv_tokens);
}

TEST(VllmGraphEstimate, ModelRunnerV2EstimatorFrom028) {
  // xvllm-001 (public-code 70682754770, vLLM 0.31.0 image, Llama-3.1-8B-Instruct, A100 80GB
  // 79.25 GiB, defaults): "Actual usage is 15.26 GiB for consumed memory (weights + non-torch),
  // 1.44 GiB for peak activation, and 0.23 GiB for CUDAGraph memory", "Available KV cache memory:
  // 56.21 GiB", 460,496 tokens. The peak activation figure holds the applied estimate; V2's 0.28+
  // estimator is 86 graphs x 32 layers x 0.27 MiB + 16 MiB = 759.0 MiB = 0.74 GiB (the median of six
  // logs' figures, vllm_estimates.cpp cuda_graph_estimate; this log's own is the highest of them,
  // ~0.456 MiB, so its printed peak activation comes out 0.94 against 1.44 and its KV +0.7%), while
  // the capture after the estimator's own is 86 x 32 x 0.077 + 16 = 227.9 MiB = 0.22 GiB (0.23 logged).
  Forecast f = run({"--engine", "vllm@0.31.0", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "a100-80gb", "--gpu-memory", "79.25GiB"});
  EXPECT_NEAR(log_number(f, "Estimated CUDA graph memory: "), 0.74, 0.005);
  EXPECT_NEAR(log_number(f, "Graph capturing finished, took "), 0.22, 0.005);
  EXPECT_NEAR(log_number(f, "GiB for consumed memory (weights + non-torch), "), 0.94, 0.01);
  EXPECT_LT(pct_err(f.kv_tokens, 460496), 1.0);
  // xvllm-002 (public-code 60168338778, vLLM 0.28.0, Qwen3-14B, L40S, defaults): 75,824 tokens in
  // 11.57 GiB. 86 x 40 x 0.27 + 16 = 944.8 MiB = 0.92 GiB estimated.
  Forecast g = run({"--engine", "vllm@0.28.0", "--model", "Qwen/Qwen3-14B", "--gpu", "l40s"});
  EXPECT_NEAR(log_number(g, "Estimated CUDA graph memory: "), 0.92, 0.005);
  EXPECT_LT(pct_err(g.kv_tokens, 75824), 3.0);
}

TEST(VllmGraphEstimate, V2CaptureAfterItsProfilingCaptureFrom029) {
  // xvllm-115 (vLLM 0.29.0, Qwen3-14B on an L40S, "Using V2 Model Runner"): the estimator's capture
  // "took 0.44 GiB", the real one after it "took 0.27 GiB" ("CUDA graph pool memory: 0.27 GiB
  // (actual)"). 86 graphs x 40 layers x 0.077 MiB + 16 MiB = 280.9 MiB = 0.27 GiB.
  Forecast f = run({"--engine", "vllm@0.29.0", "--model", "Qwen/Qwen3-14B", "--gpu", "l40s"});
  EXPECT_NEAR(log_number(f, "Graph capturing finished, took "), 0.27, 0.005);
  // 0.27.1's V2 had no profiling capture: its capture keeps the V1 figures (Qwen3-8B on an RTX 4090
  // took 0.56 GiB, xvllm-111: 36 x (51 x 0.27 + 35 x 0.05) + 16 = 574.7 MiB = 0.56).
  Forecast g = run({"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-8B", "--gpu", "rtx-4090", "--max-model-len", "8192"});
  EXPECT_NEAR(log_number(g, "Graph capturing finished, took "), 0.56, 0.005);
}

TEST(VllmGraphEstimate, HybridsAndMoeKeepTheV1Runner) {
  // The Gated-DeltaNet hybrids stay on the V1 runner in 0.27.1 (public-code 61316607224: Qwen3.8-27B
  // on 0.27.1 logs gpu_model_runner.py "Estimated CUDA graph memory: 1.56 GiB total"), so their
  // estimate is the capture forecast; so do MoE models.
  const vllm::Era era = vllm::era_for_version("0.27.1");
  const auto dense_model = load_model("Qwen/Qwen2.5-0.5B-Instruct");
  const auto hybrid_model = load_model("Qwen/Qwen3.5-9B");
  const auto moe_model = load_model("Qwen/Qwen3-30B-A3B");
  const ModelConfig& dense = dense_model->config;
  const ModelConfig& hybrid = hybrid_model->config;
  const ModelConfig& moe = moe_model->config;
  EXPECT_TRUE(vllm::model_runner_v2(era, dense));
  EXPECT_FALSE(vllm::model_runner_v2(era, hybrid));
  EXPECT_FALSE(vllm::model_runner_v2(era, moe));
  EXPECT_FALSE(vllm::model_runner_v2(vllm::era_for_version("0.25.0"), dense));  // V2 default from 0.25.1
  vllm::Estimate capture;
  capture.central = 600 * MiB;
  capture.low = 400 * MiB;
  capture.high = 900 * MiB;
  EXPECT_EQ(vllm::cuda_graph_estimate(era, hybrid, capture, 32, 86).central, capture.central);
  EXPECT_EQ(vllm::cuda_graph_estimate(era, dense, capture, 24, 86).central, 0);
}

TEST(VllmGraphEstimate, EveryFamilyTakesModelRunnerV2From029) {
  // PR #53183 (2026-08-27): V2 the default across model families, "the first tagged release with
  // this default will be v0.29.0" (vLLM blog, 2026-08-31). Corpus vllm-009, a Qwen3.8-27B hybrid
  // on 0.29.1rc1, logs model_runner.py; xvllm-033, Qwen3-235B MoE on 0.27.1, gpu_model_runner.py.
  const auto hybrid_model = load_model("Qwen/Qwen3.5-9B");
  const auto moe_model = load_model("Qwen/Qwen3-30B-A3B");
  const auto dense_model = load_model("Qwen/Qwen2.5-0.5B-Instruct");
  const vllm::Era v29 = vllm::era_for_version("0.29.0"), v28 = vllm::era_for_version("0.28.0");
  EXPECT_TRUE(vllm::model_runner_v2(v29, hybrid_model->config));
  EXPECT_TRUE(vllm::model_runner_v2(v29, moe_model->config));
  EXPECT_FALSE(vllm::model_runner_v2(v28, hybrid_model->config));
  EXPECT_FALSE(vllm::model_runner_v2(v28, moe_model->config));
  EXPECT_TRUE(vllm::model_runner_v2(vllm::era_for_version("0.28.1rc1.dev580+g385dce36b"), moe_model->config));  // main after 08-27
  // The blog's fallbacks and the environment switch, read from the deployment.
  auto sampler_note = [](std::vector<std::string> a) {
    const Forecast f = run(a);
    return std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.find("Model Runner V2 dummy sampler") != std::string::npos; });
  };
  const std::vector<std::string> base{"--engine", "vllm@0.31.0", "--model", "Qwen/Qwen3-8B", "--gpu", "h100"};
  auto with = [&](const std::vector<std::string>& extra) { return plus(base, extra); };
  EXPECT_TRUE(sampler_note(base));
  EXPECT_FALSE(sampler_note(with({"--env", "VLLM_USE_V2_MODEL_RUNNER=0"})));
  EXPECT_FALSE(sampler_note(with({"--enable-dbo"})));  // dual batch overlap: one of the blog's fallbacks
  EXPECT_FALSE(sampler_note(with({"--speculative-config", R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})"})));
  EXPECT_TRUE(sampler_note({"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-30B-A3B", "--gpu", "h100", "--env", "VLLM_USE_V2_MODEL_RUNNER=1"}));
  // DeepSeek-V3.2 on ROCm stays on V1; on NVIDIA it takes V2.
  const std::vector<std::string> v32{"--engine", "vllm@0.31.0", "--model", "deepseek-ai/DeepSeek-V3.2", "--tp", "8", "--kv-cache-dtype", "fp8"};
  auto on = [&](const char* gpu) { return plus(v32, {"--gpu", gpu}); };
  EXPECT_FALSE(sampler_note(on("mi355x")));
  EXPECT_TRUE(sampler_note(on("b200")));
  // The plan says which runner and why.
  const Forecast moe27 = run({"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-30B-A3B", "--gpu", "h100"});
  EXPECT_TRUE(std::any_of(moe27.notes.begin(), moe27.notes.end(), [](const std::string& n) {
    return n == "model runner: the V1 model runner (gpu_model_runner.py): MoE and hybrid models keep it until 0.29.0";
  }));
  EXPECT_NE(input_error(with({"--env", "VLLM_USE_V2_MODEL_RUNNER=yes"})).find("VLLM_USE_V2_MODEL_RUNNER: 'yes' is not 0 or 1"), std::string::npos);
}

TEST(VllmGraphEstimate, ModelRunnerV2DummySamplerIs6Bytes) {
  // Model Runner V2's _dummy_sampler_run skips top-k/top-p ("the sampler may skip top_k, top_p,
  // and logprobs"): bf16 logits 2 B + their fp32 copy 4 B. The dense toy config (plan_test_util.h,
  // vocab 151,936, hidden 2048) at 0.27.1 with 256 requests and 8192 batched tokens:
  // 256 x 151,936 x 6 + 8192 x 2048 x 2 = 233,373,696 + 33,554,432 = 266,928,128 B (above its
  // forward peak of 150,994,944); the high end is the V1 path's 14 B = 578,093,056.
  const vllm::Estimate e = vllm::activation_peak(vllm::era_for_version("0.27.1"), sampler_toy(), Parallel{}, 8192, 256, true, 2);
  EXPECT_EQ(e.central, 266928128);
  EXPECT_NEAR(static_cast<double>(e.high), 578093056.0, 4.0);
  // 0.24.0 (V1 runner): 14 B.
  EXPECT_EQ(vllm::activation_peak(vllm::era_for_version("0.24.0"), sampler_toy(), Parallel{}, 8192, 256, true, 2).central, 578093056);
}
