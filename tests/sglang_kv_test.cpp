// SGLang KV cell sizes for real model configs (data/models), computed by hand:
// research/sglang-memory.md §2.4 and models-quant-gpus.md §1.5, §2.3.
#include <gtest/gtest.h>

#include "headroom/kv.h"
#include "headroom/model.h"

using namespace headroom;

static int64_t cell(const char* id, int tp, const char* dtype, int sm = 90, bool dp_attn = false, int dp = 1) {
  auto m = load_model(id);
  Parallel p;
  p.tp = tp;
  p.dp = dp;
  p.dp_attention = dp_attn;
  return sglang_kv_per_token(m->config, p, dtype, sm).total();
}

TEST(SglangKvCell, DeepSeekV3MlaAnyTp) {
  // 61 layers x (512 + 64) x 2 B = 70,272 B; MLA latent is not split by TP.
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V3", 1, "auto"), 70272);
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V3", 8, "auto"), 70272);
  // fp8: 61 x 576 x 1 = 35,136 B.
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V3", 8, "fp8_e4m3"), 35136);
}

TEST(SglangKvCell, DeepSeekV32WithIndexer) {
  // fp8: (512 + 512/128*4 + 64*2) + (128 + 128/128*4) = 656 + 132 = 788 B/layer x 61 = 48,068 B.
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V3.2", 8, "fp8_e4m3"), 48068);
  // bf16 latent: (1,152 + 132) x 61 = 78,324 B.
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V3.2", 8, "bf16"), 78324);
}

TEST(SglangKvCell, Glm5Fp8WithIndexer) {
  // 78 layers x (656 + 132) = 61,464 B (auto -> fp8_e4m3 on SM120).
  EXPECT_EQ(cell("nvidia/GLM-5-NVFP4", 8, "auto", 120), 61464);
  EXPECT_EQ(cell("zai-org/GLM-5", 8, "fp8_e4m3", 90), 61464);
}

TEST(SglangKvCell, Llama31_70bGqa) {
  // 8 KV heads / TP8 = 1 head x (128 + 128) x 80 layers x 2 B = 40,960 B per rank.
  EXPECT_EQ(cell("meta-llama/Llama-3.1-70B-Instruct", 8, "auto"), 40960);
  // TP1: 8 x 256 x 80 x 2 = 327,680 B.
  EXPECT_EQ(cell("meta-llama/Llama-3.1-70B-Instruct", 1, "auto"), 327680);
  // TP16: heads replicated (max(1, 8 // 16) = 1) -> 40,960 B.
  EXPECT_EQ(cell("meta-llama/Llama-3.1-70B-Instruct", 16, "auto"), 40960);
}

TEST(SglangKvCell, Qwen3MoeFp8) {
  // Qwen3-235B-A22B: 94 layers, 4 KV heads x 128: TP4 -> 1 x 256 x 94 x 2 = 48,128 B (bf16).
  EXPECT_EQ(cell("Qwen/Qwen3-235B-A22B-FP8", 4, "auto"), 48128);
  EXPECT_EQ(cell("Qwen/Qwen3-235B-A22B-FP8", 4, "fp8_e4m3"), 24064);
}

TEST(SglangKvCell, Gemma4GlobalLayersUseTheirOwnHeads) {
  // Gemma-4-31B (config: 60 layers, 10 full / 50 sliding; sliding 16 KV heads x head_dim 256,
  // global num_global_key_value_heads 4 x global_head_dim 512), fp8 KV (hf_quant_config):
  // TP1: 50 x 16 x (256 + 256) x 1 + 10 x 4 x (512 + 512) x 1 = 409,600 + 40,960 = 450,560 B.
  EXPECT_EQ(cell("nvidia/Gemma-4-31B-IT-NVFP4", 1, "fp8_e4m3"), 450560);
  // TP2 halves both head counts: 204,800 + 20,480 = 225,280 B (a single head shape gave 245,760).
  EXPECT_EQ(cell("nvidia/Gemma-4-31B-IT-NVFP4", 2, "fp8_e4m3"), 225280);
}
