// Model reader: published parameter counts and checkpoint sizes reproduced from the catalog
// configs (data/models), each with the hand arithmetic or the published figure it checks.
#include <gtest/gtest.h>

#include <cmath>

#include "headroom/error.h"
#include "headroom/model.h"

using namespace headroom;

namespace {
double billions(int64_t p) { return static_cast<double>(p) / 1e9; }
// Rounds to the published precision: 1 decimal ("8.03B" -> 2 decimals passed explicitly).
double round_to(double v, int decimals) {
  double f = std::pow(10.0, decimals);
  return std::round(v * f) / f;
}
}  // namespace

TEST(ModelParams, Llama31_8B_Exact) {
  // embed = lm_head = 128256 x 4096 = 525,336,576 each.
  // layer: q 4096x4096 = 16,777,216; k, v 1024x4096 = 4,194,304 each; o 16,777,216;
  //        mlp 3 x 14336 x 4096 = 176,160,768; 2 norms 8,192 -> 218,112,000; x 32 = 6,979,584,000.
  // total = 6,979,584,000 + 2 x 525,336,576 + 4,096 (final norm) = 8,030,261,248 (card: 8.03B).
  auto m = load_model("meta-llama/Meta-Llama-3.1-8B");
  EXPECT_EQ(m->params_total, 8'030'261'248);
  EXPECT_EQ(m->params_active, m->params_total);
  EXPECT_EQ(m->checkpoint_bytes, 2 * 8'030'261'248);  // BF16
  EXPECT_EQ(m->params_embedding, 2 * 525'336'576);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 2), 8.03);
}

TEST(ModelParams, CatalogIdIsCaseInsensitiveAndCached) {
  auto a = load_model("META-LLAMA/meta-llama-3.1-8b");
  auto b = load_model("meta-llama/Meta-Llama-3.1-8B");
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->config.hf_id, "meta-llama/Meta-Llama-3.1-8B");
}

TEST(ModelParams, Gemma2_9B_CheckpointMatchesIndexTotalSize) {
  // facts.json checkpoint_total_size_bytes = 18,483,411,968 (model.safetensors.index.json).
  // layer: q 4096x3584 = 14,680,064; k, v 2048x3584 = 7,340,032 each; o 14,680,064;
  //        mlp 3 x 14336 x 3584 = 154,140,672; 4 norms x 3584 = 14,336 -> 198,195,200; x 42.
  // total = 42 x 198,195,200 + 256000 x 3584 (tied embedding) + 3584 = 9,241,705,984 params x 2 B.
  auto m = load_model("google/gemma-2-9b-it");
  EXPECT_EQ(m->params_total, 9'241'705'984);
  EXPECT_EQ(m->checkpoint_bytes, 18'483'411'968);
  EXPECT_EQ(m->config.count_layers(AttnKind::Sliding), 21);  // even layers windowed (4096)
}

TEST(ModelParams, Mixtral_46_7B_12_9B) {
  auto m = load_model("mistralai/Mixtral-8x7B-Instruct-v0.1");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 1), 46.7);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active), 1), 12.9);  // top-2 of 8 experts
}

TEST(ModelParams, Glm5_744B_And_Mtp) {
  // research/models-quant-gpus.md 1.2: main 743,911,218,432; MTP layer 78: 9,952,920,576.
  auto m = load_model("zai-org/GLM-5");
  EXPECT_EQ(m->params_total, 743'911'218'432);
  EXPECT_EQ(m->params_mtp, 9'952'920'576);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 744);
  // Card "40B active": active without embedding and lm_head = 39.88B.
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding), 0), 40);
  EXPECT_EQ(m->config.count_layers(AttnKind::Full), 78);
  EXPECT_TRUE(m->config.has_indexer());
}

TEST(ModelParams, Glm5Nvfp4_441GB_WithoutMtp) {
  // NVFP4 Linear [o, i] = o*i/2 (U8) + o*i/16 (F8 scales) + 8 (two F32 scalars).
  // BF16: MLA attention 330,044,416 B and indexer 18,743,808 B per layer (excluded from NVFP4),
  // norms, router 256x6144 BF16 + 256 F32 bias, embed + lm_head 154880x6144 BF16.
  // Dense MLP (layers 0-2) and routed + shared experts NVFP4: one expert 21,233,688 B.
  // Sum (python, exact integers): 440,911,290,192 B; plus the BF16 MTP layer 19.9 GB.
  auto m = load_model("nvidia/GLM-5-NVFP4");
  EXPECT_EQ(m->checkpoint_bytes - m->checkpoint_bytes_mtp, 440'911'290'192);
  EXPECT_NEAR(static_cast<double>(m->checkpoint_bytes_mtp) / 1e9, 19.9, 0.05);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Nvfp4);
  EXPECT_EQ(m->config.quant.kv_cache_quant, "FP8");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 744);  // packed FP4 counts 2 params per byte
}

TEST(ModelParams, KimiK2_1T_32B) {
  auto m = load_model("moonshotai/Kimi-K2-Instruct");
  EXPECT_NEAR(billions(m->params_total), 1000.0, 50.0);  // "1T" = 1.0T +- 5%
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding / 2), 0), 32);  // without the input embedding
}

TEST(ModelParams, DeepSeekV3_671B_37B_Plus14BMtp) {
  auto m = load_model("deepseek-ai/DeepSeek-V3");
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_total), 0), 671);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding / 2), 0), 37);
  // Card: 685B = 671B main + 14B MTP module (with its own embed_tokens and shared_head.head).
  EXPECT_NEAR(billions(m->params_total + m->params_mtp), 685.0, 685.0 * 0.005);
  EXPECT_EQ(m->config.quant.method, QuantMethod::Fp8Block);
}

TEST(ModelParams, GptOss_117B_5_1B_And_21B_3_6B) {
  auto big = load_model("openai/gpt-oss-120b");
  EXPECT_DOUBLE_EQ(round_to(billions(big->params_total), 0), 117);
  // Active 5.1B counts the routed experts (4 of 128) without the input embedding.
  EXPECT_DOUBLE_EQ(round_to(billions(big->params_active - big->params_embedding / 2), 1), 5.1);
  auto small = load_model("openai/gpt-oss-20b");
  EXPECT_DOUBLE_EQ(round_to(billions(small->params_total), 0), 21);
  EXPECT_DOUBLE_EQ(round_to(billions(small->params_active - small->params_embedding / 2), 1), 3.6);
  EXPECT_EQ(big->config.count_layers(AttnKind::Sliding), 18);
  EXPECT_EQ(big->config.quant.method, QuantMethod::Mxfp4);
}

TEST(ModelParams, Qwen3Family) {
  EXPECT_DOUBLE_EQ(round_to(billions(load_model("Qwen/Qwen3-14B")->params_total), 1), 14.8);  // card 14.8B
  auto moe = load_model("Qwen/Qwen3-30B-A3B");
  EXPECT_DOUBLE_EQ(round_to(billions(moe->params_total), 1), 30.5);  // card: 30.5B total, 3.3B activated
  EXPECT_EQ(static_cast<int>(billions(moe->params_active) * 10), 33);  // 3.353B; Qwen truncates
  auto next = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct");
  EXPECT_DOUBLE_EQ(round_to(billions(next->params_total), 0), 80);
  EXPECT_DOUBLE_EQ(round_to(billions(next->params_active - next->params_embedding), 0), 3);
  EXPECT_EQ(next->config.count_layers(AttnKind::Linear), 36);  // every 4th of 48 is full attention
}

TEST(ModelParams, Glm45Air_106B_12B) {
  // Published "106B total / 12B active" (truncated: 106.85B without the MTP layer).
  auto m = load_model("zai-org/GLM-4.5-Air");
  EXPECT_EQ(static_cast<int>(billions(m->params_total)), 106);
  EXPECT_DOUBLE_EQ(round_to(billions(m->params_active - m->params_embedding), 0), 12);
}

TEST(ModelParams, EveryCatalogModelLoadsOrSaysWhy) {
  int loaded = 0, unsupported = 0;
  for (const auto& id : model_catalog_ids()) {
    try {
      auto m = load_model(id);
      EXPECT_GT(m->params_total, 0) << id;
      EXPECT_GT(m->checkpoint_bytes, 0) << id;
      ++loaded;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("unsupported architecture"), std::string::npos) << id << ": " << e.what();
      ++unsupported;
    }
  }
  EXPECT_GE(loaded, 85);
  EXPECT_LE(unsupported, 20);
}
