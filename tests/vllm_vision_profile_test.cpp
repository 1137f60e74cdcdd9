// vLLM's profile run on a Qwen3-VL / Qwen3.5 checkpoint encodes budget // 16,384 dummy images of
// 16,384 tokens (budget = max(max_num_batched_tokens, 16,384)) before the text dummy run and keeps
// their outputs through it (vllm_plan.cpp vision_profile_peak): the tower's peak is the profile
// run's torch peak when it exceeds the text one (+ the kept outputs). The text side of a
// Gated-DeltaNet hybrid holds the layer's projections, not chunk states (vllm_estimates.cpp
// activation_peak: _forward_core returns in the profile run). By-hand figures and the real logs
// they are checked on.
#include <gtest/gtest.h>

#include <string>

#include "headroom/units.h"
#include "plan_test_util.h"

using namespace headroom;
using namespace headroom::test;

namespace {
int64_t activation_bytes(const Forecast& f) {
  if (const Item* it = rank0_item(f, "profile_run activation peak")) return it->bytes;
  ADD_FAILURE() << "no activation item";
  return 0;
}
// xvllm-034 (tests/data/extra/vllm.jsonl): Qwen3.5-9B offline on one L40S, vLLM 0.18.0, fp8 KV,
// max_model_len 65536, LLM-class defaults 8192 / 256; logged "Available KV cache memory: 20.27 GiB",
// "GPU KV cache size: 331,584 tokens".
std::vector<std::string> qwen35_9b_l40s() {
  return {"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3.5-9B", "--gpu", "l40s", "--max-model-len", "65536",
          "--kv-cache-dtype", "fp8", "--enable-prefix-caching", "--max-num-batched-tokens", "8192", "--max-num-seqs", "256"};
}
}  // namespace

TEST(VllmVisionProfile, OneMaxSizeImageThroughTheTower) {
  // 16,384 tokens x 2 x 2 merge = 65,536 patches, each: pixel values 3 x 2 x 16 x 16 = 1,536 values
  // as fp32 on the GPU and their bf16 copy, 1,536 x 6 = 9,216 B, + hidden and a block's norm output
  // 4 x 1,152 + fc1 and GELU 4 x 4,304 = 31,040 B -> 2,034,237,440 B (1.89 GiB). The text side:
  // forward 2 x 8,192 x 4,096 x 2 + the MLP 8,192 x 3 x 12,288 x 2 = 738,197,504 B, sampler
  // 256 x 248,320 x 14 + 8,192 x 4,096 x 2 = 957,087,744 B, + the kept encoder output 16,384 x
  // 4,096 x 2 = 134,217,728 B: 1.02 GiB, below the tower.
  Forecast f = run(qwen35_9b_l40s());
  EXPECT_EQ(activation_bytes(f), 2034237440);
  // Logged: 331,584 tokens (20.27 GiB); 0.9 x 44.39 - 17.66 - 20.27 = 2.02 GiB of peak + non-torch,
  // against 1.89 + 0.15 here: 333,696 tokens (+0.64%; 340,032 = +2.5% with the tower's bf16 pixels
  // alone), 0.13 GiB of weights below the logged 17.66 left. That is the multimodal RoPE table
  // (4 x 262,144 x 64 x 2 B = 128 MiB, engines/rope_tables.cpp; weights 17.53 -> 17.65 GiB):
  // 331,584 tokens, as logged.
  EXPECT_EQ(f.kv_tokens, 331584);
  EXPECT_LT(static_cast<double>(f.kv_tokens - 331584) / 331584, 0.01);
}

TEST(VllmVisionProfile, SkippedWhenTheEngineSkipsIt) {
  auto a = qwen35_9b_l40s();
  a.push_back("--skip-mm-profiling");
  Forecast skipped = run(a);
  // Text only, no kept encoder output: the sampler's 957,087,744 B (above).
  EXPECT_EQ(activation_bytes(skipped), 957087744);
  // A text-only checkpoint has no tower: Qwen3-8B's estimate is the text one whatever the flags.
  Forecast text = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"});
  Forecast text_skip = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--skip-mm-profiling"});
  EXPECT_EQ(activation_bytes(text), activation_bytes(text_skip));
}

TEST(VllmVisionProfile, TensorParallelShardsTheMlp) {
  // TP2: fc1 and GELU are column-parallel, 2 x 2,152 x 2 B per patch: 65,536 x (9,216 + 4,608 + 8,608)
  // = 1,470,103,552 B; the text side on TP2 is smaller still, so the tower sets the peak.
  auto a = qwen35_9b_l40s();
  a.insert(a.end(), {"--tp", "2"});
  Forecast f = run(a);
  EXPECT_EQ(activation_bytes(f), 1470103552);
}

TEST(VllmVisionProfile, TheBudgetSetsTheNumberOfImages) {
  // max_num_batched_tokens 32,768: "a budget of 32768 tokens, and profiled with 2 image items"
  // (public-code 56681168668): 2 x 2,034,237,440 = 4,068,474,880 B through the tower, against a text
  // side of 2 x 32,768 x 4,096 x 2 + 32,768 x 3 x 12,288 x 2 = 2,952,790,016 B + the two kept outputs
  // 268,435,456 B.
  auto a = qwen35_9b_l40s();
  a[a.size() - 3] = "32768";  // --max-num-batched-tokens
  ASSERT_EQ(a[a.size() - 4], "--max-num-batched-tokens");
  Forecast f = run(a);
  EXPECT_EQ(activation_bytes(f), 4068474880);
}

TEST(VllmVisionProfile, GatedDeltaNetHoldsItsProjectionsNotChunkStates) {
  // The profile run builds no attention metadata, so GatedDeltaNetAttention._forward_core returns
  // before the chunked gated-delta-rule (gdn_linear_attn.py). At 65,536 tokens / 8 requests, vision
  // skipped: resident 2 x 65,536 x 4,096 x 2 = 1,073,741,824 + the MLP 65,536 x 3 x 12,288 x 2 =
  // 4,831,838,208 (the GDN layer's in_proj_qkvz + core_attn_out + norm output, 65,536 x (4,096 +
  // 8,192 + 8,192) x 2 = 2,684,354,560, is smaller) = 5,905,580,032 B. The chunk-state term charged
  // before, (65,536 / 64) x 32 x 128 x 128 x 4 x 2 = 4 GiB, is not in it.
  auto a = qwen35_9b_l40s();
  a[a.size() - 3] = "65536";
  a[a.size() - 1] = "8";
  ASSERT_EQ(a[a.size() - 2], "--max-num-seqs");
  a.push_back("--skip-mm-profiling");
  Forecast f = run(a);
  EXPECT_EQ(activation_bytes(f), 5905580032);
}

TEST(VllmVisionProfile, TextOnlyServingLoadsNoTower) {
  // --language-model-only, or image and video limits of 0 (qwen3_vl.py: "if not
  // multimodal_config.get_limit_per_prompt('image') and not ...('video'): self.visual = None"):
  // Qwen3-VL-8B's tower is neither loaded nor profiled. Its parameters by hand: 27 blocks x
  // (qkv 1152 x 3456 + 3456, proj 1152^2 + 1152, fc1 1152 x 4304 + 4304, fc2 4304 x 1152 + 1152,
  // two LayerNorms 4 x 1152) = 411,466,608; Conv3d patch embed 3 x 2 x 16 x 16 x 1152 + 1152 =
  // 1,770,624; position table 2304 x 1152 = 2,654,208; merger (LayerNorm 1152, 4608^2 + 4608,
  // 4608 x 4096 + 4096) = 40,119,040; three deepstack mergers (LayerNorm 4608 and the same two
  // linears) = 120,377,856 -> 576,388,336 params = 1,152,776,672 B in bf16.
  auto weights = [](std::vector<std::string> extra, bool* profiled) {
    std::vector<std::string> v{"--engine", "vllm@0.27.1", "--model", "Qwen/Qwen3-VL-8B-Instruct", "--gpu", "l40s", "--max-model-len", "32768"};
    v.insert(v.end(), extra.begin(), extra.end());
    const Forecast f = run(v);
    *profiled = std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.find("vision tower profile") != std::string::npos; });
    return rank0_item(f, "model weights")->bytes;
  };
  bool profiled = false;
  const int64_t full = weights({}, &profiled);
  EXPECT_TRUE(profiled);
  EXPECT_EQ(full - weights({"--language-model-only"}, &profiled), 1152776672);
  EXPECT_FALSE(profiled);
  EXPECT_EQ(full - weights({"--limit-mm-per-prompt", R"({"image": 0, "video": 0})"}, &profiled), 1152776672);
  EXPECT_EQ(full - weights({"--limit-mm-per-prompt", "image=0,video=0"}, &profiled), 1152776672);
  EXPECT_EQ(full - weights({"--limit-mm-per-prompt.image", "0", "--limit-mm-per-prompt.video", "0"}, &profiled), 1152776672);
  // Videos still allowed: the tower stays.
  EXPECT_EQ(weights({"--limit-mm-per-prompt", R"({"image": 0})"}, &profiled), full);
  EXPECT_TRUE(profiled);
}

TEST(VllmVisionProfile, Qwen3VlProfilesOneVideoOn011) {
  // vLLM 0.11 profiles Qwen3-VL with one video of a 153,600-token encoder budget (vllm#27992).
  // By hand for Qwen3-VL-8B (4 patches of 3 x 2 x 16 x 16 fp32 = 24,576 B per budget token; encoder
  // outputs 4,096 x (1 + 3 deepstack) x 2 = 32,768 B): 153,600 x (24,576 + 0.71 x 32,768)
  // = 153,600 x 47,841.28 = 7,348,420,608 B = 6.84 GiB. Real log xvllm-074 (RTX 5090, u = 0.9, 0.11.0): "available KV
  // cache memory (4.66 GiB)", which the forecast reproduces (it is one of the two fitted logs).
  const std::vector<std::string> args{"--model", "Qwen/Qwen3-VL-8B-Instruct", "--gpu", "rtx-5090", "--gpu-memory-utilization", "0.9",
                                      "--max-num-batched-tokens", "8192"};
  auto with = [&](const std::string& engine) { return run(plus({"--engine", engine}, args)); };
  Forecast f = with("vllm@0.11.0");
  EXPECT_NEAR(static_cast<double>(activation_bytes(f)), 7348420608.0, 2.0);
  EXPECT_TRUE(has_line(f, "Available KV cache memory: 4.66 GiB"));
  // From 0.18 (the window's INFERRED end) the one-image path again: far below 6.84 GiB.
  EXPECT_LT(activation_bytes(with("vllm@0.20.0")), 3 * GiB);
}

TEST(VllmVisionProfile, Qwen3VlVideoProfileAtTensorParallelFour) {
  // The fp32 pixel values are whole on every rank; the rest of the video profile shrinks with the
  // rank's share of the tower. Qwen3-VL-30B-A3B (out_hidden 2,048, 3 deepstack mergers: 16,384 B of
  // encoder output per token) at TP4: 153,600 x (24,576 + 0.71 x 16,384 / 4) = 4,221,567,796 B
  // (3.93 GiB; 5.18 GiB at TP1). Real log xvllm-091 (4 x RTX 3090, 0.11.0, --max-model-len 65536):
  // it started with "Available KV cache memory: 2.31 GiB" (100,752 tokens), which the TP1 figure
  // refused (0.90 GiB, M 39,280); here 2.15 GiB (-6.9%).
  Forecast f = run({"--engine", "vllm@0.11.0", "--model", "Qwen/Qwen3-VL-30B-A3B-Instruct", "--gpu", "rtx-3090", "--tp", "4", "--max-model-len",
                    "65536"});
  EXPECT_NEAR(static_cast<double>(activation_bytes(f)), 153600.0 * (24576.0 + 0.71 * 16384.0 / 4), 2.0);
  EXPECT_NE(f.verdict, Verdict::Refused);
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 100752.0, 0.08 * 100752.0);
}

TEST(VllmVisionProfile, Qwen25VlTowerWithItsSwiGluMlp) {
  // Qwen2.5-VL's tower (Qwen2_5_VisionBlock, SwiGLU MLP): 16,384 tokens x 2 x 2 merge = 65,536
  // patches of 3 x 2 x 14 x 14 = 1,176 values, fp32 + bf16 copy 7,056 B; hidden + norm output
  // 4 x 1,280 = 5,120 B; gate_up and SiluAndMul outputs 6 x 3,420 = 20,520 B: 32,696 B per patch =
  // 2,142,765,056 B (2.00 GiB), above the text side (sort-path sampler 1.39 GiB + 0.11 GiB of kept
  // encoder output). Real log xvllm-092 (Qwen2.5-VL-7B-Instruct on one L4, vLLM 0.9.0.1,
  // --max-model-len 2048): "Available KV cache memory: 1.81 GiB", 33,824 tokens; 1.66 GiB / 31,136
  // here (-7.9%; +25% before this tower was profiled).
  Forecast f = run({"--engine", "vllm@0.9.0", "--model", "Qwen/Qwen2.5-VL-7B-Instruct", "--gpu", "l4", "--max-model-len", "2048"});
  EXPECT_EQ(activation_bytes(f), 65536LL * 32696);
  EXPECT_NEAR(static_cast<double>(f.kv_tokens), 33824.0, 0.08 * 33824.0);
}
