// vLLM's profile run on a Qwen3-VL / Qwen3.5 checkpoint encodes one dummy image of 16,384 tokens
// before the text dummy run (vllm_plan.cpp vision_profile_peak): the tower's peak is the profile
// run's torch peak when it exceeds the text one. By-hand figures and the real log it is checked on.
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
  // 16,384 tokens x 2 x 2 merge = 65,536 patches, each: pixel values 3 x 2 x 16 x 16 x 2 B = 3,072
  // + hidden and a block's norm output 4 x 1,152 + fc1 and GELU 4 x 4,304 = 24,896 B
  // -> 1,631,584,256 B (1.52 GiB), above the text forward's 1.19 GiB.
  Forecast f = run(qwen35_9b_l40s());
  EXPECT_EQ(activation_bytes(f), 1631584256);
  // The forecast moves from 345,312 tokens (text only) to 340,032 against the logged 331,584 (+2.5%).
  EXPECT_EQ(f.kv_tokens, 340032);
  EXPECT_LT(static_cast<double>(f.kv_tokens - 331584) / 331584, 0.03);
}

TEST(VllmVisionProfile, SkippedWhenTheEngineSkipsIt) {
  auto a = qwen35_9b_l40s();
  a.push_back("--skip-mm-profiling");
  Forecast skipped = run(a);
  EXPECT_LT(activation_bytes(skipped), 1631584256);
  EXPECT_EQ(skipped.kv_tokens, 345312);
  // A text-only checkpoint has no tower: Qwen3-8B's estimate is the text one whatever the flags.
  Forecast text = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s"});
  Forecast text_skip = run({"--engine", "vllm@0.18.0", "--model", "Qwen/Qwen3-8B", "--gpu", "l40s", "--skip-mm-profiling"});
  EXPECT_EQ(activation_bytes(text), activation_bytes(text_skip));
}

TEST(VllmVisionProfile, TensorParallelShardsTheMlp) {
  // TP2: fc1 and GELU are column-parallel, 2 x 2,152 x 2 B per patch: 65,536 x (3,072 + 4,608 + 8,608)
  // = 1,067,450,368 B; the text forward on TP2 is smaller still, so the tower sets the peak.
  auto a = qwen35_9b_l40s();
  a.insert(a.end(), {"--tp", "2"});
  Forecast f = run(a);
  EXPECT_EQ(activation_bytes(f), 1067450368);
}
