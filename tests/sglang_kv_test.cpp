// SGLang KV cell sizes for real model configs (data/models), computed by hand:
// research/sglang-memory.md §2.4 and models-quant-gpus.md §1.5, §2.3.
#include <gtest/gtest.h>

#include "engines/sglang/sglang_rules.h"
#include "headroom/cli.h"
#include "headroom/deployment.h"
#include "headroom/engine.h"
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

// DeepSeek-V4: DSV4PoolConfigurator (model_executor/pool_configurator.py) with environ.py defaults
// (compress state float32, online c128 off; rings c4 8 / c128 128, x2 with speculative decoding).
// The layer counts run over the config's compress_ratios list as written: Flash lists 44 entries
// (43 layers + the MTP layer's 0) with 21 x 4 and 20 x 128; window 128; nope 448, rope 64, index dim 128.
//   kv = 448 + 2*64 + 8 = 584; idx = 128 + 4 = 132; c4 state 2*2*512*4 = 8192, c4 indexer state 2*2*128*4 = 2048
//   bpft = 0.1*584*44 + 584*21/4 + 584*20/128 + 132*21/4 + 0.1*(8/128)*(8192+2048)*21
//        = 2569.6 + 3066 + 91.25 + 693 + 1344 = 7763.85 B
TEST(SglangKvCell, DeepSeekV4FlashBytesPerFullToken) {
  auto m = load_model("deepseek-ai/DeepSeek-V4-Flash");
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.1, false, false), 7763.85, 1e-6);
  // speculative: c4 ring 16 -> state term 2688; x 45/44: (2569.6 + 3066 + 91.25 + 693 + 2688) * 45/44
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.1, true, false), 9107.85 * 45.0 / 44.0, 1e-6);
  // One latent head replicated on every rank: the same at TP 1 and TP 8 (rounded).
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V4-Flash", 1, "auto"), 7764);
  EXPECT_EQ(cell("deepseek-ai/DeepSeek-V4-Flash", 8, "fp8_e4m3"), 7764);
  // Fixed c128 state: (2048 + 1) slots x 128 x 2*512*4 B x 20 layers = 21,485,322,240 B; with
  // --max-running-requests 64: 65 x 128 x 4096 x 20 = 681,574,400 B.
  EXPECT_EQ(sglang::dsv4_c128_state_fixed_bytes(m->config, false, 0, 1), 21'485'322'240);
  EXPECT_EQ(sglang::dsv4_c128_state_fixed_bytes(m->config, false, 64, 1), 681'574'400);
}

TEST(SglangKvCell, DeepSeekV4FlashLegacyPoolOfMay2026) {
  // Builds before sglang PR #28612 (2026-06) sized both compress-state pools off the SWA pages:
  // c4_state = swa // 128 x 16 rows, c128_state = swa // 128 x 256 rows of 2*512*4 = 4096 B.
  // At swa_full_tokens_ratio 0.8:
  //   0.8*584*44 + 3066 + 91.25 + 693 + 0.8*(16/128)*10240*21 + 0.8*(256/128)*4096*20
  //   = 20556.8 + 3850.25 + 21504 + 131072 = 176983.05 B,
  // what the real log prints: "DSv4 memory calculation: bytes_per_full_token=176983.05,
  // available_bytes=87.26 GB, full_token=529408" (DeepSeek-V4-Flash-FP8, MI300X TP4 DP4,
  // 0.5.11.dev20260512; tests/data/extra/sglang.jsonl xsgl-027).
  auto m = load_model("deepseek-ai/DeepSeek-V4-Flash");
  // (That early ROCm image kept the draft-sized rings 16 / 256 without a draft: wide_rings.)
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.8, false, true, true), 176983.05, 1e-6);
  // With a draft (the Hopper image of 2026-05-08 with EAGLE, xsgl-028) at the DSV4 override 0.1:
  // (2569.6 + 3850.25 + 2688 + 16384) x 45/44 for the draft layer.
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.1, true, true), 25491.85 * 45.0 / 44.0, 1e-6);
  // Without a draft the rings are 8 / 128: "bytes_per_full_token=15955.85" (DeepSeek-V4-Flash-Base,
  // 8 x H20, main@2026-05-15, xsgl-029; Flash-Base has Flash's shapes) = 7763.85 + 0.1 x 4096 x 20.
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.1, false, true), 15955.85, 1e-6);
}

TEST(SglangKvCell, DeepSeekV4ProBytesPerFullToken) {
  // Pro lists 62 entries (61 layers + MTP 0): 30 x 4, 31 x 128.
  //   0.1*584*62 + 584*30/4 + 584*31/128 + 132*30/4 + 0.1*(8/128)*10240*30
  //   = 3620.8 + 4380 + 141.4375 + 990 + 1920 = 11052.2375 B
  auto m = load_model("deepseek-ai/DeepSeek-V4-Pro");
  EXPECT_NEAR(sglang::dsv4_bytes_per_full_token(m->config, 0.1, false, false), 11052.2375, 1e-6);
  EXPECT_EQ(sglang::dsv4_c128_state_fixed_bytes(m->config, false, 0, 1), int64_t{2049} * 128 * 4096 * 31);
}

TEST(SglangPlanDsv4, PoolTokensFromTheConfigurator) {
  // Flash, TP 4 on H200, f = 0.9, --max-running-requests 64, with P = 130 GiB and A = 90 GiB given:
  //   rest = 90 - 130 * 0.1 = 77 GiB = 82,678,120,448 B; minus fixed c128 state 681,574,400 B;
  //   int(81,996,546,048 / 7763.85) = 10,561,325 -> page 256 -> 10,561,280 full tokens.
  std::vector<std::string> a{"--engine", "sglang", "--model", "deepseek-ai/DeepSeek-V4-Flash", "--gpu", "h200", "--tp", "4",
                             "--mem-fraction-static", "0.9", "--context-length", "131072", "--max-running-requests", "64"};
  PlanOptions o;
  o.pre_load_free_bytes = int64_t{130} << 30;
  o.post_load_free_bytes = int64_t{90} << 30;
  Forecast f = plan(parse_deployment(Args::parse(a)), o);
  EXPECT_EQ(f.kv_tokens, 10'561'280);
  EXPECT_EQ(*f.setting("--page-size"), "256");
}
