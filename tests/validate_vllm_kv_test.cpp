// validate's vLLM kv_tokens_given_memory on real log figures: the byte interval a printed GiB
// figure stands for, the token interval it gives through vLLM's layout, a case whose GPU is not
// known, a case outside its interval, and a case vLLM did not size from memory.
#include <gtest/gtest.h>

#include "validate/validate_vllm_kv.h"

using namespace headroom;

TEST(ValidateVllmKv, PrintedGibStandsForAHalfOpenByteInterval) {
  // "6.51 GiB": [6.505, 6.515) x 2^30 = [6,984,690,565.1, 6,995,427,983.4) -> whole bytes
  // 6,984,690,566 .. 6,995,427,983 (computed with exact fractions; long double may move an end by 1).
  auto [lo, hi] = gib2_interval(6.51);
  EXPECT_NEAR(static_cast<double>(lo), 6984690566.0, 1.0);
  EXPECT_NEAR(static_cast<double>(hi), 6995427983.0, 1.0);
}

TEST(ValidateVllmKv, Qwen3_14BWithoutAGpuReplaysVllm020) {
  // vllm-020 (Oct 2025, GPU not named): "Available KV cache memory: 6.51 GiB", "GPU KV cache size:
  // 42,656 tokens". Qwen3-14B: 40 layers x 16 tokens x 8 heads x 256 x 2 B = 2,621,440 B per block;
  // 6.505 GiB -> 2,664 blocks -> 42,624 tokens; 6.515 GiB -> 2,668 -> 42,688; 6.51 -> 2,666 -> 42,656.
  // The candidates (two batch defaults, three MLA block sizes) agree for a dense model.
  VllmKvGiven r = vllm_kv_given_memory(6.51, 42656, {"--engine", "vllm@unknown@2025-10-03", "--model", "Qwen/Qwen3-14B", "--max-model-len", "32768"},
                                       {{"--gpu", "h100"}, {"--gpu", "l40s"}, {"--gpu", "b200"}, {"--gpu", "a100-80gb"}});
  ASSERT_TRUE(r.counted) << r.row.dump();
  EXPECT_TRUE(r.agree);
  EXPECT_EQ(r.low, 42624);
  EXPECT_EQ(r.high, 42688);
  EXPECT_EQ(r.point, 42656);
  EXPECT_TRUE(r.row.contains("gpu_unknown_tried"));
}

TEST(ValidateVllmKv, TokensOutsideTheIntervalDisagree) {
  // vllm-001 (2025-07, 4 x H100, Qwen3-235B-A22B-FP8 TP4): 8.11 GiB logged on one worker,
  // 178,880 tokens. 94 layers x 16 x 1 head x 256 x 2 B = 770,048 B per block: 8.105 GiB ->
  // 11,301 blocks -> 180,816 tokens, above the log: the engine keeps the least num_blocks over the
  // four workers, and the excerpt shows one worker's figure.
  VllmKvGiven r = vllm_kv_given_memory(8.11, 178880, {"--engine", "vllm@unknown@2025-07-22", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--tp", "4"},
                                       {{"--gpu", "h100"}});
  ASSERT_TRUE(r.counted);
  EXPECT_FALSE(r.agree);
  EXPECT_EQ(r.low, 180816);
  EXPECT_TRUE(r.row.contains("below_min_over_workers"));
}

TEST(ValidateVllmKv, NumGpuBlocksOverrideIsSkipped) {
  // vllm-058: --num-gpu-blocks-override 15000 -> 240,000 tokens whatever the 12.15 GiB.
  VllmKvGiven r = vllm_kv_given_memory(12.15, 240000, {"--engine", "vllm@0.20.0", "--model", "Qwen/Qwen3-235B-A22B-FP8", "--tp", "4",
                                                       "--num-gpu-blocks-override", "15000"},
                                       {{"--gpu", "h100"}});
  EXPECT_FALSE(r.counted);
  ASSERT_TRUE(r.row.contains("skipped"));
  EXPECT_NE(r.row["skipped"].get<std::string>().find("--num-gpu-blocks-override"), std::string::npos);
}
